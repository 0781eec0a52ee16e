/* coll_decide.c - which algorithm a collective uses, and its names.
 *
 * The tables restate Open MPI 4.1's coll/tuned fixed decision functions
 * (coll_tuned_decision_fixed.c, commutative operations: phantom traces do
 * not record the MPI_Op, and the predefined operations are commutative).
 * Each row: communicator sizes below P, then (bytes below, algorithm) pairs,
 * then 0 and the algorithm for larger messages.  Rows for "size == 2" are
 * written as P = 3.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define ALLP UINT32_MAX

static const uint32_t d_barrier[] = {4, 0, 3, 8, 0, 1, 64, 0, 3, 256, 0, 4, 512, 0, 6,
                                     1024, 0, 4, 4096, 0, 6, ALLP, 0, 4};

static const uint32_t d_bcast[] = {
    4, 32, 3, 256, 5, 512, 3, 1024, 7, 32768, 1, 131072, 5, 262144, 2, 524288, 1, 1048576, 6, 0, 5,
    8, 64, 5, 128, 6, 2048, 5, 8192, 6, 1048576, 1, 0, 2,
    16, 8, 7, 64, 5, 4096, 7, 16384, 5, 32768, 6, 0, 1,
    32, 4096, 7, 1048576, 6, 0, 8,
    64, 2048, 6, 0, 7,
    128, 0, 7,
    256, 2, 6, 16384, 5, 32768, 1, 65536, 5, 0, 7,
    1024, 16384, 7, 32768, 4, 0, 7,
    2048, 524288, 7, 0, 8,
    4096, 262144, 7, 0, 8,
    ALLP, 8192, 7, 16384, 5, 262144, 7, 0, 8};

static const uint32_t d_reduce[] = {
    4, 8, 7, 16, 4, 32, 3, 262144, 1, 524288, 3, 1048576, 2, 0, 3,
    8, 4096, 4, 65536, 2, 262144, 5, 524288, 1, 1048576, 5, 0, 1,
    16, 8192, 4, 0, 5,
    32, 4096, 4, 0, 5,
    256, 0, 5,
    512, 8192, 5, 16384, 6, 0, 5,
    2048, 0, 5,
    4096, 512, 5, 1024, 6, 8192, 5, 16384, 6, 0, 5,
    ALLP, 16, 5, 32, 6, 1024, 5, 2048, 6, 8192, 5, 16384, 6, 0, 5};

static const uint32_t d_allreduce[] = {
    4, 8, 4, 4096, 3, 8192, 4, 16384, 3, 65536, 4, 262144, 5, 0, 6,
    8, 16, 4, 8192, 3, 0, 6,
    16, 8192, 3, 0, 6,
    32, 64, 5, 4096, 3, 0, 6,
    64, 128, 5, 0, 6,
    128, 262144, 3, 0, 6,
    256, 131072, 2, 262144, 3, 0, 6,
    512, 4096, 2, 0, 6,
    2048, 2048, 2, 16384, 3, 0, 6,
    4096, 2048, 2, 4096, 5, 16384, 3, 0, 6,
    ALLP, 2048, 2, 16384, 5, 32768, 3, 0, 6};

static const uint32_t d_alltoall[] = {
    3, 2, 2, 4, 5, 16, 2, 64, 5, 256, 2, 4096, 5, 32768, 2, 262144, 4, 1048576, 5, 0, 2,
    8, 8192, 4, 16384, 1, 65536, 4, 524288, 1, 1048576, 2, 0, 1,
    16, 262144, 4, 0, 1,
    32, 4, 4, 512, 3, 8192, 4, 32768, 1, 262144, 4, 524288, 1, 0, 4,
    64, 512, 3, 524288, 1, 0, 4,
    128, 1024, 3, 2048, 1, 4096, 4, 262144, 1, 0, 2,
    256, 1024, 3, 2048, 4, 262144, 1, 0, 2,
    512, 1024, 3, 8192, 4, 32768, 1, 0, 2,
    1024, 512, 3, 8192, 4, 16384, 1, 131072, 4, 262144, 1, 0, 2,
    2048, 512, 3, 1024, 4, 2048, 1, 16384, 4, 262144, 1, 0, 4,
    4096, 1024, 3, 4096, 4, 8192, 1, 131072, 4, 0, 1,
    ALLP, 2048, 3, 8192, 4, 16384, 1, 32768, 4, 65536, 1, 0, 4};

static const uint32_t d_alltoallv[] = {4, 0, 2, 64, 0, 1, 128, 0, 2, 256, 0, 1, 1024, 0, 2, ALLP, 0, 1};

static const uint32_t d_allgather[] = {
    3, 0, 6,
    32, 0, 3,
    64, 1024, 3, 65536, 5, 0, 4,
    128, 512, 3, 65536, 5, 0, 4,
    256, 512, 3, 131072, 5, 524288, 4, 1048576, 5, 0, 4,
    512, 32, 3, 128, 2, 1024, 3, 131072, 5, 524288, 4, 1048576, 5, 0, 4,
    1024, 64, 3, 256, 2, 2048, 3, 0, 5,
    2048, 4, 3, 8, 2, 16, 3, 32, 2, 256, 3, 512, 2, 4096, 3, 0, 5,
    4096, 32, 2, 128, 3, 512, 2, 4096, 3, 0, 5,
    ALLP, 2, 3, 8, 2, 16, 3, 512, 2, 4096, 3, 0, 5};

static const uint32_t d_allgatherv[] = {
    3, 2048, 3, 4096, 5, 8192, 3, 0, 5,
    8, 256, 1, 4096, 4, 8192, 3, 16384, 4, 262144, 2, 0, 4,
    16, 1024, 1, 0, 2,
    32, 128, 1, 262144, 2, 0, 3,
    64, 256, 1, 8192, 2, 0, 3,
    128, 256, 1, 4096, 2, 0, 3,
    256, 1024, 2, 65536, 4, 0, 3,
    512, 1024, 2, 0, 3,
    1024, 512, 2, 1024, 1, 4096, 2, 1048576, 4, 0, 3,
    ALLP, 4096, 2, 0, 4};

static const uint32_t d_gather[] = {
    4, 2, 3, 4, 1, 32768, 2, 65536, 1, 131072, 2, 0, 3,
    8, 1024, 2, 8192, 1, 32768, 2, 262144, 1, 0, 3,
    256, 0, 2,
    512, 2048, 2, 8192, 1, 0, 2,
    ALLP, 0, 2};

static const uint32_t d_scatter[] = {
    4, 2, 3, 131072, 1, 262144, 3, 0, 1,
    8, 2048, 2, 4096, 1, 8192, 2, 32768, 1, 1048576, 3, 0, 1,
    16, 16384, 2, 1048576, 3, 0, 1,
    32, 16384, 2, 32768, 1, 0, 3,
    64, 512, 2, 8192, 3, 16384, 2, 0, 3,
    ALLP, 512, 2, 0, 3};

static const uint32_t d_reduce_scatter[] = {
    4, 65536, 3, 131072, 4, 0, 3,
    8, 8, 1, 262144, 2, 0, 3,
    32, 262144, 2, 0, 3,
    64, 64, 1, 2048, 2, 524288, 4, 0, 3,
    128, 256, 1, 512, 2, 2048, 4, 4096, 2, 0, 4,
    256, 256, 1, 512, 2, 0, 4,
    512, 256, 1, 1024, 2, 0, 4,
    1024, 512, 1, 2048, 2, 8192, 4, 16384, 2, 0, 4,
    2048, 512, 1, 4096, 2, 16384, 4, 32768, 2, 0, 4,
    4096, 512, 1, 4096, 2, 0, 4,
    ALLP, 1024, 1, 8192, 2, 0, 4};

static const uint32_t d_reduce_scatter_block[] = {
    4, 4, 2, 8, 4, 16, 3, 128, 4, 256, 3, 4096, 4, 8192, 3, 131072, 4, 0, 1,
    8, 8, 3, 32, 2, 256, 4, 8192, 3, 16384, 4, 1048576, 3, 0, 1,
    16, 4, 1, 32, 3, 128, 4, 524288, 3, 4194304, 1, 0, 4,
    32, 32, 1, 524288, 3, 2097152, 1, 4194304, 3, 0, 4,
    ALLP, 4, 3, 16, 1, 65536, 4, 262144, 1, 0, 4};

static const uint32_t d_one[] = {ALLP, 0, 1};

static const uint32_t *const tables[SIMMPI_NCOLL] = {
    [SIMMPI_BARRIER] = d_barrier, [SIMMPI_BCAST] = d_bcast, [SIMMPI_REDUCE] = d_reduce,
    [SIMMPI_ALLREDUCE] = d_allreduce, [SIMMPI_GATHER] = d_gather, [SIMMPI_GATHERV] = d_one,
    [SIMMPI_SCATTER] = d_scatter, [SIMMPI_SCATTERV] = d_one, [SIMMPI_ALLGATHER] = d_allgather,
    [SIMMPI_ALLGATHERV] = d_allgatherv, [SIMMPI_ALLTOALL] = d_alltoall,
    [SIMMPI_ALLTOALLV] = d_alltoallv, [SIMMPI_REDUCE_SCATTER] = d_reduce_scatter,
    [SIMMPI_REDUCE_SCATTER_BLOCK] = d_reduce_scatter_block, [SIMMPI_SCAN] = d_one,
    [SIMMPI_EXSCAN] = d_one};

int simmpi_coll_decide(simmpi_coll c, uint32_t size, uint64_t bytes)
{
    if ((unsigned)c >= SIMMPI_NCOLL)
        return 1;
    for (const uint32_t *t = tables[c];;) {
        int mine = size < *t++ || t[-1] == ALLP;
        for (;;) {
            uint32_t below = *t++, alg = *t++;
            if (!below) {
                if (mine)
                    return (int)alg;
                break;
            }
            if (mine && bytes < below)
                return (int)alg;
        }
    }
}

/* ---- names ------------------------------------------------------------------------------ */

