/* fastcut.c - the complete-linkage groups at a threshold, without the whole
 * distance matrix.
 *
 * Cutting the complete-linkage dendrogram at t only needs to know, for each
 * pair, its distance if it is <= t and that it is > t otherwise: a merge
 * below t never involves a larger distance, so replacing every distance
 * above t by infinity leaves the groups unchanged.  Two bounds decide most
 * pairs without touching their vectors:
 *
 *   lower: sum over B blocks of |sum of a's block - sum of b's block|
 *          <= ||a - b||_1 (the triangle inequality, block by block); and
 *          | ||a - c|| - ||b - c|| | for the component's mean c;
 *   upper: ||a - c|| + ||b - c|| >= ||a - b||.
 *
 * Pairs whose lower bound exceeds t link nothing, so the graph of the other
 * pairs splits each part into components that no group can span.  If every
 * pair of a component has an upper bound <= t (its two largest radii sum to
 * <= t), complete linkage merges all of it below t whatever the order: it is
 * one group, found in O(m d).  Only the remaining components get a distance
 * matrix, with the bounds pruning it, and the nearest-neighbour chain.
 * Well-separated groups, the common case, never build a matrix.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define NBLOCKS 64
#define SLACK 1e-5 /* relative margin: float rounding must not flip a bound's verdict */

typedef struct part {
    const cl_points *p;
    const uint32_t *idx; /* the part's points */
    uint32_t m, d, nb;
    double *bsum;        /* m x nb block sums */
    double *tot;
    double *radius;      /* distance to the component's mean, by local index */
    double t;
    double *budget;      /* element operations refining may still spend */
    int *ambiguous;      /* set when a component was left unrefined for the budget */
} part;

static void block_sums(void *ctx, uint64_t begin, uint64_t end)
{
    part *pt = ctx;
    for (uint64_t i = begin; i < end; i++) {
        const float *v = pt->p->vec[pt->idx[i]];
        double *s = pt->bsum + i * pt->nb, tot = 0;
        for (uint32_t b = 0; b < pt->nb; b++) {
            uint64_t lo = (uint64_t)pt->d * b / pt->nb, hi = (uint64_t)pt->d * (b + 1) / pt->nb;
            double acc = 0;
            for (uint64_t k = lo; k < hi; k++)
                acc += v[k];
            s[b] = acc;
            tot += acc;
        }
        pt->tot[i] = tot;
    }
}

static double block_lb(const part *pt, uint32_t i, uint32_t j)
{
    const double *a = pt->bsum + (size_t)i * pt->nb, *b = pt->bsum + (size_t)j * pt->nb;
    double lb = 0;
    for (uint32_t k = 0; k < pt->nb; k++)
        lb += fabs(a[k] - b[k]);
    return lb;
}

static int by_tot(const void *x, const void *y, void *ctx)
{
    const double *tot = ctx;
    double a = tot[*(const uint32_t *)x], b = tot[*(const uint32_t *)y];
    return a < b ? -1 : a > b;
}

/* Components of the graph "lower bound <= t", swept in order of the totals
 * (|tot_a - tot_b| is the coarsest lower bound and ends each row early). */
static void components(part *pt, uint32_t *uf, cl_cut_stats *st)
{
    uint32_t m = pt->m, *ord = malloc(m * sizeof *ord);
    double lim = pt->t * (1 + SLACK);
    for (uint32_t i = 0; i < m; i++)
        uf[i] = i;
    if (!ord) { /* no order: every pair is a candidate, which is slower but still right */
        for (uint32_t i = 0; i < m; i++)
            for (uint32_t j = i + 1; j < m; j++)
                if (cl_find(uf, i) != cl_find(uf, j) && block_lb(pt, i, j) <= lim)
                    cl_union(uf, i, j);
        return;
    }
    for (uint32_t i = 0; i < m; i++)
        ord[i] = i;
    qsort_r(ord, m, sizeof *ord, by_tot, pt->tot);
    for (uint32_t a = 0; a < m; a++)
        for (uint32_t b = a + 1; b < m && pt->tot[ord[b]] - pt->tot[ord[a]] <= lim; b++) {
            if (cl_find(uf, ord[a]) == cl_find(uf, ord[b]))
                continue;
            if (block_lb(pt, ord[a], ord[b]) <= lim)
                cl_union(uf, ord[a], ord[b]);
            else
                st->pairs_pruned++;
        }
    free(ord);
}

