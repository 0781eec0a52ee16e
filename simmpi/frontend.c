/* frontend.c - one rank's ph_events as engine instructions.
 *
 * Every MPI call becomes one or more instructions (a blocking Recv is a
 * receive plus a wait), the first carrying the computation unit before the
 * call.  Requests get engine requests; persistent ones a new one per Start.
 *
 * A receive from MPI_ANY_SOURCE (or with MPI_ANY_TAG) cannot be matched until
 * we know what it matched, and the trace says so only at the Wait or Test
 * that completed it.  So the front end reads ahead: the receive waits in the
 * instruction ring, marked unresolved, until that completion is read; the
 * engine never executes past it.  Test-family calls follow the recorded
 * flag: a completion happens where the trace says it happened.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define LOOKAHEAD_MAX (1u << 22) /* instructions buffered to resolve one wildcard receive */

/* ---- the instruction ring ------------------------------------------------------ */

static ins *ring_at(fe_rank *f, uint64_t abs) { return &f->q[(f->head + (abs - f->base)) & (f->cap - 1)]; }

static int ring_grow(fe_rank *f)
{
    /* From one slot: a rank of a stencil or a collective code holds one
     * instruction at a time (the engine pops it before the next call is
     * read), so more slots are only cycled through, each a line the next
     * visit misses on; the ring doubles when a call or a wildcard needs more. */
    uint32_t nc = f->cap ? f->cap * 2 : 1;
    ins *q = aligned_alloc(64, nc * sizeof *q); /* one 64-byte ins per cache line */
    if (!q)
        return -1;
    for (uint32_t i = 0; i < f->len; i++)
        q[i] = f->q[(f->head + i) & (f->cap - 1)];
    for (uint32_t i = 0; i < f->len; i++) /* inline request arrays moved with their ins */
        if (q[i].type == I_WAIT && q[i].u.w.n <= 3)
            q[i].u.w.reqs = q[i].u.w.inl;
    free(f->q);
    f->q = q;
    f->cap = nc;
    f->head = 0;
    return 0;
}

typedef struct tctx { /* translating one event */
    sim *s;
    uint32_t rank;
    fe_rank *f;
    const ph_event *ev;
    uint32_t comm;       /* of what is emitted: ev's, or a persistent request's at Start */
    simtime comp;
    int first;
} tctx;

static ins *emit(tctx *t, uint8_t type);

static __attribute__((noinline, cold)) ins *emit_grow(tctx *t, uint8_t type)
{
    if (ring_grow(t->f) < 0) {
        sim_fail(t->s, "out of memory (rank %u)", t->rank);
        return NULL;
    }
    return emit(t, type);
}

/* Appends an instruction; the first of a call carries comp, op and site.
 * Growing the ring is out of line: the common path calls nothing. */
static ins *emit(tctx *t, uint8_t type)
{
    fe_rank *f = t->f;
    if (f->len == f->cap)
        return emit_grow(t, type);
    ins *in = &f->q[(f->head + f->len++) & (f->cap - 1)];
    *in = (ins){.type = type, .op = t->ev->op, .site = t->ev->site, .comm = t->comm};
    if (t->first) {
        in->flags = F_CALL;
        in->comp = t->comp;
        t->first = 0;
    }
    return in;
}

static uint64_t abs_of(const fe_rank *f, const ins *in)
{
    uint32_t pos = (uint32_t)(in - f->q);
    return f->base + ((pos - f->head) & (f->cap - 1));
}

/* A popped Wait's request array (kept for the next Waitall if the larger),
 * a popped collective's per-rank sizes. */
void fe_release(fe_rank *f, ins *in)
{
    if (in->type == I_COLL) {
        free(in->u.c.v);
    } else if (in->u.w.cap > f->sparecap) {
        free(f->spare);
        f->spare = in->u.w.reqs;
        f->sparecap = in->u.w.cap;
    } else {
        free(in->u.w.reqs);
    }
}

/* ---- request map: trace request id -> fe_req --------------------------------------- */

/* The recorder numbers a rank's requests 1, 2, 3, ... and most live only
 * until the next Wait: the live ids are nearly always a short run of the
 * newest.  So an id's entry sits at slot id mod wincap of a window, found
 * with one comparison, no probing and nothing to clean up at deletion.  An
 * entry still alive when a new id wants its slot (a persistent request, a
 * receive posted long before its Wait) moves to the overflow, a hash map
 * of its own; the window doubles instead when half of it is live, so the
 * requests in flight at once, however many, keep their slots. */
#define MAP_FOREIGN UINT64_MAX /* ev->reqs: a request the recorder did not create */
#define WIN_FIRST 16           /* window slots at first; a stencil's 12 requests fit */

static int map_id_ok(uint64_t id) { return id && id != MAP_FOREIGN; }

static void free_aux(fe_req *e) /* what an entry owns (an FK_ICOLL's run is the engine's) */
{
    if (e->kind != FK_ICOLL)
        free(e->pers);
}

static uint32_t ovf_home(uint64_t id, uint32_t mask)
{
    return (uint32_t)((id * 0x9e3779b97f4a7c15ull) >> 32) & mask; /* ids may be anything */
}

static fe_req *ovf_find(const fe_rank *f, uint64_t id)
{
    uint32_t mask = f->ovfcap - 1;
    for (uint32_t i = ovf_home(id, mask);; i = (i + 1) & mask) {
        if (f->ovf[i].id == id)
            return &f->ovf[i];
        if (!f->ovf[i].id)
            return NULL;
    }
}

/* Inline (like map_add and new_req): Waitall's loop calls it once a
 * request, and the call cost more than the lookup. */
static inline __attribute__((always_inline)) fe_req *map_find(fe_rank *f, uint64_t id)
{
    if (f->wincap) {
        fe_req *e = &f->win[id & (f->wincap - 1)];
        if (e->id == id && id) /* a free slot's id is 0, MPI_REQUEST_NULL */
            return e;
    }
    return f->ovfused && map_id_ok(id) ? ovf_find(f, id) : NULL;
}

/* Puts a copy of entry e in the overflow (linear probing, at most half full). */
static int ovf_put(fe_rank *f, const fe_req *e)
{
    if ((f->ovfused + 1) * 2 > f->ovfcap) {
        uint32_t nc = f->ovfcap ? f->ovfcap * 2 : 8;
        fe_req *m = calloc(nc, sizeof *m), *old = f->ovf;
        if (!m)
            return -1;
        uint32_t oc = f->ovfcap;
        f->ovf = m;
        f->ovfcap = nc;
        f->ovfused = 0;
        for (uint32_t i = 0; i < oc; i++)
            if (old[i].id)
                ovf_put(f, &old[i]);
        free(old);
    }
    uint32_t mask = f->ovfcap - 1, i = ovf_home(e->id, mask);
    while (f->ovf[i].id)
        i = (i + 1) & mask;
    f->ovf[i] = *e;
    f->ovfused++;
    return 0;
}

/* Removes entry e from the overflow, shifting back the entries after it
 * that may take its place (no tombstones). */
static void ovf_del(fe_rank *f, fe_req *e)
{
    uint32_t mask = f->ovfcap - 1, i = (uint32_t)(e - f->ovf);
    for (uint32_t j = (i + 1) & mask; f->ovf[j].id; j = (j + 1) & mask) {
        uint32_t home = ovf_home(f->ovf[j].id, mask);
        if (((j - home) & mask) >= ((j - i) & mask)) { /* the hole is on j's probe path */
            f->ovf[i] = f->ovf[j];
            i = j;
        }
    }
    f->ovf[i].id = 0;
    f->ovf[i].run = NULL;
    f->ovfused--;
}

/* A window of nc slots (a power of two) holding the live entries of the
 * old one; an entry whose slot another already holds goes to the overflow. */
