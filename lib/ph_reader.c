/* ph_reader.c - read phantom traces: meta.json, rank event streams, message logs.
 *
 * Every failure is reported as one line naming the file and the byte offset
 * (of the frame, and within the decompressed block where that helps), never
 * as a crash: every length and index read from a file is bounds-checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "ph_trace.h"

/* ---- decompression slots -------------------------------------------------
 *
 * A slot is what decompressing a block takes besides its output: a
 * ZSTD_DCtx, and a buffer the compressed frame is read into.  Making a
 * ZSTD_DCtx costs about 10 us on a virtual machine (zstd asks the CPU about
 * BMI2 with cpuid, which traps to the hypervisor), and a prediction opens
 * a reader for every rank.  A reader borrows a slot only while it reads
 * and decompresses a block, from a pool shared by all readers, which may
 * run on several threads (hence the lock); the pool keeps up to SLOT_POOL
 * of them until the process exits. */

#define SLOT_POOL 16
#define FIRST_READ (64u << 10) /* a frame's bytes read at first; more if it is longer */
#define SLOT_KEEP (4u << 20)   /* a pooled slot keeps a frame buffer up to this size */

/* buf has room for a file header before it: a rank file's header and the
 * start of its first frame come in one read (open_rank_file). */
typedef struct slot {
    ZSTD_DCtx *dctx;
    uint8_t *mem, *buf; /* buf = mem + PH_HEADER_SIZE */
    size_t cap;         /* of buf */
} slot;

static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;
static slot *slot_pool[SLOT_POOL];
static unsigned slot_npool;

static void slot_free(slot *sl)
{
    if (sl) {
        ZSTD_freeDCtx(sl->dctx);
        free(sl->mem);
        free(sl);
    }
}

static slot *slot_take(void)
{
    slot *sl = NULL;
    pthread_mutex_lock(&slot_lock);
    if (slot_npool)
        sl = slot_pool[--slot_npool];
    pthread_mutex_unlock(&slot_lock);
    if (!sl && (sl = calloc(1, sizeof *sl)) && !(sl->dctx = ZSTD_createDCtx())) {
        free(sl);
        sl = NULL;
    }
    return sl;
}

static void slot_give(slot *sl)
{
    if (sl->cap > SLOT_KEEP) { /* a large logged message's frame: not kept until exit */
        free(sl->mem);
        sl->mem = sl->buf = NULL;
        sl->cap = 0;
    }
    pthread_mutex_lock(&slot_lock);
    if (slot_npool < SLOT_POOL) {
        slot_pool[slot_npool++] = sl;
        sl = NULL;
    }
    pthread_mutex_unlock(&slot_lock);
    slot_free(sl);
}

/* Room for n bytes in sl->buf (and the header before it); -1 when out of
 * memory. */
static int slot_fit(slot *sl, size_t n)
{
    if (n > sl->cap || !sl->mem) {
        uint8_t *m = realloc(sl->mem, PH_HEADER_SIZE + n);
        if (!m)
            return -1;
        sl->mem = m;
        sl->buf = m + PH_HEADER_SIZE;
        sl->cap = n;
    }
    return 0;
}

__attribute__((destructor)) static void slot_pool_free(void)
{
    while (slot_npool)
        slot_free(slot_pool[--slot_npool]);
}

/* ---- frames ------------------------------------------------------------- */

/* A rank's file is read a frame at a time with pread, opened for each and
 * closed again: a prediction has every rank's reader open at once, and
 * neither a mapping each (vm.max_map_count, 65,530 by default, stopped
 * traces of 65,536 ranks; and each mapping's first touch was a page fault)
 * nor a descriptor each (RLIMIT_NOFILE) lasts to a million ranks.  The
 * first frame of an event file is read with the header, in one pread
 * when it is at most FIRST_READ bytes: four system calls a rank (open,
 * fstat, pread, close) instead of seven, 7 us against 12 on a VM whose
 * system calls cost 1.2-1.3 us (doc/simmpi-speed-log.md, sixteenth round). */
typedef struct frames {
    char *path;          /* malloc'd: every rank has a reader open at once, and
                          * a 4 KiB array each was 4 GiB at a million ranks */
    size_t size, off;    /* off: next frame's file offset */
    uint8_t *blk;
    size_t blkcap, blklen;
    size_t frame_off;    /* file offset of the current block's frame */
    int ready;           /* blk holds a block read ahead, not yet handed out */
    ph_file_header hdr;
} frames;

/* O_NONBLOCK: a FIFO in a rank file's place must not wait for a writer (a
 * regular file's reads ignore it). */
static int open_file(const char *path, ph_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        ph_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    return fd;
}

/* n bytes of f's file (open as fd) from offset off into buf; 0, or -1
 * with err set. */
static int read_at(const frames *f, int fd, uint8_t *buf, size_t n, size_t off, ph_err *err)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, buf + got, n - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            ph_err_set(err, "%s: offset %zu: %s", f->path, off + got,
                       k < 0 ? strerror(errno) : "file shrank while being read");
            return -1;
        }
        got += (size_t)k;
    }
    return 0;
}

/* Opens path and reads its header: the open descriptor (for the caller to
 * read on and close), or -1 with err set.  With sl, the same read brings
 * the start of the first frame (up to FIRST_READ bytes) into sl->buf, and
 * *have says how much. */
static int frames_open(frames *f, const char *path, const char *magic, slot *sl, size_t *have, ph_err *err)
{
    memset(f, 0, sizeof *f);
    if (!(f->path = strdup(path))) {
        ph_err_set(err, "%s: out of memory", path);
        return -1;
    }
    int fd = open_file(path, err);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        ph_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        ph_err_set(err, "%s: not a regular file", path);
    } else if ((size_t)st.st_size < PH_HEADER_SIZE) {
        ph_err_set(err, "%s: offset %zu: truncated header (%zu of %d bytes)", path, (size_t)st.st_size,
                   (size_t)st.st_size, PH_HEADER_SIZE);
    } else {
        f->size = (size_t)st.st_size;
        size_t avail = f->size - PH_HEADER_SIZE, n = sl ? (avail < FIRST_READ ? avail : FIRST_READ) : 0;
        uint8_t h[PH_HEADER_SIZE], *at = h;
        if (sl && slot_fit(sl, n) < 0) {
            ph_err_set(err, "%s: out of memory", path);
        } else {
            if (sl)
                at = sl->buf - PH_HEADER_SIZE;
            if (read_at(f, fd, at, PH_HEADER_SIZE + n, 0, err) == 0 &&
                ph_header_decode(at, magic, &f->hdr, path, err) == 0) {
                f->off = PH_HEADER_SIZE;
                if (have)
                    *have = n;
                return fd;
            }
        }
    }
    close(fd);
    return -1;
}

static void frames_close(frames *f)
{
    free(f->blk);
    free(f->path);
    memset(f, 0, sizeof *f);
}

/* The frame at f->off into sl->buf, whose first have bytes are there
 * already: its compressed size, or 0 with err set.  Reads FIRST_READ bytes,
 * then more, up to twice as many in all, until the frame fits. */
static size_t read_frame(frames *f, int fd, slot *sl, size_t have, ph_err *err)
{
    size_t avail = f->size - f->off, want = avail < FIRST_READ ? avail : FIRST_READ;
    for (;;) {
        if (want > have) {
            if (slot_fit(sl, want) < 0) {
                ph_err_set(err, "%s: out of memory", f->path);
                return 0;
            }
            if (read_at(f, fd, sl->buf + have, want - have, f->off + have, err) < 0)
                return 0;
            have = want;
        }
        size_t csize = ZSTD_findFrameCompressedSize(sl->buf, have);
        int short_read = ZSTD_isError(csize) && ZSTD_getErrorCode(csize) == ZSTD_error_srcSize_wrong;
        if (short_read && have < avail) {
            want = 2 * have < avail ? 2 * have : avail;
            continue;
        }
        if (ZSTD_isError(csize)) {
            ph_err_set(err, "%s: offset %zu: %s frame (%s)", f->path, f->off,
                       short_read ? "truncated" : "corrupt", ZSTD_getErrorName(csize));
            return 0;
        }
        return csize;
    }
}

/* The next frame, decompressed into f->blk: read through fd (-1: a
 * descriptor opened for this frame, all of whose reads it serves) into the
 * caller's slot, whose buffer holds the frame's first have bytes, or into
 * one of the pool's (own NULL).  1: a block; 0: clean end of file; -1:
 * error. */