static const char *const coll_names[SIMMPI_NCOLL] = {
    "barrier", "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv",
    "allgather", "allgatherv", "alltoall", "alltoallv", "reduce_scatter",
    "reduce_scatter_block", "scan", "exscan"};

/* Open MPI's algorithm names, index = its number (0 is "ignore": decide). */
static const char *const alg_names[SIMMPI_NCOLL][10] = {
    [SIMMPI_BARRIER] = {"auto", "linear", "double_ring", "recursive_doubling", "bruck", "two_proc", "tree"},
    [SIMMPI_BCAST] = {"auto", "basic_linear", "chain", "pipeline", "split_binary_tree", "binary_tree",
                      "binomial", "knomial", "scatter_allgather", "scatter_allgather_ring"},
    [SIMMPI_REDUCE] = {"auto", "linear", "chain", "pipeline", "binary", "binomial", "in-order_binary",
                       "rabenseifner"},
    [SIMMPI_ALLREDUCE] = {"auto", "basic_linear", "nonoverlapping", "recursive_doubling", "ring",
                          "segmented_ring", "rabenseifner"},
    [SIMMPI_GATHER] = {"auto", "basic_linear", "binomial", "linear_sync"},
    [SIMMPI_GATHERV] = {"auto", "basic_linear"},
    [SIMMPI_SCATTER] = {"auto", "basic_linear", "binomial", "linear_nb"},
    [SIMMPI_SCATTERV] = {"auto", "basic_linear"},
    [SIMMPI_ALLGATHER] = {"auto", "linear", "bruck", "recursive_doubling", "ring", "neighbor", "two_proc"},
    [SIMMPI_ALLGATHERV] = {"auto", "default", "bruck", "ring", "neighbor", "two_proc"},
    [SIMMPI_ALLTOALL] = {"auto", "linear", "pairwise", "modified_bruck", "linear_sync", "two_proc"},
    [SIMMPI_ALLTOALLV] = {"auto", "basic_linear", "pairwise"},
    [SIMMPI_REDUCE_SCATTER] = {"auto", "non-overlapping", "recursive_halving", "ring", "butterfly"},
    [SIMMPI_REDUCE_SCATTER_BLOCK] = {"auto", "basic_linear", "recursive_doubling", "recursive_halving",
                                     "butterfly"},
    [SIMMPI_SCAN] = {"auto", "linear"},
    [SIMMPI_EXSCAN] = {"auto", "linear"},
};

