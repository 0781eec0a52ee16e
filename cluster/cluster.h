/* cluster.h - representative ranks and iterations (PHANTOM, Zhai et al., Section 5).
 *
 * Vectors in, groups out, with no dependency on the command line:
 *
 *   points     one sequential computation vector per rank (Definition 2: the
 *              gaps between consecutive MPI calls) and a partition key.  Two
 *              points with different keys are never grouped: their distance
 *              is infinite.  Equation 1 makes it infinite when dimensions
 *              differ, which is how the command line keys points by default;
 *              keying by communication sequence (which implies equal
 *              dimensions) separates further.
 *   distance   Manhattan distance of Equation 1 (cl_distance).
 *   grouping   complete-linkage hierarchical clustering (Algorithm 1) as a
 *              dendrogram cut at a height or at a group count; an exact
 *              threshold cut that avoids most of the distance matrix
 *              (cl_threshold_cut); k-means; grouping by key alone.
 *   choosing   the representative of a group: the member closest to its mean.
 *   iterations the repeating pattern of a rank's calls (cl_find_period) and
 *              Equation 2 on its computation (cl_iteration_plan).
 *   plan       groups, representatives, replay subgroups, iterations and the
 *              saving, as groups.json (cluster/plan.c; doc/cluster.md).
 *
 * Point indices are rank numbers wherever a trace is involved.  Group labels
 * are numbered in the order of each group's lowest member.
 */
#ifndef PH_CLUSTER_H
#define PH_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "ph_trace.h" /* ph_err */

/* ---- points and distance ------------------------------------------------- */

typedef struct cl_points {
    uint32_t n;
    const uint32_t *dim;       /* dimension of each vector */
    const uint64_t *part;      /* partition key: different keys, infinite distance */
    const float *const *vec;   /* vec[i] holds dim[i] values (ns) */
} cl_points;

/* Equation 1: sum of |a_i - b_i|, or INFINITY when the dimensions differ. */
double cl_distance(const float *a, uint32_t da, const float *b, uint32_t db);
/* The same for equal dimensions, without the check (the hot loop). */
double cl_l1(const float *a, const float *b, size_t d);

/* Threads used by the parallel parts (distance matrices, means, loading).
 * 0: one per online CPU.  Never more than the work needs. */
int cl_threads(int requested);

/* ---- dendrogram ------------------------------------------------------------ */

/* One merge, in the convention of SciPy's linkage matrix: ids below n are
 * points, id n+s is the cluster made by merge s.  Merges are in increasing
 * height; points of different parts join last, at height INFINITY. */
typedef struct cl_merge {
    uint32_t left, right, size;
    double height;
} cl_merge;

typedef struct cl_dendrogram {
    uint32_t n;         /* points; n - 1 merges (none for n <= 1) */
    cl_merge *merges;
} cl_dendrogram;

/* Complete-linkage hierarchical clustering of every part (nearest-neighbour
 * chain over the part's full distance matrix: O(m^2) memory and linkage time,
 * O(m^2 d) for the distances), joined into one dendrogram. */
cl_dendrogram *cl_hierarchical(const cl_points *p, int nthreads, ph_err *err);
void cl_dendrogram_free(cl_dendrogram *d);
/* Groups after every merge of height <= t; returns their number. */
uint32_t cl_cut_height(const cl_dendrogram *d, double t, uint32_t *label);
/* Exactly k groups; -1 with err when k is impossible (0, more than the
 * points, or fewer than the parts, which never merge). */
int cl_cut_count(const cl_dendrogram *d, uint32_t k, uint32_t *label, ph_err *err);
/* The dendrogram for people (cluster/dendro.c).  scale: the ns that are
 * 100% (the mean computation per rank); cut: a height to draw, < 0 none.
 * Text: one line per merge (SciPy's linkage matrix plus heights in % and
 * the ranks of small clusters).  SVG: the tree, leaves labelled by rank,
 * parts that never merge joined in a band marked infinity. */
int cl_dendrogram_text(const cl_dendrogram *d, double scale, FILE *out);
int cl_dendrogram_svg(const cl_dendrogram *d, double scale, double cut, const char *title, FILE *out);
/* Number of distinct parts among the points. */
uint32_t cl_count_parts(const cl_points *p);

/* ---- the exact threshold cut ---------------------------------------------- */

typedef struct cl_cut_stats {
    uint32_t parts, components, certified; /* components that needed no matrix */
    uint64_t pairs_exact;  /* exact distances computed */
    uint64_t pairs_pruned; /* pairs a lower bound settled */
} cl_cut_stats;

