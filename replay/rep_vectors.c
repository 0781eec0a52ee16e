/* rep_vectors.c - replayed computation vectors for the simulator (rep_vectors.h). */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rep_vectors.h"

typedef struct rvec {
    uint64_t *gap; /* gap[k]: unit k in ns; NULL: rank not replayed */
    uint64_t n;
    int64_t start, period, iters, total; /* the loop of a partial replay, or period 0 */
    int64_t recorded; /* the rank's events in the recording replayed; -1 if not said */
    double ratio;  /* replayed / recorded computation of the part replayed */
    double *pos_ratio; /* a partial replay: per position in the loop, replayed / host */
    uint64_t *host, hn; /* a partial replay standing in for other ranks: its host units */
    int raw; /* its units still hold the replayer's own part (a replay made before it was taken off) */
} rvec;

struct rep_vectors {
    uint32_t nranks;
    rvec *r;
};

/* The units before a rank's events (gap[0] = 0), up to max of them (all
 * when max is UINT64_MAX); the number read in *n.  A recording's gaps lose
 * the recorder's part (ph_unit_ns); a replay's have lost the replayer's. */
static int read_gaps(ph_trace *t, uint32_t rank, uint64_t max, uint64_t **gap, uint64_t *n, ph_err *err)
{
    ph_rank_reader *rd = ph_rank_open(t, rank, err);
    if (!rd)
        return -1;
    size_t cap = 1024;
    uint64_t *g = malloc(cap * sizeof *g), k = 0, prev = 0, probe = ph_trace_probe_gap_ns(t);
    ph_event ev;
    int rc = 0;
    while (g && k < max && (rc = ph_rank_next(rd, &ev, err)) > 0) {
        if (k == cap) {
            uint64_t *ng = realloc(g, (cap *= 2) * sizeof *ng);
            if (!ng) {
                free(g);
                g = NULL;
                break;
            }
            g = ng;
        }
        g[k] = k ? ph_unit_ns(prev, ev.t_entry, probe) : 0; /* as in the simulator */
        k++;
        prev = ev.t_exit;
    }
    ph_rank_close(rd);
    if (!g) {
        ph_err_set(err, "out of memory");
        return -1;
    }
    if (rc < 0) {
        free(g);
        return -1;
    }
    *gap = g;
    *n = k;
    return 0;
}

static int read_rank(ph_trace *t, uint32_t rank, rvec *v, ph_err *err)
{
    return read_gaps(t, rank, UINT64_MAX, &v->gap, &v->n, err);
}

/* A partial replay's ratio, replayed over host, at each position of the
 * loop, over the iterations replayed; host: the predicted trace.  The
 * loop's later iterations then scale the host's own: the trace holds every
 * iteration, and an application whose iterations grow (LAMMPS's melt
 * rebuilds its neighbour lists more often as the lattice melts: on the host
 * its last 6 of 19 iterations took 1.8 times its first 6) keeps that
 * growth, which repeating the first iterations replayed would drop. */
static int loop_ratios(ph_trace *host, uint32_t rank, rvec *v, ph_err *err)
{
    uint64_t first = (uint64_t)v->start + 1, end = (uint64_t)(v->start + v->iters * v->period) + 1;
    if (end > v->n)
        end = v->n;
    uint64_t *hg, hn;
    if (first >= end || read_gaps(host, rank, end, &hg, &hn, err) < 0)
        return first >= end ? 0 : -1;
    double *rep = calloc((size_t)v->period, sizeof *rep), *hst = calloc((size_t)v->period, sizeof *hst);
    v->pos_ratio = malloc((size_t)v->period * sizeof *v->pos_ratio);
    int rc = rep && hst && v->pos_ratio ? 0 : -1;
    for (uint64_t k = first; rc == 0 && k < end && k < hn; k++) {
        uint64_t p = (k - first) % (uint64_t)v->period;
        rep[p] += (double)v->gap[k];
        hst[p] += (double)hg[k];
    }
    for (int64_t p = 0; rc == 0 && p < v->period; p++)
        v->pos_ratio[p] = hst[p] > 0 ? rep[p] / hst[p] : v->ratio;
    free(rep);
    free(hst);
    free(hg);
    if (rc < 0)
        ph_err_set(err, "out of memory");
    return rc;
}