static int frames_load(frames *f, int fd, slot *own, size_t have, ph_err *err)
{
    if (f->off == f->size)
        return 0;
    f->frame_off = f->off;
    int own_fd = fd < 0;
    if (own_fd && (fd = open_file(f->path, err)) < 0)
        return -1;
    int rc = -1;
    slot *sl = own ? own : slot_take();
    if (!sl) {
        ph_err_set(err, "%s: out of memory", f->path);
        goto out;
    }
    size_t csize = read_frame(f, fd, sl, have, err);
    unsigned long long rsize = csize ? ZSTD_getFrameContentSize(sl->buf, csize) : 0;
    if (!csize)
        goto out;
    if (rsize == ZSTD_CONTENTSIZE_UNKNOWN || rsize == ZSTD_CONTENTSIZE_ERROR ||
        (rsize > PH_MAX_BLOCK && rsize / PH_MAX_ZSTD_RATIO > csize) || rsize > SIZE_MAX / 2) {
        ph_err_set(err, "%s: offset %zu: corrupt frame header (block size)", f->path, f->off);
        goto out;
    }
    if (rsize > f->blkcap || !f->blk) { /* an empty first frame too: blk is never NULL */
        uint8_t *b = realloc(f->blk, rsize ? rsize : 1);
        if (!b) {
            ph_err_set(err, "%s: out of memory", f->path);
            goto out;
        }
        f->blk = b;
        f->blkcap = rsize;
    }
    size_t n = ZSTD_decompressDCtx(sl->dctx, f->blk, f->blkcap, sl->buf, csize);
    if (ZSTD_isError(n) || n != rsize) {
        ph_err_set(err, "%s: offset %zu: corrupt frame (%s)", f->path, f->off,
                   ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size mismatch");
        goto out;
    }
    f->blklen = n;
    f->off += csize;
    rc = 1;
out:
    if (sl && !own)
        slot_give(sl);
    if (own_fd)
        close(fd);
    return rc;
}

/* 1: a block in f->blk; 0: clean end of file; -1: error. */
static int frames_next(frames *f, ph_err *err)
{
    if (f->ready) {
        f->ready = 0;
        return 1;
    }
    return frames_load(f, -1, NULL, 0, err);
}

/* ---- bounds-checked decoding of one block ----------------------------------- */

typedef struct cursor {
    const uint8_t *p, *start, *end;
    int bad;
} cursor;

/* Unrolled, as -O3 does and -O2 does not: each byte's test becomes a branch
 * of its own, likely better predicted than one loop exit whose trip count
 * changes from field to field.  With sv, rq_find and world_of inline too,
 * predictions from recorded traces ran 2-8% faster (doc/simmpi.md, section
 * 7, fourteenth round). */
static uint64_t uv(cursor *c)
{
    uint64_t v = 0;
#pragma GCC unroll 10
    for (int shift = 0; shift < 64; shift += 7) {
        if (c->p >= c->end) {
            c->bad = 1;
            return 0;
        }
        uint8_t b = *c->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    c->bad = 1;
    return 0;
}

static inline __attribute__((always_inline)) int64_t sv(cursor *c) { return ph_unzz(uv(c)); }

static uint64_t u64le(cursor *c)
{
    if (c->end - c->p < 8) {
        c->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)c->p[i] << (8 * i);
    c->p += 8;
    return v;
}

static const uint8_t *bytes(cursor *c, uint64_t n)
{
    if ((uint64_t)(c->end - c->p) < n) {
        c->bad = 1;
        return NULL;
    }
    const uint8_t *r = c->p;
    c->p += n;
    return r;
}

/* Counts read from a file bound allocations: no element is smaller than a byte. */
static int plausible(cursor *c, uint64_t n) { return !c->bad && n <= (uint64_t)(c->end - c->p); }

/* ---- trace-level tables ------------------------------------------------------ */

typedef struct gid_map {
    uint64_t *gid;
    uint32_t *id;
    size_t n, cap;
} gid_map;

static long gid_find(const gid_map *m, uint64_t gid)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->gid[mid] < gid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n && m->gid[lo] == gid ? (long)m->id[lo] : -1;
}

static int gid_insert(gid_map *m, uint64_t gid, uint32_t id)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->gid[mid] < gid)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        uint64_t *g = realloc(m->gid, cap * sizeof *g);
        if (!g)
            return -1;
        m->gid = g;
        uint32_t *i = realloc(m->id, cap * sizeof *i);
        if (!i)
            return -1;
        m->id = i;
        m->cap = cap;
    }
    memmove(m->gid + lo + 1, m->gid + lo, (m->n - lo) * sizeof *m->gid);
    memmove(m->id + lo + 1, m->id + lo, (m->n - lo) * sizeof *m->id);
    m->gid[lo] = gid;
    m->id[lo] = id;
    m->n++;
    return 0;
}

typedef struct counters {
    ph_counter *c;
    size_t n;
} counters;

/* What only the end of a rank's stream tells: its counters, and whether
 * it ends with END.  Read once, on demand. */
typedef struct rank_end {
    counters counts;
    int scanned;  /* the stream was read to its end */
    int complete;
} rank_end;

struct ph_trace {
    char *dir;
    json_t *meta;
    uint32_t nranks, flags;
    uint64_t probe_gap_ns; /* meta.json clock.probe_gap_ns, whole ns */
    ph_comm_info *comms;
    uint32_t ncomms;
    gid_map comm_ids;
    ph_site_info *sites;
    uint32_t nsites;
    gid_map site_ids;
    rank_end *ends;     /* per rank, filled on demand or by a reader that reached the end */
    pthread_mutex_t ends_lock; /* readers of different ranks may end on different threads */
    char **strings;     /* formatted meta values */
    size_t nstrings;
};

