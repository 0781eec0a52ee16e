/* rec.c - the recorder's side of the generated wrappers: time, call site,
 * and the encoding of one event per MPI call (doc/trace-format.md). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rec.h"

rec_state rec = {.mu = PTHREAD_MUTEX_INITIALIZER};

void rec_lock(void)
{
    if (rec.mt)
        pthread_mutex_lock(&rec.mu);
}

void rec_unlock(void)
{
    if (rec.mt)
        pthread_mutex_unlock(&rec.mu);
}

void rec_fail(const char *fmt, ...)
{
    rec.active = 0;
    if (atomic_exchange(&rec.warned, 1))
        return;
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "phantom: rank %d: %s; recording stopped on this rank, the job continues\n",
            rec.rank, msg);
}

void ph_count_call(unsigned i)
{
    if (rec.counts)
        atomic_fetch_add_explicit(&rec.counts[i], 1, memory_order_relaxed);
}

void ph_count_time(unsigned i, uint64_t before, uint64_t after)
{
    /* the TSC's mapping is refined now and then: never a negative time */
    if (rec.count_ns && after > before)
        atomic_fetch_add_explicit(&rec.count_ns[i], after - before, memory_order_relaxed);
}

void ph_type_freed(MPI_Datatype t)
{
    if (!rec.active || t == MPI_DATATYPE_NULL)
        return;
    rec_lock();
    int f = PMPI_Type_c2f(t);
    if (f >= 0 && (size_t)f < rec.ntypes)
        rec.types[f].local = 0; /* the handle may come back as another type */
    rec.last_type = MPI_DATATYPE_NULL;
    rec_unlock();
}

