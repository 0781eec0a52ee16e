/* cmd-export.c - `phantom export TRACE --format simgrid -o OUT`: the trace as
 * SimGrid's time-independent (TI) trace, for `smpirun -replay`, so that
 * SimGrid's own trace replay can simulate exactly the workload `phantom
 * predict` simulates (bench/simmpi-simgrid.sh compares the two).
 *
 * The TI format of SimGrid 3.32 (src/smpi/internals/smpi_replay.cpp): one
 * text file per rank, one action per line, "RANK ACTION ARGS...", '#' lines
 * ignored; the index file given to -replay lists the rank files in rank
 * order, by path from the directory smpirun runs in (we write absolute
 * paths).  Ranks are MPI_COMM_WORLD ranks; sizes are in units of the default
 * datatype, MPI_BYTE when "init" has no argument, so we write bytes;
 * "compute" takes flops, and we write the host's nanoseconds for a host of
 * 1 Gflop/s (the speed of the platform --platform writes).
 *
 * The replay's rules shape the mapping (doc/man/phantom-export.1 has the
 * table):
 *  - pending requests are kept in a map by (source, destination, tag), so a
 *    second request with a key still pending is lost, and "wait" names a
 *    request by its key.  We renumber tags so that keys stay distinct: bits
 *    0-15 the application's tag, 16-26 the communicator (1024 + id for the
 *    messages of a decomposed collective), 27-30 the message's number on its
 *    channel (sender, receiver, communicator, tag) modulo 16.  Both ends count
 *    a channel's messages in posting order, which MPI's non-overtaking rule
 *    makes the matching order (the same assumption as simmpi's matching).
 *  - "waitall" waits for every pending request, so we use it only when the
 *    call completes all of them; otherwise one "wait" each.
 *  - a receive smaller than the message aborts (MPI_ERR_TRUNCATE) and one of
 *    size 0 first probes for the size (which would make an irecv blocking):
 *    receive sizes are the posted size, at least 1.
 *  - "test" leaves request entries the later "wait" and "waitall" mishandle,
 *    so a Test that completed a request becomes its "wait", and one that
 *    completed nothing costs o_poll of computation, as phantom predict has it.
 *  - collectives run on MPI_COMM_WORLD only: collectives on other
 *    communicators, and Scan/Exscan (no action), become the point-to-point
 *    messages of the algorithm phantom predict uses (simmpi_coll_messages).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "phantom.h"
#include "simmpi.h"

extern const ph_verb cmd_export;

static const char usage[] =
    "usage: phantom export TRACE --format simgrid -o OUT [--platform FILE|NAME] [--ppn N]\n"
    "\n"
    "Write the trace in TRACE in another simulator's input format.  With\n"
    "--format simgrid: SimGrid's time-independent trace, for `smpirun -replay`:\n"
    "one file of actions per rank, OUT.d/rank-N.txt, and the index file OUT\n"
    "listing them.  The computation between MPI calls becomes `compute`\n"
    "actions for a host of 1 Gflop/s (flops = nanoseconds measured on the\n"
    "host); messages keep their sizes, with peers as MPI_COMM_WORLD ranks.\n"
    "What the format cannot express is replayed the closest way phantom\n"
    "predict models it, and listed on stderr with how many calls.\n"
    "\n"
    "options:\n"
    "  --format simgrid   the output format (the only one so far); required\n"
    "  -o, --output OUT   the index file; the rank files go to OUT.d/; required\n"
    "  --platform FILE    also write OUT.xml, a SimGrid cluster with the LogGP\n"
    "                     numbers of FILE (doc/platform-format.md, or a bundled\n"
    "                     platform's name), and the hostfile OUT.hosts, and\n"
    "                     print the smpirun command\n"
    "  --ppn N            ranks per node in OUT.hosts (default: the platform's\n"
    "                     cores_per_node)\n"
    "  -h, --help         show this help\n";

#define NCHAN_SEQ 16
#define SLOT_COLL 1024 /* tag slots 1024 + comm: messages of decomposed collectives */
#define NSLOTS 2048
enum { X_ABORT = 100 }; /* an event handler's "the rank ends here" (MPI_Abort) */

/* What the format cannot express, and how it is replayed instead. */
enum approx {
    AP_SSEND, AP_BSEND, AP_PROBE, AP_MPROBE, AP_COLL_P2P, AP_ICOLL, AP_INTER, AP_FREED,
    AP_COLLIDE, AP_TAGS, AP_UNMATCHED, AP_VSIZES, AP_ABORT, AP_COUNT
};
static const char *const approx_what[AP_COUNT] = {
    [AP_SSEND] = "synchronous sends (Ssend, Issend, Ssend_init) replayed as standard sends",
    [AP_BSEND] = "buffered sends (Bsend, Ibsend, Bsend_init) replayed as standard sends "
                 "(SimGrid blocks above its detached-send threshold)",
    [AP_PROBE] = "probes (Probe, Iprobe, Improbe) dropped but for their o_iprobe (no probe action)",
    [AP_MPROBE] = "matched probes (Mprobe, Improbe): the message received at its Mrecv/Imrecv",
    [AP_COLL_P2P] = "collectives on sub-communicators, Scan and Exscan replayed as the point-to-point "
                    "messages of phantom predict's algorithm (TI collectives are on MPI_COMM_WORLD only)",
    [AP_ICOLL] = "nonblocking collectives replayed blocking where the trace completed them",
    [AP_INTER] = "intercommunicator collectives not simulated dropped: a Gatherv, Scatterv or Allgatherv whose "
                 "group's sizes no event of the other group holds, or a Scan (phantom predict skips them too)",
    [AP_FREED] = "active requests freed or cancelled: never waited for",
    [AP_COLLIDE] = "requests posted while one with the same source, destination and tag was pending "
                   "(SimGrid's replay keeps only the older)",
    [AP_TAGS] = "messages whose tag (>= 65536) or communicator (>= 1024) is not renumbered",
    [AP_UNMATCHED] = "receives never matched (wildcard, never completed) dropped",
    [AP_VSIZES] = "v-collectives with fewer per-rank sizes than ranks dropped",
    [AP_ABORT] = "MPI_Abort: the rank's actions end there",
};

/* ---- a u64 -> u64 hash map: linear probing, backward-shift deletion ----------------- */

typedef struct u64map {
    uint64_t *k, *v;
    uint8_t *used;
    size_t cap, n; /* cap: a power of two, or 0 */
} u64map;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static size_t map_find(const u64map *m, uint64_t key)
{
    size_t mask = m->cap - 1, i = mix(key) & mask;
    while (m->used[i] && m->k[i] != key)
        i = (i + 1) & mask;
    return i;
}

static uint64_t *map_get(const u64map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    size_t i = map_find(m, key);
    return m->used[i] ? &m->v[i] : NULL;
}

static int map_grow(u64map *m)
{
    u64map g = {.cap = m->cap ? m->cap * 2 : 64};
    g.k = malloc(g.cap * sizeof *g.k);
    g.v = malloc(g.cap * sizeof *g.v);
    g.used = calloc(g.cap, 1);
    if (!g.k || !g.v || !g.used) {
        free(g.k), free(g.v), free(g.used);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->used[i]) {
            size_t j = map_find(&g, m->k[i]);
            g.used[j] = 1, g.k[j] = m->k[i], g.v[j] = m->v[i];
        }
    g.n = m->n;
    free(m->k), free(m->v), free(m->used);
    *m = g;
    return 0;
}

/* The value of key, inserted as dflt if absent; NULL when out of memory. */
static uint64_t *map_at(u64map *m, uint64_t key, uint64_t dflt)
{
    if ((m->n + 1) * 2 > m->cap && map_grow(m) < 0)
        return NULL;
    size_t i = map_find(m, key);
    if (!m->used[i]) {
        m->used[i] = 1, m->k[i] = key, m->v[i] = dflt;
        m->n++;
    }
    return &m->v[i];
}

static void map_del(u64map *m, uint64_t key)
{
    if (!m->cap)
        return;
    size_t mask = m->cap - 1, i = map_find(m, key), j = i;
    if (!m->used[i])
        return;
    m->used[i] = 0;
    m->n--;
    for (;;) { /* pull back every entry whose probe sequence crosses the hole */
        j = (j + 1) & mask;
        if (!m->used[j])
            return;
        size_t h = mix(m->k[j]) & mask;
        if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
            m->k[i] = m->k[j], m->v[i] = m->v[j], m->used[i] = 1, m->used[j] = 0;
            i = j;
        }
    }
}

static void map_clear(u64map *m)
{
    if (m->cap)
        memset(m->used, 0, m->cap);
    m->n = 0;
}

static void map_free(u64map *m)
{
    free(m->k), free(m->v), free(m->used);
    *m = (u64map){0};
}

/* ---- state --------------------------------------------------------------------------- */

/* A message of a decomposed collective, as its owner (the sender of a send,
 * the receiver of a receive) posts it; ranks are communicator ranks. */
typedef struct dmsg {
    uint32_t src, dst, round;
    uint8_t recv;
    uint64_t bytes;
} dmsg;

/* One decomposition, for every rank, of one shape of collective. */
typedef struct dentry {
    simmpi_coll_args a;
    uint64_t *v; /* a copy of a.vbytes, then of a.rvbytes */
    int valid;
    dmsg *m;
    size_t nm, cap;
    uint32_t *off, filled; /* off[r]..off[r+1]: the messages rank r posts */
} dentry;
#define DC_SLOTS 64
#define DC_BUDGET (16u << 20) /* messages kept over all slots */

