/* internal.h - SIM-MPI's private structures: the front end that turns a
 * rank's ph_events into instructions, the event engine that executes them,
 * and the collective schedules they expand into.  See doc/simmpi.md. */
#ifndef SIMMPI_INTERNAL_H
#define SIMMPI_INTERNAL_H

#include <math.h>
#include <stddef.h>

#include "evqueue.h"
#include "simmpi.h"

#define NIL UINT32_MAX

/* The simulated time never reaches 2^62 ps (53 days): a trace whose sizes
 * or computation gaps would take a clock there (a damaged one: bytes near
 * UINT64_MAX, a gap of months) fails, naming the rank and call, instead of
 * wrapping around to a small, wrong prediction.  Costs are capped there
 * (engine.c: fs_to_ps, frontend.c: fe_read) and clocks checked where they
 * grow by them (engine.c: past_horizon), so that a clock below it plus one
 * more cost never overflows. */
#define SIM_HORIZON ((simtime)1 << 62)

/* t times f (>= 0), rounded; SIM_HORIZON where the product reaches it, so
 * that an absurd --what-if factor fails at the horizon, naming the rank,
 * instead of rounding a product llround cannot hold. */
static inline simtime sim_scale(simtime t, double f)
{
    double x = (double)t * f;
    return x < (double)SIM_HORIZON ? (simtime)llround(x) : SIM_HORIZON;
}

/* ---- instructions: what one MPI call asks of the engine ------------------- */

enum ins_type {
    I_NOP,   /* nothing (a PROC_NULL or cancelled receive, Pcontrol, ...)  */
    I_SEND,  /* post a send (the call's request is p.req)                   */
    I_RECV,  /* post a receive                                              */
    I_WAIT,  /* block until every request in w completes                     */
    I_POLL,  /* a Test that completed nothing (o_poll), an Iprobe that found
              * nothing (F_PROBE: o_iprobe); u.w: a Test's requests, inline  */
    I_PROBE, /* block until a matching message's envelope is at the receiver  */
    I_COLL,  /* a collective, decomposed into rounds of point-to-point         */
    I_NBSTART, /* a nonblocking collective starts: its first round (u.nb)   */
    I_NBWAIT,  /* block until a nonblocking collective is done (u.nb)         */
    I_END,   /* MPI_Finalize (or Abort): the rank's run ends here              */
};

enum ins_flag {
    F_CALL = 1,       /* first instruction of an MPI call: comp, op, site valid */
    F_SYNC = 2,       /* synchronous send (Ssend): always rendezvous            */
    F_BUFFERED = 4,   /* buffered send (Bsend): always eager                     */
    F_UNRESOLVED = 8, /* a wildcard receive whose matched source is not yet read  */
    F_PROBE = 16,     /* I_POLL: an Iprobe, not a Test                            */
    F_ALL = 32,       /* I_POLL: a Testall (folds only when all its requests are done) */
    F_NBC = 64,       /* I_POLL: a Test of one nonblocking collective, u.nb (folds
                       * when its schedule is done) */
    F_POLLED = 128,   /* I_POLL: libnbc's progress has run in it (one step) */
};

typedef struct ins_p2p {
    int32_t peer, tag;   /* world rank (receives: the matched source), tag      */
    uint64_t bytes;
    uint32_t req;        /* engine request */
} ins_p2p;

typedef struct ins_wait {
    uint32_t n, cap;     /* cap: of reqs when it is not inl */
    uint32_t *reqs;      /* engine requests; inl when n <= 3 */
    uint32_t inl[3];
} ins_wait;

typedef struct ins_coll {
    uint8_t coll, alg;
    uint8_t nb;              /* an intercommunicator's I-form (coll.c: inter_nbc, libnbc's) */
    uint32_t size, me, root; /* communicator size, my rank and the root in it */
    uint64_t count;
    uint32_t esize;
    uint32_t rsize;          /* intercommunicators: the remote group's size (size: the local
                              * group's, root: COLL_ROOT_HERE, COLL_ROOT_NONE or a remote
                              * rank); 0 on an intracommunicator */
    uint64_t *v;             /* v-collectives: bytes per rank (malloc'd), else NULL; an
                              * intercommunicator's Allgather: its receive block's bytes, one;
                              * its Alltoallv: to each remote rank, then from each; its
                              * Gatherv, Scatterv, Allgatherv: the local group's, then the
                              * remote group's (coll.c: inter_gatherv) */
} ins_coll;
/* An intercommunicator collective's root as its own group sees it: MPI_ROOT
 * (this rank) or MPI_PROC_NULL (another rank of the root's group). */
