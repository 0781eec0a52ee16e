/* synth.c - synthetic traces with exact computation gaps, for tests.
 *
 *   synth KIND OUT [--ranks N] [--bytes K] [--iters I] [--comp NS]
 *         [--comp0 NS] [--comp1 NS] [--overlap NS] [--op COLL] [--root R]
 *         [--esize E] [--dims X,Y,Z] [--nonblocking] [--comp-probe NS] [--barrier]
 *         [--startup NS]
 *
 * Written with the MPI-free writer (lib/ph_writer.c), so every gap between
 * MPI calls is exactly what the options say: a test can compute the
 * prediction by hand.  Each event lasts 1 us on the "host" (the simulator
 * ignores host durations).  Kinds:
 *
 *   p2p         rank 0 computes comp0, sends K bytes to 1; rank 1 computes
 *               comp1, receives (--nonblocking: Isend/Irecv, compute
 *               --overlap, Wait on both sides)
 *   pingpong    I round trips of K bytes between ranks 0 and 1, comp before each
 *   ring        a token of K bytes goes 0 -> 1 -> ... -> N-1 -> 0, I times
 *   coll        one collective --op of K bytes (per block) on all N ranks,
 *               I times (--op A,B,...: each time the list, in turn)
 *   stencil     3-D halo exchange on an X*Y*Z grid of ranks (Irecv/Isend to
 *               6 neighbours, Waitall) then Allreduce(8 B), I iterations
 *   alltoall    I iterations of (comp, Alltoall of K bytes per peer)
 *   deadlock    every rank receives from its right neighbour, then sends
 *   wildcard    ranks 1..N-1 send to 0, which receives MPI_ANY_SOURCE,
 *               matching the highest rank first (Irecv + Waitany)
 *   poll        rank 1: Irecv, three Tests that fail, one that succeeds;
 *               then two Iprobes that find nothing (COMP before each, or
 *               --comp-probe before the Iprobes); rank 0 sends after
 *               comp0; --barrier: both ranks then Barrier before the Iprobes
 *   iprobe      rank 1: Iprobes of (0, tag 9), (0, 9), (ANY_SOURCE, 9) and
 *               (0, ANY_TAG) that find nothing, one of (0, 9) that finds the
 *               message, then Recv (COMP before each); rank 0 sends after comp0
 *   testall     rank 1: Irecv from 0, Isend to 0, three Testalls (--op testany:
 *               Testanys) of both that fail, then Waitall (COMP before each);
 *               rank 0 sends after comp0, then receives
 *   persistent  I x (Start, Wait) of Send_init / Recv_init between 0 and 1
 *   probe       rank 1 probes (ANY_SOURCE), then receives; rank 0 sends
 *   subcomm     Comm_split even/odd, Allreduce on each half, Barrier on world
 *   icoll       Iallreduce of K bytes, compute --overlap, Wait (all ranks);
 *               --barrier: a Barrier after the Wait on rank 0, before it on
 *               the others (legal: only starting them is ordered);
 *               --op test: rank 0 calls a Test of it that fails halfway
 *               through the computation (--op tests: another at three
 *               quarters, and rank 1 one there; --op early: the others
 *               one at a quarter, rank 0 one at three quarters); --op
 *               send: rank 0 sends K bytes to rank 1 halfway instead,
 *               which rank 1 receives after its Wait
 *   icolls      two Iallreduces of K bytes, compute --overlap, their Waits:
 *               rank 0 the second first, the others in order
 *   sendrecv    ranks 0 and 1 swap K bytes with one Sendrecv each
 *   procnull    Irecv and Isend to MPI_PROC_NULL, Waitall: nothing to wait for
 *   nicrace     4 ranks, two messages for rank 2's NIC: rank 0 sends K bytes
 *               after comp0; rank 3 sends 100 B to rank 1 after comp1, and
 *               rank 1, once it has them, 100 B to rank 2; rank 2 takes
 *               both (Irecv, Irecv, Waitall)
 *   proberace   3 ranks: rank 0 sends 100 B to rank 1 after comp0, then K
 *               bytes to rank 2 after comp1; rank 1 probes (ANY_SOURCE),
 *               sends 100 B to rank 2, then receives; rank 2 takes both
 *               (Irecv, Irecv, Waitall)
 *   intercomm   one collective --op (barrier, bcast, reduce, allreduce,
 *               gather, scatter, allgather, alltoall, alltoallv (K bytes
 *               to and from every remote rank), reduce_scatter (K bytes
 *               to every local rank), reduce_scatter_block, gatherv,
 *               scatterv or allgatherv (rank i of a group sends, or a
 *               Scatterv's receives, (i + 1) K bytes); or scan, which
 *               is not defined there) of K bytes, I
 *               times, on an intercommunicator between the even ranks
 *               (group A) and the odd ones (group B); --root R: rank R
 *               of group A is the root (MPI_ROOT), A's others pass
 *               MPI_PROC_NULL and B's ranks R (an R past group A makes a
 *               wrong trace on purpose: B names a root A does not have);
 *               --nonblocking: its I-form, then compute --overlap and Wait;
 *               --short-sizes: a v-collective's arrays one size short
 *               (a wrong trace on purpose)
 *
 * p2p takes --sendop send|ssend|bsend|rsend for the blocking send.
 * --startup NS: rank r's process took (r + 1) NS of CPU before MPI_Init (a
 * STARTUP record).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ph_trace.h"

#define DUR 1000 /* host duration of every call, ns */

