/* rep_p2p.c - point-to-point calls.
 *
 * A message between two ranks replayed in this job goes through the carrier
 * (rep_comm.c), from the recorded source with the recorded tag, so that the
 * matching order is the recorded one even for MPI_ANY_SOURCE and
 * MPI_ANY_TAG.  A message from outside comes from the message log; a message
 * to outside goes nowhere, but its buffer is still read (rep_touch), so the
 * memory traffic of sending stays in the measured run.
 */
#include <stdlib.h>
#include <string.h>

#include "rep.h"
#include "rep_util.h"

void rep_fill_status(MPI_Status *st, const ph_status *s)
{
    if (!st)
        return;
    if (!s || s->source == PH_NO_RANK) { /* MPI's empty status */
        st->MPI_SOURCE = MPI_ANY_SOURCE;
        st->MPI_TAG = MPI_ANY_TAG;
        st->MPI_ERROR = MPI_SUCCESS;
        PMPI_Status_set_elements_x(st, MPI_BYTE, 0);
        PMPI_Status_set_cancelled(st, 0);
        return;
    }
    st->MPI_SOURCE = s->source == PH_PROC_NULL ? MPI_PROC_NULL : s->source;
    st->MPI_TAG = s->tag == PH_ANY_TAG ? MPI_ANY_TAG : s->tag;
    st->MPI_ERROR = MPI_SUCCESS;
    PMPI_Status_set_elements_x(st, MPI_BYTE, (MPI_Count)s->bytes);
    PMPI_Status_set_cancelled(st, 0);
}

#define TOUCH_CHUNK (1 << 20)

/* Read the data a send would have read: pack it into scratch, as many
 * elements at a time as fill about TOUCH_CHUNK bytes.  Packed whole, the
 * scratch held the largest message sent out of the replay, rounded up to a
 * power of two, until the replay ended (128 MiB for one of 80 MiB). */
void rep_touch(const void *buf, int count, MPI_Datatype t)
{
    int one = 0;
    if (count <= 0 || t == MPI_DATATYPE_NULL || buf == MPI_IN_PLACE)
        return;
    PMPI_Pack_size(1, t, MPI_COMM_SELF, &one);
    MPI_Aint lb, extent;
    PMPI_Type_get_extent(t, &lb, &extent);
    if (one <= 0) /* an element of 2 GiB or more: MPI_Pack takes an int size */
        return;
    int per = one >= TOUCH_CHUNK ? 1 : TOUCH_CHUNK / one, size = 0;
    PMPI_Pack_size(per, t, MPI_COMM_SELF, &size);
    void *room = rep_scratch((size_t)size);
    for (int i = 0; i < count; i += per) {
        int n = count - i < per ? count - i : per, pos = 0;
        PMPI_Pack((const char *)buf + (MPI_Aint)i * extent, n, t, room, size, &pos, MPI_COMM_SELF);
    }
}

static const ph_status *recorded_status(void)
{
    return rep.ev.nstatus ? &rep.ev.status[0] : NULL;
}

/* ---- sends ------------------------------------------------------------------------- */

void rep_send(ph_call *c, rep_comm *k)
{
    int to = rep_inside(k, c->peer);
    if (c->peer == MPI_PROC_NULL)
        return;
    if (to < 0) {
        rep_touch(c->sbuf, c->count, c->dtype);
        return;
    }
    switch (c->op) { /* Rsend as Send: the receiver's readiness is not replayed */
    case PH_OP_SSEND: c->rc = PMPI_Ssend(c->sbuf, c->count, c->dtype, to, c->tag, k->carrier); break;
    case PH_OP_BSEND: c->rc = PMPI_Bsend(c->sbuf, c->count, c->dtype, to, c->tag, k->carrier); break;
    default: c->rc = PMPI_Send(c->sbuf, c->count, c->dtype, to, c->tag, k->carrier); break;
    }
}

