/* rep_out.c - the clock, and the times file of one replay run.
 *
 * PHANTOM_REPLAY_OUT/rank-NNNNNN.times: a 64-byte header, then per replayed
 * event its entry and exit time as two little-endian u64 in clock units
 * (doc/replay.md).  `phantom replay` turns the files of N runs into the
 * computation vectors it writes beside the trace.  Writing goes through a
 * 1 MiB stdio buffer: a call costs one 16-byte copy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"

#define TIMES_MAGIC "PHTMRTM1"
#define HEADER 64

static uint64_t c0, t0, nevents;

/* Before main: MPI_Init's entry is already timed with the chosen clock. */
static void __attribute__((constructor)) clock_init(void)
{
    rep.tsc = ph_clock_use_tsc();
    ph_clock_pair(rep.tsc, &c0, &t0);
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

int rep_out_open(ph_err *err)
{
    const char *dir = getenv("PHANTOM_REPLAY_OUT");
    if (!dir || !*dir) {
        ph_err_set(err, "PHANTOM_REPLAY_OUT is not set: run the program through `phantom replay`");
        return -1;
    }
    snprintf(rep.times_path, sizeof rep.times_path, "%s/rank-%06d.times", dir, rep.rank);
    rep.times = fopen(rep.times_path, "wb");
    static char zero[HEADER];
    if (!rep.times || fwrite(zero, 1, HEADER, rep.times) != HEADER) {
        ph_err_set(err, "%s: cannot write: %s", rep.times_path, strerror(errno));
        return -1;
    }
    setvbuf(rep.times, NULL, _IOFBF, 1 << 20);
    return 0;
}

void rep_out_event(uint64_t t_entry, uint64_t t_exit)
{
    uint64_t v[2] = {t_entry, t_exit}; /* x86-64 and aarch64 are little-endian */
    if (rep.times)
        fwrite(v, sizeof v, 1, rep.times);
    nevents++;
}

void rep_out_close(int how)
{
    if (!rep.times)
        return;
    uint64_t c1, t1;
    ph_clock_pair(rep.tsc, &c1, &t1);
    uint8_t h[HEADER] = {0};
    memcpy(h, TIMES_MAGIC, 8);
    h[8] = (uint8_t)rep.rank, h[9] = (uint8_t)(rep.rank >> 8), h[10] = (uint8_t)(rep.rank >> 16),
    h[11] = (uint8_t)(rep.rank >> 24);
    h[12] = (uint8_t)rep.nranks, h[13] = (uint8_t)(rep.nranks >> 8),
    h[14] = (uint8_t)(rep.nranks >> 16), h[15] = (uint8_t)(rep.nranks >> 24);
    put64(h + 16, c0);
    put64(h + 24, t0);
    put64(h + 32, c1);
    put64(h + 40, t1);
    put64(h + 48, nevents);
    h[56] = (uint8_t)how;
    h[60] = (uint8_t)rep.isolated;
    int bad = fflush(rep.times) != 0 || fseek(rep.times, 0, SEEK_SET) != 0 ||
              fwrite(h, 1, HEADER, rep.times) != HEADER;
    if (fclose(rep.times) != 0 || bad)
        fprintf(stderr, "phantom replay: rank %d: %s: cannot write: %s\n", rep.rank, rep.times_path,
                strerror(errno));
    rep.times = NULL;
}
