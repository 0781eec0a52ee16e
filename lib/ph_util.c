/* ph_util.c - errors, file headers and small helpers of the trace format. */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ph_trace.h"

void ph_err_set(ph_err *err, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

const char *ph_not_dir(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return strerror(errno);
    return S_ISDIR(st.st_mode) ? NULL : "not a directory";
}

json_t *ph_json_load(const char *path, ph_err *err)
{
    /* opened here: jansson reports a file it cannot open as "line -1" */
    FILE *f = fopen(path, "r");
    if (!f) {
        ph_err_set(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        ph_err_set(err, "%s: is a directory, not a JSON file", path);
        return NULL;
    }
    json_error_t je;
    json_t *j = json_loadf(f, 0, &je);
    fclose(f);
    if (!j && je.line < 1)
        ph_err_set(err, "%s: cannot read: %s", path, je.text);
    else if (!j)
        ph_err_set(err, "%s: line %d: not JSON: %s", path, je.line, je.text);
    return j;
}

int ph_file_save(const char *path, int (*fill)(FILE *f, const void *ctx), const void *ctx, ph_err *err)
{
    /* Beside it, then renamed over it: a full disk or a crash leaves the
     * old file whole (a replay result's meta.json lists earlier replays). */
    char *tmp = NULL;
    if (asprintf(&tmp, "%s.%ld.tmp", path, (long)getpid()) < 0) {
        ph_err_set(err, "%s: cannot write: out of memory", path);
        return -1;
    }
    FILE *f = fopen(tmp, "w");
    int rc = -1;
    if (!f) {
        ph_err_set(err, "%s: cannot write: %s", path, strerror(errno));
    } else {
        errno = 0;
        int bad = fill(f, ctx) != 0 || ferror(f), e = errno;
        if (fclose(f) != 0 || bad)
            ph_err_set(err, "%s: cannot write: %s", path, strerror(bad && e ? e : errno ? errno : EIO));
        else if (rename(tmp, path) != 0)
            ph_err_set(err, "%s: cannot replace: %s", path, strerror(errno));
        else
            rc = 0;
        if (rc != 0)
            unlink(tmp);
    }
    free(tmp);
    return rc;
}

static int put_unlocked(const char *buf, size_t n, void *f)
{
    return fwrite_unlocked(buf, 1, n, f) == n ? 0 : -1;
}

/* jansson's json_dumpf calls fwrite for every token, and each call takes
 * the stream's lock: a fifth of the time of dumping 1.2 MB of a 4,096-rank
 * prediction (9.0 against 11.3 ms). */
int ph_json_dumpf(const json_t *doc, FILE *f, size_t flags)
{
    flockfile(f);
    int rc = json_dump_callback(doc, put_unlocked, f, flags);
    funlockfile(f);
    return rc;
}

typedef struct json_doc {
    json_t *doc;
    size_t flags;
} json_doc;

static int write_json_doc(FILE *f, const void *ctx)
{
    const json_doc *d = ctx;
    return ph_json_dumpf(d->doc, f, d->flags);
}

int ph_json_save(json_t *doc, const char *path, size_t flags, ph_err *err)
{
    json_doc d = {doc, flags};
    return ph_file_save(path, write_json_doc, &d, err);
}

/* ---- memory ------------------------------------------------------------- */

#define MALLOC_TOP_PAD (128 << 10) /* glibc's default M_TOP_PAD (mallopt(3)) */

/* Makes malloc grow its heap past lo, the break: takes blocks too small
 * for mmap until the top of the heap runs out and the break moves (up to
 * 256 MiB of them), then gives them back.  The break then (giving them
 * back trims what passes the pad), lo if it did not move. */
static char *heap_grow(char *lo)
{
    enum { BLOCK = 64 << 10, MAX_BLOCKS = 4096 };
    void **block = malloc(MAX_BLOCKS * sizeof *block);
    int n = 0;
    while (block && n < MAX_BLOCKS && (char *)sbrk(0) == lo && (block[n] = malloc(BLOCK)))
        n++;
    while (n > 0)
        free(block[--n]);
    free(block);
    char *hi = sbrk(0);
    return hi == (char *)-1 ? lo : hi;
}

/* Grows the heap by another M_TOP_PAD past hi, the break: takes the top
 * of the heap in one block, so that the next small block makes malloc grow
 * it.  Needs trimming off, or giving the block back would undo it.  The
 * new break, hi if it did not move. */
static char *heap_extend(char *hi)
{
    enum { SLACK = 128 << 10 }; /* below the top's size: the block must fit in it */
    size_t top = mallinfo2().keepcost;
    void *rest = top > SLACK ? malloc(top - SLACK) : NULL;
    char *more = heap_grow(hi);
    free(rest);
    return more;
}

/* A transparent huge page is one page fault for 2 MiB, but malloc's heap
 * gets them only where madvised, which glibc does only under a tunable
 * read at start-up (glibc.malloc.hugetlb=1).  So: grow the heap at once by
 * what the caller will take and advise that range.  M_TOP_PAD stays, so
 * that malloc neither trims the range away nor grows the heap in small
 * unadvised steps.  mallopt takes an int, so past 2 GiB the heap grows in
 * steps of that pad, with trimming off to keep them. */
static int heap_reserve_huge(size_t bytes)
{
    long page = sysconf(_SC_PAGESIZE), phys = sysconf(_SC_PHYS_PAGES);
    char *lo = sbrk(0);
    if (page <= 0 || phys <= 0 || lo == (char *)-1)
        return 0;
    size_t quarter = (size_t)phys * (size_t)page / 4;
    if (bytes > quarter)
        bytes = quarter;
    if (!mallopt(M_TOP_PAD, bytes > INT_MAX ? INT_MAX : (int)bytes))
        return 0;
    char *hi = heap_grow(lo);
    uintptr_t from = ((uintptr_t)lo + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    if (hi == lo) { /* no brk heap here (or no room for one): malloc as it was */
        mallopt(M_TOP_PAD, MALLOC_TOP_PAD);
        return 0;
    }
    if ((size_t)(hi - lo) < bytes && mallopt(M_TRIM_THRESHOLD, -1))
        for (char *more; (size_t)(hi - lo) < bytes && (more = heap_extend(hi)) != hi;)
            hi = more;
    return (uintptr_t)hi > from && madvise((void *)from, (uintptr_t)hi - from, MADV_HUGEPAGE) == 0;
}

int ph_heap_huge_pages(uint32_t nranks)
{
    return nranks >= PH_HUGE_HEAP_RANKS && heap_reserve_huge((size_t)nranks * PH_HEAP_PER_RANK);
}

void ph_put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

uint64_t ph_get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

void ph_header_encode(const ph_file_header *h, uint8_t out[PH_HEADER_SIZE])
{
    memcpy(out, h->magic, 8);
    ph_put_le(out + 8, h->major, 2);
    ph_put_le(out + 10, h->minor, 2);
    ph_put_le(out + 12, h->rank, 4);
    ph_put_le(out + 16, h->nranks, 4);
    ph_put_le(out + 20, h->flags, 4);
    ph_put_le(out + 24, h->t0, 8);
}

int ph_header_decode(const uint8_t in[PH_HEADER_SIZE], const char *expect_magic,
                     ph_file_header *h, const char *path, ph_err *err)
{
    memcpy(h->magic, in, 8);
    if (memcmp(in, expect_magic, 8) != 0) {
        ph_err_set(err, "%s: offset 0: not a phantom %s file (bad magic)", path,
                   strcmp(expect_magic, PH_MAGIC_EVT) == 0 ? "event" : "message log");
        return -1;
    }
    h->major = (uint16_t)ph_get_le(in + 8, 2);
    h->minor = (uint16_t)ph_get_le(in + 10, 2);
    h->rank = (uint32_t)ph_get_le(in + 12, 4);
    h->nranks = (uint32_t)ph_get_le(in + 16, 4);
    h->flags = (uint32_t)ph_get_le(in + 20, 4);
    h->t0 = ph_get_le(in + 24, 8);
    if (h->major != PH_FORMAT_MAJOR) {
        ph_err_set(err, "%s: offset 8: format version %u.%u, this phantom reads %u.x", path,
                   h->major, h->minor, PH_FORMAT_MAJOR);
        return -1;
    }
    if (h->nranks == 0 || h->rank >= h->nranks) {
        ph_err_set(err, "%s: offset 12: rank %u of %u ranks is impossible", path, h->rank, h->nranks);
        return -1;
    }
    return 0;
}

int ph_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int ph_probe_sum(uint64_t *gaps, size_t n, uint64_t *sum, uint64_t *kept)
{
    if (n <= PH_PROBE_WARM)
        return -1;
    uint64_t *v = gaps + PH_PROBE_WARM, limit, total = 0;
    size_t m = n - PH_PROBE_WARM, i = 0;
    qsort(v, m, sizeof *v, ph_cmp_u64);
    limit = 4 * v[m / 2] > 100 ? 4 * v[m / 2] : 100;
    while (i < m && v[i] <= limit)
        total += v[i++];
    *sum = total;
    *kept = i;
    return 0;
}

const char *ph_rank_special_name(int32_t rank)
{
    switch (rank) {
    case PH_ANY_SOURCE: return "ANY_SOURCE";
    case PH_PROC_NULL: return "PROC_NULL";
    case PH_ROOT: return "ROOT";
    case PH_NO_RANK: return "-";
    default: return NULL;
    }
}

int ph_parse_ranks(const char *spec, uint32_t n, uint8_t *bitmap, ph_err *err)
{
    memset(bitmap, 0, n);
    const char *p = spec;
    if (!*p) {
        ph_err_set(err, "empty rank list");
        return -1;
    }
    while (*p) {
        char *end;
        if (!isdigit((unsigned char)*p)) { /* strtoul alone takes " 3", and "-3" as 2^64 - 3 */
            ph_err_set(err, "bad rank list '%s': expected a number at '%s'", spec, p);
            return -1;
        }
        unsigned long lo = strtoul(p, &end, 10), hi = lo;
        p = end;
        if (*p == '-') {
            if (!isdigit((unsigned char)*++p)) {
                ph_err_set(err, "bad rank list '%s': expected a number after '%lu-'", spec, lo);
                return -1;
            }
            hi = strtoul(p, &end, 10);
            if (hi < lo) {
                ph_err_set(err, "bad rank list '%s': the range %lu-%lu runs backwards", spec, lo, hi);
                return -1;
            }
            p = end;
        }
        if (hi >= n) {
            ph_err_set(err, "rank list '%s': rank %lu is out of range (the job has %u ranks)", spec, hi, n);
            return -1;
        }
        for (unsigned long r = lo; r <= hi; r++)
            bitmap[r] = 1;
        if (*p == ',')
            p++;
        else if (*p) {
            ph_err_set(err, "bad rank list '%s': unexpected '%c'", spec, *p);
            return -1;
        }
    }
    return 0;
}

uint32_t ph_event_completions(const ph_event *ev, uint32_t *pos, const ph_status **st)
{
    const ph_op_info *info = ph_op(ev->op);
    unsigned kind = info ? info->kind : 0;
    uint32_t n = 0;
    int all = kind == PH_K_WAITALL || (kind == PH_K_TESTALL && ev->flag > 0);
    int one = kind == PH_K_WAIT || (kind == PH_K_TEST && ev->flag > 0);
    int any = kind == PH_K_WAITANY || (kind == PH_K_TESTANY && ev->flag > 0);
    if (all) {
        for (uint32_t i = 0; i < ev->nreqs; i++, n++) {
            pos[n] = i;
            st[n] = i < ev->nstatus ? &ev->status[i] : NULL;
        }
    } else if ((one || any) && ev->nreqs) {
        int32_t i = one ? 0 : ev->index;
        if (i >= 0 && (uint32_t)i < ev->nreqs) {
            pos[n] = (uint32_t)i;
            st[n++] = ev->nstatus ? &ev->status[0] : NULL;
        }
    } else if ((kind == PH_K_WAITSOME || kind == PH_K_TESTSOME) && ev->ncompleted != UINT32_MAX) {
        for (uint32_t j = 0; j < ev->ncompleted; j++) {
            if (ev->completed[j] < 0 || (uint32_t)ev->completed[j] >= ev->nreqs)
                continue;
            pos[n] = (uint32_t)ev->completed[j];
            st[n++] = j < ev->nstatus ? &ev->status[j] : NULL;
        }
    }
    return n;
}

static int same_ranks(const int32_t *a, const int32_t *b, uint32_t n)
{
    return n == 0 || memcmp(a, b, n * sizeof *a) == 0;
}

int ph_comm_other_side(const ph_comm_info *a, const ph_comm_info *b)
{
    if (!a || !b || !a->remote_size || !b->remote_size || b->size != a->remote_size ||
        b->remote_size != a->size || !same_ranks(b->members, a->remote, b->size) ||
        !same_ranks(b->remote, a->members, a->size))
        return 0;
    return b->gid == (a->gid ^ 1) ? 2 : 1;
}
