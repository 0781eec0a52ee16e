/* fuzz_reader.c - libFuzzer target for phantom's trace reader (lib/ph_reader.c).
 *
 * Every input becomes one file of rank 0 of a trace in a private directory with
 * a fixed meta.json (no communicator or call-site tables, so ph_trace_open
 * also runs its prescan of the rank stream), and is then read to the end.
 * The trace has NRANKS = 4 ranks (ranks 1-3 are fixed, valid, empty streams)
 * so that rank files of real multi-rank jobs, whose communicators name
 * ranks 0-3, make a seed corpus that decodes all the way through:
 *
 *   PH_FUZZ_MODE=evt      (default) the input is rank-000000.evt as it is on disk:
 *                         header and zstd frames; ph_trace_open, ph_rank_open,
 *                         ph_rank_next until 0 or -1, ph_trace_counters
 *   PH_FUZZ_MODE=evt-raw  the input is the *content* of one event block; the
 *                         target adds a valid header and compresses it into one
 *                         frame, so that the mutations reach the record decoder
 *                         instead of dying at the frame checksum
 *   PH_FUZZ_MODE=log      the input is rank-000000.log (the .evt is a valid,
 *                         empty stream); ph_log_open, ph_log_next to the end
 *   PH_FUZZ_MODE=log-raw  the input is the content of one log block
 *   PH_FUZZ_MODE=meta     the input is meta.json (all rank streams valid and
 *                         empty): its tables, then a few ph_trace_meta keys
 *
 * The reader must return an error (one line naming file and offset) or read to
 * the end: any crash, sanitizer report, leak or timeout is a bug.  An error
 * message is also checked to name the file.  Build and run: tests/fuzz/README.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "ph_trace.h"

#define NRANKS 4
enum { M_EVT, M_EVT_RAW, M_LOG, M_LOG_RAW, M_META };
static int mode = M_EVT;
static int verbose; /* PH_FUZZ_VERBOSE=1: say how each input ended (to check seeds) */
static char dir[256], evt_path[300], log_path[300], meta_path[300];

static void die(const char *what)
{
    fprintf(stderr, "fuzz_reader: %s: %s\n", what, strerror(errno));
    abort();
}

static void write_file(const char *path, const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die(path);
    if ((na && write(fd, a, na) != (ssize_t)na) || (nb && write(fd, b, nb) != (ssize_t)nb))
        die(path);
    close(fd);
}

static size_t header(uint8_t out[PH_HEADER_SIZE], const char *magic, uint32_t rank, uint32_t flags)
{
    ph_file_header h = {.major = PH_FORMAT_MAJOR, .minor = PH_FORMAT_MINOR, .rank = rank,
                        .nranks = NRANKS, .flags = flags, .t0 = 1000};
    memcpy(h.magic, magic, 8);
    ph_header_encode(&h, out);
    return PH_HEADER_SIZE;
}

/* header + one checksummed frame holding `raw` (what the recorder writes) */
static void write_framed(const char *path, const char *magic, uint32_t rank, const uint8_t *raw, size_t n)
{
    static uint8_t *z;
    static size_t zcap;
    size_t bound = ZSTD_compressBound(n);
    if (bound > zcap) {
        free(z);
        z = malloc(bound);
        zcap = bound;
        if (!z)
            die("malloc");
    }
    static ZSTD_CCtx *cctx;
    if (!cctx) {
        cctx = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
    }
    size_t zn = ZSTD_compress2(cctx, z, zcap, raw, n);
    if (ZSTD_isError(zn)) {
        fprintf(stderr, "fuzz_reader: %s\n", ZSTD_getErrorName(zn));
        abort();
    }
    uint8_t hdr[PH_HEADER_SIZE];
    header(hdr, magic, rank, PH_FLAG_LOG);
    write_file(path, hdr, sizeof hdr, n ? z : NULL, n ? zn : 0);
}

