/* engine.c - SIM-MPI's event engine: pools, heap, matching and the protocols.
 *
 * One loop pops events from two 4-ary heaps (RESUMEs; message events) in
 * one total order (time, rank, type, peer, send number) and lets ranks run
 * their instructions (frontend.c) on virtual clocks.  Point-to-point
 * messages follow the eager and rendezvous protocols of Zhai et al.,
 * Fig. 10; doc/simmpi.md derives every formula used here.
 *
 * Matching does not depend on time: a receive carries the source and tag the
 * trace recorded as matched, so MPI's non-overtaking rule makes the k-th
 * receive on (communicator, source, destination, tag) match the k-th send
 * on it, whichever of the two the simulation reaches first.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum { DONE = 0, BLOCKED = 1, ENDED = 2 };
enum { MK_FREE = 0, MK_SENDS = 1, MK_RECVS = 2 };

int sim_fail(sim *s, const char *fmt, ...)
{
    if (!s->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->err->msg, sizeof s->err->msg, fmt, ap);
        va_end(ap);
        s->failed = 1;
    }
    return -1;
}

static simtime tmax(simtime a, simtime b) { return a > b ? a : b; }

/* n units of fs_each femtoseconds, rounded to the picosecond: in 64 bits
 * when the product fits (no division to find out), else in 128; the same
 * result either way.  Once a message (G) and once a collective round. */
static inline simtime fs_to_ps(uint64_t fs_each, uint64_t n)
{
    uint64_t fs;
    if (!__builtin_mul_overflow(fs_each, n, &fs) && fs <= UINT64_MAX - 500)
        return (fs + 500) / 1000;
    unsigned __int128 ps = ((unsigned __int128)fs_each * n + 500) / 1000;
    return ps < SIM_HORIZON ? (simtime)ps : SIM_HORIZON;
}

/* G(K-1) in ps, rounded to nearest: G is kept in fs so that bandwidths that
 * are not a whole number of ps per byte stay exact enough. */
static inline simtime sim_gap(const simmpi_loggp *p, uint64_t bytes)
{
    return bytes <= 1 ? 0 : fs_to_ps(p->G_fs, bytes - 1);
}

/* ---- pools: requests and messages, indices stable across growth ------------- */

/* Doubles a pool, keeping it 64-byte aligned (realloc keeps only 16 bytes,
 * and a request, one cache line, would straddle two). */
static int grow(void **p, uint32_t *cap, size_t elem)
{
    uint32_t nc = *cap ? *cap * 2 : 1024;
    if (nc <= *cap)
        return -1;
    void *q = aligned_alloc(64, (size_t)nc * elem);
    if (!q)
        return -1;
    if (*cap)
        memcpy(q, *p, (size_t)*cap * elem);
    free(*p);
    *p = q;
    *cap = nc;
    return 0;
}

/* A rank reuses its own released requests: the few a rank has in flight stay
 * on the same cache lines, instead of being scattered over the pool by a
 * global free list that hands each rank the lines other ranks just let go.
 * Which index a request or a message gets is invisible to the simulation
 * (the heap's order is the model's: internal.h), so the prediction does not
 * depend on it.  The free lists are worked inline (internal.h: req_reuse,
 * req_new, req_release); this is the rarer way, a request never used
 * before. */
uint32_t req_grow(sim *s)
{
    if (s->nrq == s->caprq && grow((void **)&s->rq, &s->caprq, sizeof *s->rq) < 0) {
        sim_fail(s, "out of memory (%u requests)", s->nrq);
        return NIL;
    }
    return s->nrq++;
}

static uint32_t msg_new(sim *s)
{
    uint32_t i = s->freems;
    if (i != NIL) {
        s->freems = s->ms[i].next;
    } else {
        if (s->nms == s->capms && grow((void **)&s->ms, &s->capms, sizeof *s->ms) < 0) {
            sim_fail(s, "out of memory (%u messages)", s->nms);
            return NIL;
        }
        i = s->nms++;
    }
    s->ms[i] = (msg){.sreq = NIL, .rreq = NIL, .probe = NIL, .next = NIL};
    s->res->messages++;
    return i;
}

static void msg_free(sim *s, uint32_t m)
{
    s->ms[m].next = s->freems;
    s->freems = m;
}

/* ---- the event queues (evqueue.h): ordered by (time, rank, event type,
 * peer, the sender's send number), a total order that depends only on the
 * model, so every run pops the same sequence. ------------------------------- */

/* Inline: about two pushes per simulated event, from four places; the
 * calls themselves cost about 15 instructions an event.  RESUMEs go to
 * rheap, the message events to mheap (their key: evqueue.h). */
static inline __attribute__((always_inline)) void push(sim *s, simtime t, uint32_t rank, uint8_t type,
                                                      uint32_t ref)
{
    evqueue *hp = &s->rheap;
    uint64_t key = (uint64_t)rank << 40 | (uint64_t)type << 38;
    if (type != EV_RESUME) {
        rank_events *p = &s->rev[rank];
        const msg *m = &s->ms[ref];
        hp = &s->mheap;
        s->nctl_q += type != EV_DELIVER;
        p->n++;
        if (t > p->last)
            p->last = t;
        key |= (uint64_t)(type == EV_CTS ? m->dst : m->src) << 14 | (m->seq & 0x3fff);
    }
    int rc = type != EV_RESUME  ? evq_push(hp, t, key, ref)
             : hp->small.pos ? evq_push_(hp, t, key, 0, HEAP_POS)
                             : evq_push_(hp, t, key, 0, HEAP_PLAIN);
    if (rc < 0)
        sim_fail(s, "out of memory (%llu pending events)",
                 (unsigned long long)(evq_n(&s->rheap) + evq_n(&s->mheap)));
}

/* The queue of the next event: the earlier of the two tops (keys hold the
 * type, so they compare in the one total order), or NULL; *top is it. */
static inline evqueue *next_queue(sim *s, const hev **top)
{
    const hev *r = evq_top(&s->rheap), *m = evq_top(&s->mheap);
    if (!r || !m) {
        *top = r ? r : m;
        return r ? &s->rheap : m ? &s->mheap : NULL;
    }
    if (hev_key(m) < hev_key(r)) {
        *top = m;
        return &s->mheap;
    }
    *top = r;
    return &s->rheap;
}

/* Is key (t, rank) of a rank's RESUME before event e's? */
static inline int runs_before(simtime t, uint32_t rank, const hev *e)
{
    return t < e->t || (t == e->t && rank < ev_rank(e));
}

/* Running ahead of deliveries.  When the message heap holds deliveries
 * only (no RTS or CTS), none of them can make its rank act (inject a
 * message, send an RTS or CTS, run a call) before its time plus the collect
 * cost its receiver pays on waking: o_r, or o_iprobe while a probe is
 * waited for.  So a rank with no event of its own there before now (none,
 * or one at its latest time) may run a call at key (now, rank) below
 * (top + that, top's rank), though the top is earlier: nothing before that
 * key touches what the call does, and every NIC takes its messages in the
 * same order.  Ties between one rank's events of one kind at one time go
 * by peer and send number (internal.h), not by the order the simulation
 * made the messages in, so the prediction is the strict order's to the
 * bit (predict --strict-order; tests/simmpi-run-ahead.sh).  In lockstep (a
 * collective's rounds) a woken rank goes on to its next round without a
 * RESUME through the heap. */
static __attribute__((noinline)) int may_run_ahead(const sim *s, uint32_t rank, const hev *top)
{
    if (s->nctl_q || !s->run_ahead)
        return 0;
    hev bound = *top;
    bound.t += s->nprobe_wait ? s->la_probe : s->la_deliver;
    simtime now = s->r[rank].now;
    const rank_events *p = &s->rev[rank];
    return runs_before(now, rank, &bound) && (p->n == 0 || (p->n == 1 && p->last >= now));
}

/* May rank r act at r->now without reordering: would its RESUME event be the
 * earliest?  Or, if only deliveries are earlier, may it run ahead of them?
 * An earlier RESUME always stops it: that rank acts at once. */
static inline int may_continue(const sim *s, uint32_t rank)
{
    simtime now = s->r[rank].now;
    const hev *r = evq_top(&s->rheap), *m;
    if (r && !runs_before(now, rank, r))
        return 0;
    return !(m = evq_top(&s->mheap)) || runs_before(now, rank, m) || may_run_ahead(s, rank, m);
}

/* Inline where a rank stops for an earlier event (rank_run), out of line
 * elsewhere as the compiler likes. */
static inline void queue_rank(sim *s, uint32_t rank)
{
    s->r[rank].state = RK_QUEUED;
    push(s, s->r[rank].now, rank, EV_RESUME, 0);
}

/* ---- match table: open addressing, linear probing, backward-shift delete ---- */

static uint64_t mkey_hash(mkey k)
{
    uint64_t h = k.w[0] * 0x9E3779B97F4A7C15ull ^ k.w[1] * 0xC2B2AE3D27D4EB4Full;
    return h ^ (h >> 29);
}

/* Where k's probe ends in t: its entry, or the free slot it would take.
 * Inline (gcc left it a call): it is most of a lookup. */
static inline __attribute__((always_inline)) uint64_t mt_slot(const mtable *t, mkey k)
{
    uint64_t i = mkey_hash(k) & t->mask;
    while (t->e[i].kind != MK_FREE && (t->e[i].k.w[0] != k.w[0] || t->e[i].k.w[1] != k.w[1]))
        i = (i + 1) & t->mask;
    return i;
}

static int mt_grow(mtable *t)
{
    uint64_t ncap = t->e ? (t->mask + 1) * 2 : 1024;
    /* line-aligned: a large calloc is an mmap 16 bytes past a page, so that
     * every 32-byte entry straddled two lines and a lookup missed on both */
    mentry *ne = aligned_alloc(64, ncap * sizeof *ne);
    if (!ne)
        return -1;
    memset(ne, 0, ncap * sizeof *ne);
    mtable nt = {.e = ne, .mask = ncap - 1, .used = t->used};
    for (uint64_t i = 0; t->e && i <= t->mask; i++)
        if (t->e[i].kind != MK_FREE)
            ne[mt_slot(&nt, t->e[i].k)] = t->e[i];
    free(t->e);
    *t = nt;
    return 0;
}

