/* evqueue-test.c - the event queue (evqueue.h) against a plain reference.
 *
 * Three queues (a heap throughout, a radix heap throughout, and a heap that
 * becomes a radix heap at 64 events, with events in it) take the same
 * pushes and pops as a reference that finds the least event by scanning an
 * array.  Every pop of every queue must give the reference's event and
 * index, and evq_top must show it first.  The workloads: a simulation's
 * pattern (pop, push up to two events a little later), a lockstep one
 * (many ranks at one time), and arbitrary keys, some before the last event
 * taken out, which a radix heap keeps in its heap, not in a bucket
 * (evqueue.h); and keys that repeat, which may leave in any order among
 * themselves, but in the order evq_top shows.  Between them they spread
 * big buckets and move small ones into the heap whole (evqueue.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "evqueue.h"

typedef struct refq {
    hev *e;
    uint32_t *ref;
    uint64_t n, cap;
} refq;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void ref_push(refq *r, hev e, uint32_t ref)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 1024;
        r->e = realloc(r->e, r->cap * sizeof *r->e);
        r->ref = realloc(r->ref, r->cap * sizeof *r->ref);
        if (!r->e || !r->ref)
            exit(2);
    }
    r->e[r->n] = e;
    r->ref[r->n++] = ref;
}

static hev ref_pop(refq *r, uint32_t *ref)
{
    uint64_t m = 0;
    for (uint64_t i = 1; i < r->n; i++)
        if (hev_key(&r->e[i]) < hev_key(&r->e[m]))
            m = i;
    hev e = r->e[m];
    *ref = r->ref[m];
    r->e[m] = r->e[--r->n];
    r->ref[m] = r->ref[r->n];
    return e;
}

enum { NQ = 3 };
static evqueue q[NQ];
static refq rq;
static uint32_t serial;
static uint64_t checked;

/* Keys are unique (a serial number in the low bits), so the order is
 * total; but with `ties` set, the low bits are 0 and keys repeat. */
static int ties;
static void push(simtime t, uint32_t rank)
{
    hev e = {.key = (uint64_t)rank << 40 | (ties ? 0 : serial), .t = t};
    for (int i = 0; i < NQ; i++)
        if (evq_push(&q[i], e.t, e.key, serial) < 0)
            exit(2);
    ref_push(&rq, e, serial++);
}

static int pop(const char *what, hev *out)
{
    uint32_t want_ref, ref;
    hev want = ref_pop(&rq, &want_ref), e;
    for (int i = 0; i < NQ; i++) {
        const hev *top = evq_top(&q[i]);
        uint32_t top_ref = top ? evq_top_ref(&q[i]) : ~0u;
        /* Equal keys may leave in any order: then only the key is the
         * reference's, and the index the one evq_top showed. */
        if (!top || top->t != want.t || top->key != want.key || (!ties && top_ref != want_ref) ||
            evq_pop(&q[i], &e, &ref) < 0 || e.t != want.t || e.key != want.key || ref != top_ref ||
            evq_n(&q[i]) != rq.n) {
            fprintf(stderr, "evqueue-test: %s, queue %d, pop %" PRIu64 ": not the reference's (t %" PRIu64 ", key %#" PRIx64 ", ref %u)\n",
                    what, i, checked, want.t, want.key, want_ref);
            return -1;
        }
    }
    checked++;
    *out = want;
    return 0;
}

/* Every workload starts from empty queues: a radix heap keeps the last
 * key taken out, and one workload's keys would all be early for the next. */
static void fresh(void)
{
    for (int i = 0; i < NQ; i++)
        evq_free(&q[i]);
    evq_init(&q[0], SIMMPI_QUEUE_HEAP, 1);
    evq_init(&q[1], SIMMPI_QUEUE_RADIX, 1);
    evq_init(&q[2], SIMMPI_QUEUE_AUTO, 1);
    q[2].radix_from = 64; /* so that it turns while holding events */
}

static int drain(const char *what)
{
    hev e;
    while (rq.n)
        if (pop(what, &e) < 0)
            return -1;
    for (int i = 0; i < NQ; i++)
        if (evq_n(&q[i]) || evq_top(&q[i])) {
            fprintf(stderr, "evqueue-test: %s, queue %d: not empty at the end\n", what, i);
            return -1;
        }
    if (!q[2].b) {
        fprintf(stderr, "evqueue-test: %s: the auto queue never became a radix heap\n", what);
        return -1;
    }
    return 0;
}

/* Each rank's event is popped and replaced by up to two a little later. */
static int simulation(uint32_t ranks, uint64_t pops)
{
    fresh();
    for (uint32_t r = 0; r < ranks; r++)
        push(next_rand() % 1000000, r);
    for (uint64_t i = 0; i < pops; i++) {
        hev e;
        if (pop("simulation", &e) < 0)
            return -1;
        for (uint64_t k = next_rand() % 3; k > 0; k--) /* one a pop, on average */
            push(e.t + next_rand() % 2000000, (uint32_t)(e.key >> 40));
    }
    return drain("simulation");
}

