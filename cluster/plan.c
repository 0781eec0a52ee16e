/* plan.c - from groups to a replay plan, and groups.json.
 *
 * A plan says what to replay and what it saves: each group's representative
 * with its node-mates (the replay subgroup), how many leading iterations of
 * them (Equation 2 on the representative), and for every rank the group and
 * representative whose computation stands for it, which is what `phantom
 * predict` needs.  The saving compares the computation replayed with that of
 * replaying every rank in full: a node's subgroup runs until the last
 * iteration any representative on it needs, and each rank on a replayed
 * node costs its computation up to there.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define FORMAT "phantom-groups"
#define VERSION "1.0"

void cl_plan_free(cl_plan *pl)
{
    if (!pl)
        return;
    for (uint32_t g = 0; pl->groups && g < pl->ngroups; g++) {
        free(pl->groups[g].members);
        free(pl->groups[g].replay);
    }
    free(pl->groups);
    free(pl->runs);
    free(pl->group_of);
    free(pl->rep_of);
    free(pl->node_of);
    free(pl);
}

const cl_group *cl_plan_main_group(const cl_plan *pl)
{
    const cl_group *best = pl->ngroups ? &pl->groups[0] : NULL;
    for (uint32_t g = 1; g < pl->ngroups; g++)
        if (pl->groups[g].nmembers > best->nmembers)
            best = &pl->groups[g];
    return best;
}

/* Ranks with label == want, sorted (ranks are visited in order). */
static uint32_t *select_ranks(uint32_t n, const uint32_t *label, uint32_t want, uint32_t *count)
{
    uint32_t c = 0;
    for (uint32_t i = 0; i < n; i++)
        c += label[i] == want;
    uint32_t *out = malloc((c ? c : 1) * sizeof *out);
    if (out)
        for (uint32_t i = 0, k = 0; i < n; i++)
            if (label[i] == want)
                out[k++] = i;
    *count = c;
    return out;
}

/* Computation of rank x replayed up to iteration r of its loop (CL_ALL: all). */
static double replayed_work(const cl_rank *x, uint64_t r)
{
    const cl_period *p = &x->period;
    if (r == CL_ALL || p->iterations < 2 || r >= p->iterations)
        return x->total;
    uint64_t end = p->start + r * p->period;
    double w = 0;
    for (uint64_t i = 0; i < end && i < x->dim; i++)
        w += x->vec[i];
    return w;
}

/* The replay runs, one per node with a representative, in the order of the
 * groups: each runs until the last iteration a representative on it needs. */
static int plan_runs(cl_plan *pl, uint8_t *used)
{
    pl->runs = malloc((pl->ngroups ? pl->ngroups : 1) * sizeof *pl->runs);
    if (!pl->runs)
        return -1;
    for (uint32_t g = 0; g < pl->ngroups; g++) {
        const cl_group *gr = &pl->groups[g];
        uint64_t r = gr->it.partial ? gr->it.replay_iterations : CL_ALL;
        uint32_t node = pl->node_of[gr->rep], k = 0;
        if (!used[node]) {
            used[node] = 1;
            pl->runs[pl->nruns++] = (cl_run){node, r};
            continue;
        }
        while (pl->runs[k].node != node)
            k++;
        if (r > pl->runs[k].iterations)
            pl->runs[k].iterations = r;
    }
    return 0;
}

/* The computation every rank on a replayed node costs, against all of it. */
static int account_work(cl_plan *pl, const cl_trace_data *d)
{
    uint8_t *used = calloc(pl->nnodes ? pl->nnodes : 1, 1);
    uint64_t *iters = malloc((pl->nnodes ? pl->nnodes : 1) * sizeof *iters);
    if (!used || !iters || plan_runs(pl, used) < 0) {
        free(used);
        free(iters);
        return -1;
    }
    for (uint32_t k = 0; k < pl->nruns; k++)
        iters[pl->runs[k].node] = pl->runs[k].iterations;
    for (uint32_t x = 0; x < d->n; x++) {
        pl->work_full += d->r[x].total;
        if (!used[pl->node_of[x]])
            continue;
        pl->replayed_ranks++;
        pl->work_plan += replayed_work(&d->r[x], iters[pl->node_of[x]]);
    }
    free(used);
    free(iters);
    return 0;
}

