/* source.c - ranks' events from a trace directory.
 *
 * Single-threaded, a rank's reader is opened when the simulation first needs
 * one of its events and closed at the end of its stream.
 *
 * With worker threads, the workers decode ahead: each rank has two chunks of
 * decoded events (deep copies: the reader's arrays only live until its next
 * call); while the simulation consumes one, a worker fills the other.  The
 * simulation takes events in exactly the order it would without workers, so
 * threads change how fast the prediction comes, never what it is.
 *
 * The simulation can outrun the workers (HPCC's polls simulate faster than
 * they decode): a chunk it needs that no worker has started, it decodes
 * itself, as it would without workers, rather than sleep until one does.
 * Sleeping and waking cost system calls, so each side wakes the other only
 * when it sleeps.  Chunks hold fewer events the more ranks there are, so
 * that what is decoded ahead stays within about CHUNK_BUDGET bytes: small
 * enough to stay in the caches and out of the page-fault path (an event is
 * 216 bytes: with 64 MiB and chunks of up to 4,096, a 16-rank stencil took
 * 7,000 page faults with a worker and 660 without; now 2,100).
 *
 * The CLI's default is one thread, no workers: where measured (a 2-core
 * VM, doc/simmpi.md section 6), a decoded event read from another core's
 * cache cost about what decoding it in place does, and waiting for a
 * worker more.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define CHUNK_MAX 1024           /* events decoded at a time for one rank */
#define CHUNK_MIN 16
#define CHUNK_FIRST 64           /* a rank's first chunk: the simulation waits for it */
#define CHUNK_BUDGET (8u << 20)  /* bytes of events decoded ahead, over every rank */
#define HOT_FROM 256             /* ranks: from here, the engine asks for the next reader ahead */

typedef struct chunk {
    ph_event *ev;
    uint32_t n, pos, room; /* events, the next one to read, ev's length */
    int end, err;        /* the stream ends after these events / failed */
    ph_err errmsg;
    uint8_t *arena;      /* the events' arrays */
    size_t used, cap;
} chunk;

enum { SLOT_FREE, SLOT_FILLING, SLOT_READY };

/* Two chunks per rank, consumed alternately; at most one being filled (a
 * rank's reader is never used by two threads), and queued at most once.
 *
 * Ownership: a FREE or FILLING chunk belongs to the workers, a READY one to
 * the simulation, which alone reads it (pos) and alone makes it FREE again;
 * every change of state is made under the lock.  The simulation's fast path
 * reads state without the lock: the acquire load pairs with the store that
 * published the chunk, so a READY chunk's events are visible. */
typedef struct rank_buf {
    chunk c[2];
    _Atomic uint8_t state[2];
    uint8_t cur;    /* the chunk the simulation reads next (simulation only) */
    uint8_t queued; /* in the workers' queue (lock) */
    uint8_t eos;    /* a worker decoded the end of the stream, or failed (lock) */
    uint8_t ended;  /* the simulation consumed the end of the stream (simulation only) */
    uint8_t fills;  /* chunks claimed so far, up to 16 (lock) */
} rank_buf;

typedef struct trace_src {
    ph_trace *t;
    uint32_t n;
    ph_rank_reader **r;
    uint8_t *ended;
    ph_event ev; /* the event trace_next hands out (no workers) */
    /* workers */
    uint32_t nthreads;
    pthread_t *th;
    rank_buf *b;
    pthread_mutex_t mu;
    pthread_cond_t work, data;
    uint32_t *todo, qhead, qlen; /* ranks with a free chunk to fill, FIFO */
    const void **next_ev;        /* per rank, its next decoded event, if in a READY chunk (simulation) */
    uint32_t chunk;              /* events a chunk holds */
    uint32_t idle;               /* workers asleep on work (lock) */
    int waiting;                 /* the simulation sleeps on data (lock) */
    int stop;
    /* counting the events for progress reports */
    pthread_t counter;
    int counting;
    atomic_int count_stop;
    _Atomic uint64_t total;
    /* intercommunicator groups' sizes, scanned when first asked (simulation) */
    simmpi_group_sizes *gs;
} trace_src;

/* ---- decoding one event (the caller's thread) ------------------------------------ */