/* k is not in the table, whose free slot i ended its probe: a new entry
 * there (kind MK_RECVS, no queue), or after growing the table.  Out of
 * line: most lookups find their entry. */
static __attribute__((noinline)) mentry *mt_insert(sim *s, mkey k, uint64_t i)
{
    mtable *t = &s->mt;
    if ((t->used + 1) * 2 > t->mask + 1) {
        if (mt_grow(t) < 0) {
            sim_fail(s, "out of memory (match table of %llu entries)", (unsigned long long)t->used);
            return NULL;
        }
        i = mt_slot(t, k);
    }
    t->used++;
    t->e[i] = (mentry){.k = k, .head = NIL, .tail = NIL, .probe = NIL, .kind = MK_RECVS};
    return &t->e[i];
}

/* The entry for k, created empty if absent.  Inline: twice a message (the
 * table is allocated in setup, so never NULL here). */
static inline mentry *mt_get(sim *s, mkey k)
{
    mentry *e = &s->mt.e[mt_slot(&s->mt, k)];
    return e->kind != MK_FREE ? e : mt_insert(s, k, (uint64_t)(e - s->mt.e));
}

/* The entry for k, or NULL: a lookup that creates nothing. */
static const mentry *mt_find(const mtable *t, mkey k)
{
    const mentry *e = &t->e[mt_slot(t, k)];
    return e->kind != MK_FREE ? e : NULL;
}

static void mt_del(mtable *t, mentry *e)
{
    uint64_t i = (uint64_t)(e - t->e), j = i;
    t->e[i].kind = MK_FREE;
    t->used--;
    for (;;) {
        j = (j + 1) & t->mask;
        if (t->e[j].kind == MK_FREE)
            return;
        uint64_t home = mkey_hash(t->e[j].k) & t->mask;
        /* move e[j] into the hole unless its home lies cyclically in (i, j] */
        if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
            continue;
        t->e[i] = t->e[j];
        t->e[j].kind = MK_FREE;
        i = j;
    }
}

static void mt_del_if_idle(mtable *t, mentry *e)
{
    if (e->head == NIL && e->probe == NIL)
        mt_del(t, e);
}

/* ---- accounting ----------------------------------------------------------------- */

enum { A_OVH, A_XFER, A_SYN };

static void acct_to(simmpi_breakdown *b, int what, simtime dt)
{
    if (what == A_OVH)
        b->ovh += dt;
    else if (what == A_XFER)
        b->xfer += dt;
    else
        b->syn += dt;
}

/* Charge dt of kind `what` to the MPI function op and the call site. */
static void acct_call(sim *s, uint16_t op, uint32_t site, int what, simtime dt)
{
    acct_to(&s->res->ops[op], what, dt);
    if (site < s->res->nsites)
        acct_to(&s->res->sites[site], what, dt);
}

/* ... and to rank r. */
static void acct(sim *s, srank *r, uint16_t op, uint32_t site, int what, simtime dt)
{
    if (!dt)
        return;
    acct_to(&r->acct, what, dt);
    acct_call(s, op, site, what, dt);
}

/* ---- CPU noise ------------------------------------------------------------------ */

/* splitmix64's finaliser: the pause pattern is a pure function of the rank
 * and the period's number, so the prediction stays bit-identical. */
static uint64_t mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Where rank's pause in noise period k starts (noise_sync = node: its node's). */
static simtime pause_at(const sim *s, uint32_t rank, uint64_t k)
{
    simtime P = s->pf.noise_period, len = s->pf.noise_pause;
    uint32_t who = s->pf.noise_sync_node ? s->node_of[rank] : rank;
    uint64_t h = mix64(mix64(who + 1) ^ k);
    return k * P + (simtime)(((unsigned __int128)h * (P - len + 1)) >> 64);
}

/* cpu_until under noise: the CPU runs at full speed, work x (P - len) / P
 * of CPU time, and stops for each pause on the way; a rank paused at t
 * starts when the pause ends (work 0: the rank reacts). */
static __attribute__((noinline, cold)) simtime cpu_until_noisy(const sim *s, const srank *r, simtime t,
                                                         simtime work)
{
    uint32_t rank = (uint32_t)(r - s->r);
    simtime P = s->pf.noise_period, len = s->pf.noise_pause, on = P - len;
    simtime c = (simtime)(((unsigned __int128)work * on + P / 2) / P);
    uint64_t k = t / P;
    for (;;) {
        simtime a = pause_at(s, rank, k), b = a + len, end = (k + 1) * P;
        if (t < a) {
            if (c <= a - t)
                return t + c;
            c -= a - t;
            t = b;
        } else if (t < b) {
            t = b;
        }
        if (c <= end - t)
            return t + c;
        c -= end - t;
        uint64_t whole = (c - 1) / on; /* periods the rest runs through, pause and all */
        k += 1 + whole;
        c -= whole * on;
        t = k * P;
    }
}

/* When `work` (ps at the CPU's mean rate) that r's CPU starts at t is done:
 * t + work, unless the platform has CPU noise. */
static inline simtime cpu_until(const sim *s, const srank *r, simtime t, simtime work)
{
    return s->noise ? cpu_until_noisy(s, r, t, work) : t + work;
}

/* CPU overhead inside the current call: the clock moves.  Two or three of
 * these an event: the noise is a call apart, so that without it they stay
 * as lean (and their callers as free of saved registers) as before it. */
static __attribute__((noinline, cold)) void overhead_noisy(sim *s, srank *r, simtime dt)
{
    dt = cpu_until_noisy(s, r, r->now, dt) - r->now;
    r->now += dt;
    acct(s, r, r->op, r->site, A_OVH, dt);
}

static inline void overhead(sim *s, srank *r, simtime dt)
{
    if (s->noise) {
        overhead_noisy(s, r, dt);
        return;
    }
    r->now += dt;
    acct(s, r, r->op, r->site, A_OVH, dt);
}

/* Protocol work of cost that a blocked rank's CPU does from start: the
 * work is overhead; a pause it waits out is part of the block's wait. */
static __attribute__((noinline, cold)) void blocked_work_noisy(sim *s, srank *r, simtime start, simtime cost,
                                                               uint16_t op, uint32_t site)
{
    simtime t = cpu_until_noisy(s, r, start, cost), w = t - start < cost ? t - start : cost;
    r->now = t;
    r->wovh += w;
    acct(s, r, op, site, A_OVH, w);
}

static inline void blocked_work(sim *s, srank *r, simtime start, simtime cost, uint16_t op, uint32_t site)
{
    if (s->noise) {
        blocked_work_noisy(s, r, start, cost, op, site);
        return;
    }
    r->now = start + cost;
    r->wovh += cost;
    acct(s, r, op, site, A_OVH, cost);
}

/* Without noise a queued rank's debt is known in full now: it moves the
 * rank's RESUME later at once, which saves the rank a trip through the heap
 * (popped at its old time, it would pay and, most often, queue again
 * behind what came in between: in a rendezvous stencil, 9 RESUMEs of 17).
 * The rank acts at the same key, after the same events, either way.  Only
 * while the RESUMEs are a 4-ary heap.  Up to DELAY_SCAN_MAX of them a scan
 * finds the rank's; from there to RPOS_MAX_RANKS ranks the heap keeps each
 * rank's slot (pos, set up in setup), whose upkeep costs more than the
 * scan at 16 ranks and less than the second trips past 32 (part 1 of
 * doc/simmpi-speed-log.md).  0 when the rank's RESUME is not there: woken
 * but not queued yet (pos[rank] is then stale: its slot holds another
 * rank's event, or none, as a rank has one RESUME at most). */
#define DELAY_SCAN_MAX 32
/* The auto queue's radix_from: measured up to there.  Past it, with
 * --queue heap, the upkeep would be a write a move to a random line of
 * megabytes: not measured, not done. */
#define RPOS_MAX_RANKS EVQ_RADIX_FROM
static int delay_resume(sim *s, const srank *r, simtime cost)
{
    evheap *h = &s->rheap.small;
    uint32_t rank = (uint32_t)(r - s->r);
    if (s->rheap.b)
        return 0;
    if (h->pos) {
        uint32_t i = h->pos[rank];
        if (i >= h->n || ev_rank(&h->h[i]) != rank)
            return 0;
        evheap_delay(h, i, cost);
        return 1;
    }
    if (h->n > DELAY_SCAN_MAX)
        return 0;
    for (uint64_t i = 0; i < h->n; i++)
        if (ev_rank(&h->h[i]) == rank) {
            evheap_delay(h, i, cost);
            return 1;
        }
    return 0;
}

/* Protocol work a computing rank's CPU owes (asynchronous progress): on
 * its clock at once where delay_resume moves its RESUME, else paid when
 * the rank resumes (rank_run).  Under noise the time it then takes is the
 * rank's overhead; the call's tallies get cost. */
static inline void owe(sim *s, srank *r, simtime cost, uint16_t op, uint32_t site)
{
    if (!s->noise && r->state == RK_QUEUED && delay_resume(s, r, cost))
        r->now += cost;
    else
        r->debt += cost;
    /* A finished rank (a request it freed or never waited for, or a stream
     * cut short) never pays: its clock stopped, and its breakdown must
     * still add up to its finish time. */
    if (s->noise || r->state == RK_DONE)
        acct_call(s, op, site, A_OVH, cost);
    else
        acct(s, r, op, site, A_OVH, cost);
}

/* ---- protocols -------------------------------------------------------------------- */

static uint8_t chan_of(const sim *s, uint32_t a, uint32_t b)
{
    return s->node_of[a] == s->node_of[b]; /* 1: inside a node */
}

static const simmpi_loggp *lgp(const sim *s, uint8_t chan) { return chan ? &s->pf.intra : &s->pf.inter; }

static __attribute__((noinline, cold)) void horizon_fail(sim *s, const srank *r)
{
    const char *op = ph_ops[r->op].name; /* NULL before the rank's first call */
    sim_fail(s, "rank %u: %s: the simulated time passes 2^62 ps (53 days): a size or a computation "
                "gap in the trace, or a what-if factor, is too large to simulate",
             (uint32_t)(r - s->r), op ? op : "before its first call");
}

/* Fails the simulation once time t of rank r reached SIM_HORIZON
 * (internal.h); 1 then.  Inline, the message out of line: one comparison
 * where clocks grow, a few times an event. */
