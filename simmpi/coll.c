/* coll.c - collectives as rounds of point-to-point messages.
 *
 * A collective on one rank is a schedule of rounds: in each round the rank
 * posts some receives and sends, waits for all of them, then reduces what it
 * received (reduce_bytes).  Round k of a rank's schedule is computed on
 * demand from (algorithm, size, rank, root, count), so a 1,048,576-rank
 * collective needs no per-rank schedule in memory.
 *
 * The algorithms follow Open MPI 4.1's coll/base implementations (numbered
 * as coll/tuned numbers them), and the selection follows coll/tuned's fixed
 * decision rules for commutative operations; doc/simmpi.md lists each
 * algorithm's messages and where we simplify (segmentation, a few rarely
 * chosen variants mapped onto their nearest neighbour).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- helpers ------------------------------------------------------------------------------ */

typedef struct rb { /* walks an algorithm's rounds, keeping only round `want` */
    uint32_t want, cur;
    coll_round *o;
    int hit;
    coll_memo *m;        /* what the rank's earlier rounds worked out, or NULL */
    const uint8_t *forced; /* coll_round_get's */
} rb;

/* The platform's forced algorithm for coll (coll.NAME), or 0: the rule's. */
static int forced_alg(const rb *b, int coll) { return b->forced ? b->forced[coll] : 0; }

static int rnd(rb *b)
{
    if (b->cur++ != b->want)
        return 0;
    b->hit = 1;
    return 1;
}

/* n rounds in a row, one after the other: *i is the wanted one's index among
 * them, if it is one of them.  Walking past them costs O(1), where n calls
 * of rnd() would cost O(n), and so a whole schedule of O(p) rounds O(p^2). */
static int rnd_of(rb *b, uint32_t n, uint32_t *i)
{
    uint32_t first = b->cur;
    b->cur += n;
    if (b->want < first || b->want - first >= n)
        return 0;
    *i = b->want - first;
    b->hit = 1;
    return 1;
}

static void S(coll_round *o, uint32_t peer, uint64_t bytes)
{
    o->send[o->nsend++] = (coll_xfer){.peer = peer, .bytes = bytes};
}

/* A synchronous send of 0 bytes (MCA_PML_BASE_SEND_SYNCHRONOUS): done when
 * the receiver has it, so the sender cannot leave before its peer arrived. */
static void S_sync(coll_round *o, uint32_t peer)
{
    o->send[o->nsend++] = (coll_xfer){.peer = peer, .sync = 1};
}

static void R(coll_round *o, uint32_t peer) { o->recv[o->nrecv++] = (coll_xfer){.peer = peer}; }

static uint32_t pof2_floor(uint32_t n)
{
    uint32_t p = 1;
    while (p <= n / 2)
        p *= 2;
    return p;
}

static uint32_t pof2_ceil(uint32_t n)
{
    uint32_t p = 1;
    while (p < n)
        p *= 2;
    return p;
}

/* The entry points run_alg dispatches to stay functions of their own: inlined
 * all into run_alg, every round would pay the frame (six saved registers,
 * half a kilobyte of stack) of whichever algorithm needs the most, twice in
 * a composition, where now run_alg is a jump table. */
#define DISPATCHED __attribute__((noinline))
/* Likewise the big algorithms under a dispatcher: GCC saves their registers
 * before the dispatcher's switch, for every algorithm it dispatches to. */
#define OWN_FRAME __attribute__((noinline))

static int is_pof2(uint32_t n) { return n && !(n & (n - 1)); }
static uint32_t lowbit(uint32_t v) { return v & (~v + 1); }
static uint32_t hibit(uint32_t v) { return pof2_floor(v); }

/* Elements of block i when count elements are split over p blocks, the
 * first count % p blocks one larger (Open MPI's COMPUTE_BLOCKCOUNT). */
static uint64_t blk(uint64_t count, uint32_t p, uint32_t i) { return count / p + (i < count % p); }

static uint64_t B(const ins_coll *c) { return c->count * c->esize; }
static uint32_t vrank(const ins_coll *c) { return (c->me + c->size - c->root) % c->size; }
static uint32_t real(const ins_coll *c, uint32_t v) { return (v + c->root) % c->size; }

int coll_round_reserve(coll_round *r, uint32_t n)
{
    if (n <= r->cap)
        return 0;
    coll_xfer *s = realloc(r->send, n * sizeof *s), *q = s ? realloc(r->recv, n * sizeof *q) : NULL;
    if (s)
        r->send = s;
    if (!q)
        return -1;
    r->recv = q;
    r->cap = n;
    return 0;
}

/* ---- trees (over virtual ranks, root = 0) ---------------------------------------------------- */

enum topo { T_BMTREE, T_INORDER, T_KARY2, T_CHAIN, T_KNOMIAL4 };

/* Open MPI's k-ary tree: level l holds fanout^l nodes in rank order. */
static uint32_t kary_level(uint32_t v, uint32_t fanout, uint32_t *delta)
{
    uint32_t level = 0, num = 0, pw = 1;
    while (num + pw <= v) {
        num += pw;
        pw *= fanout;
        level++;
    }
    *delta = pw;
    return level;
}

static int32_t kary_parent(uint32_t v, uint32_t fanout)
{
    if (v == 0)
        return -1;
    if (v < fanout + 1)
        return 0;
    uint32_t delta, level = kary_level(v, fanout, &delta);
    uint32_t slimit = (delta - 1) / (fanout - 1), p = v; /* nodes above my level */
    (void)level;
    while (p >= slimit)
        p -= delta / fanout;
    return (int32_t)p;
}

static int32_t topo_parent(int topo, uint32_t v, uint32_t p)
{
    if (v == 0)
        return -1;
    switch (topo) {
    case T_BMTREE: return (int32_t)(v ^ hibit(v));
    case T_INORDER: return (int32_t)(v - lowbit(v));
    case T_KARY2: return kary_parent(v, 2);
    case T_CHAIN: return (int32_t)v - 1;
    default: { /* k-nomial, radix 4 */
        for (uint32_t mask = 1; mask < p; mask *= 4)
            if (v % (4 * mask))
                return (int32_t)(v / (4 * mask) * (4 * mask));
        return 0;
    }
    }
}

/* Children of v in the order Open MPI sends to them; returns how many. */
static uint32_t topo_children(int topo, uint32_t v, uint32_t p, uint32_t *out)
{
    uint32_t n = 0;
    switch (topo) {
    case T_BMTREE:
        for (uint32_t mask = v ? hibit(v) * 2 : 1; mask < p && v + mask < p; mask *= 2)
            out[n++] = v + mask;
        break;
    case T_INORDER:
        for (uint32_t mask = 1; mask < p && (v == 0 || mask < lowbit(v)); mask *= 2)
            if (v + mask < p)
                out[n++] = v + mask;
        break;
    case T_KARY2: {
        uint32_t delta;
        kary_level(v, 2, &delta);
        for (uint32_t i = 0; i < 2 && v + delta * (i + 1) < p; i++)
            out[n++] = v + delta * (i + 1);
        break;
    }
    case T_CHAIN:
        if (v + 1 < p)
            out[n++] = v + 1;
        break;
    default: {
        uint32_t mask = 1;
        while (mask < p && !(v % (4 * mask)))
            mask *= 4;
        for (mask /= 4; mask > 0; mask /= 4)
            for (uint32_t r = 1; r < 4; r++)
                if (v + mask * r < p)
                    out[n++] = v + mask * r;
        break;
    }
    }
    return n;
}

/* Whether v has children: what topo_children's loops would find first, in
 * a few instructions.  A rank's rounds other than the one sending to (or
 * receiving from) its children, and the call that finds no more rounds,
 * need only this, not the list. */
static int topo_has_children(int topo, uint32_t v, uint32_t p)
{
    switch (topo) {
    case T_BMTREE: return v + (v ? hibit(v) * 2 : 1) < p;
    case T_INORDER: return !(v & 1) && v + 1 < p; /* the first child is v + 1 */
    case T_KARY2: {
        uint32_t delta;
        kary_level(v, 2, &delta);
        return v + delta < p;
    }
    case T_CHAIN: return v + 1 < p;
    default: return v % 4 == 0 && v + 1 < p; /* k-nomial: v + 1 first, if v has any */
    }
}

/* In-order binomial subtree of v: [v, v + size). */
static uint32_t subtree(uint32_t v, uint32_t p)
{
    uint32_t span = v ? lowbit(v) : pof2_ceil(p);
    return v + span < p ? span : p - v;
}

/* ---- barrier ------------------------------------------------------------------------------------ */

static int bar_linear(const ins_coll *c, rb *b)
{
    coll_round *o = b->o;
    uint32_t p = c->size;
    if (c->me == 0) {
        if (rnd(b))
            for (uint32_t i = 1; i < p; i++)
                R(o, i);
        if (rnd(b))
            for (uint32_t i = 1; i < p; i++)
                S(o, i, 0);
    } else {
        if (rnd(b))
            S(o, 0, 0);
        if (rnd(b))
            R(o, 0);
    }
    return b->hit;
}

/* Twice around the ring; the second lap's sends are synchronous. */
static int bar_double_ring(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, left = (c->me + p - 1) % p, right = (c->me + 1) % p;
    for (int lap = 0; lap < 2; lap++) {
        if (c->me != 0 && rnd(b))
            R(b->o, left);
        if (rnd(b)) {
            if (lap)
                S_sync(b->o, right);
            else
                S(b->o, right, 0);
        }
        if (c->me == 0 && rnd(b))
            R(b->o, left);
    }
    return b->hit;
}

static int bar_recdbl(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, me = c->me, adj = pof2_floor(p);
    if (adj != p && me >= adj && rnd(b)) {
        S(b->o, me - adj, 0);
        R(b->o, me - adj);
    } else if (adj != p && me < p - adj && rnd(b)) {
        R(b->o, me + adj);
    }
    for (uint32_t mask = 1; me < adj && mask < adj; mask <<= 1)
        if (rnd(b)) {
            S(b->o, me ^ mask, 0);
            R(b->o, me ^ mask);
        }
    if (adj != p && me < p - adj && rnd(b)) /* the folded rank's way out: synchronous */
        S_sync(b->o, me + adj);
    return b->hit;
}

