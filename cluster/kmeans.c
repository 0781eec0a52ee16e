/* kmeans.c - k-means, the alternative to hierarchical clustering when the
 * user knows how many groups to expect (Section 5.4.1).
 *
 * Points are assigned by the Manhattan distance of Equation 1, centres are
 * member means (Lloyd), seeding is k-means++ weighted by that distance.  A
 * fixed-seed generator makes every run give the same groups.  Points of
 * different classes (partition key or dimension) are never compared, so
 * k-means runs per class and the k clusters are handed out one at a time to
 * the class whose total distance to its centres drops most.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define RESTARTS 4
#define MAX_ROUNDS 100

typedef struct klass {
    const cl_points *p;
    const uint32_t *idx;
    uint32_t m, d;
} klass;

static const float *pt(const klass *c, uint32_t i) { return c->p->vec[c->idx[i]]; }

/* k-means++: each next centre drawn with probability proportional to the
 * distance to the nearest centre so far. */
static void seed_centres(const klass *c, uint32_t k, uint64_t *rng, float *cent, double *near)
{
    uint32_t first = (uint32_t)(cl_uniform(rng) * c->m) % c->m;
    memcpy(cent, pt(c, first), c->d * sizeof *cent);
    for (uint32_t i = 0; i < c->m; i++)
        near[i] = cl_l1(pt(c, i), cent, c->d);
    for (uint32_t j = 1; j < k; j++) {
        double sum = 0, x;
        for (uint32_t i = 0; i < c->m; i++)
            sum += near[i];
        uint32_t pick = 0;
        x = cl_uniform(rng) * sum;
        for (; pick + 1 < c->m && (x -= near[pick]) > 0;)
            pick++;
        float *cj = cent + (size_t)j * c->d;
        memcpy(cj, pt(c, pick), c->d * sizeof *cj);
        for (uint32_t i = 0; i < c->m; i++)
            near[i] = fmin(near[i], cl_l1(pt(c, i), cj, c->d));
    }
}

/* Assigns every point to its nearest centre; returns how many moved. */
static uint32_t assign(const klass *c, uint32_t k, const float *cent, uint32_t *lab, double *dist)
{
    uint32_t moved = 0;
    for (uint32_t i = 0; i < c->m; i++) {
        uint32_t best = 0;
        double bd = INFINITY;
        for (uint32_t j = 0; j < k; j++) {
            double v = cl_l1(pt(c, i), cent + (size_t)j * c->d, c->d);
            if (v < bd)
                bd = v, best = j;
        }
        moved += lab[i] != best;
        lab[i] = best;
        dist[i] = bd;
    }
    return moved;
}

/* Centres as member means; an emptied centre restarts at the farthest point. */
static void update(const klass *c, uint32_t k, float *cent, const uint32_t *lab, const double *dist,
                   double *acc, uint32_t *cnt)
{
    memset(acc, 0, (size_t)k * c->d * sizeof *acc);
    memset(cnt, 0, k * sizeof *cnt);
    for (uint32_t i = 0; i < c->m; i++) {
        double *a = acc + (size_t)lab[i] * c->d;
        const float *v = pt(c, i);
        for (uint32_t x = 0; x < c->d; x++)
            a[x] += v[x];
        cnt[lab[i]]++;
    }
    for (uint32_t j = 0; j < k; j++) {
        float *cj = cent + (size_t)j * c->d;
        if (cnt[j] == 0) {
            uint32_t far = 0;
            for (uint32_t i = 1; i < c->m; i++)
                if (dist[i] > dist[far])
                    far = i;
            memcpy(cj, pt(c, far), c->d * sizeof *cj);
            continue;
        }
        for (uint32_t x = 0; x < c->d; x++)
            cj[x] = (float)(acc[(size_t)j * c->d + x] / cnt[j]);
    }
}

