/* rep_coll.c - collectives.
 *
 * On a communicator whose members are all replayed in this job the
 * collective runs for real on its carrier (same ranks, same root).  Otherwise
 * its inputs are read and its output on this rank comes from the message log,
 * laid out as the recorder logged it (rec_log.c): the output regions back to
 * back, per-peer blocks in rank order for v and w collectives.
 */
#include <stdlib.h>
#include <string.h>

#include "rep.h"

static MPI_Aint extent(MPI_Datatype t)
{
    MPI_Aint lb = 0, ext = 0;
    if (t != MPI_DATATYPE_NULL)
        PMPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

static int is_op(const ph_call *c, int a, int b, int x, int y)
{
    return c->op == a || c->op == b || c->op == x || c->op == y;
}
#define GATHER(c) is_op(c, PH_OP_GATHER, PH_OP_IGATHER, PH_OP_GATHERV, PH_OP_IGATHERV)
#define SCATTER(c) is_op(c, PH_OP_SCATTER, PH_OP_ISCATTER, PH_OP_SCATTERV, PH_OP_ISCATTERV)

static int has(const ph_call *c, int field)
{
    for (const uint8_t *f = ph_ops[c->op].fields; *f; f++)
        if (*f == field)
            return 1;
    return 0;
}

typedef struct who {
    int inter, n, me, is_root, leaf, none;
} who;

static who roles(const ph_call *c, const rep_comm *k)
{
    who w = {.inter = k->rsize > 0, .me = k->rank};
    w.n = w.inter ? k->rsize : k->size;
    w.is_root = w.inter ? c->root == MPI_ROOT : c->root == w.me;
    w.none = w.inter && c->root == MPI_PROC_NULL && has(c, PH_F_ROOT);
    w.leaf = w.inter ? c->root != MPI_ROOT && c->root != MPI_PROC_NULL : !w.is_root;
    return w;
}

/* The amounts the recorder wrote for this call: its normalisation of
 * arguments that are not significant on this rank (rec.c normalize_coll). */
int rep_coll_bytes(const ph_call *c, const rep_comm *k, uint64_t *bytes, uint64_t *rbytes)
{
    who w = roles(c, k);
    int count = c->count, rcount = c->rcount;
    MPI_Datatype dt = c->dtype, rdt = c->rdtype;
    if (w.none) {
        count = rcount = 0;
    } else if (GATHER(c)) {
        if (!w.is_root)
            rcount = 0;
        else if (w.inter)
            count = 0;
        else if (c->sbuf == MPI_IN_PLACE)
            count = c->rcounts ? c->rcounts[w.me] : c->rcount, dt = rdt;
    } else if (SCATTER(c)) {
        if (!w.is_root)
            count = 0;
        else if (w.inter)
            rcount = 0;
        else if (c->rbuf == MPI_IN_PLACE)
            rcount = c->scounts ? c->scounts[w.me] : c->count, rdt = dt;
    } else if (c->sbuf == MPI_IN_PLACE) {
        if (is_op(c, PH_OP_ALLGATHER, PH_OP_IALLGATHER, PH_OP_ALLTOALL, PH_OP_IALLTOALL))
            count = c->rcount, dt = rdt;
        else if (is_op(c, PH_OP_ALLGATHERV, PH_OP_IALLGATHERV, -1, -1))
            count = c->rcounts[w.me], dt = rdt;
    }
    *bytes = has(c, PH_F_DTYPE) ? rep_bytes(count, dt) : 0;
    if (has(c, PH_F_RDTYPE))
        *rbytes = rep_bytes(rcount, rdt);
    else
        *rbytes = has(c, PH_F_DTYPE) && has(c, PH_F_RCOUNT) ? rep_bytes(rcount, dt) : 0;
    return 0;
}

/* ---- reading the inputs -------------------------------------------------------------- */

static void touch_v(const void *buf, const int *counts, const int *displs, MPI_Datatype t,
                    const MPI_Datatype *types, int n)
{
    if (!counts || !displs || buf == MPI_IN_PLACE)
        return;
    MPI_Aint ext = types ? 1 : extent(t);
    for (int i = 0; i < n; i++)
        rep_touch((const char *)buf + (MPI_Aint)displs[i] * ext, counts[i], types ? types[i] : t);
}

/* What a real collective would read on this rank (MPI_IN_PLACE: the output buffer). */
static void touch_inputs(const ph_call *c, const rep_comm *k)
{
    who w = roles(c, k);
    const void *in = c->sbuf == MPI_IN_PLACE ? c->rbuf : c->sbuf;
    switch (c->op) {
    case PH_OP_BCAST: case PH_OP_IBCAST:
        if (!w.leaf && !w.none)
            rep_touch(c->rbuf, c->count, c->dtype);
        break;
    case PH_OP_SCATTER: case PH_OP_ISCATTER:
        if (w.is_root)
            rep_touch(c->sbuf, c->count * w.n, c->dtype);
        break;
    case PH_OP_SCATTERV: case PH_OP_ISCATTERV:
        if (w.is_root)
            touch_v(c->sbuf, c->scounts, c->sdispls, c->dtype, NULL, w.n);
        break;
    case PH_OP_ALLTOALLV: case PH_OP_IALLTOALLV:
        touch_v(c->sbuf, c->scounts, c->sdispls, c->dtype, NULL, w.n);
        break;
    case PH_OP_ALLTOALLW: case PH_OP_IALLTOALLW:
        touch_v(c->sbuf, c->scounts, c->sdispls, MPI_DATATYPE_NULL, c->stypes, w.n);
        break;
    case PH_OP_ALLTOALL: case PH_OP_IALLTOALL:
        rep_touch(c->sbuf, c->count * w.n, c->dtype);
        break;
    case PH_OP_REDUCE_SCATTER: case PH_OP_IREDUCE_SCATTER: {
        /* recvcounts has an entry per rank of the local group, even on an
         * intercommunicator (w.n is then the remote group's size) */
        int total = 0;
        for (int i = 0; c->rcounts && i < k->size; i++)
            total += c->rcounts[i];
        rep_touch(in, total, c->dtype);
        break;
    }
    case PH_OP_REDUCE_SCATTER_BLOCK: case PH_OP_IREDUCE_SCATTER_BLOCK:
        rep_touch(in, c->rcount * w.n, c->dtype);
        break;
    default:
        if (!(w.none && (GATHER(c) || c->op == PH_OP_REDUCE || c->op == PH_OP_IREDUCE)))
            rep_touch(in, c->count, c->dtype);
        break;
    }
}

/* ---- the output, from the log ---------------------------------------------------------- */

typedef struct region {
    void *buf;
    int count;
    MPI_Datatype type;
} region;

/* The output regions of c on this rank, as rec_log.c logged them; *v may be
 * replaced by a malloc'd array for v and w collectives (the caller frees). */
static int regions(const ph_call *c, const rep_comm *k, region **v)
{
    who w = roles(c, k);
    region *one = *v;
    switch (c->op) {
    case PH_OP_BCAST: case PH_OP_IBCAST:
        return w.leaf ? (one[0] = (region){c->rbuf, c->count, c->dtype}, 1) : 0;
    case PH_OP_REDUCE: case PH_OP_IREDUCE:
        return w.is_root ? (one[0] = (region){c->rbuf, c->count, c->dtype}, 1) : 0;
    case PH_OP_ALLREDUCE: case PH_OP_IALLREDUCE: case PH_OP_SCAN: case PH_OP_ISCAN:
    case PH_OP_EXSCAN: case PH_OP_IEXSCAN:
        return one[0] = (region){c->rbuf, c->count, c->dtype}, 1;
    case PH_OP_REDUCE_SCATTER_BLOCK: case PH_OP_IREDUCE_SCATTER_BLOCK:
        return one[0] = (region){c->rbuf, c->rcount, c->dtype}, 1;
    case PH_OP_REDUCE_SCATTER: case PH_OP_IREDUCE_SCATTER:
        return one[0] = (region){c->rbuf, c->rcounts[w.me], c->dtype}, 1;
    case PH_OP_GATHER: case PH_OP_IGATHER:
        return w.is_root ? (one[0] = (region){c->rbuf, c->rcount * w.n, c->rdtype}, 1) : 0;
    case PH_OP_SCATTER: case PH_OP_ISCATTER: case PH_OP_SCATTERV: case PH_OP_ISCATTERV:
        if ((w.leaf || !w.inter) && c->rbuf != MPI_IN_PLACE && !(w.inter && w.is_root))
            return one[0] = (region){c->rbuf, c->rcount, c->rdtype}, 1;
        return 0;
    case PH_OP_ALLGATHER: case PH_OP_IALLGATHER: case PH_OP_ALLTOALL: case PH_OP_IALLTOALL:
        return one[0] = (region){c->rbuf, c->rcount * w.n, c->rdtype}, 1;
    case PH_OP_GATHERV: case PH_OP_IGATHERV: case PH_OP_ALLGATHERV: case PH_OP_IALLGATHERV:
    case PH_OP_ALLTOALLV: case PH_OP_IALLTOALLV: case PH_OP_ALLTOALLW: case PH_OP_IALLTOALLW: {
        if ((c->op == PH_OP_GATHERV || c->op == PH_OP_IGATHERV) && !w.is_root)
            return 0;
        int wtypes = c->op == PH_OP_ALLTOALLW || c->op == PH_OP_IALLTOALLW;
        MPI_Aint ext = wtypes ? 1 : extent(c->rdtype);
        *v = rep_xmalloc((size_t)w.n * sizeof **v);
        for (int i = 0; i < w.n; i++)
            (*v)[i] = (region){(char *)c->rbuf + (MPI_Aint)c->rdispls[i] * ext, c->rcounts[i],
                               wtypes ? c->rtypes[i] : c->rdtype};
        return w.n;
    }
    default:
        return 0;
    }
}

void rep_coll_deliver(const ph_call *c, rep_comm *k, uint32_t slot)
{
    region one[1], *rg = one;
    int n = regions(c, k, &rg);
    uint64_t want = 0, len = 0;
    for (int i = 0; i < n; i++)
        want += rep_bytes(rg[i].count, rg[i].type);
    const uint8_t *data = n ? rep_log_data(rep.k, slot, &len) : NULL;
    if (n && !data)
        rep_die("%s: the message log has no output for this collective (communicator %u): the "
                "log is truncated, or not this run's", ph_ops[c->op].name, k->id);
    if (n && len != want)
        rep_die("%s: the log holds %llu bytes of output, the call expects %llu", ph_ops[c->op].name,
                (unsigned long long)len, (unsigned long long)want);
    int pos = 0;
    for (int i = 0; i < n; i++)
        if (rg[i].count > 0 && rg[i].type != MPI_DATATYPE_NULL)
            PMPI_Unpack(data, (int)len, &pos, rg[i].buf, rg[i].count, rg[i].type, MPI_COMM_SELF);
    if (rg != one)
        free(rg);
}

/* ---- the real thing ---------------------------------------------------------------------- */

static int real_coll(const ph_call *c, MPI_Comm cc, MPI_Request *r)
{
    const void *sb = c->sbuf;
    void *rb = c->rbuf;
    switch (c->op) {
    case PH_OP_BARRIER: return PMPI_Barrier(cc);
    case PH_OP_IBARRIER: return PMPI_Ibarrier(cc, r);
    case PH_OP_BCAST: return PMPI_Bcast(rb, c->count, c->dtype, c->root, cc);
    case PH_OP_IBCAST: return PMPI_Ibcast(rb, c->count, c->dtype, c->root, cc, r);
    case PH_OP_REDUCE: return PMPI_Reduce(sb, rb, c->count, c->dtype, c->mop, c->root, cc);
    case PH_OP_IREDUCE: return PMPI_Ireduce(sb, rb, c->count, c->dtype, c->mop, c->root, cc, r);
    case PH_OP_ALLREDUCE: return PMPI_Allreduce(sb, rb, c->count, c->dtype, c->mop, cc);
    case PH_OP_IALLREDUCE: return PMPI_Iallreduce(sb, rb, c->count, c->dtype, c->mop, cc, r);
    case PH_OP_SCAN: return PMPI_Scan(sb, rb, c->count, c->dtype, c->mop, cc);
    case PH_OP_ISCAN: return PMPI_Iscan(sb, rb, c->count, c->dtype, c->mop, cc, r);
    case PH_OP_EXSCAN: return PMPI_Exscan(sb, rb, c->count, c->dtype, c->mop, cc);
    case PH_OP_IEXSCAN: return PMPI_Iexscan(sb, rb, c->count, c->dtype, c->mop, cc, r);
    case PH_OP_REDUCE_SCATTER: return PMPI_Reduce_scatter(sb, rb, c->rcounts, c->dtype, c->mop, cc);
    case PH_OP_IREDUCE_SCATTER:
        return PMPI_Ireduce_scatter(sb, rb, c->rcounts, c->dtype, c->mop, cc, r);
    case PH_OP_REDUCE_SCATTER_BLOCK:
        return PMPI_Reduce_scatter_block(sb, rb, c->rcount, c->dtype, c->mop, cc);
    case PH_OP_IREDUCE_SCATTER_BLOCK:
        return PMPI_Ireduce_scatter_block(sb, rb, c->rcount, c->dtype, c->mop, cc, r);
    case PH_OP_GATHER: return PMPI_Gather(sb, c->count, c->dtype, rb, c->rcount, c->rdtype, c->root, cc);
    case PH_OP_IGATHER:
        return PMPI_Igather(sb, c->count, c->dtype, rb, c->rcount, c->rdtype, c->root, cc, r);
    case PH_OP_GATHERV:
        return PMPI_Gatherv(sb, c->count, c->dtype, rb, c->rcounts, c->rdispls, c->rdtype, c->root, cc);
    case PH_OP_IGATHERV:
        return PMPI_Igatherv(sb, c->count, c->dtype, rb, c->rcounts, c->rdispls, c->rdtype, c->root,
                             cc, r);
    case PH_OP_SCATTER:
        return PMPI_Scatter(sb, c->count, c->dtype, rb, c->rcount, c->rdtype, c->root, cc);
    case PH_OP_ISCATTER:
        return PMPI_Iscatter(sb, c->count, c->dtype, rb, c->rcount, c->rdtype, c->root, cc, r);
    case PH_OP_SCATTERV:
        return PMPI_Scatterv(sb, c->scounts, c->sdispls, c->dtype, rb, c->rcount, c->rdtype, c->root, cc);
    case PH_OP_ISCATTERV:
        return PMPI_Iscatterv(sb, c->scounts, c->sdispls, c->dtype, rb, c->rcount, c->rdtype, c->root,
                              cc, r);
    case PH_OP_ALLGATHER: return PMPI_Allgather(sb, c->count, c->dtype, rb, c->rcount, c->rdtype, cc);
    case PH_OP_IALLGATHER:
        return PMPI_Iallgather(sb, c->count, c->dtype, rb, c->rcount, c->rdtype, cc, r);
    case PH_OP_ALLGATHERV:
        return PMPI_Allgatherv(sb, c->count, c->dtype, rb, c->rcounts, c->rdispls, c->rdtype, cc);
    case PH_OP_IALLGATHERV:
        return PMPI_Iallgatherv(sb, c->count, c->dtype, rb, c->rcounts, c->rdispls, c->rdtype, cc, r);
    case PH_OP_ALLTOALL: return PMPI_Alltoall(sb, c->count, c->dtype, rb, c->rcount, c->rdtype, cc);
    case PH_OP_IALLTOALL:
        return PMPI_Ialltoall(sb, c->count, c->dtype, rb, c->rcount, c->rdtype, cc, r);
    case PH_OP_ALLTOALLV:
        return PMPI_Alltoallv(sb, c->scounts, c->sdispls, c->dtype, rb, c->rcounts, c->rdispls,
                              c->rdtype, cc);
    case PH_OP_IALLTOALLV:
        return PMPI_Ialltoallv(sb, c->scounts, c->sdispls, c->dtype, rb, c->rcounts, c->rdispls,
                               c->rdtype, cc, r);
    case PH_OP_ALLTOALLW:
        return PMPI_Alltoallw(sb, c->scounts, c->sdispls, c->stypes, rb, c->rcounts, c->rdispls,
                              c->rtypes, cc);
    case PH_OP_IALLTOALLW:
        return PMPI_Ialltoallw(sb, c->scounts, c->sdispls, c->stypes, rb, c->rcounts, c->rdispls,
                               c->rtypes, cc, r);
    default:
        rep_die("%s is not replayed", ph_ops[c->op].name);
    }
}

static int runs_real(const rep_comm *k) { return !rep.isolated && k->all_inside && k->carrier != MPI_COMM_NULL; }

void rep_coll(ph_call *c, rep_comm *k)
{
    if (runs_real(k)) {
        c->rc = real_coll(c, k->carrier, NULL);
        return;
    }
    touch_inputs(c, k);
    rep_coll_deliver(c, k, 0);
}

void rep_icoll(ph_call *c, rep_comm *k)
{
    rep_req *q = rep_req_new(c, RQ_COLL);
    q->comm = k;
    if (runs_real(k)) {
        c->rc = real_coll(c, k->carrier, &q->real);
        return;
    }
    touch_inputs(c, k);
    /* The output is written at completion: keep the arguments.  The arrays are
     * the application's (valid until then), except Fortran's converted types. */
    q->coll = rep_xmalloc(sizeof *q->coll);
    *q->coll = *c;
    q->coll->rtypes = NULL;
    if (c->rtypes) {
        int n = k->rsize ? k->rsize : k->size;
        MPI_Datatype *t = rep_xmalloc((size_t)n * sizeof *t);
        memcpy(t, c->rtypes, (size_t)n * sizeof *t);
        q->coll->rtypes = t;
    }
}