static void remove_dir(void)
{
    static const char *names[] = {"meta.json", "rank-000000.evt", "rank-000001.evt",
                                  "rank-000002.evt", "rank-000003.evt", "rank-000000.log"};
    char path[400];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    verbose = getenv("PH_FUZZ_VERBOSE") && atoi(getenv("PH_FUZZ_VERBOSE"));
    const char *m = getenv("PH_FUZZ_MODE");
    if (!m || !*m || !strcmp(m, "evt"))
        mode = M_EVT;
    else if (!strcmp(m, "evt-raw"))
        mode = M_EVT_RAW;
    else if (!strcmp(m, "log"))
        mode = M_LOG;
    else if (!strcmp(m, "log-raw"))
        mode = M_LOG_RAW;
    else if (!strcmp(m, "meta"))
        mode = M_META;
    else {
        fprintf(stderr, "fuzz_reader: PH_FUZZ_MODE must be evt, evt-raw, log, log-raw or meta\n");
        exit(2);
    }
    const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof dir, "%s/phantom-fuzz.XXXXXX", tmp);
    if (!mkdtemp(dir))
        die("mkdtemp");
    atexit(remove_dir);
    snprintf(meta_path, sizeof meta_path, "%s/meta.json", dir);
    static const char json[] =
        "{\"format\": \"phantom-trace\", \"version\": \"1.0\", \"ranks\": 4,\n"
        " \"mode\": {\"log\": true, \"callsite_depth\": 4}, \"finished\": false}\n";
    write_file(meta_path, (const uint8_t *)json, sizeof json - 1, NULL, 0);
    snprintf(evt_path, sizeof evt_path, "%s/rank-000000.evt", dir);
    snprintf(log_path, sizeof log_path, "%s/rank-000000.log", dir);
    /* a valid event stream: block header (first 0, base 1000, next_req 0), END */
    static const uint8_t blk[] = {0x00, 0xe8, 0x07, 0x00, PH_REC_END};
    for (uint32_t r = mode == M_EVT || mode == M_EVT_RAW ? 1 : 0; r < NRANKS; r++) {
        char path[300];
        snprintf(path, sizeof path, "%s/rank-%06u.evt", dir, r);
        write_framed(path, PH_MAGIC_EVT, r, blk, sizeof blk);
    }
    return 0;
}

static void check_err(const ph_err *err, const char *path)
{
    if (verbose)
        fprintf(stderr, "fuzz_reader: error: %s\n", err->msg);
    /* every error names the trace's file (or directory) */
    if (!strstr(err->msg, dir)) {
        fprintf(stderr, "fuzz_reader: error message does not name %s: %s\n", path, err->msg);
        abort();
    }
}

/* ", N counters, K timed, S ns" for rank 0's counters when some are timed
 * (COUNTERS_TIMED), "" otherwise, so that the rows of earlier seeds stay. */
