/* rep_topo.h - virtual process topologies (rep_group.c).
 *
 * A carrier has no topology of the recorded size, so Cart_*, Graph_* and
 * Dist_graph_neighbors* are answered from the arguments of the call that
 * created the communicator (ph_call.args) and its recorded membership. */
#ifndef REP_TOPO_H
#define REP_TOPO_H

#include "rep.h"

struct rep_topo {
    int kind;            /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    int ndims;           /* cart */
    int *dims, *periods;
    int nnodes, nedges;  /* graph: the whole graph */
    int *index, *edges;
    int known;           /* dist graph: 1 when created adjacent (this rank's lists known) */
    int indeg, outdeg, weighted;
    int *sources, *sw, *dests, *dw;
};

/* The topology the creating call c gives new communicator k (NULL: none);
 * parent is the communicator it was created from (Cart_sub needs its dims). */
rep_topo *rep_topo_new(const ph_call *c, const rep_comm *parent, const rep_comm *k);
void rep_topo_free(rep_topo *t);

#endif