static inline int past_horizon(sim *s, const srank *r, simtime t)
{
    if (__builtin_expect(t < SIM_HORIZON, 1))
        return 0;
    horizon_fail(s, r);
    return 1;
}

/* Put message m on the wire at `ready` through the sender's NIC (one message
 * at a time: G(K-1) each) to the receiver's NIC, which also takes one at a
 * time, in the order the messages are injected; delivered when its last
 * byte is in: ready + L + G(K-1) when neither NIC is busy.  A half-duplex
 * channel (half_duplex_ppm, doc/simmpi.md section 3) also holds the
 * sender's receiving side and the receiver's sending side for that share of
 * G(K-1), so that two ranks exchanging K bytes take up to twice as long. */
static void inject(sim *s, uint32_t mi, simtime ready)
{
    msg *m = &s->ms[mi];
    srank *src = &s->r[m->src], *dst = &s->r[m->dst];
    const simmpi_loggp *p = lgp(s, m->chan);
    simtime gap = sim_gap(p, m->bytes);
    simtime wire = tmax(ready, src->txfree[m->chan]);
    simtime in = tmax(wire + p->L, dst->rxfree[m->chan]);
    /* NICs busy past the horizon (messages queued behind a huge one, no
     * event popped in between) would wrap around with the next; in >= wire */
    past_horizon(s, wire < SIM_HORIZON ? dst : src, in);
    src->txfree[m->chan] = wire + gap;
    dst->rxfree[m->chan] = in + gap;
    if (p->half_duplex_ppm) { /* both ends' other direction loses that share, from the start */
        simtime held = (simtime)(((unsigned __int128)gap * p->half_duplex_ppm + 500000) / 1000000);
        src->rxfree[m->chan] = tmax(src->rxfree[m->chan], wire) + held;
        dst->txfree[m->chan] = tmax(dst->txfree[m->chan], wire) + held;
    }
    push(s, in + gap, m->dst, EV_DELIVER, mi);
}

static inline void req_done(sim *s, uint32_t qi, simtime t);

/* The receiving rank handles an RTS at h: o' to take it, o' to answer CTS. */
static void handshake(sim *s, uint32_t mi, simtime h)
{
    msg *m = &s->ms[mi];
    srank *d = &s->r[m->dst];
    const simmpi_loggp *p = lgp(s, m->chan);
    const req *q = &s->rq[m->rreq];
    simtime cost = 2 * p->o_prime, cts;
    if (d->state == RK_RUN) { /* inside the call that posted the receive */
        overhead(s, d, cost);
        cts = d->now;
    } else if (d->state == RK_BLOCKED) { /* idle in a wait: its CPU answers at once */
        blocked_work(s, d, tmax(h, d->now), cost, q->op, q->site);
        cts = d->now;
    } else { /* computing: asynchronous progress steals the CPU */
        owe(s, d, cost, q->op, q->site);
        cts = cpu_until(s, d, h, cost);
    }
    push(s, cts + p->L, m->src, EV_CTS, mi);
}

/* A receive found its message: note partners; finish what already arrived. */
static void pair(sim *s, uint32_t mi, uint32_t qi, int recv_side)
{
    msg *m = &s->ms[mi];
    req *q = &s->rq[qi];
    m->rreq = qi;
    q->msg = mi;
    q->state |= RS_MATCHED;
    q->syn_to = m->t_send;
    q->chan = m->chan;
    if (m->sreq != NIL)
        s->rq[m->sreq].syn_to = q->t_post;
    if (!recv_side || !(m->state & MS_ENVELOPE))
        return;
    if (!m->rndv) { /* an unexpected eager message: already here */
        req_done(s, qi, m->t_env);
        if (m->probe == NIL)
            msg_free(s, mi);
    } else {
        handshake(s, mi, s->r[q->rank].now);
    }
}

static void bind_probe(sim *s, uint32_t qi, uint32_t mi)
{
    s->rq[qi].msg = mi;
    s->rq[qi].syn_to = s->ms[mi].t_send;
    if (s->ms[mi].state & MS_ENVELOPE)
        req_done(s, qi, s->ms[mi].t_env);
    else
        s->ms[mi].probe = qi;
}

/* A communicator's matching context: its cache entry's, once known, without
 * the call (every message asks). */
static inline uint32_t p2p_ctx(sim *s, uint32_t comm)
{
    if (comm < s->ncomms && s->comms[comm].ctx_known)
        return s->comms[comm].ctx;
    return sim_p2p_ctx(s, comm);
}

static mkey key_of(sim *s, uint32_t comm, int coll, uint32_t src, uint32_t dst, int32_t tag)
{
    uint32_t ctx = coll ? comm : p2p_ctx(s, comm);
    return (mkey){.ctx = ctx * 2 + (coll ? 1 : 0), .src = src, .dst = dst, .tag = tag};
}

static void match_send(sim *s, uint32_t mi, mkey k)
{
    mentry *e = mt_get(s, k);
    if (!e)
        return;
    if (e->kind == MK_RECVS && e->head != NIL) {
        uint32_t qi = e->head;
        e->head = s->rq[qi].next;
        mt_del_if_idle(&s->mt, e);
        pair(s, mi, qi, 0);
        return;
    }
    e->kind = MK_SENDS;
    s->ms[mi].next = NIL;
    if (e->head == NIL)
        e->head = mi;
    else
        s->ms[e->tail].next = mi;
    e->tail = mi;
    if (e->probe != NIL && e->head == mi) {
        uint32_t pq = e->probe;
        e->probe = NIL;
        bind_probe(s, pq, mi);
    }
}

static void match_recv(sim *s, uint32_t qi, mkey k)
{
    mentry *e = mt_get(s, k);
    if (!e)
        return;
    if (e->kind == MK_SENDS && e->head != NIL) {
        uint32_t mi = e->head;
        e->head = s->ms[mi].next;
        if (e->head == NIL)
            e->kind = MK_RECVS;
        mt_del_if_idle(&s->mt, e);
        pair(s, mi, qi, 1);
        return;
    }
    e->kind = MK_RECVS;
    s->rq[qi].next = NIL;
    if (e->head == NIL)
        e->head = qi;
    else
        s->rq[e->tail].next = qi;
    e->tail = qi;
}

/* Eager: o_s and O a byte on the CPU, then the wire.  Rendezvous: o' for
 * the RTS; the data leaves when the CTS comes back (EV_CTS). */
static void post_send(sim *s, uint32_t rank, const ins_p2p *p, uint32_t comm, int coll,
                      uint8_t flags)
{
    srank *r = &s->r[rank];
    uint32_t mi = msg_new(s);
    if (mi == NIL)
        return;
    msg *m = &s->ms[mi];
    m->src = rank;
    m->dst = (uint32_t)p->peer;
    m->bytes = p->bytes;
    m->chan = chan_of(s, rank, m->dst);
    const simmpi_loggp *lp = lgp(s, m->chan);
    m->rndv = !(flags & F_BUFFERED) && ((flags & F_SYNC) || p->bytes > lp->eager_limit);
    m->t_send = r->now;
    m->seq = s->rev[rank].sent++;
    req *q = &s->rq[p->req];
    q->state |= RS_POSTED;
    q->msg = mi;
    q->t_post = r->now;
    mkey k = key_of(s, comm, coll, rank, m->dst, p->tag);
    if (!m->rndv) {
        overhead(s, r, lp->o_s + (lp->O_fs ? fs_to_ps(lp->O_fs, p->bytes) : 0));
        inject(s, mi, r->now);
        req_done(s, p->req, r->now); /* buffered: the send is complete locally */
    } else {
        m->sreq = p->req;
        overhead(s, r, lp->o_prime);
        s->rq[p->req].syn_from = r->now + lp->L; /* the RTS is there: only the receiver is missing */
        push(s, r->now + lp->L, m->dst, EV_RTS, mi);
    }
    match_send(s, mi, k);
}

static void post_recv(sim *s, uint32_t rank, const ins_p2p *p, uint32_t comm, int coll)
{
    req *q = &s->rq[p->req];
    q->state |= RS_POSTED;
    q->t_post = s->r[rank].now;
    mkey k = key_of(s, comm, coll, (uint32_t)p->peer, rank, p->tag);
    match_recv(s, p->req, k);
}

/* ---- completion, blocking and waking ---------------------------------------------- */

/* CPU cost a rank pays when it collects a completed request. */
static simtime collect_cost(const sim *s, const req *q)
{
    if (q->kind == RQ_RECV)
        return lgp(s, q->chan)->o_r;
    return q->kind == RQ_PROBE ? s->pf.o_iprobe : 0;
}

/* The rank takes a completed request, paying its cost once. */
static inline void collect(sim *s, srank *r, req *q)
{
    if (!(q->state & RS_CHARGED)) {
        q->state |= RS_CHARGED;
        overhead(s, r, collect_cost(s, q));
    }
}

static void unblock(sim *s, uint32_t rank);

/* A blocked rank whose nonblocking collective's request completed at t:
 * its schedules may go on (libnbc's progress runs in the call it is blocked
 * in), which nbc_run_due does after the event. */
typedef struct due_rank {
    simtime t;
    uint32_t rank;
} due_rank;

static __attribute__((noinline, cold)) void nbc_mark_due(sim *s, uint32_t rank, simtime t)
{
    if (s->r[rank].state != RK_BLOCKED) /* running: its next call or block goes on with them */
        return;
    if (s->nnbc_due == s->capnbc_due) {
        uint32_t cap = s->capnbc_due ? 2 * s->capnbc_due : 16;
        due_rank *v = realloc(s->nbc_due, cap * sizeof *v);
        if (!v) {
            sim_fail(s, "out of memory");
            return;
        }
        s->nbc_due = v;
        s->capnbc_due = cap;
    }
    s->nbc_due[s->nnbc_due++] = (due_rank){.t = t, .rank = rank};
}

/* A completed request its owner waits for (collected now), has freed, or
 * is a nonblocking collective's. */