/* Bruck's barrier is the dissemination barrier. */
static int bar_bruck(const ins_coll *c, rb *b)
{
    uint32_t p = c->size;
    for (uint32_t d = 1; d < p; d <<= 1)
        if (rnd(b)) {
            S(b->o, (c->me + d) % p, 0);
            R(b->o, (c->me + p - d) % p);
        }
    return b->hit;
}

static int bar_tree(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, me = c->me, depth = pof2_ceil(p);
    for (uint32_t jump = 1; jump < depth; jump <<= 1) {
        uint32_t partner = me ^ jump;
        if ((partner & (jump - 1)) || partner >= p)
            continue;
        if (partner > me && rnd(b))
            R(b->o, partner);
        else if (partner < me && rnd(b))
            S(b->o, partner, 0);
    }
    for (uint32_t jump = depth >> 1; jump > 0; jump >>= 1) {
        uint32_t partner = me ^ jump;
        if ((partner & (jump - 1)) || partner >= p)
            continue;
        if (partner > me && rnd(b))
            S(b->o, partner, 0);
        else if (partner < me && rnd(b))
            R(b->o, partner);
    }
    return b->hit;
}

static int exchange2(const ins_coll *c, rb *b, uint64_t bytes) /* two_proc: one swap */
{
    if (rnd(b)) {
        S(b->o, 1 - c->me, bytes);
        R(b->o, 1 - c->me);
    }
    return b->hit;
}

static DISPATCHED int barrier(const ins_coll *c, rb *b)
{
    switch (c->alg) {
    case 1: return bar_linear(c, b);
    case 2: return bar_double_ring(c, b);
    case 4: return bar_bruck(c, b);
    case 5: return c->size == 2 ? exchange2(c, b, 0) : bar_recdbl(c, b);
    case 6: return bar_tree(c, b);
    default: return bar_recdbl(c, b);
    }
}

/* ---- broadcast and reduce over trees ------------------------------------------------------------------ */

/* Trees list their children only in the round that uses them. */
static void send_children(const ins_coll *c, rb *b, int topo, uint32_t v, uint64_t bytes)
{
    uint32_t kids[96], n = topo_children(topo, v, c->size, kids);
    for (uint32_t i = 0; i < n; i++)
        S(b->o, real(c, kids[i]), bytes);
}

static int bcast_tree(const ins_coll *c, rb *b, int topo, uint64_t bytes)
{
    uint32_t v = vrank(c);
    if (v && rnd(b))
        R(b->o, real(c, (uint32_t)topo_parent(topo, v, c->size)));
    if (topo_has_children(topo, v, c->size) && rnd(b))
        send_children(c, b, topo, v, bytes);
    return b->hit;
}

static int bcast_linear(const ins_coll *c, rb *b, uint64_t bytes)
{
    if (c->me != c->root) {
        if (rnd(b))
            R(b->o, c->root);
    } else if (c->size > 1 && rnd(b)) {
        for (uint32_t i = 0; i < c->size; i++)
            if (i != c->root)
                S(b->o, i, bytes);
    }
    return b->hit;
}

/* Elements of blocks [first, first + n) of sc elements, of count. */
static uint64_t sa_elems(uint64_t count, uint64_t sc, uint64_t first, uint64_t n)
{
    uint64_t lo = first * sc, hi = (first + n) * sc;
    return lo >= count ? 0 : (hi < count ? hi : count) - lo;
}

/* The allgather of Open MPI's scatter_allgather: recursive doubling for any
 * p, block ranges swapped with v ^ m; where the partner's half is short (p
 * not a power of two), the ranks of this half that have it pass it on by
 * recursive halving, one blocking send or receive a round
 * (ompi_coll_base_bcast_intra_scatter_allgather, literally). */
static void sa_recdbl(const ins_coll *c, rb *b, uint32_t v, uint64_t sc)
{
    uint32_t p = c->size;
    uint64_t es = c->esize;
    for (uint32_t m = 1; m < p; m <<= 1) {
        uint32_t vr = v ^ m, t = v & ~(m - 1), rt = vr & ~(m - 1);
        if (vr < p && rnd(b)) {
            S(b->o, real(c, vr), sa_elems(c->count, sc, t, m) * es);
            R(b->o, real(c, vr));
        }
        if ((uint64_t)rt + m <= p)
            continue;
        int64_t have = (int64_t)p - t - m; /* ranks of the partner's half */
        for (uint32_t h = m >> 1; h > 0; h >>= 1) {
            uint32_t w = v ^ h;
            int64_t tr = v & ~(2 * h - 1);
            if (w >= p)
                continue;
            if (w > v && v < tr + have && w >= tr + have) {
                if (rnd(b))
                    S(b->o, real(c, w), sa_elems(c->count, sc, (uint64_t)t + m, m) * es);
            } else if (w < v && w < tr + have && v >= tr + have && rnd(b)) {
                R(b->o, real(c, w));
            }
        }
    }
}

/* Binomial scatter of ceil(count/p)-element blocks (Open MPI's
 * scatter_allgather), then an allgather: recursive doubling (sa_recdbl),
 * or for alg 9 a ring. */
static int bcast_scatter_allgather(const ins_coll *c, rb *b, int ring)
{
    uint32_t p = c->size, v = vrank(c);
    uint64_t sc = (c->count + p - 1) / p, cur = c->count, es = c->esize;
    uint32_t mask = 1;
    for (; mask < p; mask <<= 1)
        if (v & mask) {
            cur = sa_elems(c->count, sc, v, mask);
            if (cur && rnd(b))
                R(b->o, real(c, v - mask));
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < p && cur > sc * mask) {
            uint64_t n = cur - sc * mask;
            if (rnd(b))
                S(b->o, real(c, v + mask), n * es);
            cur -= n;
        }
    if (!ring) {
        sa_recdbl(c, b, v, sc);
        return b->hit;
    }
    uint32_t i; /* the ring: p-1 rounds, round i passes on block v - i */
    if (rnd_of(b, p - 1, &i)) {
        uint32_t blkno = (v + p - i) % p;
        uint64_t lo = (uint64_t)blkno * sc, n = lo >= c->count ? 0 : c->count - lo;
        S(b->o, real(c, (v + 1) % p), (n < sc ? n : sc) * es);
        R(b->o, real(c, (v + p - 1) % p));
    }
    return b->hit;
}

static DISPATCHED int bcast(const ins_coll *c, rb *b)
{
    uint64_t bytes = B(c);
    switch (c->alg) {
    case 1: return bcast_linear(c, b, bytes);
    case 2:
    case 3: return bcast_tree(c, b, T_CHAIN, bytes);
    case 4:
    case 5: return bcast_tree(c, b, T_KARY2, bytes); /* split binary: as binary */
    case 7: return bcast_tree(c, b, T_KNOMIAL4, bytes);
    case 8:
    case 9:
        if (c->count < c->size) /* as Open MPI: too few elements to scatter */
            return bcast_linear(c, b, bytes);
        return bcast_scatter_allgather(c, b, c->alg == 9);
    default: return bcast_tree(c, b, T_BMTREE, bytes);
    }
}

static uint32_t recv_children(const ins_coll *c, rb *b, int topo, uint32_t v)
{
    uint32_t kids[96], n = topo_children(topo, v, c->size, kids);
    for (uint32_t i = 0; i < n; i++)
        R(b->o, real(c, kids[i]));
    return n;
}

static int reduce_tree(const ins_coll *c, rb *b, int topo)
{
    uint32_t v = vrank(c);
    if (topo_has_children(topo, v, c->size) && rnd(b))
        b->o->reduce_bytes = recv_children(c, b, topo, v) * B(c);
    if (v && rnd(b))
        S(b->o, real(c, (uint32_t)topo_parent(topo, v, c->size)), B(c));
    return b->hit;
}

/* Linear reduce (coll/base basic_linear): the root takes rank p-1's block,
 * then p-2's down to 0's, a blocking receive each, reducing each into the
 * result; its own is reduced in its turn, with no message (an empty round). */
static int reduce_linear(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, j;
    if (c->me != c->root) {
        if (rnd(b))
            S(b->o, c->root, B(c));
        return b->hit;
    }
    int last = c->root == p - 1; /* the root's block starts the result: no turn of its own */
    if (p > 1 && rnd_of(b, last ? p - 1 : p, &j)) {
        uint32_t i = last ? p - 2 - j : p - 1 - j;
        if (i != c->root)
            R(b->o, i);
        if (i != p - 1)
            b->o->reduce_bytes = B(c);
    }
    return b->hit;
}

/* Open MPI's in-order binary tree (ompi_coll_base_topo_build_in_order_bintree),
 * over ranks as they are, rooted at p-1: the node of a span of size ranks
 * is its last; its left child the last but one, heading the span's upper
 * part after the lower size/2, whose last rank is the right child.  Returns
 * me's parent (-1 at p-1) and its children, left first. */
static int64_t inorder_bintree(uint32_t me, uint32_t p, uint32_t kids[2], uint32_t *n)
{
    int64_t size = p, mine = me, parent = (int64_t)p - 1, delta = 0, prev = -1;
    for (*n = 0;;) {
        int64_t right = size >> 1, lchild = size > 1 ? parent - 1 : -1, rchild = lchild > 0 ? right - 1 : -1;
        if (mine == parent) {
            if (lchild >= 0)
                kids[(*n)++] = (uint32_t)(lchild + delta);
            if (rchild >= 0)
                kids[(*n)++] = (uint32_t)(rchild + delta);
            return prev;
        }
        if (mine > rchild) { /* the upper part: shift it down */
            if (mine == lchild)
                prev = parent + delta;
            size -= right + 1;
            delta += right;
            mine -= right;
            parent = size - 1;
        } else {
            if (mine == rchild)
                prev = parent + delta;
            size = right;
            parent = rchild;
        }
    }
}