static int win_resize(fe_rank *f, uint32_t nc)
{
    /* line-aligned: an entry never straddles two lines */
    fe_req *w = aligned_alloc(64, (size_t)nc * sizeof *w), *old = f->win;
    if (!w)
        return -1;
    memset(w, 0, (size_t)nc * sizeof *w);
    uint32_t oc = f->wincap;
    f->win = w;
    f->wincap = nc;
    f->winused = 0;
    for (uint32_t i = 0; i < oc; i++) {
        if (!old[i].id)
            continue;
        fe_req *e = &w[old[i].id & (nc - 1)];
        if (e->id && ovf_put(f, &old[i]) < 0) {
            free(old);
            return -1;
        }
        if (!e->id) {
            *e = old[i];
            f->winused++;
        }
    }
    free(old);
    return 0;
}

/* The slot for an id map_add's fast path could not place: a first window,
 * an id seen before (a trace cut short may leave requests behind), an id
 * that is no request, or a slot held by another live request. */
static fe_req *map_slot_slow(fe_rank *f, uint64_t id)
{
    if (!map_id_ok(id)) { /* never found again, as MPI_REQUEST_NULL is not */
        if (f->scratch)
            free_aux(f->scratch);
        else
            f->scratch = malloc(sizeof *f->scratch);
        return f->scratch;
    }
    fe_req *e = id <= f->maxid ? map_find(f, id) : NULL;
    if (e) {
        free_aux(e);
        return e;
    }
    if (!f->wincap && win_resize(f, WIN_FIRST) < 0)
        return NULL;
    for (e = &f->win[id & (f->wincap - 1)]; e->id; e = &f->win[id & (f->wincap - 1)]) {
        if (f->winused * 2 < f->wincap) { /* a sparse window: the old entry is long-lived */
            if (ovf_put(f, e) < 0)
                return NULL;
            f->winused--;
            break;
        }
        if (win_resize(f, f->wincap * 2) < 0)
            return NULL;
    }
    f->winused++;
    if (id > f->maxid)
        f->maxid = id;
    return e;
}

static fe_req *map_add_slow(tctx *t, uint64_t id, uint8_t kind)
{
    fe_req *e = map_slot_slow(t->f, id);
    if (!e) {
        sim_fail(t->s, "out of memory (rank %u)", t->rank);
        return NULL;
    }
    *e = (fe_req){.id = id, .ereq = NIL, .kind = kind}; /* the scratch entry's id is never read */
    return e;
}

/* A fresh entry for id (replacing a stale one).  The common case, a new id
 * whose slot is free, calls nothing (and so saves no registers). */
static inline __attribute__((always_inline)) fe_req *map_add(tctx *t, uint64_t id,
                                                             uint8_t kind)
{
    fe_rank *f = t->f;
    if (!f->wincap)
        return map_add_slow(t, id, kind);
    fe_req *e = &f->win[id & (f->wincap - 1)];
    /* an id above every one seen is new: no need to look for it */
    if (e->id || id <= f->maxid || id == MAP_FOREIGN)
        return map_add_slow(t, id, kind);
    f->winused++;
    f->maxid = id;
    *e = (fe_req){.id = id, .ereq = NIL, .kind = kind};
    return e;
}

static __attribute__((noinline, cold)) void map_del_slow(fe_rank *f, fe_req *e)
{
    free_aux(e);
    e->run = NULL;
    if ((uintptr_t)e - (uintptr_t)f->win < (uintptr_t)f->wincap * sizeof *e) {
        e->id = 0;
        f->winused--;
    } else if (e != f->scratch) {
        ovf_del(f, e);
    }
}

static void map_del(fe_rank *f, fe_req *e)
{
    if (e->run || (uintptr_t)e - (uintptr_t)f->win >= (uintptr_t)f->wincap * sizeof *e) {
        map_del_slow(f, e);
        return;
    }
    e->id = 0;
    f->winused--;
}

/* ---- engine requests -------------------------------------------------------------- */

static void req_fill(tctx *t, uint32_t q, uint8_t kind, int32_t peer, int32_t tag)
{
    t->s->rq[q] = (req){.rank = t->rank, .kind = kind, .op = t->ev->op, .site = t->ev->site,
                        .msg = NIL, .next = NIL, .comm = t->comm, .peer = peer, .tag = tag};
}

static __attribute__((noinline, cold)) uint32_t new_req_grown(tctx *t, uint8_t kind, int32_t peer,
                                                              int32_t tag)
{
    uint32_t q = req_grow(t->s);
    if (q != NIL)
        req_fill(t, q, kind, peer, tag);
    return q;
}

/* An engine request for the call being translated (NIL when out of
 * memory).  Growing the pool is out of line: the common path calls nothing. */
static inline __attribute__((always_inline)) uint32_t new_req(tctx *t, uint8_t kind,
                                                              int32_t peer, int32_t tag)
{
    uint32_t q = req_reuse(t->s, t->rank);
    if (q == NIL)
        return new_req_grown(t, kind, peer, tag);
    req_fill(t, q, kind, peer, tag);
    return q;
}

/* A request that completes at once at no cost (PROC_NULL, cancelled). */
static void req_null(sim *s, uint32_t q)
{
    s->rq[q].state |= RS_POSTED | RS_DONE | RS_CHARGED;
}

/* The application freed a request (MPI_Request_free): release it when done. */
static void req_app_free(sim *s, uint32_t q)
{
    if (s->rq[q].state & RS_DONE)
        req_release(s, q);
    else
        s->rq[q].state |= RS_FREED;
}

static int bad_rank(tctx *t, const char *what, int32_t r)
{
    return sim_fail(t->s, "rank %u: event %llu (%s): %s %d is not a rank of the job", t->rank,
                    (unsigned long long)t->ev->seq, ph_ops[t->ev->op].name, what, r);
}

static int world_ok(const tctx *t, int32_t w) { return w >= 0 && (uint32_t)w < t->s->n; }

/* ---- point-to-point ------------------------------------------------------------------ */

static ins *emit_p2p(tctx *t, uint8_t type, int32_t peer, int32_t tag, uint64_t bytes, uint32_t q)
{
    ins *in = emit(t, type);
    if (in)
        in->u.p = (ins_p2p){.peer = peer, .tag = tag, .bytes = bytes, .req = q};
    return in;
}

static int emit_wait(tctx *t, const uint32_t *reqs, uint32_t n)
{
    ins *in = emit(t, I_WAIT);
    if (!in)
        return -1;
    fe_rank *f = t->f;
    in->u.w.n = n;
    if (n <= 3) {
        in->u.w.reqs = in->u.w.inl;
    } else if (f->sparecap >= n) { /* the array a popped Wait left behind */
        in->u.w.reqs = f->spare;
        in->u.w.cap = f->sparecap;
        f->spare = NULL;
        f->sparecap = 0;
    } else {
        in->u.w.reqs = malloc(n * sizeof *reqs);
        in->u.w.cap = n;
    }
    if (!in->u.w.reqs)
        return sim_fail(t->s, "out of memory (rank %u)", t->rank);
    memcpy(in->u.w.reqs, reqs, n * sizeof *reqs);
    return 0;
}

static uint8_t send_flags(uint16_t op)
{
    if (op == PH_OP_SSEND || op == PH_OP_ISSEND || op == PH_OP_SSEND_INIT)
        return F_SYNC;
    if (op == PH_OP_BSEND || op == PH_OP_IBSEND || op == PH_OP_BSEND_INIT)
        return F_BUFFERED;
    return 0;
}

/* Posts a send; returns its engine request (NIL after a failure).  Inline,
 * like post_irecv: an Isend or Irecv is most events. */