/* Best of RESTARTS Lloyd runs with k clusters: labels and total distance. */
static double lloyd(const klass *c, uint32_t k, uint64_t seed, uint32_t *best_lab)
{
    size_t kd = (size_t)k * c->d;
    float *cent = malloc((kd + 1) * sizeof *cent);
    double *acc = malloc((kd + 1) * sizeof *acc), *dist = malloc(c->m * sizeof *dist);
    uint32_t *lab = malloc(c->m * sizeof *lab), *cnt = malloc(k * sizeof *cnt);
    double best = INFINITY;
    uint64_t rng = seed ? seed : 1;
    for (int r = 0; cent && acc && dist && lab && cnt && r < RESTARTS; r++) {
        seed_centres(c, k, &rng, cent, dist);
        memset(lab, 0xff, c->m * sizeof *lab);
        for (int round = 0; round < MAX_ROUNDS && assign(c, k, cent, lab, dist); round++)
            update(c, k, cent, lab, dist, acc, cnt);
        double cost = 0;
        for (uint32_t i = 0; i < c->m; i++)
            cost += dist[i];
        if (cost < best) {
            best = cost;
            memcpy(best_lab, lab, c->m * sizeof *lab);
        }
        if (k == 1 || cost == 0)
            break; /* nothing a restart could improve */
    }
    free(cent);
    free(acc);
    free(dist);
    free(lab);
    free(cnt);
    return best;
}

typedef struct alloc {
    klass c;
    uint32_t k;
    double cost, next_cost; /* with k and with k + 1 clusters */
    uint32_t *lab, *next_lab;
} alloc;

static void propose(alloc *a, uint64_t seed)
{
    a->next_cost = a->k < a->c.m ? lloyd(&a->c, a->k + 1, seed + a->k, a->next_lab) : INFINITY;
}

/* Hands out k - nclasses extra clusters, each to the class that gains most. */
static void distribute(alloc *al, uint32_t na, uint32_t extra, uint64_t seed)
{
    for (uint32_t a = 0; a < na; a++) {
        al[a].k = 1;
        al[a].cost = lloyd(&al[a].c, 1, seed, al[a].lab);
        propose(&al[a], seed);
    }
    for (; extra > 0; extra--) {
        uint32_t best = UINT32_MAX;
        for (uint32_t a = 0; a < na; a++)
            if (isfinite(al[a].next_cost) &&
                (best == UINT32_MAX || al[a].cost - al[a].next_cost > al[best].cost - al[best].next_cost))
                best = a;
        alloc *b = &al[best]; /* exists: k <= n was checked */
        uint32_t *t = b->lab;
        b->lab = b->next_lab, b->next_lab = t;
        b->cost = b->next_cost;
        b->k++;
        propose(b, seed);
    }
}

int cl_kmeans(const cl_points *p, uint32_t k, uint64_t seed, uint32_t *label, ph_err *err)
{
    uint32_t n = p->n, *idx = cl_sort_by_part_dim(p), na = 0;
    alloc *al = calloc(n ? n : 1, sizeof *al);
    uint32_t *labs = malloc(2 * ((size_t)n + 1) * sizeof *labs);
    int rc = -1;
    if (!idx || !al || !labs) {
        ph_err_set(err, "out of memory clustering %u ranks", n);
        goto out;
    }
    for (uint32_t s = 0, e; s < n; s = e, na++) {
        for (e = s + 1; e < n && !cl_new_class(p, idx, e);)
            e++;
        al[na] = (alloc){.c = {p, idx + s, e - s, p->dim[idx[s]]}, .lab = labs + 2 * s,
                         .next_lab = labs + 2 * s + (e - s)};
    }
    if (k < na || k > n) {
        ph_err_set(err, k > n ? "cannot make %u groups from %u ranks" :
                   "cannot make %u groups: the ranks fall into %u classes that never share a group "
                   "(different communication sequences or dimensions)", k, k > n ? n : na);
        goto out;
    }
    distribute(al, na, k - na, seed);
    uint32_t base = 0;
    for (uint32_t a = 0; a < na; a++) {
        for (uint32_t i = 0; i < al[a].c.m; i++)
            label[al[a].c.idx[i]] = base + al[a].lab[i];
        base += al[a].k;
    }
    rc = (int)cl_normalize_labels(n, label);
out:
    free(idx);
    free(al);
    free(labs);
    return rc;
}