typedef struct opts {
    const char *kind, *out, *op, *sendop;
    uint32_t ranks, iters, root, esize, dims[3];
    uint64_t bytes, comp, comp0, comp1, overlap, comp_probe, startup;
    int nonblocking, barrier, has_comp_probe, short_v;
} opts;

typedef struct W { /* one rank being written */
    ph_rank_writer *w;
    uint32_t rank;
    uint64_t t, nreq;
    uint32_t site;
    uint64_t startup; /* for the first event */
} W;

static void die(const char *msg)
{
    fprintf(stderr, "synth: %s\n", msg);
    exit(1);
}

static ph_event ev0(uint16_t op)
{
    ph_event e;
    memset(&e, 0, sizeof e);
    e.op = op;
    e.flag = -1;
    e.index = -1;
    e.newcomm = PH_COMM_NULL;
    return e;
}

static void put(W *w, ph_event *e, uint64_t comp)
{
    ph_err err;
    e->t_entry = w->t + comp;
    e->t_exit = e->t_entry + DUR;
    e->site = w->site;
    e->startup_ns = w->startup;
    w->startup = 0;
    w->t = e->t_exit;
    if (ph_rank_write(w->w, e, &err) < 0)
        die(err.msg);
}

static void simple(W *w, uint16_t op, uint64_t comp)
{
    ph_event e = ev0(op);
    put(w, &e, comp);
}

static void sized(ph_event *e, uint64_t bytes, uint32_t esize)
{
    e->count = (int64_t)(esize && bytes >= esize ? bytes / esize : bytes);
    e->bytes = bytes;
}

static void send_(W *w, uint16_t op, int32_t peer, int32_t tag, uint64_t bytes, uint64_t comp)
{
    ph_event e = ev0(op);
    e.peer = peer;
    e.tag = tag;
    sized(&e, bytes, 1);
    put(w, &e, comp);
    if (op == PH_OP_ISEND || op == PH_OP_SEND_INIT)
        w->nreq++;
}

static ph_status st(int32_t src, int32_t tag, uint64_t bytes)
{
    return (ph_status){.source = src, .source_world = src, .tag = tag, .bytes = bytes};
}

static void recv_(W *w, int32_t peer, int32_t tag, uint64_t bytes, uint64_t comp)
{
    ph_event e = ev0(PH_OP_RECV);
    ph_status s = st(peer, tag, bytes);
    e.peer = peer;
    e.tag = tag;
    sized(&e, bytes, 1);
    e.nstatus = 1;
    e.status = &s;
    put(w, &e, comp);
}

static uint64_t irecv(W *w, uint16_t op, int32_t peer, int32_t tag, uint64_t bytes, uint64_t comp)
{
    ph_event e = ev0(op);
    e.peer = peer;
    e.tag = tag;
    sized(&e, bytes, 1);
    put(w, &e, comp);
    return ++w->nreq;
}

static void waitall(W *w, const uint64_t *ids, const ph_status *sts, uint32_t n, uint64_t comp)
{
    ph_event e = ev0(n == 1 ? PH_OP_WAIT : PH_OP_WAITALL);
    e.nreqs = n;
    e.reqs = ids;
    e.nstatus = n;
    e.status = sts;
    put(w, &e, comp);
}

static void coll(W *w, uint16_t op, uint32_t comm, uint64_t bytes, uint32_t esize, int32_t root,
                 uint64_t comp)
{
    ph_event e = ev0(op);
    e.comm = comm;
    sized(&e, bytes, esize);
    e.root = root;
    uint16_t blocking = op == PH_OP_IALLGATHER || op == PH_OP_IALLTOALL || op == PH_OP_IGATHER ||
                                op == PH_OP_ISCATTER || op == PH_OP_IREDUCE_SCATTER_BLOCK
                            ? (uint16_t)(op - 1) /* each I-op's id follows its blocking one's */
                            : op;
    if (blocking == PH_OP_ALLGATHER || blocking == PH_OP_ALLTOALL || blocking == PH_OP_GATHER ||
        blocking == PH_OP_SCATTER || blocking == PH_OP_REDUCE_SCATTER_BLOCK) { /* K bytes a block, sent and received */
        e.rcount = e.count;
        e.rbytes = e.bytes;
    }
    put(w, &e, comp);
}

