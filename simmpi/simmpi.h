/* simmpi.h - SIM-MPI: the trace-driven LogGP simulator of PHANTOM.
 *
 * Turns a trace (or any source of ph_events) into a predicted run time:
 * every rank replays its communication sequence on a virtual clock, its
 * computation units come from a computation vector, and messages cost what
 * the extended LogGP model of Zhai et al., Section 6 (Fig. 10) says they
 * cost.  doc/simmpi.md gives the model, formula by formula.
 *
 * The simulation is a discrete-event loop over one 4-ary heap ordered by
 * (time, rank, sequence): the prediction is a pure function of the trace,
 * the platform and the options, bit-identical for any thread count.
 *
 * Times are integer picoseconds (simtime); per-byte costs are femtoseconds.
 */
#ifndef SIMMPI_H
#define SIMMPI_H

#include <math.h>
#include <stdint.h>

#include "ph_trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t simtime; /* picoseconds */
#define SIMTIME_MAX UINT64_MAX

/* ---- platform ------------------------------------------------------------- */

/* LogGP parameters of one channel (between nodes, or inside a node). */
typedef struct simmpi_loggp {
    simtime o_s, o_r;    /* CPU overhead of sending / receiving a message */
    simtime L;           /* latency */
    simtime o_prime;     /* overhead of one rendezvous control message (o') */
    uint64_t G_fs;       /* gap per byte, femtoseconds (1/bandwidth) */
    /* The sender's CPU time per byte of an eager message, femtoseconds,
     * before the message leaves: its copy into the transport, where the CPU
     * makes it (TCP).  LogGOPS's O; 0 in LogGP. */
    uint64_t O_fs;
    uint64_t eager_limit; /* largest message sent eagerly, bytes */
    /* How much a rank's sending and receiving share one gap, in millionths:
     * each transfer's G(K-1) also holds the rank's other direction for that
     * share of it.  0: full duplex (LogGP's NIC); 1000000: half duplex, as
     * where the rank's own CPU copies every byte (TCP over loopback). */
    uint32_t half_duplex_ppm;
} simmpi_loggp;

/* Collectives, for algorithm selection and the decomposition listing. */
typedef enum simmpi_coll {
    SIMMPI_BARRIER, SIMMPI_BCAST, SIMMPI_REDUCE, SIMMPI_ALLREDUCE, SIMMPI_GATHER,
    SIMMPI_GATHERV, SIMMPI_SCATTER, SIMMPI_SCATTERV, SIMMPI_ALLGATHER, SIMMPI_ALLGATHERV,
    SIMMPI_ALLTOALL, SIMMPI_ALLTOALLV, SIMMPI_REDUCE_SCATTER, SIMMPI_REDUCE_SCATTER_BLOCK,
    SIMMPI_SCAN, SIMMPI_EXSCAN, SIMMPI_NCOLL
} simmpi_coll;
/* The algorithm number of collectives on an intercommunicator (Open MPI's
 * coll/inter and coll/basic: all but Scan and Exscan), named "inter". */
#define SIMMPI_ALG_INTER 15
/* The algorithms of Open MPI 4.1's coll/libnbc, which runs every
 * nonblocking collective: numbered after coll/tuned's and "inter", named
 * "nbc_linear" and so on. */
enum {
    SIMMPI_ALG_NBC_LINEAR = 16, SIMMPI_ALG_NBC_BINOMIAL, SIMMPI_ALG_NBC_RING, SIMMPI_ALG_NBC_REDSCAT,
    SIMMPI_ALG_NBC_DISSEMINATION, SIMMPI_ALG_NBC_CHAIN, SIMMPI_ALG_LIMIT
};
/* The collective of a trace op (blocking and nonblocking alike), or -1. */
int simmpi_coll_of(uint16_t op);

#define SIMMPI_NAME_MAX 64
#define SIMMPI_CURRENCY_MAX 16
/* A CPU that runs less than this share of the time is throttled (a quota)
 * or shared: `phantom calibrate` and the report say so. */
#define SIMMPI_THROTTLED_SHARE 0.95

