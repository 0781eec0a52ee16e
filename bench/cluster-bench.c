/* cluster-bench.c - how long clustering takes at scale (run by bench/cluster).
 *
 *   cluster-bench [-n RANKS] [-d UNITS] [-j THREADS] [-k]
 *
 * Builds, in memory, the vectors of an LU-like run on a square grid of RANKS
 * (default 16,384 = 128 x 128) with UNITS computation units each (default
 * 10,000): 9 communication classes (corners, edges, interior), each edge and
 * corner class with its own computation level, and the interior split in
 * two groups like NPB MG's ((rank / 4) even or odd, x1.0 and x1.3); every
 * unit has 2% uniform noise.  Then times each step the `phantom cluster`
 * verb runs, checks that the 10 planted groups came out, and estimates what
 * the naive full distance matrix would cost from a sample of its rows.
 * With -k it also times the cut into exactly 10 groups.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cluster.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int lu_class(uint32_t x, uint32_t y, uint32_t side)
{
    int n = y == 0, s = y == side - 1, w = x == 0, e = x == side - 1;
    if (n || s)
        return w ? (n ? 5 : 7) : e ? (n ? 6 : 8) : n ? 1 : 2;
    return w ? 3 : e ? 4 : 0;
}

typedef struct data {
    uint32_t n, d, side;
    uint32_t *dim, *truth;
    uint64_t *part;
    float **vec;
} data;

static uint32_t truth_of(uint32_t r, uint32_t side)
{
    int c = lu_class(r % side, r / side, side);
    return c ? (uint32_t)c + 1 : (r / 4) % 2; /* interior: groups 0 and 1 */
}

static void generate(data *g)
{
    uint64_t s = 12345;
    for (uint32_t r = 0; r < g->n; r++) {
        uint32_t t = truth_of(r, g->side);
        double f = t < 2 ? 1.0 + 0.3 * t : 1.0 + 0.12 * (t - 1) + 0.3;
        g->dim[r] = g->d;
        g->truth[r] = t;
        g->part[r] = cl_mix(0, (uint64_t)lu_class(r % g->side, r / g->side, g->side));
        g->vec[r] = malloc(g->d * sizeof(float));
        for (uint32_t k = 0; k < g->d; k++) {
            double u = 2 * cl_uniform(&s) - 1.0;
            g->vec[r][k] = (float)((20000 + 1500 * ((k * 7) % 11)) * f * (1 + 0.02 * u));
        }
    }
}

/* The planted groups exactly? */
static int recovered(const data *g, const uint32_t *label)
{
    uint32_t *first = malloc(16 * sizeof *first);
    for (int t = 0; t < 16; t++)
        first[t] = UINT32_MAX;
    int ok = 1;
    for (uint32_t r = 0; r < g->n && ok; r++) {
        if (first[g->truth[r]] == UINT32_MAX)
            first[g->truth[r]] = r;
        ok = label[r] == label[first[g->truth[r]]];
        for (uint32_t t = 0; t < 16 && ok; t++) /* and no two planted groups share a label */
            if (t != g->truth[r] && first[t] != UINT32_MAX)
                ok = label[first[t]] != label[r];
    }
    free(first);
    return ok;
}

/* Seconds for the naive matrix, from `rows` full rows of it. */
static double naive_estimate(const data *g, uint32_t rows)
{
    double t0 = now(), sink = 0;
    for (uint32_t i = 0; i < rows; i++)
        for (uint32_t j = i + 1; j < g->n; j++)
            sink += cl_l1(g->vec[i], g->vec[j], g->d);
    double per_pair = (now() - t0) / ((double)rows * g->n - (double)rows * (rows + 1) / 2);
    if (sink < 0)
        puts("");
    return per_pair * (double)g->n * (g->n - 1) / 2;
}