/* ---- kinds -------------------------------------------------------------------------- */

static void k_p2p(const opts *o, W *w)
{
    uint64_t comp = w->rank ? o->comp1 : o->comp0;
    if (!o->nonblocking) {
        uint16_t op = !o->sendop || !strcmp(o->sendop, "send") ? PH_OP_SEND
                      : !strcmp(o->sendop, "ssend") ? PH_OP_SSEND
                      : !strcmp(o->sendop, "bsend") ? PH_OP_BSEND
                      : !strcmp(o->sendop, "rsend") ? PH_OP_RSEND : 0;
        if (!op)
            die("--sendop: send, ssend, bsend or rsend");
        if (w->rank == 0)
            send_(w, op, 1, 7, o->bytes, comp);
        else
            recv_(w, 0, 7, o->bytes, comp);
        return;
    }
    uint64_t id = w->nreq + 1;
    if (w->rank == 0)
        send_(w, PH_OP_ISEND, 1, 7, o->bytes, comp);
    else
        irecv(w, PH_OP_IRECV, 0, 7, o->bytes, comp);
    ph_status s = w->rank ? st(0, 7, o->bytes) : (ph_status){.source = PH_NO_RANK};
    waitall(w, &id, &s, 1, o->overlap);
}

static void k_pingpong(const opts *o, W *w)
{
    for (uint32_t i = 0; i < o->iters; i++) {
        if (w->rank == 0) {
            send_(w, PH_OP_SEND, 1, 1, o->bytes, o->comp);
            recv_(w, 1, 2, o->bytes, 0);
        } else {
            recv_(w, 0, 1, o->bytes, o->comp);
            send_(w, PH_OP_SEND, 0, 2, o->bytes, 0);
        }
    }
}

static void k_ring(const opts *o, W *w)
{
    int32_t n = (int32_t)o->ranks, me = (int32_t)w->rank;
    for (uint32_t i = 0; i < o->iters; i++) {
        if (me == 0) {
            send_(w, PH_OP_SEND, 1 % n, 3, o->bytes, o->comp);
            recv_(w, n - 1, 3, o->bytes, 0);
        } else {
            recv_(w, me - 1, 3, o->bytes, 0);
            send_(w, PH_OP_SEND, (me + 1) % n, 3, o->bytes, o->comp);
        }
    }
}

static uint16_t coll_op(const char *name)
{
    static const struct { const char *n; uint16_t op; } t[] = {
        {"barrier", PH_OP_BARRIER}, {"bcast", PH_OP_BCAST}, {"reduce", PH_OP_REDUCE},
        {"allreduce", PH_OP_ALLREDUCE}, {"allgather", PH_OP_ALLGATHER},
        {"alltoall", PH_OP_ALLTOALL}, {"gather", PH_OP_GATHER}, {"scatter", PH_OP_SCATTER},
        {"scan", PH_OP_SCAN}, {"exscan", PH_OP_EXSCAN}, {"reduce_scatter_block", PH_OP_REDUCE_SCATTER_BLOCK},
        {"allgatherv", PH_OP_ALLGATHERV}, /* allgatherv: K bytes, without per-rank sizes */
        {"alltoallv", PH_OP_ALLTOALLV}, {"reduce_scatter", PH_OP_REDUCE_SCATTER}, /* intercomm only */
        {"gatherv", PH_OP_GATHERV}, {"scatterv", PH_OP_SCATTERV}};
    for (size_t i = 0; name && i < sizeof t / sizeof t[0]; i++)
        if (strcmp(name, t[i].n) == 0)
            return t[i].op;
    die("--op: barrier, bcast, reduce, allreduce, allgather, alltoall, gather, scatter, scan, exscan, "
        "reduce_scatter_block, allgatherv (intercomm: also alltoallv, reduce_scatter, gatherv, scatterv)");
    return 0;
}

/* --op A,B,...: each iteration runs them in turn */
static void k_coll(const opts *o, W *w)
{
    char name[32];
    if (!o->op || !*o->op)
        coll_op(NULL); /* dies naming the choices */
    for (uint32_t i = 0; i < o->iters; i++)
        for (const char *p = o->op; *p;) {
            size_t n = strcspn(p, ",");
            snprintf(name, sizeof name, "%.*s", (int)n, p);
            coll(w, coll_op(name), 0, o->bytes, o->esize, (int32_t)o->root, o->comp);
            p += n + (p[n] == ',');
        }
}

static int32_t nb(const opts *o, uint32_t rank, int dim, int dir)
{
    uint32_t c[3] = {rank % o->dims[0], rank / o->dims[0] % o->dims[1], rank / (o->dims[0] * o->dims[1])};
    c[dim] = (c[dim] + o->dims[dim] + (uint32_t)dir) % o->dims[dim]; /* periodic */
    return (int32_t)(c[0] + o->dims[0] * (c[1] + o->dims[1] * c[2]));
}