static int read_event(trace_src *ts, uint32_t rank, ph_event *ev, ph_err *err)
{
    if (ts->ended[rank])
        return 0;
    if (!ts->r[rank] && !(ts->r[rank] = ph_rank_open(ts->t, rank, err)))
        return -1;
    int rc = ph_rank_next(ts->r[rank], ev, err);
    if (rc == 0) {
        ph_rank_close(ts->r[rank]);
        ts->r[rank] = NULL;
        ts->ended[rank] = 1;
    }
    return rc;
}

static int trace_next(void *ctx, uint32_t rank, const ph_event **ev, ph_err *err)
{
    trace_src *ts = ctx;
    *ev = &ts->ev;
    return read_event(ts, rank, &ts->ev, err);
}

static const ph_comm_info *trace_comm(void *ctx, uint32_t id)
{
    trace_src *ts = ctx;
    return id < ph_trace_ncomms(ts->t) ? ph_trace_comm(ts->t, id) : NULL;
}

/* Only a trace with an intercommunicator Gatherv, Scatterv or Allgatherv
 * pays for the scan, once. */
static int trace_group_sizes(void *ctx, uint32_t comm, uint64_t k, const uint64_t **v, ph_err *err)
{
    trace_src *ts = ctx;
    if (!ts->gs && simmpi_group_sizes_scan(ts->t, &ts->gs, err) < 0)
        return -1;
    *v = simmpi_group_sizes_get(ts->gs, comm, k);
    return 0;
}

/* ---- chunks -------------------------------------------------------------------------- */

static void *arena_copy(chunk *c, const void *src, size_t n)
{
    if (!n || !src)
        return NULL;
    size_t need = (c->used + n + 7) & ~(size_t)7;
    if (need > c->cap)
        return NULL; /* sized before copying: see chunk_fill */
    void *p = c->arena + c->used;
    memcpy(p, src, n);
    c->used = need;
    return p;
}

static size_t arrays_size(const ph_event *e)
{
    return e->nreqs * sizeof *e->reqs + e->nstatus * sizeof *e->status +
           e->nsbytes * sizeof *e->sbytes + e->nrbytes * sizeof *e->rbytes_v +
           (e->ncompleted != UINT32_MAX ? e->ncompleted : 0) * sizeof *e->completed + 40;
}

/* Keeps the event decoded in place as c->ev[c->n]: its arrays, still the
 * reader's, move into the chunk's arena (grown, then the earlier events'
 * pointers rebased). */
static int chunk_keep(chunk *c)
{
    ph_event *e = &c->ev[c->n];
    size_t need = c->used + arrays_size(e);
    if (need > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < need)
            cap *= 2;
        uint8_t *a = realloc(c->arena, cap);
        if (!a)
            return -1;
        for (uint32_t i = 0; i < c->n && a != c->arena; i++) {
            ph_event *o = &c->ev[i];
#define REBASE(f, T) o->f = o->f ? (T)(a + ((const uint8_t *)o->f - c->arena)) : NULL
            REBASE(reqs, const uint64_t *);
            REBASE(status, const ph_status *);
            REBASE(sbytes, const uint64_t *);
            REBASE(rbytes_v, const uint64_t *);
            REBASE(completed, const int32_t *);
#undef REBASE
        }
        c->arena = a;
        c->cap = cap;
    }
    c->n++;
    e->reqs = arena_copy(c, e->reqs, e->nreqs * sizeof *e->reqs);
    e->status = arena_copy(c, e->status, e->nstatus * sizeof *e->status);
    e->sbytes = arena_copy(c, e->sbytes, e->nsbytes * sizeof *e->sbytes);
    e->rbytes_v = arena_copy(c, e->rbytes_v, e->nrbytes * sizeof *e->rbytes_v);
    e->completed = arena_copy(c, e->completed,
                              (e->ncompleted != UINT32_MAX ? e->ncompleted : 0) * sizeof *e->completed);
    return 0;
}

/* Decodes the next `want` events of rank into c (rank claimed: its other
 * chunk is not FILLING). */
static void chunk_fill(trace_src *ts, uint32_t rank, chunk *c, uint32_t want)
{
    c->n = c->pos = 0;
    c->used = 0;
    c->end = c->err = 0;
    if (want > c->room) {
        ph_event *ev = realloc(c->ev, want * sizeof *c->ev);
        if (!ev) {
            c->err = 1;
            ph_err_set(&c->errmsg, "%s: out of memory", ph_trace_dir(ts->t));
            return;
        }
        c->ev = ev;
        c->room = want;
    }
    while (c->n < want) {
        int rc = read_event(ts, rank, &c->ev[c->n], &c->errmsg);
        if (rc <= 0) {
            c->end = rc == 0;
            c->err = rc < 0;
            return;
        }
        if (chunk_keep(c) < 0) {
            c->err = 1;
            ph_err_set(&c->errmsg, "%s: out of memory", ph_trace_dir(ts->t));
            return;
        }
    }
}