typedef struct radii_job {
    part *pt;
    const uint32_t *mem; /* local indices of the component */
    const float *mean;
} radii_job;

static void radii(void *ctx, uint64_t begin, uint64_t end)
{
    radii_job *j = ctx;
    for (uint64_t k = begin; k < end; k++) {
        uint32_t i = j->mem[k];
        j->pt->radius[i] = cl_l1(j->pt->p->vec[j->pt->idx[i]], j->mean, j->pt->d);
    }
}

typedef struct prune_ctx {
    const part *pt;
    const uint32_t *mem;
    cl_cut_stats *st;
} prune_ctx;

static int prune(void *ctx, uint32_t a, uint32_t b)
{
    const prune_ctx *c = ctx;
    uint32_t i = c->mem[a], j = c->mem[b];
    double lim = c->pt->t * (1 + SLACK);
    return fabs(c->pt->radius[i] - c->pt->radius[j]) > lim || block_lb(c->pt, i, j) > lim;
}

/* A component the bounds could not settle: its own complete linkage, cut at t.
 * label[] is indexed by local point; members get the label of a member. */
static int refine(part *pt, const uint32_t *mem, uint32_t m, int nthreads, uint32_t *label,
                  cl_cut_stats *st)
{
    uint32_t *gidx = malloc(m * sizeof *gidx), *uf = malloc(m * sizeof *uf);
    cl_raw_merge *raw = malloc(m * sizeof *raw);
    float *d = NULL;
    int rc = -1;
    if (!gidx || !uf || !raw)
        goto out;
    for (uint32_t k = 0; k < m; k++)
        gidx[k] = pt->idx[mem[k]], uf[k] = k;
    prune_ctx pc = {pt, mem, st};
    uint64_t before = st->pairs_exact;
    if (!(d = cl_distance_matrix(pt->p, gidx, m, nthreads, prune, &pc, &st->pairs_exact)))
        goto out;
    st->pairs_pruned += (uint64_t)m * (m - 1) / 2 - (st->pairs_exact - before);
    cl_nnchain(d, m, raw);
    /* heights only grow towards the root, so the merges <= t are the cut */
    for (uint32_t s = 0; s + 1 < m; s++)
        if (raw[s].height <= pt->t)
            cl_union(uf, raw[s].a, raw[s].b);
    for (uint32_t k = 0; k < m; k++)
        label[mem[k]] = mem[cl_find(uf, k)];
    rc = 0;
out:
    free(gidx);
    free(uf);
    free(raw);
    free(d);
    return rc;
}

/* One component: certified as one group, or refined.  Labels are local. */
static int settle(part *pt, const uint32_t *mem, uint32_t m, int nthreads, float *mean,
                  uint32_t *label, cl_cut_stats *st)
{
    st->components++;
    if (m == 1) {
        label[mem[0]] = mem[0];
        st->certified++;
        return 0;
    }
    cl_points sub = *pt->p;
    uint32_t *gidx = malloc(m * sizeof *gidx);
    if (!gidx)
        return -1;
    for (uint32_t k = 0; k < m; k++)
        gidx[k] = pt->idx[mem[k]];
    cl_mean(&sub, gidx, m, pt->d, mean);
    free(gidx);
    radii_job rj = {pt, mem, mean};
    cl_parallel(nthreads, m, 16, radii, &rj);
    st->pairs_exact += m; /* distances to the mean */
    double r1 = 0, r2 = 0;
    for (uint32_t k = 0; k < m; k++) {
        double r = pt->radius[mem[k]];
        if (r > r1)
            r2 = r1, r1 = r;
        else if (r > r2)
            r2 = r;
    }
    if ((r1 + r2) * (1 + SLACK) <= pt->t) {
        for (uint32_t k = 0; k < m; k++)
            label[mem[k]] = mem[0];
        st->certified++;
        st->pairs_pruned += (uint64_t)m * (m - 1) / 2;
        return 0;
    }
    double cost = (double)m * (m - 1) / 2 * pt->d;
    if (cost > *pt->budget) { /* left as one group: the count is then a lower bound */
        *pt->ambiguous = 1;
        for (uint32_t k = 0; k < m; k++)
            label[mem[k]] = mem[0];
        return 0;
    }
    *pt->budget -= cost;
    return refine(pt, mem, m, nthreads, label, st);
}