/* In-order binary reduce: up Open MPI's in-order tree to rank p-1, which
 * then sends the result to the root, if that is another rank. */
static int reduce_inorder_binary(const ins_coll *c, rb *b)
{
    uint32_t kids[2], n, top = c->size - 1;
    int64_t parent = inorder_bintree(c->me, c->size, kids, &n);
    if (n && rnd(b)) {
        for (uint32_t i = 0; i < n; i++)
            R(b->o, kids[i]);
        b->o->reduce_bytes = n * B(c);
    }
    if (parent >= 0 && rnd(b))
        S(b->o, (uint32_t)parent, B(c));
    if (c->root != top && c->me == top && rnd(b))
        S(b->o, c->root, B(c));
    else if (c->root != top && c->me == c->root && rnd(b))
        R(b->o, top);
    return b->hit;
}

static DISPATCHED int reduce(const ins_coll *c, rb *b)
{
    switch (c->alg) {
    case 1: return reduce_linear(c, b);
    case 2:
    case 3: return reduce_tree(c, b, T_CHAIN);
    case 4: return reduce_tree(c, b, T_KARY2);
    case 6: return reduce_inorder_binary(c, b);
    case 7:
        if (c->count < pof2_floor(c->size))
            return reduce_linear(c, b);
        return reduce_tree(c, b, T_INORDER); /* Rabenseifner: as binomial */
    default: return reduce_tree(c, b, T_INORDER);
    }
}

/* ---- composition: one collective after another ---------------------------------------------------- */

static int run_alg(const ins_coll *c, rb *b);

/* Once per memo: cold, out of its callers' frames. */
static __attribute__((noinline, cold)) uint32_t count_rounds(const ins_coll *c, coll_round *scratch)
{
    uint32_t n = 0;
    for (;; n++) {
        rb b = {.want = n, .o = scratch};
        scratch->nsend = scratch->nrecv = 0;
        if (!run_alg(c, &b))
            return n;
    }
}

/* Part idx (0 or 1) of a composition of c: a sub-collective with its own
 * algorithm. */
typedef void part_fn(const ins_coll *c, rb *b, int idx, ins_coll *part);

/* Part 0's rounds, then part 1's.  Only the part round b->want falls in is
 * built (part 0 also to count its rounds, once per memo).  Inlined into each
 * composition, with its part builder. */
static inline __attribute__((always_inline)) int compose(const ins_coll *c, rb *b, part_fn *part)
{
    ins_coll s;
    uint32_t n1;
    if (b->m && b->m->split) {
        n1 = b->m->split - 1;
    } else {
        part(c, b, 0, &s);
        n1 = count_rounds(&s, b->o);
        if (b->m)
            b->m->split = n1 + 1;
    }
    b->o->nsend = b->o->nrecv = 0;
    b->o->reduce_bytes = b->o->copy_bytes = 0;
    int second = b->want >= n1;
    part(c, b, second, &s);
    rb sub = {.want = second ? b->want - n1 : b->want, .o = b->o, .forced = b->forced};
    return b->hit = run_alg(&s, &sub);
}

static __attribute__((noinline, cold)) uint8_t sub_alg_decide(rb *b, int idx, int coll, uint32_t size,
                                                               uint64_t bytes)
{
    uint8_t alg = (uint8_t)coll_alg_resolve(coll, forced_alg(b, coll), size, bytes);
    if (b->m)
        b->m->alg[idx] = alg;
    return alg;
}

/* The algorithm of sub-collective idx (0 or 1) of a composition, decided on
 * bytes: once per rank and collective, not in every round. */
static uint8_t sub_alg(rb *b, int idx, int coll, uint32_t size, uint64_t bytes)
{
    if (b->m && b->m->alg[idx])
        return b->m->alg[idx];
    return sub_alg_decide(b, idx, coll, size, bytes);
}

/* alg > 0: sub_alg's or a fixed one. */
static ins_coll sub_coll(const ins_coll *c, int coll, int alg, uint32_t root, uint64_t count)
{
    ins_coll s = *c;
    s.coll = (uint8_t)coll;
    s.root = root;
    s.count = count;
    s.alg = (uint8_t)alg;
    return s;
}

/* ---- allreduce ---------------------------------------------------------------------------------------- */

static OWN_FRAME int ar_recdbl(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, me = c->me, adj = pof2_floor(p), extra = p - adj;
    uint64_t n = B(c);
    int32_t nr = me < 2 * extra ? (me % 2 ? (int32_t)(me >> 1) : -1) : (int32_t)(me - extra);
    if (me < 2 * extra && rnd(b)) {
        if (me % 2 == 0) {
            S(b->o, me + 1, n);
        } else {
            R(b->o, me - 1);
            b->o->reduce_bytes = n;
        }
    }
    for (uint32_t d = 1; nr >= 0 && d < adj; d <<= 1) {
        uint32_t nrem = (uint32_t)nr ^ d, remote = nrem < extra ? nrem * 2 + 1 : nrem + extra;
        if (rnd(b)) {
            S(b->o, remote, n);
            R(b->o, remote);
            b->o->reduce_bytes = n;
        }
    }
    if (me < 2 * extra && rnd(b)) {
        if (me % 2 == 0)
            R(b->o, me + 1);
        else
            S(b->o, me - 1, n);
    }
    return b->hit;
}

/* Reduce-scatter then allgather around the ring: 2(p-1) rounds of one block. */
static int ar_ring(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, me = c->me, k = b->want;
    if (c->count < p)
        return ar_recdbl(c, b);
    if (k >= 2 * (p - 1))
        return 0;
    uint32_t sblk = k < p - 1 ? (me + p - k) % p : (me + 1 + p - (k - (p - 1))) % p;
    S(b->o, (me + 1) % p, blk(c->count, p, sblk) * c->esize);
    R(b->o, (me + p - 1) % p);
    if (k < p - 1)
        b->o->reduce_bytes = blk(c->count, p, (me + 2 * p - k - 1) % p) * c->esize;
    return b->hit = 1;
}

/* Rabenseifner's first half, as Open MPI's allreduce and libnbc's reduce
 * run it: the first 2r ranks fold pairwise (the odd ones then drop out:
 * -1), then recursive halving over p' = 2^floor(log p) ranks, log2 p'
 * steps; sc and rc get each step's elements sent and kept.  Returns the
 * rank among the p' (-1: dropped out). */
static int32_t rab_reduce_scatter(const ins_coll *c, rb *b, uint64_t sc[32], uint64_t rc[32])
{
    uint32_t p = c->size, me = c->me, pof2 = pof2_floor(p), rem = p - pof2, es = c->esize;
    uint64_t count = c->count, lh = count / 2, rh = count - lh, w = count;
    int32_t v = (int32_t)(me - rem);
    if (me < 2 * rem) {
        int odd = me % 2;
        uint32_t nb = odd ? me - 1 : me + 1;
        if (rnd(b)) {
            S(b->o, nb, (odd ? lh : rh) * es);
            R(b->o, nb);
            b->o->reduce_bytes = (odd ? rh : lh) * es;
        }
        if (rnd(b)) {
            if (odd)
                S(b->o, nb, rh * es);
            else
                R(b->o, nb);
        }
        v = odd ? -1 : (int32_t)(me / 2);
    }
    uint32_t step = 0;
    for (uint32_t mask = 1; v >= 0 && mask < pof2; mask <<= 1, step++) {
        uint32_t vd = (uint32_t)v ^ mask, dest = vd < rem ? vd * 2 : vd + rem;
        rc[step] = me < dest ? w / 2 : w - w / 2;
        sc[step] = w - rc[step];
        if (rnd(b)) {
            S(b->o, dest, sc[step] * es);
            R(b->o, dest);
            b->o->reduce_bytes = rc[step] * es;
        }
        w = rc[step];
    }
    return v;
}

/* Rabenseifner: recursive-halving reduce-scatter, recursive-doubling allgather
 * (Open MPI's redscat_allgather, including its handling of p != 2^k). */
static OWN_FRAME int ar_rabenseifner(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, me = c->me, pof2 = pof2_floor(p), rem = p - pof2, es = c->esize;
    uint32_t step = (uint32_t)__builtin_ctz(pof2); /* the halving's steps, undone one by one */
    uint64_t sc[32], rc[32];
    int32_t v = rab_reduce_scatter(c, b, sc, rc);
    for (uint32_t mask = pof2 >> 1; v >= 0 && mask > 0; mask >>= 1) {
        uint32_t vd = (uint32_t)v ^ mask, dest = vd < rem ? vd * 2 : vd + rem;
        step--;
        if (rnd(b)) {
            S(b->o, dest, rc[step] * es);
            R(b->o, dest);
        }
    }
    if (me < 2 * rem && rnd(b)) {
        if (me % 2)
            R(b->o, me - 1);
        else
            S(b->o, me + 1, c->count * es);
    }
    return b->hit;
}

/* Reduce to 0, then broadcast: each with the algorithm its bytes decide
 * (nonoverlapping) or both linear (basic_linear, and Rabenseifner's
 * fallback for fewer elements than ranks). */
static inline __attribute__((always_inline)) void ar_parts(const ins_coll *c, rb *b, int idx,
                                                           ins_coll *part)
{
    int coll = idx ? SIMMPI_BCAST : SIMMPI_REDUCE;
    *part = sub_coll(c, coll, c->alg == 2 ? sub_alg(b, idx, coll, c->size, B(c)) : 1, 0, c->count);
}

static DISPATCHED int allreduce(const ins_coll *c, rb *b)
{
    switch (c->alg) {
    case 1:
    case 2: return compose(c, b, ar_parts);
    case 4:
    case 5: return ar_ring(c, b);
    case 6:
        if (c->count < pof2_floor(c->size))
            return compose(c, b, ar_parts);
        return ar_rabenseifner(c, b);
    default: return ar_recdbl(c, b);
    }
}