static void k_stencil(const opts *o, W *w)
{
    for (uint32_t it = 0; it < o->iters; it++) {
        uint64_t ids[12];
        ph_status sts[12];
        for (int k = 0; k < 6; k++) {
            int32_t p = nb(o, w->rank, k / 2, k % 2 ? 1 : -1);
            ids[k] = irecv(w, PH_OP_IRECV, p, k ^ 1, o->bytes, k ? 0 : o->comp);
            sts[k] = st(p, k ^ 1, o->bytes);
        }
        for (int k = 0; k < 6; k++) {
            int32_t p = nb(o, w->rank, k / 2, k % 2 ? 1 : -1);
            send_(w, PH_OP_ISEND, p, k, o->bytes, 0);
            ids[6 + k] = w->nreq;
            sts[6 + k] = (ph_status){.source = PH_NO_RANK};
        }
        waitall(w, ids, sts, 12, 0);
        coll(w, PH_OP_ALLREDUCE, 0, 8, 8, 0, 0);
    }
}

static void k_alltoall(const opts *o, W *w)
{
    for (uint32_t it = 0; it < o->iters; it++)
        coll(w, PH_OP_ALLTOALL, 0, o->bytes, o->esize, 0, o->comp);
}

static void k_deadlock(const opts *o, W *w)
{
    int32_t n = (int32_t)o->ranks, me = (int32_t)w->rank;
    recv_(w, (me + 1) % n, 0, o->bytes, o->comp);
    send_(w, PH_OP_SEND, (me + n - 1) % n, 0, o->bytes, 0);
}

static void k_wildcard(const opts *o, W *w)
{
    if (w->rank) {
        send_(w, PH_OP_SEND, 0, 5, o->bytes, o->comp * w->rank);
        return;
    }
    uint32_t n = o->ranks - 1;
    uint64_t *ids = calloc(n, sizeof *ids);
    for (uint32_t i = 0; i < n; i++)
        ids[i] = irecv(w, PH_OP_IRECV, PH_ANY_SOURCE, PH_ANY_TAG, o->bytes, 0);
    for (uint32_t i = 0; i < n; i++) { /* Waitany: receive i matched rank n - i */
        ph_event e = ev0(PH_OP_WAITANY);
        ph_status s = st((int32_t)(n - i), 5, o->bytes);
        e.nreqs = n;
        e.reqs = ids;
        e.index = (int32_t)i;
        e.nstatus = 1;
        e.status = &s;
        put(w, &e, 0);
        ids[i] = 0; /* MPI_REQUEST_NULL from now on */
    }
    free(ids);
}

static void k_poll(const opts *o, W *w)
{
    if (w->rank == 0) {
        send_(w, PH_OP_SEND, 1, 9, o->bytes, o->comp0);
        if (o->barrier)
            coll(w, PH_OP_BARRIER, 0, 0, 1, 0, 0);
        return;
    }
    uint64_t id = irecv(w, PH_OP_IRECV, 0, 9, o->bytes, 0);
    for (int i = 0; i < 4; i++) {
        ph_event e = ev0(PH_OP_TEST);
        ph_status s = st(0, 9, o->bytes);
        e.nreqs = 1;
        e.reqs = &id;
        e.flag = i == 3;
        e.nstatus = i == 3;
        e.status = &s;
        put(w, &e, o->comp);
    }
    if (o->barrier)
        coll(w, PH_OP_BARRIER, 0, 0, 1, 0, 0);
    for (int i = 0; i < 2; i++) {
        ph_event e = ev0(PH_OP_IPROBE);
        e.peer = e.peer_world = 0;
        e.tag = 10;
        e.flag = 0;
        put(w, &e, o->has_comp_probe ? o->comp_probe : o->comp);
    }
}

/* Failed Iprobes of one source and tag, then of wildcards, a successful
 * one, the receive: what folds, and what never does. */
static void k_iprobe(const opts *o, W *w)
{
    if (w->rank == 0) {
        send_(w, PH_OP_SEND, 1, 9, o->bytes, o->comp0);
        return;
    }
    static const int32_t src[5] = {0, 0, PH_ANY_SOURCE, 0, 0}, tag[5] = {9, 9, 9, PH_ANY_TAG, 9};
    for (int i = 0; i < 5; i++) {
        ph_event e = ev0(PH_OP_IPROBE);
        ph_status s = st(0, 9, o->bytes);
        e.peer = e.peer_world = src[i];
        e.tag = tag[i];
        e.flag = i == 4;
        e.nstatus = i == 4;
        e.status = &s;
        put(w, &e, o->comp);
    }
    recv_(w, 0, 9, o->bytes, o->comp);
}