/* A request of the rank being exported, by its trace id. */
enum { XR_NONE, XR_P2P, XR_PSEND, XR_PRECV, XR_ICOLL, XR_MSG };
typedef struct xkey {
    int32_t src, dst, tag; /* SimGrid's key of the pending request */
    uint8_t live;          /* SimGrid keeps it (not lost to an older one with its key) */
} xkey;
typedef struct xreq {
    uint8_t kind, active, dead; /* dead: freed or cancelled while active */
    xkey key;
    /* persistent template, message handle */
    uint16_t op;
    int32_t peer, peer_world, tag;
    uint32_t comm;
    uint64_t bytes;
    int wild;
    ph_event *coll; /* a nonblocking collective, deep-copied */
} xreq;

typedef struct wres { /* a wildcard receive's match, found by reading ahead */
    int32_t src, tag;
    uint64_t bytes;
    int ok;
} wres;

typedef struct exporter exporter;
typedef struct xrank {
    exporter *x;
    uint32_t rank;
    FILE *f;
    uint64_t comp_ns, prev_exit, actions;
    int started;
    u64map reqs;  /* request id -> xreq* */
    u64map chans; /* channel -> messages posted on it */
    u64map keys;  /* SimGrid keys held by pending requests */
    uint32_t nactive, nzombie;
    wres *wild;
    size_t nwild, wpos;
    int prescanned;
    uint64_t *vcalls; /* per communicator: its blocking Gatherv, Scatterv and Allgatherv so far */
} xrank;

struct exporter {
    const char *trace, *out;
    ph_trace *t;
    uint64_t probe_ns; /* ph_trace_probe_gap_ns */
    uint32_t n, ncomms;
    simmpi_platform pf;
    uint32_t ppn;
    int have_pf;
    uint64_t approx[AP_COUNT], actions;
    int8_t *worldlike;   /* per communicator: -1 not known yet, 0, 1 */
    int64_t *me_for;     /* per communicator: the world rank me_of was found for */
    int32_t *me_of;
    uint32_t *canon;     /* per communicator: the id its tags use (UINT32_MAX: not known yet) */
    dentry cache[DC_SLOTS];
    size_t cached;
    simmpi_group_sizes *gs; /* intercommunicator groups' sizes, scanned when first needed */
    char *dir;           /* OUT.d, absolute */
    char pfname[SIMMPI_NAME_MAX]; /* the platform's name, safe inside an XML comment */
};

static int oom(void) { return cli_error("export", "out of memory"); }

/* ---- writing actions ---------------------------------------------------------------------- */

/* The computation not yet written, as flops for a host of 1 Gflop/s. */
static void flush_comp(xrank *r)
{
    if (!r->comp_ns)
        return;
    fprintf(r->f, "%u compute %llu\n", r->rank, (unsigned long long)r->comp_ns);
    r->comp_ns = 0;
    r->actions++;
}

/* Starts an action line (the caller ends it): the computation goes first. */
static FILE *line(xrank *r)
{
    flush_comp(r);
    fprintf(r->f, "%u ", r->rank);
    r->actions++;
    return r->f;
}

__attribute__((format(printf, 2, 3))) static void act(xrank *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(line(r), fmt, ap);
    fputc('\n', r->f);
    va_end(ap);
}

static void poll_cost(xrank *r, int probe)
{
    r->comp_ns += (probe ? r->x->pf.o_iprobe : r->x->pf.o_poll) / 1000;
}

static unsigned long long ull(uint64_t v) { return (unsigned long long)v; }
static unsigned long long rsize(uint64_t bytes) { return bytes ? ull(bytes) : 1; }

/* ---- tags and keys ------------------------------------------------------------------------ */

/* The renumbered tag of the next message on a channel (see the top comment). */
static int chan_tag(xrank *r, int32_t peer, int out, uint32_t slot, int32_t tag, int32_t *t2)
{
    if (tag < 0 || tag > 0xffff || slot >= NSLOTS) {
        r->x->approx[AP_TAGS]++;
        *t2 = tag < 0 ? 0 : tag;
        return 0;
    }
    uint64_t ch = (uint64_t)(uint32_t)peer << 32 | (uint64_t)out << 31 | (uint64_t)slot << 16 |
                  (uint64_t)tag;
    uint64_t *seq = map_at(&r->chans, ch, 0);
    if (!seq)
        return -1;
    *t2 = (int32_t)(((*seq)++ % NCHAN_SEQ) << 27 | slot << 16 | (uint32_t)tag);
    return 0;
}

static uint64_t key_of(const xrank *r, const xkey *k)
{
    int out = k->src == (int32_t)r->rank && k->dst != (int32_t)r->rank;
    int32_t peer = out ? k->dst : k->src;
    return (uint64_t)(uint32_t)peer << 32 | (uint64_t)out << 31 | (uint64_t)(uint32_t)k->tag;
}

/* Posts an isend or irecv; its key is held until it completes. */
static int post(xrank *r, int out, int32_t peer, uint32_t slot, int32_t tag, uint64_t bytes, xkey *k)
{
    int32_t t2;
    if (chan_tag(r, peer, out, slot, tag, &t2) < 0)
        return oom();
    int32_t me = (int32_t)r->rank;
    *k = (xkey){.src = out ? me : peer, .dst = out ? peer : me, .tag = t2};
    uint64_t *held = map_at(&r->keys, key_of(r, k), 0);
    if (!held)
        return oom();
    k->live = !*held;
    if (k->live) {
        *held = 1;
        r->nactive++;
    } else {
        r->x->approx[AP_COLLIDE]++;
    }
    act(r, "%s %d %d %llu", out ? "isend" : "irecv", peer, t2, out ? ull(bytes) : rsize(bytes));
    return CLI_OK;
}

static void release(xrank *r, const xkey *k)
{
    if (!k->live)
        return;
    map_del(&r->keys, key_of(r, k));
    r->nactive--;
}

/* Waits for the pending requests k[0..n): one waitall when they are all
 * SimGrid has pending, else one wait each. */
static void wait_keys(xrank *r, const xkey *k, uint32_t n)
{
    uint32_t live = 0;
    for (uint32_t i = 0; i < n; i++)
        live += k[i].live;
    if (live >= 2 && live == r->nactive && !r->nzombie)
        act(r, "waitall");
    else
        for (uint32_t i = 0; i < n; i++)
            if (k[i].live)
                act(r, "wait %d %d %d", k[i].src, k[i].dst, k[i].tag);
    for (uint32_t i = 0; i < n; i++)
        release(r, &k[i]);
}

/* ---- communicators ---------------------------------------------------------------------- */

/* The two sides of an intercommunicator are two communicators of the trace
 * (each side's local group first): both use the lower id for their tags.
 * The other side is the one with the paired gid, else the first whose groups
 * are this one's swapped (ph_trace_comm_other_side), as phantom predict pairs them. */
static uint32_t canon_comm(exporter *x, uint32_t comm)
{
    if (comm >= x->ncomms)
        return comm;
    if (x->canon[comm] == UINT32_MAX) {
        uint32_t other = ph_trace_comm_other_side(x->t, comm);
        x->canon[comm] = other < comm ? other : comm;
    }
    return x->canon[comm];
}

static uint32_t p2p_slot(exporter *x, uint32_t comm)
{
    comm = canon_comm(x, comm);
    return comm < SLOT_COLL ? comm : NSLOTS;
}
static uint32_t coll_slot(uint32_t comm) { return comm < SLOT_COLL ? SLOT_COLL + comm : NSLOTS; }

/* Is the communicator MPI_COMM_WORLD in all but name (a Dup of it)? */
static int worldlike(exporter *x, uint32_t comm, const ph_comm_info *ci)
{
    if (x->worldlike[comm] < 0) {
        int same = ci->size == x->n && !ci->remote_size;
        for (uint32_t i = 0; same && i < ci->size; i++)
            same = ci->members[i] == (int32_t)i;
        x->worldlike[comm] = (int8_t)same;
    }
    return x->worldlike[comm];
}

static int32_t comm_rank(exporter *x, uint32_t comm, const ph_comm_info *ci, uint32_t world)
{
    if (x->me_for[comm] != (int64_t)world) {
        x->me_of[comm] = -1;
        for (uint32_t i = 0; i < ci->size; i++)
            if (ci->members[i] == (int32_t)world)
                x->me_of[comm] = (int32_t)i;
        x->me_for[comm] = world;
    }
    return x->me_of[comm];
}

/* ---- decomposed collectives --------------------------------------------------------------- */

static void dc_add(void *ctx, const simmpi_coll_msg *m, int is_recv)
{
    dentry *d = ctx;
    if (!d->valid)
        return;
    if (d->nm == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 256;
        dmsg *p = realloc(d->m, cap * sizeof *p);
        if (!p) {
            d->valid = 0;
            return;
        }
        d->m = p, d->cap = cap;
    }
    uint32_t owner = is_recv ? m->dst : m->src; /* callbacks come owner by owner */
    while (d->filled <= owner)
        d->off[d->filled++] = (uint32_t)d->nm;
    d->m[d->nm++] = (dmsg){m->src, m->dst, m->round, (uint8_t)is_recv, m->bytes};
}

static const dmsg *sort_m;
static int by_pair(const void *a, const void *b)
{
    const dmsg *x = &sort_m[*(const uint32_t *)a], *y = &sort_m[*(const uint32_t *)b];
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1; /* posting order */
}