#define COLL_ROOT_HERE SIMMPI_ROOT_HERE
#define COLL_ROOT_NONE SIMMPI_ROOT_NONE
/* A round's peer in the remote group of an intercommunicator (coll_xfer.peer). */
#define COLL_REMOTE SIMMPI_REMOTE

struct nbc_run;

typedef struct ins {
    uint8_t type, flags;
    uint16_t op;             /* enum ph_op, for the breakdown */
    uint32_t site;
    uint32_t comm;           /* trace-wide communicator id */
    simtime comp;            /* computation before the call (F_CALL) */
    union {
        ins_p2p p;
        ins_wait w;
        ins_coll c;
        struct nbc_run *nb;  /* I_NBSTART, I_NBWAIT, I_POLL with F_NBC (the engine's, engine.c) */
    } u;
} ins;
_Static_assert(sizeof(ins) == 64, "an instruction is one cache line (the ring is aligned)");

/* ---- engine objects --------------------------------------------------------- */

enum req_kind { RQ_SEND, RQ_RECV, RQ_PROBE };
enum req_state {
    RS_POSTED = 1, RS_MATCHED = 2, RS_DONE = 4, RS_WAITED = 8, RS_FREED = 16,
    RS_CHARGED = 32, /* its o_r (receive) or o_iprobe (probe) has been charged */
    RS_COLL = 64,    /* internal to a collective's schedule */
    RS_BG = 128,     /* a nonblocking collective's: completing it may advance its
                      * schedule while its rank is blocked (engine.c: nbc_mark_due) */
};

/* 64 bytes, and the pool is 64-byte aligned: one request, one cache line. */
typedef struct req {
    unsigned rank : 24;  /* owner (< SIMMPI_MAX_RANKS) */
    unsigned kind : 8;   /* enum req_kind */
    uint8_t state, chan;
    uint16_t op;         /* the MPI call that posted it (accounting) */
    uint32_t site;
    uint32_t msg;        /* matched message, or NIL */
    uint32_t next;       /* match-queue link, free list */
    uint32_t comm;       /* for deadlock reports */
    int32_t peer, tag;
    simtime t_post, t_done;
    /* Waiting inside [syn_from, syn_to] is syn: the partner had not yet come.
     * A receive: until the sender entered its send.  A rendezvous send:
     * from its RTS reaching the receiver until the receive was posted. */
    simtime syn_from, syn_to;
} req;
_Static_assert(sizeof(req) == 64, "a request is one cache line");

enum msg_state { MS_ENVELOPE = 1, /* eager data delivered or RTS arrived */ MS_DELIVERED = 2 };

typedef struct msg {
    uint32_t src, dst;   /* world ranks */
    uint32_t sreq, rreq; /* requests (NIL once not needed) */
    uint32_t probe;      /* a probe waiting for this message's envelope */
    uint32_t next;       /* match-queue link, free list */
    uint64_t bytes;
    uint8_t rndv, chan, state;
    uint32_t seq;        /* the sender's send number (heap order, with src and dst) */
    simtime t_send;      /* sender's arrival at the call: the receiver's partner time */
    simtime t_env;       /* envelope at the receiver (data for eager, RTS for rendezvous) */
} msg;

/* Match queues by (communicator context, source, destination, tag). */
typedef union mkey {
    struct {
        uint32_t ctx;    /* comm id * 2 + 1 for collective traffic */
        uint32_t src, dst;
        int32_t tag;
    };
    uint64_t w[2];       /* the same as two words: hashed and compared whole */
} mkey;

typedef struct mentry {
    mkey k;
    uint32_t head, tail; /* FIFO of messages (kind 1) or receives (kind 2) */
    uint32_t probe;      /* a probe waiting for the next unmatched message */
    uint8_t kind;        /* 0: free slot */
} mentry;