static __attribute__((noinline)) void req_done_owned(sim *s, uint32_t qi, simtime t)
{
    req *q = &s->rq[qi];
    if (q->state & RS_WAITED) {
        srank *r = &s->r[q->rank];
        s->nprobe_wait -= q->kind == RQ_PROBE;
        blocked_work(s, r, tmax(r->now, t), collect_cost(s, q), r->op, r->site);
        past_horizon(s, r, r->now); /* woken by a message: name the call that waited */
        q->state |= RS_CHARGED;
        if (--r->nwait == 0)
            unblock(s, q->rank);
    } else if (q->state & RS_BG) {
        nbc_mark_due(s, q->rank, t);
    } else {
        req_release(s, qi);
    }
}

/* Inline: nearly half of the completions (an eager send's, a message
 * delivered before its Wait) are only noted. */
static inline void req_done(sim *s, uint32_t qi, simtime t)
{
    req *q = &s->rq[qi];
    q->state |= RS_DONE;
    q->t_done = t;
    if (q->state & (RS_WAITED | RS_FREED | RS_BG))
        req_done_owned(s, qi, t);
}

/* ---- Test waits -------------------------------------------------------------------------
 *
 * A Test the recorded run saw succeed blocks the simulated rank until its
 * requests are done.  On the target that Test would have failed, and the
 * rank would have gone on with its polling loop: the loop's next
 * computation and failed polls would have filled the wait, and it would
 * not do them again later.  So the wait (not the CPU work done in it) is
 * the rank's credit, and the computation before its next failed polls, and
 * their o_poll, are charged only past it.  A blocking call other than a
 * Test ends the loop and the credit.  The work after the successful Test
 * itself (taking in the message) is before another call, and is charged:
 * what needed the message still waits for it. */

static int test_op(uint16_t op)
{
    const ph_op_info *info = ph_op(op);
    return info && info->kind >= PH_K_TEST && info->kind <= PH_K_TESTSOME;
}

static __attribute__((noinline, cold)) void earn_credit(sim *s, uint32_t rank, simtime wait)
{
    if (!s->credit && !(s->credit = calloc(s->n, sizeof *s->credit))) {
        sim_fail(s, "out of memory");
        return;
    }
    s->credit[rank] += wait;
}

/* What of cost rank r still pays once its credit is spent. */
static simtime spend_credit(sim *s, uint32_t rank, simtime cost)
{
    simtime c = s->credit[rank], used = c < cost ? c : cost;
    s->credit[rank] = c - used;
    s->res->test_wait_credit += used;
    return cost - used;
}

static void nbc_progress_blocked(sim *s, uint32_t rank, simtime t);

/* Wait for every request in reqs: collect the completed ones now, block on
 * the rest.  Returns BLOCKED or DONE. */
static int wait_reqs(sim *s, uint32_t rank, const uint32_t *reqs, uint32_t n)
{
    srank *r = &s->r[rank];
    if (s->credit && !test_op(r->op)) /* the polling loop is over */
        s->credit[rank] = 0;
    r->nwait = 0;
    r->wovh = 0;
    for (uint32_t i = 0; i < n; i++) {
        req *q = &s->rq[reqs[i]];
        if (!(q->state & RS_DONE)) {
            q->state |= RS_WAITED;
            r->nwait++;
            s->nprobe_wait += q->kind == RQ_PROBE;
            continue;
        }
        if (q->t_done > r->now) { /* finished by protocol work not yet on our clock */
            acct(s, r, r->op, r->site, A_XFER, q->t_done - r->now);
            r->now = q->t_done;
        }
        collect(s, r, q);
    }
    if (!r->nwait)
        return DONE;
    r->w0 = r->now;
    r->state = RK_BLOCKED;
    if (__builtin_expect(r->nbc, 0))
        nbc_progress_blocked(s, rank, r->now); /* libnbc's progress runs in the wait */
    return BLOCKED;
}

/* Split a finished block into syn (the partner had not arrived: the longest
 * such stretch among the requests) and transfer (the rest), excluding CPU
 * work done during it. */
static void account_block(sim *s, srank *r, const uint32_t *reqs, uint32_t n)
{
    simtime wait = r->now > r->w0 + r->wovh ? r->now - r->w0 - r->wovh : 0, syn = 0;
    for (uint32_t i = 0; i < n; i++) {
        const req *q = &s->rq[reqs[i]];
        simtime from = tmax(q->syn_from, r->w0), to = q->syn_to < r->now ? q->syn_to : r->now;
        if (to > from && to - from > syn)
            syn = to - from;
    }
    if (syn > wait)
        syn = wait;
    acct(s, r, r->op, r->site, A_SYN, syn);
    acct(s, r, r->op, r->site, A_XFER, wait - syn);
}

static void release_all(sim *s, const uint32_t *reqs, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        req_release(s, reqs[i]);
}

/* Inline: unblock is hot (out of line, with the I_NBWAIT case, the 2-rank
 * LAMMPS prediction took 0.7% more instructions). */
static inline __attribute__((always_inline)) void wait_set(sim *s, uint32_t rank, const uint32_t **reqs,
                                                           uint32_t *n)
{
    srank *r = &s->r[rank];
    ins *in = &r->fe.q[r->fe.head];
    if (in->type == I_COLL) {
        *reqs = r->creq;
        *n = r->ncreq;
    } else if (__builtin_expect(in->type == I_NBWAIT, 0)) {
        *reqs = in->u.nb->creq;
        *n = in->u.nb->ncreq;
    } else if (in->type == I_WAIT) {
        *reqs = in->u.w.reqs;
        *n = in->u.w.n;
    } else {
        *reqs = &in->u.p.req;
        *n = 1;
    }
}

static void unblock(sim *s, uint32_t rank)
{
    srank *r = &s->r[rank];
    const uint32_t *reqs;
    uint32_t n;
    wait_set(s, rank, &reqs, &n);
    account_block(s, r, reqs, n);
    r->unblocked = 1;
    r->state = RK_QUEUED;
    if (s->nwoken < sizeof s->woken / sizeof s->woken[0])
        s->woken[s->nwoken++] = rank;
    else
        queue_rank(s, rank);
}

/* ---- heap events ---------------------------------------------------------------------- */

static void deliver(sim *s, uint32_t mi, simtime t)
{
    msg *m = &s->ms[mi];
    if (!(m->state & MS_ENVELOPE))
        m->t_env = t;
    m->state |= MS_ENVELOPE | MS_DELIVERED;
    if (m->probe != NIL) {
        uint32_t pq = m->probe;
        m->probe = NIL;
        req_done(s, pq, t);
    }
    if (s->ms[mi].rreq != NIL) {
        req_done(s, s->ms[mi].rreq, t);
        msg_free(s, mi);
    }
}

static void ev_rts(sim *s, uint32_t mi, simtime t)
{
    msg *m = &s->ms[mi];
    m->state |= MS_ENVELOPE;
    m->t_env = t;
    if (m->probe != NIL) {
        uint32_t pq = m->probe;
        m->probe = NIL;
        req_done(s, pq, t);
    }
    if (s->ms[mi].rreq != NIL)
        handshake(s, mi, t);
}

/* CTS back at the sender: o' to take it, o_s to send the data. */
static void ev_cts(sim *s, uint32_t mi, simtime t)
{
    msg *m = &s->ms[mi];
    srank *r = &s->r[m->src];
    const simmpi_loggp *p = lgp(s, m->chan);
    const req *q = &s->rq[m->sreq];
    simtime cost = p->o_prime + p->o_s, ready;
    if (r->state == RK_BLOCKED) {
        blocked_work(s, r, tmax(t, r->now), cost, q->op, q->site);
        ready = r->now;
    } else {
        owe(s, r, cost, q->op, q->site);
        ready = cpu_until(s, r, t, cost);
    }
    uint32_t sq = m->sreq;
    m->sreq = NIL;
    inject(s, mi, ready);
    req_done(s, sq, ready);
}

/* ---- instructions ------------------------------------------------------------------------ */

/* One request of a collective round, x, to or from world rank world; its
 * message's key has context ctx (the communicator; for an
 * intercommunicator, the one both sides share).  What is the same for all
 * of the round's (its owner's call, the communicator) the caller reads once. */
static inline void coll_post(sim *s, uint32_t rank, srank *r, uint32_t comm, uint32_t ctx, uint32_t world,
                             int32_t tag, const coll_xfer *x, int send, uint32_t *creq, uint32_t *ncreq)
{
    uint32_t qi = req_new(s, rank, send ? RQ_SEND : RQ_RECV);
    if (qi == NIL)
        return;
    req *q = &s->rq[qi];
    q->state = RS_COLL;
    q->comm = comm;
    q->peer = (int32_t)world;
    q->op = r->op;
    q->site = r->site;
    creq[(*ncreq)++] = qi;
    ins_p2p p = {.peer = (int32_t)world, .tag = tag, .bytes = x->bytes, .req = qi};
    if (send)
        post_send(s, rank, &p, ctx, 1, x->sync ? F_SYNC : 0);
    else
        post_recv(s, rank, &p, ctx, 1);
}

/* coll_post_round on an intercommunicator: a peer is in either group
 * (COLL_REMOTE), and both sides' messages match in the context the pair
 * shares (each side is a communicator of its own). */
static __attribute__((noinline, cold)) void coll_post_round_inter(sim *s, uint32_t rank, uint32_t comm,
                                                                  int32_t tag, const ph_comm_info *ci,
                                                                  const coll_round *cr, uint32_t *creq,
                                                                  uint32_t *ncreq)
{
    srank *r = &s->r[rank];
    uint32_t ctx = p2p_ctx(s, comm);
    *ncreq = 0;
    for (uint32_t k = 0; k < cr->nrecv + cr->nsend; k++) {
        int send = k >= cr->nrecv;
        const coll_xfer *x = send ? &cr->send[k - cr->nrecv] : &cr->recv[k];
        int32_t world = x->peer & COLL_REMOTE ? ci->remote[x->peer & ~COLL_REMOTE] : ci->members[x->peer];
        coll_post(s, rank, r, comm, ctx, (uint32_t)world, tag, x, send, creq, ncreq);
    }
}

/* The round's receives, then its sends, each in the order the round lists
 * them (the order messages are numbered in, which orders the heap).  Out
 * of line: inlined into rank_run with the intercommunicator's branch, it
 * cost the 2-rank LAMMPS prediction's point-to-point path 0.2% more
 * instructions (callgrind: 438.1 M before the branch, 439.1 M inline,
 * 436.5 M out of line; the 16-rank all-to-all 264.3, 264.9 and 265.7 M). */