void rep_isend(ph_call *c, rep_comm *k)
{
    rep_req *q = rep_req_new(c, RQ_SEND);
    q->comm = k;
    q->sbuf = c->sbuf;
    q->count = c->count;
    q->dtype = c->dtype;
    q->peer = c->peer;
    q->tag = c->tag;
    if (!q->persistent)
        rep_post_send(q);
}

void rep_post_send(rep_req *q)
{
    int to = rep_inside(q->comm, q->peer);
    if (q->peer == MPI_PROC_NULL)
        return;
    if (to < 0) {
        rep_touch(q->sbuf, q->count, q->dtype);
        return;
    }
    MPI_Comm cc = q->comm->carrier;
    switch (q->op) {
    case PH_OP_ISSEND: case PH_OP_SSEND_INIT:
        PMPI_Issend(q->sbuf, q->count, q->dtype, to, q->tag, cc, &q->real);
        break;
    case PH_OP_IBSEND: case PH_OP_BSEND_INIT:
        PMPI_Ibsend(q->sbuf, q->count, q->dtype, to, q->tag, cc, &q->real);
        break;
    default:
        PMPI_Isend(q->sbuf, q->count, q->dtype, to, q->tag, cc, &q->real);
        break;
    }
}

/* ---- receives ---------------------------------------------------------------------- */

/* Receive what the recorded status s says arrived: really, from a replayed
 * sender, or from the log. */
static void receive(rep_comm *k, void *buf, int count, MPI_Datatype t, const ph_status *s)
{
    if (!s || s->source == PH_PROC_NULL || s->source == PH_NO_RANK)
        return;
    int from = rep_inside(k, s->source);
    if (from >= 0)
        PMPI_Recv(buf, count, t, from, s->tag, k->carrier, MPI_STATUS_IGNORE);
    else
        rep_log_unpack(0, buf, count, t, s->bytes);
}

void rep_recv(ph_call *c, rep_comm *k)
{
    const ph_status *s = recorded_status();
    receive(k, c->rbuf, c->count, c->dtype, s);
    rep_fill_status(c->status, s);
}

void rep_irecv(ph_call *c, rep_comm *k)
{
    rep_req *q = rep_req_new(c, RQ_RECV);
    q->comm = k;
    q->buf = c->rbuf;
    q->count = c->count;
    q->dtype = c->dtype;
    q->peer = c->peer;
    q->tag = c->tag;
    if (!q->persistent)
        rep_post_recv(q);
}

/* Post the real receive now if the message will come from a replayed rank.
 * For a wildcard receive the recording says later (at its Wait) which
 * message it matched: rep_log.c found that out at MPI_Init. */
void rep_post_recv(rep_req *q)
{
    int32_t src = q->peer, tag = q->tag;
    if (rep.isolated || q->peer == MPI_PROC_NULL)
        return;
    if ((src == MPI_ANY_SOURCE || tag == MPI_ANY_TAG) && !rep_wildcard_match(q->id, &src, &tag))
        return; /* never completed in the recorded run */
    int from = rep_inside(q->comm, src);
    if (from >= 0)
        PMPI_Irecv(q->buf, q->count, q->dtype, from, tag, q->comm->carrier, &q->real);
}

/* Sendrecv(_replace): both halves at once, so that two replayed ranks
 * exchanging this way never wait for each other's blocking send. */
