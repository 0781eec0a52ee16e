/* evqueue.c - the event queue's out-of-line parts: growing the heap, and
 * the whole radix heap (evqueue.h): turning the heap into one, its buckets
 * of chunks, spreading a bucket. */
#include <stdlib.h>
#include <string.h>

#include "evqueue.h"

int evheap_grow(evheap *hp, int has_ref)
{
    uint64_t nc = hp->cap ? hp->cap * 2 : 4096;
    hev *mem = aligned_alloc(64, (nc + 4) * sizeof *mem);
    uint32_t *ref = has_ref ? realloc(hp->ref, nc * sizeof *ref) : NULL;
    if (ref)
        hp->ref = ref;
    if (!mem || (has_ref && !ref)) {
        free(mem);
        return -1;
    }
    if (hp->n)
        memcpy(mem + 3, hp->h, hp->n * sizeof *mem);
    free(hp->mem);
    hp->mem = mem;
    hp->h = mem + 3;
    hp->cap = nc;
    return 0;
}

void evq_init(evqueue *q, int kind, int has_ref)
{
    *q = (evqueue){.has_ref = has_ref};
    q->radix_from = kind == SIMMPI_QUEUE_HEAP    ? UINT64_MAX
                   : kind == SIMMPI_QUEUE_RADIX ? 0
                                                : EVQ_RADIX_FROM;
}

static void chunks_free(rxchunk *c)
{
    while (c) {
        rxchunk *next = c->next;
        free(c);
        c = next;
    }
}

void evq_free(evqueue *q)
{
    free(q->small.mem);
    free(q->small.ref);
    if (q->b)
        for (unsigned i = 0; i < RX_BUCKETS; i++)
            chunks_free(q->b[i].head);
    free(q->b);
    chunks_free(q->spare);
    *q = (evqueue){0};
}

static int rx_chunk_new(evqueue *q, rxbucket *b)
{
    rxchunk *c = q->spare;
    if (c)
        q->spare = c->next;
    else if (!(c = malloc(sizeof *c)))
        return -1;
    c->n = 0;
    c->next = b->head;
    b->head = c;
    return 0;
}

/* A chunk read to its end goes back to the free list. */
static void rx_chunk_give(evqueue *q, rxchunk *c)
{
    c->next = q->spare;
    q->spare = c;
}

/* Bucket i's chunks, the bucket left empty. */
static rxchunk *rx_take(evqueue *q, unsigned i)
{
    rxchunk *c = q->b[i].head;
    q->b[i].head = NULL;
    q->occ[i >> 6] &= ~(1ull << (i & 63));
    return c;
}

static inline unsigned rx_bucket_of(hkey x)
{
    uint64_t hi = (uint64_t)(x >> 64), lo = (uint64_t)x;
    return hi ? 128 - (unsigned)__builtin_clzll(hi) : lo ? 64 - (unsigned)__builtin_clzll(lo) : 0;
}

static inline unsigned rx_lowest(const evqueue *q) /* nrx > 0 */
{
    if (q->occ[0])
        return (unsigned)__builtin_ctzll(q->occ[0]);
    if (q->occ[1])
        return 64 + (unsigned)__builtin_ctzll(q->occ[1]);
    return 128 + (unsigned)__builtin_ctzll(q->occ[2]);
}

static inline int rx_add(evqueue *q, unsigned i, rxent x)
{
    rxbucket *b = &q->b[i];
    rxchunk *c = b->head;
    if (!c) {
        q->occ[i >> 6] |= 1ull << (i & 63);
        b->min = NULL;
    }
    if ((!c || c->n == RX_CHUNK) && rx_chunk_new(q, b) < 0)
        return -1;
    c = b->head;
    rxent *at = &c->a[c->n++];
    *at = x;
    if (!b->min || hev_key(&x.e) < hev_key(&b->min->e))
        b->min = at;
    q->nrx++;
    return 0;
}

/* The heap's events into buckets, relative to the least of them, which
 * stays in the heap alone. */
