/* distance.c - Equation 1, the distance matrix, and the thread helper.
 *
 * The Manhattan distance is the inner loop of everything here, so it is
 * written with GCC vector types (16 floats) and compiled for AVX-512, AVX2
 * and the baseline, chosen at load time (target_clones).  Partial sums stay
 * in float only for 1024 elements, then go to a double: a 1e6-unit vector
 * keeps about seven significant digits.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

typedef float v16f __attribute__((vector_size(64)));
typedef uint32_t v16u __attribute__((vector_size(64)));
#define LANES 16
#define CHUNK 1024 /* elements summed in float before going to double */

/* ThreadSanitizer's runtime is not up yet when the loader runs ifunc
 * resolvers, and the program dies there: one version under it. */
#if defined(__SANITIZE_THREAD__)
#define CL_VERSIONS
#else
#define CL_VERSIONS __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

CL_VERSIONS
double cl_l1(const float *a, const float *b, size_t d)
{
    const v16u mask = (v16u){0} + 0x7fffffffu; /* clears the sign: |x| */
    double total = 0;
    size_t i = 0;
    while (d - i >= LANES) {
        size_t end = i + (d - i < CHUNK ? (d - i) / LANES * LANES : CHUNK);
        v16f acc = {0};
        for (; i < end; i += LANES) {
            v16f x, y;
            memcpy(&x, a + i, sizeof x);
            memcpy(&y, b + i, sizeof y);
            acc += (v16f)((v16u)(x - y) & mask);
        }
        float s = 0;
        for (int l = 0; l < LANES; l++)
            s += acc[l];
        total += s;
    }
    for (; i < d; i++)
        total += fabsf(a[i] - b[i]);
    return total;
}

double cl_distance(const float *a, uint32_t da, const float *b, uint32_t db)
{
    return da == db ? cl_l1(a, b, da) : INFINITY;
}

int cl_threads(int requested)
{
    if (requested > 0)
        return requested;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)(n < 64 ? n : 64) : 1;
}

/* ---- a tiny dynamic parallel-for ------------------------------------------------ */

typedef struct par {
    cl_task fn;
    void *ctx;
    uint64_t n, chunk;
    atomic_uint_fast64_t next;
} par;

static void *par_worker(void *arg)
{
    par *p = arg;
    for (;;) {
        uint64_t b = atomic_fetch_add(&p->next, p->chunk);
        if (b >= p->n)
            return NULL;
        p->fn(p->ctx, b, b + p->chunk < p->n ? b + p->chunk : p->n);
    }
}

void cl_parallel(int nthreads, uint64_t n, uint64_t chunk, cl_task fn, void *ctx)
{
    par p = {fn, ctx, n, chunk ? chunk : 1, 0};
    if (nthreads > 64)
        nthreads = 64;
    if ((uint64_t)nthreads > (n + p.chunk - 1) / p.chunk)
        nthreads = (int)((n + p.chunk - 1) / p.chunk);
    pthread_t tid[64];
    int started = 0;
    for (int t = 1; t < nthreads; t++)
        if (pthread_create(&tid[started], NULL, par_worker, &p) == 0)
            started++; /* fewer threads is slower, not wrong */
    par_worker(&p);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
}

/* ---- distance matrix ------------------------------------------------------------------ */

typedef struct mat_job {
    const cl_points *p;
    const uint32_t *idx;
    uint32_t m;
    float *dist;
    cl_prune_fn prune;
    void *pctx;
    atomic_uint_fast64_t computed;
} mat_job;

static void mat_rows(void *ctx, uint64_t begin, uint64_t end)
{
    mat_job *j = ctx;
    uint64_t computed = 0;
    for (uint64_t i = begin; i < end; i++) {
        const float *a = j->p->vec[j->idx[i]];
        uint32_t da = j->p->dim[j->idx[i]];
        float *row = j->dist + cl_tri(j->m, i, i + 1);
        for (uint32_t k = (uint32_t)i + 1; k < j->m; k++) {
            uint32_t pk = j->idx[k];
            if (j->prune && j->prune(j->pctx, (uint32_t)i, k)) {
                row[k - i - 1] = INFINITY;
                continue;
            }
            row[k - i - 1] = (float)cl_distance(a, da, j->p->vec[pk], j->p->dim[pk]);
            computed++;
        }
    }
    atomic_fetch_add(&j->computed, computed);
}

