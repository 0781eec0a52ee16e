/* cluster-test.c - unit tests of the cluster library (run by tests/cluster-unit.sh).
 *
 * Each check compares with an independent, obviously correct computation:
 * the naive O(n^3) Algorithm 1 for the linkage, the full dendrogram for the
 * exact threshold cut, hand-computed values for distances and periods.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"

static int failures;
#define CHECK(cond, ...)                                                                            \
    do {                                                                                            \
        if (!(cond)) {                                                                              \
            failures++;                                                                             \
            printf("not ok %s:%d: ", __FILE__, __LINE__);                                           \
            printf(__VA_ARGS__);                                                                    \
            printf("\n");                                                                           \
        }                                                                                           \
    } while (0)

static uint64_t rng = 42;
static double unif(void) { return cl_uniform(&rng); }

/* n points of dimension d: group g = i % ngroups has level 1000 * (1 + sep * g),
 * each element times (1 + noise * u). */
typedef struct set {
    cl_points p;
    uint32_t *dim;
    uint64_t *part;
    float **vec;
} set;

static set make_set(uint32_t n, uint32_t d, uint32_t ngroups, double sep, double noise)
{
    set s = {{n, NULL, NULL, NULL}, malloc(n * sizeof(uint32_t)), calloc(n, sizeof(uint64_t)),
             malloc(n * sizeof(float *))};
    for (uint32_t i = 0; i < n; i++) {
        s.dim[i] = d;
        s.vec[i] = malloc((d + 1) * sizeof(float));
        for (uint32_t k = 0; k < d; k++)
            s.vec[i][k] = (float)(1000 * (1 + sep * (i % ngroups)) * (1 + (k % 5) * 0.1) *
                                  (1 + noise * (2 * unif() - 1)));
    }
    s.p = (cl_points){n, s.dim, s.part, (const float *const *)s.vec};
    return s;
}

static void free_set(set *s)
{
    for (uint32_t i = 0; i < s->p.n; i++)
        free(s->vec[i]);
    free(s->vec);
    free(s->dim);
    free(s->part);
}

/* Do two labelings describe the same partition? */
static int same_partition(const uint32_t *a, const uint32_t *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = i + 1; j < n; j++)
            if ((a[i] == a[j]) != (b[i] == b[j]))
                return 0;
    return 1;
}

static void test_distance(void)
{
    float a[] = {1, 2, 3, 4}, b[] = {2, 0, 3, 8};
    CHECK(cl_distance(a, 4, b, 4) == 7, "Manhattan distance of Equation 1: %g", cl_distance(a, 4, b, 4));
    CHECK(isinf(cl_distance(a, 4, b, 3)), "different dimensions: infinite");
    for (uint32_t d = 0; d < 300; d += 7) {
        float *x = malloc((d + 1) * sizeof *x), *y = malloc((d + 1) * sizeof *y);
        double want = 0;
        for (uint32_t k = 0; k < d; k++) {
            x[k] = (float)(unif() * 1e6);
            y[k] = (float)(unif() * 1e6);
            want += fabs((double)x[k] - y[k]);
        }
        CHECK(fabs(cl_l1(x, y, d) - want) <= 1e-6 * want, "cl_l1 d=%u: %g vs %g", d, cl_l1(x, y, d), want);
        free(x);
        free(y);
    }
}

/* Algorithm 1 as written: the closest pair, merge, complete-linkage update. */
static void naive_heights(const cl_points *p, double *h)
{
    uint32_t n = p->n, *alive = malloc(n * sizeof *alive);
    double *d = malloc((size_t)n * n * sizeof *d);
    for (uint32_t i = 0; i < n; i++) {
        alive[i] = 1;
        for (uint32_t j = 0; j < n; j++)
            d[i * n + j] = cl_distance(p->vec[i], p->dim[i], p->vec[j], p->dim[j]);
    }
    for (uint32_t s = 0; s + 1 < n; s++) {
        uint32_t bi = 0, bj = 0;
        double best = INFINITY;
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = i + 1; j < n; j++)
                if (alive[i] && alive[j] && (d[i * n + j] < best || bi == bj))
                    best = d[i * n + j], bi = i, bj = j;
        h[s] = best;
        alive[bj] = 0;
        for (uint32_t k = 0; k < n; k++)
            d[bi * n + k] = d[k * n + bi] = fmax(d[bi * n + k], d[bj * n + k]);
    }
    free(alive);
    free(d);
}