/* ---- workers ---------------------------------------------------------------------------- */

/* Queue rank for a worker if it has a free chunk, none being filled and more
 * of its stream to decode (lock held). */
static void want_fill(trace_src *ts, uint32_t rank)
{
    rank_buf *b = &ts->b[rank];
    if (b->queued || b->eos || b->state[0] == SLOT_FILLING || b->state[1] == SLOT_FILLING ||
        (b->state[0] != SLOT_FREE && b->state[1] != SLOT_FREE))
        return;
    b->queued = 1;
    ts->todo[(ts->qhead + ts->qlen++) % ts->n] = rank;
    if (ts->idle)
        pthread_cond_signal(&ts->work);
}

/* Fill rank's chunk `slot`, FREE and next in stream order, claimed under
 * the lock (held on entry and on return); then publish it. */
static void fill_slot(trace_src *ts, uint32_t rank, int slot)
{
    rank_buf *b = &ts->b[rank];
    b->state[slot] = SLOT_FILLING;
    /* CHUNK_FIRST events, then twice as many each time up to ts->chunk: the
     * simulation starts a rank soon, and later hands chunks over seldom */
    uint32_t want = (uint32_t)CHUNK_FIRST << b->fills;
    b->fills += b->fills < 16;
    pthread_mutex_unlock(&ts->mu);
    chunk_fill(ts, rank, &b->c[slot], want < ts->chunk ? want : ts->chunk);
    pthread_mutex_lock(&ts->mu);
    b->eos = (uint8_t)(b->c[slot].end || b->c[slot].err);
    atomic_store_explicit(&b->state[slot], SLOT_READY, memory_order_release);
    want_fill(ts, rank); /* one more chunk ahead, if there is room */
}

static void *worker(void *arg)
{
    trace_src *ts = arg;
    pthread_mutex_lock(&ts->mu);
    for (;;) {
        while (!ts->stop && !ts->qlen) {
            ts->idle++;
            pthread_cond_wait(&ts->work, &ts->mu);
            ts->idle--;
        }
        if (ts->stop)
            break;
        uint32_t rank = ts->todo[ts->qhead];
        ts->qhead = (ts->qhead + 1) % ts->n;
        ts->qlen--;
        rank_buf *b = &ts->b[rank];
        b->queued = 0;
        /* The simulation may have taken the chunk meanwhile (it is FILLING
         * or READY now), and queues the rank again when it is done. */
        if (b->eos || b->state[0] == SLOT_FILLING || b->state[1] == SLOT_FILLING)
            continue;
        /* The next chunk in stream order: the one the simulation waits for
         * if it is free, else the other (cur is READY, being read). */
        int slot = b->state[b->cur] == SLOT_FREE ? b->cur : !b->cur;
        if (b->state[slot] != SLOT_FREE)
            continue;
        fill_slot(ts, rank, slot);
        if (ts->waiting)
            pthread_cond_broadcast(&ts->data);
    }
    pthread_mutex_unlock(&ts->mu);
    return NULL;
}

/* The simulation's next event of rank: from the current chunk; when it is used
 * up, from the other one, waiting for a worker to fill it if it must.
 *
 * The decision to hand a chunk back rests on what the simulation itself saw
 * of a READY chunk (pos == n), never on a state read again under the lock:
 * a chunk that was FILLING at the fast path can be READY, full and unread
 * by the time the lock is taken.  (That check-then-act once gave a fresh
 * chunk back unread: its events were skipped and, for a short stream, the
 * rank's trace "ended" early, which the simulation reported as a deadlock.) */