static __attribute__((noinline)) void coll_post_round(sim *s, uint32_t rank, uint32_t comm, int32_t tag,
                                                      const coll_round *cr, uint32_t *creq, uint32_t *ncreq)
{
    srank *r = &s->r[rank];
    /* sim_comm without the call: the collective's communicator is known by now */
    const ph_comm_info *ci = comm < s->ncomms ? s->comms[comm].info : NULL;
    if (!ci)
        ci = sim_comm(s, comm);
    if (__builtin_expect(ci->remote_size != 0, 0)) {
        coll_post_round_inter(s, rank, comm, tag, ci, cr, creq, ncreq);
        return;
    }
    const int32_t *members = ci->members;
    *ncreq = 0;
    for (uint32_t i = 0; i < cr->nrecv; i++)
        coll_post(s, rank, r, comm, comm, (uint32_t)members[cr->recv[i].peer], tag, &cr->recv[i], 0, creq, ncreq);
    for (uint32_t i = 0; i < cr->nsend; i++)
        coll_post(s, rank, r, comm, comm, (uint32_t)members[cr->send[i].peer], tag, &cr->send[i], 1, creq, ncreq);
}

/* Rank r's memo, for collective c: kept from r's last collective if that
 * was the same (what a memo keeps depends on the collective alone: its
 * kind, algorithm, size, rank, root, count and element size; in a
 * stencil's 8-byte allreduce, reduce + bcast, 55 instructions an event);
 * otherwise empty.  A v-collective's byte counts are not compared, nor an
 * intercommunicator's remote group: their memo is never kept. */
static int memo_open(srank *r, const ins_coll *c)
{
    coll_for f = {.count = c->count, .size = c->size, .me = c->me, .root = c->root, .esize = c->esize};
    if (!c->v && !c->rsize && r->memo.coll == c->coll && r->memo.calg == c->alg && r->memo_for.count == f.count &&
        r->memo_for.size == f.size && r->memo_for.me == f.me && r->memo_for.root == f.root &&
        r->memo_for.esize == f.esize)
        return 1;
    r->memo = (coll_memo){.coll = c->v || c->rsize ? 0xff : c->coll, .calg = c->alg};
    r->memo_for = f;
    return 0;
}

/* A new memo: record its rounds as they are built (the collective is not a
 * v-one and its communicator small enough for them to fit, most likely),
 * or keep none.  The table is made on first use: a run without small
 * collectives never touches it.  --strict-order keeps none: the reference
 * that tests/simmpi-run-ahead.sh compares with. */
static void sched_open(sim *s, uint32_t rank, const ins_coll *c)
{
    if (c->v || c->rsize || c->size > SCHED_SIZE || s->o->strict_order) {
        if (s->sched)
            s->sched[rank].state = SC_NONE;
        return;
    }
    if (!s->sched && !(s->sched = calloc(s->n, sizeof *s->sched))) {
        sim_fail(s, "out of memory (%u ranks)", s->n);
        return;
    }
    s->sched[rank] = (coll_sched){.state = SC_FILLING};
}

/* Round k of a recording schedule, as built (nothing: there is none); one
 * too many for the table ends the recording. */
static void sched_note(coll_sched *sc, uint32_t k, const coll_round *cr, int more)
{
    if (sc->state != SC_FILLING || k != sc->nrounds)
        return;
    if (!more) {
        sc->state = SC_COMPLETE;
        return;
    }
    uint32_t nx = cr->nrecv + cr->nsend;
    if (sc->nrounds == SCHED_ROUNDS || sc->nx + nx > SCHED_XFERS || cr->copy_bytes > UINT32_MAX) {
        sc->state = SC_NONE;
        return;
    }
    sc->round[sc->nrounds++] = (sched_round){
        .reduce_bytes = cr->reduce_bytes, .copy_bytes = (uint32_t)cr->copy_bytes, .x = sc->nx,
        .nrecv = (uint8_t)cr->nrecv, .nsend = (uint8_t)cr->nsend};
    memcpy(sc->x + sc->nx, cr->recv, cr->nrecv * sizeof *cr->recv);
    memcpy(sc->x + sc->nx + cr->nrecv, cr->send, cr->nsend * sizeof *cr->send);
    sc->nx = (uint8_t)(sc->nx + nx);
}

/* Round k of rank's collective: from its schedule when complete, into
 * *view; else built by coll.c into the scratch round (and recorded).  1: a
 * round, 0: no more, -1: failed. */
static int round_of(sim *s, uint32_t rank, const ins_coll *c, uint32_t k, const coll_round **out,
                    coll_round *view)
{
    coll_sched *sc = s->sched ? &s->sched[rank] : NULL;
    if (sc && sc->state == SC_COMPLETE) {
        if (k >= sc->nrounds)
            return 0;
        const sched_round *sr = &sc->round[k];
        *view = (coll_round){.nrecv = sr->nrecv, .nsend = sr->nsend, .recv = sc->x + sr->x,
                             .send = sc->x + sr->x + sr->nrecv, .reduce_bytes = sr->reduce_bytes,
                             .copy_bytes = sr->copy_bytes};
        *out = view;
        return 1;
    }
    int rc = coll_round_get(c, &s->r[rank].memo, k, &s->cr, s->pf.coll_alg);
    if (rc >= 0 && sc)
        sched_note(sc, k, &s->cr, rc);
    *out = &s->cr;
    return rc;
}

/* Posts round cr into *creq (grown to fit), its messages tagged tag;
 * *rcomp: the round's reduction and copy, paid once it completes.  Out of
 * line: inlined, the 2-rank LAMMPS prediction took 439.8 M instructions
 * against 439.5 M (callgrind), in rank_run's loop. */
static __attribute__((noinline)) int post_round(sim *s, uint32_t rank, uint32_t comm, int32_t tag,
                                                const coll_round *cr, uint32_t **creq, uint32_t *cap,
                                                uint32_t *ncreq, simtime *rcomp)
{
    uint32_t need = cr->nsend + cr->nrecv;
    if (need > *cap) {
        uint32_t *v = realloc(*creq, need * sizeof *v);
        if (!v)
            return sim_fail(s, "out of memory");
        *creq = v;
        *cap = need;
    }
    coll_post_round(s, rank, comm, tag, cr, *creq, ncreq);
    *rcomp = fs_to_ps(s->pf.gamma_fs, cr->reduce_bytes);
    if (__builtin_expect(cr->copy_bytes != 0, 0)) /* memory to memory, as the shared-memory transport moves it */
        *rcomp += fs_to_ps(s->pf.intra.G_fs, cr->copy_bytes);
    return 0;
}

/* Post round r->round of the collective; DONE when there are no more rounds. */
static int coll_start_round(sim *s, uint32_t rank, const ins *in)
{
    srank *r = &s->r[rank];
    const coll_round *cr;
    coll_round view;
    if (r->round == 0 && !memo_open(r, &in->u.c))
        sched_open(s, rank, &in->u.c);
    int rc = round_of(s, rank, &in->u.c, r->round, &cr, &view);
    if (rc < 0)
        return sim_fail(s, "rank %u: %s: cannot build round %u of the collective", rank,
                        ph_ops[in->op].name, r->round);
    if (rc == 0)
        return DONE;
    /* a blocking collective's messages have tag 0 */
    return post_round(s, rank, in->comm, 0, cr, &r->creq, &r->capcreq, &r->ncreq, &r->rcomp) < 0 ? -1 : BLOCKED;
}

static inline void coll_end_round(sim *s, srank *r)
{
    release_all(s, r->creq, r->ncreq);
    r->ncreq = 0;
    overhead(s, r, r->rcomp);
    r->round++;
    past_horizon(s, r, r->now); /* rounds with nothing to wait for add up without the heap */
}

static int exec_coll(sim *s, uint32_t rank, const ins *in)
{
    srank *r = &s->r[rank];
    if (r->unblocked) {
        r->unblocked = 0;
        coll_end_round(s, r);
    }
    for (;;) {
        int rc = coll_start_round(s, rank, in);
        if (rc != BLOCKED) {
            r->round = 0;
            return rc < 0 ? rc : DONE;
        }
        if (wait_reqs(s, rank, r->creq, r->ncreq) == BLOCKED)
            return BLOCKED;
        coll_end_round(s, r);
    }
}

/* ---- nonblocking collectives: libnbc's schedules ------------------------------------------- */

nbc_run *nbc_new(sim *s, const ins_coll *c, uint32_t comm, int32_t tag, uint16_t op, uint32_t site)
{
    nbc_run *run = calloc(1, sizeof *run);
    if (!run) {
        sim_fail(s, "out of memory");
        return NULL;
    }
    *run = (nbc_run){.c = *c, .comm = comm, .tag = tag, .op = op, .site = site, .next_all = s->nbc_all};
    if (s->nbc_all)
        s->nbc_all->prev_all = run;
    s->nbc_all = run;
    return run;
}

static void nbc_free(sim *s, nbc_run *run)
{
    if (run->prev_all)
        run->prev_all->next_all = run->next_all;
    else
        s->nbc_all = run->next_all;
    if (run->next_all)
        run->next_all->prev_all = run->prev_all;
    free(run->c.v);
    free(run->creq);
    free(run);
}

/* Posts round run->round at the rank's clock, its messages tagged as the
 * run's; past the last round the run is done. */
static int nbc_post_round(sim *s, uint32_t rank, nbc_run *run)
{
    int rc = coll_round_get(&run->c, NULL, run->round, &s->cr, s->pf.coll_alg);
    if (rc < 0)
        return sim_fail(s, "rank %u: %s: cannot build round %u of the collective", rank, ph_ops[run->op].name,
                        run->round);
    run->ncreq = 0;
    if (rc == 0) {
        run->done = 1;
        return 0;
    }
    if (post_round(s, rank, run->comm, run->tag, &s->cr, &run->creq, &run->capcreq, &run->ncreq, &run->rcomp) < 0)
        return -1;
    for (uint32_t i = 0; i < run->ncreq; i++)
        s->rq[run->creq[i]].state |= RS_BG;
    return 0;
}