/* Receives are listed without sizes: the j-th receive of rank d from s gets
 * the size of the j-th message s sends to d. */
static int dc_recv_sizes(dentry *d)
{
    uint32_t *s = malloc((d->nm + 1) * sizeof *s), *r = malloc((d->nm + 1) * sizeof *r), ns = 0, nr = 0;
    if (!s || !r) {
        free(s), free(r);
        return -1;
    }
    for (uint32_t i = 0; i < d->nm; i++)
        if (d->m[i].recv)
            r[nr++] = i;
        else
            s[ns++] = i;
    sort_m = d->m;
    qsort(s, ns, sizeof *s, by_pair);
    qsort(r, nr, sizeof *r, by_pair);
    for (uint32_t i = 0, j = 0; i < nr; i++) {
        dmsg *m = &d->m[r[i]];
        if (m->src & SIMMPI_REMOTE) /* sent by the other group's decomposition: simmpi gave its size */
            continue;
        while (j < ns && (d->m[s[j]].src < m->src || (d->m[s[j]].src == m->src && d->m[s[j]].dst < m->dst)))
            j++;
        int hit = j < ns && d->m[s[j]].src == m->src && d->m[s[j]].dst == m->dst;
        m->bytes = hit ? d->m[s[j++]].bytes : 0;
    }
    free(s), free(r);
    return 0;
}

static void dc_drop(exporter *x, dentry *d)
{
    x->cached -= d->nm;
    free(d->m), free(d->off), free(d->v);
    *d = (dentry){0};
}

/* Entries of a's per-rank sizes (vbytes; rvbytes: an intercommunicator's
 * Alltoallv's, remote_size). */
static uint32_t vlen(const simmpi_coll_args *a)
{
    return !a->vbytes ? 0 : a->remote_size && a->coll == SIMMPI_ALLTOALLV ? a->remote_size : a->size;
}
static uint32_t rvlen(const simmpi_coll_args *a) { return a->rvbytes ? a->remote_size : 0; }

static int same_args(const dentry *d, const simmpi_coll_args *a)
{
    const simmpi_coll_args *b = &d->a;
    if (!d->valid || a->coll != b->coll || a->alg != b->alg || a->size != b->size ||
        a->root != b->root || a->count != b->count || a->esize != b->esize ||
        a->remote_size != b->remote_size || a->rblock != b->rblock || a->nonblocking != b->nonblocking ||
        !a->vbytes != !b->vbytes ||
        !a->rvbytes != !b->rvbytes)
        return 0;
    return (!a->vbytes || memcmp(a->vbytes, b->vbytes, vlen(a) * sizeof *a->vbytes) == 0) &&
           (!a->rvbytes || memcmp(a->rvbytes, b->rvbytes, rvlen(a) * sizeof *a->rvbytes) == 0);
}

static size_t dc_slot(const simmpi_coll_args *a)
{
    uint64_t h = mix((uint64_t)a->coll << 56 ^ (uint64_t)a->alg << 48 ^ (uint64_t)a->size << 16 ^ a->root);
    h = mix(h ^ a->count ^ (uint64_t)a->esize << 40 ^ (uint64_t)a->remote_size << 8 ^ a->rblock << 1 ^
            (uint64_t)!!a->nonblocking << 63);
    for (uint32_t i = 0; i < vlen(a); i++)
        h = mix(h ^ a->vbytes[i]);
    for (uint32_t i = 0; i < rvlen(a); i++)
        h = mix(h ^ a->rvbytes[i]);
    return h % DC_SLOTS;
}

/* The decomposition of a collective of this shape (cached: ranks repeat them). */
static dentry *dc_get(exporter *x, const simmpi_coll_args *a)
{
    dentry *d = &x->cache[dc_slot(a)];
    if (same_args(d, a))
        return d;
    dc_drop(x, d);
    d->a = *a;
    d->off = malloc((a->size + 1) * sizeof *d->off);
    uint32_t nv = vlen(a), nrv = rvlen(a);
    d->v = nv + nrv ? malloc((nv + nrv) * sizeof *d->v) : NULL;
    d->valid = d->off && (d->v || !(nv + nrv));
    if (d->v) {
        if (nv)
            memcpy(d->v, a->vbytes, nv * sizeof *d->v);
        if (nrv)
            memcpy(d->v + nv, a->rvbytes, nrv * sizeof *d->v);
        d->a.vbytes = nv ? d->v : NULL;
        d->a.rvbytes = nrv ? d->v + nv : NULL;
    }
    if (d->valid && simmpi_coll_messages(&d->a, dc_add, d, 1) < 0)
        d->valid = 0;
    while (d->valid && d->filled <= a->size)
        d->off[d->filled++] = (uint32_t)d->nm;
    if (d->valid && dc_recv_sizes(d) < 0)
        d->valid = 0;
    if (!d->valid) {
        d->nm = 0; /* never counted in x->cached */
        dc_drop(x, d);
        return NULL;
    }
    if (x->cached + d->nm > DC_BUDGET) /* keep memory bounded: start over */
        for (size_t i = 0; i < DC_SLOTS; i++)
            if (&x->cache[i] != d)
                dc_drop(x, &x->cache[i]);
    x->cached += d->nm;
    return d;
}

static void set_block(simmpi_coll_args *a, int64_t count, uint64_t bytes)
{
    a->count = count > 0 ? (uint64_t)count : 0;
    a->esize = count > 0 && bytes ? (uint32_t)(bytes / (uint64_t)count) : 1;
    if (!a->esize)
        a->esize = 1;
}

/* The collective as this rank sees it, as simmpi's front end reads it
 * (simmpi/frontend.c, coll_sizes); -1 when its per-rank sizes are short. */
static int coll_args(const ph_event *ev, int coll, uint32_t me, simmpi_coll_args *a)
{
    int root = a->remote_size ? a->root == SIMMPI_ROOT_HERE : me == a->root;
    const uint64_t *v = NULL;
    uint32_t nv = 0;
    switch (coll) {
    case SIMMPI_BARRIER: set_block(a, 0, 0); break;
    case SIMMPI_GATHER: set_block(a, root ? ev->rcount : ev->count, root ? ev->rbytes : ev->bytes); break;
    case SIMMPI_SCATTER: set_block(a, root ? ev->count : ev->rcount, root ? ev->bytes : ev->rbytes); break;
    case SIMMPI_GATHERV:
        set_block(a, (int64_t)ev->bytes, ev->bytes);
        v = root ? ev->rbytes_v : NULL, nv = root ? ev->nrbytes : 0;
        break;
    case SIMMPI_SCATTERV:
        set_block(a, (int64_t)ev->rbytes, ev->rbytes);
        v = root ? ev->sbytes : NULL, nv = root ? ev->nsbytes : 0;
        break;
    case SIMMPI_ALLGATHERV:
    case SIMMPI_REDUCE_SCATTER: set_block(a, 1, 1), v = ev->rbytes_v, nv = ev->nrbytes; break;
    case SIMMPI_ALLTOALLV: set_block(a, 1, 1), v = ev->sbytes, nv = ev->nsbytes; break;
    case SIMMPI_REDUCE_SCATTER_BLOCK: set_block(a, ev->rcount, ev->rbytes); break;
    default: set_block(a, ev->count, ev->bytes); break;
    }
    a->vbytes = nv ? v : NULL;
    if (a->remote_size && coll == SIMMPI_ALLTOALLV) { /* to, and from, each remote rank */
        a->rvbytes = ev->nrbytes ? ev->rbytes_v : NULL;
        return nv < a->remote_size || ev->nrbytes < a->remote_size ? -1 : 0;
    }
    if (a->remote_size && coll == SIMMPI_REDUCE_SCATTER && nv < a->size)
        return -1;
    return nv && nv < a->size ? -1 : 0;
}

/* An intercommunicator's Gatherv, Scatterv or Allgatherv on side comm, as
 * phantom predict reads it (simmpi/frontend.c, inter_group_sizes): this
 * rank's bytes, the local group's sizes from the other group's events and
 * the remote group's from this rank's.  CLI_OK with *drop: 0, or the
 * approximation that drops it. */
static int group_args(xrank *r, const ph_event *ev, uint32_t comm, simmpi_coll_args *a, int *drop)
{
    exporter *x = r->x;
    uint64_t k = a->nonblocking ? 0 : r->vcalls[comm]++; /* libnbc's I-forms need no group's sizes */
    int here = a->root == SIMMPI_ROOT_HERE, all = a->coll == SIMMPI_ALLGATHERV, scatter = a->coll == SIMMPI_SCATTERV;
    uint32_t nremote = scatter ? ev->nsbytes : ev->nrbytes;
    a->count = scatter ? ev->rbytes : ev->bytes;
    a->esize = 1;
    *drop = 0;
    if ((all || here) && nremote < a->remote_size)
        *drop = AP_VSIZES;
    if (*drop || (!all && a->root == SIMMPI_ROOT_NONE))
        return CLI_OK;
    a->rvbytes = all || here ? (scatter ? ev->sbytes : ev->rbytes_v) : NULL;
    if (here || a->nonblocking)
        return CLI_OK;
    ph_err err;
    if (!x->gs && simmpi_group_sizes_scan(x->t, &x->gs, &err) < 0)
        return cli_error("export", "%s", err.msg);
    if (!(a->vbytes = simmpi_group_sizes_get(x->gs, comm, k)))
        *drop = AP_INTER;
    return CLI_OK;
}