/* Rank 1 posts a receive from 0 and an eager send to 0, tests both three
 * times in vain (--op testall or testany, COMP before each), then waits
 * for both.  Rank 0 sends after comp0, then receives. */
static void k_testall(const opts *o, W *w)
{
    if (w->rank == 0) {
        send_(w, PH_OP_SEND, 1, 9, o->bytes, o->comp0);
        recv_(w, 1, 8, o->bytes, 0);
        return;
    }
    uint16_t op = !o->op || !strcmp(o->op, "testall") ? PH_OP_TESTALL
                  : !strcmp(o->op, "testany")        ? PH_OP_TESTANY : 0;
    if (!op)
        die("--op: testall or testany");
    uint64_t ids[2];
    ids[0] = irecv(w, PH_OP_IRECV, 0, 9, o->bytes, 0);
    send_(w, PH_OP_ISEND, 0, 8, o->bytes, 0);
    ids[1] = w->nreq;
    for (int i = 0; i < 3; i++) {
        ph_event e = ev0(op);
        e.nreqs = 2;
        e.reqs = ids;
        e.flag = 0;
        put(w, &e, o->comp);
    }
    ph_status sts[2] = {st(0, 9, o->bytes), {.source = PH_NO_RANK}};
    waitall(w, ids, sts, 2, o->comp);
}

static void k_persistent(const opts *o, W *w)
{
    uint64_t id = w->rank == 0 ? (send_(w, PH_OP_SEND_INIT, 1, 4, o->bytes, 0), w->nreq)
                               : irecv(w, PH_OP_RECV_INIT, 0, 4, o->bytes, 0);
    for (uint32_t i = 0; i < o->iters; i++) {
        ph_event e = ev0(PH_OP_START);
        e.nreqs = 1;
        e.reqs = &id;
        put(w, &e, o->comp);
        ph_status s = w->rank ? st(0, 4, o->bytes) : (ph_status){.source = PH_NO_RANK};
        waitall(w, &id, &s, 1, 0);
    }
    ph_event e = ev0(PH_OP_REQUEST_FREE);
    e.nreqs = 1;
    e.reqs = &id;
    put(w, &e, 0);
}

/* A blocking Probe for any source and tag that found (src, tag, bytes). */
static void probe_any(W *w, int32_t src, int32_t tag, uint64_t bytes)
{
    ph_event e = ev0(PH_OP_PROBE);
    ph_status s = st(src, tag, bytes);
    e.peer = PH_ANY_SOURCE;
    e.tag = PH_ANY_TAG;
    e.nstatus = 1;
    e.status = &s;
    put(w, &e, 0);
}

static void k_probe(const opts *o, W *w)
{
    if (w->rank == 0) {
        send_(w, PH_OP_SEND, 1, 6, o->bytes, o->comp0);
        return;
    }
    probe_any(w, 0, 6, o->bytes);
    recv_(w, 0, 6, o->bytes, 0);
}

static void k_subcomm(const opts *o, W *w, const uint32_t *halves)
{
    ph_event e = ev0(PH_OP_COMM_SPLIT);
    e.ival = w->rank % 2;
    e.newcomm = halves[w->rank % 2];
    put(w, &e, 0);
    coll(w, PH_OP_ALLREDUCE, halves[w->rank % 2], o->bytes, o->esize, 0, o->comp);
    coll(w, PH_OP_BARRIER, 0, 0, 1, 0, 0);
}

/* An intercommunicator's Alltoallv (K bytes to and from each of the remote
 * group's nremote ranks) or Reduce_scatter (K bytes to each of the local
 * group's nlocal); short_v: one size too few. */
static void coll_v(W *w, uint16_t op, uint32_t comm, uint64_t bytes, uint32_t nlocal, uint32_t nremote,
                   int short_v, uint64_t comp)
{
    int a2a = op == PH_OP_ALLTOALLV || op == PH_OP_IALLTOALLV;
    uint32_t n = (a2a ? nremote : nlocal) - (short_v ? 1 : 0);
    uint64_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        die("out of memory");
    for (uint32_t i = 0; i < n; i++)
        v[i] = bytes;
    ph_event e = ev0(op);
    e.comm = comm;
    e.rbytes_v = v, e.nrbytes = n;
    if (a2a)
        e.sbytes = v, e.nsbytes = n;
    put(w, &e, comp);
    free(v);
}

/* An intercommunicator's Gatherv, Scatterv or Allgatherv: group rank i
 * sends (a Scatterv's: receives) (i + 1) K bytes; the root (MPI_ROOT) and
 * an Allgatherv's every rank have the remote group's sizes; short_v: one
 * too few. */
