/* ph_call.h - what a generated MPI wrapper hands to its runtime.
 *
 * lib/gen-wrappers.py turns each line of lib/mpi-calls.def into a C wrapper
 * and Fortran wrappers that fill a ph_call by role and call ph_enter, ph_pre
 * and ph_post.  The recorder (libpmpi-rec) and the replayer each implement
 * these functions; the wrappers themselves are shared.
 */
#ifndef PH_CALL_H
#define PH_CALL_H

#include <mpi.h>
#include <stdint.h>
#include <time.h>

#include "ph_ops.h"

/* Fortran status size in MPI_Fint (MPI_STATUS_SIZE). */
#define PH_F_STATUS_SIZE ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))

typedef struct ph_call {
    uint16_t op;
    uint8_t fortran; /* called through a Fortran binding */
    int rc;          /* the MPI return code */
    uint64_t t_entry;
    void *site_pc[8]; /* raw return addresses of the call site */
    int site_depth;

    /* arguments, by role */
    MPI_Comm comm;
    int peer, tag, count;
    MPI_Datatype dtype;
    const void *sbuf;
    void *rbuf;
    int rpeer, rtag, rcount;
    MPI_Datatype rdtype;
    int root;
    MPI_Op mop;
    long ival;
    const int *scounts, *sdispls, *rcounts, *rdispls;
    const MPI_Datatype *stypes, *rtypes;

    /* handles in and out */
    MPI_Comm newcomm;
    MPI_Comm *commp;     /* Comm_free/disconnect: the freed handle */
    MPI_Request newreq;  /* request created by the call */
    MPI_Request req;     /* request passed in, copied before the call */
    int nreqs;
    MPI_Request *reqs;   /* request array, copied before the call */
    MPI_Message msg;     /* message handle in (Mrecv) or out (Mprobe) */

    /* results */
    MPI_Status *status;   /* never MPI_STATUS_IGNORE: wrappers substitute */
    MPI_Status *statuses; /* never MPI_STATUSES_IGNORE */
    int index, flag, outcount;
    int *indices;

    MPI_Status fstatus; /* a Fortran status converted to C */
    long aux;           /* runtime-private (e.g. the handle index of a freed comm) */

    /* Replay only (gen-wrappers.py --replay): where the runtime writes the
     * outputs of a call it answers itself.  In Fortran wrappers they point to
     * C views that the wrapper converts back.  The recorder never reads them. */
    MPI_Request *newreq_p, *req_p, *reqs_p;
    int *index_p, *flag_p, *outcount_p, *indices_p;
    MPI_Comm *newcomm_p;
    MPI_Message *msg_p;
    void **args; /* communicator-creating calls: every argument (gen-wrappers.py) */
} ph_call;

/* Implemented by each runtime (recorder, replayer).  The runtime's header
 * also defines ph_enter(ph_call *c, int op, int fortran) -> 0 to pass the
 * call straight through; it is inline there so that it can capture the call
 * site from the wrapper's own frame.  ph_pre returns 1 to make the real call,
 * 0 when the runtime answered it itself (the replayer; the recorder's
 * wrappers ignore the result and always make the call). */
int ph_pre(ph_call *c);
void ph_post(ph_call *c);
void ph_count_call(unsigned counted_index);
/* The time a passed-through call took inside MPI (its counter's index):
 * two readings of the recorder's clock, ph_pass_now() (its header defines
 * it), before and after; the recorder's alone: the replayer's wrappers do
 * not time. */
void ph_count_time(unsigned counted_index, uint64_t before, uint64_t after);
void ph_type_freed(MPI_Datatype t);
/* MPI_Wtime: a non-deterministic result like a wildcard's source (programs
 * that time themselves decide from it), logged by the recorder and
 * answered from the log by the replayer. */
double ph_wtime(void);

/* Per thread: has it called MPI through a wrapper (an application thread,
 * not a runtime's progress thread), and is it inside such a call now?  Each
 * runtime's ph_pre marks the entry and its ph_post the exit.  time() is
 * logged and answered only for application code: Open MPI, PMIx and
 * libevent call it too, from inside MPI calls and from their own threads,
 * as often as their timing makes them. */
typedef struct ph_thread_mark {
    int app;    /* this thread has entered an MPI call */
    int in_mpi; /* ... and is inside one now */
} ph_thread_mark;
extern _Thread_local __attribute__((tls_model("initial-exec"))) ph_thread_mark ph_thread;
static inline void ph_mark_enter(void)
{
    ph_thread.app = 1;
    ph_thread.in_mpi++;
}
static inline void ph_mark_leave(void)
{
    if (ph_thread.in_mpi > 0)
        ph_thread.in_mpi--;
}
static inline int ph_in_app_code(void)
{
    return ph_thread.app && !ph_thread.in_mpi;
}
/* time(2) as the application sees it: seconds of the coarse realtime
 * clock, which is what glibc's time() returns. */
int64_t ph_time_now(void);

/* Takes the shared object that holds ADDR (the runtime calling it) out of
 * LD_PRELOAD once MPI_Init has made this process a rank, so that what the
 * rank execs (a shell from system(), a helper) does not load it, and the
 * MPI library with it; what else LD_PRELOAD names stays.  1 when it was
 * there. */
int ph_preload_forget(const void *addr);

/* clock() as glibc computes it, from the runtime's own clock_gettime:
 * glibc's reads CLOCK_PROCESS_CPUTIME_ID inside libc, where no preloaded
 * clock_gettime sees it, and a program that decides from its CPU time must
 * see the recorded values in a replay. */
clock_t clock(void);

/* Bytes of data in one element of T, 0 for MPI_DATATYPE_NULL.  64-bit
 * (MPI_Type_size_x): a derived type may hold more than 2 GiB, where
 * MPI_Type_size answers MPI_UNDEFINED. */
uint64_t ph_mpi_type_bytes(MPI_Datatype t);
/* 1 when COUNT elements of T (of SIZE bytes each) are SIZE x COUNT bytes at
 * the buffer, as MPI_Pack would lay them out: memcpy is enough.  The
 * recorder logs such data so, and the replayer copies it back so. */
int ph_mpi_type_is_plain(MPI_Datatype t, uint64_t size);

/* Shared helpers (lib/ph_call.c).  Arrays live in grow-only thread-local
 * scratch, valid until the same thread's next MPI call. */
MPI_Request *ph_copy_requests(ph_call *c, const MPI_Request *reqs, int n);
MPI_Status *ph_scratch_statuses(ph_call *c, int n);
void *ph_fortran_pmpi(void **cache, const char *name);
const void *ph_fortran_buffer_c(const void *p);
#define ph_fortran_buffer(p) ((void *)ph_fortran_buffer_c(p))
int ph_fortran_status_ignored(const MPI_Fint *s);
int ph_fortran_statuses_ignored(const MPI_Fint *s);
MPI_Fint *ph_scratch_fortran_statuses(ph_call *c, int n);
MPI_Status *ph_fortran_status(ph_call *c, const MPI_Fint *s);
MPI_Status *ph_fortran_statuses(ph_call *c, const MPI_Fint *s, int n);
int *ph_fortran_indices(ph_call *c, const MPI_Fint *idx, int n);
MPI_Request *ph_fortran_requests(ph_call *c, const MPI_Fint *reqs, int n);
const MPI_Datatype *ph_fortran_types(ph_call *c, const MPI_Fint *types, int which);

#endif