/* My messages of a decomposition, round by round: the receives and sends of
 * a round are posted together and waited for before the next round. */
static int emit_rounds(xrank *r, const dentry *d, uint32_t me, const ph_comm_info *ci, uint32_t slot)
{
    uint32_t lo = d->off[me], hi = d->off[me + 1];
    xkey *k = malloc((hi - lo + 1) * sizeof *k);
    if (!k)
        return oom();
    for (uint32_t i = lo; i < hi;) {
        uint32_t n = 0, round = d->m[i].round;
        for (; i < hi && d->m[i].round == round; i++) {
            const dmsg *m = &d->m[i];
            uint32_t peer = m->recv ? m->src : m->dst;
            int32_t world;
            if (peer & SIMMPI_REMOTE) { /* the other group of an intercommunicator */
                if ((peer &= ~SIMMPI_REMOTE) >= ci->remote_size)
                    continue;
                world = ci->remote[peer];
            } else if (peer == me || peer >= ci->size) { /* a copy to itself: no message */
                continue;
            } else {
                world = ci->members[peer];
            }
            if (post(r, !m->recv, world, slot, 0, m->bytes, &k[n++]) != CLI_OK) {
                free(k);
                return CLI_ERR;
            }
        }
        wait_keys(r, k, n);
    }
    free(k);
    return CLI_OK;
}

static int decomposed(xrank *r, const ph_event *ev, int coll, uint32_t comm, const ph_comm_info *ci)
{
    exporter *x = r->x;
    int32_t me = comm_rank(x, comm, ci, r->rank);
    if (me < 0)
        return cli_error("export", "%s: rank %u: event %llu (%s): rank %u is not in communicator %u",
                         x->trace, r->rank, ull(ev->seq), ph_ops[ev->op].name, r->rank, comm);
    simmpi_coll_args a = {.coll = (simmpi_coll)coll, .alg = x->pf.coll_alg[coll], .size = ci->size,
                          .forced_algs = x->pf.coll_alg};
    a.root = ev->root >= 0 && (uint32_t)ev->root < ci->size ? (uint32_t)ev->root : 0;
    /* an I-form as libnbc runs it, as phantom predict has it; but an
     * Ialltoallv, whose receive sizes this rank's arguments do not give for
     * every rank, keeps the blocking algorithm's messages */
    a.nonblocking = ph_ops[ev->op].kind == PH_K_ICOLL && coll != SIMMPI_ALLTOALLV;
    uint32_t side = comm;
    if (ci->remote_size) { /* as phantom predict runs it (simmpi: coll.c, inter) */
        a.alg = 0;
        a.remote_size = ci->remote_size;
        a.rblock = coll == SIMMPI_ALLGATHER ? ev->rbytes : 0;
        a.root = simmpi_inter_root(ev->root);
        a.nonblocking = ph_ops[ev->op].kind == PH_K_ICOLL;
        if (!simmpi_inter_root_valid((simmpi_coll)coll, a.root, ci->remote_size))
            return cli_error("export", "%s: rank %u: event %llu (%s): root %d is not MPI_ROOT, MPI_PROC_NULL or "
                             "a rank of the remote group (%u ranks) of intercommunicator %u", x->trace, r->rank,
                             ull(ev->seq), ph_ops[ev->op].name, ev->root, ci->remote_size, comm);
        comm = canon_comm(x, comm); /* both sides' messages in one slot */
    }
    int drop = 0;
    if (ci->remote_size && simmpi_inter_group_sized((simmpi_coll)coll)) {
        if (group_args(r, ev, side, &a, &drop) != CLI_OK)
            return CLI_ERR;
    } else if (coll_args(ev, coll, (uint32_t)me, &a) < 0) {
        drop = AP_VSIZES;
    }
    if (drop) {
        x->approx[drop]++;
        return CLI_OK;
    }
    x->approx[AP_COLL_P2P]++; /* only when it is replayed so */
    const dentry *d = dc_get(x, &a);
    if (!d)
        return cli_error("export", "%s: rank %u: event %llu (%s): cannot decompose the collective",
                         x->trace, r->rank, ull(ev->seq), ph_ops[ev->op].name);
    return emit_rounds(r, d, (uint32_t)me, ci, coll_slot(comm));
}

/* ---- native collectives (on MPI_COMM_WORLD) -------------------------------------------------- */

/* " v0 v1 ... v(n-1)", zeros where the array is not significant. */
static void put_v(xrank *r, const uint64_t *v, uint32_t nv, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        fprintf(r->f, " %llu", i < nv ? ull(v[i]) : 0);
}

static uint64_t vsum(const uint64_t *v, uint32_t n)
{
    uint64_t s = 0;
    for (uint32_t i = 0; i < n; i++)
        s += v[i];
    return s;
}

/* The v-collectives: the array goes in the middle of the line. */
static int native_v(xrank *r, const ph_event *ev, int coll, uint32_t n)
{
    int root = ev->root == (int32_t)r->rank, sv = coll == SIMMPI_SCATTERV || coll == SIMMPI_ALLTOALLV;
    const uint64_t *v = sv ? ev->sbytes : ev->rbytes_v;
    uint32_t nv = sv ? ev->nsbytes : ev->nrbytes;
    int significant = root || coll == SIMMPI_ALLGATHERV || coll == SIMMPI_ALLTOALLV ||
                      coll == SIMMPI_REDUCE_SCATTER;
    if ((significant && nv < n) || (coll == SIMMPI_ALLTOALLV && ev->nrbytes < n)) {
        r->x->approx[AP_VSIZES]++;
        return CLI_OK;
    }
    nv = significant ? nv : 0;
    FILE *f = line(r);
    switch (coll) {
    case SIMMPI_GATHERV: fprintf(f, "gatherv %llu", ull(ev->bytes)); break;
    case SIMMPI_ALLGATHERV: fprintf(f, "allgatherv %llu", ull(ev->bytes)); break;
    case SIMMPI_SCATTERV: fprintf(f, "scatterv"); break;
    case SIMMPI_ALLTOALLV: fprintf(f, "alltoallv %llu", ull(vsum(v, n))); break;
    default: fprintf(f, "reducescatter"); break;
    }
    put_v(r, v, nv, n);
    if (coll == SIMMPI_ALLTOALLV) {
        fprintf(f, " %llu", ull(vsum(ev->rbytes_v, n)));
        put_v(r, ev->rbytes_v, n, n);
    } else if (coll == SIMMPI_SCATTERV) {
        fprintf(f, " %llu %d", ull(ev->rbytes), ev->root);
    } else if (coll == SIMMPI_GATHERV) {
        fprintf(f, " %d", ev->root);
    } else if (coll == SIMMPI_REDUCE_SCATTER) {
        fprintf(f, " 0");
    }
    fputc('\n', f);
    return CLI_OK;
}

static int native(xrank *r, const ph_event *ev, int coll)
{
    int root = ev->root == (int32_t)r->rank, rt = ev->root;
    unsigned long long b = ull(ev->bytes), rb = ull(ev->rbytes);
    switch (coll) {
    case SIMMPI_BARRIER: act(r, "barrier"); break;
    case SIMMPI_BCAST: act(r, "bcast %llu %d", b, rt); break;
    case SIMMPI_REDUCE: act(r, "reduce %llu 0 %d", b, rt); break;
    case SIMMPI_ALLREDUCE: act(r, "allreduce %llu 0", b); break;
    case SIMMPI_GATHER: act(r, "gather %llu %llu %d", b, root ? rb : b, rt); break;
    case SIMMPI_SCATTER: act(r, "scatter %llu %llu %d", root ? b : rb, rb, rt); break;
    case SIMMPI_ALLGATHER: act(r, "allgather %llu %llu", b, rb); break;
    case SIMMPI_ALLTOALL: act(r, "alltoall %llu %llu", b, rb); break;
    case SIMMPI_REDUCE_SCATTER_BLOCK: {
        FILE *f = line(r);
        fprintf(f, "reducescatter");
        for (uint32_t i = 0; i < r->x->n; i++)
            fprintf(f, " %llu", rb);
        fprintf(f, " 0\n");
        break;
    }
    default: return native_v(r, ev, coll, r->x->n);
    }
    return CLI_OK;
}

/* A collective call (or the completion of a nonblocking one). */
static int collective(xrank *r, const ph_event *ev, int coll, uint32_t comm)
{
    exporter *x = r->x;
    const ph_comm_info *ci = comm < x->ncomms ? ph_trace_comm(x->t, comm) : NULL;
    if (!ci)
        return cli_error("export", "%s: rank %u: event %llu (%s): unknown communicator %u", x->trace,
                         r->rank, ull(ev->seq), ph_ops[ev->op].name, comm);
    if (ci->remote_size && !simmpi_alg_name((simmpi_coll)coll, SIMMPI_ALG_INTER)) {
        x->approx[AP_INTER]++; /* not simulated by phantom predict either */
        return CLI_OK;
    }
    /* Open MPI runs nothing for these (a communicator of one rank: coll/self's
     * copy), and phantom predict neither: SimGrid would send messages */
    if ((!ci->remote_size && ci->size == 1) || simmpi_returns_at_once(ev, coll, ci->remote_size != 0, ci->size))
        return CLI_OK;
    if (!ci->remote_size && worldlike(x, comm, ci) && coll != SIMMPI_SCAN && coll != SIMMPI_EXSCAN)
        return native(r, ev, coll);
    return decomposed(r, ev, coll, comm, ci);
}