static inline __attribute__((always_inline)) uint32_t post_send(tctx *t, int32_t peer_world,
                                                                int32_t tag, uint64_t bytes,
                                                                uint8_t flags)
{
    if (!world_ok(t, peer_world)) {
        bad_rank(t, "destination", peer_world);
        return NIL;
    }
    uint32_t q = new_req(t, RQ_SEND, peer_world, tag);
    ins *in = q == NIL ? NULL : emit_p2p(t, I_SEND, peer_world, tag, bytes, q);
    if (in)
        in->flags |= flags;
    return in ? q : NIL;
}

static int t_send(tctx *t)
{
    const ph_event *ev = t->ev;
    if (ev->peer == PH_PROC_NULL)
        return emit(t, I_NOP) ? 0 : -1;
    uint32_t q = post_send(t, ev->peer_world, ev->tag, ev->bytes, send_flags(ev->op));
    return q == NIL ? -1 : emit_wait(t, &q, 1);
}

/* A receive whose source and tag are known (from a status, or not wildcards). */
static uint32_t post_recv(tctx *t, int32_t src_world, int32_t tag, uint64_t bytes)
{
    if (!world_ok(t, src_world)) {
        bad_rank(t, "source", src_world);
        return NIL;
    }
    uint32_t q = new_req(t, RQ_RECV, src_world, tag);
    return q != NIL && emit_p2p(t, I_RECV, src_world, tag, bytes, q) ? q : NIL;
}

static int t_recv(tctx *t)
{
    const ph_event *ev = t->ev;
    const ph_status *st = ev->nstatus ? &ev->status[0] : NULL;
    if (ev->peer == PH_PROC_NULL || !st || st->source < 0)
        return emit(t, I_NOP) ? 0 : -1;
    uint32_t q = post_recv(t, st->source_world, st->tag, st->bytes);
    return q == NIL ? -1 : emit_wait(t, &q, 1);
}

/* Posts a nonblocking receive for map entry e; wildcards wait for their status. */
static inline __attribute__((always_inline)) int post_irecv(tctx *t, fe_req *e, int32_t peer,
                                                            int32_t peer_world, int32_t tag,
                                                            uint64_t bytes)
{
    uint32_t q = new_req(t, RQ_RECV, peer_world, tag);
    if (q == NIL)
        return -1;
    e->ereq = q;
    if (peer == PH_PROC_NULL) {
        req_null(t->s, q);
        return 0;
    }
    if (peer != PH_ANY_SOURCE && tag != PH_ANY_TAG) {
        if (!world_ok(t, peer_world))
            return bad_rank(t, "source", peer_world);
        return emit_p2p(t, I_RECV, peer_world, tag, bytes, q) ? 0 : -1;
    }
    ins *in = emit_p2p(t, I_RECV, -1, tag, bytes, q);
    if (!in)
        return -1;
    in->flags |= F_UNRESOLVED;
    e->pending = abs_of(t->f, in) + 1;
    t->f->unresolved++;
    return 0;
}

static int t_isend(tctx *t)
{
    const ph_event *ev = t->ev;
    fe_req *e = map_add(t, ev->newreq, FK_SEND);
    if (!e)
        return -1;
    if (ev->peer == PH_PROC_NULL) {
        uint32_t q = new_req(t, RQ_SEND, PH_PROC_NULL, ev->tag);
        if (q == NIL)
            return -1;
        req_null(t->s, q);
        e->ereq = q;
        return 0;
    }
    /* e stays put: posting touches the ring and the engine's pools, not the map */
    e->ereq = post_send(t, ev->peer_world, ev->tag, ev->bytes, send_flags(ev->op));
    return e->ereq == NIL ? -1 : 0;
}

static int t_irecv(tctx *t)
{
    const ph_event *ev = t->ev;
    fe_req *e = map_add(t, ev->newreq, FK_RECV);
    return e ? post_irecv(t, e, ev->peer, ev->peer_world, ev->tag, ev->bytes) : -1;
}

static int t_pinit(tctx *t, uint8_t kind)
{
    const ph_event *ev = t->ev;
    fe_req *e = map_add(t, ev->newreq, kind);
    if (!e)
        return -1;
    if (!(e->pers = malloc(sizeof *e->pers)))
        return sim_fail(t->s, "out of memory (rank %u)", t->rank);
    *e->pers = (fe_pers){
        .comm = ev->comm,
        .peer = ev->peer == PH_PROC_NULL || ev->peer == PH_ANY_SOURCE ? ev->peer : ev->peer_world,
        .tag = ev->tag,
        .flags = send_flags(ev->op),
        .bytes = ev->bytes,
    };
    return 0;
}

/* An MPI_Start names no communicator: the instance is posted on the one
 * the request was created on (t->comm is restored by t_start). */
static int start_one(tctx *t, uint64_t id)
{
    fe_req *e = map_find(t->f, id);
    if (!e || (e->kind != FK_PSEND && e->kind != FK_PRECV))
        return 0; /* a request we never saw created: nothing to simulate */
    if (e->ereq != NIL) /* erroneous MPI: the first instance would be lost, never waited for */
        return sim_fail(t->s, "rank %u: event %llu (%s): starts request %llu, whose last start is not "
                              "yet completed", t->rank, (unsigned long long)t->ev->seq,
                        ph_ops[t->ev->op].name, (unsigned long long)id);
    const fe_pers *p = e->pers;
    t->comm = p->comm;
    if (e->kind == FK_PRECV)
        return post_irecv(t, e, p->peer, p->peer, p->tag, p->bytes);
    if (p->peer == PH_PROC_NULL) {
        uint32_t q = new_req(t, RQ_SEND, PH_PROC_NULL, p->tag);
        if (q == NIL)
            return -1;
        req_null(t->s, q);
        e->ereq = q;
        return 0;
    }
    uint32_t q = post_send(t, p->peer, p->tag, p->bytes, p->flags);
    if (q == NIL)
        return -1;
    map_find(t->f, id)->ereq = q;
    return 0;
}

static int t_start(tctx *t)
{
    int rc = 0;
    for (uint32_t i = 0; i < t->ev->nreqs && rc == 0; i++)
        rc = start_one(t, t->ev->reqs[i]);
    t->comm = t->ev->comm;
    return rc < 0 ? -1 : 0;
}

static int t_sendrecv(tctx *t)
{
    const ph_event *ev = t->ev;
    const ph_status *st = ev->nstatus ? &ev->status[0] : NULL;
    uint32_t reqs[2], n = 0;
    if (ev->rpeer != PH_PROC_NULL && st && st->source >= 0) {
        uint32_t q = post_recv(t, st->source_world, st->tag, st->bytes);
        if (q == NIL)
            return -1;
        reqs[n++] = q;
    }
    if (ev->peer != PH_PROC_NULL) {
        uint32_t q = post_send(t, ev->peer_world, ev->tag, ev->bytes, 0);
        if (q == NIL)
            return -1;
        reqs[n++] = q;
    }
    return n ? emit_wait(t, reqs, n) : 0;
}

/* Probe, Iprobe, Mprobe, Improbe: a found message is probed (and for the M
 * forms received into the message handle) where the trace says it was. */