/* Every request of the run's round completed by the rank's clock. */
static int nbc_round_done(const sim *s, const srank *r, const nbc_run *run)
{
    for (uint32_t i = 0; i < run->ncreq; i++) {
        const req *q = &s->rq[run->creq[i]];
        if (!(q->state & RS_DONE) || q->t_done > r->now)
            return 0;
    }
    return 1;
}

/* libnbc's progress at the rank's clock: each of its schedules, oldest
 * first, goes on as far as its completed rounds let it (once: one step,
 * as one opal_progress call makes).  A completed round is collected (o_r a
 * receive not yet collected), its reduction and copy paid, and the next
 * round posted, or the schedule is done. */
static void nbc_progress(sim *s, uint32_t rank, int once)
{
    srank *r = &s->r[rank];
    for (nbc_run **pp = &s->nbc_active[rank]; *pp && !s->failed;) {
        nbc_run *run = *pp;
        while (!run->done && nbc_round_done(s, r, run)) {
            for (uint32_t i = 0; i < run->ncreq; i++) {
                collect(s, r, &s->rq[run->creq[i]]);
                req_release(s, run->creq[i]);
            }
            run->ncreq = 0;
            if (run->rcomp)
                overhead(s, r, run->rcomp);
            run->round++;
            if (nbc_post_round(s, rank, run) < 0)
                return;
            if (once)
                break;
        }
        if (run->done)
            *pp = run->next;
        else
            pp = &run->next;
    }
    r->nbc = s->nbc_active[rank] != NULL;
}

/* The same for a blocked rank at t: its work is overhead inside the block
 * (wovh); the time before t stays the block's wait. */
static void nbc_progress_blocked(sim *s, uint32_t rank, simtime t)
{
    srank *r = &s->r[rank];
    if (r->now < t)
        r->now = t;
    simtime t0 = r->now;
    nbc_progress(s, rank, 0); /* opal_progress runs over and over in a wait */
    r->wovh += r->now - t0;
}

/* After an event: the blocked ranks whose schedules it may let go on. */
static __attribute__((noinline, cold)) void nbc_run_due(sim *s)
{
    for (uint32_t i = 0; i < s->nnbc_due && !s->failed; i++) { /* may grow meanwhile */
        due_rank d = s->nbc_due[i];
        if (s->r[d.rank].state == RK_BLOCKED)
            nbc_progress_blocked(s, d.rank, d.t);
    }
    s->nnbc_due = 0;
}

/* The I-call: the run joins the rank's schedules and posts its first round
 * (NBC_Start_round: libnbc progresses nothing more in the call). */
static int exec_nbstart(sim *s, uint32_t rank, const ins *in)
{
    nbc_run *run = in->u.nb;
    if (!s->nbc_active && !(s->nbc_active = calloc(s->n, sizeof *s->nbc_active)))
        return sim_fail(s, "out of memory (%u ranks)", s->n);
    nbc_run **pp = &s->nbc_active[rank];
    while (*pp)
        pp = &(*pp)->next;
    *pp = run;
    s->r[rank].nbc = 1;
    return nbc_post_round(s, rank, run) < 0 ? -1 : DONE;
}

/* The Wait or Test that completed it: block on its round until it is done,
 * the rank's other schedules going on meanwhile. */
static int exec_nbwait(sim *s, uint32_t rank, const ins *in)
{
    srank *r = &s->r[rank];
    nbc_run *run = in->u.nb;
    r->unblocked = 0;
    for (;;) {
        nbc_progress(s, rank, 0);
        if (s->failed)
            return -1;
        if (run->done) {
            nbc_free(s, run);
            return DONE;
        }
        if (wait_reqs(s, rank, run->creq, run->ncreq) == BLOCKED)
            return BLOCKED;
    }
}

static int exec_wait(sim *s, uint32_t rank, const ins *in)
{
    srank *r = &s->r[rank];
    if (r->unblocked) {
        r->unblocked = 0;
        if (test_op(in->op) && r->now > r->w0 + r->wovh)
            earn_credit(s, rank, r->now - r->w0 - r->wovh);
    } else if (wait_reqs(s, rank, in->u.w.reqs, in->u.w.n) == BLOCKED) {
        return BLOCKED;
    }
    release_all(s, in->u.w.reqs, in->u.w.n);
    return DONE;
}

/* A probe waits for the envelope of the next message nobody has matched. */
static int exec_probe(sim *s, uint32_t rank, const ins *in)
{
    srank *r = &s->r[rank];
    uint32_t qi = in->u.p.req;
    if (!r->unblocked) {
        mkey k = key_of(s, in->comm, 0, (uint32_t)in->u.p.peer, rank, in->u.p.tag);
        mentry *e = mt_get(s, k);
        if (!e)
            return -1;
        s->rq[qi].t_post = r->now;
        if (e->kind == MK_SENDS && e->head != NIL)
            bind_probe(s, qi, e->head);
        else
            e->probe = qi;
        if (wait_reqs(s, rank, &qi, 1) == BLOCKED)
            return BLOCKED;
    }
    r->unblocked = 0;
    req_release(s, qi);
    return DONE;
}

static void rank_finish(sim *s, uint32_t rank, int complete)
{
    srank *r = &s->r[rank];
    past_horizon(s, r, r->now);
    simmpi_rank_result *rr = &s->res->ranks[rank];
    r->state = RK_DONE;
    rr->finish = r->now;
    rr->complete = complete;
    s->done++;
}

/* Whether a failed Test's requests (all, for a Testall) have completed by
 * the rank's clock: the Test would have succeeded on the target. */
static int test_would_succeed(const sim *s, const srank *r, const ins *in)
{
    uint32_t n = in->u.w.n, done = 0;
    for (uint32_t i = 0; i < n; i++) {
        const req *q = &s->rq[in->u.w.inl[i]];
        done += (q->state & RS_DONE) && q->t_done <= r->now;
    }
    return n && (in->flags & F_ALL ? done == n : done > 0);
}

/* Whether a failed Iprobe from one source with one tag (not a wildcard:
 * which of several envelopes the target would have found first is not
 * the trace's) would have found a message: the next unmatched one from
 * that source and tag is at the rank by its clock. */
static int probe_would_succeed(sim *s, uint32_t rank, const ins *in)
{
    const ins_p2p *p = &in->u.p;
    if (p->peer < 0 || p->tag < 0)
        return 0;
    const mentry *e = mt_find(&s->mt, key_of(s, in->comm, 0, (uint32_t)p->peer, rank, p->tag));
    if (!e || e->kind != MK_SENDS || e->head == NIL)
        return 0;
    const msg *m = &s->ms[e->head];
    return (m->state & MS_ENVELOPE) && m->t_env <= s->r[rank].now;
}

/* A Test that completed nothing or an Iprobe that found nothing, as
 * recorded: charged, and counted for the note on polling (simmpi.h).  A
 * Test whose requests the simulation has completed, or an Iprobe whose
 * message is in, is folded: it costs nothing, as the target would not have
 * polled again (the successful Test or Iprobe the trace has later still
 * costs what it costs).  A Test of one nonblocking collective folds when
 * its schedule is done by the Test's end: before it, or by the one step of
 * libnbc's progress in it, as Open MPI's Test checks again after its
 * opal_progress. */
static int failed_poll(sim *s, srank *r, const ins *in)
{
    int found = in->flags & F_PROBE ? probe_would_succeed(s, (uint32_t)(r - s->r), in)
                : in->flags & F_NBC ? in->u.nb->done
                                    : test_would_succeed(s, r, in);
    if (found) {
        s->res->folded_polls++;
        return DONE;
    }
    simtime cost = in->flags & F_PROBE ? s->pf.o_iprobe : s->pf.o_poll;
    if (s->credit)
        cost = spend_credit(s, (uint32_t)(r - s->r), cost);
    overhead(s, r, cost);
    s->res->failed_polls++;
    s->res->failed_poll_time += cost;
    return DONE;
}

static int exec(sim *s, uint32_t rank, ins *in)
{
    srank *r = &s->r[rank];
    switch (in->type) {
    case I_SEND: post_send(s, rank, &in->u.p, in->comm, 0, in->flags); return DONE;
    case I_RECV: post_recv(s, rank, &in->u.p, in->comm, 0); return DONE;
    case I_WAIT: return exec_wait(s, rank, in);
    case I_POLL: return failed_poll(s, r, in);
    case I_PROBE: return exec_probe(s, rank, in);
    case I_COLL: return exec_coll(s, rank, in);
    case I_NBSTART: return exec_nbstart(s, rank, in);
    case I_NBWAIT: return exec_nbwait(s, rank, in);
    case I_END: rank_finish(s, rank, 1); return ENDED;
    default: return DONE;
    }
}

/* Entering an MPI call: the computation unit before it runs first. */
static void call_start(sim *s, srank *r, const ins *in)
{
    r->op = in->op;
    r->site = in->site;
    r->acct.calls++;
    s->res->ops[in->op].calls++;
    if (in->site < s->res->nsites) {
        s->res->sites[in->site].calls++;
        ph_site_op_note(&s->res->site_op[in->site], in->op);
    }
    simtime dt = in->comp;
    if (s->credit && in->type == I_POLL)
        dt = spend_credit(s, (uint32_t)(r - s->r), dt);
    if (s->noise)
        dt = cpu_until_noisy(s, r, r->now, dt) - r->now;
    r->now += dt;
    r->acct.comp += dt;
    r->comp_done = 1;
    past_horizon(s, r, r->now);
}

/* ---- progress ------------------------------------------------------------------------------ */

#define PROGRESS_STEP (1u << 14) /* trace events + heap events between reports */

static void report_progress_now(sim *s, simtime now)
{
    s->next_progress = s->events + s->res->heap_events + PROGRESS_STEP;
    simmpi_progress p = {.events = s->events, .ranks_done = s->done, .nranks = s->n, .now = now};
    if (s->src->events_total)
        p.total = s->src->events_total(s->src->ctx);
    s->o->progress(s->o->progress_ctx, &p);
}

/* Checked in the loop and in a running rank (which may run a long time
 * without the heap); next_progress is UINT64_MAX without a callback. */
static inline void report_progress(sim *s, simtime now)
{
    if (s->events + s->res->heap_events >= s->next_progress)
        report_progress_now(s, now);
}