typedef struct simmpi_platform {
    char name[SIMMPI_NAME_MAX];
    char network_model[SIMMPI_NAME_MAX]; /* "loggp" (the only model so far) */
    simmpi_loggp inter, intra;
    simtime o_poll;           /* a Test (any of the family) that completes nothing */
    simtime o_iprobe;         /* an Iprobe that finds nothing, or a probe that finds */
    uint64_t gamma_fs;        /* reduction arithmetic per byte (collectives) */
    uint32_t cores_per_node;
    double price_per_node_hour;
    /* what the price is in, as the reports write it: "$", "EUR", "€"
     * (doc/platform-format.md); "" if unsaid */
    char currency[SIMMPI_CURRENCY_MAX];
    char calibrated[128]; /* when and how the numbers were measured; "" if unsaid */
    /* The least share of the time a rank had its CPU while it was calibrated
     * (0: not measured).  Not simulated: below SIMMPI_THROTTLED_SHARE the
     * node was throttled or shared, and its communication is slower than
     * the file says. */
    double cpu_share;
    /* CPU noise, jitSim's (noise_period 0: none): each rank's CPU stops for
     * noise_pause once in every noise_period (the file's 1/noise_rate), where
     * in the period a hash of the rank (noise_sync_node: of its node, so that
     * a node's ranks stop together) and the period's number says.
     * Computation and CPU overheads keep their mean rate; what the pauses add
     * is waiting for a paused partner.  doc/simmpi.md, "CPU noise". */
    simtime noise_pause, noise_period;
    int noise_sync_node;
    /* Forced algorithm per collective (Open MPI's numbering); 0 = decision rule. */
    uint8_t coll_alg[SIMMPI_NCOLL];
    /* Set by simmpi_platform_load: the file gave none of o_s, o_r, L, o' and
     * G, for either channel, so the network is the defaults' (a file of
     * cores and price only, say): worth a warning, not an error. */
    int network_defaults;
} simmpi_platform;

/* The warning's words, after the file's name. */
#define SIMMPI_NETWORK_DEFAULTS_WARNING \
    "gives no network parameter (o_s, o_r, L, o', G): predicting with the defaults of doc/platform-format.md"

/* Defaults (a nominal 10 Gbit/s, 1 us network; see doc/platform-format.md). */
void simmpi_platform_default(simmpi_platform *p);
/* Reads a platform file into p: the defaults, then the file's keys; -1
 * with "FILE:LINE: why" in err. */
int simmpi_platform_load(const char *path, simmpi_platform *p, ph_err *err);
/* Is v a currency a platform may name: letters, '$' and the bytes of UTF-8
 * symbols (€, £) only, as it goes into HTML, Markdown and SVG as it is;
 * shorter than SIMMPI_CURRENCY_MAX. */
int simmpi_currency_ok(const char *v);
/* The what-if knobs: multiply every network cost (o_s, o_r, L, o', G) by f. */
void simmpi_platform_scale_net(simmpi_platform *p, double f);

/* ---- collective algorithms -------------------------------------------------- */

const char *simmpi_coll_name(simmpi_coll c);                 /* "allreduce" */
int simmpi_coll_from_name(const char *name);                 /* -1 if unknown */
/* Algorithm names in Open MPI's numbering ("recursive_doubling"); NULL if none. */
const char *simmpi_alg_name(simmpi_coll c, int alg);
int simmpi_alg_from_name(simmpi_coll c, const char *name); /* -1 if unknown */
/* Open MPI 4.1 coll/tuned fixed decision (commutative operations). */
int simmpi_coll_decide(simmpi_coll c, uint32_t comm_size, uint64_t bytes);
/* The algorithm libnbc's default selection gives the I-form of c, on an
 * intracommunicator of comm_size ranks, for count elements of bytes. */
int simmpi_nbc_decide(simmpi_coll c, uint32_t comm_size, uint64_t bytes, uint64_t count);

/* One point-to-point message of a decomposed collective, as seen by its
 * sender (rank in the communicator) in round `round` of its schedule. */
