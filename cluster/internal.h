/* internal.h - helpers shared by the cluster library's files, not its API. */
#ifndef PH_CLUSTER_INTERNAL_H
#define PH_CLUSTER_INTERNAL_H

#include "cluster.h"

/* Runs fn over [0, n) in chunks handed out dynamically to nthreads threads
 * (the caller's thread is one of them): rows of a triangular matrix differ
 * in cost, so a static split would leave a core idle. */
typedef void (*cl_task)(void *ctx, uint64_t begin, uint64_t end);
void cl_parallel(int nthreads, uint64_t n, uint64_t chunk, cl_task fn, void *ctx);

/* Condensed upper triangle of an m x m symmetric matrix, i < j. */
static inline size_t cl_tri(size_t m, size_t i, size_t j)
{
    return i * m - i * (i + 1) / 2 + (j - i - 1);
}

/* A merge of two local clusters in the order the chain found it; a and b
 * are indices of the points whose slots the clusters occupied. */
typedef struct cl_raw_merge {
    uint32_t a, b;
    float height;
} cl_raw_merge;

/* Complete linkage by the nearest-neighbour chain on a condensed matrix
 * (destroyed).  Writes m - 1 merges. */
void cl_nnchain(float *dist, uint32_t m, cl_raw_merge *out);

/* Exact distances of the points idx[0..m) into a condensed matrix.  With
 * prune != NULL, a pair it returns nonzero for is set to INFINITY instead. */
typedef int (*cl_prune_fn)(void *ctx, uint32_t i, uint32_t j); /* local indices */
float *cl_distance_matrix(const cl_points *p, const uint32_t *idx, uint32_t m, int nthreads,
                          cl_prune_fn prune, void *pctx, uint64_t *computed);

/* Union-find over n elements. */
uint32_t cl_find(uint32_t *parent, uint32_t x);
void cl_union(uint32_t *parent, uint32_t a, uint32_t b);

/* Mean of the vectors idx[0..m) (all of dimension d), computed in double. */
void cl_mean(const cl_points *p, const uint32_t *idx, uint32_t m, uint32_t d, float *out);

/* Indices 0..n-1 sorted by (part, index): the points of each part together. */
uint32_t *cl_sort_by_part(uint32_t n, const uint64_t *part);

/* The same, then by dimension: the classes whose points can be compared. */
uint32_t *cl_sort_by_part_dim(const cl_points *p);
/* Is idx[i] the first of a new (part, dimension) class in that order? */
static inline int cl_new_class(const cl_points *p, const uint32_t *idx, uint32_t i)
{
    return i == 0 || p->part[idx[i]] != p->part[idx[i - 1]] || p->dim[idx[i]] != p->dim[idx[i - 1]];
}

#endif