static int threaded_next(void *ctx, uint32_t rank, const ph_event **ev, ph_err *err)
{
    trace_src *ts = ctx;
    rank_buf *b = &ts->b[rank];
    for (;;) {
        chunk *c = &b->c[b->cur];
        if (atomic_load_explicit(&b->state[b->cur], memory_order_acquire) == SLOT_READY) {
            if (c->pos < c->n) {
                *ev = &c->ev[c->pos++]; /* READY until the next call for rank */
                ts->next_ev[rank] = c->pos < c->n ? &c->ev[c->pos] : NULL; /* the engine's hint */
                /* The rank's next event, decoded on another core: in this
                 * core's cache by the time the rank asks (a round of the
                 * other ranks' events later, as a rule). */
                const char *nx = (const char *)&c->ev[c->pos];
                for (size_t off = 0; c->pos < c->n && off < sizeof *c->ev; off += 64)
                    __builtin_prefetch(nx + off);
                return 1;
            }
            if (c->err) { /* stays READY: every later call fails the same way */
                *err = c->errmsg;
                return -1;
            }
            ts->next_ev[rank] = NULL;
            pthread_mutex_lock(&ts->mu); /* used up: give it back, move on */
            b->ended = (uint8_t)c->end;
            atomic_store_explicit(&b->state[b->cur], SLOT_FREE, memory_order_relaxed);
            b->cur = !b->cur;
            want_fill(ts, rank);
            pthread_mutex_unlock(&ts->mu);
            continue;
        }
        if (b->ended)
            return 0;
        pthread_mutex_lock(&ts->mu);
        while (b->state[b->cur] != SLOT_READY) {
            if (b->state[b->cur] == SLOT_FREE && b->state[!b->cur] != SLOT_FILLING) {
                fill_slot(ts, rank, b->cur); /* no worker has started it: decode it here */
                break;
            }
            ts->waiting = 1; /* a worker is on it */
            pthread_cond_wait(&ts->data, &ts->mu);
            ts->waiting = 0;
        }
        pthread_mutex_unlock(&ts->mu);
    }
}

static int start_workers(trace_src *ts, uint32_t nthreads, ph_err *err)
{
    ts->b = calloc(ts->n, sizeof *ts->b);
    ts->next_ev = calloc(ts->n, sizeof *ts->next_ev);
    ts->todo = malloc((size_t)ts->n * sizeof *ts->todo);
    ts->th = calloc(nthreads, sizeof *ts->th);
    if (!ts->b || !ts->next_ev || !ts->todo || !ts->th) {
        ph_err_set(err, "%s: out of memory", ph_trace_dir(ts->t));
        return -1;
    }
    /* n ranks, two chunks each, ph_event and about as much again in arrays */
    uint64_t fit = CHUNK_BUDGET / ((uint64_t)ts->n * 4 * sizeof(ph_event));
    ts->chunk = fit > CHUNK_MAX ? CHUNK_MAX : fit < CHUNK_MIN ? CHUNK_MIN : (uint32_t)fit;
    pthread_mutex_init(&ts->mu, NULL);
    pthread_cond_init(&ts->work, NULL);
    pthread_cond_init(&ts->data, NULL);
    for (uint32_t i = 0; i < ts->n; i++) {
        ts->todo[ts->qlen++] = i;
        ts->b[i].queued = 1;
    }
    for (uint32_t i = 0; i < nthreads; i++) {
        int rc = pthread_create(&ts->th[i], NULL, worker, ts);
        if (rc != 0) {
            ph_err_set(err, "cannot start decoding thread %u of %u: %s", i + 1, nthreads, strerror(rc));
            return -1;
        }
        ts->nthreads++;
    }
    return 0;
}

/* ---- counting the events (progress reports) ------------------------------------------------ */

/* A second pass over every rank with readers of its own, for traces whose
 * meta.json has no event count (never finished): decoding is the only way
 * to count.  It runs at the lowest priority so that it takes idle cores,
 * not the simulation's. */
static void *counter(void *arg)
{
    trace_src *ts = arg;
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19); /* Linux: per thread */
    uint64_t n = 0;
    for (uint32_t rank = 0; rank < ts->n; rank++) {
        ph_err err;
        ph_rank_reader *r = ph_rank_open(ts->t, rank, &err);
        if (!r)
            return NULL; /* the simulation will report it; no total */
        ph_event ev;
        int rc;
        while ((rc = ph_rank_next(r, &ev, &err)) > 0)
            if ((++n & 4095) == 0 && atomic_load_explicit(&ts->count_stop, memory_order_relaxed))
                break;
        ph_rank_close(r);
        if (rc != 0)
            return NULL;
    }
    atomic_store_explicit(&ts->total, n, memory_order_relaxed);
    return NULL;
}