/* Groups one part (all points of one key and one dimension); labels are local. */
static int cut_part(part *pt, int nthreads, uint32_t *label, cl_cut_stats *st)
{
    uint32_t m = pt->m;
    pt->nb = pt->d < NBLOCKS ? (pt->d ? pt->d : 1) : NBLOCKS;
    pt->bsum = malloc((size_t)m * pt->nb * sizeof *pt->bsum);
    pt->tot = malloc(m * sizeof *pt->tot);
    pt->radius = malloc(m * sizeof *pt->radius);
    uint32_t *uf = malloc(m * sizeof *uf), *ord = malloc(m * sizeof *ord);
    float *mean = malloc(((size_t)pt->d + 1) * sizeof *mean);
    int rc = -1;
    if (!pt->bsum || !pt->tot || !pt->radius || !uf || !ord || !mean)
        goto out;
    cl_parallel(nthreads, m, 16, block_sums, pt);
    components(pt, uf, st);
    /* members of each component together: order by (root, index) */
    uint32_t *start = calloc((size_t)m + 1, sizeof *start);
    if (!start)
        goto out;
    for (uint32_t i = 0; i < m; i++)
        start[cl_find(uf, i) + 1]++;
    for (uint32_t i = 0; i < m; i++)
        start[i + 1] += start[i];
    for (uint32_t i = 0; i < m; i++)
        ord[start[cl_find(uf, i)]++] = i; /* start[r] ends as the end of r's run */
    rc = 0;
    for (uint32_t s = 0, e; s < m && rc == 0; s = e) {
        uint32_t root = cl_find(uf, ord[s]);
        for (e = s + 1; e < m && cl_find(uf, ord[e]) == root;)
            e++;
        rc = settle(pt, ord + s, e - s, nthreads, mean, label, st);
    }
    free(start);
out:
    free(pt->bsum);
    free(pt->tot);
    free(pt->radius);
    free(uf);
    free(ord);
    free(mean);
    return rc;
}

/* The cut at t, refining components for at most `budget` element
 * operations; *ambiguous says whether some were left whole (the count is
 * then only a lower bound). */
static int cut_within(const cl_points *p, double t, int nthreads, double budget, uint32_t *label,
                      cl_cut_stats *st, int *ambiguous, ph_err *err)
{
    cl_cut_stats dummy;
    st = st ? st : &dummy;
    memset(st, 0, sizeof *st);
    uint32_t n = p->n, *idx = cl_sort_by_part_dim(p);
    uint32_t *local = malloc((n ? n : 1) * sizeof *local);
    if (!idx || !local) {
        free(idx);
        free(local);
        ph_err_set(err, "out of memory clustering %u ranks", n);
        return -1;
    }
    nthreads = cl_threads(nthreads);
    int rc = 0;
    for (uint32_t s = 0, e; s < n && rc == 0; s = e) {
        for (e = s + 1; e < n && p->part[idx[e]] == p->part[idx[s]] && p->dim[idx[e]] == p->dim[idx[s]];)
            e++;
        part pt = {.p = p, .idx = idx + s, .m = e - s, .d = p->dim[idx[s]], .t = t,
                   .budget = &budget, .ambiguous = ambiguous};
        st->parts++;
        rc = cut_part(&pt, nthreads, local + s, st);
        for (uint32_t k = s; k < e && rc == 0; k++)
            label[idx[k]] = idx[s + local[k]]; /* a point of the group: unique across parts */
    }
    free(idx);
    free(local);
    if (rc < 0) {
        ph_err_set(err, "out of memory clustering %u ranks", n);
        return -1;
    }
    return (int)cl_normalize_labels(n, label);
}