/* Communicator constructors agree on a context id, as phantom predict models
 * it: an allgather of 8 bytes for the splitting ones, then an allreduce of 8
 * bytes, on the parent (Comm_create_group: on the new communicator). */
static int comm_new(xrank *r, const ph_event *ev)
{
    uint32_t comm = ev->comm;
    int split = ev->op == PH_OP_COMM_SPLIT || ev->op == PH_OP_COMM_SPLIT_TYPE || ev->op == PH_OP_CART_SUB;
    if (ev->op == PH_OP_INTERCOMM_CREATE || ev->op == PH_OP_INTERCOMM_MERGE)
        return CLI_OK;
    if (ev->op == PH_OP_COMM_CREATE_GROUP) {
        if (ev->newcomm == PH_COMM_NULL)
            return CLI_OK;
        comm = ev->newcomm;
    }
    ph_event e = *ev;
    e.count = e.rcount = 1;
    e.bytes = e.rbytes = 8;
    e.root = 0;
    e.nsbytes = e.nrbytes = 0;
    int rc = CLI_OK;
    for (int step = split ? 0 : 1; step < 2 && rc == CLI_OK; step++) {
        e.op = step == 0 ? PH_OP_ALLGATHER : PH_OP_ALLREDUCE;
        const ph_comm_info *ci = comm < r->x->ncomms ? ph_trace_comm(r->x->t, comm) : NULL;
        if (ci && ci->remote_size)
            return CLI_OK; /* not simulated */
        rc = collective(r, &e, step == 0 ? SIMMPI_ALLGATHER : SIMMPI_ALLREDUCE, comm);
    }
    return rc;
}

/* ---- requests ------------------------------------------------------------------------------------ */

static xreq *req_find(xrank *r, uint64_t id)
{
    uint64_t *p = id && id != UINT64_MAX ? map_get(&r->reqs, id) : NULL;
    return p ? (xreq *)(uintptr_t)*p : NULL;
}

static void req_free(xreq *q)
{
    if (q && q->coll) {
        free((void *)q->coll->sbytes);
        free((void *)q->coll->rbytes_v);
        free(q->coll);
    }
    free(q);
}

static void req_del(xrank *r, uint64_t id)
{
    req_free(req_find(r, id));
    map_del(&r->reqs, id);
}

/* A new request by its trace id (a reused id replaces the old one). */
static xreq *req_new(xrank *r, uint64_t id, uint8_t kind)
{
    xreq *q = calloc(1, sizeof *q);
    if (!q || !id || id == UINT64_MAX) {
        free(q);
        return NULL;
    }
    req_del(r, id);
    uint64_t *slot = map_at(&r->reqs, id, 0);
    if (!slot) {
        free(q);
        return NULL;
    }
    *slot = (uint64_t)(uintptr_t)q;
    q->kind = kind;
    return q;
}

/* req_new failed: out of memory, unless the id was null or foreign. */
static int req_fail(uint64_t id) { return id && id != UINT64_MAX ? oom() : CLI_OK; }

static int is_wild(int32_t peer, int32_t tag) { return peer == PH_ANY_SOURCE || tag == PH_ANY_TAG; }

static void note_sendop(exporter *x, uint16_t op)
{
    if (op == PH_OP_SSEND || op == PH_OP_ISSEND || op == PH_OP_SSEND_INIT)
        x->approx[AP_SSEND]++;
    if (op == PH_OP_BSEND || op == PH_OP_IBSEND || op == PH_OP_BSEND_INIT)
        x->approx[AP_BSEND]++;
}

/* ---- wildcard receives: their matches, read ahead -------------------------------------------- */

static int is_wait_kind(unsigned k) { return k >= PH_K_WAIT && k <= PH_K_TESTSOME; }

typedef struct prescan {
    u64map pending; /* request id -> its entry in wild[] */
    u64map templ;   /* wildcard persistent receives */
    uint32_t *pos;
    const ph_status **st;
    uint32_t cap;
} prescan;

static int ps_post(xrank *r, prescan *p, uint64_t id)
{
    if (r->nwild % 256 == 0) {
        wres *w = realloc(r->wild, (r->nwild + 256) * sizeof *w);
        if (!w)
            return -1;
        r->wild = w;
    }
    r->wild[r->nwild] = (wres){0};
    uint64_t *slot = map_at(&p->pending, id, 0);
    if (!slot)
        return -1;
    *slot = r->nwild++;
    return 0;
}

static int ps_complete(xrank *r, prescan *p, const ph_event *ev, unsigned kind)
{
    if (ev->nreqs > p->cap) {
        uint32_t *pos = realloc(p->pos, ev->nreqs * sizeof *pos);
        const ph_status **st = pos ? realloc(p->st, ev->nreqs * sizeof *st) : NULL;
        if (pos)
            p->pos = pos;
        if (!st)
            return -1;
        p->st = st, p->cap = ev->nreqs;
    }
    uint32_t n = ph_event_completions(ev, p->pos, p->st);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t id = ev->reqs[p->pos[i]], *w = map_get(&p->pending, id);
        const ph_status *s = p->st[i];
        if (!w)
            continue;
        if (s && s->source >= 0)
            r->wild[*w] = (wres){s->source_world, s->tag, s->bytes, 1};
        map_del(&p->pending, id);
    }
    return 0;
}

static int ps_event(xrank *r, prescan *p, const ph_event *ev)
{
    unsigned kind = ph_ops[ev->op].kind;
    if (kind == PH_K_IRECV && is_wild(ev->peer, ev->tag))
        return ps_post(r, p, ev->newreq);
    if (kind == PH_K_PRECV && is_wild(ev->peer, ev->tag))
        return map_at(&p->templ, ev->newreq, 1) ? 0 : -1;
    if (kind == PH_K_START || kind == PH_K_STARTALL) {
        for (uint32_t i = 0; i < ev->nreqs; i++)
            if (map_get(&p->templ, ev->reqs[i]) && ps_post(r, p, ev->reqs[i]) < 0)
                return -1;
        return 0;
    }
    if (kind == PH_K_REQUEST_FREE && ev->nreqs)
        map_del(&p->templ, ev->reqs[0]);
    return is_wait_kind(kind) ? ps_complete(r, p, ev, kind) : 0;
}

/* Reads the rank's whole stream once to learn, in posting order, what each
 * wildcard receive matched (the status is in the Wait or Test that
 * completed it). */
static int prescan_rank(xrank *r)
{
    exporter *x = r->x;
    ph_err err;
    ph_rank_reader *rd = ph_rank_open(x->t, r->rank, &err);
    if (!rd)
        return cli_error("export", "%s", err.msg);
    prescan p;
    memset(&p, 0, sizeof p);
    ph_event ev;
    int rc;
    while ((rc = ph_rank_next(rd, &ev, &err)) > 0)
        if (ph_op(ev.op) && ps_event(r, &p, &ev) < 0) {
            rc = -2;
            break;
        }
    ph_rank_close(rd);
    map_free(&p.pending), map_free(&p.templ);
    free(p.pos), free(p.st);
    r->prescanned = 1;
    if (rc == -1)
        return cli_error("export", "%s", err.msg);
    return rc == -2 ? oom() : CLI_OK;
}

/* The match of the next wildcard receive posted (0: it never matched). */
static int next_wild(xrank *r, wres *out)
{
    if (!r->prescanned && prescan_rank(r) != CLI_OK)
        return -1;
    *out = r->wpos < r->nwild ? r->wild[r->wpos] : (wres){0};
    r->wpos++;
    return out->ok;
}

/* ---- point-to-point ------------------------------------------------------------------------------ */

static int p_send(xrank *r, const ph_event *ev)
{
    if (ev->peer == PH_PROC_NULL)
        return CLI_OK;
    note_sendop(r->x, ev->op);
    int32_t t2;
    if (chan_tag(r, ev->peer_world, 1, p2p_slot(r->x, ev->comm), ev->tag, &t2) < 0)
        return oom();
    act(r, "send %d %d %llu", ev->peer_world, t2, ull(ev->bytes));
    return CLI_OK;
}

/* A blocking receive from the matched source and tag. */
static int recv_from(xrank *r, int32_t src, int32_t tag, uint32_t comm, uint64_t bytes)
{
    int32_t t2;
    if (chan_tag(r, src, 0, p2p_slot(r->x, comm), tag, &t2) < 0)
        return oom();
    act(r, "recv %d %d %llu", src, t2, rsize(bytes));
    return CLI_OK;
}

static int p_recv(xrank *r, const ph_event *ev)
{
    const ph_status *s = ev->nstatus ? &ev->status[0] : NULL;
    if (ev->peer == PH_PROC_NULL || (s && s->source == PH_PROC_NULL))
        return CLI_OK;
    if (!s || s->source < 0) {
        if (is_wild(ev->peer, ev->tag)) {
            r->x->approx[AP_UNMATCHED]++;
            return CLI_OK;
        }
        return recv_from(r, ev->peer_world, ev->tag, ev->comm, ev->bytes);
    }
    return recv_from(r, s->source_world, s->tag, ev->comm, ev->bytes > s->bytes ? ev->bytes : s->bytes);
}