/* ---- allgather(v) --------------------------------------------------------------------------------------- */

/* Bytes of blocks [first, first + n) (mod p): v-collectives per rank, else count*esize each. */
static uint64_t blocks(const ins_coll *c, uint32_t first, uint32_t n)
{
    if (!c->v)
        return (uint64_t)n * B(c);
    uint64_t s = 0;
    for (uint32_t i = 0; i < n; i++)
        s += c->v[(first + i) % c->size];
    return s;
}

static int ag_bruck(const ins_coll *c, rb *b)
{
    uint32_t p = c->size;
    for (uint32_t d = 1; d < p; d <<= 1)
        if (rnd(b)) {
            uint32_t n = d <= p / 2 ? d : p - d;
            S(b->o, (c->me + p - d) % p, blocks(c, c->me, n));
            R(b->o, (c->me + d) % p);
        }
    return b->hit;
}

static int ag_recdbl(const ins_coll *c, rb *b)
{
    uint32_t p = c->size;
    if (!is_pof2(p))
        return ag_bruck(c, b);
    for (uint32_t d = 1; d < p; d <<= 1)
        if (rnd(b)) {
            S(b->o, c->me ^ d, blocks(c, c->me & ~(d - 1), d));
            R(b->o, c->me ^ d);
        }
    return b->hit;
}

static int ag_ring(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, me = c->me, k = b->want;
    if (k + 1 >= p)
        return 0;
    S(b->o, (me + 1) % p, blocks(c, (me + p - k) % p, 1));
    R(b->o, (me + p - 1) % p);
    return b->hit = 1;
}

/* Neighbour exchange (Chen et al.): p/2 rounds with alternating neighbours. */
static int ag_neighbor(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, me = c->me, k = b->want;
    if (p % 2)
        return ag_ring(c, b);
    if (k >= p / 2)
        return 0;
    int even = me % 2 == 0;
    uint32_t nb[2] = {even ? (me + 1) % p : (me + p - 1) % p, even ? (me + p - 1) % p : (me + 1) % p};
    if (k == 0) {
        S(b->o, nb[0], blocks(c, me, 1));
        R(b->o, nb[0]);
        return b->hit = 1;
    }
    /* where the two blocks sent in round k start (Open MPI's send_data_from) */
    int off[2] = {even ? 2 : -2, even ? -2 : 2};
    /* Open MPI moves from[i % 2] by off[i % 2] in rounds i = 1 .. k-1 and
     * sends from the last one moved: that start moved by its round count. */
    int64_t send = even ? me : nb[0];
    if (k > 1) {
        int par = (int)((k - 1) % 2);
        int64_t moves = par ? k / 2 : (k - 1) / 2;
        send = ((send + moves * off[par]) % (int64_t)p + p) % p;
    }
    S(b->o, nb[k % 2], blocks(c, (uint32_t)send, 2));
    R(b->o, nb[k % 2]);
    return b->hit = 1;
}

/* Allgather(v) linear: gather to 0, then broadcast everything. */
static void ag_parts(const ins_coll *c, rb *b, int idx, ins_coll *part)
{
    int v = c->coll == SIMMPI_ALLGATHERV;
    if (idx == 0) {
        *part = sub_coll(c, v ? SIMMPI_GATHERV : SIMMPI_GATHER,
                         v ? 1 : sub_alg(b, 0, SIMMPI_GATHER, c->size, B(c)), 0, c->count);
        if (v && c->v) { /* without per-rank sizes every rank gives count elements */
            part->count = c->v[c->me];
            part->esize = 1;
        }
        return;
    }
    uint64_t total = blocks(c, 0, c->size);
    *part = sub_coll(c, SIMMPI_BCAST, sub_alg(b, 1, SIMMPI_BCAST, c->size, total), 0, total);
    part->esize = 1;
    part->v = NULL;
}

static DISPATCHED int allgather(const ins_coll *c, rb *b)
{
    int v = c->coll == SIMMPI_ALLGATHERV;
    int alg = c->alg;
    if (v) /* allgatherv numbering: 1 default, 2 bruck, 3 ring, 4 neighbor, 5 two_proc */
        alg = alg == 1 ? 1 : alg == 2 ? 2 : alg == 3 ? 4 : alg == 4 ? 5 : 6;
    switch (alg) {
    case 1: return compose(c, b, ag_parts);
    case 2: return ag_bruck(c, b);
    case 3: return ag_recdbl(c, b);
    case 5: return ag_neighbor(c, b);
    case 6:
        if (c->size == 2)
            return exchange2(c, b, blocks(c, c->me, 1));
        return ag_ring(c, b);
    default: return ag_ring(c, b);
    }
}

/* ---- all-to-all ------------------------------------------------------------------------------------------- */

static uint64_t to_peer(const ins_coll *c, uint32_t i) { return c->v ? c->v[i] : B(c); }

/* Linear all-to-all: every receive, then every send, in one round.  Open
 * MPI's Alltoall receives from me+1 upward and sends from me-1 downward;
 * its Alltoallv does both in rank order. */
static int a2a_linear(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, me = c->me;
    if (p < 2 || !rnd(b))
        return b->hit;
    b->o->copy_bytes = to_peer(c, me); /* its own block, copied first */
    if (c->coll == SIMMPI_ALLTOALLV) {
        for (uint32_t i = 0; i < p; i++)
            if (i != me)
                R(b->o, i);
        for (uint32_t i = 0; i < p; i++)
            if (i != me)
                S(b->o, i, to_peer(c, i));
        return b->hit;
    }
    for (uint32_t i = (me + 1) % p; i != me; i = (i + 1) % p)
        R(b->o, i);
    for (uint32_t i = (me + p - 1) % p; i != me; i = (i + p - 1) % p)
        S(b->o, i, to_peer(c, i));
    return b->hit;
}

/* Pairwise exchange: the step k swaps with me+k / me-k.  Open MPI's step
 * with itself (Alltoall's last, Alltoallv's first) is a local copy, not a
 * message (ompi_coll_base_sendrecv): a round of copy_bytes alone. */
static int a2a_pairwise(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, me = c->me, k = b->want;
    if (k >= p)
        return 0;
    uint32_t step = c->coll == SIMMPI_ALLTOALLV ? k : (k + 1) % p; /* alltoallv starts with itself */
    if (step == 0) { /* the step with itself: a copy of its own block */
        b->o->copy_bytes = to_peer(c, me);
        return b->hit = 1;
    }
    uint32_t to = (me + step) % p, from = (me + p - step) % p;
    S(b->o, to, to_peer(c, to));
    R(b->o, from);
    return b->hit = 1;
}

/* How many of 0 .. p-1 have bit k set: the blocks Bruck's round k moves,
 * counted without a loop over p (or a division) in every round. */
static uint32_t with_bit(uint32_t p, uint32_t k)
{
    uint64_t d = 1ull << k, rest = p & (2 * d - 1);
    return (uint32_t)(((uint64_t)p >> (k + 1) << k) + (rest > d ? rest - d : 0));
}

/* Round k swaps with me + 2^k and me - 2^k; the round is b->want itself. */
static int a2a_bruck(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, k = b->want;
    if (k >= 31 || (1u << k) >= p)
        return 0;
    uint32_t d = 1u << k, to = c->me + d, from = c->me + p - d;
    S(b->o, to >= p ? to - p : to, (uint64_t)with_bit(p, k) * B(c));
    R(b->o, from >= p ? from - p : from);
    return b->hit = 1;
}

static DISPATCHED int alltoall(const ins_coll *c, rb *b)
{
    if (c->coll == SIMMPI_ALLTOALLV)
        return c->alg == 2 ? a2a_pairwise(c, b) : a2a_linear(c, b);
    switch (c->alg) {
    case 2: return a2a_pairwise(c, b);
    case 3: return a2a_bruck(c, b);
    case 5:
        if (c->size != 2)
            return a2a_linear(c, b);
        if (exchange2(c, b, B(c))) /* and a copy of its own block */
            b->o->copy_bytes = B(c);
        return b->hit;
    default: return a2a_linear(c, b); /* 1 linear, 4 linear_sync (unlimited requests) */
    }
}

/* ---- gather and scatter ---------------------------------------------------------------------------------------- */

/* Linear gather (coll/base basic_linear) and Gatherv (coll/basic): the root
 * takes each rank's block in turn, in rank order, a blocking receive each.
 * A Gatherv posts nothing of 0 bytes: a rank with nothing does not send,
 * and its turn at the root is an empty round, which takes no time (rounds
 * stay O(1) to find without a scan of the sizes). */
static int gather_linear(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, i;
    int v = c->coll == SIMMPI_GATHERV;
    if (c->me != c->root) {
        if ((!v || B(c)) && rnd(b))
            S(b->o, c->root, B(c));
        return b->hit;
    }
    if (rnd_of(b, p - 1, &i)) {
        uint32_t peer = i < c->root ? i : i + 1;
        if (!v || !c->v || c->v[peer])
            R(b->o, peer);
    }
    return b->hit;
}

/* linear_sync, unsegmented (the fixed rules give no segment size, so the
 * whole block is the first segment and the second has 0 bytes): a rank
 * waits for a zero-byte go-ahead, sends its block, then the empty second
 * segment; the root, in rank order, posts the block's receive and sends the
 * go-ahead, waits for the block, and takes every second segment at the end. */
static int gather_linear_sync(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, i;
    if (c->me != c->root) {
        if (rnd(b))
            R(b->o, c->root);
        if (rnd(b))
            S(b->o, c->root, B(c));
        if (rnd(b))
            S(b->o, c->root, 0);
        return b->hit;
    }
    if (rnd_of(b, p - 1, &i)) {
        uint32_t peer = i < c->root ? i : i + 1;
        R(b->o, peer);
        S(b->o, peer, 0);
    }
    if (p > 1 && rnd(b))
        for (i = 0; i < p; i++)
            if (i != c->root)
                R(b->o, i);
    return b->hit;
}