float *cl_distance_matrix(const cl_points *p, const uint32_t *idx, uint32_t m, int nthreads,
                          cl_prune_fn prune, void *pctx, uint64_t *computed)
{
    size_t cells = (size_t)m * (m - (m > 0)) / 2;
    float *dist = malloc((cells ? cells : 1) * sizeof *dist);
    if (!dist)
        return NULL;
    mat_job j = {p, idx, m, dist, prune, pctx, 0};
    cl_parallel(cl_threads(nthreads), m, 8, mat_rows, &j);
    if (computed)
        *computed += atomic_load(&j.computed);
    return dist;
}

/* ---- small shared helpers --------------------------------------------------------------- */

uint32_t cl_find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]]; /* path halving */
        x = parent[x];
    }
    return x;
}

void cl_union(uint32_t *parent, uint32_t a, uint32_t b)
{
    a = cl_find(parent, a);
    b = cl_find(parent, b);
    if (a != b)
        parent[a > b ? a : b] = a < b ? a : b; /* the lower index is the root */
}

void cl_mean(const cl_points *p, const uint32_t *idx, uint32_t m, uint32_t d, float *out)
{
    double *acc = calloc(d ? d : 1, sizeof *acc);
    if (!acc) { /* fall back to a float sum: slightly less precise, still a mean */
        memset(out, 0, d * sizeof *out);
        for (uint32_t k = 0; k < m; k++)
            for (uint32_t i = 0; i < d; i++)
                out[i] += p->vec[idx[k]][i] / (float)m;
        return;
    }
    for (uint32_t k = 0; k < m; k++) {
        const float *v = p->vec[idx[k]];
        for (uint32_t i = 0; i < d; i++)
            acc[i] += v[i];
    }
    for (uint32_t i = 0; i < d; i++)
        out[i] = (float)(acc[i] / m);
    free(acc);
}

/* qsort_r comparators: the context keeps the library reentrant. */
static int by_part(const void *x, const void *y, void *ctx)
{
    const uint64_t *part = ctx;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    if (part[a] != part[b])
        return part[a] < part[b] ? -1 : 1;
    return a < b ? -1 : a > b;
}

uint32_t *cl_sort_by_part(uint32_t n, const uint64_t *part)
{
    uint32_t *idx = malloc((n ? n : 1) * sizeof *idx);
    if (!idx)
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, n, sizeof *idx, by_part, (void *)part);
    return idx;
}

static int by_part_dim(const void *x, const void *y, void *ctx)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    const cl_points *p = ctx;
    if (p->part[a] != p->part[b])
        return p->part[a] < p->part[b] ? -1 : 1;
    if (p->dim[a] != p->dim[b])
        return p->dim[a] < p->dim[b] ? -1 : 1;
    return a < b ? -1 : a > b;
}

uint32_t *cl_sort_by_part_dim(const cl_points *p)
{
    uint32_t *idx = malloc((p->n ? p->n : 1) * sizeof *idx);
    if (!idx)
        return NULL;
    for (uint32_t i = 0; i < p->n; i++)
        idx[i] = i;
    qsort_r(idx, p->n, sizeof *idx, by_part_dim, (void *)p);
    return idx;
}

uint32_t cl_count_parts(const cl_points *p)
{
    uint32_t *idx = cl_sort_by_part(p->n, p->part);
    uint32_t n = 0;
    for (uint32_t i = 0; idx && i < p->n; i++)
        n += i == 0 || p->part[idx[i]] != p->part[idx[i - 1]];
    free(idx);
    return n;
}

uint32_t cl_normalize_labels(uint32_t n, uint32_t *label)
{
    uint32_t *map = malloc((n ? n : 1) * sizeof *map), next = 0;
    if (!map)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        map[i] = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++) {
        if (map[label[i]] == UINT32_MAX)
            map[label[i]] = next++;
        label[i] = map[label[i]];
    }
    free(map);
    return next;
}

uint32_t cl_group_by_part(uint32_t n, const uint64_t *part, uint32_t *label)
{
    uint32_t *idx = cl_sort_by_part(n, part);
    if (!idx)
        return 0;
    uint32_t g = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i > 0 && part[idx[i]] != part[idx[i - 1]])
            g++;
        label[idx[i]] = g;
    }
    free(idx);
    return cl_normalize_labels(n, label);
}