/* Posts an isend or irecv for request q (a new one, or a Start of a template). */
static int post_req(xrank *r, xreq *q, int out, int32_t peer_world, int32_t peer, int32_t tag,
                    uint32_t comm, uint64_t bytes, int wild)
{
    if (peer == PH_PROC_NULL)
        return CLI_OK; /* completes at once: nothing to wait for */
    if (wild) {
        wres w;
        int hit = next_wild(r, &w);
        if (hit < 0)
            return CLI_ERR;
        if (!hit) {
            r->x->approx[AP_UNMATCHED]++;
            return CLI_OK;
        }
        peer_world = w.src, tag = w.tag;
        bytes = bytes > w.bytes ? bytes : w.bytes;
    }
    if (post(r, out, peer_world, p2p_slot(r->x, comm), tag, bytes, &q->key) != CLI_OK)
        return CLI_ERR;
    q->active = 1;
    return CLI_OK;
}

static int p_isend_irecv(xrank *r, const ph_event *ev, int out)
{
    xreq *q = req_new(r, ev->newreq, XR_P2P);
    if (!q)
        return req_fail(ev->newreq);
    if (out)
        note_sendop(r->x, ev->op);
    return post_req(r, q, out, ev->peer_world, ev->peer, ev->tag, ev->comm, ev->bytes,
                    !out && is_wild(ev->peer, ev->tag));
}

static int p_init(xrank *r, const ph_event *ev, uint8_t kind)
{
    xreq *q = req_new(r, ev->newreq, kind);
    if (!q)
        return req_fail(ev->newreq);
    q->op = ev->op, q->peer = ev->peer, q->peer_world = ev->peer_world, q->tag = ev->tag;
    q->comm = ev->comm, q->bytes = ev->bytes;
    q->wild = kind == XR_PRECV && is_wild(ev->peer, ev->tag);
    return CLI_OK;
}

static int p_start(xrank *r, const ph_event *ev)
{
    for (uint32_t i = 0; i < ev->nreqs; i++) {
        xreq *q = req_find(r, ev->reqs[i]);
        if (!q || (q->kind != XR_PSEND && q->kind != XR_PRECV) || q->active)
            continue;
        int out = q->kind == XR_PSEND;
        if (out)
            note_sendop(r->x, q->op);
        if (post_req(r, q, out, q->peer_world, q->peer, q->tag, q->comm, q->bytes, q->wild) != CLI_OK)
            return CLI_ERR;
    }
    return CLI_OK;
}

static int p_sendrecv(xrank *r, const ph_event *ev)
{
    xkey k[2];
    uint32_t n = 0;
    const ph_status *s = ev->nstatus ? &ev->status[0] : NULL;
    int matched = s && s->source >= 0, null = ev->rpeer == PH_PROC_NULL || (s && s->source == PH_PROC_NULL);
    if (!null && (matched || !is_wild(ev->rpeer, ev->rtag))) {
        uint64_t b = matched && s->bytes > ev->rbytes ? s->bytes : ev->rbytes;
        if (post(r, 0, matched ? s->source_world : ev->rpeer_world, p2p_slot(r->x, ev->comm),
                 matched ? s->tag : ev->rtag, b, &k[n++]) != CLI_OK)
            return CLI_ERR;
    } else if (!null) {
        r->x->approx[AP_UNMATCHED]++;
    }
    if (ev->peer != PH_PROC_NULL &&
        post(r, 1, ev->peer_world, p2p_slot(r->x, ev->comm), ev->tag, ev->bytes, &k[n++]) != CLI_OK)
        return CLI_ERR;
    wait_keys(r, k, n);
    return CLI_OK;
}

/* Probes: dropped, but for the o_iprobe phantom predict charges.  A matched
 * probe (Mprobe, Improbe with flag 1) keeps its message for the Mrecv. */
static int p_probe(xrank *r, const ph_event *ev, unsigned kind)
{
    poll_cost(r, 1);
    int found = kind == PH_K_PROBE || kind == PH_K_MPROBE || ev->flag > 0;
    if (kind == PH_K_PROBE || kind == PH_K_IPROBE) {
        r->x->approx[AP_PROBE] += found;
        return CLI_OK;
    }
    if (!found) {
        r->x->approx[AP_PROBE]++;
        return CLI_OK;
    }
    r->x->approx[AP_MPROBE]++;
    const ph_status *s = ev->nstatus ? &ev->status[0] : NULL;
    xreq *q = req_new(r, ev->newreq, XR_MSG);
    if (!q)
        return req_fail(ev->newreq);
    q->comm = ev->comm;
    q->peer = s && s->source >= 0 ? s->source_world : PH_PROC_NULL;
    q->tag = s ? s->tag : 0;
    q->bytes = s ? s->bytes : 0;
    return CLI_OK;
}

static int p_mrecv(xrank *r, const ph_event *ev, unsigned kind)
{
    xreq *h = ev->nreqs ? req_find(r, ev->reqs[0]) : NULL;
    xreq m = h && h->kind == XR_MSG ? *h : (xreq){.peer = PH_PROC_NULL};
    if (h)
        req_del(r, ev->reqs[0]);
    if (kind == PH_K_MRECV)
        return m.peer == PH_PROC_NULL ? CLI_OK : recv_from(r, m.peer, m.tag, m.comm, m.bytes);
    xreq *q = req_new(r, ev->newreq, XR_P2P);
    if (!q)
        return req_fail(ev->newreq);
    return post_req(r, q, 0, m.peer, m.peer, m.tag, m.comm, m.bytes, 0);
}

/* ---- waits and tests --------------------------------------------------------------------------- */

/* One completed request: a collective runs now; a message joins the wait set. */
static int complete_one(xrank *r, uint64_t id, xkey *set, uint32_t *n)
{
    xreq *q = req_find(r, id);
    if (!q)
        return CLI_OK;
    if (q->kind == XR_ICOLL) {
        int rc = collective(r, q->coll, simmpi_coll_of(q->coll->op), q->coll->comm);
        req_del(r, id);
        return rc;
    }
    if (q->active && !q->dead)
        set[(*n)++] = q->key;
    q->active = 0;
    if (q->dead)
        q->dead = 0;
    if (q->kind == XR_P2P || q->kind == XR_NONE)
        req_del(r, id);
    return CLI_OK;
}

static int p_wait(xrank *r, const ph_event *ev, unsigned kind)
{
    uint32_t nr = ev->nreqs ? ev->nreqs : 1, n = 0;
    uint32_t *pos = malloc(nr * sizeof *pos);
    const ph_status **st = malloc(nr * sizeof *st);
    xkey *set = malloc(nr * sizeof *set);
    int rc = pos && st && set ? CLI_OK : oom();
    uint32_t k = rc == CLI_OK ? ph_event_completions(ev, pos, st) : 0;
    for (uint32_t i = 0; i < k && rc == CLI_OK; i++)
        rc = complete_one(r, ev->reqs[pos[i]], set, &n);
    if (rc == CLI_OK) {
        wait_keys(r, set, n);
        if (!k && (kind == PH_K_TEST || kind == PH_K_TESTALL || kind == PH_K_TESTANY ||
                   kind == PH_K_TESTSOME))
            poll_cost(r, 0); /* a test that found nothing */
    }
    free(pos), free(st), free(set);
    return rc;
}

/* Request_free and Cancel: SimGrid cannot forget a posted request, so an
 * active one stays pending there (never waited for). */
static int p_free(xrank *r, const ph_event *ev, unsigned kind)
{
    uint64_t id = ev->nreqs ? ev->reqs[0] : 0;
    xreq *q = req_find(r, id);
    if (!q)
        return CLI_OK;
    if (q->active && !q->dead && q->key.live) {
        r->x->approx[AP_FREED]++;
        r->nzombie++;
        r->nactive--; /* its key stays held: SimGrid still has it */
        q->dead = 1;
    }
    if (kind == PH_K_REQUEST_FREE)
        req_del(r, id);
    return CLI_OK;
}

/* ---- nonblocking collectives ------------------------------------------------------------------ */

static uint64_t *dup_v(const uint64_t *v, uint32_t n)
{
    uint64_t *c = n ? malloc(n * sizeof *c) : NULL;
    if (c)
        memcpy(c, v, n * sizeof *c);
    return c;
}

static int p_icoll(xrank *r, const ph_event *ev)
{
    xreq *q = req_new(r, ev->newreq, XR_ICOLL);
    if (!q)
        return req_fail(ev->newreq);
    r->x->approx[AP_ICOLL]++;
    ph_event *c = malloc(sizeof *c);
    if (!c)
        return oom();
    *c = *ev;
    c->reqs = NULL, c->status = NULL, c->completed = NULL, c->nreqs = c->nstatus = 0;
    c->sbytes = dup_v(ev->sbytes, ev->nsbytes);
    c->rbytes_v = dup_v(ev->rbytes_v, ev->nrbytes);
    if ((ev->nsbytes && !c->sbytes) || (ev->nrbytes && !c->rbytes_v)) {
        c->nsbytes = c->nrbytes = 0;
        q->coll = c;
        return oom();
    }
    q->coll = c;
    return CLI_OK;
}

/* ---- one event ------------------------------------------------------------------------------------- */