static int t_probe(tctx *t, unsigned kind)
{
    const ph_event *ev = t->ev;
    if ((kind == PH_K_IPROBE || kind == PH_K_IMPROBE) && ev->flag <= 0) {
        ins *in = emit(t, I_POLL);
        if (!in)
            return -1;
        in->flags |= F_PROBE;
        /* what it looked for, so that it folds where the message is in
         * (engine.c); -1: any source, or one that is no rank */
        in->u.p.peer = world_ok(t, ev->peer_world) ? ev->peer_world : -1;
        in->u.p.tag = ev->tag;
        return 0;
    }
    const ph_status *st = ev->nstatus ? &ev->status[0] : NULL;
    int matched = st && st->source >= 0;
    if (matched && !world_ok(t, st->source_world))
        return bad_rank(t, "source", st->source_world);
    if (matched) {
        uint32_t q = new_req(t, RQ_PROBE, st->source_world, st->tag);
        if (q == NIL || !emit_p2p(t, I_PROBE, st->source_world, st->tag, 0, q))
            return -1;
    }
    if (kind != PH_K_MPROBE && kind != PH_K_IMPROBE)
        return 0;
    uint32_t q = matched ? post_recv(t, st->source_world, st->tag, st->bytes) : NIL;
    if (matched && q == NIL)
        return -1;
    fe_req *e = map_add(t, ev->newreq, FK_MSGH);
    if (!e)
        return -1;
    e->ereq = q;
    return 0;
}

static int t_mrecv(tctx *t, unsigned kind)
{
    const ph_event *ev = t->ev;
    fe_req *h = ev->nreqs ? map_find(t->f, ev->reqs[0]) : NULL;
    uint32_t q = h ? h->ereq : NIL;
    if (h)
        map_del(t->f, h);
    if (kind == PH_K_MRECV)
        return q == NIL ? 0 : emit_wait(t, &q, 1);
    fe_req *e = map_add(t, ev->newreq, FK_RECV);
    if (!e)
        return -1;
    if (q == NIL) { /* MPI_MESSAGE_NO_PROC: completes at once */
        if ((q = new_req(t, RQ_RECV, PH_PROC_NULL, 0)) == NIL)
            return -1;
        req_null(t->s, q);
    }
    e->ereq = q; /* e stays put: new_req touches the engine's pool, not the map */
    return 0;
}

/* ---- waits and tests ------------------------------------------------------------------ */

/* A wildcard receive learns its source: the instruction becomes postable. */
static int resolve(tctx *t, fe_req *e, const ph_status *st)
{
    fe_rank *f = t->f;
    ins *in = ring_at(f, e->pending - 1);
    e->pending = 0;
    f->unresolved--;
    in->flags &= (uint8_t)~F_UNRESOLVED;
    if (!st || st->source < 0) { /* cancelled, or MPI_PROC_NULL: never matched */
        in->type = I_NOP;
        req_null(t->s, e->ereq);
        return 0;
    }
    if (!world_ok(t, st->source_world))
        return bad_rank(t, "matched source", st->source_world);
    in->u.p.peer = st->source_world;
    in->u.p.tag = st->tag;
    in->u.p.bytes = st->bytes;
    t->s->rq[e->ereq].peer = st->source_world;
    t->s->rq[e->ereq].tag = st->tag;
    return 0;
}

static int emit_coll_copy(tctx *t, const ins *c)
{
    ins *in = emit(t, I_COLL);
    if (!in)
        return -1;
    uint8_t flags = in->flags;
    simtime comp = in->comp;
    *in = *c;
    in->flags = flags;
    in->comp = comp;
    return 0;
}

/* A nonblocking collective completed: its Wait or Test blocks until the
 * run is done, billed to the I-call's op and site (the run's rounds
 * advance on their own meanwhile, engine.c). */
static int finish_icoll(tctx *t, nbc_run *run)
{
    ins *in = emit(t, I_NBWAIT);
    if (!in)
        return -1;
    in->op = run->op;
    in->site = run->site;
    in->comm = run->comm;
    in->u.nb = run;
    return 0;
}

/* One completed request: its engine request joins the wait set.  Inline in
 * both loops that call it: it is most of what a Wait costs. */
static inline __attribute__((always_inline)) int complete_one(tctx *t, uint64_t id, const ph_status *st, uint32_t *set, uint32_t *n)
{
    fe_rank *f = t->f;
    if (f->wincap) { /* most: a send or receive in its window slot, posted and known */
        fe_req *w = &f->win[id & (f->wincap - 1)];
        if (w->id == id && id && w->kind <= FK_RECV && w->ereq != NIL && !w->pending && !w->run) {
            set[(*n)++] = w->ereq;
            w->id = 0; /* map_del's work for it */
            f->winused--;
            return 0;
        }
    }
    fe_req *e = map_find(f, id);
    if (!e)
        return 0;
    if (e->kind == FK_ICOLL) {
        int rc = finish_icoll(t, e->run);
        map_del(t->f, map_find(t->f, id));
        return rc;
    }
    if (e->kind == FK_MSGH || e->ereq == NIL)
        return 0;
    if (e->pending && resolve(t, e, st) < 0)
        return -1;
    set[(*n)++] = e->ereq;
    if (e->kind == FK_PSEND || e->kind == FK_PRECV)
        e->ereq = NIL; /* inactive until the next Start */
    else
        map_del(t->f, e);
    return 0;
}

#define WAIT_INLINE 32 /* requests of a Wait handled without malloc (most of them) */

/* A Test that completed nothing.  The engine charges it o_poll, unless the
 * requests it names have completed in the simulation by then (all of them
 * for Testall, one for the others): on the target that Test would have
 * succeeded, and the program's loop would not have polled again.  A Test
 * of one nonblocking collective folds when its schedule is done by the
 * Test's end (engine.c).  Tests of more than three requests, or of
 * requests the engine does not hold (a nonblocking collective among
 * others, a wildcard receive not yet resolved), are always charged. */
static int emit_failed_test(tctx *t, unsigned kind)
{
    const ph_event *ev = t->ev;
    ins *in = emit(t, I_POLL);
    if (!in)
        return -1;
    if (ev->nreqs > 3)
        return 0;
    if (ev->nreqs == 1) {
        const fe_req *e = map_find(t->f, ev->reqs[0]);
        if (e && e->kind == FK_ICOLL && e->run) { /* the run lives until its I_NBWAIT, after this */
            in->flags |= F_NBC;
            in->u.nb = e->run;
            return 0;
        }
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < ev->nreqs; i++) {
        const fe_req *e = map_find(t->f, ev->reqs[i]);
        int held = e && e->kind != FK_ICOLL && e->kind != FK_MSGH && e->ereq != NIL && !e->pending;
        if (held)
            in->u.w.inl[n++] = e->ereq;
        else if (kind == PH_K_TESTALL && ev->reqs[i]) /* MPI_REQUEST_NULL is complete */
            return 0;
    }
    in->u.w.reqs = in->u.w.inl;
    in->u.w.n = n;
    if (kind == PH_K_TESTALL)
        in->flags |= F_ALL;
    return 0;
}

/* A Waitall completes its requests in order, statuses alongside (what
 * ph_event_completions would list): no positions to make and read back. */
static int t_waitall(tctx *t)
{
    const ph_event *ev = t->ev;
    uint32_t set_in[WAIT_INLINE], n = 0;
    uint32_t *set = ev->nreqs > WAIT_INLINE ? malloc(ev->nreqs * sizeof *set) : set_in;
    if (!set)
        return sim_fail(t->s, "out of memory (rank %u)", t->rank);
    int rc = 0;
    for (uint32_t i = 0; i < ev->nreqs && rc == 0; i++)
        rc = complete_one(t, ev->reqs[i], i < ev->nstatus ? &ev->status[i] : NULL, set, &n);
    if (rc == 0 && n)
        rc = emit_wait(t, set, n);
    if (set != set_in)
        free(set);
    return rc;
}

