/* rep_topo.c - virtual process topologies: Cart_*, Graph_* and
 * Dist_graph_neighbors* answered as in the recorded run (rep_topo.h). */
#include <stdlib.h>
#include <string.h>

#include "rep_topo.h"

static int *dup_ints(const int *v, int n)
{
    int *d = rep_xmalloc((size_t)(n > 0 ? n : 1) * sizeof *d);
    if (n > 0 && v)
        memcpy(d, v, (size_t)n * sizeof *d);
    return d;
}

static int arg_int(const ph_call *c, int i) { return *(const int *)c->args[i]; }
static const int *arg_ints(const ph_call *c, int i) { return (const int *)c->args[i]; }

static rep_topo *cart(int ndims, const int *dims, const int *periods)
{
    rep_topo *t = calloc(1, sizeof *t);
    if (!t)
        rep_die("out of memory");
    t->kind = MPI_CART;
    t->ndims = ndims;
    t->dims = dup_ints(dims, ndims);
    t->periods = dup_ints(periods, ndims);
    for (int i = 0; i < ndims; i++)
        t->periods[i] = t->periods[i] != 0; /* a Fortran .true. is not always 1 */
    return t;
}

static rep_topo *cart_sub(const rep_topo *p, const int *remain)
{
    if (!p || p->kind != MPI_CART)
        rep_die("MPI_Cart_sub on a communicator without a recorded cartesian topology");
    int d[64], per[64], n = 0;
    for (int i = 0; i < p->ndims && n < 64; i++)
        if (remain[i]) {
            d[n] = p->dims[i];
            per[n++] = p->periods[i];
        }
    return cart(n, d, per);
}

static rep_topo *graph(int nnodes, const int *index, const int *edges)
{
    rep_topo *t = calloc(1, sizeof *t);
    if (!t)
        rep_die("out of memory");
    t->kind = MPI_GRAPH;
    t->nnodes = nnodes;
    t->nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    t->index = dup_ints(index, nnodes);
    t->edges = dup_ints(edges, t->nedges);
    return t;
}

static rep_topo *dist_adjacent(const ph_call *c)
{
    rep_topo *t = calloc(1, sizeof *t);
    if (!t)
        rep_die("out of memory");
    t->kind = MPI_DIST_GRAPH;
    t->known = 1;
    t->indeg = arg_int(c, 1);
    t->outdeg = arg_int(c, 4);
    t->sources = dup_ints(arg_ints(c, 2), t->indeg);
    t->dests = dup_ints(arg_ints(c, 5), t->outdeg);
    /* weights only from C (MPI_UNWEIGHTED is a different sentinel in Fortran) */
    t->weighted = !c->fortran && arg_ints(c, 3) != MPI_UNWEIGHTED && arg_ints(c, 3) != MPI_WEIGHTS_EMPTY;
    t->sw = t->weighted ? dup_ints(arg_ints(c, 3), t->indeg) : NULL;
    t->dw = t->weighted ? dup_ints(arg_ints(c, 6), t->outdeg) : NULL;
    return t;
}

rep_topo *rep_topo_new(const ph_call *c, const rep_comm *parent, const rep_comm *k)
{
    (void)k;
    switch (c->op) {
    case PH_OP_CART_CREATE: return cart(arg_int(c, 1), arg_ints(c, 2), arg_ints(c, 3));
    case PH_OP_CART_SUB: return cart_sub(parent ? parent->topo : NULL, arg_ints(c, 1));
    case PH_OP_GRAPH_CREATE: return graph(arg_int(c, 1), arg_ints(c, 2), arg_ints(c, 3));
    case PH_OP_DIST_GRAPH_CREATE_ADJACENT: return dist_adjacent(c);
    case PH_OP_DIST_GRAPH_CREATE: {
        rep_topo *t = calloc(1, sizeof *t);
        if (!t)
            rep_die("out of memory");
        t->kind = MPI_DIST_GRAPH; /* neighbours unknown: only Topo_test answers */
        return t;
    }
    default: return NULL;
    }
}

void rep_topo_free(rep_topo *t)
{
    if (!t)
        return;
    free(t->dims);
    free(t->periods);
    free(t->index);
    free(t->edges);
    free(t->sources);
    free(t->dests);
    free(t->sw);
    free(t->dw);
    free(t);
}

/* ---- the local calls ------------------------------------------------------------ */

static const rep_topo *topo_of(MPI_Comm comm, int kind)
{
    rep_comm *k = rep.active ? rep_comm_of(comm) : NULL;
    if (!k)
        return NULL;
    if (!k->topo || k->topo->kind != kind)
        rep_die("communicator %u has no recorded %s topology", k->id,
                kind == MPI_CART ? "cartesian" : kind == MPI_GRAPH ? "graph" : "distributed graph");
    return k->topo;
}

static void coords_of(const rep_topo *t, int rank, int *coords, int max)
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        int d = t->dims[i] > 0 ? t->dims[i] : 1;
        if (i < max)
            coords[i] = rank % d;
        rank /= d;
    }
}

/* Rank at coords, wrapping periodic dimensions; -1 off a non-periodic edge. */
static int rank_at(const rep_topo *t, const int *coords)
{
    int r = 0;
    for (int i = 0; i < t->ndims; i++) {
        int x = coords[i], d = t->dims[i];
        if (t->periods[i])
            x = ((x % d) + d) % d;
        else if (x < 0 || x >= d)
            return -1;
        r = r * d + x;
    }
    return r;
}