/* Binomial gather: a blocking receive from each child in turn (nearest
 * first), then the subtree's blocks to the parent. */
static int gather_binomial(const ins_coll *c, rb *b)
{
    uint32_t v = vrank(c), i;
    if (topo_has_children(T_INORDER, v, c->size)) {
        uint32_t kids[96], n = topo_children(T_INORDER, v, c->size, kids);
        if (rnd_of(b, n, &i))
            R(b->o, real(c, kids[i]));
    }
    if (v && rnd(b))
        S(b->o, real(c, (uint32_t)topo_parent(T_INORDER, v, c->size)), subtree(v, c->size) * B(c));
    return b->hit;
}

/* Linear scatter (basic_linear) and Scatterv (coll/basic): the root sends
 * to each rank in turn, in rank order, a blocking send each; linear_nb
 * sends to all at once.  A Scatterv posts nothing of 0 bytes (an empty
 * round at the root, as in gather_linear). */
static int scatter_linear(const ins_coll *c, rb *b, int one_round)
{
    uint32_t p = c->size;
    int v = c->coll == SIMMPI_SCATTERV;
    if (c->me != c->root) {
        if ((!v || B(c)) && rnd(b))
            R(b->o, c->root);
        return b->hit;
    }
    if (one_round) { /* isend to everyone, then wait */
        if (p > 1 && rnd(b))
            for (uint32_t i = 0; i < p; i++)
                if (i != c->root)
                    S(b->o, i, to_peer(c, i));
        return b->hit;
    }
    uint32_t i;
    if (rnd_of(b, p - 1, &i)) {
        uint32_t peer = i < c->root ? i : i + 1;
        uint64_t n = to_peer(c, peer);
        if (!v || n)
            S(b->o, peer, n);
    }
    return b->hit;
}

/* Binomial scatter: the subtree's blocks from the parent, then a blocking
 * send to each child in turn, the farthest (largest subtree) first. */
static int scatter_binomial(const ins_coll *c, rb *b)
{
    uint32_t v = vrank(c), i;
    if (v && rnd(b))
        R(b->o, real(c, (uint32_t)topo_parent(T_INORDER, v, c->size)));
    if (topo_has_children(T_INORDER, v, c->size)) {
        uint32_t kids[96], n = topo_children(T_INORDER, v, c->size, kids);
        if (rnd_of(b, n, &i)) {
            uint32_t kid = kids[n - 1 - i];
            S(b->o, real(c, kid), subtree(kid, c->size) * B(c));
        }
    }
    return b->hit;
}

static DISPATCHED int gather_scatter(const ins_coll *c, rb *b)
{
    switch (c->coll) {
    case SIMMPI_GATHER:
        if (c->alg == 2)
            return gather_binomial(c, b);
        return c->alg == 3 ? gather_linear_sync(c, b) : gather_linear(c, b);
    case SIMMPI_GATHERV: return gather_linear(c, b);
    case SIMMPI_SCATTER:
        if (c->alg == 2)
            return scatter_binomial(c, b);
        return scatter_linear(c, b, c->alg == 3);
    default: return scatter_linear(c, b, 0); /* scatterv: one rank after the other */
    }
}

/* ---- reduce-scatter --------------------------------------------------------------------------------------------- */

/* Ring reduce-scatter: after p-1 rounds rank i holds block i. */
static int rs_ring(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, me = c->me, k = b->want;
    if (k + 1 >= p)
        return 0;
    uint32_t sb = (me + 2 * p - k - 1) % p, rbk = (me + 2 * p - k - 2) % p;
    S(b->o, (me + 1) % p, blocks(c, sb, 1));
    R(b->o, (me + p - 1) % p);
    b->o->reduce_bytes = blocks(c, rbk, 1);
    return b->hit = 1;
}

/* Blocks of the ranks [a, b) of rs_halving's p' = pof2 new ranks: new rank i
 * owns the blocks of old ranks 2i, 2i+1 (i < rem) or i + rem, so a range of
 * new ranks owns one range of old ranks. */
static uint64_t rs_new_blocks(const ins_coll *c, uint32_t rem, uint32_t a, uint32_t b)
{
    uint32_t oa = a < rem ? 2 * a : a + rem, ob = b < rem ? 2 * b : b + rem;
    return blocks(c, oa, ob - oa);
}

/* Recursive halving (Thakur et al.): the first 2r ranks fold pairwise into
 * p' = 2^floor(log p), halving rounds over block ranges, then the folded-out
 * ranks get their blocks.  Only the wanted round sums its blocks: with
 * per-rank sizes that is a loop over them. */
static int rs_halving(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, me = c->me, pof2 = pof2_floor(p), rem = p - pof2;
    int32_t v = me < 2 * rem ? (me % 2 ? (int32_t)(me / 2) : -1) : (int32_t)(me - rem);
    if (me < 2 * rem && rnd(b)) {
        uint64_t all = blocks(c, 0, p);
        if (me % 2 == 0) {
            S(b->o, me + 1, all);
        } else {
            R(b->o, me - 1);
            b->o->reduce_bytes = all;
        }
    }
    uint32_t lo = 0, hi = pof2;
    for (uint32_t mask = pof2 >> 1; v >= 0 && mask > 0; mask >>= 1) {
        uint32_t vd = (uint32_t)v ^ mask, dest = vd < rem ? vd * 2 + 1 : vd + rem;
        uint32_t mid = lo + mask, low = (uint32_t)v < mid; /* I keep [lo, mid), send [mid, hi) */
        if (rnd(b)) { /* Open MPI posts neither half of 0 bytes */
            uint64_t give = low ? rs_new_blocks(c, rem, mid, hi) : rs_new_blocks(c, rem, lo, mid);
            uint64_t take = low ? rs_new_blocks(c, rem, lo, mid) : rs_new_blocks(c, rem, mid, hi);
            if (give)
                S(b->o, dest, give);
            if (take)
                R(b->o, dest);
            b->o->reduce_bytes = take;
        }
        if (low)
            hi = mid;
        else
            lo = mid;
    }
    uint64_t back = me < 2 * rem ? blocks(c, me - me % 2, 1) : 0; /* the even rank's block */
    if (back && rnd(b)) {
        if (me % 2 == 0)
            R(b->o, me + 1);
        else
            S(b->o, me - 1, back);
    }
    return b->hit;
}

/* Reduce-scatter linear: reduce everything to 0, then scatter(v) the blocks. */
static void rs_parts(const ins_coll *c, rb *b, int idx, ins_coll *part)
{
    int block = c->coll == SIMMPI_REDUCE_SCATTER_BLOCK; /* every block the same size */
    if (idx == 0) {
        ins_coll cv = *c;
        if (block)
            cv.v = NULL;
        uint64_t all = blocks(&cv, 0, c->size);
        *part = sub_coll(c, SIMMPI_REDUCE, sub_alg(b, 0, SIMMPI_REDUCE, c->size, all), 0, all);
        part->esize = 1;
        part->v = NULL;
        return;
    }
    if (block) { /* Reduce_scatter_block scatters through the communicator: tuned's rule */
        *part = sub_coll(c, SIMMPI_SCATTER, sub_alg(b, 1, SIMMPI_SCATTER, c->size, B(c)), 0, c->count);
        part->v = NULL;
        return;
    }
    /* Reduce_scatter: a Scatterv (coll/basic), a receiver's block its own size */
    *part = sub_coll(c, c->v ? SIMMPI_SCATTERV : SIMMPI_SCATTER, 1, 0, c->v ? c->v[c->me] : c->count);
    if (c->v)
        part->esize = 1;
}

static DISPATCHED int reduce_scatter(const ins_coll *c, rb *b)
{
    ins_coll cv = *c;
    if (c->coll == SIMMPI_REDUCE_SCATTER_BLOCK) /* every block the same size */
        cv.v = NULL;
    int ring = c->coll == SIMMPI_REDUCE_SCATTER ? c->alg == 3 : 0;
    int linear = c->alg == 1;
    if (linear)
        return compose(c, b, rs_parts);
    return ring ? rs_ring(&cv, b) : rs_halving(&cv, b);
}

/* ---- scan -------------------------------------------------------------------------------------------------------- */

static DISPATCHED int scan_linear(const ins_coll *c, rb *b)
{
    if (c->me > 0 && rnd(b)) {
        R(b->o, c->me - 1);
        /* Exscan's last rank only receives (its result is the one received) */
        if (c->coll != SIMMPI_EXSCAN || c->me + 1 < c->size)
            b->o->reduce_bytes = B(c);
    }
    if (c->me + 1 < c->size && rnd(b))
        S(b->o, c->me + 1, B(c));
    return b->hit;
}

/* ---- nonblocking, on an intracommunicator: libnbc ---------------------------------------------------------
 *
 * Open MPI 4.1 runs every I-form in coll/libnbc, whose schedules are its
 * own (nbc_i*.c), chosen by its own rules (simmpi_nbc_decide); a round ends
 * at each barrier of libnbc's schedule, a local reduction (NBC_Sched_op)
 * rides on the round before it, and copies cost nothing.  Trees number the
 * ranks with the root and rank 0 swapped (RANK2VRANK), not rotated. */

static uint32_t nbc_swap(uint32_t x, uint32_t root) { return x == root ? 0 : x == 0 ? root : x; }

/* The reduce of libnbc's binomial (allred_sched_diss, red_sched_binomial),
 * over v = nbc_swap(me, root): take v + m, reducing, while v's lower bits
 * are clear, then send up to v - lowbit(v); the send's round also takes
 * the broadcast's receive from v - hibit(v) for Iallreduce (with_recv).
 * Every message carries the whole vector, bytes. */