typedef struct simmpi_coll_msg {
    uint32_t src, dst, round;
    uint64_t bytes;
} simmpi_coll_msg;
typedef struct simmpi_coll_args {
    simmpi_coll coll;
    int alg;              /* 0: decide */
    uint32_t size, root;  /* communicator size, root rank */
    uint64_t count;       /* elements per block (alltoall: per peer) */
    uint32_t esize;       /* bytes per element */
    /* v-collectives: bytes per rank (size entries), else NULL; on an
     * intercommunicator, an Alltoallv's are sent to each remote rank
     * (remote_size entries), a Reduce_scatter's are its local receive
     * sizes, and a Gatherv's, Scatterv's or Allgatherv's are what each rank
     * of the local group sends or receives (size entries; needed but at
     * the root's side, simmpi_group_sizes), count * esize this rank's own */
    const uint64_t *vbytes;
    /* An intercommunicator's Alltoallv: the bytes received from each remote
     * rank (remote_size entries; Open MPI posts no receive of 0 bytes); its
     * Gatherv's, Scatterv's or Allgatherv's: what each rank of the remote
     * group sends or receives (needed at the root and in an Allgatherv). */
    const uint64_t *rvbytes;
    /* An intercommunicator's: the remote group's size (size is the local
     * group's; root SIMMPI_ROOT_HERE, SIMMPI_ROOT_NONE or a remote rank;
     * messages to and from the remote group name their peer as
     * SIMMPI_REMOTE | its rank there).  0: an intracommunicator. */
    uint32_t remote_size;
    /* Per collective, the platform's forced algorithm (coll.NAME) for the
     * parts of a composed collective and an intercommunicator's local
     * collectives, as phantom predict runs them; NULL: the rule's. */
    const uint8_t *forced_algs;
    /* An intercommunicator's Allgather: the bytes of each block it receives
     * (count * esize are those of the one it sends). */
    uint64_t rblock;
    /* An intercommunicator's I-form, which Open MPI runs in libnbc: straight
     * to and from the remote ranks (a local group's sizes are not needed). */
    int nonblocking;
} simmpi_coll_args;
#define SIMMPI_ROOT_HERE UINT32_MAX        /* MPI_ROOT: this rank is the root */
#define SIMMPI_ROOT_NONE (UINT32_MAX - 1)  /* MPI_PROC_NULL: another rank of the root's group is */
#define SIMMPI_REMOTE 0x80000000u
/* An intercommunicator collective's root as a trace records it (PH_ROOT,
 * PH_PROC_NULL or a rank of the remote group) as simmpi_coll_args.root
 * takes it; another negative value becomes one no remote group has. */
uint32_t simmpi_inter_root(int32_t root);
/* 1 if an intercommunicator's collective c has a root (Bcast, Reduce,
 * Gather(v), Scatter(v)). */
int simmpi_inter_rooted(simmpi_coll c);
/* 0 if root (as simmpi_inter_root gives it) cannot be c's on an
 * intercommunicator whose remote group has remote_size ranks. */
int simmpi_inter_root_valid(simmpi_coll c, uint32_t root, uint32_t remote_size);
/* 1 if collective coll of event ev (on an intercommunicator if inter, of
 * size ranks, the local group's) has nothing to move, so that Open MPI's
 * MPI layer returns before any collective runs: nothing is sent, nothing
 * is simulated, nothing exported. */
int simmpi_returns_at_once(const ph_event *ev, int coll, int inter, uint32_t size);
/* Calls fn for every message of the collective, rank by rank, round by round,
 * in posting order; receives are reported with dst = the receiver when
 * `recvs` is set, and with bytes = 0 but for a message from an
 * intercommunicator's remote group: its size, as the remote group's
 * decomposition (not listed) sends it.  Returns the algorithm used or -1. */
typedef void (*simmpi_msg_fn)(void *ctx, const simmpi_coll_msg *m, int is_recv);
int simmpi_coll_messages(const simmpi_coll_args *a, simmpi_msg_fn fn, void *ctx, int recvs);

/* ---- an intercommunicator's group sizes (groupsizes.c) ---------------------- */

/* On an intercommunicator, Open MPI runs Gatherv, Scatterv and Allgatherv
 * through each group's rank 0, whose event does not hold what its group's
 * ranks send or receive; the other group's events do.  A scan of trace t
 * finds them (a whole decoding pass; none without intercommunicators). */
typedef struct simmpi_group_sizes simmpi_group_sizes;
int simmpi_group_sizes_scan(ph_trace *t, simmpi_group_sizes **out, ph_err *err);
/* The bytes of each rank of comm's local group (its size entries) in its
 * k-th (from 0) blocking Gatherv, Scatterv or Allgatherv on
 * intercommunicator side comm; NULL if no event of the other group has
 * them. */
const uint64_t *simmpi_group_sizes_get(const simmpi_group_sizes *g, uint32_t comm, uint64_t k);
void simmpi_group_sizes_free(simmpi_group_sizes *g);
/* 1 for the collectives that need them on an intercommunicator. */
int simmpi_inter_group_sized(simmpi_coll c);

/* ---- event sources -------------------------------------------------------- */