static void test_linkage(void)
{
    set s = make_set(40, 50, 3, 0.3, 0.2);
    ph_err err;
    cl_dendrogram *dg = cl_hierarchical(&s.p, 2, &err);
    double h[39];
    naive_heights(&s.p, h);
    for (uint32_t k = 0; k < 39; k++) /* heights only grow: both lists sorted */
        CHECK(fabs(dg->merges[k].height - (float)h[k]) <= 1e-3 * h[k], "merge %u: %g vs naive %g", k,
              dg->merges[k].height, h[k]);
    CHECK(dg->merges[38].size == 40, "the root holds every point");
    uint32_t lab[40];
    CHECK(cl_cut_count(dg, 3, lab, &err) == 3, "3 groups");
    for (uint32_t i = 0; i < 40; i++)
        CHECK(lab[i] == lab[i % 3], "planted group of point %u", i);
    CHECK(cl_cut_count(dg, 0, lab, &err) < 0 && cl_cut_count(dg, 41, lab, &err) < 0, "impossible k");
    cl_dendrogram_free(dg);
    s.part[0] = 7; /* a point of its own class never merges below infinity */
    dg = cl_hierarchical(&s.p, 1, &err);
    CHECK(isinf(dg->merges[38].height) && isfinite(dg->merges[37].height), "parts join at infinity");
    CHECK(cl_cut_count(dg, 1, lab, &err) < 0 && strstr(err.msg, "at least 2 groups"), "k below the parts: %s", err.msg);
    CHECK(cl_cut_count(dg, 2, lab, &err) == 2 && lab[0] != lab[1], "k = parts");
    cl_dendrogram_free(dg);
    free_set(&s);
}

/* The exact threshold cut must equal the dendrogram's cut, with or without bounds. */
static cl_cut_stats compare_cut(const set *s, double t, const char *what)
{
    ph_err err;
    uint32_t n = s->p.n, *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    cl_dendrogram *dg = cl_hierarchical(&s->p, 2, &err);
    uint32_t ga = cl_cut_height(dg, t, a);
    cl_cut_stats st;
    int gb = cl_threshold_cut(&s->p, t, 2, b, &st, &err);
    CHECK(gb == (int)ga && same_partition(a, b, n), "%s: %d groups vs %u from the dendrogram", what, gb, ga);
    cl_dendrogram_free(dg);
    free(a);
    free(b);
    return st;
}

static void test_fastcut(void)
{
    set s = make_set(200, 300, 4, 0.5, 0.01); /* separated groups: bounds settle all */
    cl_cut_stats st = compare_cut(&s, 0.05 * 1000 * 1.2 * 300, "separated");
    CHECK(st.components == 4 && st.certified == 4 && st.pairs_exact == 200, "separated: %u of %u "
          "components certified, %llu distances", st.certified, st.components, (unsigned long long)st.pairs_exact);
    free_set(&s);
    s = make_set(120, 64, 1, 0, 0.5); /* one noisy cloud: the matrix is needed */
    uint32_t refined = 0;
    for (double f = 0.05; f < 0.6; f += 0.1) {
        st = compare_cut(&s, f * 1000 * 1.2 * 64, "cloud");
        refined += st.certified < st.components;
    }
    CHECK(refined >= 3, "cloud: only %u cuts needed a matrix", refined);
    for (uint32_t i = 0; i < 120; i += 3)
        s.part[i] = 1; /* two classes */
    compare_cut(&s, 0.3 * 1000 * 1.2 * 64, "cloud in two classes");
    free_set(&s);
}

static void compare_count(const set *s, uint32_t k, const char *what)
{
    ph_err err;
    uint32_t n = s->p.n, *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    cl_dendrogram *dg = cl_hierarchical(&s->p, 2, &err);
    int ga = cl_cut_count(dg, k, a, &err), gb = cl_count_cut(&s->p, k, 2, b, NULL, NULL, &err);
    CHECK(ga == (int)k && gb == (int)k && same_partition(a, b, n), "%s k=%u: %d and %d groups", what, k, ga, gb);
    cl_dendrogram_free(dg);
    free(a);
    free(b);
}

static void test_count_cut(void)
{
    set s = make_set(200, 300, 4, 0.5, 0.01);
    for (uint32_t k = 1; k <= 6; k++)
        compare_count(&s, k, "separated");
    free_set(&s);
    s = make_set(80, 32, 1, 0, 0.5);
    for (uint32_t k = 1; k <= 80; k += 7)
        compare_count(&s, k, "cloud");
    s.part[3] = 1;
    uint32_t lab[80];
    ph_err err;
    CHECK(cl_count_cut(&s.p, 1, 1, lab, NULL, NULL, &err) < 0, "k below the classes refused");
    CHECK(cl_count_cut(&s.p, 81, 1, lab, NULL, NULL, &err) < 0, "k above the points refused");
    free_set(&s);
}