static void nbc_reduce_up(const ins_coll *c, rb *b, uint32_t root, int with_recv, uint64_t bytes)
{
    uint32_t p = c->size, v = nbc_swap(c->me, root);
    for (uint32_t m = 1; m < p; m <<= 1) {
        if (v % (2 * m) == 0) {
            if (v + m < p && rnd(b)) {
                R(b->o, nbc_swap(v + m, root));
                b->o->reduce_bytes = bytes;
            }
            continue;
        }
        if (rnd(b)) {
            S(b->o, nbc_swap(v - m, root), bytes);
            if (with_recv)
                R(b->o, nbc_swap(v - hibit(v), root));
        }
        return;
    }
}

/* The binomial broadcast's sends: to v + 2^k for 2^k > v, all in one round. */
static void nbc_bcast_down(const ins_coll *c, rb *b, uint32_t root)
{
    uint32_t p = c->size, v = nbc_swap(c->me, root), first = v ? hibit(v) * 2 : 1;
    if (v + first < p && rnd(b))
        for (uint32_t m = first; v + m < p; m <<= 1)
            S(b->o, nbc_swap(v + m, root), B(c));
}

static int nbc_bcast(const ins_coll *c, rb *b)
{
    if (c->alg == SIMMPI_ALG_NBC_LINEAR)
        return bcast_linear(c, b, B(c));
    uint32_t v = nbc_swap(c->me, c->root);
    if (v && rnd(b))
        R(b->o, nbc_swap(v - hibit(v), c->root));
    nbc_bcast_down(c, b, c->root);
    return b->hit;
}

/* libnbc's ring allreduce: segment i holds count/p elements, one more for
 * i < count % p; p-1 rounds pass on segment r+1-k and take r-k (reducing),
 * then p-1 more pass the reduced ones round. */
static int nbc_allreduce_ring(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, me = c->me, k;
    if (!rnd_of(b, 2 * (p - 1), &k))
        return b->hit;
    uint32_t give = (uint32_t)((me + 1 + 2ull * p - k) % p), take = (uint32_t)((me + 2ull * p - k) % p);
    S(b->o, (me + 1) % p, blk(c->count, p, give) * c->esize);
    R(b->o, (me + p - 1) % p);
    if (k < p - 1)
        b->o->reduce_bytes = blk(c->count, p, take) * c->esize;
    return b->hit;
}

/* libnbc's chain reduce: fragments of 8 KiB (count split as ceil(B / 8192)
 * pieces of count / n elements, the rest in the last), each taken from
 * v + 1 and reduced, then passed to v - 1. */
static int nbc_reduce_chain(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, v = nbc_swap(c->me, c->root), per = (v != p - 1) + (v != 0), i;
    uint64_t n = (B(c) + 8191) / 8192, fc = n ? c->count / n : 0;
    if (!n || !per || n > UINT32_MAX / per || !rnd_of(b, (uint32_t)n * per, &i))
        return b->hit;
    uint64_t f = i / per, t = f + 1 < n ? fc : c->count - fc * (n - 1);
    if (v != p - 1 && i % per == 0) {
        R(b->o, nbc_swap(v + 1, c->root));
        b->o->reduce_bytes = t * c->esize;
    } else {
        S(b->o, nbc_swap(v - 1, c->root), t * c->esize);
    }
    return b->hit;
}

/* Rabenseifner's reduce-scatter (red_sched_redscat_gather's first part, as
 * ar_rabenseifner's), then a binomial gather of the halves to the root. */
static int nbc_reduce_redscat(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, me = c->me, root = c->root, rem = p - pof2_floor(p), es = c->esize;
    uint32_t n = (uint32_t)__builtin_ctz(pof2_floor(p)); /* the halving's steps */
    uint64_t sc[32], rc[32];
    int32_t v = rab_reduce_scatter(c, b, sc, rc);
    /* the gather's virtual root; an odd root of the fold takes rank 0's part first */
    int odd_root = root < 2 * rem && root % 2;
    uint32_t vroot = odd_root ? 0 : root < 2 * rem ? root / 2 : root - rem;
    if (odd_root && me == root) { /* the gather's root: it only receives */
        if (rnd(b))
            R(b->o, 0);
        v = 0;
    } else if (odd_root && v == 0) {
        if (rnd(b))
            S(b->o, root, rc[n - 1] * es);
        v = -1;
    }
    for (uint32_t k = n; v >= 0 && k-- > 0;) {
        uint32_t vd = (uint32_t)v ^ (1u << k), dest = vd < rem ? vd * 2 : vd + rem;
        if (vd == 0 && odd_root)
            dest = root;
        if (((uint32_t)v >> k) != (vroot >> k)) {
            if (rnd(b))
                S(b->o, dest, rc[k] * es);
            break;
        }
        if (rnd(b))
            R(b->o, dest);
    }
    return b->hit;
}

/* Ireduce_scatter(_block): a binomial reduce of the whole vector to rank 0
 * (no swap), then rank 0 sends every rank its block in one round. */
static int nbc_intra_reduce_scatter(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, me = c->me;
    nbc_reduce_up(c, b, 0, 0, blocks(c, 0, p));
    if (me == 0) {
        if (rnd(b))
            for (uint32_t q = 1; q < p; q++)
                S(b->o, q, blocks(c, q, 1));
    } else if (rnd(b)) {
        R(b->o, 0);
    }
    return b->hit;
}

/* The linear ones, one round each, 0 bytes posted but by Ialltoallv (whose
 * c->v holds the bytes to each rank, then from each). */
static int nbc_linear(const ins_coll *c, rb *b)
{
    uint32_t p = c->size, me = c->me, root = c->root;
    if (!rnd(b))
        return 0;
    switch (c->coll) {
    case SIMMPI_GATHER:
    case SIMMPI_GATHERV:
        for (uint32_t i = 0; me == root && i < p; i++)
            if (i != root)
                R(b->o, i);
        if (me != root)
            S(b->o, root, B(c));
        break;
    case SIMMPI_SCATTER:
    case SIMMPI_SCATTERV:
        for (uint32_t i = 0; me == root && i < p; i++)
            if (i != root)
                S(b->o, i, to_peer(c, i));
        if (me != root)
            R(b->o, root);
        break;
    case SIMMPI_ALLGATHERV: /* nearest first: from me - k, to me + k */
        for (uint32_t k = 1; k < p; k++) {
            R(b->o, (me + p - k) % p);
            S(b->o, (me + k) % p, c->v ? c->v[me] : B(c));
        }
        break;
    case SIMMPI_ALLTOALLV:
        b->o->copy_bytes = c->v ? c->v[me] : B(c); /* its own block */
        for (uint32_t q = 0; q < p; q++)
            if (q != me && (!c->v || c->v[q]))
                S(b->o, q, c->v ? c->v[q] : B(c));
        for (uint32_t q = 0; q < p; q++)
            if (q != me && (!c->v || c->v[p + q]))
                R(b->o, q);
        break;
    default: /* Iallgather, Ialltoall: a block to and from every other rank */
        if (c->coll == SIMMPI_ALLTOALL)
            b->o->copy_bytes = B(c); /* its own block (Iallgather's is copied before the schedule) */
        for (uint32_t q = 0; q < p; q++)
            if (q != me) {
                R(b->o, q);
                S(b->o, q, B(c));
            }
    }
    return 1;
}

static DISPATCHED int intra_nbc(const ins_coll *c, rb *b)
{
    switch (c->coll) {
    case SIMMPI_BARRIER: return bar_bruck(c, b); /* dissemination */
    case SIMMPI_BCAST: return nbc_bcast(c, b);
    case SIMMPI_ALLREDUCE:
        if (c->alg == SIMMPI_ALG_NBC_REDSCAT)
            return ar_rabenseifner(c, b); /* allred_sched_redscat_allgather: the same rounds */
        if (c->alg == SIMMPI_ALG_NBC_RING)
            return nbc_allreduce_ring(c, b);
        nbc_reduce_up(c, b, 0, 1, B(c));
        nbc_bcast_down(c, b, 0);
        return b->hit;
    case SIMMPI_REDUCE:
        if (c->alg == SIMMPI_ALG_NBC_REDSCAT)
            return nbc_reduce_redscat(c, b);
        if (c->alg == SIMMPI_ALG_NBC_CHAIN)
            return nbc_reduce_chain(c, b);
        nbc_reduce_up(c, b, c->root, 0, B(c));
        return b->hit;
    case SIMMPI_REDUCE_SCATTER:
    case SIMMPI_REDUCE_SCATTER_BLOCK: return nbc_intra_reduce_scatter(c, b);
    case SIMMPI_SCAN:
    case SIMMPI_EXSCAN: return scan_linear(c, b); /* the same chain */
    default: return nbc_linear(c, b);
    }
}

/* ---- intercommunicator collectives ------------------------------------------------------------------------
 *
 * Open MPI 4.1 runs them in coll/inter: a collective on the group's own
 * local communicator, with the algorithm its rule picks for the local
 * group's size, to or from the group's rank 0, and messages between the two
 * groups' rank 0s (or from the root to the remote rank 0).  Barrier,
 * Alltoall(v), Reduce_scatter and Reduce_scatter_block come from coll/basic.
 * Peers in the remote group carry COLL_REMOTE.  Inter collectives are rare:
 * their rounds are walked afresh each time (no memo, no kept schedule). */

/* The local collective coll of count elements, rooted at local rank 0, as
 * the next rounds of c's schedule; a Scatterv scatters c's per-rank sizes. */