static int evq_to_radix(evqueue *q)
{
    if (!(q->b = calloc(RX_BUCKETS, sizeof *q->b)))
        return -1;
    q->radix_from = 0; /* evq_push_ comes here from now on */
    evheap *h = &q->small;
    if (!h->n)
        return 0;
    uint32_t ref = 0;
    hev least = evheap_pop_(h, &ref, q->has_ref);
    q->last = hev_key(&least);
    for (uint64_t i = 0; i < h->n; i++) {
        rxent x = {.e = h->h[i], .ref = q->has_ref ? h->ref[i] : 0};
        if (rx_add(q, rx_bucket_of(hev_key(&x.e) ^ q->last), x) < 0)
            return -1;
    }
    h->n = 0;
    return evheap_push_(h, least.t, least.key, ref, q->has_ref);
}

/* Bucket i (> 0, the lowest not empty) into the lower ones: its least
 * event becomes last, and every event of it differs from that in a lower
 * bit than i - 1 (they all agreed with the old last above it, and with
 * each other there), so appending never touches b[i] itself.  Each chunk
 * read goes back to the free list, where the next append may take it.
 * -1 when a chunk cannot be had: the events not yet moved are lost, and
 * the caller must stop. */
static int rx_spill(evqueue *q, unsigned i)
{
    q->last = hev_key(&q->b[i].min->e);
    rxchunk *c = rx_take(q, i);
    while (c) {
        rxchunk *next = c->next;
        q->nrx -= c->n;
        for (uint32_t j = 0; j < c->n; j++)
            if (rx_add(q, rx_bucket_of(hev_key(&c->a[j].e) ^ q->last), c->a[j]) < 0) {
                chunks_free(c);
                return -1;
            }
        rx_chunk_give(q, c);
        c = next;
    }
    return 0;
}

/* Into an empty queue, an event is the heap's and sets last (no bucket
 * holds an event to be after it); before last, the heap's too. */
int evq_push_radix(evqueue *q, simtime t, uint64_t key, uint32_t ref)
{
    if (!q->b && evq_to_radix(q) < 0)
        return -1;
    rxent x = {.e = {.key = key, .t = t}, .ref = ref};
    hkey k = hev_key(&x.e);
    if (!q->small.n) /* the queue is empty */
        q->last = k;
    else if (k >= q->last)
        return rx_add(q, rx_bucket_of(k ^ q->last), x);
    return evheap_push_(&q->small, t, key, ref, q->has_ref);
}

/* Against 0 (always spread), 64 and 170 (a whole chunk): 16 gave the
 * simulation 10-22% more events/s from 65,536 to 1,048,576 ranks, and
 * the bare queue 8-25% (doc/simmpi-speed-log.md, part 1, sixth round). */
#define RX_TO_HEAP 16

/* Bucket i (> 0, the lowest) whole into the emptied heap, when it is one
 * chunk of at most RX_TO_HEAP events: spreading it would move them again
 * and again, one pop at a time, where the heap sorts so few in L1.  They
 * are all before every other bucket's events, and last becomes the
 * greatest of them: the other buckets' events differ from it in the bit
 * they differed from the old last in (above i - 1, where these agree with
 * the old last), so they stay where they are. */
static int rx_to_heap(evqueue *q, unsigned i)
{
    rxchunk *c = q->b[i].head;
    hkey most = 0;
    for (uint32_t j = 0; j < c->n; j++) {
        const rxent *x = &c->a[j];
        hkey k = hev_key(&x->e);
        most = k > most ? k : most;
        if (evheap_push_(&q->small, x->e.t, x->e.key, x->ref, q->has_ref) < 0)
            return -1;
    }
    q->last = most;
    q->nrx -= c->n;
    rx_chunk_give(q, rx_take(q, i));
    return 0;
}

/* The heap ran empty: the lowest bucket whole when it is small, else its
 * least, which becomes last (spreading the bucket when it is not bucket
 * 0), into the heap. */
int evq_refill(evqueue *q)
{
    unsigned i = rx_lowest(q);
    if (i && !q->b[i].head->next && q->b[i].head->n <= RX_TO_HEAP)
        return rx_to_heap(q, i);
    if (i && rx_spill(q, i) < 0)
        return -1;
    rxbucket *z = &q->b[0];
    rxchunk *c = z->head;
    rxent x = c->a[--c->n];
    if (!c->n) { /* back to the free list */
        z->head = c->next;
        rx_chunk_give(q, c);
        if (!z->head)
            q->occ[0] &= ~1ull;
    }
    q->nrx--;
    return evheap_push_(&q->small, x.e.t, x.e.key, x.ref, q->has_ref);
}