int cl_threshold_cut(const cl_points *p, double t, int nthreads, uint32_t *label,
                     cl_cut_stats *st, ph_err *err)
{
    int ambiguous = 0;
    return cut_within(p, t, nthreads, INFINITY, label, st, &ambiguous, err);
}

/* ---- k groups by searching the threshold ------------------------------------------------------ */

#define PROBES 64
#define PROBE_BUDGET 4e9 /* element operations one probe may spend refining (~1 s) */
#define NARROW 1.02      /* a search interval narrower than this ratio is given up */

typedef struct search {
    const cl_points *p;
    uint32_t k;
    int nthreads, probes;
    uint32_t *label;
    cl_cut_stats *st;
    ph_err *err;
    double found;
} search;

/* Looks for t in (lo, hi) whose cut has k groups.  The number of groups
 * falls as t grows; a probe near a large cluster's diameter would need its
 * whole matrix, so probes are budgeted and an undecided one searches both
 * sides.  1: found (labels set); 0: not here; -1: error. */
static int find_k(search *s, double lo, double hi)
{
    if (hi / lo < NARROW || s->probes >= PROBES)
        return 0;
    double t = sqrt(lo * hi);
    int amb = 0;
    s->probes++;
    int g = cut_within(s->p, t, s->nthreads, PROBE_BUDGET, s->label, s->st, &amb, s->err);
    if (g < 0)
        return -1;
    if (!amb && (uint32_t)g == s->k) {
        s->found = t;
        return 1;
    }
    if ((uint32_t)g > s->k) /* even the lower bound has too many: cut higher */
        return find_k(s, t, hi);
    if (!amb)
        return find_k(s, lo, t);
    int rc = find_k(s, lo, t);
    return rc ? rc : find_k(s, t, hi);
}

static int full_dendrogram_cut(const cl_points *p, uint32_t k, int nthreads, uint32_t *label,
                               ph_err *err)
{
    cl_dendrogram *dg = cl_hierarchical(p, nthreads, err);
    if (!dg)
        return -1;
    int g = cl_cut_count(dg, k, label, err);
    cl_dendrogram_free(dg);
    return g;
}

int cl_count_cut(const cl_points *p, uint32_t k, int nthreads, uint32_t *label, double *height,
                 cl_cut_stats *st, ph_err *err)
{
    uint32_t classes = 0, *idx = cl_sort_by_part_dim(p);
    double hi = 0;
    for (uint32_t i = 0; idx && i < p->n; i++) {
        classes += cl_new_class(p, idx, i);
        label[idx[i]] = classes - 1; /* one group per class: the answer when k = classes */
        double tot = 0; /* no two vectors are farther apart than the sum of their L1 norms */
        for (uint32_t x = 0; x < p->dim[i]; x++)
            tot += fabs(p->vec[i][x]);
        hi = fmax(hi, 2 * tot);
    }
    free(idx);
    if (k == 0 || k > p->n || k < classes) {
        ph_err_set(err, k == 0 || k > p->n ? "cannot make %u groups from %u ranks"
                   : "cannot make %u groups: the ranks fall into %u classes that never share a group "
                     "(different communication sequences or dimensions)", k, k == 0 || k > p->n ? p->n : classes);
        return -1;
    }
    cl_cut_stats dummy;
    search s = {p, k, cl_threads(nthreads), 0, label, st ? st : &dummy, err, -1};
    /* the search is geometric because distances span orders of magnitude */
    if (k == classes) {
        if (height)
            *height = INFINITY;
        return (int)cl_normalize_labels(p->n, label);
    }
    int rc = hi > 0 ? find_k(&s, hi * 1e-9, hi) : 0;
    if (rc < 0)
        return -1;
    if (height)
        *height = rc > 0 ? s.found : -1;
    if (rc > 0)
        return (int)k;
    return full_dendrogram_cut(p, k, nthreads, label, err); /* ties: never wrong, maybe slow */
}