static int t_wait(tctx *t, unsigned kind)
{
    if (kind == PH_K_WAITALL)
        return t_waitall(t);
    const ph_event *ev = t->ev;
    uint32_t nr = ev->nreqs ? ev->nreqs : 1, n = 0;
    uint32_t pos_in[WAIT_INLINE], set_in[WAIT_INLINE];
    const ph_status *st_in[WAIT_INLINE];
    int big = nr > WAIT_INLINE;
    uint32_t *pos = big ? malloc(nr * sizeof *pos) : pos_in;
    uint32_t *set = big ? malloc(nr * sizeof *set) : set_in;
    const ph_status **st = big ? malloc(nr * sizeof *st) : st_in;
    int rc = pos && set && st ? 0 : sim_fail(t->s, "out of memory (rank %u)", t->rank);
    uint32_t k = rc ? 0 : ph_event_completions(ev, pos, st);
    for (uint32_t i = 0; i < k && rc == 0; i++)
        rc = complete_one(t, ev->reqs[pos[i]], st[i], set, &n);
    int test = kind == PH_K_TEST || kind == PH_K_TESTALL || kind == PH_K_TESTANY ||
               kind == PH_K_TESTSOME;
    if (rc == 0 && n)
        rc = emit_wait(t, set, n);
    else if (rc == 0 && test && !k)
        rc = emit_failed_test(t, kind);
    if (big) {
        free(pos);
        free(set);
        free(st);
    }
    return rc;
}

static int t_request_free(tctx *t)
{
    fe_req *e = t->ev->nreqs ? map_find(t->f, t->ev->reqs[0]) : NULL;
    if (!e)
        return 0;
    if (e->pending && resolve(t, e, NULL) < 0)
        return -1;
    if (e->ereq != NIL)
        req_app_free(t->s, e->ereq);
    map_del(t->f, e); /* an FK_ICOLL's run goes on, libnbc's progress too */
    return 0;
}

/* ---- collectives -------------------------------------------------------------------------- */

int simmpi_coll_of(uint16_t op)
{
    switch (op) {
    case PH_OP_BARRIER: case PH_OP_IBARRIER: return SIMMPI_BARRIER;
    case PH_OP_BCAST: case PH_OP_IBCAST: return SIMMPI_BCAST;
    case PH_OP_REDUCE: case PH_OP_IREDUCE: return SIMMPI_REDUCE;
    case PH_OP_ALLREDUCE: case PH_OP_IALLREDUCE: return SIMMPI_ALLREDUCE;
    case PH_OP_GATHER: case PH_OP_IGATHER: return SIMMPI_GATHER;
    case PH_OP_GATHERV: case PH_OP_IGATHERV: return SIMMPI_GATHERV;
    case PH_OP_SCATTER: case PH_OP_ISCATTER: return SIMMPI_SCATTER;
    case PH_OP_SCATTERV: case PH_OP_ISCATTERV: return SIMMPI_SCATTERV;
    case PH_OP_ALLGATHER: case PH_OP_IALLGATHER: return SIMMPI_ALLGATHER;
    case PH_OP_ALLGATHERV: case PH_OP_IALLGATHERV: return SIMMPI_ALLGATHERV;
    case PH_OP_ALLTOALL: case PH_OP_IALLTOALL: return SIMMPI_ALLTOALL;
    case PH_OP_ALLTOALLV: case PH_OP_IALLTOALLV: case PH_OP_ALLTOALLW: case PH_OP_IALLTOALLW:
        return SIMMPI_ALLTOALLV;
    case PH_OP_REDUCE_SCATTER: case PH_OP_IREDUCE_SCATTER: return SIMMPI_REDUCE_SCATTER;
    case PH_OP_REDUCE_SCATTER_BLOCK: case PH_OP_IREDUCE_SCATTER_BLOCK:
        return SIMMPI_REDUCE_SCATTER_BLOCK;
    case PH_OP_SCAN: case PH_OP_ISCAN: return SIMMPI_SCAN;
    case PH_OP_EXSCAN: case PH_OP_IEXSCAN: return SIMMPI_EXSCAN;
    default: return -1;
    }
}

static void set_block(ins_coll *c, int64_t count, uint64_t bytes)
{
    if (!bytes) { /* nothing, or elements of a zero-size datatype: no bytes to move */
        c->count = 0;
        c->esize = 1;
        return;
    }
    uint64_t esize = count > 0 ? bytes / (uint64_t)count : 1;
    c->count = count > 0 ? (uint64_t)count : 0;
    c->esize = esize ? (uint32_t)esize : 1;
    if (esize > UINT32_MAX) { /* elements of 4 GiB or more (count 1 of a large type): as bytes */
        c->count *= esize;
        c->esize = 1;
    }
}

static int copy_v(tctx *t, ins_coll *c, const uint64_t *v, uint32_t n)
{
    if (!n || !v)
        return 0;
    if (n < c->size)
        return sim_fail(t->s, "rank %u: event %llu (%s): %u per-rank sizes for a communicator of %u",
                        t->rank, (unsigned long long)t->ev->seq, ph_ops[t->ev->op].name, n, c->size);
    if (!(c->v = malloc(c->size * sizeof *c->v)))
        return sim_fail(t->s, "out of memory (rank %u)", t->rank);
    memcpy(c->v, v, c->size * sizeof *c->v);
    return 0;
}

/* Ialltoallv posts no receive of 0 bytes (libnbc): c->v gains the bytes
 * from each rank after those to each. */
static __attribute__((noinline, cold)) int nbc_receive_sizes(tctx *t, ins_coll *c)
{
    const ph_event *ev = t->ev;
    uint64_t *v = ev->nrbytes < c->size ? NULL : realloc(c->v, 2 * (size_t)c->size * sizeof *v);
    if (!v) {
        free(c->v);
        c->v = NULL;
        if (ev->nrbytes < c->size)
            return sim_fail(t->s, "rank %u: event %llu (%s): %u per-rank receive sizes for a communicator of %u",
                            t->rank, (unsigned long long)ev->seq, ph_ops[ev->op].name, ev->nrbytes, c->size);
        return sim_fail(t->s, "out of memory (rank %u)", t->rank);
    }
    memcpy(v + c->size, ev->rbytes_v, c->size * sizeof *v);
    c->v = v;
    return 0;
}

/* Sizes of one collective call as this rank sees them; bytes for the decision. */
static int coll_sizes(tctx *t, ins_coll *c, uint64_t *dbytes)
{
    const ph_event *ev = t->ev;
    int root = c->me == c->root;
    switch (c->coll) {
    case SIMMPI_BARRIER: set_block(c, 0, 0); break;
    case SIMMPI_GATHER:
        set_block(c, root ? ev->rcount : ev->count, root ? ev->rbytes : ev->bytes);
        break;
    case SIMMPI_SCATTER:
        set_block(c, root ? ev->count : ev->rcount, root ? ev->bytes : ev->rbytes);
        break;
    case SIMMPI_GATHERV:
        set_block(c, (int64_t)ev->bytes, ev->bytes);
        return root ? copy_v(t, c, ev->rbytes_v, ev->nrbytes) : 0;
    case SIMMPI_SCATTERV:
        set_block(c, (int64_t)ev->rbytes, ev->rbytes);
        return root ? copy_v(t, c, ev->sbytes, ev->nsbytes) : 0;
    case SIMMPI_ALLGATHERV:
    case SIMMPI_REDUCE_SCATTER:
        set_block(c, 1, 1);
        *dbytes = vsum(ev->rbytes_v, ev->nrbytes);
        if (c->coll == SIMMPI_ALLGATHERV)
            *dbytes /= c->size ? c->size : 1;
        return copy_v(t, c, ev->rbytes_v, ev->nrbytes);
    case SIMMPI_ALLTOALLV:
        set_block(c, 1, 1);
        return copy_v(t, c, ev->sbytes, ev->nsbytes);
    case SIMMPI_REDUCE_SCATTER_BLOCK: set_block(c, ev->rcount, ev->rbytes); break;
    default: set_block(c, ev->count, ev->bytes); break;
    }
    *dbytes = c->count * c->esize;
    return 0;
}

/* Drops c's sizes and fails the simulation: they add up past 2^64 bytes.
 * Out of line: build_coll runs sizes_wrap for every collective. */