typedef struct mtable {
    mentry *e;
    uint64_t mask, used;
} mtable;

#define SIMMPI_MAX_RANKS (1u << 24)

/* ---- front end: one rank's event stream as instructions ---------------------- */

enum fe_kind { FK_SEND, FK_RECV, FK_PSEND, FK_PRECV, FK_ICOLL, FK_MSGH };

/* What a persistent request was created with, for each Start. */
typedef struct fe_pers {
    uint32_t comm;
    int32_t peer, tag;   /* world peer and tag as given */
    uint8_t flags;       /* F_SYNC/F_BUFFERED of a send */
    uint64_t bytes;
} fe_pers;

/* A nonblocking collective as Open MPI's libnbc runs it: its first round
 * posted in the I-call (NBC_Start_round), each next one as soon as the one
 * before has completed where Open MPI polls: a Test or Iprobe that finds
 * nothing, or any call while it waits (libnbc's progress runs in
 * opal_progress), the rank's schedules oldest first.  The front end makes
 * it (frontend.c: t_coll); the engine owns it from I_NBSTART and frees it
 * at the I_NBWAIT that finds it done, or at the end (engine.c). */
typedef struct nbc_run {
    ins_coll c;              /* the collective; c.v owned */
    uint32_t comm;
    int32_t tag;             /* its messages' own (libnbc tags each schedule) */
    uint32_t round;          /* the round posted (creq) */
    uint32_t ncreq, capcreq;
    uint32_t *creq;          /* its requests */
    simtime rcomp;           /* the round's reduction and copy, paid once it completes */
    uint16_t op;             /* the I-call's, which its Wait is billed to */
    uint32_t site;
    uint8_t done;
    struct nbc_run *next;    /* the rank's next one started and not done */
    struct nbc_run *prev_all, *next_all; /* every run not freed */
} nbc_run;

/* 32 bytes, and the window is 64-byte aligned: two entries a cache line.
 * Every Isend and Irecv writes one and its Wait reads it again, long after
 * (past a thousand ranks) the line left the caches; at 56 bytes (the
 * persistent request's arguments inline) a stencil's 12 requests spread
 * over 11 lines, and most entries straddled two. */
typedef struct fe_req {
    uint64_t id;         /* trace request id; 0: free slot */
    uint64_t pending;    /* absolute queue index of the unresolved receive + 1 */
    union {              /* what the entry owns, freed with it (frontend.c: free_aux) */
        nbc_run *run;    /* FK_ICOLL: the collective's run (the engine's, not the entry's) */
        fe_pers *pers;   /* FK_PSEND, FK_PRECV */
    };
    uint32_t ereq;       /* engine request of the current instance, or NIL */
    uint8_t kind;
} fe_req;
_Static_assert(sizeof(fe_req) == 32, "two request map entries a cache line");

/* Packed, srank stays five cache lines.  Hot first: what every call read
 * or translated touches (ring, window, counters, host times) comes before
 * what is rare (the first call's time, the overflow map, the scratch
 * entry), so that at srank's offset 128 the hot part fills lines 2 and 3
 * and only the cold tail reaches line 4 (see srank). */
typedef struct fe_rank {
    ins *q;              /* ring of translated instructions */
    uint64_t base;       /* absolute index of q[head] */
    uint32_t head, len, cap;
    uint32_t unresolved;
    fe_req *win;         /* request map (frontend.c): id's entry at id mod wincap */
    uint32_t wincap, winused;
    uint64_t maxid;      /* the highest trace request id added */
    uint32_t *spare, sparecap; /* a popped Wait's request array, for the next one */
    uint8_t started, eof, complete;
    uint64_t events, k;  /* events read; computation units so far */
    uint64_t t_end, prev_exit; /* host: last call's entry and exit */
    /* cold */
    uint64_t t_start;    /* host: first call's exit */
    fe_req *ovf;         /* live requests moved out of the window (hash map) */
    uint32_t ovfcap, ovfused;
    fe_req *scratch;     /* the entry of a call creating no findable request (id 0) */
} fe_rank;
_Static_assert(sizeof(fe_rank) <= 136, "srank is five cache lines");