/* The same groups as cl_cut_height(cl_hierarchical(p), t) (up to ties in
 * merge heights), without the whole distance matrix: cheap lower bounds
 * split each part into components no group can span, a component whose
 * radius around its mean certifies a diameter <= t is one group, and only
 * the others get a (pruned) matrix and the nearest-neighbour chain.
 * Returns the number of groups, -1 on error. */
int cl_threshold_cut(const cl_points *p, double t, int nthreads, uint32_t *label,
                     cl_cut_stats *st, ph_err *err);

/* Exactly k complete-linkage groups, as cl_cut_count(cl_hierarchical(p), k)
 * (up to ties), by searching the threshold whose exact cut has k groups:
 * the number of groups only falls as the threshold grows, and between the
 * widest group's diameter and the closest groups' distance every threshold
 * gives the same groups.  Falls back to the whole dendrogram when no probe
 * lands on k (ties), so it is never wrong, only sometimes slow.  -1 with err
 * for an impossible k.  *height gets the threshold used (may be NULL). */
int cl_count_cut(const cl_points *p, uint32_t k, int nthreads, uint32_t *label, double *height,
                 cl_cut_stats *st, ph_err *err);

/* ---- other groupings ------------------------------------------------------- */

/* k-means (Lloyd, k-means++ seeding, Manhattan assignment, several seeded
 * restarts) within each part; the k clusters are spread over the parts
 * greedily by the largest drop in total distance.  -1 with err for an
 * impossible k.  Returns the number of groups. */
int cl_kmeans(const cl_points *p, uint32_t k, uint64_t seed, uint32_t *label, ph_err *err);
/* One group per distinct part key (sorting the keys: O(n log n)). */
uint32_t cl_group_by_part(uint32_t n, const uint64_t *part, uint32_t *label);

/* Renumbers labels so that groups are numbered by their lowest member. */
uint32_t cl_normalize_labels(uint32_t n, uint32_t *label);

/* For each group g < ngroups: rep[g] = the member closest (Manhattan) to the
 * group's mean vector, ties to the lowest rank; radius[g] (if not NULL) = the
 * largest distance of a member to that mean. */
int cl_representatives(const cl_points *p, const uint32_t *label, uint32_t ngroups,
                       int nthreads, uint32_t *rep, double *radius, ph_err *err);

/* ---- iterations ------------------------------------------------------------ */

/* The repeating part of an event sequence: events [start, start +
 * period * iterations) repeat every `period` events.  No repetition:
 * period = n, iterations = 1, start = 0. */
typedef struct cl_period {
    uint64_t start, period, iterations;
} cl_period;

/* tok[i]: a key of event i (operation and call site).  Windows of the
 * sequence are searched for their smallest period (KMP failure function),
 * each found period is extended to its longest run, and the one covering
 * the most events wins (the smaller period on ties).  O(n). */
void cl_find_period(const uint32_t *tok, uint64_t n, cl_period *out);

/* Equation 2 for one rank.  Computation unit i is the gap after event i, so
 * iteration j holds units [start + j*period, start + (j+1)*period).
 * limit is L of Equation 2 in ns (k% of the mean computation per rank). */
typedef struct cl_iter_plan {
    uint64_t iterations;     /* complete iterations with all their units */
    double similarity;       /* sum of Dist(c^j, c^j+1), ns */
    double limit;            /* L */
    int partial;             /* Equation 2 holds: record and replay part of it */
    uint64_t replay_iterations; /* the first r iterations replayed */
    double extrapolation_error; /* |n/r sum_{j<r} T_j - sum_j T_j|, ns */
} cl_iter_plan;
/* r is the smallest number of leading iterations whose mean iteration,
 * extrapolated to all of them, misses the loop's computation by <= limit;
 * all of them when Equation 2 fails. */
void cl_iteration_plan(const float *vec, uint64_t dim, const cl_period *per, double limit,
                       cl_iter_plan *out);

/* ---- ranks on nodes ---------------------------------------------------------- */

/* "0-3,8-11": sorted ranks as a list (malloc'd). */
char *cl_format_ranks(const uint32_t *sorted, uint32_t n);

/* ---- a trace's vectors (cluster/load.c) ----------------------------------------- */

