/* ph_stream.c - write a file as a header plus independent zstd frames.
 *
 * The producer (an MPI wrapper) fills one pre-touched block buffer; a full
 * block goes to a queue that a background thread compresses and writes, so
 * the MPI call that happens to fill a block pays a pointer swap, not a
 * compression.  Each block becomes one zstd frame with a checksum, so a job
 * killed mid-run leaves every flushed frame readable.
 *
 * Failure (disk full, RLIMIT_FSIZE, I/O error) never propagates: the stream
 * records one message and refuses further records.  The writer thread blocks
 * every signal, so SIGXFSZ from a file-size limit turns into EFBIG for us
 * instead of killing the user's job.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "ph_trace.h"

typedef struct block {
    uint8_t *data;
    size_t used, cap;
} block;

struct ph_stream {
    int fd;
    char *path;
    ph_stream_opts o;
    ZSTD_CCtx *cctx;
    uint8_t *zbuf;
    size_t zcap;

    block *blocks;
    int cur; /* block being filled by the producer */

    /* full blocks waiting for the writer, and blocks free for the producer */
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_free;
    int *queue, qhead, qlen;
    int *freelist, nfree;
    int stop, have_thread;
    pthread_t thread;

    _Atomic int failed;
    char errmsg[300];
    uint64_t raw_bytes;
    _Atomic uint64_t file_bytes;
};

static void fail_with(ph_stream *s, const char *what, const char *why)
{
    int expected = 0;
    if (atomic_compare_exchange_strong(&s->failed, &expected, 1))
        snprintf(s->errmsg, sizeof s->errmsg, "%s: %s: %s", s->path, what, why);
}

static void fail(ph_stream *s, const char *what, int e) { fail_with(s, what, strerror(e)); }

static int write_all(ph_stream *s, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n) {
        ssize_t w = write(s->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            fail(s, "write failed", w < 0 ? errno : ENOSPC);
            return -1;
        }
        p += w;
        n -= (size_t)w;
        atomic_fetch_add(&s->file_bytes, (uint64_t)w);
    }
    return 0;
}

/* After a block of one large record (ph_stream_reserve grew it), its
 * buffer goes back to the usual size: the recorder's memory should not stay
 * at the largest message the rank ever received.  Here, in the writer
 * thread for a background stream: a preloaded allocator (AddressSanitizer's)
 * may read the clock inside realloc, and in the program's thread the
 * recorder logs such reads, which would re-enter the stream in the middle
 * of its realloc. */
static void shrink_block(ph_stream *s, block *b)
{
    uint8_t *p;
    if (b->cap > s->o.block_size && (p = realloc(b->data, s->o.block_size))) {
        b->data = p;
        b->cap = s->o.block_size;
    }
}

/* Compress one block into one frame and write it.  The frame goes out
 * through zbuf, which holds a usual block's frame whole: a block of one
 * large record (a logged message of gigabytes, which may not compress at
 * all) is written a zbuf at a time, instead of compressed whole into a
 * second buffer as large as itself.  Its size is pledged first, so the
 * frame header still carries the content size that readers require.  A
 * frame that cannot be written whole is cut off again, so everything
 * before it stays readable. */
static void emit(ph_stream *s, block *b)
{
    if (b->used == 0 || atomic_load(&s->failed))
        return;
    uint64_t before = atomic_load(&s->file_bytes);
    ZSTD_inBuffer in = {b->data, b->used, 0};
    size_t left = ZSTD_CCtx_reset(s->cctx, ZSTD_reset_session_only); /* then: bytes left to flush */
    if (!ZSTD_isError(left))
        left = ZSTD_CCtx_setPledgedSrcSize(s->cctx, b->used);
    while (!ZSTD_isError(left)) {
        ZSTD_outBuffer out = {s->zbuf, s->zcap, 0};
        left = ZSTD_compressStream2(s->cctx, &out, &in, ZSTD_e_end);
        if (!ZSTD_isError(left) && write_all(s, s->zbuf, out.pos) < 0)
            break;
        if (left == 0) {
            shrink_block(s, b);
            return;
        }
    }
    if (ZSTD_isError(left))
        fail_with(s, "compression failed", ZSTD_getErrorName(left));
    if (ftruncate(s->fd, (off_t)before) == 0)
        atomic_store(&s->file_bytes, before);
}

