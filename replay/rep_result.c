/* rep_result.c - from the times files of replay runs to computation vectors
 * written beside the trace (rep_result.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rep_result.h"

#define TIMES_MAGIC "PHTMRTM3"
#define HEADER 88

static uint64_t get64(const uint8_t *p) { return ph_get_le(p, 8); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)ph_get_le(p, 4); }

int rep_times_open(const char *path, rep_times *t, ph_err *err)
{
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", path);
    uint8_t h[HEADER];
    t->f = fopen(path, "rb");
    if (!t->f) {
        ph_err_set(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (fread(h, 1, HEADER, t->f) != HEADER || memcmp(h, TIMES_MAGIC, 8) != 0) {
        ph_err_set(err, "%s: not a replay times file", path);
        rep_times_close(t);
        return -1;
    }
    t->rank = get32(h + 8);
    t->nranks = get32(h + 12);
    t->c0 = get64(h + 16), t->t0 = get64(h + 24), t->c1 = get64(h + 32), t->t1 = get64(h + 40);
    t->events = get64(h + 48);
    t->end = h[56];
    t->busy = (double)ph_get_le(h + 58, 2) / 1000;
    t->isolated = h[60];
    t->cpu_share = (double)get64(h + 64) / 1e6;
    /* h + 72: the CPU clock readings' cost the replay took off each gap (for a reader's eyes) */
    t->probe_events = get64(h + 80);
    if (t->probe_events > (1u << 20)) {
        ph_err_set(err, "%s: corrupt header (%llu probe calls)", path, (unsigned long long)t->probe_events);
        rep_times_close(t);
        return -1;
    }
    if (t->cpu_share > 1 || t->busy > 1) {
        ph_err_set(err, "%s: corrupt header (%s of %.2f)", path,
                   t->cpu_share > 1 ? "a CPU share" : "a busy share", t->cpu_share > 1 ? t->cpu_share : t->busy);
        rep_times_close(t);
        return -1;
    }
    if (t->c1 <= t->c0 || t->t1 < t->t0) {
        ph_err_set(err, "%s: the replay of rank %u did not finish (its clock was never closed)",
                   path, t->rank);
        rep_times_close(t);
        return -1;
    }
    return 0;
}

/* Clock units to CLOCK_MONOTONIC ns, on the baseline of the whole run. */
static uint64_t to_ns(const rep_times *t, uint64_t c)
{
    __int128 d = (__int128)c - (__int128)t->c0;
    return (uint64_t)((__int128)t->t0 + d * (__int128)(t->t1 - t->t0) / (__int128)(t->c1 - t->c0));
}

int rep_times_next(rep_times *t, uint64_t *entry, uint64_t *exit_, uint64_t *gap_cpu, ph_err *err)
{
    uint64_t v[3];
    size_t n = fread(v, sizeof v, 1, t->f);
    if (n != 1) {
        if (ferror(t->f))
            ph_err_set(err, "%s: %s", t->path, strerror(errno));
        else
            ph_err_set(err, "%s: truncated", t->path);
        return -1;
    }
    *entry = to_ns(t, v[0]);
    *exit_ = to_ns(t, v[1]);
    *gap_cpu = v[2];
    return 1;
}

void rep_times_close(rep_times *t)
{
    if (t->f)
        fclose(t->f);
    t->f = NULL;
}

/* ---- writing the result ------------------------------------------------------------- */

ph_writer *rep_result_writer(ph_trace *t, const char *dir, const char *command, ph_err *err)
{
    ph_writer *w = ph_writer_create(dir, ph_trace_nranks(t), command, err);
    if (!w)
        return NULL;
    for (uint32_t i = 1; i < ph_trace_ncomms(t); i++) {
        const ph_comm_info *c = ph_trace_comm(t, i);
        if (ph_writer_comm(w, c->size, c->members, c->remote_size, c->remote) != i) {
            ph_err_set(err, "%s: cannot copy the communicator table", dir);
            ph_writer_abort(w);
            return NULL;
        }
    }
    for (uint32_t i = 0; i < ph_trace_nsites(t); i++) {
        const ph_site_info *s = ph_trace_site(t, i);
        if (ph_writer_site(w, s->function, s->file, s->line) != i) {
            ph_err_set(err, "%s: cannot copy the call-site table", dir);
            ph_writer_abort(w);
            return NULL;
        }
    }
    return w;
}