/* ---- the simulation -------------------------------------------------------------- */

enum rank_state { RK_RUN, RK_QUEUED, RK_BLOCKED, RK_DONE };

typedef struct coll_memo {
    uint8_t alg[2];      /* sub-collectives' algorithms, 0: not decided yet */
    uint8_t coll, calg;  /* the collective it is for (and srank.memo_for); coll 0xff: none */
    uint32_t split;      /* rounds of a composition's first part + 1, 0: not counted */
} coll_memo;

/* The rest of what a rank's coll_memo is for: at the end of srank, in the
 * line with the rest of the collective state. */
typedef struct coll_for {
    uint64_t count;
    uint32_t size, me, root, esize;
} coll_for;

/* Line-aligned (320 bytes).  Past a few hundred ranks a rank's lines are
 * out of the caches each time it runs again, so what matters is how many
 * of them an event touches: line 0 (clock, debt, block, NICs: also what
 * other ranks' messages touch) and line 1 (state, call, request free list,
 * accounting), which engine.c's prefetch_next asks for, then the front
 * end's hot part (lines 2 and 3).  Line 4 holds what only a collective
 * (its round state and memo) or a rare path (fe_rank's cold tail) needs:
 * a point-to-point call touches four lines, not five. */
typedef struct srank {
    _Alignas(64) simtime now; /* virtual clock */
    simtime debt;        /* CPU taken by protocol handling while computing */
    simtime w0, wovh;    /* current block: start, overhead charged during it */
    simtime txfree[2], rxfree[2]; /* NIC free times (inter, intra) */
    uint32_t nwait;
    uint32_t freerq;     /* this rank's released requests (req.next), or NIL */
    uint8_t state, comp_done, unblocked;
    uint8_t nbc;         /* nonblocking collectives started and not done (engine.c: nbc_*) */
    uint16_t op;         /* MPI call being executed (accounting) */
    uint32_t site;
    uint32_t round;      /* collective: next round */
    simmpi_breakdown acct;
    fe_rank fe;          /* from offset 128: lines 2, 3 and the start of 4 */
    simtime rcomp;       /* collective: reduction work after the current round */
    coll_memo memo;      /* collective: what its rounds need not work out again */
    uint32_t *creq;      /* requests of the current collective round */
    uint32_t ncreq, capcreq;
    coll_for memo_for;
} srank;
_Static_assert(sizeof(srank) == 320, "srank is five cache lines");
_Static_assert(offsetof(srank, fe) == 128 && offsetof(srank, fe.t_start) <= 256 &&
                   offsetof(srank, fe.t_start) >= 128 + offsetof(fe_rank, prev_exit) + 8,
               "the front end's hot part is lines 2 and 3");

typedef struct coll_xfer {
    uint32_t peer;
    uint32_t sync;           /* a send: synchronous (Open MPI's barriers' last sends) */
    uint64_t bytes;
} coll_xfer;

typedef struct coll_round {
    uint32_t nsend, nrecv, cap;
    coll_xfer *send, *recv;
    uint64_t reduce_bytes; /* local reduction after the round */
    uint64_t copy_bytes;   /* a local copy (a rank's own block), at the intra-node G a byte */
} coll_round;

/* A rank's collective repeated call after call (a stencil's allreduce, an
 * all-to-all in a loop) has the same rounds every time: the memo is kept
 * (engine.c: memo_open), and so are its rounds as coll.c built them the
 * first time, which later calls read instead of running the algorithm
 * again (about 220 instructions a round).  For communicators of up to
 * SCHED_SIZE ranks (the log-round algorithms' 8 rounds; a larger schedule
 * would cost a cold line a round at the scale that has them, for the
 * instructions it saves), and at most SCHED_ROUNDS rounds of SCHED_XFERS
 * transfers in all; past that a collective is built round by round. */
#define SCHED_SIZE 256
#define SCHED_ROUNDS 8
#define SCHED_XFERS 16

enum sched_state { SC_NONE, SC_FILLING, SC_COMPLETE };

typedef struct sched_round {
    uint64_t reduce_bytes;
    uint32_t copy_bytes;     /* a schedule keeps no copy of 4 GiB or more */
    uint8_t x, nrecv, nsend; /* its transfers: x[x ..], the receives first */
} sched_round;