static void *writer_main(void *arg)
{
    ph_stream *s = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->qlen == 0 && !s->stop)
            pthread_cond_wait(&s->cv_work, &s->mu);
        if (s->qlen == 0)
            break;
        int i = s->queue[s->qhead];
        s->qhead = (s->qhead + 1) % s->o.nbuffers;
        s->qlen--;
        pthread_mutex_unlock(&s->mu);
        emit(s, &s->blocks[i]);
        s->blocks[i].used = 0;
        pthread_mutex_lock(&s->mu);
        s->freelist[s->nfree++] = i;
        pthread_cond_signal(&s->cv_free);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void defaults(ph_stream_opts *o, const ph_stream_opts *in)
{
    if (in)
        *o = *in;
    else
        memset(o, 0, sizeof *o);
    if (!o->block_size) /* doc/trace-format.md: what a reader holds per rank */
        o->block_size = PH_BLOCK_DEFAULT;
    if (o->nbuffers < 2)
        o->nbuffers = 4;
    if (!o->level)
        o->level = 1;
}

ph_stream *ph_stream_open(const char *path, const ph_file_header *h,
                          const ph_stream_opts *opts, ph_err *err)
{
    ph_stream *s = calloc(1, sizeof *s);
    if (!s) {
        ph_err_set(err, "%s: out of memory", path);
        return NULL;
    }
    defaults(&s->o, opts);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv_work, NULL);
    pthread_cond_init(&s->cv_free, NULL);
    s->path = strdup(path);
    s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (s->fd < 0) {
        ph_err_set(err, "%s: cannot create: %s", path, strerror(errno));
        goto fail;
    }
    s->cctx = ZSTD_createCCtx();
    s->blocks = calloc((size_t)s->o.nbuffers, sizeof *s->blocks);
    s->queue = calloc((size_t)s->o.nbuffers, sizeof *s->queue);
    s->freelist = calloc((size_t)s->o.nbuffers, sizeof *s->freelist);
    s->zcap = ZSTD_compressBound(s->o.block_size);
    s->zbuf = malloc(s->zcap);
    if (!s->cctx || !s->blocks || !s->queue || !s->freelist || !s->zbuf) {
        ph_err_set(err, "%s: out of memory", path);
        goto fail;
    }
    ZSTD_CCtx_setParameter(s->cctx, ZSTD_c_compressionLevel, s->o.level);
    ZSTD_CCtx_setParameter(s->cctx, ZSTD_c_checksumFlag, 1);
    for (int i = 0; i < s->o.nbuffers; i++) {
        s->blocks[i].data = malloc(s->o.block_size);
        if (!s->blocks[i].data) {
            ph_err_set(err, "%s: out of memory", path);
            goto fail;
        }
        /* A background stream serves a running program (the recorder):
         * touch every page now, not inside a timed MPI call later.  In the
         * foreground (the MPI-free writer of synthetic traces, copies and
         * replay results) there is no call to protect, and 5 MiB of
         * touched pages a rank was most of the time writing thousands. */
        if (s->o.background)
            memset(s->blocks[i].data, 0, s->o.block_size);
        s->blocks[i].cap = s->o.block_size;
        if (i > 0)
            s->freelist[s->nfree++] = i;
    }
    if (s->o.background)
        memset(s->zbuf, 0, s->zcap);
    s->cur = 0;

    uint8_t hdr[PH_HEADER_SIZE];
    ph_header_encode(h, hdr);
    if (write_all(s, hdr, sizeof hdr) < 0) {
        ph_err_set(err, "%s", s->errmsg);
        goto fail;
    }
    if (s->o.background) {
        if (pthread_create(&s->thread, NULL, writer_main, s) != 0) {
            ph_err_set(err, "%s: cannot start the writer thread", path);
            goto fail;
        }
        s->have_thread = 1;
    }
    return s;
