#!/usr/bin/env python3
"""Collective decompositions, message by message, against a second model.

For every algorithm, communicator sizes 2, 3, 4, 5, 7, 8, 13, 16, several
roots and counts, compares `simmpi/coll-list` (the simulator's schedules)
with the schedules written here from the algorithms' descriptions (Open MPI
4.1 coll/base, Thakur et al., Bruck et al.), and checks properties no
implementation may break: every send has its receive in order, nothing
deadlocks even when every send waits for its receive (rendezvous), and the
bytes each rank must receive arrive.

usage: simmpi-coll-model.py COLL-LIST
"""
import subprocess
import sys

SIZES = [2, 3, 4, 5, 7, 8, 13, 16]


def pof2_floor(n):
    p = 1
    while p * 2 <= n:
        p *= 2
    return p


def lowbit(v):
    return v & -v


def blk(count, p, i):
    return count // p + (1 if i < count % p else 0)


# ---- trees over virtual ranks (root 0): children lists, parents derived -----------

def kids_bmtree(v, p):  # Open MPI's bmtree: parent clears the highest bit
    m = 1 if v == 0 else 1 << v.bit_length()
    out = []
    while v + m < p:
        out.append(v + m)
        m *= 2
    return out


def kids_inorder(v, p):  # textbook binomial tree: parent clears the lowest bit
    span = lowbit(v) if v else 1 << max(p - 1, 1).bit_length()
    return [v + m for m in (1 << i for i in range(32)) if m < span and v + m < p]


def kids_binary(v, p):  # level l holds 2^l nodes; children of v are v + 2^l, v + 2^(l+1)
    level = (v + 1).bit_length() - 1
    d = 1 << level
    return [c for c in (v + d, v + 2 * d) if c < p]


def kids_chain(v, p):
    return [v + 1] if v + 1 < p else []


def kids_knomial4(v, p):
    m = 1
    while m < p and v % (4 * m) == 0:
        m *= 4
    out = []
    m //= 4
    while m >= 1:
        out += [v + r * m for r in (1, 2, 3) if v + r * m < p]
        m //= 4
    return out


def parents(kids, p):
    par = {}
    for v in range(p):
        for c in kids(v, p):
            assert c not in par, "not a tree"
            par[c] = v
    assert sorted(par) == list(range(1, p)), "tree misses ranks"
    return par


def tree_bcast(me, p, root, nbytes, kids):
    v, real = (me - root) % p, lambda x: (x + root) % p
    par, rounds = parents(kids, p), []
    if v:
        rounds.append(([real(par[v])], []))
    if kids(v, p):
        rounds.append(([], [(real(c), nbytes) for c in kids(v, p)]))
    return rounds


def tree_reduce(me, p, root, nbytes, kids):
    v, real = (me - root) % p, lambda x: (x + root) % p
    par, rounds = parents(kids, p), []
    if kids(v, p):
        rounds.append(([real(c) for c in kids(v, p)], []))
    if v:
        rounds.append(([], [(real(par[v]), nbytes)]))
    return rounds


def linear_bcast(me, p, root, nbytes):
    if me != root:
        return [([root], [])]
    return [([], [(i, nbytes) for i in range(p) if i != root])]


def linear_reduce(me, p, root, nbytes):
    """The root receives from p-1, then p-2 .. 0, one a round; its own turn
    (unless it is p-1, whose block starts the result) is an empty round."""
    if me != root:
        return [([], [(root, nbytes)])]
    turns = range(p - 2, -1, -1) if root == p - 1 else range(p - 1, -1, -1)
    return [([] if i == root else [i], []) for i in turns]


# ---- barrier ---------------------------------------------------------------------------

def barrier(alg, me, p):
    if alg == "linear":
        if me == 0:
            return [(list(range(1, p)), []), ([], [(i, 0) for i in range(1, p)])]
        return [([], [(0, 0)]), ([0], [])]
    if alg == "double_ring":
        l, r = (me - 1) % p, (me + 1) % p
        one = [([], [(r, 0)]), ([l], [])] if me == 0 else [([l], []), ([], [(r, 0)])]
        return one + one
    if alg == "bruck":  # dissemination
        out, d = [], 1
        while d < p:
            out.append(([(me - d) % p], [((me + d) % p, 0)]))
            d *= 2
        return out
    if alg == "recursive_doubling":
        a, out = pof2_floor(p), []
        if me >= a:
            out.append(([me - a], [(me - a, 0)]))
        elif me < p - a:
            out.append(([me + a], []))
        if me < a:
            m = 1
            while m < a:
                out.append(([me ^ m], [(me ^ m, 0)]))
                m *= 2
        if me < p - a:
            out.append(([], [(me + a, 0)]))
        return out
    if alg == "tree":
        depth = 1
        while depth < p:
            depth *= 2
        out, j = [], 1
        while j < depth:  # fan in: receive from the higher partner, send to the lower
            q = me ^ j
            if not (q & (j - 1)) and q < p:
                out.append(([q], []) if q > me else ([], [(q, 0)]))
            j *= 2
        j = depth // 2
        while j > 0:  # fan out, mirrored
            q = me ^ j
            if not (q & (j - 1)) and q < p:
                out.append(([], [(q, 0)]) if q > me else ([q], []))
            j //= 2
        return out
    raise KeyError(alg)