static char *rank_path(const ph_trace *t, uint32_t rank, const char *ext)
{
    size_t n = strlen(t->dir) + 32;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/rank-%06u.%s", t->dir, rank, ext);
    return p;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* 1 when no rank is listed twice in m (a group's members), 0 when one is,
 * -1 out of memory.  The simulator takes a rank's place in a group to be
 * unique; a table that breaks that is corrupt, not a group. */
static int distinct_ranks(const int32_t *m, uint32_t n)
{
    if (n < 2) /* m may be NULL then (no remote group) */
        return 1;
    int32_t *c = malloc(n * sizeof *c);
    if (!c)
        return -1;
    memcpy(c, m, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_i32);
    uint32_t i = 1;
    while (i < n && c[i] != c[i - 1])
        i++;
    free(c);
    return i >= n;
}

/* A group is added once per gid; -1 out of memory, -2 a rank listed twice. */
static int add_comm(ph_trace *t, uint64_t gid, uint32_t size, const int32_t *members,
                    uint32_t rsize, const int32_t *remote)
{
    if (gid_find(&t->comm_ids, gid) >= 0)
        return 0;
    int d = distinct_ranks(members, size), dr = d > 0 ? distinct_ranks(remote, rsize) : d;
    if (d <= 0 || dr <= 0)
        return d < 0 || dr < 0 ? -1 : -2;
    ph_comm_info *c = realloc(t->comms, (t->ncomms + 1) * sizeof *c);
    if (!c)
        return -1;
    t->comms = c;
    c = &t->comms[t->ncomms];
    memset(c, 0, sizeof *c);
    c->gid = gid;
    c->size = size;
    c->members = malloc((size ? size : 1) * sizeof(int32_t));
    c->remote_size = rsize;
    c->remote = malloc((rsize ? rsize : 1) * sizeof(int32_t));
    if (!c->members || !c->remote)
        return -1;
    memcpy(c->members, members, size * sizeof(int32_t));
    if (rsize)
        memcpy(c->remote, remote, rsize * sizeof(int32_t));
    if (gid_insert(&t->comm_ids, gid, t->ncomms) < 0)
        return -1;
    t->ncomms++;
    return 0;
}

static int add_site(ph_trace *t, uint64_t gid, uint32_t nframes, char **modules,
                    const uint64_t *offsets, const char *function, const char *file, int line)
{
    if (gid_find(&t->site_ids, gid) >= 0)
        return 0;
    ph_site_info *s = realloc(t->sites, (t->nsites + 1) * sizeof *s);
    if (!s)
        return -1;
    t->sites = s;
    s = &t->sites[t->nsites];
    memset(s, 0, sizeof *s);
    s->gid = gid;
    s->nframes = nframes;
    s->modules = calloc(nframes ? nframes : 1, sizeof(char *));
    s->offsets = calloc(nframes ? nframes : 1, sizeof(uint64_t));
    if (!s->modules || !s->offsets)
        return -1;
    for (uint32_t i = 0; i < nframes; i++) {
        s->modules[i] = strdup(modules[i] ? modules[i] : "?");
        s->offsets[i] = offsets[i];
    }
    s->function = function ? strdup(function) : NULL;
    s->file = file ? strdup(file) : NULL;
    s->line = line;
    if (gid_insert(&t->site_ids, gid, t->nsites) < 0)
        return -1;
    t->nsites++;
    return 0;
}

/* meta.json's "caller" of site gid (absent in traces finished before it). */
static int set_site_caller(ph_trace *t, uint64_t gid, const json_t *caller)
{
    long i = gid_find(&t->site_ids, gid);
    if (i < 0 || !json_is_object(caller) || t->sites[i].caller_function || t->sites[i].caller_file)
        return 0;
    ph_site_info *s = &t->sites[i];
    const char *function = json_string_value(json_object_get(caller, "function"));
    const char *file = json_string_value(json_object_get(caller, "file"));
    json_int_t line = json_integer_value(json_object_get(caller, "line"));
    if ((function && !(s->caller_function = strdup(function))) || (file && !(s->caller_file = strdup(file))))
        return -1;
    s->caller_line = line > 0 && line <= INT32_MAX ? (int)line : 0;
    return 0;
}

/* ---- the rank reader --------------------------------------------------------- */

/* A rank's local ids -> trace-wide ids.  The first LOCAL_INLINE live in the
 * map itself (one line, inside the rank reader: see there), which is all
 * most ranks have; past them, an array of its own. */
#define LOCAL_INLINE 12
typedef struct local_map {
    uint32_t *v; /* inl, or the heap */
    size_t n;
    uint32_t inl[LOCAL_INLINE];
} local_map;
_Static_assert(sizeof(local_map) == 64, "a local map is one cache line");

/* An array that starts in inline storage inl, grown from old to n elements
 * of size bytes (the first old kept); NULL when out of memory, v intact. */
static void *grow_inline(void *v, const void *inl, size_t old, size_t n, size_t size)
{
    void *p = v == inl ? malloc(n * size) : realloc(v, n * size);
    if (p && v == inl)
        memcpy(p, inl, old * size);
    return p;
}

static void local_init(local_map *m)
{
    m->v = m->inl;
    m->n = LOCAL_INLINE;
    for (size_t i = 0; i < LOCAL_INLINE; i++)
        m->inl[i] = UINT32_MAX;
}

static void local_free(local_map *m)
{
    if (m->v != m->inl)
        free(m->v);
    m->v = NULL;
    m->n = 0;
}

static int local_set(local_map *m, uint64_t idx, uint32_t val)
{
    /* Writers number local indices densely from 0; a larger index is a
     * corrupt file, not a reason to allocate. */
    if (idx > (1u << 20))
        return -1;
    if (idx >= m->n) {
        size_t n = (size_t)idx * 2 + 16;
        uint32_t *v = grow_inline(m->v, m->inl, m->n, n, sizeof *v);
        if (!v)
            return -1;
        for (size_t i = m->n; i < n; i++)
            v[i] = UINT32_MAX;
        m->v = v;
        m->n = n;
    }
    m->v[idx] = val;
    return 0;
}

static long local_get(const local_map *m, uint64_t idx)
{
    return idx < m->n && m->v[idx] != UINT32_MAX ? (long)m->v[idx] : -1;
}

typedef struct grow {
    void *p;
    size_t cap;
} grow;

static void *grow_to(grow *g, size_t bytes)
{
    if (bytes > g->cap) {
        size_t cap = g->cap ? g->cap : 64;
        while (cap < bytes)
            cap *= 2;
        void *p = realloc(g->p, cap);
        if (!p)
            return NULL;
        g->p = p;
        g->cap = cap;
    }
    return g->p;
}

/* The fields every event reads come first, in five lines at fixed offsets
 * (the reader is 64-byte aligned): a prediction of thousands of ranks reads
 * each rank's next event after the other ranks' have pushed the last one out
 * of the caches, so every line an event touches is a miss; a caller that
 * knows which reader comes next asks for all five ahead (ph_rank_hot_lines;
 * the simulator does), rather than meeting them one after another (the
 * file's frames are last). */
#define TYPE_INLINE 8
struct ph_rank_reader {
    /* line 0 */
    cursor c;
    int in_block;
    uint32_t rank;
    uint64_t next_index, prev_exit, next_req;
    /* line 1 */
    ph_trace *t;
    uint64_t *type_size; /* type_inl, or the heap */
    size_t ntype_size;
    /* Live requests -> their communicator: a Wait's statuses carry ranks of
     * the communicator the request was created on, not of the Wait. */
    struct reqcomm { uint64_t id; uint32_t comm; uint8_t persistent; } *rq;
    size_t rqcap, rqlive;
    /* lines 2-4 */
    local_map comms __attribute__((aligned(64))), sites;
    uint64_t type_inl[TYPE_INLINE];
    /* the rest: definitions, arrays of multi-request calls, the file */
    grow g_reqs, g_sb, g_rb, g_done, g_status;
    local_map modules_idx;
    char **modules;
    size_t nmodules;
    int complete;
    int defs_only; /* prescan: build the trace tables, do not map ids */
    char *note;
    uint64_t startup_ns; /* the STARTUP record's, for the first event */
    int startup_seen;    /* a STARTUP record was read: a second is corrupt */
    counters counts;
    frames f;
};
#define READER_HOT_LINES 5
_Static_assert(offsetof(struct ph_rank_reader, t) == 64 && offsetof(struct ph_rank_reader, comms) == 128 &&
                   offsetof(struct ph_rank_reader, type_inl) + sizeof(uint64_t[TYPE_INLINE]) ==
                       64 * READER_HOT_LINES,
               "the reader's hot fields are its first READER_HOT_LINES lines");

/* Writers number a rank's requests upwards, and the live ones are mostly a
 * run of the newest: runs of 64 ids take consecutive slots (a Waitall's
 * requests share a few lines, not a line each), and the runs are spread by
 * a hash, so that ids in any other pattern still spread. */
static size_t rq_slot(const ph_rank_reader *r, uint64_t id)
{
    return (size_t)(id + ((id >> 6) * 0x9e3779b97f4a7c15ull >> 20)) & (r->rqcap - 1);
}

static inline __attribute__((always_inline)) struct reqcomm *rq_find(ph_rank_reader *r, uint64_t id)
{
    if (!r->rqcap || id == 0 || id == UINT64_MAX)
        return NULL;
    for (size_t j = rq_slot(r, id); r->rq[j].id; j = (j + 1) & (r->rqcap - 1))
        if (r->rq[j].id == id)
            return &r->rq[j];
    return NULL;
}

static int rq_add(ph_rank_reader *r, uint64_t id, uint32_t comm, int persistent)
{
    if ((r->rqlive + 1) * 2 > r->rqcap) {
        size_t cap = r->rqcap ? r->rqcap * 2 : 32, old = r->rqcap;
        struct reqcomm *t = calloc(cap, sizeof *t), *o = r->rq;
        if (!t)
            return -1;
        r->rq = t;
        r->rqcap = cap;
        for (size_t i = 0; i < old; i++)
            if (o[i].id) {
                size_t j = rq_slot(r, o[i].id);
                while (t[j].id)
                    j = (j + 1) & (cap - 1);
                t[j] = o[i];
            }
        free(o);
    }
    size_t j = rq_slot(r, id);
    while (r->rq[j].id)
        j = (j + 1) & (r->rqcap - 1);
    r->rq[j] = (struct reqcomm){id, comm, (uint8_t)persistent};
    r->rqlive++;
    return 0;
}

static void rq_remove(ph_rank_reader *r, struct reqcomm *q)
{
    size_t i = (size_t)(q - r->rq), mask = r->rqcap - 1;
    memset(q, 0, sizeof *q);
    r->rqlive--;
    for (size_t j = (i + 1) & mask; r->rq[j].id; j = (j + 1) & mask) {
        size_t h = rq_slot(r, r->rq[j].id);
        int between = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (!between) {
            r->rq[i] = r->rq[j];
            memset(&r->rq[j], 0, sizeof r->rq[j]);
            i = j;
        }
    }
}

/* The communicator whose ranks a completed request's status uses. */
static uint32_t req_comm(ph_rank_reader *r, const ph_event *ev, uint32_t i)
{
    if (i < ev->nreqs) {
        struct reqcomm *q = rq_find(r, ev->reqs[i]);
        if (q)
            return q->comm;
    }
    return ev->comm;
}

static int rr_fail(ph_rank_reader *r, ph_err *err, const char *what)
{
    ph_err_set(err, "%s: offset %zu: corrupt block (%s at byte %zu of the block)", r->f.path,
               r->f.frame_off, what, (size_t)(r->c.p - r->c.start));
    return -1;
}

static int read_comm_def(ph_rank_reader *r, ph_err *err)
{
    cursor *c = &r->c;
    uint64_t idx = uv(c), gid = u64le(c), inter = uv(c), size = uv(c);
    if (!plausible(c, size))
        return rr_fail(r, err, "communicator size");
    int32_t *m = malloc((size + 1) * sizeof *m);
    int32_t *rm = NULL;
    uint64_t rsize = 0;
    if (!m)
        return rr_fail(r, err, "memory");
    for (uint64_t i = 0; i < size; i++) {
        m[i] = (int32_t)uv(c);
        if ((uint32_t)m[i] >= r->t->nranks)
            c->bad = 1;
    }
    if (inter) {
        rsize = uv(c);
        if (!plausible(c, rsize)) {
            free(m);
            return rr_fail(r, err, "remote group size");
        }
        rm = malloc((rsize + 1) * sizeof *rm);
        for (uint64_t i = 0; rm && i < rsize; i++) {
            rm[i] = (int32_t)uv(c);
            if ((uint32_t)rm[i] >= r->t->nranks)
                c->bad = 1;
        }
    }
    int rc = 0;
    if (c->bad)
        rc = rr_fail(r, err, "communicator member");
    else if (r->defs_only) {
        rc = add_comm(r->t, gid, (uint32_t)size, m, (uint32_t)rsize, rm);
        if (rc == -2)
            rc = rr_fail(r, err, "communicator member listed twice");
        else if (rc < 0)
            ph_err_set(err, "out of memory");
    }
    if (rc == 0) {
        long id = gid_find(&r->t->comm_ids, gid);
        if (id < 0 || local_set(&r->comms, idx, (uint32_t)id) < 0)
            rc = rr_fail(r, err, id < 0 ? "communicator missing from meta.json" : "communicator index");
    }
    free(m);
    free(rm);
    return rc;
}

static int read_site_def(ph_rank_reader *r, ph_err *err)
{
    cursor *c = &r->c;
    uint64_t idx = uv(c), gid = u64le(c), nframes = uv(c);
    if (!plausible(c, nframes) || nframes > 64)
        return rr_fail(r, err, "call-site frame count");
    char *mods[64];
    uint64_t offs[64];
    for (uint64_t i = 0; i < nframes; i++) {
        uint64_t mi = uv(c);
        offs[i] = uv(c);
        long m = local_get(&r->modules_idx, mi);
        mods[i] = m >= 0 ? r->modules[m] : NULL;
        if (m < 0)
            c->bad = 1;
    }
    if (c->bad)
        return rr_fail(r, err, "call-site frame");
    if (r->defs_only && add_site(r->t, gid, (uint32_t)nframes, mods, offs, NULL, NULL, 0) < 0)
        return rr_fail(r, err, "memory");
    long id = gid_find(&r->t->site_ids, gid);
    if (id < 0 || local_set(&r->sites, idx, (uint32_t)id) < 0)
        return rr_fail(r, err, id < 0 ? "call site missing from meta.json" : "call-site index");
    return 0;
}

static int read_module_def(ph_rank_reader *r, ph_err *err)
{
    cursor *c = &r->c;
    uint64_t idx = uv(c), len = uv(c);
    const uint8_t *s = bytes(c, len);
    if (!s || len > 4096)
        return rr_fail(r, err, "module name");
    char **m = realloc(r->modules, (r->nmodules + 1) * sizeof *m);
    if (!m)
        return rr_fail(r, err, "memory");
    r->modules = m;
    m[r->nmodules++] = strndup((const char *)s, len); /* owned by r from here */
    if (local_set(&r->modules_idx, idx, (uint32_t)(r->nmodules - 1)) < 0)
        return rr_fail(r, err, "module index");
    return 0;
}

static int read_type_def(ph_rank_reader *r, ph_err *err)
{
    cursor *c = &r->c;
    uint64_t idx = uv(c), size = uv(c);
    (void)sv(c); /* extent */
    (void)uv(c); /* flags */
    if (c->bad || idx > (1u << 20))
        return rr_fail(r, err, "datatype definition");
    if (idx >= r->ntype_size) {
        size_t n = idx * 2 + 16;
        uint64_t *v = grow_inline(r->type_size, r->type_inl, r->ntype_size, n, sizeof *v);
        if (!v)
            return rr_fail(r, err, "memory");
        for (size_t i = r->ntype_size; i < n; i++)
            v[i] = UINT64_MAX;
        r->type_size = v;
        r->ntype_size = n;
    }
    r->type_size[idx] = size;
    return 0;
}

/* COUNTERS, or with timed set COUNTERS_TIMED: each entry then ends with
 * the ns spent inside the function (0 for local calls, which are not timed). */
static int read_counters(ph_rank_reader *r, int timed, ph_err *err)
{
    cursor *c = &r->c;
    uint64_t n = uv(c);
    if (!plausible(c, n))
        return rr_fail(r, err, "counter count");
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len = uv(c);
        const uint8_t *s = bytes(c, len);
        uint64_t calls = uv(c), unknown = uv(c), ns = timed ? uv(c) : 0;
        if (!s || c->bad)
            return rr_fail(r, err, "counter");
        ph_counter *v = realloc(r->counts.c, (r->counts.n + 1) * sizeof *v);
        if (!v)
            return rr_fail(r, err, "memory");
        r->counts.c = v;
        v[r->counts.n].name = strndup((const char *)s, len);
        v[r->counts.n].calls = calls;
        /* 1: passed through (timed in COUNTERS_TIMED); 2: passed through, local, not timed */
        v[r->counts.n].unknown = unknown != 0;
        v[r->counts.n].timed = timed && unknown == 1;
        v[r->counts.n].ns = ns;
        r->counts.n++;
    }
    return 0;
}

static int read_note(ph_rank_reader *r, ph_err *err)
{
    uint64_t len = uv(&r->c);
    const uint8_t *s = bytes(&r->c, len);
    if (!s)
        return rr_fail(r, err, "note");
    free(r->note);
    r->note = strndup((const char *)s, len);
    return 0;
}

/* Thirty days: more CPU time than any start-up takes, less than a
 * damaged value's wrap to 2^64. */
#define STARTUP_MAX_NS (30ull * 86400 * 1000000000)

/* STARTUP (format 1.2): uv length, then uv ns and anything a later minor
 * version appends, which is skipped.  It comes before the first event. */
static int read_startup(ph_rank_reader *r, ph_err *err)
{
    uint64_t len = uv(&r->c);
    const uint8_t *p = bytes(&r->c, len);
    if (!p || r->c.bad)
        return rr_fail(r, err, "start-up record truncated");
    cursor c = {.p = p, .start = p, .end = p + len};
    uint64_t ns = uv(&c);
    if (c.bad)
        return rr_fail(r, err, "start-up record truncated");
    if (r->next_index != 0)
        return rr_fail(r, err, "start-up record after the first event");
    if (r->startup_seen)
        return rr_fail(r, err, "a second start-up record");
    if (ns > STARTUP_MAX_NS)
        return rr_fail(r, err, "start-up time over 30 days");
    r->startup_ns = ns;
    r->startup_seen = 1;
    return 0;
}

/* ---- events -------------------------------------------------------------------- */

static inline __attribute__((always_inline)) int32_t world_of(const ph_trace *t, uint32_t comm,
                                                              int32_t rank, int remote)
{
    if (rank < 0 || comm >= t->ncomms)
        return rank;
    const ph_comm_info *ci = &t->comms[comm];
    if (remote && ci->remote_size)
        return (uint32_t)rank < ci->remote_size ? ci->remote[rank] : PH_NO_RANK;
    return (uint32_t)rank < ci->size ? ci->members[rank] : PH_NO_RANK;
}

static uint64_t req_ref(ph_rank_reader *r, uint64_t ref)
{
    if (ref == 0)
        return 0;
    if (ref == 1)
        return UINT64_MAX;
    if (ref - 2 >= r->next_req) { /* ids start at 1 */
        r->c.bad = 1;
        return 0;
    }
    return r->next_req - (ref - 2);
}

static void read_status(ph_rank_reader *r, uint32_t comm, ph_status *s)
{
    s->source = (int32_t)sv(&r->c);
    s->source_world = PH_NO_RANK;
    s->tag = 0;
    s->bytes = 0;
    if (s->source == PH_NO_RANK)
        return;
    s->tag = (int32_t)sv(&r->c);
    s->bytes = uv(&r->c);
    int inter = comm < r->t->ncomms && r->t->comms[comm].remote_size;
    s->source_world = world_of(r->t, comm, s->source, inter);
}

static ph_status *statuses(ph_rank_reader *r, uint32_t n)
{
    return grow_to(&r->g_status, (n ? n : 1) * sizeof(ph_status));
}

/* count elements of datatype idx, in bytes; *wraps set when that passes
 * 2^64 (wrapped, it would be a small, wrong size) */
static uint64_t type_bytes(ph_rank_reader *r, uint64_t idx, int64_t count, int *wraps)
{
    if (idx >= r->ntype_size || r->type_size[idx] == UINT64_MAX) {
        r->c.bad = 1;
        return 0;
    }
    uint64_t bytes;
    *wraps |= __builtin_mul_overflow((uint64_t)(count < 0 ? 0 : count), r->type_size[idx], &bytes);
    return bytes;
}

static int read_vec(ph_rank_reader *r, grow *g, uint32_t *n, const uint64_t **out)
{
    uint64_t k = uv(&r->c);
    if (!plausible(&r->c, k))
        return -1;
    uint64_t *v = grow_to(g, (k ? k : 1) * sizeof *v);
    if (!v)
        return -1;
    for (uint64_t i = 0; i < k; i++)
        v[i] = uv(&r->c);
    *n = (uint32_t)k;
    *out = v;
    return 0;
}

static int completes_requests(int kind)
{
    switch (kind) {
    case PH_K_WAIT: case PH_K_WAITALL: case PH_K_WAITANY: case PH_K_WAITSOME:
    case PH_K_TEST: case PH_K_TESTALL: case PH_K_TESTANY: case PH_K_TESTSOME:
    case PH_K_REQUEST_FREE: case PH_K_MRECV: case PH_K_IMRECV:
        return 1;
    default:
        return 0;
    }
}

/* Requests this event created and completed, for req_comm.  Most events
 * complete none: they return first (in the switch below, GCC placed their
 * case in the function's cold part, two far jumps an event). */
static int track_requests(ph_rank_reader *r, const ph_op_info *info, const ph_event *ev)
{
    int k = info->kind;
    if (!completes_requests(k))
        return ev->newreq ? rq_add(r, ev->newreq, ev->comm, k == PH_K_PSEND || k == PH_K_PRECV) : 0;
    uint32_t comm = k == PH_K_IMRECV ? req_comm(r, ev, 0) : ev->comm;
    uint32_t done_n = 0;
    const int32_t *done = NULL;
    int32_t one = 0, all = 0;
    switch (k) {
    case PH_K_WAIT: case PH_K_REQUEST_FREE: case PH_K_MRECV: case PH_K_IMRECV:
        done = &one, done_n = ev->nreqs ? 1 : 0;
        break;
    case PH_K_TEST:
        done = &one, done_n = ev->flag > 0;
        break;
    case PH_K_WAITALL: case PH_K_TESTALL:
        all = k == PH_K_WAITALL || ev->flag > 0;
        break;
    case PH_K_WAITANY: case PH_K_TESTANY:
        if (ev->index >= 0 && ev->index != PH_UNDEFINED)
            one = ev->index, done = &one, done_n = 1;
        break;
    case PH_K_WAITSOME: case PH_K_TESTSOME:
        if (ev->ncompleted != UINT32_MAX)
            done = ev->completed, done_n = ev->ncompleted;
        break;
    default:
        break;
    }
    for (uint32_t i = 0; i < (all ? ev->nreqs : done_n); i++) {
        struct reqcomm *q = rq_find(r, ev->reqs[all ? i : (uint32_t)done[i]]);
        if (q && (!q->persistent || k == PH_K_REQUEST_FREE))
            rq_remove(r, q);
    }
    if (ev->newreq)
        return rq_add(r, ev->newreq, comm, k == PH_K_PSEND || k == PH_K_PRECV);
    return 0;
}

/* An event with nothing set: a copy of it is vector moves where memset of
 * a ph_event is `rep stos`, which costs more than decoding a small event. */
static const ph_event no_event;

/* The fields most point-to-point calls begin with (Send, Recv, Isend,
 * Irecv, Sendrecv, their modes, ...): read in a row, not through the field
 * loop's switch, whose dispatch cost about as much as their decoding
 * (callgrind, recorded LAMMPS traces: 3% of a prediction). */
static const uint8_t p2p_fields[] = {PH_F_COMM, PH_F_PEER, PH_F_TAG, PH_F_COUNT, PH_F_DTYPE};

static inline int read_comm_field(ph_rank_reader *r, ph_event *ev, ph_err *err)
{
    long id = local_get(&r->comms, uv(&r->c));
    if (id < 0 && !r->c.bad)
        return rr_fail(r, err, "undefined communicator");
    ev->comm = (uint32_t)id;
    return 0;
}

static int read_event(ph_rank_reader *r, unsigned op, ph_event *ev, ph_err *err)
{
    cursor *c = &r->c;
    const ph_op_info *info = ph_op(op);
    if (!info)
        return rr_fail(r, err, "unknown op id");
    *ev = no_event;
    ev->op = (uint16_t)op;
    ev->seq = r->next_index;
    if (__builtin_expect(r->next_index == 0, 0))
        ev->startup_ns = r->startup_ns;
    int64_t gap = sv(c);
    uint64_t dur = uv(c);
    ev->t_entry = r->prev_exit + (uint64_t)gap;
    ev->t_exit = ev->t_entry + dur;
    uint64_t site = uv(c);
    long sid = local_get(&r->sites, site);
    if (sid < 0 && !c->bad)
        return rr_fail(r, err, "undefined call site");
    ev->site = (uint32_t)sid;
    ev->comm = PH_COMM_NULL;
    ev->newcomm = PH_COMM_NULL;
    ev->peer = ev->peer_world = ev->rpeer = ev->rpeer_world = ev->root = PH_NO_RANK;
    ev->flag = -1;
    ev->index = -1;
    int32_t any_index = -1;
    uint64_t dtype = 0, rdtype = 0;
    int has_dtype = 0, has_rdtype = 0;
    const uint8_t *fp = info->fields;
    if (memcmp(fp, p2p_fields, sizeof p2p_fields) == 0) {
        if (read_comm_field(r, ev, err) < 0)
            return -1;
        ev->peer = (int32_t)sv(c);
        ev->tag = (int32_t)sv(c);
        ev->count = (int64_t)uv(c);
        dtype = uv(c);
        has_dtype = 1;
        fp += sizeof p2p_fields;
    }
    for (; *fp && !c->bad; fp++) {
        switch (*fp) {
        case PH_F_COMM:
            if (read_comm_field(r, ev, err) < 0)
                return -1;
            break;
        case PH_F_PEER: ev->peer = (int32_t)sv(c); break;
        case PH_F_TAG: ev->tag = (int32_t)sv(c); break;
        case PH_F_COUNT: ev->count = (int64_t)uv(c); break;
        case PH_F_DTYPE: dtype = uv(c); has_dtype = 1; break;
        case PH_F_RPEER: ev->rpeer = (int32_t)sv(c); break;
        case PH_F_RTAG: ev->rtag = (int32_t)sv(c); break;
        case PH_F_RCOUNT: ev->rcount = (int64_t)uv(c); break;
        case PH_F_RDTYPE: rdtype = uv(c); has_rdtype = 1; break;
        case PH_F_ROOT: ev->root = (int32_t)sv(c); break;
        case PH_F_SBYTESV:
            if (read_vec(r, &r->g_sb, &ev->nsbytes, &ev->sbytes) < 0)
                return rr_fail(r, err, "byte vector");
            break;
        case PH_F_RBYTESV:
            if (read_vec(r, &r->g_rb, &ev->nrbytes, &ev->rbytes_v) < 0)
                return rr_fail(r, err, "byte vector");
            break;
        case PH_F_INT: ev->ival = sv(c); break;
        case PH_F_NEWCOMM: {
            uint64_t v = uv(c);
            if (v) {
                long id = local_get(&r->comms, v - 1);
                if (id < 0 && !c->bad)
                    return rr_fail(r, err, "undefined new communicator");
                ev->newcomm = (uint32_t)id;
            }
            break;
        }
        case PH_F_NEWREQ:
        case PH_F_NEWREQ_IF_FLAG:
            if (*fp == PH_F_NEWREQ_IF_FLAG && ev->flag <= 0)
                break;
            /* ids 0 and UINT64_MAX mean none and foreign: a block header's
             * count so high that they come next is corrupt */
            if (r->next_req >= UINT64_MAX - 1)
                return rr_fail(r, err, "request ids run out");
            ev->newreq = ++r->next_req;
            break;
        case PH_F_REQ: {
            uint64_t *v = grow_to(&r->g_reqs, sizeof *v);
            if (!v)
                return rr_fail(r, err, "memory");
            v[0] = req_ref(r, uv(c));
            ev->nreqs = 1;
            ev->reqs = v;
            break;
        }
        case PH_F_REQS: {
            uint64_t n = uv(c);
            if (!plausible(c, n))
                return rr_fail(r, err, "request count");
            uint64_t *v = grow_to(&r->g_reqs, (n ? n : 1) * sizeof *v);
            if (!v)
                return rr_fail(r, err, "memory");
            for (uint64_t i = 0; i < n; i++)
                v[i] = req_ref(r, uv(c));
            ev->nreqs = (uint32_t)n;
            ev->reqs = v;
            break;
        }
        case PH_F_FLAG: ev->flag = (int32_t)uv(c); break;
        case PH_F_STATUS:
        case PH_F_STATUS_IF_FLAG:
            if (*fp == PH_F_STATUS || ev->flag > 0) {
                ph_status *s = statuses(r, 1);
                read_status(r, req_comm(r, ev, 0), s);
                ev->nstatus = 1;
                ev->status = s;
            }
            break;
        case PH_F_STATUSES:
        case PH_F_STATUSES_IF_FLAG:
            if (*fp == PH_F_STATUSES || ev->flag > 0) {
                ph_status *s = statuses(r, ev->nreqs);
                for (uint32_t i = 0; i < ev->nreqs && !c->bad; i++)
                    read_status(r, req_comm(r, ev, i), &s[i]);
                ev->nstatus = ev->nreqs;
                ev->status = s;
            }
            break;
        case PH_F_ANY:
        case PH_F_ANY_IF_FLAG:
            if (*fp == PH_F_ANY || ev->flag > 0) {
                any_index = (int32_t)sv(c);
                ev->index = any_index;
                if (any_index != PH_UNDEFINED) {
                    if (any_index < 0 || (uint32_t)any_index >= ev->nreqs)
                        return rr_fail(r, err, "completed index");
                    ph_status *s = statuses(r, 1);
                    read_status(r, req_comm(r, ev, (uint32_t)any_index), s);
                    ev->nstatus = 1;
                    ev->status = s;
                }
            }
            break;
        case PH_F_SOME: {
            uint64_t n = uv(c);
            if (n == 0) {
                ev->ncompleted = UINT32_MAX;
                break;
            }
            n--;
            if (n > ev->nreqs)
                return rr_fail(r, err, "completed count");
            int32_t *idx = grow_to(&r->g_done, (n ? n : 1) * sizeof *idx);
            ph_status *s = statuses(r, (uint32_t)n);
            if (!idx || !s)
                return rr_fail(r, err, "memory");
            for (uint64_t i = 0; i < n && !c->bad; i++) {
                idx[i] = (int32_t)uv(c);
                if ((uint32_t)idx[i] >= ev->nreqs)
                    return rr_fail(r, err, "completed index");
                read_status(r, req_comm(r, ev, (uint32_t)idx[i]), &s[i]);
            }
            ev->ncompleted = (uint32_t)n;
            ev->completed = idx;
            ev->nstatus = (uint32_t)n;
            ev->status = s;
            break;
        }
        default:
            return rr_fail(r, err, "unknown field kind");
        }
    }
    int wraps = 0;
    if (has_dtype)
        ev->bytes = type_bytes(r, dtype, ev->count, &wraps);
    if (has_rdtype)
        ev->rbytes = type_bytes(r, rdtype, ev->rcount, &wraps);
    else if (has_dtype && ev->rcount) /* Reduce_scatter_block: one datatype for both */
        ev->rbytes = type_bytes(r, dtype, ev->rcount, &wraps);
    if (c->bad)
        return rr_fail(r, err, "event truncated or datatype undefined");
    if (wraps)
        return rr_fail(r, err, "count times datatype size passes 2^64 bytes");
    int inter = ev->comm < r->t->ncomms && r->t->comms[ev->comm].remote_size;
    ev->peer_world = world_of(r->t, ev->comm, ev->peer, inter);
    ev->rpeer_world = world_of(r->t, ev->comm, ev->rpeer, inter);
    if (track_requests(r, info, ev) < 0)
        return rr_fail(r, err, "memory");
    r->prev_exit = ev->t_exit;
    r->next_index++;
    return 1;
}

static int start_block(ph_rank_reader *r, ph_err *err)
{
    r->c.start = r->c.p = r->f.blk;
    r->c.end = r->f.blk + r->f.blklen;
    r->c.bad = 0;
    uint64_t first = uv(&r->c), base = uv(&r->c), next_req = uv(&r->c);
    if (r->c.bad)
        return rr_fail(r, err, "block header");
    if (first != r->next_index) {
        ph_err_set(err, "%s: offset %zu: block starts at event %llu, expected %llu (a block is missing)",
                   r->f.path, r->f.frame_off, (unsigned long long)first,
                   (unsigned long long)r->next_index);
        return -1;
    }
    if (first > 0 && base != r->prev_exit) { /* a block decodes alone, but continues the timeline */
        ph_err_set(err, "%s: offset %zu: block starts at time %llu, the previous one ended at %llu",
                   r->f.path, r->f.frame_off, (unsigned long long)base, (unsigned long long)r->prev_exit);
        return -1;
    }
    r->prev_exit = base;
    r->next_req = next_req;
    r->in_block = 1;
    return 0;
}

/* A reader read its rank's stream to the end: the trace keeps what only
 * the end tells (counters, END), so that asking for them later, as
 * phantom predict does after its simulation, reads the stream no more. */
static void keep_end(ph_rank_reader *r)
{
    ph_trace *t = r->t;
    if (r->defs_only || r->rank >= t->nranks)
        return;
    pthread_mutex_lock(&t->ends_lock);
    rank_end *e = &t->ends[r->rank];
    if (!e->scanned) {
        e->counts = r->counts;
        r->counts.c = NULL;
        r->counts.n = 0;
        e->complete = r->complete;
        e->scanned = 1;
    }
    pthread_mutex_unlock(&t->ends_lock);
}

unsigned ph_rank_hot_lines(void) { return READER_HOT_LINES; }

int ph_rank_next(ph_rank_reader *r, ph_event *ev, ph_err *err)
{
    for (;;) {
        if (!r->in_block || r->c.p >= r->c.end) {
            r->in_block = 0;
            int rc = frames_next(&r->f, err);
            if (rc == 0)
                keep_end(r);
            if (rc <= 0)
                return rc;
            if (start_block(r, err) < 0)
                return -1;
            continue;
        }
        unsigned type = *r->c.p++;
        int rc = 0;
        switch (type) {
        case PH_REC_COMM_DEF: rc = read_comm_def(r, err); break;
        case PH_REC_SITE_DEF: rc = read_site_def(r, err); break;
        case PH_REC_TYPE_DEF: rc = read_type_def(r, err); break;
        case PH_REC_MODULE_DEF: rc = read_module_def(r, err); break;
        case PH_REC_COUNTERS: rc = read_counters(r, 0, err); break;
        case PH_REC_COUNTERS_TIMED: rc = read_counters(r, 1, err); break;
        case PH_REC_NOTE: rc = read_note(r, err); break;
        case PH_REC_END: r->complete = 1; break;
        case PH_REC_STARTUP: rc = read_startup(r, err); break;
        default:
            if (type < PH_REC_ESCAPE) /* an event: the common case */
                return read_event(r, type, ev, err);
            if (type == PH_REC_ESCAPE)
                return read_event(r, (unsigned)uv(&r->c), ev, err);
            if (type < PH_REC_EXTENSION)
                return rr_fail(r, err, "unknown record type");
            /* a later minor version's record, which says how long it is: skipped */
            if (!bytes(&r->c, uv(&r->c)) || r->c.bad)
                return rr_fail(r, err, "extension record truncated");
            break;
        }
        if (rc < 0)
            return -1;
    }
}

/* Opens rank's file with extension ext into f, checking that its header
 * belongs to this trace; with read_first, reads its first frame too, on the
 * same descriptor (an event file's reader always reads on; a log's first
 * frame can be 80 MiB, and `phantom replay` opens every log it will need
 * only to check it, before a job starts). */
static int open_rank_file(ph_trace *t, uint32_t rank, const char *ext, const char *magic, int read_first,
                          frames *f, ph_err *err)
{
    if (rank >= t->nranks) {
        ph_err_set(err, "%s: no rank %u (the trace has %u ranks)", t->dir, rank, t->nranks);
        return -1;
    }
    char *path = rank_path(t, rank, ext);
    if (!path) {
        ph_err_set(err, "out of memory");
        return -1;
    }
    slot *sl = NULL;
    size_t have = 0;
    int fd = -1;
    if (read_first && !(sl = slot_take()))
        ph_err_set(err, "%s: out of memory", path);
    else
        fd = frames_open(f, path, magic, sl, &have, err);
    int rc = fd < 0 ? -1 : 0;
    if (rc == 0 && (f->hdr.rank != rank || f->hdr.nranks != t->nranks)) {
        ph_err_set(err, "%s: offset 12: header says rank %u of %u, expected rank %u of %u (mixed traces?)",
                   path, f->hdr.rank, f->hdr.nranks, rank, t->nranks);
        rc = -1;
    }
    if (rc == 0 && read_first) {
        rc = frames_load(f, fd, sl, have, err);
        f->ready = rc > 0;
    }
    if (fd >= 0)
        close(fd);
    if (sl)
        slot_give(sl);
    free(path);
    return rc < 0 ? -1 : 0;
}

static ph_rank_reader *rank_open(ph_trace *t, uint32_t rank, int defs_only, ph_err *err)
{
    ph_rank_reader *r = aligned_alloc(64, (sizeof *r + 63) & ~(size_t)63);
    if (!r) {
        ph_err_set(err, "out of memory");
        return NULL;
    }
    memset(r, 0, sizeof *r);
    r->t = t;
    r->rank = rank;
    r->defs_only = defs_only;
    local_init(&r->comms);
    local_init(&r->sites);
    local_init(&r->modules_idx);
    int rc = open_rank_file(t, rank, "evt", PH_MAGIC_EVT, 1, &r->f, err);
    /* world is local communicator 0 (trace id 0); datatype 0 is "none" */
    r->type_size = r->type_inl;
    r->ntype_size = TYPE_INLINE;
    for (int i = 0; i < TYPE_INLINE; i++)
        r->type_inl[i] = i == 0 ? 0 : UINT64_MAX;
    if (rc < 0 || local_set(&r->comms, 0, 0) < 0) {
        ph_rank_close(r);
        return NULL;
    }
    return r;
}

ph_rank_reader *ph_rank_open(ph_trace *t, uint32_t rank, ph_err *err)
{
    return rank_open(t, rank, 0, err);
}

int ph_rank_complete(const ph_rank_reader *r) { return r->complete; }
const char *ph_rank_note(const ph_rank_reader *r) { return r->note; }

static void free_counters(counters *c)
{
    for (size_t i = 0; i < c->n; i++)
        free((char *)c->c[i].name);
    free(c->c);
    c->c = NULL;
    c->n = 0;
}

void ph_rank_close(ph_rank_reader *r)
{
    if (!r)
        return;
    frames_close(&r->f);
    local_free(&r->comms);
    local_free(&r->sites);
    local_free(&r->modules_idx);
    if (r->type_size != r->type_inl)
        free(r->type_size);
    for (size_t i = 0; i < r->nmodules; i++)
        free(r->modules[i]);
    free(r->modules);
    free(r->g_reqs.p);
    free(r->g_sb.p);
    free(r->g_rb.p);
    free(r->g_done.p);
    free(r->g_status.p);
    free(r->note);
    free(r->rq);
    free_counters(&r->counts);
    free(r);
}

/* ---- opening a trace -------------------------------------------------------------- */

static int load_tables_from_meta(ph_trace *t, ph_err *err)
{
    json_t *comms = json_object_get(t->meta, "comms");
    json_t *sites = json_object_get(t->meta, "sites");
    size_t i;
    json_t *v;
    json_array_foreach(comms, i, v) {
        json_t *m = json_object_get(v, "members"), *rm = json_object_get(v, "remote");
        const char *g = json_string_value(json_object_get(v, "gid"));
        size_t n = json_array_size(m), rn = json_array_size(rm);
        int32_t *a = malloc((n + 1) * sizeof *a), *b = malloc((rn + 1) * sizeof *b);
        char why[96] = "";
        if (!a || !b)
            snprintf(why, sizeof why, "out of memory");
        else if (!g)
            snprintf(why, sizeof why, "no \"gid\"");
        else if (n == 0)
            snprintf(why, sizeof why, "no \"members\"");
        else if (n > t->nranks || rn > t->nranks)
            snprintf(why, sizeof why, "%zu %smembers, the trace has %u ranks", n > t->nranks ? n : rn,
                     n > t->nranks ? "" : "remote ", t->nranks);
        else if ((uint64_t)json_integer_value(json_object_get(v, "id")) != t->ncomms)
            snprintf(why, sizeof why, "\"id\" is not %u", t->ncomms);
        for (size_t k = 0; !*why && k < n + rn; k++) { /* world ranks, like the stream's */
            json_t *x = json_array_get(k < n ? m : rm, k < n ? k : k - n);
            if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) >= (json_int_t)t->nranks)
                snprintf(why, sizeof why, "%s %zu is not a rank below %u", k < n ? "member" : "remote member",
                         k < n ? k : k - n, t->nranks);
            else
                (k < n ? a : b)[k < n ? k : k - n] = (int32_t)json_integer_value(x);
        }
        int rc = *why ? 0 : add_comm(t, strtoull(g, NULL, 16), (uint32_t)n, a, (uint32_t)rn, b);
        if (rc < 0)
            snprintf(why, sizeof why, rc == -2 ? "a rank is listed twice" : "out of memory");
        free(a);
        free(b);
        if (*why) {
            ph_err_set(err, "%s/meta.json: communicator table entry %zu is malformed: %s", t->dir, i, why);
            return -1;
        }
    }
    json_array_foreach(sites, i, v) {
        json_t *fr = json_object_get(v, "frames");
        const char *g = json_string_value(json_object_get(v, "gid"));
        size_t n = json_array_size(fr);
        if (!g || n > 64) {
            ph_err_set(err, "%s/meta.json: call-site table entry %zu is malformed", t->dir, i);
            return -1;
        }
        char *mods[64];
        uint64_t offs[64];
        for (size_t k = 0; k < n; k++) {
            json_t *f = json_array_get(fr, k);
            mods[k] = (char *)json_string_value(json_object_get(f, "module"));
            offs[k] = (uint64_t)json_integer_value(json_object_get(f, "offset"));
        }
        if (add_site(t, strtoull(g, NULL, 16), (uint32_t)n, mods, offs,
                     json_string_value(json_object_get(v, "function")),
                     json_string_value(json_object_get(v, "file")),
                     (int)json_integer_value(json_object_get(v, "line"))) < 0 ||
            set_site_caller(t, strtoull(g, NULL, 16), json_object_get(v, "caller")) < 0) {
            ph_err_set(err, "out of memory");
            return -1;
        }
    }
    return 0;
}

