/* linkage.c - complete-linkage hierarchical clustering (Algorithm 1).
 *
 * Algorithm 1 as written (find the closest pair, merge, update, repeat) is
 * O(m^3).  Complete linkage is reducible (merging two clusters never brings
 * the result closer to a third than either was), so the nearest-neighbour
 * chain finds the same merges in O(m^2): follow nearest neighbours until two
 * clusters are each other's nearest, merge them, and continue from the rest
 * of the chain, which stays valid.  Distances are updated in place with the
 * Lance-Williams rule for complete linkage, d(k, a+b) = max(d(k,a), d(k,b)).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define NONE UINT32_MAX

static inline float dget(const float *d, uint32_t m, uint32_t i, uint32_t j)
{
    return i < j ? d[cl_tri(m, i, j)] : d[cl_tri(m, j, i)];
}

static inline void dset(float *d, uint32_t m, uint32_t i, uint32_t j, float v)
{
    d[i < j ? cl_tri(m, i, j) : cl_tri(m, j, i)] = v;
}

/* Active clusters as a doubly linked list in index order, so that the scan
 * skips merged slots and ties resolve the same way on every run. */
typedef struct alist {
    uint32_t *next, *prev, head;
} alist;

static void alist_remove(alist *l, uint32_t x)
{
    if (l->prev[x] != NONE)
        l->next[l->prev[x]] = l->next[x];
    else
        l->head = l->next[x];
    if (l->next[x] != NONE)
        l->prev[l->next[x]] = l->prev[x];
}

/* Nearest active cluster to a; on a tie the previous chain element wins,
 * which is what keeps the chain from cycling. */
static uint32_t nearest(const float *d, uint32_t m, const alist *l, uint32_t a, uint32_t prev)
{
    uint32_t best = prev;
    float bd = prev != NONE ? dget(d, m, a, prev) : INFINITY;
    for (uint32_t k = l->head; k != NONE; k = l->next[k]) {
        if (k == a)
            continue;
        float v = dget(d, m, a, k);
        if (v < bd || best == NONE) {
            bd = v;
            best = k;
        }
    }
    return best;
}

void cl_nnchain(float *d, uint32_t m, cl_raw_merge *out)
{
    if (m < 2)
        return;
    alist l = {malloc(m * sizeof(uint32_t)), malloc(m * sizeof(uint32_t)), 0};
    uint32_t *chain = malloc(m * sizeof *chain), len = 0;
    for (uint32_t i = 0; i < m; i++) {
        l.next[i] = i + 1 < m ? i + 1 : NONE;
        l.prev[i] = i ? i - 1 : NONE;
    }
    for (uint32_t s = 0; s + 1 < m; s++) {
        if (len == 0)
            chain[len++] = l.head;
        for (;;) {
            uint32_t a = chain[len - 1], prev = len >= 2 ? chain[len - 2] : NONE;
            uint32_t b = nearest(d, m, &l, a, prev);
            if (b == prev)
                break;
            chain[len++] = b;
        }
        uint32_t a = chain[--len], b = chain[--len];
        uint32_t keep = a < b ? a : b, drop = a < b ? b : a;
        out[s] = (cl_raw_merge){keep, drop, dget(d, m, a, b)};
        alist_remove(&l, drop);
        for (uint32_t k = l.head; k != NONE; k = l.next[k])
            if (k != keep)
                dset(d, m, keep, k, fmaxf(dget(d, m, keep, k), dget(d, m, drop, k)));
    }
    free(l.next);
    free(l.prev);
    free(chain);
}

/* ---- one dendrogram over all parts ------------------------------------------------ */

typedef struct gmerge {
    uint32_t a, b; /* points (global) of the two clusters */
    double height;
    uint64_t seq;  /* order found: breaks height ties deterministically */
} gmerge;