# ---- broadcast and reduce ------------------------------------------------------------------

def bcast(alg, me, p, root, count, es):
    n = count * es
    if alg == "basic_linear":
        return linear_bcast(me, p, root, n)
    if alg in ("chain", "pipeline"):
        return tree_bcast(me, p, root, n, kids_chain)
    if alg == "binary_tree":
        return tree_bcast(me, p, root, n, kids_binary)
    if alg == "binomial":
        return tree_bcast(me, p, root, n, kids_bmtree)
    if alg == "knomial":
        return tree_bcast(me, p, root, n, kids_knomial4)
    if alg in ("scatter_allgather", "scatter_allgather_ring"):
        if count < p:
            return linear_bcast(me, p, root, n)
        return scatter_allgather(me, p, root, count, es, alg.endswith("ring"))
    raise KeyError(alg)


def scatter_allgather(me, p, root, count, es, ring):
    """Binomial scatter of ceil(count/p)-element blocks, then allgather."""
    sc, v = -(-count // p), (me - root) % p
    real = lambda x: (x + root) % p

    def elems(first, nblocks):  # elements of blocks [first, first + nblocks)
        lo, hi = first * sc, min((first + nblocks) * sc, count)
        return max(hi - lo, 0)

    span = lowbit(v) if v else 1 << max(p - 1, 1).bit_length()
    rounds = []
    if v and elems(v, span):
        rounds.append(([real(v - lowbit(v))], []))
    for m in sorted((m for m in kids_inorder(v, p)), reverse=True):
        c = m  # child virtual rank
        csp = lowbit(c)
        if elems(c, min(csp, p - c)):
            rounds.append(([], [(real(c), elems(c, min(csp, p - c)) * es)]))
    if not ring:  # recursive doubling for any p; short halves filled by recursive halving
        m = 1
        while m < p:
            t = v - v % m
            if v ^ m < p:
                rounds.append(([real(v ^ m)], [(real(v ^ m), elems(t, m) * es)]))
            if (v ^ m) - (v ^ m) % m + m > p:
                have, h = p - t - m, m // 2
                while h:
                    w, tr = v ^ h, v - v % (2 * h)
                    if p > w > v and v < tr + have <= w:
                        rounds.append(([], [(real(w), elems(t + m, m) * es)]))
                    elif w < v and w < tr + have <= v:
                        rounds.append(([real(w)], []))
                    h //= 2
            m *= 2
    else:
        for i in range(p - 1):
            b = (v - i) % p
            rounds.append(([real((v - 1) % p)], [(real((v + 1) % p), min(elems(b, 1), sc) * es)]))
    return rounds


def reduce(alg, me, p, root, count, es):
    n = count * es
    if alg == "linear":
        return linear_reduce(me, p, root, n)
    if alg in ("chain", "pipeline"):
        return tree_reduce(me, p, root, n, kids_chain)
    if alg == "in-order_binary":
        return inorder_binary_reduce(me, p, root, n)
    if alg == "binary":
        return tree_reduce(me, p, root, n, kids_binary)
    if alg == "binomial":
        return tree_reduce(me, p, root, n, kids_inorder)
    raise KeyError(alg)


def inorder_bintree(p):
    """Open MPI's in-order binary tree, rooted at p-1, as children lists: a
    span's last rank heads it, with the last but one (the upper part after
    the lower half) and the lower half's last as children, recursively."""
    kids = {r: [] for r in range(p)}

    def build(lo, n):  # the span [lo, lo + n): returns its head
        if n <= 0:
            return None
        head, half = lo + n - 1, n // 2
        left = build(lo + half, n - half - 1) if n > 1 else None
        right = build(lo, half) if n > 2 else None
        if n == 2:  # the lower "half" is rank lo itself, the left child
            left = lo
        kids[head] = [k for k in (left, right) if k is not None]
        return head
    build(0, p)
    return kids


def inorder_binary_reduce(me, p, root, n):
    kids = inorder_bintree(p)
    par = {c: v for v in kids for c in kids[v]}
    out = []
    if kids[me]:
        out.append((kids[me], []))
    if me in par:
        out.append(([], [(par[me], n)]))
    if root != p - 1 and me == p - 1:
        out.append(([], [(root, n)]))
    elif root != p - 1 and me == root:
        out.append(([p - 1], []))
    return out


# ---- allreduce -------------------------------------------------------------------------------

def allreduce(alg, me, p, count, es):
    n = count * es
    if alg == "basic_linear":
        return linear_reduce(me, p, 0, n) + linear_bcast(me, p, 0, n)
    if alg == "recursive_doubling" or (alg == "ring" and count < p):
        a = pof2_floor(p)
        extra, out = p - a, []
        if me < 2 * extra:  # even ranks fold into their odd neighbour
            out.append(([], [(me + 1, n)]) if me % 2 == 0 else ([me - 1], []))
        newrank = -1 if me < 2 * extra and me % 2 == 0 else (me // 2 if me < 2 * extra else me - extra)
        d = 1
        while newrank >= 0 and d < a:
            nr = newrank ^ d
            peer = nr * 2 + 1 if nr < extra else nr + extra
            out.append(([peer], [(peer, n)]))
            d *= 2
        if me < 2 * extra:
            out.append(([me + 1], []) if me % 2 == 0 else ([], [(me - 1, n)]))
        return out
    if alg == "ring":
        out = []
        for k in range(p - 1):  # reduce-scatter: send my partial block, receive the next
            out.append(([(me - 1) % p], [((me + 1) % p, blk(count, p, (me - k) % p) * es)]))
        for k in range(p - 1):  # allgather of the reduced blocks
            out.append(([(me - 1) % p], [((me + 1) % p, blk(count, p, (me + 1 - k) % p) * es)]))
        return out
    if alg == "rabenseifner":
        return rabenseifner(me, p, count, es)
    raise KeyError(alg)


def rabenseifner(me, p, count, es):
    """Thakur-Rabenseifner-Gropp: halving reduce-scatter, doubling allgather."""
    q = pof2_floor(p)
    if count < q:
        return linear_reduce(me, p, 0, count * es) + linear_bcast(me, p, 0, count * es)
    rem, out = p - q, []
    lh, rh = count // 2, count - count // 2
    v = me - rem
    if me < 2 * rem:
        if me % 2:  # odd: give the left half, get... then hand the reduced right half over
            out += [([me - 1], [(me - 1, lh * es)]), ([], [(me - 1, rh * es)])]
            v = -1
        else:
            out += [([me + 1], [(me + 1, rh * es)]), ([me + 1], [])]
            v = me // 2
    if v < 0:
        return out + [([me - 1], [])]
    real = lambda x: x * 2 if x < rem else x + rem
    w, steps, m = count, [], 1
    while m < q:
        dest = real(v ^ m)
        keep = w // 2 if me < dest else w - w // 2
        steps.append((dest, w - keep, keep))  # (peer, sent, kept)
        out.append(([dest], [(dest, (w - keep) * es)]))
        w, m = keep, m * 2
    for dest, sent, kept in reversed(steps):
        out.append(([dest], [(dest, kept * es)]))
    if me < 2 * rem:
        out.append(([], [(me + 1, count * es)]))
    return out


# ---- allgather, alltoall ------------------------------------------------------------------------

def allgather(alg, me, p, nbytes):
    out = []
    if alg == "recursive_doubling" and p & (p - 1) == 0:
        d = 1
        while d < p:
            out.append(([me ^ d], [(me ^ d, d * nbytes)]))
            d *= 2
        return out
    if alg in ("bruck", "recursive_doubling"):
        d = 1
        while d < p:
            out.append(([(me + d) % p], [((me - d) % p, min(d, p - d) * nbytes)]))
            d *= 2
        return out
    if alg == "ring" or (alg == "neighbor" and p % 2):
        return [([(me - 1) % p], [((me + 1) % p, nbytes)]) for _ in range(p - 1)]
    if alg == "neighbor":  # Chen et al.: p/2 steps, then 2 blocks at a time
        left, right = (me - 1) % p, (me + 1) % p
        nb = (right, left) if me % 2 == 0 else (left, right)
        out.append(([nb[0]], [(nb[0], nbytes)]))
        for i in range(1, p // 2):
            out.append(([nb[i % 2]], [(nb[i % 2], 2 * nbytes)]))
        return out
    raise KeyError(alg)


def alltoall(alg, me, p, nbytes):
    if alg == "linear":
        recvs = [(me + i) % p for i in range(1, p)]
        sends = [((me - i) % p, nbytes) for i in range(1, p)]
        return [(recvs, sends)]
    if alg == "pairwise":
        # the step with itself last: a copy, a round with no message
        return [([(me - s) % p], [((me + s) % p, nbytes)]) for s in range(1, p)] + [([], [])]
    if alg == "modified_bruck":
        out, d = [], 1
        while d < p:
            nblocks = sum(1 for i in range(1, p) if i & d)
            out.append(([(me - d) % p], [((me + d) % p, nblocks * nbytes)]))
            d *= 2
        return out
    raise KeyError(alg)


def alltoallv(alg, me, p, vb):
    """vb[i]: bytes to rank i.  Linear: every receive, then every send, in rank
    order (0 B included); pairwise: step s swaps with me+s / me-s."""
    if alg == "basic_linear":
        return [([i for i in range(p) if i != me], [(i, vb[i]) for i in range(p) if i != me])] if p > 1 else []
    # the step with itself first: a copy, a round with no message
    return [([], [])] + [([(me - s) % p], [((me + s) % p, vb[(me + s) % p])]) for s in range(1, p)]


# ---- gather, scatter, reduce-scatter, scan ---------------------------------------------------------

def subtree(v, p):
    span = lowbit(v) if v else p
    return min(span, p - v)


def gather(alg, me, p, root, nbytes):
    if alg == "basic_linear":  # blocking receives in rank order
        return [([i], []) for i in range(p) if i != root] if me == root else [([], [(root, nbytes)])]
    if alg == "linear_sync":  # go-ahead, block, empty second segment; the root takes those last
        if me != root:
            return [([root], []), ([], [(root, nbytes)]), ([], [(root, 0)])]
        others = [i for i in range(p) if i != root]
        return [([i], [(i, 0)]) for i in others] + ([(others, [])] if others else [])
    if alg == "binomial":  # one child a round, nearest first
        v, real, out = (me - root) % p, lambda x: (x + root) % p, []
        out += [([real(c)], []) for c in kids_inorder(v, p)]
        if v:
            out.append(([], [(real(v - lowbit(v)), subtree(v, p) * nbytes)]))
        return out
    raise KeyError(alg)


def scatter(alg, me, p, root, nbytes):
    if me != root and alg != "binomial":
        return [([root], [])]
    if alg == "basic_linear":
        return [([], [(i, nbytes)]) for i in range(p) if i != root]
    if alg == "linear_nb":
        return [([], [(i, nbytes) for i in range(p) if i != root])]
    if alg == "binomial":
        v, real, out = (me - root) % p, lambda x: (x + root) % p, []
        if v:
            out.append(([real(v - lowbit(v))], []))
        out += [([], [(real(c), subtree(c, p) * nbytes)]) for c in reversed(kids_inorder(v, p))]
        return out
    raise KeyError(alg)


def gatherv(me, p, root, vb):
    """Blocking receives in rank order; nothing of 0 bytes (an empty round at the root)."""
    if me != root:
        return [([], [(root, vb[me])])] if vb[me] else []
    return [([i] if vb[i] else [], []) for i in range(p) if i != root]


def scatterv(me, p, root, vb):
    if me != root:
        return [([root], [])] if vb[me] else []
    return [([], [(i, vb[i])] if vb[i] else []) for i in range(p) if i != root]


def reduce_scatter(alg, me, p, vb):
    if alg == "ring":
        return [([(me - 1) % p], [((me + 1) % p, vb[(me - k - 1) % p])]) for k in range(p - 1)]
    if alg == "recursive_halving":
        q = pof2_floor(p)
        rem, out, total = p - q, [], sum(vb)
        if me < 2 * rem:
            out.append(([], [(me + 1, total)]) if me % 2 == 0 else ([me - 1], []))
            if me % 2 == 0:
                return out + ([([me + 1], [])] if vb[me] else [])
        v = me // 2 if me < 2 * rem else me - rem
        own = lambda i: vb[2 * i] + vb[2 * i + 1] if i < rem else vb[i + rem]
        lo, hi, m = 0, q, q // 2
        while m:
            vd = v ^ m
            dest = vd * 2 + 1 if vd < rem else vd + rem
            mid = lo + m
            give = range(mid, hi) if v < mid else range(lo, mid)
            take = range(lo, mid) if v < mid else range(mid, hi)
            g, t = sum(own(i) for i in give), sum(own(i) for i in take)  # nothing of 0 bytes
            out.append(([dest] if t else [], [(dest, g)] if g else []))
            lo, hi = (lo, mid) if v < mid else (mid, hi)
            m //= 2
        if me < 2 * rem and vb[me - 1]:
            out.append(([], [(me - 1, vb[me - 1])]))
        return out
    raise KeyError(alg)


def scan(me, p, nbytes):
    out = []
    if me > 0:
        out.append(([me - 1], []))
    if me + 1 < p:
        out.append(([], [(me + 1, nbytes)]))
    return out


# ---- the I-forms: Open MPI 4.1.4's coll/libnbc ----------------------------------------------------
# Written from nbc_i*.c: a schedule is a list of libnbc rounds, each a list
# of ("S", peer, bytes), ("R", peer), ("OP", bytes); a round ends at each
# NBC barrier.  nbc_rounds() folds them into the simulator's rounds: a round
# with messages is one, a round of only local work rides on the one before.

def clog2(p):
    return (p - 1).bit_length()


def swap(x, root):  # RANK2VRANK / VRANK2RANK: root and 0 trade places
    return root if x == 0 else 0 if x == root else x


def nbc_rounds(sched):
    out = []
    for rd in sched:
        recvs = [o[1] for o in rd if o[0] == "R"]
        sends = [(o[1], o[2]) for o in rd if o[0] == "S"]
        if recvs or sends:
            out.append((recvs, sends))
    return out


def nbc_reduce_up(me, p, root, n):
    """allred_sched_diss / red_sched_binomial's reduce over v = swap(me)."""
    v, rounds = swap(me, root), []
    for k in range(1, clog2(p) + 1):
        if v % (1 << k) == 0:
            if v + (1 << (k - 1)) < p:
                rounds += [[("R", swap(v + (1 << (k - 1)), root))], [("OP", n)]]
        else:
            rounds.append([("S", swap(v - (1 << (k - 1)), root), n)])
            break
    return v, rounds


def nbc_bcast_sends(v, p, root, n):
    return [("S", swap(v + (1 << k), root), n) for k in range(clog2(p))
            if (v + (1 << k) < p and v < (1 << k)) or v == 0]


def nbc_model(coll, me, p, root, count, es, vb=None):
    n = count * es
    if coll == "barrier":
        return [[("S", (me + (1 << k)) % p, 0), ("R", (me - (1 << k)) % p)] for k in range(clog2(p))]
    if coll == "bcast":
        if p <= 4:
            return [[("S", q, n) for q in range(p) if q != root]] if me == root else [[("R", root)]]
        v = swap(me, root)
        parent = [[("R", swap(v - (1 << (v.bit_length() - 1)), root))]] if v else []
        return parent + [nbc_bcast_sends(v, p, root, n)]
    if coll == "allreduce":
        q = 1 << (p.bit_length() - 1)
        if p < 4 or n < 65536:
            v, rounds = nbc_reduce_up(me, p, 0, n)
            if v:  # the broadcast's receive joins the leaving send's round
                rounds[-1].append(("R", v - (1 << (v.bit_length() - 1))))
            return rounds + [nbc_bcast_sends(v, p, 0, n)]
        if count >= q:  # allred_sched_redscat_allgather: tuned's Rabenseifner, round for round
            return [[("R", r) for r in recvs] + [("S", d, b) for d, b in sends]
                    for recvs, sends in rabenseifner(me, p, count, es)]
        seg = [count // p + (1 if i < count % p else 0) for i in range(p)]
        rounds = []
        for k in range(2 * p - 2):
            rounds.append([("S", (me + 1) % p, seg[(me + 1 - k) % p] * es), ("R", (me - 1) % p)])
            if k < p - 1:
                rounds.append([("OP", seg[(me - k) % p] * es)])
        return rounds
    if coll == "reduce":
        q = 1 << (p.bit_length() - 1)
        if p > 2 and count >= q:
            return nbc_redscat_gather(me, p, root, count, es)
        if p > 4 or n < 65536:
            return nbc_reduce_up(me, p, root, n)[1]
        v, nf = swap(me, root), -(-n // 8192)
        fc, rounds = count // nf, []
        for f in range(nf):
            t = fc if f < nf - 1 else count - fc * (nf - 1)
            if v != p - 1:
                rounds += [[("R", swap(v + 1, root))], [("OP", t * es)]]
            if v != 0:
                rounds.append([("S", swap(v - 1, root), t * es)])
        return rounds
    if coll in ("reduce_scatter", "reduce_scatter_block"):
        blocks = vb if vb else [n] * p
        total, rounds = sum(blocks), []
        for k in range(1, clog2(p) + 1):
            if me % (1 << k) == 0:
                if me + (1 << (k - 1)) < p:
                    rounds += [[("R", me + (1 << (k - 1)))], [("OP", total)]]
            else:
                rounds.append([("S", me - (1 << (k - 1)), total)])
                break
        if me == 0:
            return rounds + [[("S", q, blocks[q]) for q in range(1, p)]]
        return rounds + [[("R", 0)]]
    if coll in ("gather", "gatherv"):
        own = vb[me] if vb else n
        return [[("R", i) for i in range(p) if i != root]] if me == root else [[("S", root, own)]]
    if coll in ("scatter", "scatterv"):
        return [[("S", i, vb[i] if vb else n) for i in range(p) if i != root]] if me == root else [[("R", root)]]
    if coll == "allgather":
        return [[x for q in range(p) if q != me for x in (("R", q), ("S", q, n))]]
    if coll == "allgatherv":
        return [[x for k in range(1, p) for x in (("R", (me - k) % p), ("S", (me + k) % p, vb[me]))]]
    if coll == "alltoall":
        return [[x for q in range(p) if q != me for x in (("R", q), ("S", q, n))]]
    if coll == "alltoallv":  # nothing of 0 bytes; every rank sends vb[i] to rank i
        return [[("S", q, vb[q]) for q in range(p) if q != me and vb[q]] +
                [("R", q) for q in range(p) if q != me and vb[me]]]
    if coll in ("scan", "exscan"):
        out = [[("R", me - 1)]] if me > 0 else []
        return out + ([[("S", me + 1, n)]] if me < p - 1 else [])
    raise KeyError(coll)


def nbc_redscat_gather(me, p, root, count, es):
    """red_sched_redscat_gather: Rabenseifner's fold and reduce-scatter, then
    a binomial gather of the pieces to the root."""
    nbits = p.bit_length() - 1
    q, rem = 1 << nbits, p - (1 << nbits)
    lh, rh, rounds = count // 2, count - count // 2, []
    real = lambda x: 2 * x if x < rem else x + rem
    v = me - rem
    if me < 2 * rem:
        if me % 2:
            rounds += [[("S", me - 1, lh * es), ("R", me - 1)], [("S", me - 1, rh * es)]]
            v = -1
        else:
            rounds += [[("S", me + 1, rh * es), ("R", me + 1)], [("R", me + 1)]]
            v = me // 2
    rc, sc, w = [0] * nbits, [0] * nbits, count
    for k in range(nbits if v >= 0 else 0):
        d = real(v ^ (1 << k))
        rc[k] = w // 2 if me < d else w - w // 2
        sc[k] = w - rc[k]
        rounds.append([("S", d, sc[k] * es), ("R", d)])
        w = rc[k]
    odd_root = root < 2 * rem and root % 2
    vroot = 0 if odd_root else root // 2 if root < 2 * rem else root - rem
    if odd_root and me == root:
        rounds.append([("R", 0)])
        rc = [(count >> k) // 2 for k in range(nbits)]
        v = 0
    elif odd_root and v == 0:
        rounds.append([("S", root, rc[nbits - 1] * es)])
        v = -1
    for k in range(nbits - 1, -1, -1):
        if v < 0:
            break
        d = root if odd_root and v ^ (1 << k) == 0 else real(v ^ (1 << k))
        if (v >> k) & 1 != (vroot >> k) & 1:
            rounds.append([("S", d, rc[k] * es)])
            break
        rounds.append([("R", d)])
    return rounds


# ---- comparing ------------------------------------------------------------------------------------

def listing(rounds_of, p):
    lines = []
    for me in range(p):
        for k, (recvs, sends) in enumerate(rounds_of(me)):
            lines += [f"R {src} {me} {k}" for src in recvs]
            lines += [f"S {me} {dst} {k} {n}" for dst, n in sends]
    return lines


def run_list(tool, coll, alg, p, root, count, es, v=None):
    cmd = [tool, coll, alg, str(p), str(root), str(count), str(es)] + [str(x) for x in v or []]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split("\n")
    return [l for l in out if l and not l.startswith("alg ")], [l for l in out if l.startswith("alg ")]


def simulate(lines, p):
    """Every send waits for its receive (rendezvous), rounds in order: all ranks must finish."""
    rounds = [dict() for _ in range(p)]
    for l in lines:
        f = l.split()
        kind, a, b, k = f[0], int(f[1]), int(f[2]), int(f[3])
        rounds[b if kind == "R" else a].setdefault(k, []).append((kind, (a, b)))
    order = [[rounds[me][k] for k in sorted(rounds[me])] for me in range(p)]
    pos, posted = [0] * p, [None] * p  # posted[me]: (kind, pair, index in the pair's sequence)
    nsend, nrecv = {}, {}
    while not all(pos[me] >= len(order[me]) for me in range(p)):
        progress = False
        for me in range(p):
            if pos[me] >= len(order[me]):
                continue
            if posted[me] is None:  # post the round: each op takes its place in its pair's FIFO
                posted[me] = []
                for kind, pair in order[me][pos[me]]:
                    ctr = nsend if kind == "S" else nrecv
                    posted[me].append((pair, ctr.get(pair, 0)))
                    ctr[pair] = ctr.get(pair, 0) + 1
                progress = True
            if all(i < min(nsend.get(pair, 0), nrecv.get(pair, 0)) for pair, i in posted[me]):
                pos[me], posted[me], progress = pos[me] + 1, None, True
        if not progress:
            return False
    return True


def check_pairing(lines, p):
    s, r = {}, {}
    for l in lines:
        f = l.split()
        (s if f[0] == "S" else r).setdefault((int(f[1]), int(f[2])), []).append(f)
    for key in set(s) | set(r):
        if len(s.get(key, [])) != len(r.get(key, [])):
            return f"pair {key}: {len(s.get(key, []))} sends, {len(r.get(key, []))} receives"
    return None


def received(lines, p):
    got = [0] * p
    for l in lines:
        f = l.split()
        if f[0] == "S":
            got[int(f[2])] += int(f[4])
    return got


def main():
    tool = sys.argv[1]
    fails, cases = [], 0

    def case(coll, alg, p, root, count, es, model, need=None, v=None, named=None):
        nonlocal cases
        cases += 1
        got, algline = run_list(tool, coll, alg, p, root, count, es, v)
        want = listing(model, p)
        tag = f"{coll} {alg} p={p} root={root} count={count}"
        if not algline or algline[0].split()[2] != (named or alg):
            fails.append(f"{tag}: ran {algline}")
        if got != want:
            diff = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            fails.append(f"{tag}: differs at line {diff}: got {got[diff:diff + 3]}, want {want[diff:diff + 3]}")
            return
        bad = check_pairing(got, p)
        if bad:
            fails.append(f"{tag}: {bad}")
        if not simulate(got, p):
            fails.append(f"{tag}: deadlocks under rendezvous")
        if need:
            g = received(got, p)
            for me in range(p):
                if not need(me, g[me]):
                    fails.append(f"{tag}: rank {me} receives {g[me]} bytes")

    for p in SIZES:
        for alg in ["linear", "double_ring", "recursive_doubling", "bruck", "tree"]:
            case("barrier", alg, p, 0, 0, 1, lambda me, a=alg, p=p: barrier(a, me, p),
                 need=lambda me, n: n == 0)
        for root in sorted({0, p - 1, p // 2}):
            for count in [1, 3 * p + 1, 1000]:
                es, n = 8, count * 8
                for alg in ["basic_linear", "chain", "pipeline", "binary_tree", "binomial", "knomial",
                            "scatter_allgather", "scatter_allgather_ring"]:
                    case("bcast", alg, p, root, count, es,
                         lambda me, a=alg, p=p, r=root, c=count: bcast(a, me, p, r, c, 8))
                for alg in ["basic_linear", "chain", "binary_tree", "binomial", "knomial"]:
                    case("bcast", alg, p, root, count, es,
                         lambda me, a=alg, p=p, r=root, c=count: bcast(a, me, p, r, c, 8),
                         need=lambda me, got, r=root, n=n: me == r or got == n)
                # scatter_allgather: every rank but the root gets every block but
                # its own at least once (the fill-in of short halves included)
                for alg in ["scatter_allgather", "scatter_allgather_ring"]:
                    case("bcast", alg, p, root, count, es,
                         lambda me, a=alg, p=p, r=root, c=count: bcast(a, me, p, r, c, 8),
                         need=lambda me, got, r=root, n=n, sc=-(-count // p): me == r or got >= n - 8 * sc)
                for alg in ["linear", "chain", "binary", "binomial", "in-order_binary"]:
                    case("reduce", alg, p, root, count, es,
                         lambda me, a=alg, p=p, r=root, c=count: reduce(a, me, p, r, c, 8))
                case("gather", "basic_linear", p, root, count, es,
                     lambda me, p=p, r=root, n=n: gather("basic_linear", me, p, r, n),
                     need=lambda me, got, r=root, n=n, p=p: got == ((p - 1) * n if me == r else 0))
                case("gather", "binomial", p, root, count, es,
                     lambda me, p=p, r=root, n=n: gather("binomial", me, p, r, n),
                     need=lambda me, got, r=root, n=n, p=p: me != r or got == (p - 1) * n)
                for alg in ["basic_linear", "linear_nb", "binomial"]:
                    case("scatter", alg, p, root, count, es,
                         lambda me, a=alg, p=p, r=root, n=n: scatter(a, me, p, r, n),
                         need=lambda me, got, r=root, n=n: me == r or got >= n)
                case("gather", "linear_sync", p, root, count, es,
                     lambda me, p=p, r=root, n=n: gather("linear_sync", me, p, r, n),
                     need=lambda me, got, r=root, n=n, p=p: me != r or got == (p - 1) * n)
                vz = [8 * (i % 3) for i in range(p)]  # every third rank has nothing
                case("gatherv", "basic_linear", p, root, 1, 1, lambda me, p=p, r=root, v=vz: gatherv(me, p, r, v),
                     need=lambda me, got, r=root, v=vz: got == (sum(v) - v[r] if me == r else 0), v=vz)
                case("scatterv", "basic_linear", p, root, 1, 1, lambda me, p=p, r=root, v=vz: scatterv(me, p, r, v),
                     need=lambda me, got, r=root, v=vz: got == (0 if me == r else v[me]), v=vz)
        for count in [1, p - 1 if p > 1 else 1, p, 5 * p + 3, 1000]:
            n = count * 8
            for alg in ["basic_linear", "recursive_doubling", "ring", "rabenseifner"]:
                case("allreduce", alg, p, 0, count, 8,
                     lambda me, a=alg, p=p, c=count: allreduce(a, me, p, c, 8))
            for alg in ["bruck", "recursive_doubling", "ring", "neighbor"]:
                case("allgather", alg, p, 0, count, 8, lambda me, a=alg, p=p, n=n: allgather(a, me, p, n),
                     need=lambda me, got, n=n, p=p: got == (p - 1) * n)
            for alg in ["linear", "pairwise", "modified_bruck"]:
                exact = alg != "modified_bruck"
                case("alltoall", alg, p, 0, count, 8, lambda me, a=alg, p=p, n=n: alltoall(a, me, p, n),
                     need=lambda me, got, n=n, p=p, e=exact: got == (p - 1) * n if e else got >= (p - 1) * n)
            case("scan", "linear", p, 0, count, 8, lambda me, p=p, n=n: scan(me, p, n))
            vb = [8 * ((i * 7 + count) % 5 + 1) for i in range(p)]
            vz = [8 * ((i * 7 + count) % 5) for i in range(p)]  # zeros too: halving posts none
            for alg in ["ring", "recursive_halving"]:
                case("reduce_scatter", alg, p, 0, 1, 1,
                     lambda me, a=alg, p=p, vb=vb: reduce_scatter(a, me, p, vb), v=vb)
            if sum(vz):
                case("reduce_scatter", "recursive_halving", p, 0, 1, 1,
                     lambda me, p=p, vb=vz: reduce_scatter("recursive_halving", me, p, vb), v=vz)
            va = [8 * (i % 4) for i in range(p)]  # to rank i, from every rank (0 B to some)
            for alg in ["basic_linear", "pairwise"]:
                case("alltoallv", alg, p, 0, 1, 1, lambda me, a=alg, p=p, v=va: alltoallv(a, me, p, v),
                     need=lambda me, got, v=va, p=p: got == (p - 1) * v[me], v=va)
    # the I-forms, as libnbc runs them (coll-list ALG nbc), the algorithm each
    # of its default choices names
    def nbc_case(coll, p, root, count, es, named, vb=None):
        case(coll, "nbc", p, root, count, es,
             lambda me: nbc_rounds(nbc_model(coll, me, p, root, count, es, vb)), v=vb, named=named)

    for p in SIZES:
        q = 1 << (p.bit_length() - 1)
        nbc_case("barrier", p, 0, 0, 1, "nbc_dissemination")
        vb = [8 * ((i * 5) % 3) for i in range(p)]  # 0 B for some ranks
        for root in sorted({0, p - 1, p // 2}):
            nbc_case("bcast", p, root, 3, 8, "nbc_linear" if p <= 4 else "nbc_binomial")
            if p > 1:
                nbc_case("reduce", p, root, max(q - 1, 1), 8, "nbc_binomial")
            if p > 2:
                nbc_case("reduce", p, root, 3 * p + 1, 8, "nbc_rabenseifner")
            if p <= 4 and q > 1:  # 64 KiB and more, fewer elements than q (or p = 2): chain
                nbc_case("reduce", p, root, q - 1 if p > 2 else 3, 70000, "nbc_chain")
            for coll in ("gather", "scatter"):
                nbc_case(coll, p, root, 2, 8, "nbc_linear")
            if p > 1:
                nbc_case("gatherv", p, root, 1, 1, "nbc_linear", vb)
                nbc_case("scatterv", p, root, 1, 1, "nbc_linear", vb)
        if p > 1:
            nbc_case("allreduce", p, 0, 5, 8, "nbc_binomial")
        if p >= 4:
            nbc_case("allreduce", p, 0, 3 * p + 1, 8192, "nbc_rabenseifner")
            nbc_case("allreduce", p, 0, q - 1, 100000, "nbc_ring")
        for coll in ("allgather", "alltoall", "scan", "exscan"):
            nbc_case(coll, p, 0, 3, 8, "nbc_linear")
        if p > 1:
            nbc_case("allgatherv", p, 0, 1, 1, "nbc_linear", vb)
            nbc_case("alltoallv", p, 0, 1, 1, "nbc_linear", vb)
            nbc_case("reduce_scatter_block", p, 0, 3, 8, "nbc_binomial")
            nbc_case("reduce_scatter", p, 0, 1, 1, "nbc_binomial", [x + 8 for x in vb])
    for f in fails[:20]:
        print("FAIL:", f)
    print(f"{cases} decompositions checked, {len(fails)} failures")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