fail:
    ph_stream_close(s, NULL);
    return NULL;
}

/* Hand the current block to the writer and take a free one. */
static int submit(ph_stream *s)
{
    block *b = &s->blocks[s->cur];
    if (b->used == 0)
        return 0;
    if (!s->have_thread) {
        emit(s, b);
        b->used = 0;
        return atomic_load(&s->failed) ? -1 : 0;
    }
    pthread_mutex_lock(&s->mu);
    s->queue[(s->qhead + s->qlen) % s->o.nbuffers] = s->cur;
    s->qlen++;
    pthread_cond_signal(&s->cv_work);
    while (s->nfree == 0)
        pthread_cond_wait(&s->cv_free, &s->mu);
    s->cur = s->freelist[--s->nfree];
    pthread_mutex_unlock(&s->mu);
    return atomic_load(&s->failed) ? -1 : 0;
}

static int grow_block(ph_stream *s, block *b, size_t need)
{
    if (need <= b->cap)
        return 0;
    uint8_t *d = realloc(b->data, need);
    if (!d) {
        fail(s, "out of memory for a large record", ENOMEM);
        return -1;
    }
    b->data = d;
    b->cap = need;
    return 0;
}

uint8_t *ph_stream_reserve(ph_stream *s, size_t n)
{
    if (atomic_load_explicit(&s->failed, memory_order_relaxed))
        return NULL;
    block *b = &s->blocks[s->cur];
    if (b->used && b->used + n <= s->o.block_size) /* a grown block takes no more records */
        return b->data + b->used;
    if (b->used) { /* does not fit: this block is done */
        if (submit(s) < 0)
            return NULL;
        b = &s->blocks[s->cur];
    }
    /* A new block: its header first; an oversize record makes the block grow. */
    if (grow_block(s, b, PH_BLOCK_HEADER_MAX + n) < 0)
        return NULL;
    if (s->o.block_start) {
        size_t h = s->o.block_start(s->o.ctx, b->data);
        b->used = h;
        s->raw_bytes += h;
    }
    return b->data + b->used;
}

void ph_stream_commit(ph_stream *s, size_t n)
{
    s->blocks[s->cur].used += n;
    s->raw_bytes += n;
}

size_t ph_stream_block_used(const ph_stream *s) { return s->blocks[s->cur].used; }

int ph_stream_flush(ph_stream *s) { return submit(s); }

const char *ph_stream_error(ph_stream *s) { return atomic_load(&s->failed) ? s->errmsg : NULL; }

uint64_t ph_stream_raw_bytes(const ph_stream *s) { return s->raw_bytes; }

uint64_t ph_stream_file_bytes(const ph_stream *s)
{
    return atomic_load(&((ph_stream *)s)->file_bytes);
}

int ph_stream_close(ph_stream *s, ph_err *err)
{
    if (!s)
        return 0;
    if (s->blocks && s->blocks[s->cur].data && s->fd >= 0)
        submit(s);
    if (s->have_thread) {
        pthread_mutex_lock(&s->mu);
        s->stop = 1;
        pthread_cond_signal(&s->cv_work);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
    }
    if (s->fd >= 0 && close(s->fd) != 0)
        fail(s, "close failed", errno);
    int rc = atomic_load(&s->failed) ? -1 : 0;
    if (rc && err)
        ph_err_set(err, "%s", s->errmsg);
    if (s->blocks)
        for (int i = 0; i < s->o.nbuffers; i++)
            free(s->blocks[i].data);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv_work);
    pthread_cond_destroy(&s->cv_free);
    free(s->blocks);
    free(s->queue);
    free(s->freelist);
    free(s->zbuf);
    ZSTD_freeCCtx(s->cctx);
    free(s->path);
    free(s);
    return rc;
}
