/* cmd-stats.c - `phantom stats DIR`: where a run spent its time, per rank,
 * per MPI call and per call site.
 *
 * Time inside MPI is the sum of t_exit - t_entry; computation time is the sum
 * of the gaps between one call's exit and the next call's entry, i.e. the
 * total of PHANTOM's computation vector.  Point-to-point volume is counted on
 * the sender when the message is started (Send, Isend, the send half of
 * Sendrecv, each Start of a persistent send) and on the receiver when a
 * status says it arrived (Recv, Sendrecv, Mrecv, and the statuses of
 * Wait/Test calls).  Collective volume is what the call's arguments describe
 * and is kept apart: it is not comparable between algorithms.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "phantom.h"

/* Tables list each rank up to this many; past it, their spread. */
#define SPREAD_ABOVE 16
#define SPREAD_ABOVE_STR "16"

static const char usage[] =
    "usage: phantom stats DIR [--json] [--ranks LIST]\n"
    "\n"
    "Summarise the trace in DIR: per rank, events, computation time (the gaps\n"
    "between MPI calls), time inside MPI, point-to-point messages and bytes sent\n"
    "and received, collective calls; then per MPI function aggregated over the\n"
    "ranks, the ten call sites with the most MPI time, and the local MPI calls\n"
    "that were only counted.  Past " SPREAD_ABOVE_STR " ranks the table gives their spread\n"
    "(least, median, mean, greatest of each column) and the ranks with the most\n"
    "computation and the most MPI time, not a line for each; --ranks all lists\n"
    "every rank, --json always does.\n"
    "\n"
    "options:\n"
    "  --json          one JSON document instead of tables\n"
    "  --ranks LIST    only these ranks, e.g. 0-3,8 (or all: every rank, a line each)\n"
    "  --rank R        only rank R (the same as --ranks R)\n"
    "  -h, --help      show this help\n";

typedef struct op_acc {
    uint64_t calls, bytes_sent, bytes_recv, time_ns;
} op_acc;

/* Everything about one rank except the per-op table (kept small: one per rank). */
typedef struct rank_sum {
    uint32_t rank;
    int complete;
    uint64_t events, comp_ns, mpi_ns;
    uint64_t startup_ns; /* CPU time before MPI_Init (not in comp_ns) */
    uint64_t msgs_sent, p2p_sent, p2p_recv;
    uint64_t coll_calls, coll_sent, coll_recv;
} rank_sum;

/* Persistent sends by request id: ids grow, so appending keeps it sorted. */
typedef struct psend {
    uint64_t id, bytes;
    int real; /* not to MPI_PROC_NULL */
} psend;

typedef struct rank_acc {
    rank_sum s;
    op_acc ops[PH_OP_LIMIT];
    uint64_t prev_exit;
    int has_prev;
    psend *ps;
    size_t nps, capps;
} rank_acc;

typedef struct site_acc {
    uint64_t calls, time_ns;
    uint16_t op; /* the MPI call made there (ph_site_op_note) */
} site_acc;

typedef struct counted_acc {
    const char *name;
    uint64_t calls;
    int unknown;
    int timed; /* ns is the time inside the calls (passed-through ones, traces since 2026-12-06) */
    uint64_t ns;
} counted_acc;

typedef struct stats {
    ph_trace *t;
    cli_sites *labels; /* for cli_site_label */
    uint64_t probe_ns; /* the recorder's own part of each gap, not the program's */
    int json;
    int list_each; /* tables: a line per rank, not their spread */
    rank_sum *ranks, total;
    uint32_t nranks;
    op_acc ops[PH_OP_LIMIT];
    site_acc *sites;
    counted_acc *counted;
    size_t ncounted;
    json_t *jranks;
} stats;

/* ---- accounting one event ------------------------------------------------------ */