void rep_sendrecv(ph_call *c, rep_comm *k)
{
    int replace = c->op == PH_OP_SENDRECV_REPLACE;
    const void *sb = replace ? c->rbuf : c->sbuf;
    int rcount = replace ? c->count : c->rcount;
    MPI_Datatype rtype = replace ? c->dtype : c->rdtype;
    MPI_Request rq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    void *copy = NULL;
    int to = rep_inside(k, c->peer);
    if (to >= 0 && replace) { /* the receive overwrites the buffer: send a copy */
        int size = 0, pos = 0;
        PMPI_Pack_size(c->count, c->dtype, k->carrier, &size);
        copy = rep_xmalloc((size_t)size);
        PMPI_Pack(sb, c->count, c->dtype, copy, size, &pos, k->carrier);
        PMPI_Isend(copy, pos, MPI_PACKED, to, c->tag, k->carrier, &rq[0]);
    } else if (to >= 0) {
        PMPI_Isend(sb, c->count, c->dtype, to, c->tag, k->carrier, &rq[0]);
    } else if (c->peer != MPI_PROC_NULL) {
        rep_touch(sb, c->count, c->dtype);
    }
    const ph_status *s = recorded_status();
    int from = s && s->source >= 0 ? rep_inside(k, s->source) : -1;
    if (from >= 0)
        PMPI_Irecv(c->rbuf, rcount, rtype, from, s->tag, k->carrier, &rq[1]);
    else
        receive(k, c->rbuf, rcount, rtype, s);
    PMPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    free(copy);
    rep_fill_status(c->status, s);
}

/* ---- probes and matched messages ------------------------------------------------- */

typedef struct rep_msg {
    rep_comm *comm;
    MPI_Message real; /* probed for real: a message from a replayed rank */
} rep_msg;

static rep_map messages; /* by recorded id */

static void matched(ph_call *c, rep_comm *k, const ph_status *s)
{
    rep_msg *m = calloc(1, sizeof *m);
    if (!m)
        rep_die("out of memory");
    m->comm = k;
    m->real = MPI_MESSAGE_NO_PROC;
    int from = s && s->source >= 0 ? rep_inside(k, s->source) : -1;
    if (from >= 0)
        PMPI_Mprobe(from, s->tag, k->carrier, &m->real, MPI_STATUS_IGNORE);
    /* A message from the log has no real handle: MPI_MESSAGE_NO_PROC stands
     * for it, and MPI_Mrecv finds it by the id the recording gives. */
    *c->msg_p = m->real;
    rep_map_put(&messages, rep.ev.newreq, m);
}

void rep_probe(ph_call *c, rep_comm *k)
{
    const ph_status *s = recorded_status();
    int kind = ph_ops[c->op].kind, flag = rep.ev.flag > 0;
    if (kind == PH_K_IPROBE || kind == PH_K_IMPROBE) {
        *c->flag_p = flag;
        if (!flag)
            return;
    }
    rep_fill_status(c->status, s);
    if (kind == PH_K_MPROBE || kind == PH_K_IMPROBE)
        matched(c, k, s);
}

void rep_mrecv(ph_call *c)
{
    rep_msg *m = rep.ev.nreqs ? rep_map_del(&messages, rep.ev.reqs[0]) : NULL;
    const ph_status *s = recorded_status();
    *c->msg_p = MPI_MESSAGE_NULL;
    if (!m && c->msg != MPI_MESSAGE_NO_PROC)
        rep_die("%s of a message this replay never probed", ph_ops[c->op].name);
    if (c->op == PH_OP_IMRECV) {
        rep_req *q = rep_req_new(c, RQ_RECV);
        q->comm = m ? m->comm : NULL;
        q->buf = c->rbuf;
        q->count = c->count;
        q->dtype = c->dtype;
        if (m && m->real != MPI_MESSAGE_NO_PROC)
            PMPI_Imrecv(c->rbuf, c->count, c->dtype, &m->real, &q->real);
    } else if (m && m->real != MPI_MESSAGE_NO_PROC) {
        PMPI_Mrecv(c->rbuf, c->count, c->dtype, &m->real, MPI_STATUS_IGNORE);
        rep_fill_status(c->status, s);
    } else {
        if (s && s->source >= 0)
            rep_log_unpack(0, c->rbuf, c->count, c->dtype, s->bytes);
        rep_fill_status(c->status, s);
    }
    free(m);
}