static const char *timed_counters(ph_trace *t)
{
    static char buf[96];
    const ph_counter *c;
    size_t nc, timed = 0;
    uint64_t ns = 0;
    buf[0] = 0;
    if (ph_trace_counters(t, 0, &c, &nc) < 0)
        return buf;
    for (size_t i = 0; i < nc; i++)
        if (c[i].timed)
            timed++, ns += c[i].ns;
    if (timed)
        snprintf(buf, sizeof buf, ", %zu counters, %zu timed, %llu ns", nc, timed, (unsigned long long)ns);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    switch (mode) {
    case M_EVT: write_file(evt_path, data, size, NULL, 0); break;
    case M_EVT_RAW: write_framed(evt_path, PH_MAGIC_EVT, 0, data, size); break;
    case M_LOG: write_file(log_path, data, size, NULL, 0); break;
    case M_LOG_RAW: write_framed(log_path, PH_MAGIC_LOG, 0, data, size); break;
    case M_META: write_file(meta_path, data, size, NULL, 0); break;
    }
    ph_err err;
    memset(&err, 0, sizeof err);
    ph_trace *t = ph_trace_open(dir, &err);
    if (!t) {
        check_err(&err, evt_path);
        return 0;
    }
    if (mode == M_META) {
        static const char *keys[] = {"command", "mpi.version", "mode.log", "clock", "ranks",
                                     "sites", "mode.callsite_depth.x"};
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
            const char *v = ph_trace_meta(t, keys[i]);
            if (v)
                (void)strlen(v);
        }
        for (uint32_t i = 0; i < ph_trace_nsites(t); i++) {
            const ph_site_info *si = ph_trace_site(t, i);
            for (uint32_t k = 0; k < si->nframes; k++)
                (void)strlen(si->modules[k]);
            if (si->function)
                (void)strlen(si->function);
            if (si->file)
                (void)strlen(si->file);
        }
        if (verbose)
            fprintf(stderr, "fuzz_reader: meta: %u ranks, %u communicators, %u call sites\n",
                    ph_trace_nranks(t), ph_trace_ncomms(t), ph_trace_nsites(t));
        if (ph_trace_nranks(t) == NRANKS) { /* the streams match: they must read */
            ph_rank_reader *r = ph_rank_open(t, 0, &err);
            ph_event ev;
            if (!r || ph_rank_next(r, &ev, &err) != 0) {
                fprintf(stderr, "fuzz_reader: a valid empty stream did not read: %s\n", err.msg);
                abort();
            }
            ph_rank_close(r);
        }
    } else if (mode == M_EVT || mode == M_EVT_RAW) {
        ph_rank_reader *r = ph_rank_open(t, 0, &err);
        if (r) {
            ph_event ev;
            int rc;
            uint64_t n = 0, sum = 0;
            while ((rc = ph_rank_next(r, &ev, &err)) > 0) {
                /* touch what the event points to, as a tool would */
                for (uint32_t i = 0; i < ev.nreqs; i++)
                    sum += ev.reqs[i];
                for (uint32_t i = 0; i < ev.nsbytes; i++)
                    sum += ev.sbytes[i];
                for (uint32_t i = 0; i < ev.nrbytes; i++)
                    sum += ev.rbytes_v[i];
                for (uint32_t i = 0; i < ev.nstatus; i++)
                    sum += ev.status[i].bytes + (uint64_t)ev.status[i].source_world;
                if (ev.ncompleted != UINT32_MAX)
                    for (uint32_t i = 0; i < ev.ncompleted; i++)
                        sum += (uint64_t)ev.completed[i];
                if (ev.comm != PH_COMM_NULL && !ph_trace_comm(t, ev.comm))
                    abort(); /* an event names a communicator the trace does not have */
                if (!ph_trace_site(t, ev.site))
                    abort();
                n++;
            }
            if (rc < 0)
                check_err(&err, evt_path);
            else if (verbose)
                fprintf(stderr, "fuzz_reader: read %llu events, %s%s\n", (unsigned long long)n,
                        ph_rank_complete(r) ? "complete" : "incomplete", timed_counters(t));
            (void)ph_rank_note(r);
            ph_rank_close(r);
            (void)n;
            (void)sum;
        } else {
            check_err(&err, evt_path);
        }
        const ph_counter *c;
        size_t nc;
        if (ph_trace_counters(t, 0, &c, &nc) == 0)
            for (size_t i = 0; i < nc; i++)
                (void)strlen(c[i].name);
    } else {
        ph_log_reader *l = ph_log_open(t, 0, &err);
        if (l) {
            ph_log_record rec;
            int rc;
            uint64_t sum = 0, n = 0;
            while ((rc = ph_log_next(l, &rec, &err)) > 0) {
                for (uint64_t i = 0; i < rec.len; i++)
                    sum += rec.data[i];
                n++;
            }
            if (rc < 0)
                check_err(&err, log_path);
            else if (verbose)
                fprintf(stderr, "fuzz_reader: read %llu log records\n", (unsigned long long)n);
            ph_log_close(l);
            (void)sum;
        } else {
            check_err(&err, log_path);
        }
    }
    /* every communicator member is a world rank of the trace */
    for (uint32_t i = 0; i < ph_trace_ncomms(t); i++) {
        const ph_comm_info *ci = ph_trace_comm(t, i);
        for (uint32_t k = 0; k < ci->size; k++)
            if ((uint32_t)ci->members[k] >= ph_trace_nranks(t)) {
                fprintf(stderr, "fuzz_reader: communicator %u: member %u is rank %d of %u\n", i, k,
                        ci->members[k], ph_trace_nranks(t));
                abort();
            }
        for (uint32_t k = 0; k < ci->remote_size; k++)
            if ((uint32_t)ci->remote[k] >= ph_trace_nranks(t)) {
                fprintf(stderr, "fuzz_reader: communicator %u: remote member %u is rank %d of %u\n",
                        i, k, ci->remote[k], ph_trace_nranks(t));
                abort();
            }
    }
    ph_trace_close(t);
    return 0;
}