static void coll_grouped(W *w, uint16_t op, uint32_t comm, uint64_t bytes, uint32_t me, uint32_t nremote,
                         int32_t root, int short_v, uint64_t comp)
{
    int all = op == PH_OP_ALLGATHERV || op == PH_OP_IALLGATHERV, scatter = op == PH_OP_SCATTERV || op == PH_OP_ISCATTERV;
    ph_event e = ev0(op);
    e.comm = comm;
    e.root = all ? 0 : root;
    uint64_t own = (me + 1) * bytes;
    if (all || (root != PH_ROOT && root != PH_PROC_NULL)) { /* the root's group passes no own block */
        if (scatter)
            e.rcount = (int64_t)own, e.rbytes = own;
        else
            e.count = (int64_t)own, e.bytes = own;
    }
    uint32_t n = all || root == PH_ROOT ? nremote - (short_v ? 1 : 0) : 0;
    uint64_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        die("out of memory");
    for (uint32_t i = 0; i < n; i++)
        v[i] = (i + 1) * bytes;
    if (scatter)
        e.sbytes = v, e.nsbytes = n;
    else
        e.rbytes_v = v, e.nrbytes = n;
    put(w, &e, comp);
    free(v);
}

static void k_intercomm(const opts *o, W *w, const uint32_t *sides)
{
    uint16_t op = coll_op(o->op ? o->op : "");
    int a = w->rank % 2 == 0, v = op == PH_OP_ALLTOALLV || op == PH_OP_REDUCE_SCATTER;
    int grouped = op == PH_OP_GATHERV || op == PH_OP_SCATTERV || op == PH_OP_ALLGATHERV;
    int32_t root = !a ? (int32_t)o->root : w->rank / 2 == o->root ? PH_ROOT : PH_PROC_NULL;
    uint64_t bytes = op == PH_OP_BARRIER ? 0 : o->bytes;
    uint32_t na = (o->ranks + 1) / 2, nb = o->ranks / 2; /* the even ranks, the odd ones */
    for (uint32_t i = 0; i < o->iters; i++) {
        /* the nonblocking form (each I-op's id follows its blocking one's), then its Wait */
        uint16_t opi = (uint16_t)(op + (o->nonblocking ? 1 : 0));
        if (v)
            coll_v(w, opi, sides[a ? 0 : 1], bytes, a ? na : nb, a ? nb : na, o->short_v, o->comp);
        else if (grouped)
            coll_grouped(w, opi, sides[a ? 0 : 1], bytes, w->rank / 2, a ? nb : na, root, o->short_v, o->comp);
        else
            coll(w, opi, sides[a ? 0 : 1], bytes, o->esize, root, o->comp);
        if (!o->nonblocking)
            continue;
        uint64_t id = w->nreq + 1;
        w->nreq++;
        ph_status s = {.source = PH_NO_RANK};
        waitall(w, &id, &s, 1, o->overlap);
    }
}

static void failed_test(W *w, const uint64_t *id, uint64_t comp)
{
    ph_event e = ev0(PH_OP_TEST);
    e.nreqs = 1;
    e.reqs = id;
    e.flag = 0;
    put(w, &e, comp);
}

static void k_icoll(const opts *o, W *w)
{
    uint64_t id = w->nreq + 1;
    coll(w, PH_OP_IALLREDUCE, 0, o->bytes, o->esize, 0, o->comp);
    w->nreq++;
    ph_status s = {.source = PH_NO_RANK};
    int barrier_first = o->barrier && w->rank != 0;
    int mid = !o->op                    ? 0
              : !strcmp(o->op, "test")  ? 1
              : !strcmp(o->op, "send")  ? 2
              : !strcmp(o->op, "tests") ? 3
              : !strcmp(o->op, "early") ? 4
                                        : -1;
    if (mid < 0)
        die("--op: test, tests, early or send");
    uint64_t before_wait = barrier_first ? 0 : o->overlap, spent = 0;
    uint64_t half = before_wait / 2, quarter = before_wait / 4;
    if (w->rank == 0 && mid == 2)
        send_(w, PH_OP_SEND, 1, 1, o->bytes, spent = half);
    if (w->rank == 0 && (mid == 1 || mid == 3))
        failed_test(w, &id, spent = half);
    if (w->rank == 0 && mid == 3) {
        failed_test(w, &id, quarter);
        spent += quarter;
    }
    if (w->rank == 1 && mid == 3)
        failed_test(w, &id, spent = half + quarter);
    if (mid == 4)
        failed_test(w, &id, spent = w->rank == 0 ? half + quarter : quarter);
    before_wait -= spent;
    if (barrier_first)
        coll(w, PH_OP_BARRIER, 0, 0, 1, 0, o->overlap);
    waitall(w, &id, &s, 1, before_wait);
    if (o->barrier && !barrier_first)
        coll(w, PH_OP_BARRIER, 0, 0, 1, 0, 0);
    if (mid == 2 && w->rank == 1)
        recv_(w, 0, 1, o->bytes, 0);
}