static __attribute__((noinline, cold)) int sizes_wrapped(tctx *t, ins_coll *c, uint32_t n)
{
    free(c->v);
    c->v = NULL;
    return sim_fail(t->s, "rank %u: event %llu (%s): its sizes on %u ranks add up past 2^64 bytes", t->rank,
                    (unsigned long long)t->ev->seq, ph_ops[t->ev->op].name, n);
}

/* A round moves at most every member's block or all of c's n per-rank
 * sizes: sizes adding up past 2^64 bytes (or wraps, already found) would
 * wrap around to small ones in coll.c's sums.  -1 then, else 0. */
static inline int sizes_wrap(tctx *t, ins_coll *c, uint32_t n, int wraps)
{
    uint64_t all = 0;
    for (uint32_t i = 0; c->v && i < n; i++)
        wraps |= __builtin_add_overflow(all, c->v[i], &all);
    return wraps ? sizes_wrapped(t, c, n) : 0;
}

static int unsimulated(sim *s)
{
    s->res->unsimulated_colls++;
    return 1;
}

/* Counts an intercommunicator collective once a call: at the local rank 0
 * of the side with the lower id.  0. */
static int count_inter(sim *s, int32_t me, uint32_t comm, int coll)
{
    if (me == 0 && sim_p2p_ctx(s, comm) == comm)
        s->res->coll_calls[coll][SIMMPI_ALG_INTER]++;
    return 0;
}

/* An intercommunicator's Alltoallv (the bytes sent to each remote rank,
 * then those received from each, in c->v) or Reduce_scatter (its local
 * group's receive sizes). */
static int inter_vsizes(tctx *t, ins_coll *c)
{
    const ph_event *ev = t->ev;
    int a2a = c->coll == SIMMPI_ALLTOALLV;
    uint32_t n = a2a ? c->rsize : c->size, got = a2a && ev->nsbytes < ev->nrbytes ? ev->nsbytes : ev->nrbytes;
    set_block(c, 1, 1);
    if (got < n)
        return sim_fail(t->s, "rank %u: event %llu (%s): %u per-rank sizes for a %s group of %u", t->rank,
                        (unsigned long long)ev->seq, ph_ops[ev->op].name, got, a2a ? "remote" : "local", n);
    if (!(c->v = malloc((a2a ? 2 : 1) * (size_t)n * sizeof *c->v)))
        return sim_fail(t->s, "out of memory (rank %u)", t->rank);
    memcpy(c->v, a2a ? ev->sbytes : ev->rbytes_v, n * sizeof *c->v);
    if (a2a) {
        memcpy(c->v + n, ev->rbytes_v, n * sizeof *c->v);
        return 0;
    }
    return sizes_wrap(t, c, n, 0); /* a Reduce_scatter moves the sum */
}

/* An intercommunicator's Gatherv, Scatterv or Allgatherv: c->v holds the
 * local group's sizes (from the other group's events: the source's
 * group_sizes, by the call's place among comm's blocking ones), then the
 * remote group's (this rank's event), where coll.c's inter_gatherv needs
 * them; c->count (esize 1) this rank's own bytes.  libnbc's I-forms need
 * no local group's sizes.  1: not known (not simulated). */
static int inter_group_sizes(tctx *t, ins_coll *c, uint32_t comm)
{
    sim *s = t->s;
    const ph_event *ev = t->ev;
    comm_cache *cc = &s->comms[comm];
    if (!c->nb && !cc->vcalls && !(cc->vcalls = calloc(c->size, sizeof *cc->vcalls)))
        return sim_fail(s, "out of memory (rank %u)", t->rank);
    uint64_t k = c->nb ? 0 : cc->vcalls[c->me]++;
    int here = c->root == COLL_ROOT_HERE, all = c->coll == SIMMPI_ALLGATHERV, scatter = c->coll == SIMMPI_SCATTERV;
    int lookup = !c->nb && !here && c->root != COLL_ROOT_NONE;
    const uint64_t *local = NULL, *remote = scatter ? ev->sbytes : ev->rbytes_v;
    uint32_t nremote = scatter ? ev->nsbytes : ev->nrbytes;
    if (!c->nb && !s->src->group_sizes)
        return 1;
    if ((all || here) && nremote < c->rsize)
        return sim_fail(s, "rank %u: event %llu (%s): %u per-rank sizes for a remote group of %u", t->rank,
                        (unsigned long long)ev->seq, ph_ops[ev->op].name, nremote, c->rsize);
    ph_err e;
    if (lookup && s->src->group_sizes(s->src->ctx, comm, k, &local, &e) < 0)
        return sim_fail(s, "%s", e.msg);
    if (lookup && !local)
        return 1;
    c->count = scatter ? ev->rbytes : ev->bytes;
    c->esize = 1;
    if (!(c->v = calloc((size_t)c->size + c->rsize, sizeof *c->v)))
        return sim_fail(s, "out of memory (rank %u)", t->rank);
    if (local)
        memcpy(c->v, local, c->size * sizeof *c->v);
    if (all || here)
        memcpy(c->v + c->size, remote, c->rsize * sizeof *c->v);
    return sizes_wrap(t, c, c->size + c->rsize, 0);
}

/* A collective on intercommunicator comm (coll.c: inter): all but Scan and
 * Exscan, as Open MPI runs them; 1 for a Gatherv, Scatterv or Allgatherv
 * whose group's sizes are not known, which is not simulated. */
static __attribute__((noinline, cold)) int build_inter_coll(tctx *t, ins *in, int coll, uint32_t comm,
                                                            const ph_comm_info *ci)
{
    sim *s = t->s;
    const ph_event *ev = t->ev;
    if (!simmpi_alg_name((simmpi_coll)coll, SIMMPI_ALG_INTER)) /* the ones coll.c's inter runs */
        return unsimulated(s);
    int32_t me = sim_comm_rank(s, comm, t->rank);
    if (me < 0)
        return sim_fail(s, "rank %u: event %llu (%s): rank %u is not in communicator %u", t->rank,
                        (unsigned long long)ev->seq, ph_ops[ev->op].name, t->rank, comm);
    ins_coll *c = &in->u.c;
    c->coll = (uint8_t)coll;
    c->alg = SIMMPI_ALG_INTER;
    c->nb = ph_ops[in->op].kind == PH_K_ICOLL; /* libnbc's, not coll/inter's */
    c->size = ci->size;
    c->rsize = ci->remote_size;
    c->me = (uint32_t)me;
    c->root = 0;
    if (simmpi_inter_rooted((simmpi_coll)coll)) {
        c->root = simmpi_inter_root(ev->root);
        if (!simmpi_inter_root_valid((simmpi_coll)coll, c->root, ci->remote_size))
            return sim_fail(s, "rank %u: event %llu (%s): root %d is not MPI_ROOT, MPI_PROC_NULL or a rank "
                            "of the remote group (%u ranks) of intercommunicator %u",
                            t->rank, (unsigned long long)ev->seq, ph_ops[ev->op].name, ev->root,
                            ci->remote_size, comm);
    }
    in->comm = comm;
    if (simmpi_returns_at_once(ev, coll, 1, c->size))
        return 1;
    /* as coll_sizes, which stays inline in build_coll alone: a Gather's
     * root, a Scatter's receivers and Reduce_scatter_block have their block
     * as the receive's */
    int recvs = coll == SIMMPI_GATHER    ? c->root == COLL_ROOT_HERE
                : coll == SIMMPI_SCATTER ? c->root != COLL_ROOT_HERE
                                         : coll == SIMMPI_REDUCE_SCATTER_BLOCK;
    if (coll == SIMMPI_BARRIER)
        set_block(c, 0, 0);
    else if (coll == SIMMPI_ALLTOALLV || coll == SIMMPI_REDUCE_SCATTER)
        return inter_vsizes(t, c) < 0 ? -1 : count_inter(s, me, comm, coll);
    else if (simmpi_inter_group_sized((simmpi_coll)coll)) {
        int rc = inter_group_sizes(t, c, comm);
        return rc < 0 ? -1 : rc ? unsimulated(s) : count_inter(s, me, comm, coll);
    }
    else
        set_block(c, recvs ? ev->rcount : ev->count, recvs ? ev->rbytes : ev->bytes);
    uint64_t block, all; /* a Gather or Scatter moves a whole group's blocks in one message */
    if (__builtin_mul_overflow(c->count, (uint64_t)c->esize, &block) ||
        __builtin_mul_overflow(block, (uint64_t)(c->size > c->rsize ? c->size : c->rsize), &all))
        return sim_fail(s, "rank %u: event %llu (%s): its size passes 2^64 bytes", t->rank,
                        (unsigned long long)ev->seq, ph_ops[ev->op].name);
    if (coll == SIMMPI_ALLGATHER) { /* the receive block too (ins_coll.v) */
        if (!(c->v = malloc(sizeof *c->v)))
            return sim_fail(s, "out of memory (rank %u)", t->rank);
        c->v[0] = ev->rbytes;
        if (__builtin_mul_overflow(ev->rbytes, (uint64_t)c->rsize, &all)) {
            free(c->v);
            c->v = NULL;
            return sim_fail(s, "rank %u: event %llu (%s): its size passes 2^64 bytes", t->rank,
                            (unsigned long long)ev->seq, ph_ops[ev->op].name);
        }
    }
    return count_inter(s, me, comm, coll);
}