typedef struct cl_rank {
    uint64_t events;
    uint32_t dim;       /* computation units: the gaps between events (events - 1) */
    float *vec;         /* the gaps in ns; negative ones (threads) count as 0 */
    uint64_t sig;       /* hash of the communication sequence */
    double total;       /* sum of vec: the rank's computation */
    cl_period period;   /* of the (operation, call site) sequence */
    int complete;       /* the stream ended with an END record */
} cl_rank;

typedef struct cl_trace_data {
    uint32_t n;
    cl_rank *r;
    uint64_t fingerprint; /* hash of every rank's event count and sequence */
    double mean_total;    /* mean computation per rank, ns */
} cl_trace_data;

/* Reads every rank of a trace (nthreads at a time, each with its own reader).
 * The communication sequence of a rank is, per event: operation, bytes
 * (both halves), peers relative to the rank within the communicator (so
 * ring and stencil neighbours look alike), tag, the root of a collective as
 * given (the same on every rank: the root's computation is compared, not
 * assumed different), the communicator's size and the request count.  Statuses, request
 * ids and completion order are left out: they vary from run to run. */
cl_trace_data *cl_load(const char *dir, int nthreads, ph_err *err);
void cl_trace_data_free(cl_trace_data *d);

/* ---- the plan (cluster/plan.c) --------------------------------------------------- */

typedef struct cl_group {
    uint32_t rep;          /* representative rank */
    uint32_t nmembers, nreplay;
    uint32_t *members;     /* ranks, sorted */
    uint32_t *replay;      /* the representative's node-mates, itself included, sorted */
    double radius;         /* largest member distance to the group mean, ns */
    double computation;    /* the representative's computation, ns */
    cl_period period;      /* the representative's loop */
    cl_iter_plan it;       /* Equation 2 on it */
} cl_group;

#define CL_ALL UINT64_MAX /* every iteration */

/* One subgroup replay: the ranks of a node with a representative. */
typedef struct cl_run {
    uint32_t node;
    uint64_t iterations; /* leading iterations to replay, CL_ALL: the whole run */
} cl_run;

typedef struct cl_plan {
    uint32_t nranks, ngroups, nnodes;
    uint32_t *group_of, *rep_of, *node_of; /* per rank */
    cl_group *groups;
    double mean_total;        /* mean computation per rank, ns */
    double limit;             /* L of Equation 2, ns */
    double work_full;         /* computation of every rank replayed in full, ns */
    double work_plan;         /* computation this plan replays, ns */
    uint32_t replayed_ranks;  /* ranks in some replay subgroup */
    uint32_t nruns;           /* nodes replayed: one subgroup replay each */
    cl_run *runs;
} cl_plan;

/* Representatives, replay subgroups, iterations and the saving of a grouping.
 * iter_frac is the k% of Equation 2 as a fraction. */
cl_plan *cl_plan_build(const cl_trace_data *d, const uint32_t *label, uint32_t ngroups,
                       const uint32_t *rep, const double *radius, const uint32_t *node,
                       uint32_t nnodes, double iter_frac, ph_err *err);
void cl_plan_free(cl_plan *pl);
/* The group whose iteration structure stands for the plan: the largest. */
const cl_group *cl_plan_main_group(const cl_plan *pl);

/* What identifies the trace a groups file was made from. */
typedef struct cl_identity {
    const char *path, *start_time; /* start_time may be NULL (synthetic traces) */
    uint32_t nranks;
    uint64_t fingerprint;
} cl_identity;

/* How the groups were made, for the file. */
typedef struct cl_method {
    const char *method, *partition, *map;
    double threshold_pct, threshold_ns; /* < 0: not cut at a threshold */
    uint32_t k;                         /* 0: not cut at a count */
    double iter_pct;
    uint32_t ppn;
} cl_method;

/* groups.json (doc/cluster.md); path "-" is stdout. */
int cl_plan_write(const cl_plan *pl, const cl_identity *id, const cl_method *m, const char *path,
                  ph_err *err);
/* Checks that a groups file is one and was made from this trace; on success
 * fills group_of and rep_of (nranks each) when they are not NULL. */
int cl_plan_check(const char *path, const cl_identity *id, uint32_t *group_of, uint32_t *rep_of,
                  ph_err *err);

/* ---- hashing ------------------------------------------------------------------ */

static inline uint64_t cl_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    return h;
}

/* ---- random numbers ----------------------------------------------------------- */

/* Uniform in [0, 1) from a xorshift64* state (never 0), which it advances:
 * k-means' seeding, and the tests' and benchmarks' synthetic points. */
static inline double cl_uniform(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

#endif