static uint64_t trace_total(void *ctx)
{
    trace_src *ts = ctx;
    return atomic_load_explicit(&ts->total, memory_order_relaxed);
}

int simmpi_source_trace_count(simmpi_source *src)
{
    trace_src *ts = src->ctx;
    if (ts->counting || atomic_load_explicit(&ts->total, memory_order_relaxed))
        return 0;
    if (pthread_create(&ts->counter, NULL, counter, ts) != 0)
        return -1;
    ts->counting = 1;
    return 0;
}

/* ---- the source ---------------------------------------------------------------------------- */

int simmpi_source_trace(ph_trace *t, uint32_t threads, simmpi_source *src, ph_err *err)
{
    uint32_t n = ph_trace_nranks(t);
    trace_src *ts = calloc(1, sizeof *ts);
    if (ts) {
        ts->t = t;
        ts->n = n;
        ts->r = calloc(n ? n : 1, sizeof *ts->r);
        ts->ended = calloc(n ? n : 1, 1);
    }
    *src = (simmpi_source){.nranks = n, .nsites = ph_trace_nsites(t), .next = trace_next,
                           .comm = trace_comm, .group_sizes = trace_group_sizes, .ctx = ts,
                           .events_total = trace_total};
    if (!ts || !ts->r || !ts->ended) {
        simmpi_source_trace_close(src);
        ph_err_set(err, "%s: out of memory", ph_trace_dir(t));
        return -1;
    }
    /* Past a few hundred ranks the engine's data outgrows a core's L2, and
     * a rank's reader is a miss by the time the rank reads again: asked for
     * one event ahead, it is not (4,096-rank stencil, one thread: a quarter
     * of the time).  Below, the readers stay cached. */
    if (n >= HOT_FROM) {
        src->hot = (const void *const *)ts->r;
        src->hot_lines = ph_rank_hot_lines();
    }
    /* phantom finish and the writer count the events into meta.json: the
     * progress total is free then, with no counting pass */
    const char *events = ph_trace_meta(t, "events");
    atomic_store_explicit(&ts->total, events ? strtoull(events, NULL, 10) : 0, memory_order_relaxed);
    if (threads > 1 && n > 0) { /* the simulating thread is one of them */
        src->next = threaded_next;
        /* a rank's chunks are filled by one worker at a time: workers past
         * one a rank would only wait */
        if (start_workers(ts, threads - 1 < n ? threads - 1 : n, err) < 0) {
            simmpi_source_trace_close(src);
            return -1;
        }
        if (src->hot) { /* the rank's next decoded event, where it has one */
            src->hot = ts->next_ev;
            src->hot_lines = (uint32_t)((sizeof(ph_event) + 63) / 64 + 1); /* unaligned */
        }
    }
    return 0;
}

void simmpi_source_trace_close(simmpi_source *src)
{
    trace_src *ts = src->ctx;
    if (!ts)
        return;
    if (ts->counting) {
        atomic_store(&ts->count_stop, 1);
        pthread_join(ts->counter, NULL);
    }
    if (ts->th) {
        pthread_mutex_lock(&ts->mu);
        ts->stop = 1;
        pthread_cond_broadcast(&ts->work);
        pthread_mutex_unlock(&ts->mu);
        for (uint32_t i = 0; i < ts->nthreads; i++)
            pthread_join(ts->th[i], NULL);
    }
    for (uint32_t i = 0; ts->b && i < ts->n; i++)
        for (int k = 0; k < 2; k++) {
            free(ts->b[i].c[k].ev);
            free(ts->b[i].c[k].arena);
        }
    for (uint32_t i = 0; ts->r && i < ts->n; i++)
        if (ts->r[i]) {
            /* A rank's simulation stops at its last event (MPI_Finalize):
             * reading on to the stream's end, a few bytes of its last block
             * (counters, END), lets the trace keep them for phantom predict,
             * rather than read the whole stream again to get them. */
            ph_event ev;
            ph_err err;
            (void)ph_rank_next(ts->r[i], &ev, &err); /* an event or an error: not the end; nothing kept */
            ph_rank_close(ts->r[i]);
        }
    free(ts->b);
    free(ts->todo);
    free(ts->next_ev);
    free(ts->th);
    free(ts->r);
    free(ts->ended);
    simmpi_group_sizes_free(ts->gs);
    free(ts);
    src->ctx = NULL;
}