/* Fills a collective instruction for communicator comm; 1: nothing to simulate. */
static int build_coll(tctx *t, ins *in, int coll, uint32_t comm)
{
    sim *s = t->s;
    const ph_comm_info *ci = sim_comm(s, comm);
    if (!ci)
        return sim_fail(s, "rank %u: event %llu (%s): unknown communicator %u", t->rank,
                        (unsigned long long)t->ev->seq, ph_ops[t->ev->op].name, comm);
    if (ci->remote_size)
        return build_inter_coll(t, in, coll, comm, ci);
    /* a rank at its own index (every rank of the world) needs no search */
    int32_t me = t->rank < ci->size && ci->members[t->rank] == (int32_t)t->rank
                     ? (int32_t)t->rank
                     : sim_comm_rank(s, comm, t->rank);
    if (me < 0)
        return sim_fail(s, "rank %u: event %llu (%s): rank %u is not in communicator %u", t->rank,
                        (unsigned long long)t->ev->seq, ph_ops[t->ev->op].name, t->rank, comm);
    ins_coll *c = &in->u.c;
    c->coll = (uint8_t)coll;
    c->size = ci->size;
    c->me = (uint32_t)me;
    c->root = t->ev->root >= 0 && (uint32_t)t->ev->root < ci->size ? (uint32_t)t->ev->root : 0;
    in->comm = comm;
    /* coll/self runs a communicator of one rank (tuned declines it): a copy */
    if (c->size == 1 || simmpi_returns_at_once(t->ev, coll, 0, c->size))
        return 1;
    uint64_t dbytes = 0;
    if (coll_sizes(t, c, &dbytes) < 0)
        return -1;
    uint64_t all;
    if (sizes_wrap(t, c, c->size, __builtin_mul_overflow(c->count * c->esize, (uint64_t)c->size, &all)) < 0)
        return -1;
    /* Every member makes the same decision, call after call: ask the rule
     * once per communicator, collective and size. */
    comm_cache *cc = &s->comms[comm];
    int alg;
    if (ph_ops[t->ev->op].kind == PH_K_ICOLL) { /* libnbc's, not tuned's */
        c->nb = 1;
        alg = simmpi_nbc_decide(coll, c->size, dbytes, c->count);
        if (coll == SIMMPI_ALLTOALLV && c->v && nbc_receive_sizes(t, c) < 0)
            return -1;
    } else if (cc->last_alg && cc->last_coll == coll && cc->last_bytes == dbytes) {
        alg = cc->last_alg;
    } else {
        alg = coll_alg_resolve(coll, s->pf.coll_alg[coll], c->size, dbytes);
        cc->last_coll = (uint8_t)coll;
        cc->last_alg = (uint8_t)alg;
        cc->last_bytes = dbytes;
    }
    c->alg = (uint8_t)alg;
    if (c->me == 0 && alg < SIMMPI_ALG_LIMIT)
        s->res->coll_calls[coll][alg]++;
    return 0;
}

/* The tag of the next nonblocking collective a rank starts on comm.  The
 * k-th I-form that the members of a communicator start is one schedule;
 * libnbc tags each schedule's messages apart, so that they match nothing of
 * another collective started or finished in between.  Blocking
 * collectives' messages have tag 0, these 1 and up. */
static int32_t nbc_tag(tctx *t, uint32_t comm, const ins_coll *c)
{
    comm_cache *cc = &t->s->comms[comm];
    /* c->size, c->me: on an intercommunicator, this side's group */
    if (!cc->nbcalls && !(cc->nbcalls = calloc(c->size, sizeof *cc->nbcalls)))
        return sim_fail(t->s, "out of memory (rank %u)", t->rank);
    return (int32_t)(cc->nbcalls[c->me]++ % INT32_MAX) + 1;
}

static int t_coll(tctx *t, int nonblocking)
{
    const ph_event *ev = t->ev;
    int coll = simmpi_coll_of(ev->op);
    ins tmp = {.type = I_COLL, .op = ev->op, .site = ev->site};
    int rc = coll < 0 ? 1 : build_coll(t, &tmp, coll, ev->comm);
    if (rc < 0)
        return -1;
    if (nonblocking) { /* it starts here and runs on its own until a Wait or Test completes it */
        fe_req *e = map_add(t, ev->newreq, FK_ICOLL);
        if (!e) {
            free(tmp.u.c.v);
            return -1;
        }
        if (rc == 1) { /* nothing to run: complete at once */
            e->kind = FK_SEND;
            if ((e->ereq = new_req(t, RQ_SEND, PH_PROC_NULL, 0)) == NIL)
                return -1;
            req_null(t->s, e->ereq);
            return 0;
        }
        int32_t tag = nbc_tag(t, ev->comm, &tmp.u.c);
        nbc_run *run = tag < 0 ? NULL : nbc_new(t->s, &tmp.u.c, tmp.comm, tag, ev->op, ev->site);
        ins *in = run ? emit(t, I_NBSTART) : NULL;
        if (!in) {
            if (!run)
                free(tmp.u.c.v);
            return -1;
        }
        in->u.nb = run;
        e->run = run;
        return 0;
    }
    return rc == 1 ? 0 : emit_coll_copy(t, &tmp);
}

/* Communicator constructors agree on a context id (and Split on colours):
 * modelled as an allgather of 8 bytes for the splitting ones, then an
 * allreduce of 8 bytes, on the parent communicator. */
static int t_comm_new(tctx *t)
{
    const ph_event *ev = t->ev;
    uint32_t comm = ev->comm;
    int split = ev->op == PH_OP_COMM_SPLIT || ev->op == PH_OP_COMM_SPLIT_TYPE ||
                ev->op == PH_OP_CART_SUB;
    if (ev->op == PH_OP_INTERCOMM_CREATE || ev->op == PH_OP_INTERCOMM_MERGE)
        return 0;
    if (ev->op == PH_OP_COMM_CREATE_GROUP) {
        if (ev->newcomm == PH_COMM_NULL)
            return 0;
        comm = ev->newcomm;
    }
    for (int step = split ? 0 : 1; step < 2; step++) {
        ins tmp = {.type = I_COLL, .op = ev->op, .site = ev->site};
        ph_event fake = *ev;
        fake.count = 1;
        fake.bytes = 8;
        fake.root = 0;
        const ph_event *saved = t->ev;
        t->ev = &fake;
        int rc = build_coll(t, &tmp, step == 0 ? SIMMPI_ALLGATHER : SIMMPI_ALLREDUCE, comm);
        t->ev = saved;
        if (rc < 0 || (rc == 0 && emit_coll_copy(t, &tmp) < 0))
            return -1;
    }
    return 0;
}

