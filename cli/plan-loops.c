/* plan-loops.c - where a partial replay stops, from a phantom cluster plan.
 *
 * Shared by `phantom record --plan` (log received data only up to there)
 * and `phantom replay --plan` (stop there): rank r stops at the end of
 * iteration R of its group's loop, at event start + R * period
 * (doc/cluster.md).  R is the plan's replay_iterations for the run of
 * exactly these ranks, unless the user gives it.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "phantom.h"

/* R of the plan's run whose ranks are exactly `in`; -1 if that run replays
 * whole, -2 (after an error) if the plan has no such run. */
static int64_t run_iterations(const char *verb, const char *path, json_t *plan, uint32_t n,
                              const uint8_t *in, const char *spec)
{
    uint8_t *have = calloc(n, 1);
    int64_t r = -2;
    ph_err err;
    size_t i;
    json_t *run;
    json_array_foreach(json_object_get(plan, "runs"), i, run) {
        const char *s = json_string_value(json_object_get(run, "ranks"));
        if (have && s && ph_parse_ranks(s, n, have, &err) == 0 && memcmp(in, have, n) == 0) {
            json_t *it = json_object_get(run, "replay_iterations");
            r = json_is_integer(it) ? json_integer_value(it) : -1;
        }
    }
    free(have);
    if (!have)
        return cli_error(verb, "out of memory"), -2;
    if (r == -2)
        cli_error(verb, "%s: no run of the plan replays ranks %s (give --iterations R)", path, spec);
    return r;
}

int cli_plan_loops(const char *verb, const char *path, uint32_t nranks, const uint8_t *in,
                   const char *spec, int64_t iterations, plan_loop *loops, int64_t *replayed,
                   int64_t *total)
{
    ph_err err;
    json_t *plan = ph_json_load(path, &err);
    if (!plan)
        return cli_error(verb, "%s", err.msg);
    json_t *groups = json_object_get(plan, "groups"), *rg = json_object_get(plan, "rank_group");
    int rc = CLI_OK;
    if (!json_is_array(groups) || json_array_size(rg) != nranks)
        rc = cli_error(verb, "%s: not a plan for this trace (%u ranks)", path, nranks);
    int64_t r = iterations;
    if (rc == CLI_OK && r < 0 && (r = run_iterations(verb, path, plan, nranks, in, spec)) == -2)
        rc = CLI_ERR;
    *replayed = *total = -1;
    for (uint32_t k = 0; k < nranks; k++) {
        loops[k] = (plan_loop){.stop = UINT64_MAX};
        if (rc != CLI_OK || r < 0 || !in[k])
            continue;
        json_int_t g = json_integer_value(json_array_get(rg, k));
        json_t *it = json_object_get(json_array_get(groups, (size_t)g), "iterations");
        json_int_t start = json_integer_value(json_object_get(it, "start"));
        json_int_t period = json_integer_value(json_object_get(it, "period"));
        json_int_t n = json_integer_value(json_object_get(it, "iterations"));
        if (period <= 0 || n < 2 || r >= n || start < 0)
            continue; /* no loop, or all of it: the whole run */
        loops[k] = (plan_loop){(uint64_t)(start + r * period), start, period, n};
        *replayed = r;
        *total = n;
    }
    json_decref(plan);
    return rc;
}
