/* evqueue.h - SIM-MPI's event queue: the events pending in the simulation,
 * taken out in one total order (time, then a key).  A 4-ary heap while the
 * queue is small, a radix heap once it is large (evqueue, below); both give
 * the same order, so which one runs never changes a prediction.  See
 * doc/simmpi.md, section 6. */
#ifndef SIMMPI_EVQUEUE_H
#define SIMMPI_EVQUEUE_H

#include <stdint.h>

#include "simmpi.h" /* simtime */

/* Heap events: 16 bytes, t and key = rank << 40 | type << 38 | peer << 14 |
 * seq: a total order on what the model says, not on how the simulation got
 * there.  rank is whose event it is; a message's peer is its other end (its
 * sender at the receiver, for a delivery or an RTS; its receiver for the CTS
 * at the sender) and seq the number of the sender's send, modulo 2^14.  So
 * two messages at one rank at one time go in the order of their peers, and
 * from one peer in the order it sent them, whatever order the simulation
 * created them in (a rank may run ahead of others' deliveries: engine.c,
 * may_run_ahead); only two events of one pair 16,384 sends apart, at one
 * rank and picosecond, would tie.  key comes first so that, read as one
 * little-endian 128-bit number, an event is t << 64 | key: the order is one
 * unsigned comparison, which the compiler turns into flags and conditional
 * moves, not a branch that the CPU mispredicts half the time.  The message's
 * index rides along in a parallel array (evheap.ref), which the comparisons
 * never read. */
enum ev_type { EV_RESUME, EV_DELIVER, EV_RTS, EV_CTS };

typedef struct hev {
    uint64_t key;
    simtime t;
} hev;

typedef unsigned __int128 hkey;
static inline hkey hev_key(const hev *e) { return (hkey)e->t << 64 | e->key; }
static inline uint32_t ev_rank(const hev *e) { return (uint32_t)(e->key >> 40); }
static inline uint8_t ev_type(const hev *e) { return (uint8_t)(e->key >> 38 & 3); }

/* What a heap keeps beside its events: nothing; each event's message index
 * (ref); or where each rank's event is (pos), for a heap that holds one
 * event a rank at most (the RESUMEs), so that one can be found and moved
 * (evheap_delay) without a scan.  A constant argument of the inline
 * functions below, so that each use compiles to the version it needs. */
enum heap_extra { HEAP_PLAIN, HEAP_REF, HEAP_POS };

/* A 4-ary min-heap of hevs: half the levels of a binary heap, and a node's
 * four children (64 bytes: 4i+1 .. 4i+4) share one cache line, the array
 * starting 48 bytes into a line; what a sift costs at a million ranks is its
 * cache misses.  Also the bare heap bench/simmpi-bench compares with. */
typedef struct evheap {
    hev *h, *mem;  /* h = mem + 3, mem 64-byte aligned */
    uint32_t *ref; /* ref[i]: h[i]'s message index (HEAP_REF, else NULL) */
    uint32_t *pos; /* pos[rank]: the slot of rank's event while it has one
                    * (HEAP_POS: the owner's array, of one entry a rank) */
    uint64_t n, cap;
} evheap;

int evheap_grow(evheap *hp, int has_ref); /* -1 when out of memory */

/* extra: enum heap_extra. */
static inline __attribute__((always_inline)) int evheap_push_(evheap *hp, simtime t, uint64_t key,
                                                              uint32_t ref, int extra)
{
    if (hp->n == hp->cap && evheap_grow(hp, extra == HEAP_REF) < 0)
        return -1;
    hev e = {.key = key, .t = t};
    hkey k = hev_key(&e);
    uint64_t i = hp->n++;
    while (i > 0) {
        uint64_t p = (i - 1) / 4;
        if (k >= hev_key(&hp->h[p]))
            break;
        hp->h[i] = hp->h[p];
        if (extra == HEAP_REF)
            hp->ref[i] = hp->ref[p];
        if (extra == HEAP_POS)
            hp->pos[ev_rank(&hp->h[i])] = (uint32_t)i;
        i = p;
    }
    hp->h[i] = e;
    if (extra == HEAP_REF)
        hp->ref[i] = ref;
    if (extra == HEAP_POS)
        hp->pos[ev_rank(&e)] = (uint32_t)i;
    return 0;
}

static inline int evheap_push(evheap *hp, simtime t, uint64_t key, uint32_t ref)
{
    return evheap_push_(hp, t, key, ref, HEAP_REF);
}

/* Removes and returns the minimum (n > 0).  Floyd's way: the hole left at
 * the root moves down along the least children to a leaf without comparing
 * with the last event (which, taken from the bottom, nearly always belongs
 * near there), which then sifts up from the hole: a quarter fewer
 * comparisons than sifting the last event down. */