static int build_group(cl_plan *pl, const cl_trace_data *d, const uint32_t *label, uint32_t g,
                       uint32_t rep, double radius)
{
    cl_group *gr = &pl->groups[g];
    gr->rep = rep;
    gr->radius = radius;
    gr->members = select_ranks(d->n, label, g, &gr->nmembers);
    gr->replay = select_ranks(d->n, pl->node_of, pl->node_of[rep], &gr->nreplay);
    if (!gr->members || !gr->replay)
        return -1;
    const cl_rank *r = &d->r[rep];
    gr->computation = r->total;
    gr->period = r->period;
    cl_iteration_plan(r->vec, r->dim, &r->period, pl->limit, &gr->it);
    return 0;
}

cl_plan *cl_plan_build(const cl_trace_data *d, const uint32_t *label, uint32_t ngroups,
                       const uint32_t *rep, const double *radius, const uint32_t *node,
                       uint32_t nnodes, double iter_frac, ph_err *err)
{
    cl_plan *pl = calloc(1, sizeof *pl);
    size_t n = d->n ? d->n : 1;
    if (!pl || !(pl->group_of = malloc(n * sizeof(uint32_t))) ||
        !(pl->rep_of = malloc(n * sizeof(uint32_t))) || !(pl->node_of = malloc(n * sizeof(uint32_t))) ||
        !(pl->groups = calloc(ngroups ? ngroups : 1, sizeof *pl->groups)))
        goto oom;
    pl->nranks = d->n;
    pl->ngroups = ngroups;
    pl->nnodes = nnodes;
    /* L of Equation 2: k% of the mean computation per rank (the paper's
     * (1/n) sum_x sum_i c_i^x, x over processes as in Equation 1). */
    pl->mean_total = d->mean_total;
    pl->limit = iter_frac * d->mean_total;
    memcpy(pl->group_of, label, d->n * sizeof *label);
    memcpy(pl->node_of, node, d->n * sizeof *node);
    for (uint32_t x = 0; x < d->n; x++)
        pl->rep_of[x] = rep[label[x]];
    for (uint32_t g = 0; g < ngroups; g++)
        if (build_group(pl, d, label, g, rep[g], radius ? radius[g] : 0) < 0)
            goto oom;
    if (account_work(pl, d) < 0)
        goto oom;
    return pl;
oom:
    cl_plan_free(pl);
    ph_err_set(err, "out of memory making the plan for %u ranks", d->n);
    return NULL;
}

/* ---- groups.json --------------------------------------------------------------- */

static int by_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

static json_t *ranks_string(const uint32_t *r, uint32_t n)
{
    char *s = cl_format_ranks(r, n);
    json_t *j = s ? json_string(s) : json_null();
    free(s);
    return j;
}

static json_t *iter_json(const cl_period *p, const cl_iter_plan *it)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:b, s:f, s:f, s:f}", "start", (json_int_t)p->start,
                     "period", (json_int_t)p->period, "iterations", (json_int_t)it->iterations,
                     "replay_iterations", (json_int_t)it->replay_iterations, "partial", it->partial,
                     "similarity_ns", it->similarity, "limit_ns", it->limit,
                     "extrapolation_error_ns", it->extrapolation_error);
}

static json_t *groups_json(const cl_plan *pl)
{
    json_t *a = json_array();
    for (uint32_t g = 0; g < pl->ngroups; g++) {
        const cl_group *gr = &pl->groups[g];
        json_array_append_new(a, json_pack("{s:i, s:i, s:i, s:o, s:o, s:f, s:f, s:o}", "id", (int)g,
                                           "size", (int)gr->nmembers, "representative", (int)gr->rep,
                                           "members", ranks_string(gr->members, gr->nmembers),
                                           "replay_ranks", ranks_string(gr->replay, gr->nreplay),
                                           "radius_ns", gr->radius, "computation_ns",
                                           gr->computation, "iterations",
                                           iter_json(&gr->period, &gr->it)));
    }
    return a;
}

static json_t *runs_json(const cl_plan *pl)
{
    json_t *a = json_array();
    uint32_t *reps = malloc((pl->ngroups ? pl->ngroups : 1) * sizeof *reps);
    for (uint32_t k = 0; reps && k < pl->nruns; k++) {
        uint32_t nr = 0, nn;
        for (uint32_t g = 0; g < pl->ngroups; g++)
            if (pl->node_of[pl->groups[g].rep] == pl->runs[k].node)
                reps[nr++] = pl->groups[g].rep;
        qsort(reps, nr, sizeof *reps, by_u32);
        uint32_t *ranks = select_ranks(pl->nranks, pl->node_of, pl->runs[k].node, &nn);
        json_array_append_new(a, json_pack("{s:o, s:o, s:o}", "ranks", ranks ? ranks_string(ranks, nn) : json_null(),
                                           "representatives", ranks_string(reps, nr), "replay_iterations",
                                           pl->runs[k].iterations == CL_ALL ? json_null()
                                                                            : json_integer((json_int_t)pl->runs[k].iterations)));
        free(ranks);
    }
    free(reps);
    return a;
}