typedef struct coll_sched {
    uint8_t state, nrounds, nx;
    sched_round round[SCHED_ROUNDS];
    coll_xfer x[SCHED_XFERS];
} coll_sched;

typedef struct comm_cache {
    const ph_comm_info *info;
    int32_t *rank_of;    /* world -> comm rank pairs, sorted (built on first use) */
    uint32_t n;
    uint32_t ctx;        /* point-to-point matching context (sim_p2p_ctx) */
    uint8_t ctx_known;
    uint8_t last_coll, last_alg; /* the last decision on it (last_alg 0: none) */
    uint64_t last_bytes;
    uint64_t *vcalls;    /* an intercommunicator side's Gatherv, Scatterv and Allgatherv
                          * so far, per local rank (frontend.c: inter_group_sizes) */
    uint32_t *nbcalls;   /* nonblocking collectives started so far, per (local) rank:
                          * the next one's tag (frontend.c: nbc_tag) */
} comm_cache;

/* A rank's events in the heap other than its RESUME: how many, and the
 * latest time of one pushed.  A rank's events leave the heap in time order
 * and are never pushed earlier than the time of the last one taken, so a
 * rank with one left has it at `last`.  And the messages it sent. */
typedef struct rank_events {
    simtime last;
    uint32_t n;
    uint32_t sent;
} rank_events;

typedef struct sim {
    const simmpi_options *o;
    simmpi_platform pf;
    const simmpi_source *src;
    uint32_t n;
    srank *r;
    const uint32_t *node_of;
    uint32_t *own_node_of;
    /* pools */
    req *rq;
    uint32_t nrq, caprq;  /* free requests are kept per rank: srank.freerq */
    msg *ms;
    uint32_t nms, capms, freems;
    mtable mt;
    evqueue rheap, mheap; /* RESUME events; the others (deliveries, RTS, CTS) */
    uint32_t woken[4];   /* ranks an event unblocked, resumed after the event */
    uint32_t nwoken;
    /* running ahead of deliveries (engine.c: may_run_ahead) */
    int run_ahead;        /* not options.strict_order */
    uint64_t nctl_q;      /* RTS and CTS events in mheap */
    uint32_t nprobe_wait; /* probes a blocked rank waits for */
    simtime la_deliver, la_probe; /* least a delivery's receiver pays before it acts */
    rank_events *rev;    /* per rank */
    /* communicators */
    comm_cache *comms;
    nbc_run **nbc_active; /* per rank: its nonblocking collectives started and not
                          * done, oldest first; made on the first one */
    nbc_run *nbc_all;    /* every run made and not freed (their owner at the end) */
    struct due_rank *nbc_due; /* blocked ranks a completion may let advance a
                          * schedule, after the event (engine.c: nbc_mark_due) */
    uint32_t nnbc_due, capnbc_due;
    uint32_t ncomms;
    coll_round cr;       /* scratch for one collective round */
    coll_sched *sched;   /* per rank, made on first use (engine.c: sched_open) */
    simmpi_result *res;
    uint32_t done;
    uint64_t events, next_progress;
    int noise;            /* the platform's CPU noise is on (cpu_until) */
    simtime *credit;      /* per rank, its polling loop's work already done in Test waits
                           * (engine.c: earn_credit); NULL until a rank has some */
    int comp_plain;       /* no comp.unit, comp_scale 1: a unit is the host's gap */
    uint64_t probe_ns;    /* o->host_probe_ns, read once an event */
    ph_err *err;
    int failed;
} sim;