int ph_local_Cart_coords(int *rc, MPI_Comm comm, int rank, int maxdims, int coords[])
{
    const rep_topo *t = topo_of(comm, MPI_CART);
    if (!t)
        return 0;
    coords_of(t, rank, coords, maxdims);
    *rc = MPI_SUCCESS;
    return 1;
}

int ph_local_Cart_rank(int *rc, MPI_Comm comm, const int coords[], int *rank)
{
    const rep_topo *t = topo_of(comm, MPI_CART);
    if (!t)
        return 0;
    int r = rank_at(t, coords);
    *rc = r < 0 ? MPI_ERR_ARG : MPI_SUCCESS;
    if (r >= 0)
        *rank = r;
    return 1;
}

int ph_local_Cart_shift(int *rc, MPI_Comm comm, int direction, int disp, int *source, int *dest)
{
    const rep_topo *t = topo_of(comm, MPI_CART);
    if (!t)
        return 0;
    rep_comm *k = rep_comm_of(comm);
    int c[64];
    if (direction < 0 || direction >= t->ndims || t->ndims > 64) {
        *rc = MPI_ERR_ARG;
        return 1;
    }
    coords_of(t, k->rank, c, 64);
    int me = c[direction];
    c[direction] = me + disp;
    int r = rank_at(t, c);
    *dest = r < 0 ? MPI_PROC_NULL : r;
    c[direction] = me - disp;
    r = rank_at(t, c);
    *source = r < 0 ? MPI_PROC_NULL : r;
    *rc = MPI_SUCCESS;
    return 1;
}

int ph_local_Cart_get(int *rc, MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    const rep_topo *t = topo_of(comm, MPI_CART);
    if (!t)
        return 0;
    for (int i = 0; i < t->ndims && i < maxdims; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
    }
    coords_of(t, rep_comm_of(comm)->rank, coords, maxdims);
    *rc = MPI_SUCCESS;
    return 1;
}

int ph_local_Cartdim_get(int *rc, MPI_Comm comm, int *ndims)
{
    const rep_topo *t = topo_of(comm, MPI_CART);
    if (!t)
        return 0;
    *ndims = t->ndims;
    *rc = MPI_SUCCESS;
    return 1;
}

int ph_local_Topo_test(int *rc, MPI_Comm comm, int *status)
{
    rep_comm *k = rep.active ? rep_comm_of(comm) : NULL;
    if (!k)
        return 0;
    *status = k->topo ? k->topo->kind : MPI_UNDEFINED;
    *rc = MPI_SUCCESS;
    return 1;
}

int ph_local_Graph_neighbors_count(int *rc, MPI_Comm comm, int rank, int *nneighbors)
{
    const rep_topo *t = topo_of(comm, MPI_GRAPH);
    if (!t)
        return 0;
    *rc = rank < 0 || rank >= t->nnodes ? MPI_ERR_RANK : MPI_SUCCESS;
    if (*rc == MPI_SUCCESS)
        *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    return 1;
}

int ph_local_Graph_neighbors(int *rc, MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    const rep_topo *t = topo_of(comm, MPI_GRAPH);
    if (!t)
        return 0;
    *rc = rank < 0 || rank >= t->nnodes ? MPI_ERR_RANK : MPI_SUCCESS;
    for (int i = rank ? t->index[rank - 1] : 0, n = 0; *rc == MPI_SUCCESS && i < t->index[rank] &&
         n < maxneighbors; i++)
        neighbors[n++] = t->edges[i];
    return 1;
}

static const rep_topo *dist_of(MPI_Comm comm)
{
    const rep_topo *t = topo_of(comm, MPI_DIST_GRAPH);
    if (t && !t->known)
        rep_die("the neighbours of a MPI_Dist_graph_create communicator are not replayed "
                "(only MPI_Dist_graph_create_adjacent)");
    return t;
}

int ph_local_Dist_graph_neighbors_count(int *rc, MPI_Comm comm, int *inneighbors, int *outneighbors,
                                        int *weighted)
{
    const rep_topo *t = dist_of(comm);
    if (!t)
        return 0;
    *inneighbors = t->indeg;
    *outneighbors = t->outdeg;
    *weighted = t->weighted;
    *rc = MPI_SUCCESS;
    return 1;
}

int ph_local_Dist_graph_neighbors(int *rc, MPI_Comm comm, int maxindegree, int sources[],
                                  int sourceweights[], int maxoutdegree, int destinations[],
                                  int destweights[])
{
    const rep_topo *t = dist_of(comm);
    if (!t)
        return 0;
    for (int i = 0; i < t->indeg && i < maxindegree; i++) {
        sources[i] = t->sources[i];
        if (t->weighted && sourceweights != MPI_UNWEIGHTED)
            sourceweights[i] = t->sw[i];
    }
    for (int i = 0; i < t->outdeg && i < maxoutdegree; i++) {
        destinations[i] = t->dests[i];
        if (t->weighted && destweights != MPI_UNWEIGHTED)
            destweights[i] = t->dw[i];
    }
    *rc = MPI_SUCCESS;
    return 1;
}
