/* simmpi-bench.c - how fast SIM-MPI simulates, and how much memory a rank takes.
 *
 *   simmpi-bench stencil RANKS [ITERS] [BYTES]   3-D halo exchange + Allreduce(8 B)
 *   simmpi-bench alltoall RANKS [ITERS] [BYTES]  Alltoall of BYTES per peer
 *   simmpi-bench TRACE-DIR                        a recorded trace
 *
 * The synthetic workloads come from an in-memory source (no files, so a
 * 1,048,576-rank stencil needs no trace on disk): each rank's events are
 * generated on demand from (rank, iteration, step).  Prints one line:
 *
 *   simmpi-bench: stencil ranks=4096 events=... seconds=... events_per_s=...
 *     heap_events=... messages=... rss_mib=... bytes_per_rank=... predicted_s=...
 *
 * "events" are the trace events (MPI calls) simulated; memory is the growth
 * of the resident set during the run (getrusage high-water mark).  The
 * platform is ib-qdr-like, 16 ranks per node.
 *
 * Each line also gives the ceiling: a bare event queue (the engine's own,
 * simmpi/evqueue.h; SIMMPI_QUEUE=heap|radix|auto picks it, for the
 * simulation too) holding one event per rank, through which as many
 * events pass (pop the earliest, push that rank's next) as the simulation
 * had trace events, timed in the same run: bare_per_s=..., and
 * ratio = events_per_s / bare_per_s; and beside it the same through the
 * 4-ary heap alone, heap4_per_s=..., and queue_vs_heap4 = bare_per_s /
 * heap4_per_s (1 up to 32,768 events, where the queue is that heap; the
 * radix heap's gain past it).  A synthetic row ends with the
 * generator's own rate, source_per_s=...: its events handed out again
 * without simulating, so that 1/source_per_s of each event's time is the
 * generator's, not the simulator's.  Last, huge_pages=1 where the heap was
 * advised for transparent huge pages (from 1,024 ranks, as phantom predict
 * does; SIMMPI_HUGE_PAGES=0 leaves it, for the comparison).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "internal.h" /* the event queue, for the bare-queue baseline */
#include "simmpi.h"

#define DUR 1000 /* host duration of each call (ns); ignored by the simulation */

/* Where a rank's stream is: its next event's position, and that position's
 * iteration and step, kept as counters so that no event divides. */
typedef struct gen_pos {
    uint32_t pos, it, step;
} gen_pos;

typedef struct gen {
    int kind; /* 0 stencil, 1 alltoall */
    uint32_t n, dims[3];
    uint32_t iters;
    uint64_t bytes, comp;
    gen_pos *pos;        /* per rank: where its stream is */
    int32_t (*nb)[6];    /* per rank: its six neighbours (the divisions, done once) */
    ph_comm_info world;
    /* scratch for the arrays of the event being handed out (one at a time) */
    uint64_t reqs[12];
    ph_status st[12];
    ph_event ev;
} gen;

static uint32_t per_iter(const gen *g) { return g->kind ? 1 : 14; }

static int32_t neighbour_of(const gen *g, uint32_t rank, int k)
{
    uint32_t c[3] = {rank % g->dims[0], rank / g->dims[0] % g->dims[1], rank / (g->dims[0] * g->dims[1])};
    int d = k / 2;
    c[d] = (c[d] + g->dims[d] + (k % 2 ? 1u : g->dims[d] - 1u)) % g->dims[d];
    return (int32_t)(c[0] + g->dims[0] * (c[1] + g->dims[1] * c[2]));
}

static int32_t neighbour(const gen *g, uint32_t rank, int k) { return g->nb[rank][k]; }

/* Stencil iteration: 6 Irecv, 6 Isend, Waitall(12), Allreduce(8 B). */
static void stencil_event(gen *g, uint32_t rank, uint32_t it, uint32_t step, ph_event *ev)
{
    uint64_t base = (uint64_t)it * 12;
    if (step < 12) {
        int k = (int)(step % 6);
        int32_t p = neighbour(g, rank, k);
        ev->op = step < 6 ? PH_OP_IRECV : PH_OP_ISEND;
        ev->peer = ev->peer_world = p;
        ev->tag = step < 6 ? (k ^ 1) : k;
        ev->count = (int64_t)g->bytes;
        ev->bytes = g->bytes;
        ev->newreq = base + step + 1;
    } else if (step == 12) {
        ev->op = PH_OP_WAITALL;
        ev->nreqs = ev->nstatus = 12;
        for (int k = 0; k < 12; k++) {
            g->reqs[k] = base + (uint64_t)k + 1;
            int32_t p = neighbour(g, rank, k % 6);
            g->st[k] = k < 6 ? (ph_status){p, p, k ^ 1, g->bytes} : (ph_status){.source = PH_NO_RANK};
        }
        ev->reqs = g->reqs;
        ev->status = g->st;
    } else {
        ev->op = PH_OP_ALLREDUCE;
        ev->count = 1;
        ev->bytes = 8;
    }
}

/* An event with nothing set: a copy of it is vector moves where memset
 * of a ph_event is `rep stos`, which took a third of the generator's time. */