/* --method commseq where the host cannot run the target: only hashes. */
static void commseq_at_scale(uint32_t n)
{
    uint64_t *h = malloc(n * sizeof *h);
    uint32_t *label = malloc(n * sizeof *label), side = (uint32_t)sqrt((double)n);
    for (uint32_t r = 0; r < n; r++)
        h[r] = cl_mix(0, (uint64_t)lu_class(r % side, r / side, side));
    double t = now();
    uint32_t g = cl_group_by_part(n, h, label);
    printf("  %-40s %8.2f s  (%u groups)\n", "commseq grouping of 1e6 ranks' hashes", now() - t, g);
    free(h);
    free(label);
}

int main(int argc, char **argv)
{
    data g = {16384, 10000, 0, NULL, NULL, NULL, NULL};
    int threads = 0, with_k = 0;
    for (int c; (c = getopt(argc, argv, "n:d:j:k")) != -1;) {
        if (c == 'n') g.n = (uint32_t)atol(optarg);
        else if (c == 'd') g.d = (uint32_t)atol(optarg);
        else if (c == 'j') threads = atoi(optarg);
        else if (c == 'k') with_k = 1;
        else return 2;
    }
    g.side = (uint32_t)sqrt((double)g.n);
    g.n = g.side * g.side;
    threads = cl_threads(threads);
    g.dim = malloc(g.n * sizeof *g.dim);
    g.truth = malloc(g.n * sizeof *g.truth);
    g.part = malloc(g.n * sizeof *g.part);
    g.vec = malloc(g.n * sizeof *g.vec);
    uint32_t *label = malloc(g.n * sizeof *label), *rep = malloc(g.n * sizeof *rep);
    printf("cluster bench: %u ranks (%ux%u grid) x %u units = %.0f MB of vectors, %d threads\n", g.n,
           g.side, g.side, g.d, (double)g.n * g.d * 4 / 1e6, threads);
    double t = now();
    generate(&g);
    printf("  %-40s %8.2f s\n", "generate the vectors", now() - t);
    cl_points p = {g.n, g.dim, g.part, (const float *const *)g.vec};
    ph_err err;

    double mean = 0; /* the verb has it from reading: not clustering time */
    for (uint32_t r = 0; r < g.n; r++)
        for (uint32_t k = 0; k < g.d; k++)
            mean += g.vec[r][k] / g.n;
    double t0 = now();
    uint32_t classes = cl_group_by_part(g.n, g.part, label);
    printf("  %-40s %8.2f s  (%u classes)\n", "group by communication sequence", now() - t0, classes);
    cl_cut_stats st;
    double thr = 0.05 * mean; /* the default: 5% of the mean computation per rank */
    t = now();
    int ng = cl_threshold_cut(&p, thr, threads, label, &st, &err);
    printf("  %-40s %8.2f s  (%d groups, %s; %u/%u components by bounds, %llu distances)\n",
           "hierarchical, exact cut at 5%", now() - t, ng, recovered(&g, label) ? "as planted" : "NOT AS PLANTED",
           st.certified, st.components, (unsigned long long)st.pairs_exact);
    t = now();
    cl_representatives(&p, label, (uint32_t)ng, threads, rep, NULL, &err);
    printf("  %-40s %8.2f s\n", "representatives (closest to the mean)", now() - t);
    double total = now() - t0;
    if (with_k) {
        t = now();
        ng = cl_count_cut(&p, 10, threads, label, NULL, &st, &err);
        printf("  %-40s %8.2f s  (%d groups, %s)\n", "hierarchical, cut into k = 10 groups", now() - t, ng,
               recovered(&g, label) ? "as planted" : "NOT AS PLANTED");
    }
    printf("  %-40s %8.2f s  (target: under 60 s)\n", "clustering in all", total);
    commseq_at_scale(1000000);
    printf("  %-40s %8.0f s  (estimated from 8 rows, one thread)\n", "the naive full distance matrix",
           naive_estimate(&g, 8));
    for (uint32_t r = 0; r < g.n; r++)
        free(g.vec[r]);
    free(g.vec);
    free(g.dim);
    free(g.truth);
    free(g.part);
    free(label);
    free(rep);
    return 0;
}