/* Median (the mean of the middle two for an even count) and minimum. */
static void stats(uint64_t *v, int n, uint64_t *median, uint64_t *min)
{
    qsort(v, (size_t)n, sizeof *v, ph_cmp_u64);
    *min = v[0];
    *median = n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

typedef struct combine {
    rep_times *runs;
    int n;
    uint64_t *prev_exit, *gaps, *durs; /* per run */
    uint64_t *probe;                   /* per run: the replayer's own part of a gap, ns */
    uint64_t out_exit[2];              /* median, min: the written streams' clocks */
} combine;

/* A gap of wall ns whose CPU time was cpu, in the run's units.  On a
 * throttled node, its CPU time on a CPU that runs share of the time: a short
 * gap's wall time (cpu = all ones), else what the CPU clock said, which
 * cannot exceed the wall time (its readings' cost, a median, is taken off). */
static uint64_t unit_of(const rep_times *rt, uint64_t wall, uint64_t cpu)
{
    return rt->cpu_share > 0 ? (uint64_t)llround((double)(cpu < wall ? cpu : wall) / rt->cpu_share) : wall;
}

/* The replayer's own part of a gap in the run (rep_out_probe), in the run's
 * units, rounded to whole ns: from the probe's entries ahead of the events. */
static int read_probe(rep_times *rt, uint64_t *probe, ph_err *err)
{
    uint64_t n = rt->probe_events, *gaps = malloc((n ? n : 1) * sizeof *gaps), prev = 0, sum, kept;
    if (!gaps) {
        ph_err_set(err, "out of memory");
        return -1;
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t in, out, cpu;
        if (rep_times_next(rt, &in, &out, &cpu, err) < 0) {
            free(gaps);
            return -1;
        }
        gaps[i] = i ? unit_of(rt, in > prev ? in - prev : 0, cpu) : 0;
        prev = out;
    }
    /* gaps[0] has no call before it; the warm-up leaves it out */
    *probe = ph_probe_sum(gaps, n, &sum, &kept) == 0 ? (2 * sum + kept) / (2 * kept) : 0;
    free(gaps);
    return 0;
}

/* Event ev with times from the runs' j-th entries: the median into med, the
 * minimum into min. */
static int put_event(combine *cb, ph_event *ev, uint64_t j, ph_rank_writer *med,
                     ph_rank_writer *min, rep_rank_result *res, ph_err *err)
{
    for (int r = 0; r < cb->n; r++) {
        uint64_t in, out, cpu;
        const rep_times *rt = &cb->runs[r];
        if (rep_times_next(&cb->runs[r], &in, &out, &cpu, err) < 0)
            return -1;
        uint64_t unit = unit_of(rt, j ? in - cb->prev_exit[r] : 0, cpu);
        cb->gaps[r] = unit > cb->probe[r] ? unit - cb->probe[r] : 0; /* the program's part */
        cb->durs[r] = out - in;
        cb->prev_exit[r] = out;
        res->run_comp_ns[r] += cb->gaps[r];
        res->run_wall_ns[r] += cb->gaps[r] + cb->durs[r];
    }
    uint64_t gm, gmin, dm, dmin;
    stats(cb->gaps, cb->n, &gm, &gmin);
    stats(cb->durs, cb->n, &dm, &dmin);
    res->comp_ns += gm;
    res->comp_min_ns += gmin;
    ph_rank_writer *w[2] = {med, min};
    uint64_t g[2] = {gm, gmin}, d[2] = {dm, dmin};
    for (int i = 0; i < 2; i++) {
        if (!w[i])
            continue;
        ev->t_entry = cb->out_exit[i] + g[i];
        ev->t_exit = ev->t_entry + d[i];
        cb->out_exit[i] = ev->t_exit;
        if (ph_rank_write(w[i], ev, err) < 0)
            return -1;
    }
    return 0;
}

static int open_runs(combine *cb, uint32_t rank, char *const *dirs, int n, ph_err *err)
{
    cb->n = n;
    cb->runs = calloc((size_t)n, sizeof *cb->runs);
    cb->prev_exit = calloc((size_t)n * 4, sizeof(uint64_t));
    if (!cb->runs || !cb->prev_exit) {
        ph_err_set(err, "out of memory");
        return -1;
    }
    cb->gaps = cb->prev_exit + n;
    cb->durs = cb->gaps + n;
    cb->probe = cb->durs + n;
    for (int r = 0; r < n; r++) {
        char path[4300];
        snprintf(path, sizeof path, "%s/rank-%06u.times", dirs[r], rank);
        if (rep_times_open(path, &cb->runs[r], err) < 0)
            return -1;
        if (cb->runs[r].rank != rank || cb->runs[r].events != cb->runs[0].events) {
            ph_err_set(err, "%s: %llu events, the first run replayed %llu", path,
                       (unsigned long long)cb->runs[r].events, (unsigned long long)cb->runs[0].events);
            return -1;
        }
        if (read_probe(&cb->runs[r], &cb->probe[r], err) < 0)
            return -1;
    }
    return 0;
}

/* The median of the CPU shares of the runs that timed CPU time; 0 when none
 * did (wall-clock gaps). */
static double run_shares(const combine *cb)
{
    uint64_t *ppm = malloc((size_t)cb->n * sizeof *ppm), median = 0, least;
    int n = 0;
    for (int r = 0; ppm && r < cb->n; r++)
        if (cb->runs[r].cpu_share > 0)
            ppm[n++] = (uint64_t)llround(cb->runs[r].cpu_share * 1e6); /* as the header has it */
    if (n)
        stats(ppm, n, &median, &least);
    free(ppm);
    return (double)median / 1e6;
}

/* Each run's busy share in thousandths into ppt; the median of those
 * known, as a fraction (0: none). */
static double run_busy(const combine *cb, uint64_t *ppt)
{
    uint64_t *v = malloc((size_t)cb->n * sizeof *v), median = 0, least;
    int n = 0;
    for (int r = 0; r < cb->n; r++) {
        ppt[r] = (uint64_t)llround(cb->runs[r].busy * 1000);
        if (v && ppt[r])
            v[n++] = ppt[r];
    }
    if (n)
        stats(v, n, &median, &least);
    free(v);
    return (double)median / 1000;
}

/* A rank waiting in MPI spins: alone on its core it has it 98-99% of the
 * time here.  Below 80% (of its share, under a quota), something else took
 * turns on it; 0.2 s at least, so that start-up's own waits do not count. */
int rep_rank_shared_cpu(const rep_rank_result *r)
{
    double alone = r->cpu_share > 0 ? r->cpu_share : 1;
    return r->busy > 0 && r->busy < 0.8 * alone && r->wall_ns >= 200000000u;
}

static void close_runs(combine *cb)
{
    for (int r = 0; cb->runs && r < cb->n; r++)
        rep_times_close(&cb->runs[r]);
    free(cb->runs);
    free(cb->prev_exit);
}

/* How many events the recording has after the replayed part. */
static int rest_of_recording(ph_rank_reader *rd, rep_rank_result *res, ph_err *err)
{
    ph_event ev;
    int rc;
    while ((rc = ph_rank_next(rd, &ev, err)) > 0)
        res->recorded_events++;
    return rc;
}

static int copy_events(ph_trace *t, combine *cb, ph_rank_writer *wm, ph_rank_writer *wn,
                       rep_rank_result *res, ph_err *err)
{
    ph_rank_reader *rd = ph_rank_open(t, res->rank, err);
    if (!rd)
        return -1;
    ph_event ev;
    uint64_t j = 0, first = 0, prev = 0, rec_probe = ph_trace_probe_gap_ns(t);
    int rc = 0;
    for (; j < res->events && (rc = ph_rank_next(rd, &ev, err)) > 0; j++) {
        if (j == 0)
            first = prev = ev.t_entry;
        res->recorded_comp_ns += ph_unit_ns(prev, ev.t_entry, rec_probe); /* as the replay's: the program's part */
        prev = ev.t_exit;
        res->recorded_events++;
        if (put_event(cb, &ev, j, wm, wn, res, err) < 0) {
            rc = -1;
            break;
        }
    }
    if (rc == 0 && j < res->events) {
        ph_err_set(err, "rank %u: the replay has %llu events, the recording only %llu", res->rank,
                   (unsigned long long)res->events, (unsigned long long)j);
        rc = -1;
    }
    res->recorded_wall_ns = prev - first; /* of the part replayed */
    if (rc >= 0)
        rc = rest_of_recording(rd, res, err);
    ph_rank_close(rd);
    return rc < 0 ? -1 : 0;
}

int rep_result_rank(ph_trace *t, uint32_t rank, char *const *run_dirs, int nruns, ph_writer *med,
                    ph_writer *min, rep_rank_result *res, ph_err *err)
{
    combine cb = {0};
    memset(res, 0, sizeof *res);
    res->rank = rank;
    res->run_comp_ns = calloc((size_t)nruns * 4, sizeof(uint64_t));
    if (!res->run_comp_ns) {
        ph_err_set(err, "out of memory");
        return -1;
    }
    res->run_wall_ns = res->run_comp_ns + nruns;
    res->run_busy_ppt = res->run_wall_ns + nruns;
    res->run_probe_ns = res->run_busy_ppt + nruns;
    ph_rank_writer *wm = NULL, *wn = NULL;
    int rc = open_runs(&cb, rank, run_dirs, nruns, err);
    if (rc == 0) {
        res->events = cb.runs[0].events;
        res->end = cb.runs[0].end;
        res->cpu_share = run_shares(&cb);
        res->busy = run_busy(&cb, res->run_busy_ppt);
        memcpy(res->run_probe_ns, cb.probe, (size_t)nruns * sizeof *cb.probe);
        uint64_t *v = malloc((size_t)nruns * sizeof *v), least;
        if (v) {
            memcpy(v, cb.probe, (size_t)nruns * sizeof *v);
            stats(v, nruns, &res->probe_ns, &least);
            free(v);
        }
        wm = ph_writer_rank(med, rank, 0, err);
        wn = min && wm ? ph_writer_rank(min, rank, 0, err) : NULL;
        rc = !wm || (min && !wn) ? -1 : copy_events(t, &cb, wm, wn, res, err);
    }
    int complete = rc == 0 && res->end == REP_END_FINALIZE;
    const char *why = res->end == REP_END_PARTIAL ? "a partial replay: it stops after the iterations planned"
                    : res->end == REP_END_RECORDING ? "the recording it replays ends here"
                    : NULL;
    if (rc == 0 && why && (ph_rank_writer_note(wm, why, err) < 0 || (wn && ph_rank_writer_note(wn, why, err) < 0)))
        rc = -1;
    ph_err e2;
    if (wm && ph_rank_writer_close(wm, complete, rc ? &e2 : err) < 0)
        rc = -1;
    if (wn && ph_rank_writer_close(wn, complete, rc ? &e2 : err) < 0)
        rc = -1;
    close_runs(&cb);
    uint64_t *w = malloc((size_t)nruns * sizeof *w), lo;
    if (w) {
        memcpy(w, res->run_wall_ns, (size_t)nruns * sizeof *w);
        stats(w, nruns, &res->wall_ns, &lo);
        free(w);
    }
    return rc;
}