static void psend_add(rank_acc *a, const ph_event *ev)
{
    if (a->nps == a->capps) {
        size_t cap = a->capps ? a->capps * 2 : 16;
        psend *p = realloc(a->ps, cap * sizeof *p);
        if (!p)
            return; /* the Starts of this request then count no bytes: a statistic, not a failure */
        a->ps = p;
        a->capps = cap;
    }
    a->ps[a->nps++] = (psend){ev->newreq, ev->bytes, ev->peer != PH_PROC_NULL};
}

static const psend *psend_find(const rank_acc *a, uint64_t id)
{
    size_t lo = 0, hi = a->nps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a->ps[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < a->nps && a->ps[lo].id == id ? &a->ps[lo] : NULL;
}

static void sent(rank_acc *a, op_acc *o, uint64_t bytes)
{
    a->s.msgs_sent++;
    a->s.p2p_sent += bytes;
    o->bytes_sent += bytes;
}

static void account_statuses(rank_acc *a, op_acc *o, const ph_event *ev)
{
    for (uint32_t i = 0; i < ev->nstatus; i++)
        if (ev->status[i].source >= 0) { /* not absent, not MPI_PROC_NULL */
            a->s.p2p_recv += ev->status[i].bytes;
            o->bytes_recv += ev->status[i].bytes;
        }
}

static void account_coll(rank_acc *a, op_acc *o, const ph_event *ev)
{
    uint64_t s = ev->bytes, r = ev->rbytes;
    for (uint32_t i = 0; i < ev->nsbytes; i++)
        s += ev->sbytes[i];
    for (uint32_t i = 0; i < ev->nrbytes; i++)
        r += ev->rbytes_v[i];
    a->s.coll_calls++;
    a->s.coll_sent += s;
    a->s.coll_recv += r;
    o->bytes_sent += s;
    o->bytes_recv += r;
}

static void account_volume(rank_acc *a, op_acc *o, const ph_event *ev, unsigned kind)
{
    switch (kind) {
    case PH_K_SEND:
    case PH_K_ISEND:
        if (ev->peer != PH_PROC_NULL)
            sent(a, o, ev->bytes);
        break;
    case PH_K_PSEND: psend_add(a, ev); break;
    case PH_K_START:
    case PH_K_STARTALL:
        for (uint32_t i = 0; i < ev->nreqs; i++) {
            const psend *p = psend_find(a, ev->reqs[i]);
            if (p && p->real)
                sent(a, o, p->bytes);
        }
        break;
    case PH_K_SENDRECV:
        if (ev->peer != PH_PROC_NULL)
            sent(a, o, ev->bytes);
        account_statuses(a, o, ev);
        break;
    case PH_K_RECV: case PH_K_MRECV: case PH_K_WAIT: case PH_K_WAITALL: case PH_K_WAITANY:
    case PH_K_WAITSOME: case PH_K_TEST: case PH_K_TESTALL: case PH_K_TESTANY: case PH_K_TESTSOME:
        account_statuses(a, o, ev);
        break;
    case PH_K_COLL:
    case PH_K_ICOLL: account_coll(a, o, ev); break;
    default: break;
    }
}

static void account(stats *st, rank_acc *a, const ph_event *ev)
{
    const ph_op_info *info = ph_op(ev->op);
    uint64_t dur = ev->t_exit - ev->t_entry;
    op_acc *o = &a->ops[ev->op];
    a->s.events++;
    a->s.mpi_ns += dur;
    /* The unit predict simulates: threads may overlap calls (MPI_THREAD_MULTIPLE),
     * and only real gaps, less the recorder's part, are computation. */
    if (a->has_prev)
        a->s.comp_ns += ph_unit_ns(a->prev_exit, ev->t_entry, st->probe_ns);
    else
        a->s.startup_ns = ev->startup_ns;
    a->prev_exit = ev->t_exit;
    a->has_prev = 1;
    o->calls++;
    o->time_ns += dur;
    if (ev->site < ph_trace_nsites(st->t)) {
        site_acc *sa = &st->sites[ev->site];
        sa->calls++;
        sa->time_ns += dur;
        ph_site_op_note(&sa->op, ev->op);
    }
    if (info)
        account_volume(a, o, ev, info->kind);
}

/* ---- reading ranks -------------------------------------------------------------- */

static void add_sum(rank_sum *t, const rank_sum *s)
{
    t->events += s->events;
    t->comp_ns += s->comp_ns;
    t->mpi_ns += s->mpi_ns;
    t->startup_ns += s->startup_ns;
    t->msgs_sent += s->msgs_sent;
    t->p2p_sent += s->p2p_sent;
    t->p2p_recv += s->p2p_recv;
    t->coll_calls += s->coll_calls;
    t->coll_sent += s->coll_sent;
    t->coll_recv += s->coll_recv;
    t->complete &= s->complete;
}

static json_t *ops_json(const op_acc *ops)
{
    json_t *o = json_object();
    for (unsigned op = 0; op < PH_OP_LIMIT; op++) {
        if (!ops[op].calls || !ph_op(op))
            continue;
        json_object_set_new(o, ph_op(op)->name,
                            json_pack("{s:I, s:I, s:I, s:I}", "calls", (json_int_t)ops[op].calls,
                                      "bytes_sent", (json_int_t)ops[op].bytes_sent, "bytes_recv",
                                      (json_int_t)ops[op].bytes_recv, "time_ns",
                                      (json_int_t)ops[op].time_ns));
    }
    return o;
}

static json_t *sum_json(const rank_sum *s)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "events", (json_int_t)s->events,
                     "comp_ns", (json_int_t)s->comp_ns, "mpi_ns", (json_int_t)s->mpi_ns, "startup_ns",
                     (json_int_t)s->startup_ns,
                     "p2p_msgs_sent", (json_int_t)s->msgs_sent, "p2p_bytes_sent",
                     (json_int_t)s->p2p_sent, "p2p_bytes_recv", (json_int_t)s->p2p_recv,
                     "coll_calls", (json_int_t)s->coll_calls, "coll_bytes_sent",
                     (json_int_t)s->coll_sent, "coll_bytes_recv", (json_int_t)s->coll_recv);
}

