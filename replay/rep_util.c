/* rep_util.c - a hash map on 64-bit keys, and scratch buffers. */
#include <stdlib.h>
#include <string.h>

#include "rep.h"
#include "rep_util.h"

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static void grow(rep_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    rep_map_slot *s = calloc(cap, sizeof *s);
    if (!s)
        rep_die("out of memory");
    for (size_t i = 0; i < m->cap; i++)
        if (m->s[i].val) {
            size_t j = mix(m->s[i].key) & (cap - 1);
            while (s[j].val)
                j = (j + 1) & (cap - 1);
            s[j] = m->s[i];
        }
    free(m->s);
    m->s = s;
    m->cap = cap;
}

void *rep_map_get(const rep_map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    for (size_t j = mix(key) & (m->cap - 1); m->s[j].val; j = (j + 1) & (m->cap - 1))
        if (m->s[j].key == key)
            return m->s[j].val;
    return NULL;
}

void rep_map_put(rep_map *m, uint64_t key, void *val)
{
    if ((m->n + 1) * 2 > m->cap)
        grow(m);
    size_t j = mix(key) & (m->cap - 1);
    while (m->s[j].val && m->s[j].key != key)
        j = (j + 1) & (m->cap - 1);
    if (!m->s[j].val)
        m->n++;
    m->s[j].key = key;
    m->s[j].val = val;
}

/* Backward-shift deletion: no tombstones, lookups stay short. */
void *rep_map_del(rep_map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    size_t j = mix(key) & (m->cap - 1);
    while (m->s[j].val && m->s[j].key != key)
        j = (j + 1) & (m->cap - 1);
    void *val = m->s[j].val;
    if (!val)
        return NULL;
    m->n--;
    for (size_t i = j;;) {
        m->s[i].val = NULL;
        size_t k = i;
        for (;;) {
            k = (k + 1) & (m->cap - 1);
            if (!m->s[k].val)
                return val;
            size_t home = mix(m->s[k].key) & (m->cap - 1);
            /* can entry k move to the hole at i? only if its home is not in (i, k] */
            if ((k > i && (home <= i || home > k)) || (k < i && home <= i && home > k))
                break;
        }
        m->s[i] = m->s[k];
        i = k;
    }
}

/* ---- scratch ------------------------------------------------------------------------ */

typedef struct buf {
    void *p;
    size_t cap;
} buf;

static void *room(buf *b, size_t n)
{
    if (n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < n)
            cap *= 2;
        void *p = realloc(b->p, cap);
        if (!p)
            rep_die("out of memory (%zu bytes of scratch)", n);
        b->p = p;
        b->cap = cap;
    }
    return b->p;
}

static buf scratch, fortran_reqs, fortran_ints;

void *rep_scratch(size_t n) { return room(&scratch, n); }

MPI_Request *ph_rep_fortran_requests(ph_call *c)
{
    MPI_Request *v = room(&fortran_reqs, (size_t)(c->nreqs > 0 ? c->nreqs : 1) * sizeof *v);
    if (c->nreqs > 0)
        memcpy(v, c->reqs, (size_t)c->nreqs * sizeof *v);
    return v;
}

int *ph_rep_scratch_ints(ph_call *c, int n)
{
    (void)c;
    return room(&fortran_ints, (size_t)(n > 0 ? n : 1) * sizeof(int));
}