static void test_kmeans(void)
{
    set s = make_set(30, 40, 3, 0.4, 0.05);
    uint32_t lab[30];
    ph_err err;
    CHECK(cl_kmeans(&s.p, 3, 1, lab, &err) == 3, "kmeans: 3 groups");
    for (uint32_t i = 0; i < 30; i++)
        CHECK(lab[i] == lab[i % 3], "kmeans: planted group of point %u", i);
    CHECK(cl_kmeans(&s.p, 31, 1, lab, &err) < 0, "kmeans: k > n refused");
    s.part[5] = s.part[6] = 9;
    CHECK(cl_kmeans(&s.p, 1, 1, lab, &err) < 0, "kmeans: k below the classes refused");
    CHECK(cl_kmeans(&s.p, 4, 1, lab, &err) == 4 && lab[5] == lab[6] && lab[5] != lab[2], "kmeans per class");
    free_set(&s);
}

static void test_period(void)
{
    uint32_t n = 17 + 250 * 40 + 5, *tok = malloc(n * sizeof *tok), body[250];
    for (uint32_t i = 0; i < 250; i++)
        body[i] = (uint32_t)cl_mix(0, i % 97) % 7; /* a body whose smallest period is 250 */
    for (uint32_t i = 0; i < n; i++)
        tok[i] = i < 17 ? 100 + i : i >= n - 5 ? 200 + i : body[(i - 17) % 250];
    cl_period p;
    cl_find_period(tok, n, &p);
    CHECK(p.period == 250 && p.iterations == 40 && p.start == 17, "period %llu x %llu from %llu",
          (unsigned long long)p.period, (unsigned long long)p.iterations, (unsigned long long)p.start);
    for (uint32_t i = 0; i < n; i++)
        tok[i] = (uint32_t)cl_mix(1, i);
    cl_find_period(tok, n, &p);
    CHECK(p.iterations == 1 && p.period == n, "no period in noise");
    free(tok);
}

static void test_iterations(void)
{
    enum { P = 10, N = 40, D = 5 + P * N };
    float v[D];
    cl_period per = {5, P, N};
    for (int i = 0; i < D; i++)
        v[i] = 100;
    cl_iter_plan it;
    cl_iteration_plan(v, D, &per, 50, &it);
    CHECK(it.partial && it.replay_iterations == 1 && it.similarity == 0, "steady loop: replay 1");
    for (int i = 0; i < P; i++)
        v[5 + i] = 300; /* a slow first iteration: T0 = 3T */
    /* miss(r) = |N (r + 2) T / r - (N + 2) T| = (80 / r - 2) T; T = 1000, L = 2100: r = 20 */
    cl_iteration_plan(v, D, &per, 2100, &it);
    CHECK(it.partial && it.replay_iterations == 20, "warm-up: replay %llu", (unsigned long long)it.replay_iterations);
    cl_iteration_plan(v, D, &per, 1999, &it);
    CHECK(!it.partial && it.replay_iterations == N, "Equation 2 fails: all iterations");
}

static void test_nodes_and_reps(void)
{
    uint32_t node[10], r[] = {0, 1, 2, 3, 8, 9, 10, 11, 13};
    ph_err err;
    CHECK(ph_node_map("block", 10, 4, node, &err) == 3 && node[3] == 0 && node[4] == 1 && node[9] == 2, "block");
    CHECK(ph_node_map(NULL, 10, 4, node, &err) == 3 && node[9] == 2, "block by default");
    CHECK(ph_node_map("cyclic", 10, 4, node, &err) == 3 && node[3] == 0 && node[4] == 1 && node[5] == 2, "cyclic");
    CHECK(ph_node_map("cyclic", 10, 0, node, &err) < 0 && strstr(err.msg, "at least 1"), "ppn 0");
    CHECK(ph_map_kind("block") == PH_MAP_BLOCK && ph_map_kind("cyclic") == PH_MAP_CYCLIC &&
              ph_map_kind("nodes.txt") == PH_MAP_FILE, "kinds");
    char *s = cl_format_ranks(r, 9);
    CHECK(strcmp(s, "0-3,8-11,13") == 0, "rank list %s", s);
    free(s);
    float a[] = {0, 0}, b[] = {10, 10}, c[] = {4, 4}, d[] = {100, 100};
    const float *v[] = {a, b, c, d};
    uint32_t dim[] = {2, 2, 2, 2}, lab[] = {0, 0, 0, 1}, rep[2];
    uint64_t part[4] = {0};
    cl_points p = {4, dim, part, v};
    double rad[2];
    CHECK(cl_representatives(&p, lab, 2, 1, rep, rad, &err) == 0 && rep[0] == 2 && rep[1] == 3,
          "closest to the mean (4.67, 4.67): rank %u", rep[0]);
    CHECK(fabs(rad[0] - 2 * (10 - 14.0 / 3)) < 1e-4, "radius %g", rad[0]);
}

int main(void)
{
    test_distance();
    test_linkage();
    test_fastcut();
    test_count_cut();
    test_kmeans();
    test_period();
    test_iterations();
    test_nodes_and_reps();
    printf("%s: %d failure%s\n", failures ? "FAIL" : "ok", failures, failures == 1 ? "" : "s");
    return failures != 0;
}