static const ph_event no_event;

static int gen_next(void *ctx, uint32_t rank, const ph_event **out, ph_err *err)
{
    (void)err;
    gen *g = ctx;
    ph_event *ev = &g->ev;
    *out = ev;
    gen_pos *gp = &g->pos[rank];
    uint32_t pos = gp->pos, k = per_iter(g);
    uint64_t total = (uint64_t)g->iters * k + 2;
    if (pos >= total)
        return 0;
    *ev = no_event;
    ev->seq = pos;
    ev->flag = ev->index = -1;
    ev->newcomm = PH_COMM_NULL;
    ev->root = PH_NO_RANK;
    /* (it, step) = ((pos - 1) / k, (pos - 1) % k) for every pos but 0 */
    uint32_t it = gp->it, step = gp->step;
    if (pos == 0 || pos + 1 == total) {
        ev->op = pos ? PH_OP_FINALIZE : PH_OP_INIT;
    } else {
        if (g->kind == 0) {
            stencil_event(g, rank, it, step, ev);
        } else {
            ev->op = PH_OP_ALLTOALL;
            ev->count = ev->rcount = (int64_t)g->bytes;
            ev->bytes = ev->rbytes = g->bytes;
        }
    }
    /* computation before the first call of every iteration */
    uint64_t t = (uint64_t)pos * DUR + (pos ? (uint64_t)(it + 1) * g->comp : 0);
    ev->t_entry = t;
    ev->t_exit = t + DUR;
    gp->pos = pos + 1;
    if (pos && ++gp->step == k) {
        gp->step = 0;
        gp->it++;
    }
    return 1;
}

static const ph_comm_info *gen_comm(void *ctx, uint32_t id)
{
    gen *g = ctx;
    return id == 0 ? &g->world : NULL;
}