static inline __attribute__((always_inline)) hev evheap_pop_(evheap *hp, uint32_t *ref, int extra)
{
    hev *h = hp->h, top = h[0], last = h[--hp->n];
    uint32_t *rf = hp->ref, *pos = hp->pos, lastref = extra == HEAP_REF ? rf[hp->n] : 0;
    uint64_t i = 0, n = hp->n;
    if (extra == HEAP_REF)
        *ref = rf[0];
    hev *x = h; /* the hole, h + i */
    while (4 * i + 4 < n) {
        /* Four children: the least without branches, as arithmetic on the
         * comparisons' 0 or 1 (gcc made a ?: selection a jump, taken half
         * the time) and on byte addresses (no index scaling). */
        hev *p = h + 4 * i + 1;
        hev *a = p + (hev_key(&p[1]) < hev_key(&p[0]));
        hev *b = p + 2 + (hev_key(&p[3]) < hev_key(&p[2]));
        uintptr_t ua = (uintptr_t)a, ub = (uintptr_t)b;
        hev *m = (hev *)(ua + ((ub - ua) & -(uintptr_t)(hev_key(b) < hev_key(a))));
        *x = *m;
        if (extra == HEAP_REF)
            rf[x - h] = rf[m - h];
        if (extra == HEAP_POS)
            pos[ev_rank(x)] = (uint32_t)(x - h);
        x = m;
        i = (uint64_t)(m - h);
    }
    if (4 * i + 1 < n) { /* the last family, fewer than four */
        uint64_t m = 4 * i + 1;
        for (uint64_t j = m + 1; j < n; j++)
            m = hev_key(&h[j]) < hev_key(&h[m]) ? j : m;
        *x = h[m];
        if (extra == HEAP_REF)
            rf[x - h] = rf[m];
        if (extra == HEAP_POS)
            pos[ev_rank(x)] = (uint32_t)(x - h);
        i = m;
    }
    if (!n)
        return top;
    hkey kl = hev_key(&last);
    while (i > 0) {
        uint64_t p = (i - 1) / 4;
        if (kl >= hev_key(&h[p]))
            break;
        h[i] = h[p];
        if (extra == HEAP_REF)
            rf[i] = rf[p];
        if (extra == HEAP_POS)
            pos[ev_rank(&h[i])] = (uint32_t)i;
        i = p;
    }
    h[i] = last;
    if (extra == HEAP_REF)
        rf[i] = lastref;
    if (extra == HEAP_POS)
        pos[ev_rank(&last)] = (uint32_t)i;
    return top;
}

static inline hev evheap_pop(evheap *hp, uint32_t *ref) { return evheap_pop_(hp, ref, HEAP_REF); }

/* Moves h[i] later by dt (a heap without refs): it sifts down, keeping
 * pos if the heap has it (HEAP_POS). */
static inline void evheap_delay(evheap *hp, uint64_t i, simtime dt)
{
    hev *h = hp->h, e = h[i];
    e.t += dt;
    hkey k = hev_key(&e);
    for (uint64_t n = hp->n;;) {
        uint64_t c = 4 * i + 1, m = c;
        if (c >= n)
            break;
        for (uint64_t j = c + 1; j < c + 4 && j < n; j++)
            m = hev_key(&h[j]) < hev_key(&h[m]) ? j : m;
        if (k <= hev_key(&h[m]))
            break;
        h[i] = h[m];
        if (hp->pos)
            hp->pos[ev_rank(&h[i])] = (uint32_t)i;
        i = m;
    }
    h[i] = e;
    if (hp->pos)
        hp->pos[ev_rank(&e)] = (uint32_t)i;
}

/* ---- the radix heap, and the queue that picks one ----------------------------
 *
 * A 4-ary heap's sift touches a line per level, and past some 30,000
 * pending events the levels are not in the caches: at a million ranks a
 * pop and push cost about 300 ns here (bench/simmpi-bench's bare heap).  A
 * radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) keeps events in
 * buckets by the highest bit in which they differ from the last event
 * taken out: an event is appended to its bucket, and only when a pop finds
 * the lowest bucket above 0 are that bucket's events spread, each into a
 * lower one (at most 128 times in all, two or three in practice), or,
 * when they are few (RX_TO_HEAP, evqueue.c), all moved into the heap at
 * once.  Every access is an append or a sequential read, so its speed
 * hardly depends on the queue's size: about 16-22 M events/s here from
 * 262,144 to a million ranks, where the heap does 10 M and 2.6 M, but
 * 0.7 times the heap's below 16,000 (doc/simmpi.md, sections 6 and 7).
 *
 * The earliest event is always in the heap (`small`): while the queue is
 * small, every event is; once it is a radix heap, the heap holds what was
 * last taken out of the buckets when it ran empty (the lowest bucket's
 * least, or that whole bucket), and any event pushed before `last`, the
 * greatest key taken out.  (A radix heap needs every event pushed to be
 * no earlier than the last taken out of it.  The engine's are, bar
 * degenerate costs: a platform or --what-if with o_r = 0 may queue an
 * event at the very time of the one being handled, for a lower rank.)  So
 * the earliest event is the heap's top, as it was before the radix heap:
 * finding it costs nothing more, and neither does a push or pop while the
 * queue is small.  The order taken out is the 4-ary heap's, event for
 * event: only events with equal keys (section 6: 16,384 sends of one pair
 * apart, at one rank and picosecond) may come out in another order. */