static json_t *counted_json(const counted_acc *c, size_t n)
{
    json_t *o = json_object();
    for (size_t i = 0; i < n; i++)
        json_object_set_new(o, c[i].name, json_pack("{s:I, s:b, s:o}", "calls", (json_int_t)c[i].calls,
                                                    "unknown", c[i].unknown, "ns",
                                                    c[i].timed ? json_integer((json_int_t)c[i].ns) : json_null()));
    return o;
}

/* Folds the rank's counted-only calls into the totals; its own list for --json. */
static json_t *rank_counted(stats *st, uint32_t rank)
{
    const ph_counter *c;
    size_t n;
    if (ph_trace_counters(st->t, rank, &c, &n) < 0)
        return json_object(); /* the main pass already reported why the rank is unreadable */
    counted_acc *mine = calloc(n + 1, sizeof *mine);
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < st->ncounted && strcmp(st->counted[k].name, c[i].name) != 0)
            k++;
        if (k == st->ncounted) {
            counted_acc *v = realloc(st->counted, (k + 1) * sizeof *v);
            if (!v)
                break;
            st->counted = v;
            st->counted[st->ncounted++] = (counted_acc){c[i].name, 0, c[i].unknown, 1, 0};
        }
        st->counted[k].calls += c[i].calls;
        st->counted[k].ns += c[i].ns;
        st->counted[k].timed &= c[i].timed;
        if (mine)
            mine[i] = (counted_acc){c[i].name, c[i].calls, c[i].unknown, c[i].timed, c[i].ns};
    }
    json_t *j = mine ? counted_json(mine, n) : json_object();
    free(mine);
    return j;
}