/* engine.c */
int sim_fail(sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint32_t req_grow(sim *s); /* a request never used before, NIL when out of memory */

/* The request rank released last, or NIL: inline, as the front end takes
 * one for every send and receive (and fills it in whole at once). */
static inline uint32_t req_reuse(sim *s, uint32_t rank)
{
    srank *r = &s->r[rank];
    uint32_t i = r->freerq;
    if (i != NIL)
        r->freerq = s->rq[i].next;
    return i;
}

static inline uint32_t req_new(sim *s, uint32_t rank, uint8_t kind)
{
    uint32_t i = req_reuse(s, rank);
    if (i == NIL)
        i = req_grow(s);
    if (i != NIL)
        s->rq[i] = (req){.rank = rank, .kind = kind, .msg = NIL, .next = NIL};
    return i;
}

static inline void req_release(sim *s, uint32_t q)
{
    srank *r = &s->r[s->rq[q].rank];
    s->rq[q].state = 0;
    s->rq[q].next = r->freerq;
    r->freerq = q;
}

const ph_comm_info *sim_comm(sim *s, uint32_t id);
int32_t sim_comm_rank(sim *s, uint32_t comm, uint32_t world); /* -1 if not a member */
/* Where point-to-point messages on comm match: comm itself, or for an
 * intercommunicator the lower trace id of its two sides. */
uint32_t sim_p2p_ctx(sim *s, uint32_t comm);

/* frontend.c.  The engine asks for a rank's next instruction and pops it
 * once executed, every instruction: the common cases are inline, reading
 * and translating the trace (fe_read_ahead) and freeing what an
 * instruction owns (fe_release) are not. */
ins *fe_read_ahead(sim *s, uint32_t rank);
void fe_release(fe_rank *f, ins *in);
void fe_free(fe_rank *f);

/* The next instruction of a rank (NULL at the end; s->failed on error). */
static inline ins *fe_head(sim *s, uint32_t rank)
{
    fe_rank *f = &s->r[rank].fe;
    if (f->len && !(f->q[f->head].flags & F_UNRESOLVED))
        return &f->q[f->head];
    return fe_read_ahead(s, rank);
}

static inline void fe_pop(sim *s, uint32_t rank)
{
    fe_rank *f = &s->r[rank].fe;
    ins *in = &f->q[f->head];
    if ((in->type == I_WAIT && in->u.w.reqs != in->u.w.inl) || (in->type == I_COLL && in->u.c.v))
        fe_release(f, in);
    f->head = (f->head + 1) & (f->cap - 1);
    f->base++;
    f->len--;
}

/* coll.c */
/* Round k of a rank's schedule.  m (zeroed before round 0, kept across the
 * rounds of one rank's collective, or NULL) spares every round the work of
 * deciding sub-collectives' algorithms and where a composition's second
 * part starts.  forced (per collective, or NULL): the platform's algorithm
 * for the parts of a composed collective and an intercommunicator's local
 * collectives, as Open MPI's forced algorithm reaches the calls they make
 * through the communicator; 0 or NULL: the rule's. */
int coll_round_get(const ins_coll *c, coll_memo *m, uint32_t k, coll_round *out, const uint8_t *forced);
/* A nonblocking collective's run (engine.c), for the front end; NULL after
 * a failure.  It owns c->v from here. */
nbc_run *nbc_new(sim *s, const ins_coll *c, uint32_t comm, int32_t tag, uint16_t op, uint32_t site);
/* The algorithm a collective runs: forced (> 0, if it exists) or Open MPI's rule. */
int coll_alg_resolve(simmpi_coll c, int forced, uint32_t size, uint64_t bytes);
/* The algorithm a's collective uses (forced, or decided on its bytes); -1
 * for arguments that are no collective. */
int coll_args_alg(const simmpi_coll_args *a);
/* Rank me's messages of a's collective under alg, round by round, as the
 * engine asks for them (cr: scratch rounds); its number of rounds, or -1
 * when it cannot be decomposed.  simmpi_coll_messages is this for every rank. */
int coll_rank_messages(const simmpi_coll_args *a, int alg, uint32_t me, coll_round *cr, simmpi_msg_fn fn,
                       void *ctx, int recvs);
int coll_round_reserve(coll_round *r, uint32_t n);
/* An intercommunicator collective's message from the remote group: its bytes. */
/* The sum of n per-rank sizes (0 for none); the front end and coll.c both sum them. */
static inline uint64_t vsum(const uint64_t *v, uint32_t n)
{
    uint64_t s = 0;
    for (uint32_t i = 0; v && i < n; i++)
        s += v[i];
    return s;
}
uint64_t coll_inter_recv_bytes(const ins_coll *c, uint32_t peer, uint32_t k);

#endif