static int by_height(const void *x, const void *y)
{
    const gmerge *a = x, *b = y;
    if (a->height != b->height)
        return a->height < b->height ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Sorted merges of points -> SciPy-style merges of cluster ids. */
static cl_dendrogram *relabel(uint32_t n, gmerge *gm, uint32_t nm)
{
    cl_dendrogram *dg = calloc(1, sizeof *dg);
    uint32_t *parent = malloc((n ? n : 1) * sizeof *parent);
    uint32_t *id = malloc((n ? n : 1) * sizeof *id), *size = malloc((n ? n : 1) * sizeof *size);
    if (dg)
        dg->merges = malloc((nm ? nm : 1) * sizeof *dg->merges);
    if (!dg || !dg->merges || !parent || !id || !size) {
        cl_dendrogram_free(dg);
        dg = NULL;
        goto out;
    }
    dg->n = n;
    qsort(gm, nm, sizeof *gm, by_height);
    for (uint32_t i = 0; i < n; i++)
        parent[i] = id[i] = i, size[i] = 1;
    for (uint32_t s = 0; s < nm; s++) {
        uint32_t ra = cl_find(parent, gm[s].a), rb = cl_find(parent, gm[s].b);
        uint32_t l = id[ra] < id[rb] ? id[ra] : id[rb], r = id[ra] < id[rb] ? id[rb] : id[ra];
        uint32_t sz = size[ra] + size[rb];
        cl_union(parent, ra, rb);
        uint32_t root = cl_find(parent, ra);
        id[root] = n + s;
        size[root] = sz;
        dg->merges[s] = (cl_merge){l, r, sz, gm[s].height};
    }
out:
    free(parent);
    free(id);
    free(size);
    return dg;
}

/* Complete linkage of one part's points idx[0..m), appended to gm. */
static int link_part(const cl_points *p, const uint32_t *idx, uint32_t m, int nthreads, gmerge *gm,
                     uint32_t *nm)
{
    if (m < 2)
        return 0;
    float *d = cl_distance_matrix(p, idx, m, nthreads, NULL, NULL, NULL);
    cl_raw_merge *raw = malloc((m - 1) * sizeof *raw);
    if (!d || !raw) {
        free(d);
        free(raw);
        return -1;
    }
    cl_nnchain(d, m, raw);
    for (uint32_t s = 0; s + 1 < m; s++, (*nm)++)
        gm[*nm] = (gmerge){idx[raw[s].a], idx[raw[s].b], raw[s].height, *nm};
    free(d);
    free(raw);
    return 0;
}

static int by_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

cl_dendrogram *cl_hierarchical(const cl_points *p, int nthreads, ph_err *err)
{
    uint32_t n = p->n, nm = 0, nf = 0;
    uint32_t *idx = cl_sort_by_part(n, p->part), *firsts = malloc((n ? n : 1) * sizeof *firsts);
    gmerge *gm = malloc((n ? n : 1) * sizeof *gm);
    cl_dendrogram *dg = NULL;
    if (!idx || !gm || !firsts)
        goto out;
    for (uint32_t s = 0, e; s < n; s = e) {
        for (e = s + 1; e < n && p->part[idx[e]] == p->part[idx[s]];)
            e++;
        firsts[nf++] = idx[s]; /* idx is sorted by (part, index): the part's lowest point */
        if (link_part(p, idx + s, e - s, nthreads, gm, &nm) < 0)
            goto out;
    }
    /* Parts never merge below infinity; join them in the order of their
     * lowest point so that the tree has one root. */
    qsort(firsts, nf, sizeof *firsts, by_u32);
    for (uint32_t f = 1; f < nf; f++, nm++)
        gm[nm] = (gmerge){firsts[0], firsts[f], INFINITY, nm};
    dg = relabel(n, gm, nm);
out:
    if (!dg)
        ph_err_set(err, "out of memory clustering %u ranks", n);
    free(idx);
    free(firsts);
    free(gm);
    return dg;
}

void cl_dendrogram_free(cl_dendrogram *d)
{
    if (d)
        free(d->merges);
    free(d);
}

/* Labels after the first `count` merges: union-find over points, each
 * cluster id standing for one of its points. */
static uint32_t apply(const cl_dendrogram *d, uint32_t count, uint32_t *label)
{
    uint32_t n = d->n, *pt = malloc((2 * (size_t)n + 1) * sizeof *pt);
    if (!pt)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        label[i] = pt[i] = i;
    for (uint32_t s = 0; s + 1 < n; s++)
        pt[n + s] = pt[d->merges[s].left];
    for (uint32_t s = 0; s < count; s++)
        cl_union(label, pt[d->merges[s].left], pt[d->merges[s].right]);
    for (uint32_t i = 0; i < n; i++)
        label[i] = cl_find(label, i);
    free(pt);
    return cl_normalize_labels(n, label);
}

uint32_t cl_cut_height(const cl_dendrogram *d, double t, uint32_t *label)
{
    uint32_t count = 0;
    while (count + 1 < d->n && d->merges[count].height <= t)
        count++;
    return apply(d, count, label);
}

int cl_cut_count(const cl_dendrogram *d, uint32_t k, uint32_t *label, ph_err *err)
{
    uint32_t n = d->n, finite = 0;
    while (finite + 1 < n && isfinite(d->merges[finite].height))
        finite++;
    if (k == 0 || k > n) {
        ph_err_set(err, "cannot make %u groups from %u ranks", k, n);
        return -1;
    }
    if (n - k > finite) {
        ph_err_set(err, "cannot make %u groups: the ranks fall into %u classes that never share "
                   "a group (different communication sequences), so at least %u groups",
                   k, n - finite, n - finite);
        return -1;
    }
    return (int)apply(d, n - k, label);
}
