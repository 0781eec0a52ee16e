/* rep_req.c - requests, and the Wait/Test family answered as recorded.
 *
 * Every request the application gets is a generalized request of ours
 * (MPI_Grequest_start): a real, inert handle it may pass anywhere, unique
 * (Open MPI shares one handle among requests that completed at once, so real
 * handles could not name a request).  A real operation behind it (traffic
 * inside the subgroup) is kept in rep_req.real.  Completion follows the
 * recording: the request, index or indices it names complete - waiting for
 * the real operation, or taking the data from the message log - and their
 * statuses are the recorded ones.  Then the generalized request is completed
 * and waited for, which frees it and sets the application's handle to
 * MPI_REQUEST_NULL, as MPI would.
 */
#include <stdlib.h>
#include <string.h>

#include "rep.h"
#include "rep_util.h"

static rep_map by_handle;

static int q_query(void *extra, MPI_Status *st)
{
    (void)extra;
    rep_fill_status(st, NULL);
    return MPI_SUCCESS;
}
static int q_free(void *extra) { (void)extra; return MPI_SUCCESS; }
static int q_cancel(void *extra, int complete) { (void)extra; (void)complete; return MPI_SUCCESS; }

static uint64_t key(MPI_Request h) { return (uint64_t)(uintptr_t)h; }

rep_req *rep_req_find(MPI_Request h)
{
    return h == MPI_REQUEST_NULL ? NULL : rep_map_get(&by_handle, key(h));
}

rep_req *rep_req_new(ph_call *c, int kind)
{
    rep_req *q = calloc(1, sizeof *q);
    if (!q)
        rep_die("out of memory");
    if (PMPI_Grequest_start(q_query, q_free, q_cancel, NULL, &q->handle) != MPI_SUCCESS)
        rep_die("cannot create a request (MPI_Grequest_start failed)");
    int k = ph_ops[c->op].kind;
    q->id = rep.ev.newreq;
    q->kind = (uint8_t)kind;
    q->persistent = k == PH_K_PSEND || k == PH_K_PRECV;
    q->active = !q->persistent;
    q->real = MPI_REQUEST_NULL;
    q->op = c->op;
    rep_map_put(&by_handle, key(q->handle), q);
    *c->newreq_p = q->handle;
    return q;
}

/* Done with the request: a persistent one becomes inactive, any other is
 * freed and the application's variable (slot) becomes MPI_REQUEST_NULL. */
static void release(rep_req *q, MPI_Request *slot, int free_persistent)
{
    if (q->persistent && !free_persistent) {
        q->active = 0;
        return;
    }
    rep_map_del(&by_handle, key(q->handle));
    PMPI_Grequest_complete(q->handle);
    PMPI_Wait(slot, MPI_STATUS_IGNORE);
    if (q->coll) {
        free((void *)q->coll->rtypes);
        free(q->coll);
    }
    free(q);
}

/* Request q completes: the real operation ends, or its data comes from the
 * log (slot: its index in the call's request array); out gets the status. */
static void finish(rep_req *q, uint32_t slot, const ph_status *s, MPI_Status *out)
{
    if (q->real != MPI_REQUEST_NULL)
        PMPI_Wait(&q->real, MPI_STATUS_IGNORE);
    else if (q->kind == RQ_RECV && s && s->source != PH_PROC_NULL && s->source != PH_NO_RANK)
        rep_log_unpack(slot, q->buf, q->count, q->dtype, s->bytes);
    else if (q->kind == RQ_COLL && q->coll)
        rep_coll_deliver(q->coll, q->comm, slot);
    if (out)
        rep_fill_status(out, q->kind == RQ_RECV ? s : NULL);
}