static int cmp_site(const void *a, const void *b)
{
    uint64_t x = ((const ph_site_info *)a)->gid, y = ((const ph_site_info *)b)->gid;
    return x < y ? -1 : x > y;
}

static int cmp_comm(const void *a, const void *b)
{
    const ph_comm_info *x = a, *y = b;
    int32_t mx = x->size ? x->members[0] : 0, my = y->size ? y->members[0] : 0;
    if (x->gid == 0 || y->gid == 0) /* world first */
        return x->gid == 0 ? (y->gid == 0 ? 0 : -1) : 1;
    if (mx != my)
        return mx < my ? -1 : 1;
    return x->gid < y->gid ? -1 : x->gid > y->gid;
}

static void rebuild_index(gid_map *m, const uint64_t *gids, size_t stride_n, const void *base,
                          size_t stride)
{
    m->n = 0;
    for (size_t i = 0; i < stride_n; i++)
        gid_insert(m, *(const uint64_t *)((const char *)base + i * stride), (uint32_t)i);
    (void)gids;
}

/* Unfinished trace: decode every rank once to collect the definitions, then
 * number them deterministically (world first; then by lowest member and gid). */
static int prescan(ph_trace *t, ph_err *err)
{
    for (uint32_t rank = 0; rank < t->nranks; rank++) {
        ph_rank_reader *r = rank_open(t, rank, 1, err);
        if (!r)
            return -1;
        ph_event ev;
        int rc;
        while ((rc = ph_rank_next(r, &ev, err)) > 0)
            ;
        ph_rank_close(r);
        if (rc < 0)
            return -1;
    }
    if (t->ncomms > 1)
        qsort(t->comms, t->ncomms, sizeof *t->comms, cmp_comm);
    if (t->nsites > 1)
        qsort(t->sites, t->nsites, sizeof *t->sites, cmp_site);
    rebuild_index(&t->comm_ids, NULL, t->ncomms, t->comms, sizeof *t->comms);
    rebuild_index(&t->site_ids, NULL, t->nsites, t->sites, sizeof *t->sites);
    return 0;
}