/* Run rank as far as it can go without passing an earlier event.  Its
 * three ways of stopping for an earlier event share one queueing, inline:
 * most runs end there, and the call cost about 12 instructions. */
static void rank_run(sim *s, uint32_t rank)
{
    srank *r = &s->r[rank];
    r->state = RK_RUN;
    if (r->debt) {
        simtime dt = r->debt;
        if (s->noise) { /* owe() left the rank's part for now */
            dt = cpu_until_noisy(s, r, r->now, dt) - r->now;
            r->acct.ovh += dt;
        }
        r->now += dt;
        r->debt = 0;
        if (!may_continue(s, rank))
            goto queue;
    }
    for (;;) {
        ins *in = fe_head(s, rank);
        if (s->failed)
            return;
        if (!in) {
            rank_finish(s, rank, 0);
            return;
        }
        if ((in->flags & F_CALL) && !r->comp_done && !r->unblocked) {
            call_start(s, r, in);
            if (in->comp && !may_continue(s, rank))
                goto queue;
        }
        /* libnbc's progress runs where Open MPI polls: one step (one
         * opal_progress) in a Test or Iprobe that finds nothing, unless it
         * tests a schedule already done, and over and over in any call
         * while it waits (wait_reqs).  A call that completes at once, an
         * eager Send or a Wait on a finished request, progresses nothing. */
        if (__builtin_expect(r->nbc, 0) && in->type == I_POLL && (in->flags & F_CALL) && !r->unblocked &&
            !(in->flags & F_POLLED) && !((in->flags & F_NBC) && in->u.nb->done)) {
            in->flags |= F_POLLED; /* once, should the rank yield here and come back */
            simtime t0 = r->now;
            nbc_progress(s, rank, 1);
            if (r->now != t0 && !may_continue(s, rank))
                goto queue;
        }
        int rc = exec(s, rank, in);
        if (rc != DONE)
            return;
        fe_pop(s, rank);
        r->comp_done = 0;
        report_progress(s, r->now);
        if (!may_continue(s, rank))
            goto queue;
    }
queue:
    queue_rank(s, rank);
}

/* ---- the loop --------------------------------------------------------------------------------- */

/* Ranks an event woke: one that is the earliest thing to happen runs at once
 * (no heap round trip); otherwise they queue.  Never inside the event's own
 * handler, which may still be using the message that woke them. */
static void resume_woken(sim *s)
{
    if (s->nwoken == 1 && may_continue(s, s->woken[0]))
        rank_run(s, s->woken[0]);
    else
        for (uint32_t i = 0; i < s->nwoken; i++)
            queue_rank(s, s->woken[i]);
    s->nwoken = 0;
}

/* Below this many ranks what an event touches stays cached, and finding the
 * next event's rank to ask for it is only work. */
#define PREFETCH_FROM 256

/* Past a few hundred ranks the state an event touches is not in the caches;
 * the event now at the heap's top will very likely be the next one handled,
 * so ask for its rank (first two lines: clock, NICs, wait state) and its
 * message while this event runs.  A hint only: nothing depends on it. */
static void prefetch_next(sim *s)
{
    const hev *nx;
    evqueue *q = next_queue(s, &nx);
    if (!q)
        return;
    const char *r = (const char *)&s->r[ev_rank(nx)];
    __builtin_prefetch(r);
    __builtin_prefetch(r + 64);
    if (q == &s->mheap)
        __builtin_prefetch(&s->ms[evq_top_ref(q)]);
    if (s->src->hot) { /* and where its next read from the trace starts */
        const char *h = s->src->hot[ev_rank(nx)];
        for (uint32_t i = 0; h && i < s->src->hot_lines; i++) /* NULL: not opened yet */
            __builtin_prefetch(h + 64 * i);
    }
}

static void run_loop(sim *s)
{
    for (uint32_t i = 0; i < s->n; i++)
        queue_rank(s, i);
    int ahead = s->n >= PREFETCH_FROM;
    for (const hev *top; !s->failed;) {
        evqueue *q = next_queue(s, &top);
        if (!q)
            break;
        /* No horizon check here (one per event): an event's time is a
         * rank's clock, checked where it grows, plus a capped cost (L, a
         * NIC's gap, o'), so it stays far from wrapping; the clock it sets
         * is checked where it wakes a waiting rank, or at the rank's next
         * call or end. */
        uint32_t ref = 0;
        hev e;
        int rc = q != &s->rheap  ? evq_pop(q, &e, &ref)
                 : q->small.pos ? evq_pop_(q, &e, &ref, HEAP_POS)
                                : evq_pop_(q, &e, &ref, HEAP_PLAIN);
        if (rc < 0) {
            sim_fail(s, "out of memory (%llu pending events)",
                     (unsigned long long)(evq_n(&s->rheap) + evq_n(&s->mheap)));
            break;
        }
        if (ahead)
            prefetch_next(s);
        s->res->heap_events++;
        switch (ev_type(&e)) {
        case EV_RESUME: rank_run(s, ev_rank(&e)); break;
        case EV_DELIVER:
            s->rev[ev_rank(&e)].n--;
            deliver(s, ref, e.t);
            if (s->nnbc_due) /* what completes a nonblocking collective's request */
                nbc_run_due(s);
            break;
        case EV_RTS: s->nctl_q--; s->rev[ev_rank(&e)].n--; ev_rts(s, ref, e.t); break;
        case EV_CTS:
            s->nctl_q--;
            s->rev[ev_rank(&e)].n--;
            ev_cts(s, ref, e.t);
            if (s->nnbc_due)
                nbc_run_due(s);
            break;
        }
        if (s->nwoken)
            resume_woken(s);
        report_progress(s, e.t);
    }
}

/* ---- deadlock report ------------------------------------------------------------------------ */

static const char *partner_state(const sim *s, int32_t peer)
{
    if (peer < 0 || (uint32_t)peer >= s->n)
        return "";
    switch (s->r[peer].state) {
    case RK_DONE: return s->res->ranks[peer].complete ? ", which has finished" : ", whose trace has ended";
    case RK_BLOCKED: return ", which is blocked too";
    default: return "";
    }
}

static int describe_req(const sim *s, const req *q, char *buf, size_t cap)
{
    char where[64];
    if (q->state & RS_COLL)
        snprintf(where, sizeof where, "in a collective on comm %u", q->comm);
    else
        snprintf(where, sizeof where, "tag %d, comm %u", q->tag, q->comm);
    if (q->kind == RQ_SEND)
        return snprintf(buf, cap, "rank %d to receive a message (%s)%s", q->peer, where,
                        partner_state(s, q->peer));
    return snprintf(buf, cap, "%s from rank %d (%s)%s",
                    q->kind == RQ_PROBE ? "a message to probe" : "a message", q->peer, where,
                    partner_state(s, q->peer));
}

static void describe_stuck(sim *s, uint32_t rank, simmpi_stuck *st)
{
    srank *r = &s->r[rank];
    const uint32_t *reqs;
    uint32_t n, shown = 0, more = 0;
    *st = (simmpi_stuck){.rank = rank, .op = r->op, .site = r->site, .since = r->w0};
    wait_set(s, rank, &reqs, &n);
    size_t len = (size_t)snprintf(st->what, sizeof st->what, "waiting for ");
    for (uint32_t i = 0; i < n; i++) {
        const req *q = &s->rq[reqs[i]];
        if (q->state & RS_DONE)
            continue;
        if (shown && len + 80 > sizeof st->what) {
            more++;
            continue;
        }
        if (shown)
            len += (size_t)snprintf(st->what + len, sizeof st->what - len, "; ");
        int k = describe_req(s, q, st->what + len, sizeof st->what - len);
        len = k > 0 && len + (size_t)k < sizeof st->what ? len + (size_t)k : sizeof st->what - 1;
        shown++;
    }
    if (more)
        snprintf(st->what + len, sizeof st->what - len, "; and %u more", more);
}

static int report_stuck(sim *s)
{
    simmpi_result *res = s->res;
    for (uint32_t i = 0; i < s->n; i++)
        res->nstuck += s->r[i].state != RK_DONE;
    if (!res->nstuck)
        return 0;
    res->stuck = calloc(res->nstuck, sizeof *res->stuck);
    if (!res->stuck)
        return sim_fail(s, "out of memory");
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->n; i++)
        if (s->r[i].state != RK_DONE)
            describe_stuck(s, i, &res->stuck[k++]);
    return 0;
}

/* ---- communicators ------------------------------------------------------------------------------ */

const ph_comm_info *sim_comm(sim *s, uint32_t id)
{
    if (id > UINT32_MAX - 16)
        return NULL; /* not a trace id (e.g. a persistent request's, UINT32_MAX) */
    if (id >= s->ncomms) {
        uint32_t nc = id + 16;
        comm_cache *c = realloc(s->comms, nc * sizeof *c);
        if (!c)
            return NULL;
        memset(c + s->ncomms, 0, (nc - s->ncomms) * sizeof *c);
        s->comms = c;
        s->ncomms = nc;
    }
    comm_cache *c = &s->comms[id];
    if (!c->info)
        c->info = s->src->comm(s->src->ctx, id);
    return c->info;
}

/* The other side of intercommunicator id (ph_comm_other_side): the one with
 * the paired gid, else the first whose groups are this one's swapped. */
static uint32_t intercomm_partner(sim *s, uint32_t id, const ph_comm_info *me)
{
    uint32_t by_groups = id;
    for (uint32_t j = 0; j < (1u << 24); j++) {
        const ph_comm_info *c = j == id ? NULL : sim_comm(s, j);
        if (!c && j != id)
            break;
        int side = ph_comm_other_side(me, c);
        if (side == 2)
            return j;
        if (side == 1 && by_groups == id)
            by_groups = j;
    }
    return by_groups;
}

/* Asked for every point-to-point message: after a communicator's first,
 * one look at its cache entry. */
uint32_t sim_p2p_ctx(sim *s, uint32_t id)
{
    if (id < s->ncomms && s->comms[id].ctx_known)
        return s->comms[id].ctx;
    const ph_comm_info *ci = sim_comm(s, id);
    if (!ci)
        return id;
    uint32_t other = ci->remote_size ? intercomm_partner(s, id, ci) : id;
    comm_cache *c = &s->comms[id]; /* after intercomm_partner: sim_comm may move the cache */
    c->ctx = other < id ? other : id;
    c->ctx_known = 1;
    return c->ctx;
}