/* meta.json's replay.per_rank entry: the ratio and the loop of a partial replay. */
static void read_meta(const json_t *pr, rvec *v)
{
    double comp = (double)json_integer_value(json_object_get(pr, "computation_ns"));
    double rec = (double)json_integer_value(json_object_get(pr, "recorded_computation_ns"));
    v->ratio = rec > 0 && comp > 0 ? comp / rec : 1.0;
    v->raw = !json_object_get(pr, "replayer_gap_ns");
    json_t *re = json_object_get(pr, "recorded_events");
    v->recorded = json_is_integer(re) ? json_integer_value(re) : -1;
    json_t *loop = json_object_get(pr, "loop");
    v->start = json_integer_value(json_object_get(loop, "start"));
    v->period = json_integer_value(json_object_get(loop, "period"));
    v->iters = json_integer_value(json_object_get(loop, "iterations_replayed"));
    v->total = json_integer_value(json_object_get(loop, "iterations"));
    if (v->period <= 0 || v->iters <= 0)
        v->period = 0;
}

/* A replay is a directory: not a file someone left there, nor a hidden
 * scratch directory (.NAME.runs) of a replay under way or failed. */
static int replay_dir(const struct dirent *e)
{
    return e->d_name[0] != '.' && (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN);
}

/* "a, b" (at most a line's worth, in name order), the replays under
 * TRACE/replay: what a user who mistyped --comp NAME wants to see. */
static void replay_names(const char *parent, char *out, size_t cap)
{
    struct dirent **list;
    int n = scandir(parent, &list, replay_dir, alphasort), full = 0;
    size_t len = 0;
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        const char *sep = len ? ", " : "";
        /* room for this name and a final ", ..." */
        if (!full && len + strlen(sep) + strlen(list[i]->d_name) + 6 <= cap)
            len += (size_t)snprintf(out + len, cap - len, "%s%s", sep, list[i]->d_name);
        else
            full = 1;
        free(list[i]);
    }
    if (full)
        snprintf(out + len, cap - len, "%s...", len ? ", " : "");
    if (n >= 0)
        free(list);
}

/* NAME (no '/') that names no directory under TRACE/replay: -1, with an
 * error that lists the replays there. */
static int check_named(ph_trace *host, const char *name, const char *dir, ph_err *err)
{
    if (access(dir, F_OK) == 0 || errno != ENOENT)
        return 0;
    char parent[4200], names[256];
    snprintf(parent, sizeof parent, "%s/replay", ph_trace_dir(host));
    replay_names(parent, names, sizeof names);
    ph_err_set(err, "%s has no replay named '%s' (%s%s)", ph_trace_dir(host), name,
               names[0] ? "it has: " : "it has none; make one with phantom replay --name ", names[0] ? names : name);
    return -1;
}

rep_vectors *rep_vectors_open(ph_trace *host, const char *name, ph_err *err)
{
    char dir[4200], meta[4300];
    if (strchr(name, '/')) /* a replay directory, maybe of another recording of the job */
        snprintf(dir, sizeof dir, "%s", name);
    else
        snprintf(dir, sizeof dir, "%s/replay/%s", ph_trace_dir(host), name);
    if (!strchr(name, '/') && check_named(host, name, dir, err) < 0)
        return NULL;
    snprintf(meta, sizeof meta, "%s/meta.json", dir);
    ph_trace *t = ph_trace_open(dir, err);
    json_error_t je;
    json_t *m = t ? json_load_file(meta, 0, &je) : NULL;
    rep_vectors *v = m ? calloc(1, sizeof *v) : NULL;
    int rc = t && m && v ? 0 : -1;
    if (t && !m)
        ph_err_set(err, "%s: %s", meta, je.text);
    if (v) {
        v->nranks = ph_trace_nranks(t);
        v->r = calloc(v->nranks, sizeof *v->r);
        rc = v->r ? 0 : -1;
    }
    size_t i, k;
    json_t *pr, *one;
    json_array_foreach(json_object_get(json_object_get(m, "replay"), "replays"), k, one) {
        json_array_foreach(json_object_get(one, "per_rank"), i, pr) {
            json_int_t rank = json_integer_value(json_object_get(pr, "rank"));
            if (rc < 0 || rank < 0 || (uint32_t)rank >= v->nranks || v->r[rank].gap)
                continue;
            read_meta(pr, &v->r[rank]);
            rc = read_rank(t, (uint32_t)rank, &v->r[rank], err);
            if (rc == 0 && v->r[rank].period)
                rc = loop_ratios(host, (uint32_t)rank, &v->r[rank], err);
        }
    }
    if (rc == 0 && !json_is_object(json_object_get(m, "replay"))) {
        ph_err_set(err, "%s: not a result of phantom replay (no \"replay\" in meta.json)", meta);
        rc = -1;
    }
    json_decref(m);
    ph_trace_close(t);
    if (rc < 0) {
        rep_vectors_close(v);
        return NULL;
    }
    return v;
}