ph_trace *ph_trace_open(const char *dir, ph_err *err)
{
    ph_trace *t = calloc(1, sizeof *t);
    if (!t) {
        ph_err_set(err, "out of memory");
        return NULL;
    }
    t->dir = strdup(dir);
    /* "lu.trace/", as a shell completes it, names its files lu.trace/meta.json */
    for (size_t n = t->dir ? strlen(t->dir) : 0; n > 1 && t->dir[n - 1] == '/';)
        t->dir[--n] = '\0';
    char *mp = NULL;
    if (!t->dir || asprintf(&mp, "%s/meta.json", t->dir) < 0) {
        mp = NULL;
        ph_err_set(err, "out of memory");
        goto fail;
    }
    const char *why = ph_not_dir(dir);
    if (why) {
        ph_err_set(err, "%s: not a trace directory (%s)", dir, why);
        goto fail;
    }
    json_error_t je;
    t->meta = json_load_file(mp, 0, &je);
    if (!t->meta) {
        if (access(mp, F_OK) != 0)
            ph_err_set(err, "%s: missing (not a phantom trace, or the job never reached MPI_Init)", mp);
        else
            ph_err_set(err, "%s: offset %d: bad JSON: %s", mp, je.position, je.text);
        goto fail;
    }
    if (strcmp(json_string_value(json_object_get(t->meta, "format")) ?: "", "phantom-trace") != 0) {
        ph_err_set(err, "%s: not a phantom trace (\"format\" is not \"phantom-trace\")", mp);
        goto fail;
    }
    const char *ver = json_string_value(json_object_get(t->meta, "version"));
    if (!ver || atoi(ver) != PH_FORMAT_MAJOR) {
        ph_err_set(err, "%s: format version %s, this phantom reads %d.x", mp, ver ? ver : "(none)",
                   PH_FORMAT_MAJOR);
        goto fail;
    }
    json_int_t nr = json_integer_value(json_object_get(t->meta, "ranks"));
    if (nr <= 0 || nr > (1 << 24)) {
        ph_err_set(err, "%s: bad \"ranks\" value", mp);
        goto fail;
    }
    t->nranks = (uint32_t)nr;
    json_t *probe = json_object_get(json_object_get(t->meta, "clock"), "probe_gap_ns");
    if (probe && !(json_is_number(probe) && json_number_value(probe) >= 0 && json_number_value(probe) < 1e6)) {
        ph_err_set(err, "%s: \"clock\".\"probe_gap_ns\" is not a time in ns (0 to 1e6)", mp);
        goto fail;
    }
    t->probe_gap_ns = probe ? (uint64_t)(json_number_value(probe) + 0.5) : 0;
    json_t *mode = json_object_get(t->meta, "mode");
    if (json_is_true(json_object_get(mode, "log")))
        t->flags |= PH_FLAG_LOG;
    if (json_string_value(json_object_get(mode, "log_ranks")))
        t->flags |= PH_FLAG_SUBGROUP;
    t->ends = calloc(t->nranks, sizeof *t->ends);
    pthread_mutex_init(&t->ends_lock, NULL);
    int32_t *world = malloc(t->nranks * sizeof *world);
    if (!t->ends || !world) {
        free(world);
        ph_err_set(err, "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < t->nranks; i++)
        world[i] = (int32_t)i;
    json_t *comms = json_object_get(t->meta, "comms");
    if (json_is_array(comms)) {
        if (load_tables_from_meta(t, err) < 0) {
            free(world);
            goto fail;
        }
        /* Now in the tables.  The two are most of meta.json, and jansson
         * holds them in three to five times their text (487 KB for
         * NWChem's 145 KB); freed, that memory serves the reading and the
         * simulation, whose fresh pages would cost a page fault each. */
        json_object_del(t->meta, "sites");
        json_object_del(t->meta, "comms");
        if (t->ncomms == 0 || t->comms[0].gid != 0 || t->comms[0].size != t->nranks) {
            free(world);
            ph_err_set(err, "%s: communicator 0 must be MPI_COMM_WORLD with %u ranks", mp, t->nranks);
            goto fail;
        }
    } else {
        add_comm(t, 0, t->nranks, world, 0, NULL);
        if (prescan(t, err) < 0) {
            free(world);
            goto fail;
        }
    }
    free(world);
    free(mp);
    return t;
fail:
    free(mp);
    ph_trace_close(t);
    return NULL;
}

void ph_trace_close(ph_trace *t)
{
    if (!t)
        return;
    for (uint32_t i = 0; i < t->ncomms; i++) {
        free(t->comms[i].members);
        free(t->comms[i].remote);
    }
    free(t->comms);
    for (uint32_t i = 0; i < t->nsites; i++) {
        for (uint32_t k = 0; k < t->sites[i].nframes; k++)
            free(t->sites[i].modules[k]);
        free(t->sites[i].modules);
        free(t->sites[i].offsets);
        free(t->sites[i].function);
        free(t->sites[i].caller_function);
        free(t->sites[i].caller_file);
        free(t->sites[i].file);
    }
    free(t->sites);
    free(t->comm_ids.gid);
    free(t->comm_ids.id);
    free(t->site_ids.gid);
    free(t->site_ids.id);
    if (t->ends) {
        for (uint32_t i = 0; i < t->nranks; i++)
            free_counters(&t->ends[i].counts);
        pthread_mutex_destroy(&t->ends_lock);
    }
    free(t->ends);
    for (size_t i = 0; i < t->nstrings; i++)
        free(t->strings[i]);
    free(t->strings);
    json_decref(t->meta);
    free(t->dir);
    free(t);
}

uint32_t ph_trace_nranks(const ph_trace *t) { return t->nranks; }
const char *ph_trace_dir(const ph_trace *t) { return t->dir; }
uint32_t ph_trace_flags(const ph_trace *t) { return t->flags; }
uint32_t ph_trace_ncomms(const ph_trace *t) { return t->ncomms; }
uint32_t ph_trace_nsites(const ph_trace *t) { return t->nsites; }

const ph_comm_info *ph_trace_comm(const ph_trace *t, uint32_t id)
{
    return id < t->ncomms ? &t->comms[id] : NULL;
}

uint32_t ph_trace_comm_other_side(const ph_trace *t, uint32_t id)
{
    const ph_comm_info *c = ph_trace_comm(t, id);
    uint32_t other = id;
    for (uint32_t i = 0; c && c->remote_size && i < t->ncomms; i++) {
        int side = i == id ? 0 : ph_comm_other_side(c, &t->comms[i]);
        if (side == 2)
            return i;
        if (side == 1 && other == id)
            other = i;
    }
    return other;
}

const ph_site_info *ph_trace_site(const ph_trace *t, uint32_t id)
{
    return id < t->nsites ? &t->sites[id] : NULL;
}

uint64_t ph_trace_probe_gap_ns(const ph_trace *t)
{
    return t->probe_gap_ns;
}

const char *ph_trace_meta(const ph_trace *t, const char *key)
{
    json_t *v = t->meta;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", key);
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && v; k = strtok_r(NULL, ".", &save))
        v = json_object_get(v, k);
    if (!v || json_is_null(v))
        return NULL;
    if (json_is_string(v))
        return json_string_value(v);
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    char **a = realloc(((ph_trace *)t)->strings, (t->nstrings + 1) * sizeof *a);
    if (!s || !a) {
        free(s);
        return NULL;
    }
    ((ph_trace *)t)->strings = a;
    a[((ph_trace *)t)->nstrings++] = s;
    return s;
}

/* Rank RANK's end, reading its stream through once if need be (keep_end
 * keeps it); NULL if it cannot be read (then the next call tries again). */
static const rank_end *rank_end_of(ph_trace *t, uint32_t rank)
{
    if (rank >= t->nranks)
        return NULL;
    rank_end *e = &t->ends[rank];
    pthread_mutex_lock(&t->ends_lock);
    int scanned = e->scanned;
    pthread_mutex_unlock(&t->ends_lock);
    if (!scanned) {
        ph_err err;
        ph_rank_reader *r = ph_rank_open(t, rank, &err);
        if (!r)
            return NULL;
        ph_event ev;
        int rc;
        while ((rc = ph_rank_next(r, &ev, &err)) > 0)
            ;
        ph_rank_close(r);
        if (rc < 0)
            return NULL;
    }
    return e;
}

int ph_trace_counters(ph_trace *t, uint32_t rank, const ph_counter **out, size_t *n)
{
    const rank_end *e = rank_end_of(t, rank);
    if (!e)
        return -1;
    *out = e->counts.c;
    *n = e->counts.n;
    return 0;
}

static int cmp_untraced_fn(const void *key, const void *fn)
{
    return strcmp(key, ((const ph_untraced_fn *)fn)->name);
}

ph_untraced ph_untraced_kind(const char *name)
{
    const ph_untraced_fn *f = bsearch(name, ph_untraced_fns, ph_nuntraced_fns, sizeof *f, cmp_untraced_fn);
    return f ? (ph_untraced)f->kind : PH_UNTRACED_OTHER;
}

const char *ph_untraced_name(ph_untraced kind)
{
    return kind < PH_UNTRACED_KINDS ? ph_untraced_names[kind] : ph_untraced_names[PH_UNTRACED_OTHER];
}

int ph_trace_rank_complete(ph_trace *t, uint32_t rank)
{
    const rank_end *e = rank_end_of(t, rank);
    return e ? e->complete : -1;
}

/* ---- message log ------------------------------------------------------------------ */

struct ph_log_reader {
    frames f;
    cursor c;
    int in_block;
};

ph_log_reader *ph_log_open(ph_trace *t, uint32_t rank, ph_err *err)
{
    ph_log_reader *r = calloc(1, sizeof *r);
    if (!r) {
        ph_err_set(err, "out of memory");
        return NULL;
    }
    if (open_rank_file(t, rank, "log", PH_MAGIC_LOG, 0, &r->f, err) < 0) {
        ph_log_close(r);
        return NULL;
    }
    return r;
}

int ph_log_next(ph_log_reader *r, ph_log_record *rec, ph_err *err)
{
    for (;;) {
        if (!r->in_block || r->c.p >= r->c.end) {
            int rc = frames_next(&r->f, err);
            if (rc <= 0)
                return rc;
            r->c.start = r->c.p = r->f.blk;
            r->c.end = r->f.blk + r->f.blklen;
            r->c.bad = 0;
            r->in_block = 1;
            continue;
        }
        rec->event = uv(&r->c);
        rec->slot = (uint32_t)uv(&r->c);
        rec->len = uv(&r->c);
        rec->data = bytes(&r->c, rec->len);
        if (r->c.bad || !rec->data) {
            ph_err_set(err, "%s: offset %zu: corrupt log block (record truncated at byte %zu of the block)",
                       r->f.path, r->f.frame_off, (size_t)(r->c.p - r->c.start));
            return -1;
        }
        return 1;
    }
}

void *ph_log_take_block(ph_log_reader *r, const ph_log_record *rec)
{
    uint8_t *blk = r->f.blk;
    if (!r->in_block || r->c.p != r->c.end || !blk || rec->data < blk || rec->data > blk + r->f.blklen)
        return NULL;
    r->f.blk = NULL; /* frames_next allocates the next one */
    r->f.blkcap = r->f.blklen = 0;
    r->in_block = 0;
    return blk;
}

void ph_log_close(ph_log_reader *r)
{
    if (!r)
        return;
    frames_close(&r->f);
    free(r);
}