static int inter_local(const ins_coll *c, rb *b, int coll, uint64_t count)
{
    if (b->want < b->cur || c->size < 2) /* past the wanted round: do not clobber it */
        return b->hit;
    int v = (coll == SIMMPI_SCATTERV || coll == SIMMPI_GATHERV) && c->me == 0; /* the local root's sizes */
    ins_coll s = {.coll = (uint8_t)coll, .size = c->size, .me = c->me, .root = 0, .count = count,
                  .esize = c->esize, .v = v ? c->v : NULL};
    s.alg = (uint8_t)coll_alg_resolve(coll, forced_alg(b, coll), s.size, count * s.esize);
    uint32_t n = count_rounds(&s, b->o), first = b->cur;
    b->cur += n;
    if (b->want >= b->cur)
        return 0;
    b->o->nsend = b->o->nrecv = 0;
    b->o->reduce_bytes = b->o->copy_bytes = 0;
    rb sub = {.want = b->want - first, .o = b->o, .forced = b->forced};
    return b->hit = run_alg(&s, &sub);
}

/* One round with remote rank peer: a receive from it, a send of bytes to it, or both. */
static int inter_round(rb *b, uint32_t peer, int recv, uint64_t send_bytes, int send)
{
    if (!rnd(b))
        return 0;
    b->o->nsend = b->o->nrecv = 0; /* the local parts' counting used the scratch round */
    b->o->reduce_bytes = b->o->copy_bytes = 0;
    if (recv)
        R(b->o, COLL_REMOTE | peer);
    if (send)
        S(b->o, COLL_REMOTE | peer, send_bytes);
    return 1;
}

/* Bcast and Scatter: the root sends bytes to remote rank 0, which runs
 * the local collective in its group. */
static int inter_from_root(const ins_coll *c, rb *b, int local, uint64_t bytes)
{
    if (c->root == COLL_ROOT_HERE)
        return inter_round(b, 0, 0, bytes, 1);
    if (c->root == COLL_ROOT_NONE)
        return 0;
    if (c->me == 0)
        inter_round(b, c->root, 1, 0, 0);
    return inter_local(c, b, local, c->count);
}

/* Reduce and Gather: the local collective in the group opposite the root,
 * to its rank 0, which sends bytes to the root. */
static int inter_to_root(const ins_coll *c, rb *b, int local, uint64_t bytes)
{
    if (c->root == COLL_ROOT_HERE)
        return inter_round(b, 0, 1, 0, 0);
    if (c->root == COLL_ROOT_NONE)
        return 0;
    inter_local(c, b, local, c->count);
    if (c->me == 0)
        inter_round(b, c->root, 0, bytes, 1);
    return b->hit;
}

/* Allgather (coll/inter): a gather of the send blocks to rank 0, the two
 * rank 0s swap their groups' blocks, and rank 0 broadcasts the other
 * group's (c->v[0]: the receive block's bytes) in its group; Open MPI skips
 * the local gather of empty blocks, and the broadcast of nothing. */
static int inter_allgather(const ins_coll *c, rb *b)
{
    uint64_t rblock = c->v ? c->v[0] : B(c), all = rblock * c->rsize;
    if (B(c))
        inter_local(c, b, SIMMPI_GATHER, c->count);
    if (c->me == 0)
        inter_round(b, 0, 1, B(c) * c->size, 1);
    if (!all)
        return b->hit;
    ins_coll bytes = *c; /* the broadcast counts bytes */
    bytes.esize = 1;
    return inter_local(&bytes, b, SIMMPI_BCAST, all);
}

/* Reduce_scatter_block and Reduce_scatter (coll/basic): every rank sends
 * its whole buffer (its group's blocks, or the sum of its group's receive
 * sizes, c->v) to remote rank 0.  Each rank 0 swaps buffers with remote
 * rank 0 first, then takes the other remote ranks' one by one, reducing
 * each into the sum, and scatters(v) the sum's blocks in its group. */
static int inter_reduce_scatter(const ins_coll *c, rb *b)
{
    uint64_t all = blocks(c, 0, c->size);
    inter_round(b, 0, c->me == 0, all, 1);
    uint32_t i;
    if (c->me == 0 && c->rsize > 1 && rnd_of(b, c->rsize - 1, &i)) {
        b->o->nsend = b->o->nrecv = 0;
        R(b->o, COLL_REMOTE | (i + 1));
        b->o->reduce_bytes = all;
    }
    if (c->v) {
        ins_coll bytes = *c;
        bytes.esize = 1;
        return inter_local(&bytes, b, SIMMPI_SCATTERV, c->v[c->me]);
    }
    return inter_local(c, b, SIMMPI_SCATTER, c->count);
}

/* Alltoall and Alltoallv (coll/basic): a block to and from every rank of the
 * other group, all in one round (coll_round_get made room for rsize of
 * each).  Alltoallv's c->v holds the bytes sent to each remote rank, then
 * those received from each; Open MPI posts neither of 0 bytes. */
static int inter_alltoall(const ins_coll *c, rb *b)
{
    if (!rnd(b))
        return 0;
    const uint64_t *to = c->v, *from = c->v ? c->v + c->rsize : NULL;
    for (uint32_t i = 0; i < c->rsize; i++)
        if (!from || from[i])
            R(b->o, COLL_REMOTE | i);
    for (uint32_t i = 0; i < c->rsize; i++)
        if (!to || to[i])
            S(b->o, COLL_REMOTE | i, to ? to[i] : B(c));
    return 1;
}

/* Gatherv, Scatterv and Allgatherv (coll/inter) move a whole group's data
 * through its rank 0.  c->v: the bytes of each rank of the local group
 * (size), then of the remote group (rsize), each where needed; c->count
 * (esize 1) this rank's own.  vsum (internal.h): a group's total. */

/* The group's counts (an int each) gathered to rank 0, then their data
 * (a Gatherv, esize 1). */
static void inter_gather_counts_data(const ins_coll *c, rb *b)
{
    ins_coll ints = *c;
    ints.esize = 4;
    inter_local(&ints, b, SIMMPI_GATHER, 1);
    inter_local(c, b, SIMMPI_GATHERV, c->count);
}

/* Gatherv: the root takes the group's data from remote rank 0 in one message. */
static int inter_gatherv(const ins_coll *c, rb *b)
{
    if (c->root == COLL_ROOT_HERE)
        return inter_round(b, 0, 1, 0, 0);
    if (c->root == COLL_ROOT_NONE)
        return 0;
    inter_gather_counts_data(c, b);
    if (c->me == 0)
        inter_round(b, c->root, 0, vsum(c->v, c->size), 1);
    return b->hit;
}

/* Scatterv: the root sends remote rank 0 the counts (an int a rank), then
 * the data, which rank 0 scatters (a Scatterv) in its group. */
static int inter_scatterv(const ins_coll *c, rb *b)
{
    if (c->root == COLL_ROOT_HERE) {
        inter_round(b, 0, 0, 4 * (uint64_t)c->rsize, 1);
        inter_round(b, 0, 0, vsum(c->v + c->size, c->rsize), 1);
        return b->hit;
    }
    if (c->root == COLL_ROOT_NONE)
        return 0;
    if (c->me == 0) {
        inter_round(b, c->root, 1, 0, 0);
        inter_round(b, c->root, 1, 0, 0);
    }
    return inter_local(c, b, SIMMPI_SCATTERV, c->count);
}

/* Allgatherv: each group's data to its rank 0, the two rank 0s swap them,
 * and each broadcasts the other group's (bytes) in its group. */
static int inter_allgatherv(const ins_coll *c, rb *b)
{
    inter_gather_counts_data(c, b);
    if (c->me == 0)
        inter_round(b, 0, 1, vsum(c->v, c->size), 1);
    /* one element of an indexed type (coll_inter_allgatherv.c): tuned decides
     * on the bytes, and its scatter_allgather falls back to a linear bcast */
    uint64_t all = vsum(c->v + c->size, c->rsize);
    int indexed = all && all <= UINT32_MAX; /* else as bytes */
    ins_coll one = *c;
    one.esize = indexed ? (uint32_t)all : 1;
    return inter_local(&one, b, SIMMPI_BCAST, indexed ? 1 : all);
}

/* ---- nonblocking, on an intercommunicator: libnbc ------------------------------------------------------
 *
 * Open MPI 4.1 runs the I-forms there in coll/libnbc, whose schedules talk
 * to the remote ranks directly, rather than through a collective of each
 * group; a round ends where libnbc's schedule has a barrier.  The rooted
 * ones are linear; Ireduce's root, and Iallreduce's and
 * Ireduce_scatter's rank 0s, take the remote ranks one a round, reducing
 * each into what they hold. */

static void sends_remote(coll_round *o, uint32_t first, uint32_t n, uint64_t bytes)
{
    for (uint32_t i = first; i < n; i++)
        S(o, COLL_REMOTE | i, bytes);
}

static void recvs_remote(coll_round *o, uint32_t first, uint32_t n)
{
    for (uint32_t i = first; i < n; i++)
        R(o, COLL_REMOTE | i);
}

/* Remote ranks first.. one a round, each reduced (bytes) into the sum. */
static void take_reducing(const ins_coll *c, rb *b, uint32_t first, uint64_t bytes)
{
    uint32_t i;
    if (c->rsize > first && rnd_of(b, c->rsize - first, &i)) {
        R(b->o, COLL_REMOTE | (first + i));
        b->o->reduce_bytes = bytes;
    }
}

/* Ibarrier: each rank 0 takes the other group's other ranks, swaps with
 * remote rank 0, then lets them go; the other ranks swap with remote rank 0. */
static int nbc_barrier(const ins_coll *c, rb *b)
{
    if (rnd(b)) {
        recvs_remote(b->o, c->me == 0 ? 1 : 0, c->me == 0 ? c->rsize : 0);
        R(b->o, COLL_REMOTE);
        S(b->o, COLL_REMOTE, 0);
    }
    if (c->me == 0 && c->rsize > 1 && rnd(b))
        sends_remote(b->o, 1, c->rsize, 0);
    return b->hit;
}

/* Ibcast, Ireduce, Igather(v), Iscatter(v): the root to or from every
 * remote rank, each to or from the root. */