int ph_pre(ph_call *c)
{
    ph_mark_enter();
    switch (ph_ops[c->op].kind) {
    case PH_K_INIT: {
        /* The process's start-up (exec, loading and relocating its
         * libraries, static constructors, main up to here) is computation
         * the trace's clocks do not see; a prediction of the whole run needs
         * it.  The thread's CPU time, not the wall clock: the process's start
         * is known to 10 ms only (/proc/self/stat). */
        struct timespec ts;
        if (!rec.active && ph_clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
            rec.startup_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        break;
    }
    case PH_K_COMM_FREE: /* the handle is gone after the call: note its index now */
        c->aux = c->comm == MPI_COMM_NULL ? -1 : PMPI_Comm_c2f(c->comm);
        if (rec.active && !rec.probe && c->comm != MPI_COMM_NULL) {
            /* one made by a call not sequenced (MPI_Comm_spawn's) and not
             * used since: defined while its handle still says who is in it */
            rec_lock();
            (void)rec_comm_get(c->comm);
            rec_unlock();
        }
        break;
    case PH_K_ABORT: /* MPI_Abort does not return: write what we have now */
        ph_post(c);
        ph_mark_enter();
        break;
    default:
        break;
    }
    return 1; /* the recorder always makes the real call */
}

/* ---- encoding ---------------------------------------------------------------- */

static int32_t norm_rank(int r)
{
    if (r == MPI_ANY_SOURCE)
        return PH_ANY_SOURCE;
    if (r == MPI_PROC_NULL)
        return PH_PROC_NULL;
    if (r == MPI_ROOT)
        return PH_ROOT;
    return r;
}

static uint64_t req_ref(uint64_t id, uint64_t next_req)
{
    if (id == 0)
        return 0; /* MPI_REQUEST_NULL */
    if (id == UINT64_MAX)
        return 1; /* a request this library never saw created */
    return next_req - id + 2;
}

/* The requests a call refers to, resolved to ids once, before encoding.
 * Thread-local: under MPI_THREAD_MULTIPLE each thread resolves its own. */
typedef struct reqview {
    int n;
    const MPI_Request *h;
    uint64_t *ids;
    uint8_t *kinds;
} reqview;

static void resolve_requests(ph_call *c, const ph_op_info *info, reqview *v)
{
    static _Thread_local __attribute__((tls_model("initial-exec"))) uint64_t *ids;
    static _Thread_local __attribute__((tls_model("initial-exec"))) uint8_t *kinds;
    static _Thread_local __attribute__((tls_model("initial-exec"))) int cap;
    static _Thread_local __attribute__((tls_model("initial-exec"))) MPI_Request one;
    v->n = 0;
    for (const uint8_t *f = info->fields; *f; f++) {
        if (*f == PH_F_REQ) {
            one = info->kind == PH_K_MRECV || info->kind == PH_K_IMRECV ? (MPI_Request)(void *)c->msg
                                                                        : c->req;
            v->h = &one;
            v->n = 1;
        } else if (*f == PH_F_REQS) {
            v->h = c->reqs;
            v->n = c->nreqs;
        }
    }
    if (v->n > cap) {
        int ncap = v->n * 2;
        uint64_t *i2 = realloc(ids, (size_t)ncap * sizeof *i2);
        if (i2)
            ids = i2;
        uint8_t *k2 = realloc(kinds, (size_t)ncap);
        if (k2)
            kinds = k2;
        if (!i2 || !k2) {
            rec_fail("out of memory resolving requests");
            v->n = 0;
            return;
        }
        cap = ncap;
    }
    v->ids = ids;
    v->kinds = kinds;
    uint64_t stamp = ++rec.call_stamp;
    for (int i = 0; i < v->n; i++) {
        rec_req *q = v->h[i] == MPI_REQUEST_NULL ? NULL : rec_req_claim(v->h[i], stamp);
        ids[i] = v->h[i] == MPI_REQUEST_NULL ? 0 : q ? q->id : UINT64_MAX;
        kinds[i] = q ? q->kind : 0;
    }
}

static int recv_kind(int kind) { return kind == RK_RECV; }

static uint8_t *put_status(uint8_t *p, const MPI_Status *st, int valid)
{
    if (!valid || !st)
        return ph_put_sv(p, PH_NO_RANK);
    p = ph_put_sv(p, norm_rank(st->MPI_SOURCE));
    p = ph_put_sv(p, st->MPI_TAG);
    MPI_Count n = 0; /* _x: more than 2 GiB would be MPI_UNDEFINED in an int */
    if (st->MPI_SOURCE != MPI_PROC_NULL)
        PMPI_Get_elements_x(st, MPI_BYTE, &n);
    return ph_put_uv(p, n == MPI_UNDEFINED || n < 0 ? 0 : (uint64_t)n);
}

/* Status of request i of the call's array: only receives have one. */
static int req_has_status(const reqview *v, int i)
{
    return i >= 0 && i < v->n && recv_kind(v->kinds[i]);
}

static int comm_size_of(const rec_comm *k) { return k->rsize ? k->rsize : k->size; }

/* Entries of a collective's receive-count array: one per rank of the remote
 * group on an intercommunicator, but for Reduce_scatter, whose recvcounts
 * say how the result is scattered in the local group (the MPI standard). */
static int rcounts_len(const rec_comm *k, int op)
{
    return (op == PH_OP_REDUCE_SCATTER || op == PH_OP_IREDUCE_SCATTER) ? k->size : comm_size_of(k);
}

static int my_rank_in(MPI_Comm comm)
{
    int r = 0;
    PMPI_Comm_rank(comm, &r);
    return r;
}

/* MPI says which collective arguments matter on which rank; the rest may be
 * garbage and must not be touched.  Normalise so that the trace holds the
 * amounts each rank actually sends and receives. */
static void normalize_coll(ph_call *c, const rec_comm *k)
{
    int inter = k->rsize > 0;
    int me = -1;
    int is_root = 0, none = 0;
    switch (c->op) {
    case PH_OP_GATHER: case PH_OP_IGATHER: case PH_OP_GATHERV: case PH_OP_IGATHERV:
    case PH_OP_SCATTER: case PH_OP_ISCATTER: case PH_OP_SCATTERV: case PH_OP_ISCATTERV:
    case PH_OP_REDUCE: case PH_OP_IREDUCE: case PH_OP_BCAST: case PH_OP_IBCAST:
        if (inter) {
            is_root = c->root == MPI_ROOT;
            none = c->root == MPI_PROC_NULL;
        } else {
            me = my_rank_in(c->comm);
            is_root = c->root == me;
        }
        break;
    default:
        break;
    }
    int gather = c->op == PH_OP_GATHER || c->op == PH_OP_IGATHER || c->op == PH_OP_GATHERV ||
                 c->op == PH_OP_IGATHERV;
    int scatter = c->op == PH_OP_SCATTER || c->op == PH_OP_ISCATTER || c->op == PH_OP_SCATTERV ||
                  c->op == PH_OP_ISCATTERV;
    if (none) {
        c->count = c->rcount = 0;
        c->dtype = c->rdtype = MPI_DATATYPE_NULL;
        c->scounts = c->rcounts = NULL;
        return;
    }
    if (gather) {
        if (!is_root) {
            c->rcount = 0;
            c->rdtype = MPI_DATATYPE_NULL;
            c->rcounts = NULL;
        } else if (inter) {
            c->count = 0;
            c->dtype = MPI_DATATYPE_NULL;
        } else if (c->sbuf == MPI_IN_PLACE) {
            c->count = c->rcounts ? c->rcounts[me] : c->rcount;
            c->dtype = c->rdtype;
        }
    } else if (scatter) {
        if (!is_root) {
            c->count = 0;
            c->dtype = MPI_DATATYPE_NULL;
            c->scounts = NULL;
        } else if (inter) {
            c->rcount = 0;
            c->rdtype = MPI_DATATYPE_NULL;
        } else if (c->rbuf == MPI_IN_PLACE) {
            c->rcount = c->scounts ? c->scounts[me] : c->count;
            c->rdtype = c->dtype;
        }
    } else if (c->sbuf == MPI_IN_PLACE) {
        switch (c->op) {
        case PH_OP_ALLGATHER: case PH_OP_IALLGATHER: case PH_OP_ALLTOALL: case PH_OP_IALLTOALL:
            c->count = c->rcount;
            c->dtype = c->rdtype;
            break;
        case PH_OP_ALLGATHERV: case PH_OP_IALLGATHERV:
            c->count = c->rcounts[my_rank_in(c->comm)];
            c->dtype = c->rdtype;
            break;
        case PH_OP_ALLTOALLV: case PH_OP_IALLTOALLV:
            c->scounts = c->rcounts;
            c->dtype = c->rdtype;
            break;
        case PH_OP_ALLTOALLW: case PH_OP_IALLTOALLW:
            c->scounts = c->rcounts;
            c->stypes = c->rtypes;
            break;
        default:
            break;
        }
    }
}

/* Per-peer byte vector of a v/w collective. */
static uint8_t *put_bytes_vec(uint8_t *p, const int *counts, MPI_Datatype t,
                              const MPI_Datatype *types, int n)
{
    if (!counts)
        return ph_put_uv(p, 0);
    p = ph_put_uv(p, (uint64_t)n);
    uint64_t size = 0;
    if (!types && t != MPI_DATATYPE_NULL)
        size = rec_type_get(t)->size;
    for (int i = 0; i < n; i++) {
        uint64_t s = types ? ph_mpi_type_bytes(types[i]) : size;
        p = ph_put_uv(p, (uint64_t)counts[i] * s);
    }
    return p;
}

static uint32_t type_local(MPI_Datatype t)
{
    return t == MPI_DATATYPE_NULL ? 0 : rec_type_get(t)->local;
}

/* Encode the event; definitions it needs are emitted first. */
static void encode_event(ph_call *c, uint64_t t_exit, const reqview *v)
{
    const ph_op_info *info = &ph_ops[c->op];
    rec_comm *k = NULL;
    uint32_t comm_local = 0, newcomm_local = 0;
    /* Phase 1: resolve handles (may write COMM/TYPE/SITE definitions). */
    if (info->kind == PH_K_COMM_FREE) {
        if (c->aux >= 0 && (size_t)c->aux < rec.ncomms && rec.comms[c->aux].local)
            k = &rec.comms[c->aux];
    } else if (c->comm != MPI_COMM_NULL) {
        k = rec_comm_get(c->comm);
    }
    if (k)
        comm_local = k->local - 1;
    if (k && info->cls == PH_C_COLL)
        normalize_coll(c, k);
    if ((info->kind == PH_K_COMM_NEW || info->kind == PH_K_COMM_DUP || info->kind == PH_K_COMM_IDUP) &&
        c->rc == MPI_SUCCESS && c->newcomm != MPI_COMM_NULL) {
        /* The new communicator's slot may move the table (realloc): k is
         * found again by its index. */
        size_t k_slot = k ? (size_t)(k - rec.comms) : 0;
        rec_comm *nk = rec_comm_new(c->comm, c->newcomm, info->kind == PH_K_COMM_IDUP);
        newcomm_local = nk ? nk->local : 0;
        if (k)
            k = &rec.comms[k_slot];
    }
    uint32_t dt = 0, rdt = 0;
    for (const uint8_t *f = info->fields; *f; f++) {
        if (*f == PH_F_DTYPE)
            dt = type_local(c->dtype);
        else if (*f == PH_F_RDTYPE)
            rdt = type_local(c->rdtype);
    }
    uint32_t site = rec_site_local(c);
    if (!rec.active)
        return;

    /* Phase 2: a bound on the record's size. */
    int n = k ? comm_size_of(k) : 0, nr = k ? rcounts_len(k, c->op) : 0;
    size_t bound = 64 + 16 * PH_MAX_FIELDS + (size_t)(v->n + 1) * 32 +
                   (size_t)(c->scounts ? n : 0) * 10 + (size_t)(c->rcounts ? nr : 0) * 10;
    /* Encode straight into the block: ids and times advance only after the
     * commit, so a block this reservation starts has the right header. */
    uint8_t *rec_buf = rec_reserve(bound);
    if (!rec_buf)
        return;
    uint8_t *p = rec_buf;
    int flag = c->flag;
    /* Request ids advance only once the record is in the stream: a block
     * that starts under it must carry the value from before it. */
    uint64_t next_req = rec.next_req;

    /* Phase 3: the record, in the op table's field order. */
    if (c->op < PH_REC_ESCAPE) {
        *p++ = (uint8_t)c->op;
    } else {
        *p++ = PH_REC_ESCAPE;
        p = ph_put_uv(p, c->op);
    }
    int64_t gap = (int64_t)(c->t_entry - rec.prev_done);
    p = ph_put_sv(p, gap);
    p = ph_put_uv(p, t_exit - c->t_entry);
    p = ph_put_uv(p, site);
    for (const uint8_t *f = info->fields; *f; f++) {
        switch (*f) {
        case PH_F_COMM: p = ph_put_uv(p, comm_local); break;
        case PH_F_PEER: p = ph_put_sv(p, norm_rank(c->peer)); break;
        case PH_F_TAG: p = ph_put_sv(p, c->tag); break;
        case PH_F_COUNT: p = ph_put_uv(p, (uint64_t)(c->count < 0 ? 0 : c->count)); break;
        case PH_F_DTYPE: p = ph_put_uv(p, dt); break;
        case PH_F_RPEER: p = ph_put_sv(p, norm_rank(c->rpeer)); break;
        case PH_F_RTAG: p = ph_put_sv(p, c->rtag); break;
        case PH_F_RCOUNT: p = ph_put_uv(p, (uint64_t)(c->rcount < 0 ? 0 : c->rcount)); break;
        case PH_F_RDTYPE: p = ph_put_uv(p, rdt); break;
        case PH_F_ROOT: p = ph_put_sv(p, norm_rank(c->root)); break;
        case PH_F_SBYTESV: p = put_bytes_vec(p, c->scounts, c->dtype, c->stypes, n); break;
        case PH_F_RBYTESV:
            p = put_bytes_vec(p, c->rcounts, c->rdtype != MPI_DATATYPE_NULL ? c->rdtype : c->dtype,
                              c->rtypes, nr);
            break;
        case PH_F_INT: p = ph_put_sv(p, c->ival); break;
        case PH_F_NEWCOMM: p = ph_put_uv(p, newcomm_local); break;
        case PH_F_NEWREQ: next_req++; break;
        case PH_F_NEWREQ_IF_FLAG:
            if (flag)
                next_req++;
            break;
        case PH_F_REQ:
            p = ph_put_uv(p, req_ref(v->n ? v->ids[0] : 0, next_req));
            break;
        case PH_F_REQS:
            p = ph_put_uv(p, (uint64_t)v->n);
            for (int i = 0; i < v->n; i++)
                p = ph_put_uv(p, req_ref(v->ids[i], next_req));
            break;
        case PH_F_FLAG: p = ph_put_uv(p, flag ? 1 : 0); break;
        case PH_F_STATUS:
        case PH_F_STATUS_IF_FLAG: {
            if (*f == PH_F_STATUS_IF_FLAG && !flag)
                break;
            int valid = info->kind == PH_K_WAIT || info->kind == PH_K_TEST ? req_has_status(v, 0) : 1;
            p = put_status(p, c->status, valid);
            break;
        }
        case PH_F_STATUSES:
        case PH_F_STATUSES_IF_FLAG:
            if (*f == PH_F_STATUSES_IF_FLAG && !flag)
                break;
            for (int i = 0; i < c->nreqs; i++)
                p = put_status(p, &c->statuses[i], req_has_status(v, i));
            break;
        case PH_F_ANY:
        case PH_F_ANY_IF_FLAG:
            if (*f == PH_F_ANY_IF_FLAG && !flag)
                break;
            if (c->index == MPI_UNDEFINED || c->index < 0) {
                p = ph_put_sv(p, PH_UNDEFINED);
            } else {
                p = ph_put_sv(p, c->index);
                p = put_status(p, c->status, req_has_status(v, c->index));
            }
            break;
        case PH_F_SOME:
            if (c->outcount == MPI_UNDEFINED) {
                p = ph_put_uv(p, 0);
                break;
            }
            p = ph_put_uv(p, (uint64_t)c->outcount + 1);
            for (int i = 0; i < c->outcount; i++) {
                p = ph_put_uv(p, (uint64_t)c->indices[i]);
                p = put_status(p, &c->statuses[i], req_has_status(v, c->indices[i]));
            }
            break;
        default:
            break;
        }
    }
    rec_commit((size_t)(p - rec_buf));
    rec.prev_exit += (uint64_t)gap + (t_exit - c->t_entry); /* as a reader rebuilds it */
    rec.next_req = next_req;
    rec.next_index++;
}

/* ---- after the event: request bookkeeping and the message log --------------- */

static void remember_request(ph_call *c, const ph_op_info *info)
{
    if (c->rc != MPI_SUCCESS)
        return;
    int kind = 0, persistent = 0;
    MPI_Request h = c->newreq;
    switch (info->kind) {
    case PH_K_ISEND: kind = RK_SEND; break;
    case PH_K_PSEND: kind = RK_SEND; persistent = 1; break;
    case PH_K_IRECV: case PH_K_IMRECV: kind = RK_RECV; break;
    case PH_K_PRECV: kind = RK_RECV; persistent = 1; break;
    case PH_K_ICOLL: kind = RK_COLL; break;
    case PH_K_COMM_IDUP: kind = RK_OTHER; break;
    case PH_K_MPROBE: kind = RK_MSG; h = (MPI_Request)(void *)c->msg; break;
    case PH_K_IMPROBE:
        if (!c->flag)
            return;
        kind = RK_MSG;
        h = (MPI_Request)(void *)c->msg;
        break;
    default:
        return;
    }
    rec_req *q = rec_req_add(h, kind);
    if (!q)
        return;
    q->id = rec.next_req; /* the id the event just took */
    q->persistent = (uint8_t)persistent;
    q->buf = c->rbuf;
    q->count = c->count;
    q->dtype = c->dtype;
    q->comm = c->comm;
    if (kind == RK_COLL && rec.logging) {
        q->coll = malloc(sizeof *q->coll);
        if (q->coll)
            *q->coll = *c;
    }
}

/* Request i of the call completed: log what it received, forget it unless
 * persistent. */
static void completed(ph_call *c, const reqview *v, int i, const MPI_Status *st)
{
    if (i < 0 || i >= v->n || v->h[i] == MPI_REQUEST_NULL)
        return;
    rec_req *q = rec_req_find_id(v->h[i], v->ids[i]);
    if (!q)
        return;
    if (rec.logging)
        rec_log_completion(c, q, st, (uint32_t)i);
    if (!q->persistent)
        rec_req_remove(q);
}

static void forget(const reqview *v)
{
    rec_req *q = v->n ? rec_req_find_id(v->h[0], v->ids[0]) : NULL;
    if (q)
        rec_req_remove(q);
}

static void after_event(ph_call *c, const reqview *v)
{
    const ph_op_info *info = &ph_ops[c->op];
    switch (info->kind) {
    case PH_K_WAIT:
        completed(c, v, 0, c->status);
        break;
    case PH_K_TEST:
        if (c->flag)
            completed(c, v, 0, c->status);
        break;
    case PH_K_WAITALL:
        for (int i = 0; i < c->nreqs && c->rc == MPI_SUCCESS; i++)
            completed(c, v, i, &c->statuses[i]);
        break;
    case PH_K_TESTALL:
        for (int i = 0; i < c->nreqs && c->flag; i++)
            completed(c, v, i, &c->statuses[i]);
        break;
    case PH_K_WAITANY:
    case PH_K_TESTANY:
        if ((info->kind == PH_K_WAITANY || c->flag) && c->index != MPI_UNDEFINED)
            completed(c, v, c->index, c->status);
        break;
    case PH_K_WAITSOME:
    case PH_K_TESTSOME:
        for (int i = 0; c->outcount != MPI_UNDEFINED && i < c->outcount; i++)
            completed(c, v, c->indices[i], &c->statuses[i]);
        break;
    case PH_K_REQUEST_FREE:
        forget(v);
        break;
    case PH_K_MRECV:
    case PH_K_IMRECV: {
        /* the message handle, from Mprobe/Improbe, knows its communicator */
        rec_req *q = v->n ? rec_req_find_id(v->h[0], v->ids[0]) : NULL;
        if (q)
            c->comm = q->comm;
        forget(v);
        if (info->kind == PH_K_IMRECV)
            remember_request(c, info);
        else if (rec.logging && c->comm != MPI_COMM_NULL)
            rec_log_call(c);
        break;
    }
    case PH_K_COMM_FREE:
        if (c->rc == MPI_SUCCESS && c->aux >= 0 && (size_t)c->aux < rec.ncomms) {
            rec_comm *k = &rec.comms[c->aux];
            rec.last_comm = MPI_COMM_NULL;
            free(k->members);
            free(k->remote);
            memset(k, 0, sizeof *k);
        }
        break;
    default:
        remember_request(c, info);
        if (rec.logging && c->rc == MPI_SUCCESS)
            rec_log_call(c);
        break;
    }
}

static void post(ph_call *c)
{
    uint64_t t_exit = rec_now();
    const ph_op_info *info = &ph_ops[c->op];
    if (info->kind == PH_K_INIT) {
        if (c->rc == MPI_SUCCESS)
            rec_init(c);
        if (!rec.active)
            return;
        /* The recorder's set-up (clock calibration, files, libunwind's
         * first walk) is MPI_Init's time, not the application's first
         * computation unit. */
        t_exit = rec_now();
    }
    if (!rec.active)
        return;
    rec_lock();
    if (rec.probe) { /* MPI_Init timing the recorder's part of a gap: no event */
        if (rec.nprobe < REC_PROBE_CALLS)
            rec.probe[rec.nprobe++] = c->t_entry - rec.prev_done;
        rec.prev_done = rec_now();
    } else if (rec.active) {
        reqview v;
        resolve_requests(c, info, &v);
        encode_event(c, t_exit, &v);
        if (rec.next_index > rec.log_until)
            rec.logging = 0; /* the event at log_until and after: a partial replay stops there */
        if (rec.active)
            after_event(c, &v);
        if (rec.active && rec.flush_secs > 0 &&
            (double)(t_exit - rec.last_flush) > rec.flush_secs * 1e9) {
            /* bound what a killed job loses */
            rec.last_flush = t_exit;
            rec_clock_refine();
            ph_stream_flush(rec.evt);
            if (rec.log)
                ph_stream_flush(rec.log);
        }
        if (info->kind == PH_K_FINALIZE || info->kind == PH_K_ABORT)
            rec_finish(info->kind == PH_K_FINALIZE);
        /* The next computation unit starts when the recorder is done with
         * this call (encoding, call sites, the log copy, a flush), not at
         * the call's exit: a trace's units are the application's alone, and
         * its timeline (prev_exit) runs without the recorder's time after
         * each call (doc/recorder.md). */
        if (rec.active)
            rec.prev_done = rec_now();
    }
    rec_unlock();
}

void ph_post(ph_call *c)
{
    post(c);
    ph_mark_leave(); /* after the recorder's own work, whose time() calls are not the program's */
}
