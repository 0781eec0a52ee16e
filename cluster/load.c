/* load.c - a trace's sequential computation vectors and communication
 * sequences, read with the one trace reader (lib/ph_reader.c).
 *
 * Each rank is read once: its gaps become the vector, its events are hashed
 * into the communication-sequence signature and keyed by (operation, call
 * site) for the period search, and only the vector is kept.  Threads take
 * ranks in turn, each with its own ph_trace, because a reader may add to
 * its trace's tables while it reads.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct reader {
    const char *dir;
    cl_trace_data *d;
    atomic_int failed;
    ph_err err; /* the first failure */
    atomic_flag err_taken;
} reader;

/* The rank's own rank in each communicator, looked up once per rank. */
typedef struct comm_pos {
    int32_t *pos; /* -1: not looked up; -2: not a member */
    uint32_t n;
} comm_pos;

static int32_t my_pos(comm_pos *cp, const ph_trace *t, uint32_t comm, uint32_t rank)
{
    if (comm == 0)
        return (int32_t)rank;
    const ph_comm_info *c = ph_trace_comm(t, comm);
    if (!c || comm >= cp->n)
        return -2;
    if (cp->pos[comm] == -1) {
        cp->pos[comm] = -2;
        for (uint32_t i = 0; i < c->size; i++)
            if (c->members[i] == (int32_t)rank)
                cp->pos[comm] = (int32_t)i;
    }
    return cp->pos[comm];
}

/* A peer as an offset from the rank, modulo the communicator: the same
 * neighbour pattern gives the same value on every rank. */
static int64_t relative(int32_t peer, int32_t me, const ph_comm_info *c)
{
    if (peer < 0 || me < 0 || !c || c->remote_size || c->size == 0)
        return peer; /* specials, intercommunicators: as they are */
    return ((int64_t)peer - me + c->size) % c->size;
}

static uint64_t event_hash(const ph_trace *t, comm_pos *cp, uint32_t rank, const ph_event *ev)
{
    const ph_comm_info *c = ph_trace_comm(t, ev->comm);
    int32_t me = my_pos(cp, t, ev->comm, rank);
    uint64_t vb = 0;
    for (uint32_t i = 0; i < ev->nsbytes; i++)
        vb = cl_mix(vb, ev->sbytes[i]);
    for (uint32_t i = 0; i < ev->nrbytes; i++)
        vb = cl_mix(vb, ev->rbytes_v[i]);
    uint64_t h = cl_mix(ev->op, ev->bytes);
    h = cl_mix(h, (uint64_t)relative(ev->peer, me, c));
    h = cl_mix(h, (uint64_t)(int64_t)ev->tag);
    h = cl_mix(h, ev->rbytes);
    h = cl_mix(h, (uint64_t)relative(ev->rpeer, me, c));
    h = cl_mix(h, (uint64_t)(int64_t)ev->rtag);
    h = cl_mix(h, (uint64_t)(int64_t)ev->root); /* as given: the same on every rank */
    h = cl_mix(h, c ? c->size : 0);
    h = cl_mix(h, ev->nreqs);
    return cl_mix(h, vb);
}

typedef struct grow {
    float *vec;
    uint32_t *tok;
    uint64_t cap;
} grow;

static int grow_to(grow *g, uint64_t n)
{
    if (n < g->cap)
        return 0;
    uint64_t cap = g->cap ? g->cap * 2 : 1024;
    float *v = realloc(g->vec, cap * sizeof *v);
    if (v)
        g->vec = v;
    uint32_t *k = realloc(g->tok, cap * sizeof *k);
    if (k)
        g->tok = k;
    if (!v || !k)
        return -1;
    g->cap = cap;
    return 0;
}

