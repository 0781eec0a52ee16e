/* rec.h - internals of libpmpi-rec, the LD_PRELOAD recorder.
 *
 * One process is one MPI rank, so the recorder keeps one rec_state per
 * process.  Under MPI_THREAD_MULTIPLE every change to it happens under
 * rec_state.mu (taken only when the application asked for that level);
 * scratch buffers are thread-local (lib/ph_call.c); the call counters are
 * atomics.  Nothing else is shared.
 */
#ifndef REC_H
#define REC_H

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif
#include <stdatomic.h>
#include <stdint.h>

#include "ph_call.h"
#include "ph_clock.h"
#include "ph_trace.h"

#define REC_MAX_DEPTH 8

typedef struct rec_comm {
    uint32_t local;   /* local index + 1; 0 = slot unused */
    uint64_t gid;
    uint64_t key;     /* what children hash as their parent: the gid, or for an
                         intercommunicator a value both sides share */
    int size, rsize;  /* rsize > 0: intercommunicator */
    int32_t *members; /* world ranks */
    int32_t *remote;
    int all_in_set;   /* every member (and remote) is in the logged subgroup */
} rec_comm;

typedef struct rec_type {
    uint32_t local; /* local index; 0 = not yet defined (index 0 is "no type") */
    uint64_t size;  /* bytes of data; 64-bit: a derived type can hold more than 2 GiB */
    int contiguous; /* data is `size` bytes at the buffer: memcpy is enough */
} rec_type;

enum req_kind { RK_SEND = 1, RK_RECV, RK_COLL, RK_MSG, RK_OTHER };

typedef struct rec_req {
    MPI_Request key;
    uint8_t used;    /* slot holds a request */
    uint64_t id;
    uint8_t kind, persistent;
    uint64_t stamp; /* last call that claimed it (see rec_req_claim) */
    pthread_t thread; /* the thread that created it */
    /* what a receive or collective needs at completion, for the message log */
    void *buf;
    int count;
    MPI_Datatype dtype;
    MPI_Comm comm;
    ph_call *coll; /* a copy of the nonblocking collective's arguments */
} rec_req;

/* Calls MPI_Init makes to time the recorder's part of a gap (rec_state.c) */
#define REC_PROBE_CALLS 16384

typedef struct rec_state {
    int active;    /* recording; 0 before MPI_Init, after Finalize or a failure */
    int mt;        /* MPI_THREAD_MULTIPLE: take mu */
    pthread_mutex_t mu;
    int rank, nranks;
    uint64_t t0;
    uint64_t startup_ns; /* CPU time of MPI_Init's thread at its entry: the start-up */
    char dir[4096];
    ph_stream *evt, *log;
    int logging;   /* this rank writes a message log */
    uint64_t log_until; /* ... for events before this one (PHANTOM_LOG_UNTIL) */
    struct rec_logged_values {
        uint64_t event; /* results logged before this event: */
        uint32_t n;     /* how many */
    } wtime, time, usage, clock; /* of MPI_Wtime, time(), getrusage and times, clock_gettime and gettimeofday */
    uint8_t *log_set; /* subgroup: world ranks whose logs cover only incoming traffic */
    int depth;
    double flush_secs;
    uint64_t last_flush;

    /* encoding state: what the reader reconstructs */
    uint64_t next_index, prev_exit, next_req;
    uint64_t prev_done; /* clock when the recorder finished the last call: its next gap starts there */
    uint64_t *probe;    /* while MPI_Init times the recorder's part of a gap: the gaps (rec_state.c) */
    uint32_t nprobe;    /* at most REC_PROBE_CALLS */
    uint64_t call_stamp;

    rec_comm *comms; size_t ncomms;     /* by Fortran handle index (MPI_Comm_c2f) */
    uint32_t next_comm_local;
    struct { uint64_t base; uint32_t n; } *occ; size_t nocc, occcap;
    rec_type *types; size_t ntypes;     /* by MPI_Type_c2f */
    uint32_t next_type_local;
    rec_req *reqs; size_t reqcap, nreqs_live;
    struct site { uint64_t key; uint32_t local; } *sites; size_t sitecap, nsites;
    struct module { char *path; uintptr_t base; } *mods; size_t nmods;

    _Atomic uint64_t *counts; /* per counted function */
    _Atomic uint64_t *count_ns; /* per counted function, the passed-through ones' time in MPI */
    _Atomic int warned;

    /* one-entry caches of the last communicator and datatype looked up */
    MPI_Comm last_comm;
    size_t last_comm_slot;
    MPI_Datatype last_type;
    size_t last_type_slot;

    /* CLOCK_MONOTONIC from the TSC (rec_clock.c): ns = t0 + (tsc - c0) * scale / 2^32 */
    uint64_t tsc_c0, tsc_t0, tsc_scale_q32; /* scale 0: use clock_gettime */
    uint64_t tsc_base_c, tsc_base_t;        /* the calibration's first point */
} rec_state;