static int t_comm_idup(tctx *t)
{
    fe_req *e = map_add(t, t->ev->newreq, FK_SEND);
    if (!e || (e->ereq = new_req(t, RQ_SEND, PH_PROC_NULL, 0)) == NIL)
        return -1;
    req_null(t->s, e->ereq);
    return 0;
}

/* ---- one event ------------------------------------------------------------------------------ */

static int translate_kind(tctx *t, unsigned kind)
{
    switch (kind) {
    case PH_K_FINALIZE:
    case PH_K_ABORT:
        t->f->complete = kind == PH_K_FINALIZE;
        return emit(t, I_END) ? 0 : -1;
    case PH_K_SEND: return t_send(t);
    case PH_K_RECV: return t_recv(t);
    case PH_K_ISEND: return t_isend(t);
    case PH_K_IRECV: return t_irecv(t);
    case PH_K_PSEND: return t_pinit(t, FK_PSEND);
    case PH_K_PRECV: return t_pinit(t, FK_PRECV);
    case PH_K_START:
    case PH_K_STARTALL: return t_start(t);
    case PH_K_SENDRECV: return t_sendrecv(t);
    case PH_K_PROBE:
    case PH_K_IPROBE:
    case PH_K_MPROBE:
    case PH_K_IMPROBE: return t_probe(t, kind);
    case PH_K_MRECV:
    case PH_K_IMRECV: return t_mrecv(t, kind);
    case PH_K_WAIT: case PH_K_WAITALL: case PH_K_WAITANY: case PH_K_WAITSOME:
    case PH_K_TEST: case PH_K_TESTALL: case PH_K_TESTANY: case PH_K_TESTSOME:
        return t_wait(t, kind);
    case PH_K_REQUEST_FREE: return t_request_free(t);
    case PH_K_COLL: return t_coll(t, 0);
    case PH_K_ICOLL: return t_coll(t, 1);
    case PH_K_COMM_DUP:
    case PH_K_COMM_NEW: return t_comm_new(t);
    case PH_K_COMM_IDUP: return t_comm_idup(t);
    default: return 0; /* Init, Pcontrol, Cancel, Comm_free: no time of their own */
    }
}

static simtime comp_unit(sim *s, uint32_t rank, uint64_t k, uint64_t host_ns)
{
    const simmpi_options *o = s->o;
    simtime ps = o->comp.unit ? o->comp.unit(o->comp.ctx, rank, k, host_ns) : host_ns * 1000;
    if (ps > SIM_HORIZON) /* a damaged vector: fail at the horizon, never wrap past it */
        ps = SIM_HORIZON;
    if (o->comp_scale != 1.0)
        ps = sim_scale(ps, o->comp_scale);
    return ps;
}

/* The computation before the rank's first call: its process's start-up, as
 * the host measured it (no replay measures it), scaled by --what-if comp.
 * Once a rank: out of line, out of fe_read's way. */
static __attribute__((noinline, cold)) simtime startup(sim *s, uint32_t rank, const ph_event *ev)
{
    simtime ps = ev->startup_ns > SIM_HORIZON / 1000 ? SIM_HORIZON : ev->startup_ns * 1000;
    if (s->o->comp_scale != 1.0)
        ps = sim_scale(ps, s->o->comp_scale);
    s->res->startup[rank] = ps;
    s->res->ranks[rank].measured_ns = ev->startup_ns; /* the span is added at the end */
    return ps;
}

/* Reads and translates the rank's next event; 0 at the end, -1 on error.
 * Inline in fe_read_ahead, its only caller: once an event, the call's frame
 * cost about 12 instructions. */
static inline __attribute__((always_inline)) int fe_read(sim *s, uint32_t rank)
{
    fe_rank *f = &s->r[rank].fe;
    const ph_event *ev;
    int rc = s->src->next(s->src->ctx, rank, &ev, s->err);
    if (rc < 0) {
        s->failed = 1;
        return -1;
    }
    if (rc == 0) {
        f->eof = 1;
        return 0;
    }
    const ph_op_info *info = ev->op < PH_OP_LIMIT && ph_ops[ev->op].name ? &ph_ops[ev->op] : NULL; /* ph_op, inline */
    if (!info)
        return sim_fail(s, "rank %u: event %llu: unknown op %u", rank, (unsigned long long)ev->seq,
                        ev->op);
    uint64_t gap = f->started ? ph_unit_ns(f->prev_exit, ev->t_entry, s->probe_ns) : 0;
    if (__builtin_expect(gap > SIM_HORIZON / 1000, 0))
        gap = SIM_HORIZON / 1000 + 1; /* no wrap in gap * 1000: the engine fails at the horizon */
    /* the common case, host time as it is, reads no options */
    simtime comp = __builtin_expect(s->comp_plain, 1) ? gap * 1000 : comp_unit(s, rank, f->k, gap);
    if (__builtin_expect(!f->started, 0)) {
        f->t_start = ev->t_exit; /* the host's span starts when MPI_Init returns */
        comp = startup(s, rank, ev);
    }
    f->started = 1;
    f->t_end = ev->t_entry;
    f->prev_exit = ev->t_exit;
    f->events++;
    s->events++;
    f->k++;
    tctx t = {.s = s, .rank = rank, .f = f, .ev = ev, .comm = ev->comm, .comp = comp, .first = 1};
    if (translate_kind(&t, info->kind) < 0)
        return -1;
    if (t.first && !emit(&t, I_NOP)) /* every call accounts its computation unit */
        return -1;
    return 1;
}

/* The next instruction of rank when fe_head has none: reads ahead past
 * unresolved receives. */
ins *fe_read_ahead(sim *s, uint32_t rank)
{
    fe_rank *f = &s->r[rank].fe;
    for (;;) {
        if (f->len && !(f->q[f->head].flags & F_UNRESOLVED))
            return &f->q[f->head];
        if (f->eof) {
            if (!f->len)
                return NULL;
            /* a wildcard receive the trace never completed: it matched nothing we know */
            ins *in = &f->q[f->head];
            in->flags &= (uint8_t)~F_UNRESOLVED;
            in->type = I_NOP;
            f->unresolved--;
            continue;
        }
        if (f->len > LOOKAHEAD_MAX) {
            sim_fail(s, "rank %u: a wildcard receive is still unresolved %u events later", rank,
                     LOOKAHEAD_MAX);
            return NULL;
        }
        if (fe_read(s, rank) < 0)
            return NULL;
    }
}

void fe_free(fe_rank *f)
{
    for (uint32_t i = 0; i < f->len; i++) {
        ins *in = &f->q[(f->head + i) & (f->cap - 1)];
        if (in->type == I_WAIT && in->u.w.reqs != in->u.w.inl)
            free(in->u.w.reqs);
        if (in->type == I_COLL)
            free(in->u.c.v);
    }
    for (uint32_t i = 0; i < f->wincap; i++)
        if (f->win[i].id)
            free_aux(&f->win[i]);
    for (uint32_t i = 0; i < f->ovfcap; i++)
        if (f->ovf[i].id)
            free_aux(&f->ovf[i]);
    if (f->scratch)
        free_aux(f->scratch);
    free(f->scratch);
    free(f->q);
    free(f->win);
    free(f->ovf);
    free(f->spare);
}