/* Ranks in lockstep: every rank at one time, then all at the next. */
static int lockstep(uint32_t ranks, uint32_t steps)
{
    fresh();
    for (uint32_t s = 0; s < steps; s++) {
        for (uint32_t r = 0; r < ranks; r++)
            push((simtime)s * 400000 + (r % 3 ? 0 : 60000), ranks - 1 - r);
        for (uint32_t r = 0; r < ranks / 2; r++) {
            hev e;
            if (pop("lockstep", &e) < 0)
                return -1;
        }
    }
    return drain("lockstep");
}

/* Arbitrary keys, after and before what was taken out: any order is a
 * priority queue's to keep. */
static int arbitrary(uint64_t ops)
{
    fresh();
    for (uint64_t i = 0; i < ops; i++) {
        if (rq.n && next_rand() % 20 < 9) {
            hev e;
            if (pop("arbitrary", &e) < 0)
                return -1;
        } else {
            uint64_t x = next_rand();
            push(x % 8 == 0 ? x >> 1 : x % 50000000, (uint32_t)(next_rand() % 100000));
        }
    }
    return drain("arbitrary");
}

/* Events of few ranks at few times: keys repeat. */
static int repeated(uint64_t ops)
{
    fresh();
    ties = 1;
    for (uint64_t i = 0; i < ops; i++) {
        hev e;
        if (rq.n && next_rand() % 20 < 9) {
            if (pop("repeated keys", &e) < 0)
                return -1;
        } else {
            push(1000 + next_rand() % 8 * 100, (uint32_t)(next_rand() % 4));
        }
    }
    return drain("repeated keys");
}

/* Does pos say where every event of h is? */
static int positions_hold(const evheap *h, uint64_t op)
{
    for (uint64_t i = 0; i < h->n; i++)
        if (h->pos[ev_rank(&h->h[i])] != i) {
            fprintf(stderr, "evqueue-test: delays, op %" PRIu64 ": rank %u's event is at %" PRIu64 ", pos says %u\n",
                    op, ev_rank(&h->h[i]), i, h->pos[ev_rank(&h->h[i])]);
            return -1;
        }
    return 0;
}

/* evheap_delay, as the engine uses it on its RESUMEs (one event a rank, in
 * a HEAP_POS heap or, with_pos 0, a plain one): an event anywhere in the
 * heap, found through pos or by a scan, moves later, and the pops go on
 * in the reference's order. */
#define DELAY_RANKS 100
static int delays(uint64_t ops, int with_pos)
{
    uint32_t pos[DELAY_RANKS];
    uint8_t queued[DELAY_RANKS] = {0};
    evheap h = {.pos = with_pos ? pos : NULL};
    int extra = with_pos ? HEAP_POS : HEAP_PLAIN;
    refq r = {0};
    int rc = 0;
    for (uint64_t i = 0; i < ops && !rc; i++) {
        uint64_t what = next_rand() % 3;
        uint32_t rank = (uint32_t)(next_rand() % DELAY_RANKS);
        if (h.n < 64 && (what == 0 || !h.n)) {
            if (queued[rank])
                continue;
            queued[rank] = 1;
            hev e = {.key = (uint64_t)rank << 40 | serial++, .t = next_rand() % 1000};
            if (evheap_push_(&h, e.t, e.key, 0, extra) < 0)
                exit(2);
            ref_push(&r, e, 0);
        } else if (what == 1) {
            uint32_t ref;
            hev want = ref_pop(&r, &ref), e = evheap_pop_(&h, &ref, extra);
            if (e.t != want.t || e.key != want.key) {
                fprintf(stderr, "evqueue-test: delays, op %" PRIu64 ": pop not the reference's (t %" PRIu64 ", key %#" PRIx64 ")\n",
                        i, want.t, want.key);
                rc = -1;
            }
            queued[ev_rank(&e)] = 0;
            checked++;
        } else {
            if (!queued[rank])
                continue;
            uint64_t at = 0, j = 0;
            if (with_pos)
                at = pos[rank];
            else
                while (ev_rank(&h.h[at]) != rank)
                    at++;
            simtime dt = next_rand() % 500;
            while (ev_rank(&r.e[j]) != rank)
                j++;
            r.e[j].t += dt;
            evheap_delay(&h, at, dt);
        }
        if (!rc && with_pos)
            rc = positions_hold(&h, i);
    }
    free(h.mem);
    free(h.ref);
    free(r.e);
    free(r.ref);
    return rc;
}

int main(void)
{
    if (simulation(2000, 100000) < 0 || lockstep(1000, 20) < 0 || arbitrary(100000) < 0 ||
        repeated(100000) < 0 || delays(200000, 1) < 0 || delays(200000, 0) < 0)
        return 1;
    for (int i = 0; i < NQ; i++)
        evq_free(&q[i]);
    free(rq.e);
    free(rq.ref);
    printf("evqueue-test: %" PRIu64 " pops, heap, radix and heap-then-radix (and a heap whose events move later) all in the reference's order\n", checked);
    return 0;
}