extern rec_state rec;

/* CLOCK_MONOTONIC nanoseconds.  A vDSO clock_gettime costs about 20 ns here
 * and every call reads the clock twice, so where the TSC is invariant the
 * recorder reads it instead and maps it onto CLOCK_MONOTONIC (rec_clock.c). */
static inline uint64_t rec_now(void)
{
#if defined(__x86_64__)
    if (rec.tsc_scale_q32) {
        uint64_t c = __rdtsc();
        return rec.tsc_t0 + (uint64_t)(((unsigned __int128)(c - rec.tsc_c0) * rec.tsc_scale_q32) >> 32);
    }
#endif
    return ph_clock_mono_ns();
}
/* The clock of the passed-through calls' times (ph_count_time). */
static inline uint64_t ph_pass_now(void) { return rec_now(); }
void rec_clock_init(void);
void rec_clock_refine(void);
void rec_lock(void);
void rec_unlock(void);
/* Stop recording on this rank with one warning; the job goes on. */
void rec_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Something the trace cannot hold: the events so far are sound, so the
 * streams end with a NOTE saying WHY (no END record), then rec_fail(WHY). */
void rec_stop(const char *why);

/* rec_state.c */
void rec_init(ph_call *c);
void rec_finish(int clean);
rec_comm *rec_comm_get(MPI_Comm comm);         /* defines it in the trace if new */
rec_comm *rec_comm_new(MPI_Comm parent, MPI_Comm comm, int idup); /* a created communicator */
rec_type *rec_type_get(MPI_Datatype t);
uint32_t rec_site_local(ph_call *c);
rec_req *rec_req_find(MPI_Request r);
/* Open MPI hands out one shared handle for requests that completed at once
 * (and for MPI_PROC_NULL peers), so a handle can stand for several live
 * requests.  Entries with the same handle are kept in creation order; a call
 * claims the oldest one it has not claimed yet (stamp: one per call),
 * preferring its own thread's: under MPI_THREAD_MULTIPLE threads usually
 * complete their own requests. */
rec_req *rec_req_claim(MPI_Request r, uint64_t stamp);
rec_req *rec_req_find_id(MPI_Request r, uint64_t id);
rec_req *rec_req_add(MPI_Request r, int kind);
void rec_req_remove(rec_req *q);
uint8_t *rec_reserve(size_t n); /* room in the event stream, NULL once failed */
void rec_commit(size_t n);

/* rec_log.c */
void rec_log_completion(ph_call *c, rec_req *q, const MPI_Status *st, uint32_t slot);
void rec_log_call(ph_call *c);
int rec_log_source_wanted(int source_world);

/* The wrappers' entry: time and call site, or 0 when not recording.  Inline,
 * so the backtrace starts in the wrapper and skips one frame only. */
static inline __attribute__((always_inline)) int ph_enter(ph_call *c, int op, int fortran)
{
    if (!rec.active && op != PH_OP_INIT && op != PH_OP_INIT_THREAD)
        return 0;
    /* No memset of the whole ph_call (360 bytes, a visible cost per call):
     * the wrapper sets every field of its roles, and these are the fields
     * the runtime reads whatever the call's roles are. */
    c->op = (uint16_t)op;
    c->fortran = (uint8_t)fortran;
    c->comm = MPI_COMM_NULL;
    c->dtype = c->rdtype = MPI_DATATYPE_NULL;
    c->sbuf = c->rbuf = NULL;
    c->scounts = c->rcounts = NULL;
    c->stypes = c->rtypes = NULL;
    c->flag = 0;
    c->aux = -1;
    /* The clock first: the backtrace is the recorder's work, part of the
     * call, not of the application's computation before it. */
    c->t_entry = rec_now();
    void *pcs[REC_MAX_DEPTH + 1];
    int n = unw_backtrace(pcs, (rec.depth ? rec.depth : 2) + 1); /* depth is set in MPI_Init */
    c->site_depth = n > 1 ? n - 1 : 0;
    memcpy(c->site_pc, pcs + 1, (size_t)c->site_depth * sizeof(void *));
    return 1;
}

#endif