static int read_rank(stats *st, uint32_t rank, rank_sum *out)
{
    ph_err err;
    ph_rank_reader *r = ph_rank_open(st->t, rank, &err);
    if (!r)
        return cli_error("stats", "%s", err.msg);
    rank_acc *a = calloc(1, sizeof *a);
    if (!a) {
        ph_rank_close(r);
        return cli_error("stats", "out of memory");
    }
    ph_event ev;
    int rc;
    while ((rc = ph_rank_next(r, &ev, &err)) > 0)
        account(st, a, &ev);
    if (rc == 0)
        cli_warn_incomplete("stats", r, rank, a->s.events);
    a->s.rank = rank;
    a->s.complete = rc == 0 && ph_rank_complete(r);
    ph_rank_close(r);
    if (rc == 0) {
        *out = a->s;
        for (unsigned op = 0; op < PH_OP_LIMIT; op++) {
            st->ops[op].calls += a->ops[op].calls;
            st->ops[op].bytes_sent += a->ops[op].bytes_sent;
            st->ops[op].bytes_recv += a->ops[op].bytes_recv;
            st->ops[op].time_ns += a->ops[op].time_ns;
        }
        json_t *counted = rank_counted(st, rank);
        if (st->json) {
            json_t *j = json_pack("{s:I}", "rank", (json_int_t)rank), *sum = sum_json(&a->s);
            json_object_update(j, sum);
            json_decref(sum);
            json_object_set_new(j, "ops", ops_json(a->ops));
            json_object_set_new(j, "counted", counted);
            json_object_set_new(j, "complete", json_boolean(a->s.complete));
            json_array_append_new(st->jranks, j);
        } else {
            json_decref(counted);
        }
    }
    free(a->ps);
    free(a);
    return rc < 0 ? cli_error("stats", "%s", err.msg) : CLI_OK;
}

/* ---- tables for a terminal -------------------------------------------------------- */

static const char *fmt_bytes(uint64_t b, char *buf, size_t cap)
{
    static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (b < 1024) {
        snprintf(buf, cap, "%llu B", (unsigned long long)b);
        return buf;
    }
    double v = (double)b / 1024;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, cap, "%.1f %s", v, unit[u]);
    return buf;
}

static const char *fmt_time(uint64_t ns, char *buf, size_t cap)
{
    if (ns >= 1000000000u)
        snprintf(buf, cap, "%.3f s", (double)ns / 1e9);
    else if (ns >= 1000000u)
        snprintf(buf, cap, "%.3f ms", (double)ns / 1e6);
    else if (ns >= 1000u)
        snprintf(buf, cap, "%.3f us", (double)ns / 1e3);
    else
        snprintf(buf, cap, "%llu ns", (unsigned long long)ns);
    return buf;
}

static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0.0; }

static void print_rank_row(const char *label, const rank_sum *s)
{
    char a[32], b[32], c[32], d[32];
    printf("%-6s %10llu %11s %11s %6.1f%% %9llu %10s %10s %10llu%s\n", label,
           (unsigned long long)s->events, fmt_time(s->comp_ns, a, sizeof a),
           fmt_time(s->mpi_ns, b, sizeof b), pct(s->mpi_ns, s->mpi_ns + s->comp_ns),
           (unsigned long long)s->msgs_sent, fmt_bytes(s->p2p_sent, c, sizeof c),
           fmt_bytes(s->p2p_recv, d, sizeof d), (unsigned long long)s->coll_calls,
           s->complete ? "" : "  (incomplete)");
}

static const char rank_columns[] = "%-6s %10s %11s %11s %7s %9s %10s %10s %10s\n";

static void print_ranks(const stats *st)
{
    printf(rank_columns, "rank", "events", "comp", "MPI", "MPI %", "p2p msgs", "p2p sent", "p2p recv",
           "coll calls");
    for (uint32_t i = 0; i < st->nranks; i++) {
        char label[16];
        snprintf(label, sizeof label, "%u", st->ranks[i].rank);
        print_rank_row(label, &st->ranks[i]);
    }
    if (st->nranks > 1)
        print_rank_row("total", &st->total);
}

