/* fuzz_predict.c - libFuzzer target for the simulator (simmpi/) on top of the reader.
 *
 * The input is the *content* of rank 0's one event block (as fuzz_reader's
 * evt-raw mode: the target adds the header and compresses it into one
 * checksummed frame).  Ranks 1-3 are a real recording, copied from the
 * directory PH_FUZZ_PARTNERS (tests/fuzz/corpus/predict-partners/PROG, whose
 * rank 0 is tests/fuzz/corpus/predict/PROG), so that rank 0's mutated calls
 * meet real partners.  meta.json has no tables: ph_trace_open prescans the
 * streams, and rank 0's own communicator definitions count.
 *
 * The trace is then simulated (1 thread, a fixed 2-ranks-per-node platform).
 * simmpi_run must either finish or fail with a non-empty one-line message; a
 * crash, sanitizer report, leak or timeout is a bug, and so is a finished
 * rank whose time breakdown does not add up to its finish time (simmpi.h:
 * comp + ovh + xfer + syn == finish), which is what a wrapped clock looks
 * like.  Build and run: tests/fuzz/README.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "simmpi.h"

#define NRANKS 4
static int verbose; /* PH_FUZZ_VERBOSE=1: say how each input ended */
static char dir[256], evt_path[300];
static simmpi_options opts;

static void die(const char *what)
{
    fprintf(stderr, "fuzz_predict: %s: %s\n", what, strerror(errno));
    abort();
}

static void write_file(const char *path, const void *a, size_t na, const void *b, size_t nb)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die(path);
    if ((na && write(fd, a, na) != (ssize_t)na) || (nb && write(fd, b, nb) != (ssize_t)nb))
        die(path);
    close(fd);
}

static void remove_dir(void)
{
    char path[400];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    unlink(path);
    for (int r = 0; r < NRANKS; r++) {
        snprintf(path, sizeof path, "%s/rank-%06d.evt", dir, r);
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
    const char *partners = getenv("PH_FUZZ_PARTNERS");
    if (!partners || !*partners) {
        fprintf(stderr, "fuzz_predict: set PH_FUZZ_PARTNERS to a 4-rank trace directory "
                        "(tests/fuzz/corpus/predict-partners/PROG)\n");
        exit(2);
    }
    const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof dir, "%s/phantom-fuzz.XXXXXX", tmp);
    if (!mkdtemp(dir))
        die("mkdtemp");
    atexit(remove_dir);
    static const char json[] = "{\"format\": \"phantom-trace\", \"version\": \"1.0\", \"ranks\": 4, "
                               "\"finished\": false}\n";
    char path[400], from[4096];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    write_file(path, json, sizeof json - 1, NULL, 0);
    for (int r = 1; r < NRANKS; r++) { /* the partners' streams, as recorded */
        snprintf(from, sizeof from, "%s/rank-%06d.evt", partners, r);
        FILE *f = fopen(from, "rb");
        if (!f)
            die(from);
        static char buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        snprintf(path, sizeof path, "%s/rank-%06d.evt", dir, r);
        write_file(path, buf, n, NULL, 0);
    }
    snprintf(evt_path, sizeof evt_path, "%s/rank-000000.evt", dir);
    simmpi_options_default(&opts);
    opts.platform.cores_per_node = 2; /* both channels: ranks 0-1 and 2-3 share a node */
    opts.platform.gamma_fs = 250;     /* reductions cost something */
    return 0;
}

/* header + one checksummed frame holding `raw` (what the recorder writes) */
static void write_rank0(const uint8_t *raw, size_t n)
{
    static uint8_t *z;
    static size_t zcap;
    static ZSTD_CCtx *cctx;
    size_t bound = ZSTD_compressBound(n);
    if (bound > zcap) {
        free(z);
        if (!(z = malloc(bound)))
            die("malloc");
        zcap = bound;
    }
    if (!cctx) {
        cctx = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
    }
    size_t zn = ZSTD_compress2(cctx, z, zcap, raw, n);
    if (ZSTD_isError(zn)) {
        fprintf(stderr, "fuzz_predict: %s\n", ZSTD_getErrorName(zn));
        abort();
    }
    ph_file_header h = {.major = PH_FORMAT_MAJOR, .minor = PH_FORMAT_MINOR, .rank = 0,
                        .nranks = NRANKS, .t0 = 1000};
    memcpy(h.magic, PH_MAGIC_EVT, 8);
    uint8_t hdr[PH_HEADER_SIZE];
    ph_header_encode(&h, hdr);
    write_file(evt_path, hdr, sizeof hdr, n ? z : NULL, n ? zn : 0);
}

/* A failure must say why, in one line (the tools print it as it is). */
static void check_err(const char *stage, const ph_err *err)
{
    if (verbose)
        fprintf(stderr, "fuzz_predict: %s: %s\n", stage, err->msg);
    if (!err->msg[0] || strchr(err->msg, '\n')) {
        fprintf(stderr, "fuzz_predict: %s failed with an empty or multi-line message: \"%s\"\n",
                stage, err->msg);
        abort();
    }
}

static void check_result(const simmpi_result *res)
{
    simtime total = 0;
    for (uint32_t i = 0; i < res->nranks; i++) {
        const simmpi_rank_result *rr = &res->ranks[i];
        int stuck = 0; /* a stuck rank's last block is not accounted */
        for (uint32_t k = 0; k < res->nstuck; k++)
            stuck |= res->stuck[k].rank == i;
        unsigned __int128 sum = (unsigned __int128)rr->b.comp + rr->b.ovh + rr->b.xfer + rr->b.syn;
        if (!stuck && sum != rr->finish) {
            fprintf(stderr,
                    "fuzz_predict: rank %u finished at %llu ps, but comp %llu + ovh %llu + xfer %llu"
                    " + syn %llu ps do not add up to it\n",
                    i, (unsigned long long)rr->finish, (unsigned long long)rr->b.comp,
                    (unsigned long long)rr->b.ovh, (unsigned long long)rr->b.xfer,
                    (unsigned long long)rr->b.syn);
            abort();
        }
        if (rr->finish > total)
            total = rr->finish;
    }
    if (total != res->total) {
        fprintf(stderr, "fuzz_predict: total %llu ps is not the latest finish %llu ps\n",
                (unsigned long long)res->total, (unsigned long long)total);
        abort();
    }
    if (verbose)
        fprintf(stderr, "fuzz_predict: predicted %llu ps, %llu events, %u stuck\n",
                (unsigned long long)res->total, (unsigned long long)res->events, res->nstuck);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    write_rank0(data, size);
    ph_err err;
    memset(&err, 0, sizeof err);
    ph_trace *t = ph_trace_open(dir, &err);
    if (!t) {
        check_err("ph_trace_open", &err);
        return 0;
    }
    simmpi_source src;
    if (simmpi_source_trace(t, 1, &src, &err) < 0) {
        check_err("simmpi_source_trace", &err);
    } else {
        simmpi_result *res = NULL;
        if (simmpi_run(&opts, &src, &res, &err) < 0)
            check_err("simmpi_run", &err);
        else
            check_result(res);
        simmpi_result_free(res);
        simmpi_source_trace_close(&src);
    }
    ph_trace_close(t);
    return 0;
}