static int nbc_rooted(const ins_coll *c, rb *b)
{
    int to_root = c->coll == SIMMPI_REDUCE || c->coll == SIMMPI_GATHER || c->coll == SIMMPI_GATHERV;
    if (c->root == COLL_ROOT_NONE || (c->coll == SIMMPI_REDUCE && !B(c))) /* libnbc: nothing to reduce */
        return 0;
    if (c->root != COLL_ROOT_HERE) {
        if (rnd(b)) {
            if (to_root)
                S(b->o, COLL_REMOTE | c->root, B(c));
            else
                R(b->o, COLL_REMOTE | c->root);
        }
        return b->hit;
    }
    if (c->coll == SIMMPI_REDUCE) { /* remote ranks 0 and 1, then one a round */
        if (rnd(b)) {
            recvs_remote(b->o, 0, c->rsize < 2 ? c->rsize : 2);
            b->o->reduce_bytes = c->rsize > 1 ? B(c) : 0;
        }
        take_reducing(c, b, 2, B(c));
        return b->hit;
    }
    if (!rnd(b))
        return 0;
    if (to_root)
        recvs_remote(b->o, 0, c->rsize);
    else
        for (uint32_t i = 0; i < c->rsize; i++)
            S(b->o, COLL_REMOTE | i, c->coll == SIMMPI_SCATTERV ? c->v[c->size + i] : B(c));
    return 1;
}

/* Iallreduce: every rank sends remote rank 0 its data, and gets the result
 * from it; each rank 0 takes the other group's data, swaps the sum with
 * remote rank 0 for its own group's, and passes that on to the other ranks
 * of the other group. */
static int nbc_allreduce(const ins_coll *c, rb *b)
{
    if (!B(c))
        return 0;
    if (rnd(b)) {
        S(b->o, COLL_REMOTE, B(c));
        R(b->o, COLL_REMOTE);
    }
    if (c->me != 0)
        return b->hit;
    take_reducing(c, b, 1, B(c));
    if (rnd(b)) {
        R(b->o, COLL_REMOTE);
        S(b->o, COLL_REMOTE, B(c));
    }
    if (c->rsize > 1 && rnd(b))
        sends_remote(b->o, 1, c->rsize, B(c));
    return b->hit;
}

/* Iallgather(v): a block to and from every remote rank in one round;
 * Iallgatherv posts no receive of 0 bytes (c->v: the remote group's after
 * the local group's), and no send when its own block is empty. */
static int nbc_allgather(const ins_coll *c, rb *b)
{
    if (!rnd(b))
        return 0;
    const uint64_t *from = c->coll == SIMMPI_ALLGATHERV ? c->v + c->size : NULL;
    for (uint32_t i = 0; i < c->rsize; i++)
        if (!from || from[i])
            R(b->o, COLL_REMOTE | i);
    if (c->coll != SIMMPI_ALLGATHERV || B(c))
        sends_remote(b->o, 0, c->rsize, B(c));
    return 1;
}

/* Ireduce_scatter(_block): every rank sends remote rank 0 its buffer; each
 * rank 0 takes the other group's, reducing each, and sends its group's
 * other ranks their blocks. */
static int nbc_reduce_scatter(const ins_coll *c, rb *b)
{
    uint64_t all = blocks(c, 0, c->size);
    if (rnd(b)) {
        S(b->o, COLL_REMOTE, all);
        R(b->o, c->me == 0 ? COLL_REMOTE : 0);
    }
    if (c->me != 0)
        return b->hit;
    take_reducing(c, b, 1, all);
    if (c->size > 1 && rnd(b))
        for (uint32_t p = 1; p < c->size; p++)
            S(b->o, p, blocks(c, p, 1));
    return b->hit;
}

static int inter_nbc(const ins_coll *c, rb *b)
{
    switch (c->coll) {
    case SIMMPI_BARRIER: return nbc_barrier(c, b);
    case SIMMPI_ALLREDUCE: return nbc_allreduce(c, b);
    case SIMMPI_ALLGATHER:
    case SIMMPI_ALLGATHERV: return nbc_allgather(c, b);
    case SIMMPI_ALLTOALL:
    case SIMMPI_ALLTOALLV: return inter_alltoall(c, b); /* as coll/basic, with the same zero-byte rule */
    case SIMMPI_REDUCE_SCATTER:
    case SIMMPI_REDUCE_SCATTER_BLOCK: return nbc_reduce_scatter(c, b);
    default: return nbc_rooted(c, b);
    }
}

static int inter(const ins_coll *c, rb *b)
{
    if (c->nb)
        return inter_nbc(c, b);
    uint64_t count = c->coll == SIMMPI_BARRIER ? 1 : c->count;
    ins_coll ar = *c;
    switch (c->coll) {
    case SIMMPI_BCAST: return inter_from_root(c, b, SIMMPI_BCAST, B(c));
    case SIMMPI_SCATTER: return inter_from_root(c, b, SIMMPI_SCATTER, B(c) * c->rsize); /* every block */
    case SIMMPI_REDUCE: return inter_to_root(c, b, SIMMPI_REDUCE, B(c));
    case SIMMPI_GATHER: return inter_to_root(c, b, SIMMPI_GATHER, B(c) * c->size); /* every block */
    case SIMMPI_ALLTOALL:
    case SIMMPI_ALLTOALLV: return inter_alltoall(c, b);
    case SIMMPI_ALLGATHER: return inter_allgather(c, b);
    case SIMMPI_GATHERV: return inter_gatherv(c, b);
    case SIMMPI_SCATTERV: return inter_scatterv(c, b);
    case SIMMPI_ALLGATHERV: return inter_allgatherv(c, b);
    case SIMMPI_REDUCE_SCATTER:
    case SIMMPI_REDUCE_SCATTER_BLOCK: return inter_reduce_scatter(c, b);
    case SIMMPI_BARRIER:
        ar.esize = 4; /* an Allreduce of one int */
        c = &ar;
        __attribute__((fallthrough));
    case SIMMPI_ALLREDUCE: /* reduce to rank 0, the two rank 0s swap, broadcast */
        inter_local(c, b, SIMMPI_REDUCE, count);
        if (c->me == 0)
            inter_round(b, 0, 1, count * c->esize, 1);
        return inter_local(c, b, SIMMPI_BCAST, count);
    default: return 0;
    }
}

/* The bytes of c's message from remote rank peer in round k, as its sender
 * sends them (a rank sees its own group's decomposition only). */
uint64_t coll_inter_recv_bytes(const ins_coll *c, uint32_t peer, uint32_t k)
{
    if (c->nb) /* libnbc: one block, straight from its sender */
        switch (c->coll) {
        case SIMMPI_BARRIER: return 0;
        case SIMMPI_GATHERV:
        case SIMMPI_ALLGATHERV: return c->v[c->size + peer];
        case SIMMPI_ALLGATHER: return c->v ? c->v[0] : B(c);
        case SIMMPI_ALLTOALLV: return c->v[c->rsize + peer];
        case SIMMPI_REDUCE_SCATTER:
        case SIMMPI_REDUCE_SCATTER_BLOCK: return blocks(c, 0, c->size);
        default: return B(c);
        }
    switch (c->coll) {
    case SIMMPI_GATHERV:
    case SIMMPI_ALLGATHERV: return vsum(c->v + c->size, c->rsize); /* the remote group's data */
    case SIMMPI_SCATTERV: return k == 0 ? 4 * (uint64_t)c->size : vsum(c->v, c->size); /* counts, data */
    case SIMMPI_BARRIER: return 4;
    case SIMMPI_GATHER: return B(c) * c->rsize; /* the remote group's blocks, at the root */
    case SIMMPI_SCATTER: return B(c) * c->size; /* this group's blocks, at its rank 0 */
    case SIMMPI_ALLGATHER: return (c->v ? c->v[0] : B(c)) * c->rsize; /* the remote group's blocks */
    case SIMMPI_ALLTOALLV: return c->v[c->rsize + peer];
    case SIMMPI_REDUCE_SCATTER:
    case SIMMPI_REDUCE_SCATTER_BLOCK: return blocks(c, 0, c->size); /* Open MPI posts its own group's count */
    default: return B(c);
    }
}

/* ---- dispatch ------------------------------------------------------------------------------------------------------ */

static int run_alg(const ins_coll *c, rb *b)
{
    if (__builtin_expect(c->rsize != 0, 0))
        return inter(c, b);
    if (c->size < 2)
        return 0;
    if (__builtin_expect(c->nb, 0))
        return intra_nbc(c, b);
    switch (c->coll) {
    case SIMMPI_BARRIER: return barrier(c, b);
    case SIMMPI_BCAST: return bcast(c, b);
    case SIMMPI_REDUCE: return reduce(c, b);
    case SIMMPI_ALLREDUCE: return allreduce(c, b);
    case SIMMPI_ALLGATHER:
    case SIMMPI_ALLGATHERV: return allgather(c, b);
    case SIMMPI_ALLTOALL:
    case SIMMPI_ALLTOALLV: return alltoall(c, b);
    case SIMMPI_GATHER:
    case SIMMPI_GATHERV:
    case SIMMPI_SCATTER:
    case SIMMPI_SCATTERV: return gather_scatter(c, b);
    case SIMMPI_REDUCE_SCATTER:
    case SIMMPI_REDUCE_SCATTER_BLOCK: return reduce_scatter(c, b);
    default: return scan_linear(c, b);
    }
}

int coll_round_get(const ins_coll *c, coll_memo *m, uint32_t k, coll_round *out, const uint8_t *forced)
{
    /* room for a round to or from every rank (of both groups on an intercommunicator) */
    if (c->size + c->rsize + 4 > out->cap && coll_round_reserve(out, c->size + c->rsize + 4) < 0)
        return -1;
    out->nsend = out->nrecv = 0;
    out->reduce_bytes = out->copy_bytes = 0;
    rb b = {.want = k, .o = out, .m = m, .forced = forced};
    int hit = run_alg(c, &b);
    if (!hit)
        out->nsend = out->nrecv = 0;
    return hit;
}