static json_t *u32_array(const uint32_t *v, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}

static json_t *plan_json(const cl_plan *pl, const cl_identity *id, const cl_method *m)
{
    char fp[24];
    snprintf(fp, sizeof fp, "0x%016llx", (unsigned long long)id->fingerprint);
    const cl_group *main = cl_plan_main_group(pl);
    json_t *thr = m->threshold_ns >= 0 ? json_pack("{s:f, s:f}", "percent", m->threshold_pct, "ns",
                                                   m->threshold_ns) : json_null();
    json_t *iters = json_pack("{s:I, s:I, s:I, s:b, s:f, s:f}", "period",
                              (json_int_t)(main ? main->period.period : 0), "iterations",
                              (json_int_t)(main ? main->it.iterations : 0), "replay_iterations",
                              (json_int_t)(main ? main->it.replay_iterations : 0), "partial",
                              main ? main->it.partial : 0, "k_percent", m->iter_pct, "limit_ns", pl->limit);
    json_t *save = json_pack("{s:f, s:f, s:f, s:i, s:i, s:i}", "full_ns", pl->work_full, "plan_ns",
                             pl->work_plan, "fraction",
                             pl->work_full > 0 ? 1 - pl->work_plan / pl->work_full : 0.0,
                             "replayed_ranks", (int)pl->replayed_ranks, "replay_runs",
                             (int)pl->nruns, "nodes", (int)pl->nnodes);
    return json_pack("{s:s, s:s, s:{s:s, s:i, s:s?, s:s}, s:s, s:s, s:o, s:o, s:i, s:s, s:f, "
                     "s:i, s:o, s:o, s:o, s:o, s:o, s:o}",
                     "format", FORMAT, "version", VERSION, "trace", "path", id->path, "ranks",
                     (int)id->nranks, "start_time", id->start_time, "fingerprint", fp, "method",
                     m->method, "partition", m->partition, "threshold", thr, "k",
                     m->k ? json_integer(m->k) : json_null(), "ppn", (int)m->ppn, "map", m->map,
                     "mean_computation_ns", pl->mean_total, "ngroups", (int)pl->ngroups, "groups",
                     groups_json(pl), "rank_group", u32_array(pl->group_of, pl->nranks),
                     "rank_representative", u32_array(pl->rep_of, pl->nranks), "iterations", iters,
                     "runs", runs_json(pl), "saving", save);
}

int cl_plan_write(const cl_plan *pl, const cl_identity *id, const cl_method *m, const char *path,
                  ph_err *err)
{
    json_t *doc = plan_json(pl, id, m);
    if (!doc) {
        ph_err_set(err, "out of memory writing %s", path);
        return -1;
    }
    int rc;
    if (strcmp(path, "-") == 0) {
        rc = ph_json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        rc |= fputc('\n', stdout) == EOF;
        if (rc)
            ph_err_set(err, "%s: cannot write: %s", path, strerror(errno ? errno : EIO));
    } else { /* beside it, then renamed: a full disk leaves an earlier groups file whole */
        rc = ph_json_save(doc, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER, err);
    }
    json_decref(doc);
    return rc ? -1 : 0;
}

/* Per-rank array of nranks integers below `below`. */
static int read_array(json_t *doc, const char *key, uint32_t nranks, uint32_t below, uint32_t *out,
                      const char *path, ph_err *err)
{
    json_t *a = json_object_get(doc, key);
    if (!json_is_array(a) || json_array_size(a) != nranks) {
        ph_err_set(err, "%s: \"%s\" is not an array of %u ranks", path, key, nranks);
        return -1;
    }
    for (uint32_t i = 0; i < nranks; i++) {
        json_int_t v = json_integer_value(json_array_get(a, i));
        if (!json_is_integer(json_array_get(a, i)) || v < 0 || (uint64_t)v >= below) {
            ph_err_set(err, "%s: \"%s\"[%u] is not a number below %u", path, key, i, below);
            return -1;
        }
        if (out)
            out[i] = (uint32_t)v;
    }
    return 0;
}