static int cmp_pair(const void *a, const void *b)
{
    const int32_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Rank of world rank `world` in communicator `comm`: a sorted (world, rank)
 * table per communicator, built the first time it is needed. */
int32_t sim_comm_rank(sim *s, uint32_t comm, uint32_t world)
{
    const ph_comm_info *ci = sim_comm(s, comm);
    if (!ci)
        return -1;
    comm_cache *c = &s->comms[comm];
    if (!c->rank_of) {
        c->rank_of = malloc(2 * (size_t)(ci->size + 1) * sizeof(int32_t));
        if (!c->rank_of)
            return -1;
        for (uint32_t i = 0; i < ci->size; i++) {
            c->rank_of[2 * i] = ci->members[i];
            c->rank_of[2 * i + 1] = (int32_t)i;
        }
        qsort(c->rank_of, ci->size, 2 * sizeof(int32_t), cmp_pair);
        c->n = ci->size;
    }
    uint32_t lo = 0, hi = c->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (c->rank_of[2 * mid] < (int32_t)world)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->n && c->rank_of[2 * lo] == (int32_t)world ? c->rank_of[2 * lo + 1] : -1;
}

/* ---- setting up and tearing down ------------------------------------------------------------------ */

/* Without a node map (options' node_of NULL), ppn consecutive ranks a node:
 * lib's ph_node_map "block". */
static uint32_t node_block(uint32_t rank, uint32_t ppn) { return ppn ? rank / ppn : 0; }

void simmpi_options_default(simmpi_options *o)
{
    memset(o, 0, sizeof *o);
    simmpi_platform_default(&o->platform);
    o->comp_scale = 1.0;
}

int simmpi_queue_named(const char *name)
{
    static const char *const names[] = {[SIMMPI_QUEUE_AUTO] = "auto", [SIMMPI_QUEUE_HEAP] = "heap",
                                        [SIMMPI_QUEUE_RADIX] = "radix"};
    for (int i = 0; i < (int)(sizeof names / sizeof *names); i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

/* The ranks' send numbers (heap order) and event counts, and what else
 * may_run_ahead needs: the least collect cost after a delivery, o_r of the
 * channels some pair of ranks uses. */
static int run_ahead_setup(sim *s)
{
    uint32_t *on_node = calloc(s->res->nnodes + 1, sizeof *on_node);
    if (!(s->rev = calloc(s->n + 1, sizeof *s->rev)) || !on_node) {
        free(on_node);
        return sim_fail(s, "out of memory (%u ranks)", s->n);
    }
    int intra = 0, inter = 0;
    s->run_ahead = !s->o->strict_order;
    for (uint32_t i = 0; i < s->n; i++) {
        intra |= on_node[s->node_of[i]]++ > 0;
        inter |= s->node_of[i] != s->node_of[0];
    }
    free(on_node);
    simtime least = SIM_HORIZON;
    if (inter && s->pf.inter.o_r < least)
        least = s->pf.inter.o_r;
    if (intra && s->pf.intra.o_r < least)
        least = s->pf.intra.o_r;
    s->la_deliver = least == SIM_HORIZON ? 0 : least;
    s->la_probe = s->pf.o_iprobe < s->la_deliver ? s->pf.o_iprobe : s->la_deliver;
    if (s->noise) { /* the CPU does work at (P - len) / P of it between pauses */
        simtime P = s->pf.noise_period, on = P - s->pf.noise_pause;
        s->la_deliver = (simtime)((unsigned __int128)s->la_deliver * on / P);
        s->la_probe = (simtime)((unsigned __int128)s->la_probe * on / P);
    }
    return 0;
}

static int setup(sim *s, const simmpi_options *o, const simmpi_source *src, ph_err *err)
{
    s->o = o;
    s->pf = o->platform;
    s->src = src;
    s->n = src->nranks;
    s->err = err;
    s->freems = NIL;
    s->next_progress = o->progress ? PROGRESS_STEP : UINT64_MAX;
    /* as simmpi_platform_load checks, for platforms built in code too */
    s->noise = s->pf.noise_pause && s->pf.noise_period > s->pf.noise_pause;
    s->comp_plain = !o->comp.unit && o->comp_scale == 1.0;
    s->probe_ns = o->host_probe_ns;
    evq_init(&s->rheap, o->queue, HEAP_PLAIN);
    evq_init(&s->mheap, o->queue, HEAP_REF);
    if (src->nranks > SIMMPI_MAX_RANKS)
        return sim_fail(s, "%u ranks: the simulator takes at most %u", src->nranks, SIMMPI_MAX_RANKS);
    /* Where each rank's RESUME is (delay_resume).  With one RESUME a rank
     * at most, the RESUMEs of up to radix_from ranks never make a radix
     * heap, whose buckets keep no positions. */
    if (s->n > DELAY_SCAN_MAX && s->n <= s->rheap.radix_from && s->n <= RPOS_MAX_RANKS &&
        !(s->rheap.small.pos = calloc(s->n, sizeof *s->rheap.small.pos)))
        return sim_fail(s, "out of memory (%u ranks)", s->n);
    if (!(o->comp_scale >= 0))
        return sim_fail(s, "computation scale %g is not a factor >= 0", o->comp_scale);
    s->res = calloc(1, sizeof *s->res);
    /* ranks on line boundaries (srank is line-aligned: 5 lines) */
    size_t rbytes = ((s->n ? s->n : 1) * sizeof *s->r + 63) & ~(size_t)63;
    if ((s->r = aligned_alloc(64, rbytes)))
        memset(s->r, 0, rbytes);
    if (!s->res || !s->r)
        return sim_fail(s, "out of memory (%u ranks)", s->n);
    for (uint32_t i = 0; i < s->n; i++)
        s->r[i].freerq = NIL;
    if (mt_grow(&s->mt) < 0) /* mt_get looks without checking for a table */
        return sim_fail(s, "out of memory");
    s->res->nranks = s->n;
    s->res->nsites = src->nsites;
    s->res->ranks = calloc(s->n ? s->n : 1, sizeof *s->res->ranks);
    s->res->startup = calloc(s->n ? s->n : 1, sizeof *s->res->startup);
    s->res->sites = calloc(src->nsites + 1, sizeof *s->res->sites);
    s->res->site_op = calloc(src->nsites + 1, sizeof *s->res->site_op);
    if (!s->res->ranks || !s->res->startup || !s->res->sites || !s->res->site_op)
        return sim_fail(s, "out of memory (%u ranks)", s->n);
    if (o->node_of) {
        s->node_of = o->node_of;
    } else {
        uint32_t ppn = o->ppn ? o->ppn : (s->pf.cores_per_node ? s->pf.cores_per_node : 1);
        if (!(s->own_node_of = malloc((s->n + 1) * sizeof *s->own_node_of)))
            return sim_fail(s, "out of memory");
        for (uint32_t i = 0; i < s->n; i++)
            s->own_node_of[i] = node_block(i, ppn);
        s->node_of = s->own_node_of;
    }
    for (uint32_t i = 0; i < s->n; i++)
        if (s->node_of[i] + 1 > s->res->nnodes)
            s->res->nnodes = s->node_of[i] + 1;
    return run_ahead_setup(s);
}

static void collect_results(sim *s)
{
    simmpi_result *res = s->res;
    for (uint32_t i = 0; i < s->n; i++) {
        simmpi_rank_result *rr = &res->ranks[i];
        const fe_rank *f = &s->r[i].fe;
        if (s->r[i].state != RK_DONE)
            rr->finish = s->r[i].now;
        rr->b = s->r[i].acct;
        rr->events = f->events;
        rr->measured_ns += f->started && f->t_end > f->t_start ? f->t_end - f->t_start : 0;
        if (rr->finish > res->total)
            res->total = rr->finish;
        if (rr->measured_ns > res->measured_ns)
            res->measured_ns = rr->measured_ns;
    }
    res->events = s->events;
    for (uint64_t i = 0; s->mt.e && i <= s->mt.mask; i++)
        if (s->mt.e[i].kind == MK_SENDS)
            for (uint32_t m = s->mt.e[i].head; m != NIL; m = s->ms[m].next)
                res->unmatched_sends++;
}

static void teardown(sim *s)
{
    for (uint32_t i = 0; s->r && i < s->n; i++) {
        fe_free(&s->r[i].fe);
        free(s->r[i].creq);
    }
    for (uint32_t i = 0; i < s->ncomms; i++) {
        free(s->comms[i].rank_of);
        free(s->comms[i].vcalls);
        free(s->comms[i].nbcalls);
    }
    free(s->comms);
    while (s->nbc_all)
        nbc_free(s, s->nbc_all);
    free(s->nbc_active);
    free(s->nbc_due);
    free(s->r);
    free(s->own_node_of);
    free(s->rq);
    free(s->ms);
    free(s->mt.e);
    free(s->rheap.small.pos);
    evq_free(&s->rheap);
    evq_free(&s->mheap);
    free(s->credit);
    free(s->rev);
    free(s->cr.send);
    free(s->cr.recv);
    free(s->sched);
}

void simmpi_result_free(simmpi_result *res)
{
    if (!res)
        return;
    free(res->ranks);
    free(res->startup);
    free(res->sites);
    free(res->site_op);
    free(res->stuck);
    free(res);
}

int simmpi_run(const simmpi_options *o, const simmpi_source *src, simmpi_result **out, ph_err *err)
{
    sim s = {0};
    *out = NULL;
    if (setup(&s, o, src, err) == 0) {
        run_loop(&s);
        if (!s.failed) {
            collect_results(&s);
            report_stuck(&s);
        }
    }
    teardown(&s);
    if (s.failed) {
        simmpi_result_free(s.res);
        return -1;
    }
    *out = s.res;
    return 0;
}

const char *simmpi_fmt_time(simtime t, char *buf, size_t cap)
{
    double ns = (double)t / 1000.0;
    if (ns >= 1e9)
        snprintf(buf, cap, "%.6f s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(buf, cap, "%.3f ms", ns / 1e6);
    else if (ns >= 1e3)
        snprintf(buf, cap, "%.3f us", ns / 1e3);
    else
        snprintf(buf, cap, "%.3f ns", ns);
    return buf;
}