/* X_ABORT: the rank's actions end here. */
static int translate(xrank *r, const ph_event *ev, unsigned kind)
{
    switch (kind) {
    case PH_K_INIT: act(r, "init"); return CLI_OK;
    case PH_K_FINALIZE: act(r, "finalize"); return CLI_OK;
    case PH_K_ABORT: r->x->approx[AP_ABORT]++; return X_ABORT;
    case PH_K_SEND: return p_send(r, ev);
    case PH_K_RECV: return p_recv(r, ev);
    case PH_K_ISEND: return p_isend_irecv(r, ev, 1);
    case PH_K_IRECV: return p_isend_irecv(r, ev, 0);
    case PH_K_PSEND: return p_init(r, ev, XR_PSEND);
    case PH_K_PRECV: return p_init(r, ev, XR_PRECV);
    case PH_K_START: case PH_K_STARTALL: return p_start(r, ev);
    case PH_K_SENDRECV: return p_sendrecv(r, ev);
    case PH_K_PROBE: case PH_K_IPROBE: case PH_K_MPROBE: case PH_K_IMPROBE:
        return p_probe(r, ev, kind);
    case PH_K_MRECV: case PH_K_IMRECV: return p_mrecv(r, ev, kind);
    case PH_K_REQUEST_FREE: case PH_K_CANCEL: return p_free(r, ev, kind);
    case PH_K_COLL: return simmpi_coll_of(ev->op) < 0 ? CLI_OK : collective(r, ev, simmpi_coll_of(ev->op), ev->comm);
    case PH_K_ICOLL: return p_icoll(r, ev);
    case PH_K_COMM_DUP: case PH_K_COMM_NEW: return comm_new(r, ev);
    case PH_K_COMM_IDUP: return req_new(r, ev->newreq, XR_NONE) ? CLI_OK : req_fail(ev->newreq);
    default:
        if (is_wait_kind(kind))
            return p_wait(r, ev, kind);
        return CLI_OK; /* Pcontrol, Comm_free: no time of their own */
    }
}

static int event(xrank *r, const ph_event *ev)
{
    const ph_op_info *oi = ph_op(ev->op);
    if (!oi)
        return CLI_OK;
    /* computation unit, as simmpi takes it */
    if (r->started)
        r->comp_ns += ph_unit_ns(r->prev_exit, ev->t_entry, r->x->probe_ns);
    int first = !r->started;
    r->started = 1;
    r->prev_exit = ev->t_exit;
    int rc = translate(r, ev, oi->kind);
    if (first) /* the process's start-up, which simmpi puts before MPI_Init: after "init", which comes first */
        r->comp_ns += ev->startup_ns;
    return rc;
}

/* ---- one rank ------------------------------------------------------------------------------------ */

static void rank_reset(xrank *r)
{
    for (size_t i = 0; i < r->reqs.cap; i++)
        if (r->reqs.used[i])
            req_free((xreq *)(uintptr_t)r->reqs.v[i]);
    map_clear(&r->reqs);
    map_clear(&r->chans);
    map_clear(&r->keys);
    r->nactive = r->nzombie = 0;
    r->nwild = r->wpos = 0;
    r->prescanned = 0;
    if (r->vcalls)
        memset(r->vcalls, 0, r->x->ncomms * sizeof *r->vcalls);
    r->comp_ns = r->prev_exit = r->actions = 0;
    r->started = 0;
}

static int rank_events(xrank *r)
{
    exporter *x = r->x;
    ph_err err;
    ph_rank_reader *rd = ph_rank_open(x->t, r->rank, &err);
    if (!rd)
        return cli_error("export", "%s", err.msg);
    ph_event ev;
    int rc = CLI_OK, got = 0;
    uint64_t nev = 0;
    while (rc == CLI_OK && (got = ph_rank_next(rd, &ev, &err)) > 0) {
        nev++;
        rc = event(r, &ev);
    }
    if (rc == CLI_OK && got < 0)
        rc = cli_error("export", "%s", err.msg);
    if (rc == CLI_OK)
        cli_warn_incomplete("export", rd, r->rank, nev);
    ph_rank_close(rd);
    if (rc == X_ABORT)
        rc = CLI_OK;
    else if (rc == CLI_OK) /* the stream ended after calls that wrote nothing */
        flush_comp(r);
    return rc;
}

static char *rank_path(const exporter *x, uint32_t rank)
{
    char *p = NULL;
    return asprintf(&p, "%s/rank-%u.txt", x->dir, rank) < 0 ? NULL : p;
}

static int export_rank(exporter *x, xrank *r, uint32_t rank)
{
    char *path = rank_path(x, rank);
    if (!path)
        return oom();
    rank_reset(r);
    r->rank = rank;
    if (!(r->f = fopen(path, "w"))) {
        int rc = cli_error("export", "%s: cannot create: %s", path, strerror(errno));
        free(path);
        return rc;
    }
    fprintf(r->f, "# phantom export of %s, rank %u: compute in flops at 1 Gflop/s (host ns), sizes in bytes\n",
            x->trace, rank);
    int rc = rank_events(r);
    if (fclose(r->f) != 0 && rc == CLI_OK)
        rc = cli_error("export", "%s: cannot write: %s", path, strerror(errno));
    r->f = NULL;
    x->actions += r->actions;
    free(path);
    return rc;
}

/* ---- files ----------------------------------------------------------------------------------------- */

static int make_dir(exporter *x)
{
    char *d = NULL;
    if (asprintf(&d, "%s.d", x->out) < 0)
        return oom();
    if (mkdir(d, 0755) != 0 && errno != EEXIST) {
        int rc = cli_error("export", "%s: cannot create the directory: %s", d, strerror(errno));
        free(d);
        return rc;
    }
    x->dir = realpath(d, NULL);
    int rc = x->dir ? CLI_OK : cli_error("export", "%s: %s", d, strerror(errno));
    free(d);
    return rc;
}

static int write_index(exporter *x)
{
    FILE *f = fopen(x->out, "w");
    if (!f)
        return cli_error("export", "%s: cannot create: %s", x->out, strerror(errno));
    for (uint32_t i = 0; i < x->n; i++)
        fprintf(f, "%s/rank-%u.txt\n", x->dir, i);
    if (fclose(f) != 0)
        return cli_error("export", "%s: cannot write: %s", x->out, strerror(errno));
    return CLI_OK;
}

static double secs(simtime ps) { return (double)ps / 1e12; }
static double bw_of(uint64_t G_fs) { return G_fs ? 1e15 / (double)G_fs : 1e15; }

static void xml_config(FILE *f, const simmpi_platform *p)
{
    const simmpi_loggp *c = &p->inter;
    fputs("  <config>\n"
               "    <!-- LogGP has no size-dependent corrections, and no cross traffic -->\n"
               "    <prop id=\"smpi/bw-factor\" value=\"0:1\"/>\n"
               "    <prop id=\"smpi/lat-factor\" value=\"0:1\"/>\n"
               "    <prop id=\"network/crosstraffic\" value=\"0\"/>\n"
               "    <!-- o_s (and O a byte up to the eager limit) and o_r (between nodes;\n"
               "         SimGrid has one value for both channels) -->\n",
          f);
    char os[128];
    if (c->O_fs) /* SimGrid's piecewise overhead: offset and factor a byte from each size on */
        snprintf(os, sizeof os, "0:%.9g:%.9g;%llu:%.9g:0", secs(c->o_s), (double)c->O_fs * 1e-15,
                 ull(c->eager_limit + 1), secs(c->o_s));
    else
        snprintf(os, sizeof os, "0:%.9g:0", secs(c->o_s));
    fprintf(f, "    <prop id=\"smpi/os\" value=\"%s\"/>\n"
               "    <prop id=\"smpi/ois\" value=\"%s\"/>\n"
               "    <prop id=\"smpi/or\" value=\"0:%.9g:0\"/>\n"
               "    <!-- sends up to the eager limit return at once -->\n"
               "    <prop id=\"smpi/send-is-detached-thresh\" value=\"%llu\"/>\n"
               "    <prop id=\"smpi/test\" value=\"%.9g\"/>\n"
               "    <prop id=\"smpi/iprobe\" value=\"%.9g\"/>\n"
               "    <!-- Open MPI's decision rules, as phantom predict; but SimGrid 3.32's replay\n"
               "         corrupts its heap with the allreduce and bcast they pick for small\n"
               "         messages: those two keep the algorithms Open MPI 4.1 uses for them -->\n"
               "    <prop id=\"smpi/coll-selector\" value=\"ompi\"/>\n"
               "    <prop id=\"smpi/allreduce\" value=\"rdb\"/>\n"
               "    <prop id=\"smpi/bcast\" value=\"binomial_tree\"/>\n"
               "    <prop id=\"smpi/host-speed\" value=\"1Gf\"/>\n"
               "    <prop id=\"smpi/display-timing\" value=\"yes\"/>\n"
               "  </config>\n",
            os, os, secs(c->o_r), ull(c->eager_limit + 1), secs(p->o_poll), secs(p->o_iprobe));
}

/* A cluster of ceil(n / ppn) hosts of ppn cores at 1 Gflop/s.  A message
 * between hosts crosses its sender's and its receiver's private links, so
 * each has half the latency L; one inside a host takes the loopback link. */