/* Entry i of the call's requests completed as the recording says. */
static void complete(ph_call *c, uint32_t i, const ph_status *s, MPI_Status *out, MPI_Request *slot)
{
    MPI_Request h = c->reqs ? c->reqs[i] : c->req;
    if (h == MPI_REQUEST_NULL) {
        if (out)
            rep_fill_status(out, NULL);
        return;
    }
    rep_req *q = rep_req_find(h);
    if (!q) { /* created by a call phantom does not replay (file I/O, RMA): wait for it */
        PMPI_Wait(slot, out ? out : MPI_STATUS_IGNORE);
        return;
    }
    finish(q, i, s, out);
    release(q, slot, 0);
}

static const ph_status *status_at(uint32_t i)
{
    return i < rep.ev.nstatus ? &rep.ev.status[i] : NULL;
}

static void all(ph_call *c)
{
    for (uint32_t i = 0; i < (uint32_t)c->nreqs; i++)
        complete(c, i, status_at(i), &c->statuses[i], &c->reqs_p[i]);
}

static void any(ph_call *c)
{
    int32_t i = rep.ev.index;
    if (i == PH_UNDEFINED || i < 0) {
        *c->index_p = MPI_UNDEFINED;
        rep_fill_status(c->status, NULL);
        return;
    }
    *c->index_p = i;
    complete(c, (uint32_t)i, status_at(0), c->status, &c->reqs_p[i]);
}

static void some(ph_call *c)
{
    if (rep.ev.ncompleted == UINT32_MAX) {
        *c->outcount_p = MPI_UNDEFINED;
        return;
    }
    *c->outcount_p = (int)rep.ev.ncompleted;
    for (uint32_t j = 0; j < rep.ev.ncompleted; j++) {
        uint32_t i = (uint32_t)rep.ev.completed[j];
        c->indices_p[j] = (int)i;
        complete(c, i, status_at(j), &c->statuses[j], &c->reqs_p[i]);
    }
}

void rep_wait_family(ph_call *c)
{
    int flag = rep.ev.flag > 0;
    switch (ph_ops[c->op].kind) {
    case PH_K_WAIT: complete(c, 0, status_at(0), c->status, c->req_p); break;
    case PH_K_TEST:
        *c->flag_p = flag;
        if (flag)
            complete(c, 0, status_at(0), c->status, c->req_p);
        break;
    case PH_K_WAITALL: all(c); break;
    case PH_K_TESTALL:
        *c->flag_p = flag;
        if (flag)
            all(c);
        break;
    case PH_K_WAITANY: any(c); break;
    case PH_K_TESTANY:
        *c->flag_p = flag;
        if (flag)
            any(c);
        else
            *c->index_p = MPI_UNDEFINED;
        break;
    case PH_K_WAITSOME: case PH_K_TESTSOME: some(c); break;
    default: rep_die("%s is not replayed", ph_ops[c->op].name);
    }
}

static void start_one(MPI_Request h)
{
    rep_req *q = rep_req_find(h);
    if (!q || !q->persistent)
        rep_die("MPI_Start of a request that is not a persistent one of this replay");
    q->active = 1;
    if (q->kind == RQ_SEND)
        rep_post_send(q);
    else
        rep_post_recv(q);
}

void rep_start(ph_call *c)
{
    if (c->op == PH_OP_START)
        start_one(c->req);
    else
        for (int i = 0; i < c->nreqs; i++)
            start_one(c->reqs[i]);
}

void rep_request_free(ph_call *c)
{
    rep_req *q = rep_req_find(c->req);
    if (!q) {
        c->rc = PMPI_Request_free(c->req_p);
        return;
    }
    if (q->real != MPI_REQUEST_NULL)
        PMPI_Request_free(&q->real); /* it completes on its own, as MPI allows */
    release(q, c->req_p, 1);
}

void rep_cancel(ph_call *c)
{
    rep_req *q = rep_req_find(c->req);
    if (!q)
        c->rc = PMPI_Cancel(c->req_p);
    else if (q->real != MPI_REQUEST_NULL)
        PMPI_Cancel(&q->real);
}