/* Where ranks' events come from: a trace directory, or a generator (benchmarks). */
typedef struct simmpi_source {
    uint32_t nranks, nsites;
    /* 1: an event, in *ev; 0: end of the rank's stream; -1: error (err
     * set).  The event, and the arrays it points to, stay as they are until
     * the next call of next for any rank (a pointer, not a copy: an event
     * is over 200 bytes, most of them unset). */
    int (*next)(void *ctx, uint32_t rank, const ph_event **ev, ph_err *err);
    /* Communicator by trace-wide id (NULL if unknown). */
    const ph_comm_info *(*comm)(void *ctx, uint32_t id);
    void *ctx;
    /* An intercommunicator Gatherv's, Scatterv's or Allgatherv's sizes for
     * comm's local group (simmpi_group_sizes_get): 0 with *v set, or NULL
     * when unknown; -1 on error (err set).  May be NULL: those calls are
     * then not simulated. */
    int (*group_sizes)(void *ctx, uint32_t comm, uint64_t k, const uint64_t **v, ph_err *err);
    /* Events of all ranks together, for progress reports: 0 while not known
     * (yet).  May be NULL.  Called from the simulating thread. */
    uint64_t (*events_total)(void *ctx);
    /* Optional (NULL): per rank, where its next read starts, of which the
     * first hot_lines cache lines are read first; the engine asks for them
     * one event ahead.  A hint: entries may be NULL or change. */
    const void *const *hot;
    uint32_t hot_lines;
} simmpi_source;

/* A source reading the ranks of an open trace (readers opened on first use).
 * threads > 1: threads - 1 workers decode ahead of the simulation (which
 * takes the events in the same order: the prediction does not change, and
 * decodes a chunk itself when no worker has started it). */
int simmpi_source_trace(ph_trace *t, uint32_t threads, simmpi_source *src, ph_err *err);
/* Counts the trace's events in a background thread at the lowest priority
 * (a second decoding pass), so that progress reports can say how far along
 * the simulation is; events_total answers 0 until it is done.  Nothing to
 * do when meta.json has the count (phantom finish writes it).  Optional;
 * -1 if the thread cannot start. */
int simmpi_source_trace_count(simmpi_source *src);
void simmpi_source_trace_close(simmpi_source *src);

/* ---- computation vectors ----------------------------------------------------- */

/* The computation unit k of a rank (the time before its k-th MPI call) on the
 * target, in ps.  host_ns is what the trace measured on the host (less
 * host_probe_ns, the recorder's part of it).  The host
 * vector is the default; replayed vectors, a group representative's copy or
 * partial-iteration scaling plug in here. */
typedef struct simmpi_comp_source {
    simtime (*unit)(void *ctx, uint32_t rank, uint64_t k, uint64_t host_ns);
    void *ctx;
    const char *name; /* for reports: "host", a replay name, ... */
} simmpi_comp_source;

/* ns in ps for a unit callback: UINT64_MAX where ns * 1000 would not fit
 * (a damaged vector), which the simulation caps at its horizon and fails
 * on, naming the rank, instead of a product wrapped round to a small,
 * wrong unit.  The second takes fractional ns (NaN and negatives are 0). */
static inline simtime simmpi_ps_of_ns(uint64_t ns)
{
    return ns > UINT64_MAX / 1000 ? UINT64_MAX : ns * 1000;
}
static inline simtime simmpi_ps_of_ns_f(double ns)
{
    double ps = ns * 1000.0;
    if (!(ps > 0))
        return 0;
    return ps < 0x1p63 ? (simtime)llround(ps) : UINT64_MAX;
}

/* ---- running ------------------------------------------------------------------ */

typedef struct simmpi_progress {
    uint64_t events;       /* trace events consumed so far */
    uint64_t total;        /* all the trace's events; 0 while not known */
    uint32_t ranks_done, nranks;
    simtime now;           /* simulated time */
} simmpi_progress;

/* The event queue: a 4-ary heap while fewer than 32,768 events are pending,
 * then a radix heap (AUTO, the fastest here), or one of them throughout. */
enum simmpi_queue { SIMMPI_QUEUE_AUTO, SIMMPI_QUEUE_HEAP, SIMMPI_QUEUE_RADIX };

typedef struct simmpi_options {
    simmpi_platform platform;
    uint32_t ppn;               /* ranks per node (0: platform cores_per_node) */
    const uint32_t *node_of;    /* rank -> node, or NULL for block mapping by ppn */
    simmpi_comp_source comp;    /* NULL unit: the host vector from the trace */
    uint64_t host_probe_ns;     /* the recorder's own time in every gap of the trace
                                 * (ph_trace_probe_gap_ns), taken off each host unit
                                 * before comp sees it (at least 0) */
    double comp_scale;          /* what-if: multiply every computation unit */
    int strict_order;           /* 1: the reference engine: no rank runs ahead of
                                 * deliveries (engine.c: may_run_ahead), every
                                 * collective round built afresh (sched_open); the
                                 * same prediction, more heap events and work: for
                                 * checking just that */
    int queue;                  /* enum simmpi_queue: which event queue (evqueue.h);
                                 * the same prediction with any */
    /* Called from the simulating thread every 2^14 heap events (a few
     * hundred times a second): cheap callers throttle by the clock. */
    void (*progress)(void *ctx, const simmpi_progress *p);
    void *progress_ctx;
} simmpi_options;