static int write_xml(exporter *x, const char *path, uint32_t nodes)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return cli_error("export", "%s: cannot create: %s", path, strerror(errno));
    const simmpi_platform *p = &x->pf;
    fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
               "<!-- written by phantom export from the phantom platform '%s': %u host%s of %u cores;\n"
               "     link latency L/2 and bandwidth 1/G between hosts, intra.L and 1/intra.G inside.\n"
               "     Not translated: o' (SimGrid's rendezvous has no handshake cost), the intra-node\n"
               "     overheads and eager limit, gamma.  doc/man/phantom-export.1 -->\n"
               "<platform version=\"4.1\">\n",
            x->pfname, nodes, nodes == 1 ? "" : "s", x->ppn);
    xml_config(f, p);
    /* half_duplex: SimGrid's links are either split duplex (a direction
     * each, its cluster's default) or shared by both directions */
    int shared = p->inter.half_duplex_ppm >= 500000;
    if (p->inter.half_duplex_ppm % 1000000 || p->intra.half_duplex_ppm)
        fprintf(f, "  <!-- half_duplex %.2f between hosts taken as %s links; %s -->\n",
                p->inter.half_duplex_ppm / 1e6, shared ? "shared" : "split-duplex",
                p->intra.half_duplex_ppm ? "intra.half_duplex not translated (the loopback is a fat pipe)"
                                         : "full duplex inside a host");
    fprintf(f,
            "  <cluster id=\"phantom\" prefix=\"node-\" suffix=\"\" radical=\"0-%u\" speed=\"1Gf\" core=\"%u\"\n"
            "           bw=\"%.9gBps\" lat=\"%.9gs\" loopback_bw=\"%.9gBps\" loopback_lat=\"%.9gs\"%s/>\n"
            "</platform>\n",
            nodes - 1, x->ppn, bw_of(p->inter.G_fs), secs(p->inter.L) / 2, bw_of(p->intra.G_fs),
            secs(p->intra.L), shared ? " sharing_policy=\"SHARED\"" : "");
    if (fclose(f) != 0)
        return cli_error("export", "%s: cannot write: %s", path, strerror(errno));
    return CLI_OK;
}

static int write_hosts(exporter *x, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return cli_error("export", "%s: cannot create: %s", path, strerror(errno));
    for (uint32_t i = 0; i < x->n; i++) /* block placement, as phantom predict's default */
        fprintf(f, "node-%u\n", i / x->ppn);
    if (fclose(f) != 0)
        return cli_error("export", "%s: cannot write: %s", path, strerror(errno));
    return CLI_OK;
}

static int write_platform(exporter *x, char **xml, char **hosts, uint32_t *nodes)
{
    if (asprintf(xml, "%s.xml", x->out) < 0) {
        *xml = NULL; /* asprintf leaves it undefined */
        return oom();
    }
    if (asprintf(hosts, "%s.hosts", x->out) < 0) {
        *hosts = NULL;
        return oom();
    }
    *nodes = (x->n + x->ppn - 1) / x->ppn;
    int rc = write_xml(x, *xml, *nodes);
    return rc == CLI_OK ? write_hosts(x, *hosts) : rc;
}

/* ---- the verb --------------------------------------------------------------------------------------- */

typedef struct eopts {
    const char *trace, *format, *out, *platform;
    uint32_t ppn;
    char platform_path[PATH_MAX]; /* --platform's file (cli_platform_file) */
} eopts;

static int parse_args(int argc, char **argv, eopts *o)
{
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},
        {"platform", required_argument, NULL, 'p'}, {"ppn", required_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    for (int c; (c = cli_getopt("export", argc, argv, ":ho:", longopts)) != -1;) {
        switch (c) {
        case 'h': return cli_help(&cmd_export) == CLI_OK ? -2 : CLI_ERR;
        case 'f': o->format = optarg; break;
        case 'o': o->out = optarg; break;
        case 'p': o->platform = optarg; break;
        case 'n':
            if (cli_u32_option("export", "--ppn", optarg, 1, 1u << 24, &o->ppn) != CLI_OK)
                return CLI_USAGE;
            break;
        default: return CLI_USAGE;
        }
    }
    if (cli_trace_arg("export", argc, argv, &o->trace) != CLI_OK)
        return CLI_USAGE;
    if (!o->format)
        return cli_usage_error("export", "no format given (--format simgrid)");
    if (strcmp(o->format, "simgrid") != 0)
        return cli_usage_error("export", "--format: '%s' is not a format phantom writes (simgrid)", o->format);
    if (!o->out || !*o->out)
        return cli_usage_error("export", "no output given (-o OUT)");
    if (o->platform) {
        if (cli_platform_file("export", "--platform", o->platform, o->platform_path, sizeof o->platform_path) != CLI_OK)
            return CLI_ERR;
        o->platform = o->platform_path;
    }
    return CLI_OK;
}

static void report(const exporter *x, const char *xml, const char *hosts, uint32_t nodes)
{
    printf("wrote %s: %u ranks, %llu actions in %s/\n", x->out, x->n, ull(x->actions), x->dir);
    if (xml)
        printf("wrote %s (%u node%s of %u cores) and %s\n", xml, nodes, nodes == 1 ? "" : "s", x->ppn,
               hosts);
    printf("replay it with: smpirun -np %u -platform %s -hostfile %s -replay %s\n", x->n,
           xml ? xml : "PLATFORM.xml", hosts ? hosts : "HOSTFILE", x->out);
    fflush(stdout);
    for (int i = 0; i < AP_COUNT; i++)
        if (x->approx[i])
            fprintf(stderr, "phantom export: approximated: %llu call%s: %s\n", ull(x->approx[i]),
                    x->approx[i] == 1 ? "" : "s", approx_what[i]);
}

static int setup(exporter *x, const eopts *o)
{
    ph_err err;
    simmpi_platform_default(&x->pf); /* without --platform too */
    if (o->platform && simmpi_platform_load(o->platform, &x->pf, &err) < 0)
        return cli_error("export", "%s", err.msg);
    x->ppn = o->ppn ? o->ppn : x->pf.cores_per_node ? x->pf.cores_per_node : 1;
    for (size_t i = 0; x->pf.name[i] && i + 1 < sizeof x->pfname; i++) { /* no "--", '<', '&' */
        char c = x->pf.name[i];
        x->pfname[i] = strchr("<>&", c) || (c == '-' && x->pf.name[i + 1] == '-') ? '_' : c;
    }
    if (!(x->t = ph_trace_open(o->trace, &err)))
        return cli_error("export", "%s", err.msg);
    x->n = ph_trace_nranks(x->t);
    x->probe_ns = ph_trace_probe_gap_ns(x->t);
    x->ncomms = ph_trace_ncomms(x->t);
    size_t nc = x->ncomms ? x->ncomms : 1;
    x->worldlike = malloc(nc);
    x->me_for = malloc(nc * sizeof *x->me_for);
    x->me_of = malloc(nc * sizeof *x->me_of);
    x->canon = malloc(nc * sizeof *x->canon);
    if (!x->worldlike || !x->me_for || !x->me_of || !x->canon)
        return oom();
    memset(x->worldlike, -1, nc);
    memset(x->canon, 0xff, nc * sizeof *x->canon);
    for (size_t i = 0; i < nc; i++)
        x->me_for[i] = -1;
    return make_dir(x);
}

static void teardown(exporter *x, xrank *r)
{
    rank_reset(r);
    map_free(&r->reqs), map_free(&r->chans), map_free(&r->keys);
    free(r->wild);
    free(r->vcalls);
    simmpi_group_sizes_free(x->gs);
    for (size_t i = 0; i < DC_SLOTS; i++)
        dc_drop(x, &x->cache[i]);
    free(x->worldlike), free(x->me_for), free(x->me_of), free(x->canon), free(x->dir);
    ph_trace_close(x->t);
}

/* An export that failed after it began writing OUT.d: its rank files are
 * part of no whole, and may have overwritten some of an earlier export's,
 * which OUT lists.  So remove OUT, every rank file it would have written,
 * and OUT.d if nothing else is in it. */
static void remove_partial(const exporter *x)
{
    for (uint32_t i = 0; i < x->n; i++) {
        char *path = rank_path(x, i);
        if (path)
            unlink(path);
        free(path);
    }
    unlink(x->out);
    rmdir(x->dir);
}

/* With --platform, a failed export removes OUT.xml and OUT.hosts too: what
 * it began of them, or an earlier export's, for the OUT just removed. */
static void remove_platform(const exporter *x)
{
    static const char *const ext[] = {".xml", ".hosts"};
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
        char *p;
        if (asprintf(&p, "%s%s", x->out, ext[i]) >= 0) {
            unlink(p);
            free(p);
        }
    }
}

static int run(int argc, char **argv)
{
    eopts o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc != CLI_OK)
        return rc == -2 ? CLI_OK : rc;
    exporter x = {.trace = o.trace, .out = o.out};
    xrank r = {.x = &x};
    rc = setup(&x, &o);
    if (rc == CLI_OK && !(r.vcalls = calloc(x.ncomms ? x.ncomms : 1, sizeof *r.vcalls)))
        rc = oom();
    for (uint32_t i = 0; rc == CLI_OK && i < x.n; i++)
        rc = export_rank(&x, &r, i);
    if (rc == CLI_OK)
        rc = write_index(&x);
    char *xml = NULL, *hosts = NULL;
    uint32_t nodes = 0;
    if (rc == CLI_OK && o.platform)
        rc = write_platform(&x, &xml, &hosts, &nodes);
    if (rc != CLI_OK && x.dir) { /* OUT.d is setup's last step: the writing began */
        remove_partial(&x);
        if (o.platform)
            remove_platform(&x);
    }
    if (rc == CLI_OK) {
        report(&x, o.platform ? xml : NULL, o.platform ? hosts : NULL, nodes);
        rc = cli_flush_stdout("export");
    }
    free(xml), free(hosts);
    teardown(&x, &r);
    return cli_end_warnings(rc);
}

const ph_verb cmd_export = {"export", "write a trace for another simulator (SimGrid's smpirun -replay)",
                            usage, run};