static void k_icolls(const opts *o, W *w)
{
    uint64_t ids[2] = {w->nreq + 1, w->nreq + 2};
    coll(w, PH_OP_IALLREDUCE, 0, o->bytes, o->esize, 0, o->comp);
    coll(w, PH_OP_IALLREDUCE, 0, o->bytes, o->esize, 0, 0);
    w->nreq += 2;
    ph_status s = {.source = PH_NO_RANK};
    int reverse = w->rank == 0;
    waitall(w, &ids[reverse ? 1 : 0], &s, 1, o->overlap);
    waitall(w, &ids[reverse ? 0 : 1], &s, 1, 0);
}

static void k_sendrecv(const opts *o, W *w)
{
    int32_t peer = 1 - (int32_t)w->rank;
    ph_event e = ev0(PH_OP_SENDRECV);
    ph_status s = st(peer, 8, o->bytes);
    e.peer = e.rpeer = peer;
    e.tag = e.rtag = 8;
    sized(&e, o->bytes, 1);
    e.rcount = e.count;
    e.rbytes = e.bytes;
    e.nstatus = 1;
    e.status = &s;
    put(w, &e, o->comp);
}

/* nicrace's and proberace's rank 2: K bytes from rank 0 (tag 1) and 100 B
 * from rank 1 (tag 3), whichever comes first. */
static void take_both(const opts *o, W *w)
{
    uint64_t ids[2];
    ph_status sts[2] = {st(0, 1, o->bytes), st(1, 3, 100)};
    ids[0] = irecv(w, PH_OP_IRECV, 0, 1, o->bytes, 0);
    ids[1] = irecv(w, PH_OP_IRECV, 1, 3, 100, 0);
    waitall(w, ids, sts, 2, 0);
}

static void k_nicrace(const opts *o, W *w)
{
    if (o->ranks != 4)
        die("nicrace: --ranks 4");
    if (w->rank == 0) {
        send_(w, PH_OP_SEND, 2, 1, o->bytes, o->comp0);
    } else if (w->rank == 3) {
        send_(w, PH_OP_SEND, 1, 2, 100, o->comp1);
    } else if (w->rank == 1) {
        recv_(w, 3, 2, 100, 0);
        send_(w, PH_OP_SEND, 2, 3, 100, 0);
    } else {
        take_both(o, w);
    }
}

static void k_proberace(const opts *o, W *w)
{
    if (o->ranks != 3)
        die("proberace: --ranks 3");
    if (w->rank == 0) {
        send_(w, PH_OP_SEND, 1, 2, 100, o->comp0);
        send_(w, PH_OP_SEND, 2, 1, o->bytes, o->comp1);
    } else if (w->rank == 1) {
        probe_any(w, 0, 2, 100);
        send_(w, PH_OP_SEND, 2, 3, 100, 0);
        recv_(w, 0, 2, 100, 0);
    } else {
        take_both(o, w);
    }
}

static void k_procnull(const opts *o, W *w)
{
    uint64_t ids[2];
    ph_status sts[2] = {st(PH_PROC_NULL, PH_ANY_TAG, 0), {.source = PH_NO_RANK}};
    ids[0] = irecv(w, PH_OP_IRECV, PH_PROC_NULL, 1, o->bytes, o->comp);
    send_(w, PH_OP_ISEND, PH_PROC_NULL, 1, o->bytes, 0);
    ids[1] = w->nreq;
    waitall(w, ids, sts, 2, 0);
}

/* ---- main --------------------------------------------------------------------------------- */

static void write_rank(const opts *o, W *w, const uint32_t *halves)
{
    simple(w, PH_OP_INIT, 0);
    const char *k = o->kind;
    if (!strcmp(k, "p2p")) k_p2p(o, w);
    else if (!strcmp(k, "pingpong")) k_pingpong(o, w);
    else if (!strcmp(k, "ring")) k_ring(o, w);
    else if (!strcmp(k, "coll")) k_coll(o, w);
    else if (!strcmp(k, "stencil")) k_stencil(o, w);
    else if (!strcmp(k, "alltoall")) k_alltoall(o, w);
    else if (!strcmp(k, "deadlock")) k_deadlock(o, w);
    else if (!strcmp(k, "wildcard")) k_wildcard(o, w);
    else if (!strcmp(k, "poll")) k_poll(o, w);
    else if (!strcmp(k, "iprobe")) k_iprobe(o, w);
    else if (!strcmp(k, "testall")) k_testall(o, w);
    else if (!strcmp(k, "persistent")) k_persistent(o, w);
    else if (!strcmp(k, "probe")) k_probe(o, w);
    else if (!strcmp(k, "subcomm")) k_subcomm(o, w, halves);
    else if (!strcmp(k, "intercomm")) k_intercomm(o, w, halves);
    else if (!strcmp(k, "icoll")) k_icoll(o, w);
    else if (!strcmp(k, "icolls")) k_icolls(o, w);
    else if (!strcmp(k, "sendrecv")) k_sendrecv(o, w);
    else if (!strcmp(k, "procnull")) k_procnull(o, w);
    else if (!strcmp(k, "nicrace")) k_nicrace(o, w);
    else if (!strcmp(k, "proberace")) k_proberace(o, w);
    else die("unknown kind (see the comment at the top of simmpi/synth.c)");
    simple(w, PH_OP_FINALIZE, 0);
}