/* Where time went: computation, CPU overhead of MPI calls, waiting for data in
 * flight (transfer), and waiting for a partner that had not yet arrived (syn). */
typedef struct simmpi_breakdown {
    uint64_t calls;
    simtime comp, ovh, xfer, syn;
} simmpi_breakdown;

typedef struct simmpi_rank_result {
    simtime finish;           /* virtual clock at MPI_Finalize (or end of stream) */
    simmpi_breakdown b;       /* comp + ovh + xfer + syn == finish */
    uint64_t events;
    uint64_t measured_ns;     /* host: the start-up, then MPI_Init's exit to MPI_Finalize's entry */
    int complete;             /* reached MPI_Finalize */
} simmpi_rank_result;

/* A rank the simulation left blocked: what it waits for, in words. */
typedef struct simmpi_stuck {
    uint32_t rank;
    uint16_t op;      /* the MPI call it is blocked in */
    uint32_t site;
    simtime since;
    char what[400];
} simmpi_stuck;

typedef struct simmpi_result {
    uint32_t nranks, nnodes;
    simtime total;            /* max over ranks of finish */
    uint64_t measured_ns;     /* max over ranks of the host run time (start-up and span) */
    uint64_t events, messages, heap_events;
    simmpi_rank_result *ranks;
    simtime *startup;         /* per rank: the computation before MPI_Init (its process's start-up),
                               * in ranks[].b.comp; apart, so that ranks[] keeps its size, which
                               * the engine's hot loop indexes */
    simmpi_breakdown ops[PH_OP_LIMIT]; /* per MPI function (calls, ovh, xfer, syn) */
    uint32_t nsites;
    simmpi_breakdown *sites;  /* per trace-wide call site */
    uint16_t *site_op;        /* per call site, the MPI call made there (enum ph_op):
                               * ph_site_op_note's, PH_SITE_OPS when it saw several */
    uint64_t coll_calls[SIMMPI_NCOLL][SIMMPI_ALG_LIMIT]; /* collective calls by algorithm (SIMMPI_ALG_INTER:
                                             * on intercommunicators, once a call) */
    /* Set when the simulation could not finish (a deadlock): the stuck ranks. */
    simmpi_stuck *stuck;
    uint32_t nstuck;
    uint64_t unmatched_sends; /* messages nobody received */
    /* Collective calls (one a rank) not simulated, so costing nothing: on an
     * intercommunicator, a Gatherv, Scatterv or Allgatherv whose group's
     * sizes are not known (simmpi_source.group_sizes), or a Scan. */
    uint64_t unsimulated_colls;
    /* Tests that completed nothing and Iprobes that found nothing, and what
     * they were charged (o_poll, o_iprobe): their number is the recorded
     * run's, set by its timing, not the target's. */
    uint64_t failed_polls;
    simtime failed_poll_time;
    /* Failed Tests and Iprobes not charged: their requests had completed
     * (an Iprobe's message had arrived) in the simulation, so the target's
     * call would have succeeded. */
    uint64_t folded_polls;
    /* Blocked in a Test the recorded run saw succeed, a rank would on the
     * target have failed that Test and gone on with its polling loop: the
     * computation and failed polls that loop then has left, up to the wait,
     * were not charged again (doc/simmpi.md section 4). */
    simtime test_wait_credit;
} simmpi_result;

/* Defaults: the default platform, block placement, host vectors, scale 1. */
void simmpi_options_default(simmpi_options *o);

/* "auto", "heap" or "radix": enum simmpi_queue; -1 for anything else. */
int simmpi_queue_named(const char *name);

/* Runs the simulation.  0: done (res->nstuck > 0 means a deadlock: the
 * prediction is then partial); -1: the trace cannot be followed (err names
 * the rank and event).  Free res with simmpi_result_free. */
int simmpi_run(const simmpi_options *o, const simmpi_source *src, simmpi_result **res, ph_err *err);
void simmpi_result_free(simmpi_result *res);

/* ps -> "1.234 ms" style, for humans. */
const char *simmpi_fmt_time(simtime t, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