typedef struct rxent {
    hev e;
    uint32_t ref;
} rxent;

/* Buckets are lists of 4 KiB chunks from one free list: a bucket spilled
 * gives its chunks back, so the queue holds about what is pending, not
 * every bucket's largest size (arrays that kept their capacity took 25%
 * more memory a rank at 65,536 ranks). */
#define RX_CHUNK 170 /* entries: 16 + 170 * 24 = 4,096 bytes */
typedef struct rxchunk {
    struct rxchunk *next;
    uint32_t n;
    rxent a[RX_CHUNK];
} rxchunk;

typedef struct rxbucket {
    rxchunk *head;   /* the chunk being filled; NULL: empty */
    const rxent *min; /* the least (not kept for bucket 0, whose events are all equal) */
} rxbucket;

#define RX_BUCKETS 129 /* 0: equal to last; i: highest differing bit i - 1 */

/* The queue: `small` holds every event while the queue is a heap; once it
 * is a radix heap (from radix_from events on, never back), those taken
 * out of the buckets and those pushed before `last`: never empty while
 * the buckets are not, and none of its events after any bucket's. */
typedef struct evqueue {
    evheap small;
    rxbucket *b;      /* RX_BUCKETS, NULL while a heap */
    rxchunk *spare;   /* free chunks */
    uint64_t occ[3];  /* bit i: b[i] is not empty */
    hkey last;
    uint64_t nrx;     /* events in the buckets */
    uint64_t radix_from;
    int has_ref;
} evqueue;

/* The bare radix heap passes the 4-ary heap from about 8,192 pending
 * events on this machine, but a whole 8,192-rank simulation, its queues
 * still in the caches, took 6% more instructions with it and no fewer
 * misses; at 32,768 the bare heap has lost a third of its 4,096-event
 * rate (doc/simmpi.md, section 6). */
#define EVQ_RADIX_FROM 32768 /* the AUTO queue's radix_from */

/* kind: enum simmpi_queue (AUTO: a heap up to EVQ_RADIX_FROM events, then radix);
 * has_ref HEAP_PLAIN: the events need no index (no ref array), or HEAP_REF.
 * The radix heap's paths keep no positions (HEAP_POS): a queue whose heap
 * has them must never become one (engine.c, delay_resume). */
void evq_init(evqueue *q, int kind, int has_ref);
void evq_free(evqueue *q);

static inline uint64_t evq_n(const evqueue *q) { return q->small.n + q->nrx; }

/* The radix heap's side (evqueue.c), out of line: the inline paths below
 * are the heap's, which every queue is while small. */
int evq_push_radix(evqueue *q, simtime t, uint64_t key, uint32_t ref); /* or turning into one */
int evq_refill(evqueue *q); /* the buckets' least into the emptied heap */

/* The earliest event, or NULL. */
static inline const hev *evq_top(const evqueue *q) { return q->small.n ? q->small.h : NULL; }

/* The earliest event's index (evq_n > 0, has_ref). */
static inline uint32_t evq_top_ref(const evqueue *q) { return q->small.ref[0]; }

/* radix_from is 0 once the queue is a radix heap: one comparison keeps a
 * small queue on the heap's path. */
static inline __attribute__((always_inline)) int evq_push_(evqueue *q, simtime t, uint64_t key,
                                                           uint32_t ref, int extra)
{
    if (q->small.n < q->radix_from)
        return evheap_push_(&q->small, t, key, ref, extra);
    return evq_push_radix(q, t, key, ref);
}

/* Removes the earliest event (evq_n > 0) into *e and *ref; -1 when out
 * of memory (the queue has lost events: stop). */
static inline __attribute__((always_inline)) int evq_pop_(evqueue *q, hev *e, uint32_t *ref,
                                                          int extra)
{
    *e = evheap_pop_(&q->small, ref, extra);
    return q->nrx && !q->small.n ? evq_refill(q) : 0;
}

static inline int evq_push(evqueue *q, simtime t, uint64_t key, uint32_t ref)
{
    return evq_push_(q, t, key, ref, HEAP_REF);
}

static inline int evq_pop(evqueue *q, hev *e, uint32_t *ref) { return evq_pop_(q, e, ref, HEAP_REF); }

#endif