/* ---- the spread over many ranks ------------------------------------------------ */

/* The columns of the rank table that have a spread, in its order. */
enum { C_EVENTS, C_COMP, C_MPI, C_MPI_PCT, C_MSGS, C_SENT, C_RECV, C_COLL, NCOLS };

static double column(const rank_sum *s, int c)
{
    switch (c) {
    case C_EVENTS: return (double)s->events;
    case C_COMP: return (double)s->comp_ns;
    case C_MPI: return (double)s->mpi_ns;
    case C_MPI_PCT: return pct(s->mpi_ns, s->mpi_ns + s->comp_ns);
    case C_MSGS: return (double)s->msgs_sent;
    case C_SENT: return (double)s->p2p_sent;
    case C_RECV: return (double)s->p2p_recv;
    default: return (double)s->coll_calls;
    }
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* One row of the spread: v[c] is column c's value; counts with a fraction
 * (a mean) get one decimal. */
static void print_spread_row(const char *label, const double v[NCOLS])
{
    char cell[NCOLS][32];
    for (int c = 0; c < NCOLS; c++) {
        uint64_t whole = (uint64_t)(v[c] + 0.5);
        if (c == C_COMP || c == C_MPI)
            fmt_time(whole, cell[c], sizeof cell[c]);
        else if (c == C_SENT || c == C_RECV)
            fmt_bytes(whole, cell[c], sizeof cell[c]);
        else if (c == C_MPI_PCT)
            snprintf(cell[c], sizeof cell[c], "%.1f%%", v[c]);
        else if (v[c] == (double)(uint64_t)v[c])
            snprintf(cell[c], sizeof cell[c], "%llu", (unsigned long long)v[c]);
        else
            snprintf(cell[c], sizeof cell[c], "%.1f", v[c]);
    }
    printf(rank_columns, label, cell[0], cell[1], cell[2], cell[3], cell[4], cell[5], cell[6], cell[7]);
}

static const rank_sum *top_base;
static int top_column;
static int by_column_desc(const void *x, const void *y)
{
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    double a = column(&top_base[i], top_column), b = column(&top_base[j], top_column);
    if (a != b)
        return a > b ? -1 : 1;
    return i < j ? -1 : 1;
}

/* "the most computation: rank 7 (1.2 ms), ..." for column c, the first n;
 * alike is 1 when every rank has the same. */
static void print_top(const stats *st, const char *what, int c, uint32_t *order, uint32_t n, int alike)
{
    if (alike) {
        printf("the most %s: every rank alike\n", what);
        return;
    }
    top_base = st->ranks;
    top_column = c;
    qsort(order, st->nranks, sizeof *order, by_column_desc);
    printf("the most %s:", what);
    for (uint32_t i = 0; i < n && i < st->nranks; i++) {
        const rank_sum *s = &st->ranks[order[i]];
        char t[32];
        printf("%s rank %u (%s, %.1f%% in MPI)", i ? "," : "", s->rank,
               fmt_time(c == C_COMP ? s->comp_ns : s->mpi_ns, t, sizeof t), column(s, C_MPI_PCT));
    }
    printf("\n");
}

/* Least, median (the lower one: a rank's own value), mean and greatest of
 * every column, then the ranks that compute most and wait most. */
static void print_spread(const stats *st)
{
    uint32_t n = st->nranks;
    double *v = malloc(n * sizeof *v), lo[NCOLS], med[NCOLS], mean[NCOLS], hi[NCOLS];
    uint32_t *order = malloc(n * sizeof *order);
    if (!v || !order) {
        free(v);
        free(order);
        cli_warn("stats", "out of memory: no spread over the ranks");
        return;
    }
    for (int c = 0; c < NCOLS; c++) {
        double sum = 0;
        for (uint32_t i = 0; i < n; i++)
            sum += v[i] = column(&st->ranks[i], c);
        qsort(v, n, sizeof *v, by_value);
        lo[c] = v[0], med[c] = v[(n - 1) / 2], mean[c] = sum / n, hi[c] = v[n - 1];
    }
    printf("%u ranks, their spread (--ranks all: a line each)\n", n);
    printf(rank_columns, "", "events", "comp", "MPI", "MPI %", "p2p msgs", "p2p sent", "p2p recv",
           "coll calls");
    print_spread_row("least", lo);
    print_spread_row("median", med);
    print_spread_row("mean", mean);
    print_spread_row("most", hi);
    print_rank_row("total", &st->total);
    for (uint32_t i = 0; i < n; i++)
        order[i] = i;
    printf("\n");
    print_top(st, "computation", C_COMP, order, 3, lo[C_COMP] == hi[C_COMP]);
    print_top(st, "MPI time", C_MPI, order, 3, lo[C_MPI] == hi[C_MPI]);
    uint32_t incomplete = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!st->ranks[i].complete && incomplete++ < 10)
            printf("%s %u", incomplete == 1 ? "incomplete (no end record): rank" : ",", st->ranks[i].rank);
    if (incomplete > 10)
        printf(" and %u more", incomplete - 10);
    if (incomplete)
        printf("\n");
    free(v);
    free(order);
}