static uint64_t num(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end)
        die("expected a whole number");
    return v;
}

static void parse(int argc, char **argv, opts *o)
{
    static const struct option lo[] = {
        {"ranks", 1, 0, 'n'}, {"bytes", 1, 0, 'b'}, {"iters", 1, 0, 'i'}, {"comp", 1, 0, 'c'},
        {"comp0", 1, 0, '0'}, {"comp1", 1, 0, '1'}, {"overlap", 1, 0, 'v'}, {"op", 1, 0, 'o'},
        {"root", 1, 0, 'r'}, {"esize", 1, 0, 'e'}, {"dims", 1, 0, 'd'},
        {"nonblocking", 0, 0, 'N'}, {"sendop", 1, 0, 's'}, {"comp-probe", 1, 0, 'P'},
        {"barrier", 0, 0, 'B'}, {"short-sizes", 0, 0, 'S'}, {"startup", 1, 0, 'u'}, {0, 0, 0, 0}};
    *o = (opts){.ranks = 2, .iters = 1, .esize = 1, .dims = {2, 2, 2}};
    for (int c; (c = getopt_long(argc, argv, "", lo, NULL)) != -1;) {
        switch (c) {
        case 'n': o->ranks = (uint32_t)num(optarg); break;
        case 'b': o->bytes = num(optarg); break;
        case 'i': o->iters = (uint32_t)num(optarg); break;
        case 'c': o->comp = num(optarg); break;
        case '0': o->comp0 = num(optarg); break;
        case '1': o->comp1 = num(optarg); break;
        case 'v': o->overlap = num(optarg); break;
        case 'o': o->op = optarg; break;
        case 'r': o->root = (uint32_t)num(optarg); break;
        case 'e': o->esize = (uint32_t)num(optarg); break;
        case 'N': o->nonblocking = 1; break;
        case 'S': o->short_v = 1; break;
        case 's': o->sendop = optarg; break;
        case 'P':
            o->comp_probe = num(optarg);
            o->has_comp_probe = 1;
            break;
        case 'B': o->barrier = 1; break;
        case 'u': o->startup = num(optarg); break;
        case 'd':
            if (sscanf(optarg, "%u,%u,%u", &o->dims[0], &o->dims[1], &o->dims[2]) != 3)
                die("--dims X,Y,Z");
            break;
        default: die("bad option (see the comment at the top of simmpi/synth.c)");
        }
    }
    if (optind + 2 != argc)
        die("usage: synth KIND OUT [options]");
    o->kind = argv[optind];
    o->out = argv[optind + 1];
    if (!strcmp(o->kind, "stencil"))
        o->ranks = o->dims[0] * o->dims[1] * o->dims[2];
    if (o->ranks < 2 && strcmp(o->kind, "coll") != 0)
        die("--ranks must be at least 2");
}

int main(int argc, char **argv)
{
    opts o;
    parse(argc, argv, &o);
    ph_err err;
    ph_writer *wr = ph_writer_create(o.out, o.ranks, "synth", &err);
    if (!wr)
        die(err.msg);
    uint32_t site = ph_writer_site(wr, o.kind, "synth.c", 1), halves[2] = {0, 0};
    int inter = !strcmp(o.kind, "intercomm");
    if (!strcmp(o.kind, "subcomm") || inter) { /* the even ranks and the odd ones */
        int32_t *m[2] = {calloc(o.ranks, sizeof(int32_t)), calloc(o.ranks, sizeof(int32_t))};
        uint32_t n[2] = {0, 0};
        if (!m[0] || !m[1])
            die("out of memory");
        for (uint32_t i = 0; i < o.ranks; i++)
            m[i % 2][n[i % 2]++] = (int32_t)i;
        for (uint32_t h = 0; h < 2; h++) /* an intercommunicator's side: the other half is remote */
            halves[h] = ph_writer_comm(wr, n[h], m[h], inter ? n[1 - h] : 0, inter ? m[1 - h] : NULL);
        free(m[0]);
        free(m[1]);
    }
    for (uint32_t r = 0; r < o.ranks; r++) {
        W w = {.rank = r, .site = site};
        if (!(w.w = ph_writer_rank(wr, r, 0, &err)))
            die(err.msg);
        w.startup = o.startup * (r + 1);
        write_rank(&o, &w, halves);
        if (ph_rank_writer_close(w.w, 1, &err) < 0)
            die(err.msg);
    }
    if (ph_writer_close(wr, &err) < 0)
        die(err.msg);
    return 0;
}