void rep_vectors_close(rep_vectors *v)
{
    for (uint32_t i = 0; v && v->r && i < v->nranks; i++) {
        free(v->r[i].gap);
        free(v->r[i].pos_ratio);
        free(v->r[i].host);
    }
    if (v)
        free(v->r);
    free(v);
}

int rep_vectors_has(const rep_vectors *v, uint32_t rank)
{
    return rank < v->nranks && v->r[rank].gap;
}

/* Whether rank r belongs in a list (rank_list). */
typedef int rank_pred(const rep_vectors *v, uint32_t r, const uint32_t *rep_of);

/* "3-5,9": the ranks below nranks for which in() holds (malloc'd; NULL when
 * there are none). */
static char *rank_list(const rep_vectors *v, uint32_t nranks, rank_pred *in, const uint32_t *rep_of)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    int any = 0;
    for (uint32_t r = 0; f && r < nranks;) {
        uint32_t e = r;
        while (e < nranks && in(v, e, rep_of))
            e++;
        if (e > r) {
            fprintf(f, e - r == 1 ? "%s%u" : "%s%u-%u", any ? "," : "", r, e - 1);
            any = 1;
            r = e;
        } else {
            r++;
        }
    }
    if (f)
        fclose(f);
    if (!any) {
        free(s);
        return NULL;
    }
    return s;
}

static int holds_replayer_part(const rep_vectors *v, uint32_t r, const uint32_t *rep_of)
{
    (void)rep_of;
    return v->r[r].gap && v->r[r].raw;
}

char *rep_vectors_raw(const rep_vectors *v)
{
    return rank_list(v, v->nranks, holds_replayer_part, NULL);
}

int64_t rep_vectors_recorded(const rep_vectors *v, uint32_t rank)
{
    return rep_vectors_has(v, rank) ? v->r[rank].recorded : -1;
}

uint32_t rep_vectors_source(const rep_vectors *v, uint32_t rank, const uint32_t *rep_of)
{
    return rep_vectors_has(v, rank) || !rep_of ? rank : rep_of[rank];
}

static int without_vector(const rep_vectors *v, uint32_t r, const uint32_t *rep_of)
{
    return !rep_vectors_has(v, rep_vectors_source(v, r, rep_of));
}

char *rep_vectors_missing(const rep_vectors *v, uint32_t nranks, const uint32_t *rep_of)
{
    return rank_list(v, nranks, without_vector, rep_of);
}

/* host_ns times a ratio, saturated: llround of a product past 2^63 (a
 * damaged trace's gap, a ratio from a damaged meta.json) is undefined. */
static uint64_t scaled_ns(uint64_t host_ns, double ratio)
{
    double x = (double)host_ns * ratio;
    if (!(x > 0))
        return 0;
    return x < 0x1p63 ? (uint64_t)llround(x) : UINT64_MAX;
}

int rep_vectors_stand_in(rep_vectors *v, ph_trace *host, uint32_t nranks, const uint32_t *rep_of, ph_err *err)
{
    for (uint32_t rank = 0; rep_of && rank < nranks; rank++) {
        uint32_t src = rep_vectors_source(v, rank, rep_of);
        rvec *r = src < v->nranks ? &v->r[src] : NULL;
        if (src == rank || !r || !r->gap || r->host)
            continue;
        if (r->recorded >= 0 && r->n >= (uint64_t)r->recorded)
            continue; /* a whole replay: its units cover every event */
        if (read_gaps(host, src, UINT64_MAX, &r->host, &r->hn, err) < 0)
            return -1;
    }
    return 0;
}

uint64_t rep_vectors_unit(const rep_vectors *v, uint32_t rank, uint64_t k, uint64_t host_ns)
{
    const rvec *r = rank < v->nranks ? &v->r[rank] : NULL;
    if (!r || !r->gap)
        return host_ns;
    if (k < r->n)
        return r->gap[k];
    if (k < r->hn) /* the same for rank and the ranks computing as it */
        host_ns = r->host[k];
    if (r->pos_ratio && (int64_t)k > r->start && (int64_t)k <= r->start + r->total * r->period)
        return scaled_ns(host_ns, r->pos_ratio[(k - (uint64_t)r->start - 1) % (uint64_t)r->period]);
    return scaled_ns(host_ns, r->ratio);
}