static void print_ops(const stats *st)
{
    char a[32], b[32], c[32];
    printf("\n%-30s %10s %10s %10s %11s %7s\n", "MPI call", "calls", "sent", "recv", "time", "% MPI");
    for (unsigned op = 0; op < PH_OP_LIMIT; op++) {
        const op_acc *o = &st->ops[op];
        if (!o->calls || !ph_op(op))
            continue;
        printf("%-30s %10llu %10s %10s %11s %6.1f%%\n", ph_op(op)->name, (unsigned long long)o->calls,
               fmt_bytes(o->bytes_sent, a, sizeof a), fmt_bytes(o->bytes_recv, b, sizeof b),
               fmt_time(o->time_ns, c, sizeof c), pct(o->time_ns, st->total.mpi_ns));
    }
}

static const site_acc *sort_base;
static int by_time_desc(const void *x, const void *y)
{
    const site_acc *a = &sort_base[*(const uint32_t *)x], *b = &sort_base[*(const uint32_t *)y];
    if (a->time_ns != b->time_ns)
        return a->time_ns > b->time_ns ? -1 : 1;
    return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/* Ids of the sites that were called, most MPI time first; *n of them. */
static uint32_t *sites_by_time(const stats *st, uint32_t *n)
{
    uint32_t ns = ph_trace_nsites(st->t), k = 0;
    uint32_t *ids = malloc((ns + 1) * sizeof *ids);
    for (uint32_t i = 0; ids && i < ns; i++)
        if (st->sites[i].calls)
            ids[k++] = i;
    sort_base = st->sites;
    if (ids)
        qsort(ids, k, sizeof *ids, by_time_desc);
    *n = k;
    return ids;
}

static void print_sites(const stats *st)
{
    uint32_t n;
    uint32_t *ids = sites_by_time(st, &n);
    if (!ids || !n) {
        free(ids);
        return;
    }
    printf("\n%s\n%-6s %10s %11s %7s  %-16s %s\n", "top call sites by MPI time", "site", "calls", "time",
           "% MPI", "MPI call", "where");
    for (uint32_t i = 0; i < n && i < 10; i++) {
        const site_acc *s = &st->sites[ids[i]];
        char where[512], t[32];
        cli_site_label(st->labels, ids[i], where, sizeof where);
        printf("%-6u %10llu %11s %6.1f%%  %-16s %s\n", ids[i], (unsigned long long)s->calls,
               fmt_time(s->time_ns, t, sizeof t), pct(s->time_ns, st->total.mpi_ns), cli_site_call(s->op),
               where);
    }
    free(ids);
}

static void print_counted(const stats *st)
{
    for (int unknown = 0; unknown <= 1; unknown++) {
        int first = 1;
        for (size_t i = 0; i < st->ncounted; i++) {
            if (st->counted[i].unknown != unknown)
                continue;
            printf("%s%s %llu", first ? (unknown ? "\nnot traced, passed through (counted; time inside those the simulation leaves out): "
                                                 : "\nlocal calls (counted, not traced): ")
                                      : ", ",
                   st->counted[i].name, (unsigned long long)st->counted[i].calls);
            if (st->counted[i].timed) {
                char t[32];
                printf(" (%s)", fmt_time(st->counted[i].ns, t, sizeof t));
            }
            first = 0;
        }
        if (!first)
            putchar('\n');
    }
}

/* The longest start-up, a line under the header (traces from 1.2 on). */
static void print_startup(const stats *st)
{
    uint32_t at = 0;
    for (uint32_t i = 1; i < st->nranks; i++)
        if (st->ranks[i].startup_ns > st->ranks[at].startup_ns)
            at = i;
    if (!st->nranks || !st->ranks[at].startup_ns)
        return;
    char t[32];
    printf("start-up: the process's CPU time before MPI_Init, up to %s (rank %u), not in comp\n",
           fmt_time(st->ranks[at].startup_ns, t, sizeof t), st->ranks[at].rank);
}

static void print_tables(const stats *st)
{
    const char *cmd = ph_trace_meta(st->t, "command"), *when = ph_trace_meta(st->t, "start_time");
    const char *host = ph_trace_meta(st->t, "host");
    printf("trace %s: %u ranks", ph_trace_dir(st->t), ph_trace_nranks(st->t));
    if (when)
        printf(", recorded %s", when);
    if (host)
        printf(" on %s", host);
    printf("\n");
    if (cmd)
        printf("command: %s\n", cmd);
    if (st->probe_ns)
        printf("comp: the gaps between calls, each less the recorder's own part of it (%llu ns)\n",
               (unsigned long long)st->probe_ns);
    print_startup(st);
    printf("\n");
    if (st->list_each || st->nranks <= SPREAD_ABOVE)
        print_ranks(st);
    else
        print_spread(st);
    print_ops(st);
    print_sites(st);
    print_counted(st);
}

/* ---- one JSON document ------------------------------------------------------------------ */

/* The site's caller as phantom finish found it, or null. */
static json_t *caller_json(const ph_site_info *s)
{
    if (!s->caller_function && !s->caller_file)
        return json_null();
    return cli_place_json(s->caller_function, s->caller_file, s->caller_line);
}

static json_t *sites_json(const stats *st)
{
    uint32_t n;
    uint32_t *ids = sites_by_time(st, &n);
    json_t *a = json_array();
    for (uint32_t i = 0; ids && i < n; i++) {
        const ph_site_info *s = ph_trace_site(st->t, ids[i]);
        char where[512];
        cli_site_label(st->labels, ids[i], where, sizeof where);
        json_array_append_new(
            a, json_pack("{s:I, s:s, s:I, s:I, s:s?, s:s?, s:o, s:o, s:s}", "id", (json_int_t)ids[i], "call",
                         cli_site_call(st->sites[ids[i]].op), "calls", (json_int_t)st->sites[ids[i]].calls,
                         "time_ns", (json_int_t)st->sites[ids[i]].time_ns, "function", s->function, "file",
                         s->file, "line", s->line > 0 ? json_integer(s->line) : json_null(),
                         "caller", caller_json(s), "where", where));
    }
    free(ids);
    return a;
}

static int print_json(stats *st)
{
    json_t *totals = sum_json(&st->total);
    json_object_set_new(totals, "ops", ops_json(st->ops));
    json_object_set_new(totals, "counted", counted_json(st->counted, st->ncounted));
    json_object_set_new(totals, "complete", json_boolean(st->total.complete));
    json_t *doc = json_pack("{s:s, s:I, s:I, s:O, s:o, s:o}", "trace", ph_trace_dir(st->t), "nranks",
                            (json_int_t)ph_trace_nranks(st->t), "probe_gap_ns", (json_int_t)st->probe_ns,
                            "ranks", st->jranks, "totals", totals, "sites", sites_json(st));
    int rc = ph_json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    putchar('\n');
    json_decref(doc);
    return rc == 0 ? CLI_OK : CLI_ERR;
}

/* ---- the verb ------------------------------------------------------------------------------ */

/* Reads the ranks in `spec` (NULL or "all": every rank), given by option opt. */
static int collect(stats *st, const char *opt, const char *spec)
{
    uint32_t nr = ph_trace_nranks(st->t);
    uint8_t *in = malloc(nr ? nr : 1);
    st->ranks = calloc(nr ? nr : 1, sizeof *st->ranks);
    st->sites = calloc(ph_trace_nsites(st->t) + 1, sizeof *st->sites);
    st->jranks = json_array();
    if (!in || !st->ranks || !st->sites) {
        free(in);
        return cli_error("stats", "out of memory");
    }
    ph_err err;
    if (!spec || strcmp(spec, "all") == 0)
        memset(in, 1, nr);
    else if (ph_parse_ranks(spec, nr, in, &err) < 0) {
        free(in);
        return cli_error("stats", "%s: %s: %s", ph_trace_dir(st->t), opt, err.msg);
    }
    st->total.complete = 1;
    int rc = CLI_OK;
    for (uint32_t rank = 0; rank < nr && rc == CLI_OK; rank++) {
        if (!in[rank])
            continue;
        rc = read_rank(st, rank, &st->ranks[st->nranks]);
        if (rc == CLI_OK)
            add_sum(&st->total, &st->ranks[st->nranks++]);
    }
    free(in);
    return rc;
}

static int run(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"rank", required_argument, NULL, 'r'},
                                             {"ranks", required_argument, NULL, 'R'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    stats st = {0};
    const char *spec = NULL, *opt = "--ranks";
    uint32_t r;
    for (int c; (c = cli_getopt("stats", argc, argv, ":hr:R:", longopts)) != -1;) {
        if (c == 'h')
            return cli_help(&cmd_stats);
        else if (c == 'j')
            st.json = 1;
        else if (c == 'r' && cli_parse_u32(optarg, 0, UINT32_MAX - 1, &r) == 0)
            spec = optarg, opt = "--rank";
        else if (c == 'r')
            return cli_usage_error("stats", "--rank: '%s' is not a rank number", optarg);
        else if (c == 'R')
            spec = optarg, opt = "--ranks";
        else
            return CLI_USAGE;
    }
    st.list_each = spec != NULL;
    const char *path;
    if (cli_trace_arg("stats", argc, argv, &path) != CLI_OK)
        return CLI_USAGE;
    ph_err err;
    if (!(st.t = ph_trace_open(path, &err)))
        return cli_error("stats", "%s", err.msg);
    if (!(st.labels = cli_sites_new(st.t))) {
        ph_trace_close(st.t);
        return cli_error("stats", "out of memory");
    }
    st.probe_ns = ph_trace_probe_gap_ns(st.t);
    int rc = collect(&st, opt, spec);
    if (rc == CLI_OK && st.json)
        rc = print_json(&st);
    else if (rc == CLI_OK)
        print_tables(&st);
    if (rc == CLI_OK)
        rc = cli_flush_stdout("stats");
    json_decref(st.jranks);
    free(st.ranks);
    free(st.sites);
    free(st.counted);
    cli_sites_free(st.labels);
    ph_trace_close(st.t);
    return cli_end_warnings(rc);
}

const ph_verb cmd_stats = {"stats", "time, calls and bytes per rank, MPI function and call site",
                           usage, run};