static int read_rank(ph_trace *t, uint32_t rank, cl_rank *out, grow *g, comm_pos *cp, ph_err *err)
{
    ph_rank_reader *r = ph_rank_open(t, rank, err);
    if (!r)
        return -1;
    for (uint32_t i = 0; i < cp->n; i++)
        cp->pos[i] = -1;
    ph_event ev;
    uint64_t n = 0, prev_exit = 0, sig = 0;
    double total = 0;
    int rc;
    while ((rc = ph_rank_next(r, &ev, err)) > 0) {
        if (grow_to(g, n + 1) < 0) {
            ph_err_set(err, "out of memory reading rank %u", rank);
            rc = -1;
            break;
        }
        if (n > 0) {
            float gap = ev.t_entry > prev_exit ? (float)(ev.t_entry - prev_exit) : 0.0f;
            g->vec[n - 1] = gap;
            total += gap;
        }
        prev_exit = ev.t_exit;
        g->tok[n++] = (uint32_t)cl_mix(ev.op, ev.site);
        sig = cl_mix(sig, event_hash(t, cp, rank, &ev));
    }
    out->complete = rc == 0 && ph_rank_complete(r);
    ph_rank_close(r);
    if (rc < 0)
        return -1;
    out->events = n;
    out->dim = n ? (uint32_t)(n - 1) : 0;
    out->sig = cl_mix(sig, n);
    out->total = total;
    cl_find_period(g->tok, n, &out->period);
    out->vec = malloc((out->dim ? out->dim : 1) * sizeof *out->vec);
    if (!out->vec) {
        ph_err_set(err, "out of memory reading rank %u", rank);
        return -1;
    }
    memcpy(out->vec, g->vec, out->dim * sizeof *out->vec);
    return 0;
}

static void fail(reader *rd, const ph_err *e)
{
    if (!atomic_flag_test_and_set(&rd->err_taken))
        rd->err = *e;
    atomic_store(&rd->failed, 1);
}

static void read_ranks(void *ctx, uint64_t begin, uint64_t end)
{
    reader *rd = ctx;
    if (atomic_load(&rd->failed))
        return;
    ph_err err;
    ph_trace *t = ph_trace_open(rd->dir, &err);
    grow g = {0};
    comm_pos cp = {0};
    if (t) {
        cp.n = ph_trace_ncomms(t);
        cp.pos = malloc((cp.n + 1) * sizeof *cp.pos);
    }
    if (!t || !cp.pos) {
        if (t)
            ph_err_set(&err, "out of memory");
        fail(rd, &err);
    }
    for (uint64_t i = begin; t && cp.pos && i < end && !atomic_load(&rd->failed); i++)
        if (read_rank(t, (uint32_t)i, &rd->d->r[i], &g, &cp, &err) < 0)
            fail(rd, &err);
    free(g.vec);
    free(g.tok);
    free(cp.pos);
    ph_trace_close(t);
}

cl_trace_data *cl_load(const char *dir, int nthreads, ph_err *err)
{
    ph_trace *t = ph_trace_open(dir, err); /* checks meta.json and every header first */
    if (!t)
        return NULL;
    cl_trace_data *d = calloc(1, sizeof *d);
    uint32_t n = ph_trace_nranks(t);
    ph_trace_close(t);
    if (!d || !(d->r = calloc(n, sizeof *d->r))) {
        free(d);
        ph_err_set(err, "out of memory");
        return NULL;
    }
    d->n = n;
    reader rd = {.dir = dir, .d = d, .err_taken = ATOMIC_FLAG_INIT};
    /* few chunks: each opens the trace, which checks every rank's header */
    uint64_t chunk = n / (2 * (uint64_t)cl_threads(nthreads)) + 1;
    cl_parallel(cl_threads(nthreads), n, chunk, read_ranks, &rd);
    if (atomic_load(&rd.failed)) {
        *err = rd.err;
        cl_trace_data_free(d);
        return NULL;
    }
    uint64_t fp = cl_mix(0, n);
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        fp = cl_mix(fp, d->r[i].sig);
        sum += d->r[i].total;
    }
    d->fingerprint = cl_mix(fp, (uint64_t)llround(sum)); /* a re-recording differs in its times */
    d->mean_total = n ? sum / n : 0;
    return d;
}

void cl_trace_data_free(cl_trace_data *d)
{
    if (!d)
        return;
    for (uint32_t i = 0; d->r && i < d->n; i++)
        free(d->r[i].vec);
    free(d->r);
    free(d);
}