static int check_identity(json_t *doc, const cl_identity *id, const char *path, ph_err *err)
{
    json_t *tr = json_object_get(doc, "trace");
    const char *st = json_string_value(json_object_get(tr, "start_time"));
    const char *fp = json_string_value(json_object_get(tr, "fingerprint"));
    json_int_t nr = json_integer_value(json_object_get(tr, "ranks"));
    const char *made = json_string_value(json_object_get(tr, "path"));
    char want[24];
    snprintf(want, sizeof want, "0x%016llx", (unsigned long long)id->fingerprint);
    if (nr != (json_int_t)id->nranks)
        ph_err_set(err, "%s: made from a trace of %lld ranks (%s), this one has %u", path,
                   (long long)nr, made ? made : "?", id->nranks);
    else if ((st || id->start_time) && (!st || !id->start_time || strcmp(st, id->start_time) != 0))
        ph_err_set(err, "%s: made from the trace recorded %s (%s), this one was recorded %s", path,
                   st ? st : "(unknown)", made ? made : "?", id->start_time ? id->start_time : "(unknown)");
    else if (!fp || strcmp(fp, want) != 0)
        ph_err_set(err, "%s: made from a different trace (%s): its communication sequences or "
                   "computation differ from %s", path, made ? made : "?", id->path);
    else
        return 0;
    return -1;
}

/* The per-group table agrees with the per-rank ones: ngroups entries, each
 * rank's representative is its group's, and in that group.  (phantom run
 * reads each group's iterations from it by the rank's group.) */
static int check_groups(json_t *doc, uint32_t ng, uint32_t nranks, const uint32_t *group_of,
                        const uint32_t *rep_of, const char *path, ph_err *err)
{
    json_t *groups = json_object_get(doc, "groups");
    if (!json_is_array(groups) || json_array_size(groups) != ng) {
        ph_err_set(err, "%s: \"groups\" is not an array of %u groups (\"ngroups\")", path, ng);
        return -1;
    }
    for (uint32_t r = 0; r < nranks; r++) {
        uint32_t g = group_of[r], rep = rep_of[r];
        json_t *gr = json_object_get(json_array_get(groups, g), "representative");
        if (!json_is_integer(gr)) {
            ph_err_set(err, "%s: \"groups\"[%u] has no \"representative\"", path, g);
            return -1;
        }
        if (json_integer_value(gr) != (json_int_t)rep) {
            ph_err_set(err, "%s: rank %u: \"rank_representative\" says %u, \"groups\"[%u] says %lld", path, r,
                       rep, g, (long long)json_integer_value(gr));
            return -1;
        }
        if (group_of[rep] != g) {
            ph_err_set(err, "%s: rank %u: its representative %u is in group %u, not in its group %u", path, r,
                       rep, group_of[rep], g);
            return -1;
        }
    }
    return 0;
}

int cl_plan_check(const char *path, const cl_identity *id, uint32_t *group_of, uint32_t *rep_of,
                  ph_err *err)
{
    json_t *doc = ph_json_load(path, err);
    if (!doc)
        return -1;
    int rc = -1;
    size_t nr = id->nranks ? id->nranks : 1;
    uint32_t *g = group_of ? group_of : malloc(nr * sizeof *g), *rep = rep_of ? rep_of : malloc(nr * sizeof *rep);
    const char *fmt = json_string_value(json_object_get(doc, "format"));
    const char *ver = json_string_value(json_object_get(doc, "version"));
    json_int_t ng = json_integer_value(json_object_get(doc, "ngroups"));
    if (!g || !rep)
        ph_err_set(err, "%s: out of memory", path);
    else if (!fmt || strcmp(fmt, FORMAT) != 0)
        ph_err_set(err, "%s: not a groups file (format \"%s\", expected \"%s\")", path,
                   fmt ? fmt : "(none)", FORMAT);
    else if (!ver || strtol(ver, NULL, 10) != strtol(VERSION, NULL, 10))
        ph_err_set(err, "%s: groups format version %s, this phantom reads %ld.x", path,
                   ver ? ver : "(none)", strtol(VERSION, NULL, 10));
    else if (check_identity(doc, id, path, err) < 0)
        ;
    else if (ng <= 0 || ng > (json_int_t)id->nranks)
        ph_err_set(err, "%s: \"ngroups\" is not a number from 1 to %u", path, id->nranks);
    else if (read_array(doc, "rank_group", id->nranks, (uint32_t)ng, g, path, err) == 0 &&
             read_array(doc, "rank_representative", id->nranks, id->nranks, rep, path, err) == 0)
        rc = check_groups(doc, (uint32_t)ng, id->nranks, g, rep, path, err);
    if (g != group_of)
        free(g);
    if (rep != rep_of)
        free(rep);
    json_decref(doc);
    return rc;
}
