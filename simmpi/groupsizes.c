/* groupsizes.c - how much each rank of an intercommunicator's group moves in
 * a Gatherv, Scatterv or Allgatherv, from the other group's events.
 *
 * Open MPI 4.1 (coll/inter) runs these through the group's rank 0: it
 * gathers its group's data and sends the whole to the root (Gatherv),
 * scatters the root's among its group (Scatterv), or swaps its group's with
 * the other rank 0 (Allgatherv).  That rank's own event holds only its own
 * count; its group's are in the other group's events: the root's receive
 * or send sizes, or any rank's Allgatherv receive sizes.  So the simulator
 * and the export take them from one scan of the whole trace, made the first
 * time a trace needs it.
 *
 * A call is known by its communicator side and its position among the
 * side's blocking Gatherv, Scatterv and Allgatherv calls: MPI has every
 * rank of both groups call an intercommunicator's collectives in one
 * order.  (Their I-forms run in libnbc, which sends straight to the
 * remote ranks: each rank's own sizes do.)  One event a group and call is kept: the root's, or the
 * Allgatherv's at the observing group's rank 0.
 */
#include <stdlib.h>
#include <string.h>

#include "simmpi.h"

typedef struct gs_entry {
    uint32_t comm;   /* the side whose local group the sizes are */
    uint32_t order;  /* the scan's, so that the first kept wins */
    uint64_t k;      /* the call's position among the side's */
    uint64_t *v;     /* the group's size bytes, by group rank */
} gs_entry;

struct simmpi_group_sizes {
    gs_entry *e;
    size_t n, cap;
};

int simmpi_inter_group_sized(simmpi_coll c)
{
    return c == SIMMPI_GATHERV || c == SIMMPI_SCATTERV || c == SIMMPI_ALLGATHERV;
}

/* The other group's sizes ev gives, when its rank is the one kept (world
 * rank `rank`, on side ci); *n their count. */
static const uint64_t *observed(const ph_event *ev, int coll, const ph_comm_info *ci, uint32_t rank, uint32_t *n)
{
    if (coll == SIMMPI_ALLGATHERV) {
        *n = ev->nrbytes;
        return ci->size && ci->members[0] == (int32_t)rank ? ev->rbytes_v : NULL;
    }
    if (ev->root != PH_ROOT)
        return NULL;
    *n = coll == SIMMPI_GATHERV ? ev->nrbytes : ev->nsbytes;
    return coll == SIMMPI_GATHERV ? ev->rbytes_v : ev->sbytes;
}

static int keep(simmpi_group_sizes *g, uint32_t comm, uint64_t k, const uint64_t *v, uint32_t n)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 16;
        gs_entry *e = realloc(g->e, cap * sizeof *e);
        if (!e)
            return -1;
        g->e = e;
        g->cap = cap;
    }
    uint64_t *copy = malloc((n ? n : 1) * sizeof *copy);
    if (!copy)
        return -1;
    memcpy(copy, v, n * sizeof *copy);
    g->e[g->n] = (gs_entry){.comm = comm, .order = (uint32_t)g->n, .k = k, .v = copy};
    g->n++;
    return 0;
}

/* One rank's events; calls[c]: its blocking Gatherv, Scatterv and Allgatherv on side c so far. */
static int scan_rank(ph_trace *t, uint32_t rank, uint64_t *calls, simmpi_group_sizes *g, ph_err *err)
{
    ph_rank_reader *r = ph_rank_open(t, rank, err);
    if (!r)
        return -1;
    ph_event ev;
    int rc;
    while ((rc = ph_rank_next(r, &ev, err)) > 0) {
        int coll = ph_ops[ev.op].kind == PH_K_COLL ? simmpi_coll_of(ev.op) : -1; /* libnbc's I-forms need none */
        const ph_comm_info *ci = coll >= 0 && simmpi_inter_group_sized((simmpi_coll)coll)
                                     ? ph_trace_comm(t, ev.comm)
                                     : NULL;
        if (!ci || !ci->remote_size)
            continue;
        uint64_t k = calls[ev.comm]++;
        uint32_t n = 0, other = ph_trace_comm_other_side(t, ev.comm);
        const uint64_t *v = observed(&ev, coll, ci, rank, &n);
        if (v && n >= ci->remote_size && other != ev.comm && keep(g, other, k, v, ci->remote_size) < 0) {
            ph_err_set(err, "%s: out of memory", ph_trace_dir(t));
            rc = -1;
            break;
        }
    }
    ph_rank_close(r);
    return rc;
}

static int by_call(const void *a, const void *b)
{
    const gs_entry *x = a, *y = b;
    if (x->comm != y->comm)
        return x->comm < y->comm ? -1 : 1;
    if (x->k != y->k)
        return x->k < y->k ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

int simmpi_group_sizes_scan(ph_trace *t, simmpi_group_sizes **out, ph_err *err)
{
    uint32_t nc = ph_trace_ncomms(t), inter = 0;
    for (uint32_t c = 0; c < nc; c++)
        inter |= ph_trace_comm(t, c)->remote_size != 0;
    simmpi_group_sizes *g = calloc(1, sizeof *g);
    uint64_t *calls = inter ? malloc(nc * sizeof *calls) : NULL;
    if (!g || (inter && !calls)) {
        free(g);
        ph_err_set(err, "%s: out of memory", ph_trace_dir(t));
        return -1;
    }
    for (uint32_t r = 0; inter && r < ph_trace_nranks(t); r++) {
        memset(calls, 0, nc * sizeof *calls);
        if (scan_rank(t, r, calls, g, err) < 0) {
            free(calls);
            simmpi_group_sizes_free(g);
            return -1;
        }
    }
    free(calls);
    if (g->n) /* none: g->e is NULL, which qsort may not take */
        qsort(g->e, g->n, sizeof *g->e, by_call);
    size_t n = 0; /* one a call: the first kept */
    for (size_t i = 0; i < g->n; i++) {
        if (n && g->e[n - 1].comm == g->e[i].comm && g->e[n - 1].k == g->e[i].k)
            free(g->e[i].v);
        else
            g->e[n++] = g->e[i];
    }
    g->n = n;
    *out = g;
    return 0;
}

const uint64_t *simmpi_group_sizes_get(const simmpi_group_sizes *g, uint32_t comm, uint64_t k)
{
    size_t lo = 0, hi = g ? g->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const gs_entry *e = &g->e[mid];
        if (e->comm == comm && e->k == k)
            return e->v;
        if (e->comm < comm || (e->comm == comm && e->k < k))
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

void simmpi_group_sizes_free(simmpi_group_sizes *g)
{
    for (size_t i = 0; g && i < g->n; i++)
        free(g->e[i].v);
    if (g)
        free(g->e);
    free(g);
}