const char *simmpi_coll_name(simmpi_coll c) { return (unsigned)c < SIMMPI_NCOLL ? coll_names[c] : NULL; }

int simmpi_coll_from_name(const char *name)
{
    for (int i = 0; i < SIMMPI_NCOLL; i++)
        if (strcmp(name, coll_names[i]) == 0)
            return i;
    return -1;
}

/* The largest power of two not above n (opal_next_poweroftwo(n) >> 1). */
static uint64_t pof2_below(uint32_t n)
{
    uint64_t p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

/* libnbc's, index = alg - SIMMPI_ALG_NBC_LINEAR */
static const char *const nbc_names[] = {"nbc_linear", "nbc_binomial", "nbc_ring", "nbc_rabenseifner",
                                        "nbc_dissemination", "nbc_chain"};

/* The intracommunicator I-forms libnbc runs with alg (simmpi_nbc_decide's). */
static int nbc_has(simmpi_coll c, int alg)
{
    switch (alg) {
    case SIMMPI_ALG_NBC_LINEAR:
        return c != SIMMPI_BARRIER && c != SIMMPI_REDUCE && c != SIMMPI_ALLREDUCE && c != SIMMPI_REDUCE_SCATTER &&
               c != SIMMPI_REDUCE_SCATTER_BLOCK;
    case SIMMPI_ALG_NBC_BINOMIAL:
        return c == SIMMPI_BCAST || c == SIMMPI_REDUCE || c == SIMMPI_ALLREDUCE || c == SIMMPI_REDUCE_SCATTER ||
               c == SIMMPI_REDUCE_SCATTER_BLOCK;
    case SIMMPI_ALG_NBC_RING: return c == SIMMPI_ALLREDUCE;
    case SIMMPI_ALG_NBC_REDSCAT: return c == SIMMPI_ALLREDUCE || c == SIMMPI_REDUCE;
    case SIMMPI_ALG_NBC_DISSEMINATION: return c == SIMMPI_BARRIER;
    case SIMMPI_ALG_NBC_CHAIN: return c == SIMMPI_REDUCE;
    default: return 0;
    }
}

int simmpi_nbc_decide(simmpi_coll c, uint32_t size, uint64_t bytes, uint64_t count)
{
    switch (c) {
    case SIMMPI_BARRIER: return SIMMPI_ALG_NBC_DISSEMINATION;
    case SIMMPI_BCAST: /* skip_dt_decision (on by default): no sizes */
        return size <= 4 ? SIMMPI_ALG_NBC_LINEAR : SIMMPI_ALG_NBC_BINOMIAL;
    case SIMMPI_ALLREDUCE: /* nbc_iallreduce.c, a commutative op, not in place */
        if (size < 4 || bytes < 65536)
            return SIMMPI_ALG_NBC_BINOMIAL;
        return count >= pof2_below(size) ? SIMMPI_ALG_NBC_REDSCAT : SIMMPI_ALG_NBC_RING;
    case SIMMPI_REDUCE: /* nbc_ireduce.c, a commutative op */
        if (size > 2 && count >= pof2_below(size))
            return SIMMPI_ALG_NBC_REDSCAT;
        return size > 4 || bytes < 65536 ? SIMMPI_ALG_NBC_BINOMIAL : SIMMPI_ALG_NBC_CHAIN;
    case SIMMPI_REDUCE_SCATTER:
    case SIMMPI_REDUCE_SCATTER_BLOCK: return SIMMPI_ALG_NBC_BINOMIAL;
    default: return SIMMPI_ALG_NBC_LINEAR;
    }
}

const char *simmpi_alg_name(simmpi_coll c, int alg)
{
    if (alg == SIMMPI_ALG_INTER && (unsigned)c < SIMMPI_NCOLL && c != SIMMPI_SCAN && c != SIMMPI_EXSCAN)
        return "inter";
    if ((unsigned)c < SIMMPI_NCOLL && nbc_has(c, alg))
        return nbc_names[alg - SIMMPI_ALG_NBC_LINEAR];
    if ((unsigned)c >= SIMMPI_NCOLL || alg < 0 || alg >= 10)
        return NULL;
    return alg_names[c][alg];
}

int simmpi_alg_from_name(simmpi_coll c, const char *name)
{
    if ((unsigned)c >= SIMMPI_NCOLL)
        return -1;
    if (strcmp(name, "dissemination") == 0 && c == SIMMPI_BARRIER)
        return 4;
    for (int i = 0; i < 10; i++)
        if (alg_names[c][i] && strcmp(name, alg_names[c][i]) == 0)
            return i;
    char *end;
    long v = strtol(name, &end, 10);
    return *name && !*end && v >= 0 && v < 10 && alg_names[c][v] ? (int)v : -1;
}

int coll_alg_resolve(simmpi_coll c, int forced, uint32_t size, uint64_t bytes)
{
    if (forced > 0 && forced != SIMMPI_ALG_INTER && simmpi_alg_name(c, forced))
        return forced;
    return simmpi_coll_decide(c, size, bytes);
}

/* ---- the decomposition, message by message ------------------------------------------------- */

int simmpi_inter_rooted(simmpi_coll c)
{
    return c == SIMMPI_BCAST || c == SIMMPI_REDUCE || c == SIMMPI_GATHER || c == SIMMPI_SCATTER ||
           c == SIMMPI_GATHERV || c == SIMMPI_SCATTERV;
}

int simmpi_inter_root_valid(simmpi_coll c, uint32_t root, uint32_t remote_size)
{
    return !simmpi_inter_rooted(c) || root == SIMMPI_ROOT_HERE || root == SIMMPI_ROOT_NONE || root < remote_size;
}

uint32_t simmpi_inter_root(int32_t root)
{
    return root == PH_ROOT ? SIMMPI_ROOT_HERE : root == PH_PROC_NULL ? SIMMPI_ROOT_NONE : (uint32_t)root;
}

/* Open MPI 4.1's MPI layer returns before any collective component runs
 * when a call has nothing to move (ompi/mpi/c/CALL.c, "Do we need to do
 * anything?"): such a call sends nothing and costs nothing.  Barrier,
 * Gatherv, Scatterv, Alltoallv and Alltoallw have no such test, nor the
 * I-forms of Gather, Scatter, Allgather(v), Alltoall(v, w), Scan and
 * Exscan.  The recorder stores MPI_IN_PLACE's counts as the ones that
 * count (libpmpi-rec/rec.c, normalize_coll), and a rank of the root's group
 * that passes MPI_PROC_NULL with no counts, so the recorded ones decide
 * here as the arguments decide there. */
int simmpi_returns_at_once(const ph_event *ev, int coll, int inter, uint32_t size)
{
    unsigned kind = ph_ops[ev->op].kind;
    int blocking = kind == PH_K_COLL;
    if (kind != PH_K_COLL && kind != PH_K_ICOLL) /* a communicator's constructor */
        return 0;
    int root_here = simmpi_inter_root(ev->root) == COLL_ROOT_HERE;
    switch (coll) {
    case SIMMPI_BCAST: case SIMMPI_REDUCE: case SIMMPI_ALLREDUCE: return ev->count == 0;
    case SIMMPI_SCAN: case SIMMPI_EXSCAN: return blocking && ev->count == 0;
    case SIMMPI_REDUCE_SCATTER_BLOCK: return ev->rcount == 0;
    case SIMMPI_REDUCE_SCATTER: return ev->nrbytes >= size && vsum(ev->rbytes_v, size) == 0;
    case SIMMPI_GATHER: return blocking && (inter && root_here ? ev->rcount : ev->count) == 0;
    case SIMMPI_SCATTER: return blocking && (inter && root_here ? ev->count : ev->rcount) == 0;
    case SIMMPI_ALLGATHER:
        return blocking && (inter ? ev->count == 0 && ev->rcount == 0 : ev->count == 0 || ev->rcount == 0);
    case SIMMPI_ALLGATHERV: return blocking && !inter && ev->nrbytes >= size && vsum(ev->rbytes_v, size) == 0;
    case SIMMPI_ALLTOALL: return blocking && !inter && ev->rbytes == 0;
    default: return 0;
    }
}

/* An intercommunicator's collective: coll.c's inter, or -1. */
static int inter_args_alg(const simmpi_coll_args *a)
{
    if (a->size == 0 || a->remote_size >= SIMMPI_REMOTE || !simmpi_alg_name(a->coll, SIMMPI_ALG_INTER))
        return -1;
    if (!simmpi_inter_root_valid(a->coll, a->root, a->remote_size))
        return -1;
    int here = a->root == SIMMPI_ROOT_HERE, all = a->coll == SIMMPI_ALLGATHERV;
    int grouped = simmpi_inter_group_sized(a->coll);
    if ((a->coll == SIMMPI_ALLTOALLV && !(a->vbytes && a->rvbytes)) ||
        (a->coll == SIMMPI_REDUCE_SCATTER && !a->vbytes) ||
        (grouped && !a->nonblocking && (all || (!here && a->root != SIMMPI_ROOT_NONE)) && !a->vbytes) ||
        (grouped && (all || here) && !a->rvbytes))
        return -1; /* their per-rank sizes are missing */
    return SIMMPI_ALG_INTER;
}

int coll_args_alg(const simmpi_coll_args *a)
{
    if (a->remote_size)
        return inter_args_alg(a);
    if ((unsigned)a->coll >= SIMMPI_NCOLL || a->size == 0 || a->root >= a->size)
        return -1;
    if (a->nonblocking) {
        uint64_t all = a->count * a->esize;
        return simmpi_nbc_decide(a->coll, a->size, all, a->count);
    }
    uint64_t bytes = a->vbytes ? 0 : a->count * a->esize;
    for (uint32_t i = 0; a->vbytes && i < a->size; i++)
        bytes += a->vbytes[i];
    if (a->vbytes && a->coll == SIMMPI_ALLGATHERV)
        bytes /= a->size;
    if (!a->vbytes && a->coll == SIMMPI_REDUCE_SCATTER) /* count elements a rank: tuned sums them all */
        bytes *= a->size;
    return coll_alg_resolve(a->coll, a->alg, a->size, bytes);
}

/* Every round of c, message by message (coll_rank_messages). */
static int rank_rounds(const ins_coll *c, const uint8_t *forced, coll_round *cr, simmpi_msg_fn fn, void *ctx,
                       int recvs)
{
    uint32_t me = c->me;
    coll_memo memo = {0};
    for (uint32_t k = 0;; k++) {
        int hit = coll_round_get(c, &memo, k, cr, forced);
        if (hit <= 0)
            return hit < 0 ? -1 : (int)k;
        for (uint32_t i = 0; recvs && i < cr->nrecv; i++) {
            uint32_t src = cr->recv[i].peer;
            uint64_t bytes = src & SIMMPI_REMOTE ? coll_inter_recv_bytes(c, src & ~SIMMPI_REMOTE, k) : 0;
            fn(ctx, &(simmpi_coll_msg){.src = src, .dst = me, .round = k, .bytes = bytes}, 1);
        }
        for (uint32_t i = 0; i < cr->nsend; i++)
            fn(ctx, &(simmpi_coll_msg){.src = me, .dst = cr->send[i].peer, .round = k,
                                       .bytes = cr->send[i].bytes}, 0);
    }
}

int coll_rank_messages(const simmpi_coll_args *a, int alg, uint32_t me, coll_round *cr, simmpi_msg_fn fn,
                       void *ctx, int recvs)
{
    ins_coll c = {.coll = (uint8_t)a->coll, .alg = (uint8_t)alg, .size = a->size, .me = me,
                  .root = a->root, .count = a->count, .esize = a->esize ? a->esize : 1,
                  .rsize = a->remote_size, .v = (uint64_t *)a->vbytes, .nb = a->nonblocking != 0};
    if (a->vbytes && (a->coll == SIMMPI_GATHERV || a->coll == SIMMPI_SCATTERV || a->coll == SIMMPI_ALLGATHERV)) {
        c.count = a->vbytes[me]; /* what this rank contributes, or takes */
        c.esize = 1;
    }
    if (a->remote_size && a->coll == SIMMPI_ALLGATHER)
        c.v = (uint64_t *)&a->rblock; /* coll.c's inter_allgather reads it */
    /* an intercommunicator's Alltoallv: the bytes to, then from, each remote
     * rank; its Gatherv, Scatterv and Allgatherv: the local group's, then
     * the remote group's (0 where not needed) */
    uint64_t *both = NULL;
    if (!a->remote_size && a->nonblocking && a->coll == SIMMPI_ALLTOALLV && a->vbytes) {
        /* Ialltoallv: the bytes to each rank, then from each (what each sends this one) */
        if (!(both = malloc(2 * (size_t)a->size * sizeof *both)))
            return -1;
        memcpy(both, a->vbytes, a->size * sizeof *both);
        for (uint32_t q = 0; q < a->size; q++)
            both[a->size + q] = a->vbytes[me];
        c.v = both;
    } else if (a->remote_size && (a->coll == SIMMPI_ALLTOALLV || simmpi_inter_group_sized(a->coll))) {
        uint32_t nv = a->coll == SIMMPI_ALLTOALLV ? a->remote_size : a->size;
        if (inter_args_alg(a) < 0 || !(both = calloc((size_t)nv + a->remote_size, sizeof *both)))
            return -1;
        if (a->vbytes)
            memcpy(both, a->vbytes, nv * sizeof *both);
        if (a->rvbytes)
            memcpy(both + nv, a->rvbytes, a->remote_size * sizeof *both);
        c.v = both;
    }
    int rounds = rank_rounds(&c, a->forced_algs, cr, fn, ctx, recvs);
    free(both);
    return rounds;
}

int simmpi_coll_messages(const simmpi_coll_args *a, simmpi_msg_fn fn, void *ctx, int recvs)
{
    int alg = coll_args_alg(a);
    coll_round cr = {0};
    int rc = alg;
    for (uint32_t me = 0; me < a->size && rc >= 0; me++)
        if (coll_rank_messages(a, alg, me, &cr, fn, ctx, recvs) < 0)
            rc = -1;
    free(cr.send);
    free(cr.recv);
    return rc;
}