static void cube(uint32_t n, uint32_t d[3])
{
    d[0] = d[1] = d[2] = 1;
    for (int i = 0; n > 1; i = (i + 1) % 3) { /* split powers of two round robin */
        if (n % 2)
            break;
        d[i] *= 2;
        n /= 2;
    }
    d[0] *= n;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void platform(simmpi_options *o)
{
    simmpi_options_default(o);
    simmpi_platform *p = &o->platform;
    snprintf(p->name, sizeof p->name, "bench-ib");
    p->inter = (simmpi_loggp){.o_s = 350000, .o_r = 450000, .L = 950000, .o_prime = 500000,
                              .G_fs = 312500, .eager_limit = 12288};
    p->intra = (simmpi_loggp){.o_s = 40000, .o_r = 60000, .L = 30000, .o_prime = 400000,
                              .G_fs = 90000, .eager_limit = 4040};
    p->cores_per_node = 16;
}

/* The bare queue: nranks events, then `events` times pop the earliest and
 * push its rank's next, a pseudo-random 0.1 .. 1.7 us later (a fixed LCG,
 * so every run does the same work).  Events per second. */
static double bare_queue(uint32_t nranks, uint64_t events, int kind)
{
    evqueue q;
    evq_init(&q, kind, 1);
    uint64_t x = 88172645463325252ull, sink = 0;
    for (uint32_t r = 0; r < nranks; r++)
        if (evq_push(&q, (x = x * 6364136223846793005ull + 1) >> 44, (uint64_t)r << 40, r) < 0)
            goto fail;
    double t0 = now();
    for (uint64_t i = 0; i < events; i++) {
        uint32_t ref;
        hev e;
        if (evq_pop(&q, &e, &ref) < 0)
            goto fail;
        sink += e.t;
        x = x * 6364136223846793005ull + 1;
        if (evq_push(&q, e.t + 100000 + (x >> 44) % 1600000, e.key, ref) < 0)
            goto fail;
    }
    double secs = now() - t0;
    evq_free(&q);
    return sink && secs > 0 ? (double)events / secs : 0;
fail:
    evq_free(&q);
    return 0;
}

/* SIMMPI_QUEUE=heap|radix|auto (default auto): the event queue of both the
 * simulation and the bare queue, to compare them. */
static int queue_kind(void)
{
    const char *q = getenv("SIMMPI_QUEUE");
    int kind = q ? simmpi_queue_named(q) : SIMMPI_QUEUE_AUTO;
    if (kind >= 0)
        return kind;
    fprintf(stderr, "simmpi-bench: SIMMPI_QUEUE: '%s' is not auto, heap or radix\n", q);
    exit(2);
}

/* The generator alone: every rank's events handed out again, a rank at a
 * time in turn (as the simulation asks for them), into its scratch event.
 * Events per second: what the source itself costs the simulation's core. */
static double gen_rate(gen *g)
{
    memset(g->pos, 0, g->n * sizeof *g->pos);
    const ph_event *ev;
    uint64_t events = 0, sink = 0;
    double t0 = now();
    for (int more = 1; more;) {
        more = 0;
        for (uint32_t r = 0; r < g->n; r++)
            if (gen_next(g, r, &ev, NULL) > 0) {
                events++;
                sink += ev->t_entry + (uint64_t)ev->op;
                more = 1;
            }
    }
    double secs = now() - t0;
    return sink && secs > 0 ? (double)events / secs : 0;
}

/* As `phantom predict` does: from 1,024 ranks, heap reserved and advised
 * for transparent huge pages.  SIMMPI_HUGE_PAGES=0 leaves malloc as it is,
 * for the comparison. */
static int huge_pages(uint32_t nranks)
{
    const char *e = getenv("SIMMPI_HUGE_PAGES");
    return !(e && strcmp(e, "0") == 0) && ph_heap_huge_pages(nranks);
}

static int run(const char *what, const simmpi_source *src, long rss0, gen *g)
{
    int huge = huge_pages(src->nranks);
    simmpi_options o;
    platform(&o);
    o.queue = queue_kind();
    simmpi_result *res;
    ph_err err;
    double t0 = now();
    if (simmpi_run(&o, src, &res, &err) < 0) {
        fprintf(stderr, "simmpi-bench: %s\n", err.msg);
        return 1;
    }
    double secs = now() - t0;
    long rss = rss_kib() - rss0;
    double rate = (double)res->events / secs, bare = bare_queue(res->nranks, res->events, o.queue);
    /* the 4-ary heap alone, side by side: what the radix heap gains at scale */
    double heap4 = o.queue == SIMMPI_QUEUE_HEAP ? bare : bare_queue(res->nranks, res->events, SIMMPI_QUEUE_HEAP);
    printf("simmpi-bench: %s ranks=%u events=%llu seconds=%.3f events_per_s=%.0f heap_events=%llu "
           "messages=%llu rss_mib=%.1f bytes_per_rank=%.0f predicted_s=%.6f stuck=%u "
           "bare_per_s=%.0f ratio=%.3f heap4_per_s=%.0f queue_vs_heap4=%.2f",
           what, res->nranks, (unsigned long long)res->events, secs, rate,
           (unsigned long long)res->heap_events, (unsigned long long)res->messages, rss / 1024.0,
           rss * 1024.0 / res->nranks, (double)res->total / 1e12, res->nstuck, bare,
           bare > 0 ? rate / bare : 0, heap4, heap4 > 0 ? bare / heap4 : 0);
    if (g) /* part of events_per_s's time is the generator's own */
        printf(" source_per_s=%.0f", gen_rate(g));
    printf(" huge_pages=%d\n", huge);
    simmpi_result_free(res);
    return 0;
}

static int synthetic(int argc, char **argv)
{
    gen g = {.kind = strcmp(argv[1], "alltoall") == 0};
    g.n = (uint32_t)strtoul(argv[2], NULL, 10);
    g.iters = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 10;
    g.bytes = argc > 4 ? strtoull(argv[4], NULL, 10) : (g.kind ? 64 : 4096);
    g.comp = 100000; /* 100 us per iteration */
    if (g.n < 2 || (!g.kind && strcmp(argv[1], "stencil") != 0)) {
        fprintf(stderr, "usage: simmpi-bench stencil|alltoall RANKS [ITERS] [BYTES]\n");
        return 2;
    }
    cube(g.n, g.dims);
    /* the generator's own tables are not the simulator's memory: before rss0 */
    g.nb = malloc(g.n * sizeof *g.nb);
    g.pos = calloc(g.n, sizeof *g.pos);
    if (!g.nb || !g.pos)
        return 1;
    for (uint32_t i = 0; i < g.n; i++)
        for (int k = 0; k < 6; k++)
            g.nb[i][k] = neighbour_of(&g, i, k);
    long rss0 = rss_kib();
    g.world.size = g.n;
    g.world.members = malloc(g.n * sizeof(int32_t));
    if (!g.world.members)
        return 1;
    for (uint32_t i = 0; i < g.n; i++)
        g.world.members[i] = (int32_t)i;
    simmpi_source src = {.nranks = g.n, .nsites = 0, .next = gen_next, .comm = gen_comm, .ctx = &g};
    char what[64];
    snprintf(what, sizeof what, "%s(%ux%ux%u,%u,%lluB)", argv[1], g.dims[0], g.dims[1], g.dims[2],
             g.iters, (unsigned long long)g.bytes);
    int rc = run(g.kind ? argv[1] : what, &src, rss0, &g);
    free(g.pos);
    free(g.nb);
    free(g.world.members);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 3)
        return synthetic(argc, argv);
    if (argc != 2) {
        fprintf(stderr, "usage: simmpi-bench stencil|alltoall RANKS [ITERS] [BYTES] | TRACE-DIR\n");
        return 2;
    }
    ph_err err;
    long rss0 = rss_kib();
    ph_trace *t = ph_trace_open(argv[1], &err);
    simmpi_source src;
    if (!t || simmpi_source_trace(t, 2, &src, &err) < 0) {
        fprintf(stderr, "simmpi-bench: %s\n", err.msg);
        return 1;
    }
    int rc = run(argv[1], &src, rss0, NULL);
    simmpi_source_trace_close(&src);
    ph_trace_close(t);
    return rc;
}
