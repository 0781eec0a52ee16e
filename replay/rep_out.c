/* rep_out.c - the clocks, and the times file of one replay run.
 *
 * PHANTOM_REPLAY_OUT/rank-NNNNNN.times: an 80-byte header, then per replayed
 * event its entry and exit time in clock units and the CPU time of the gap
 * before it in ns (0 unless the node is throttled, below), three
 * little-endian u64 (doc/replay.md).  `phantom replay` turns the files of N
 * runs into the computation vectors it writes beside the trace.  Writing
 * goes through a 1 MiB stdio buffer: a call costs one 24-byte copy.
 *
 * A throttled node.  Under a CPU quota (a container's CPU limit, a cgroup's
 * cfs_quota_us) the kernel notices a spent quota at its tick or at the next
 * system call, so a gap shorter than a tick mostly runs unpaused and the
 * pause falls in the MPI call after it: 3.5 ms gaps of computation took 1.0
 * to 1.3 times their CPU time under half a CPU, not twice, and the calls
 * absorbed the rest (doc/replay.md, "Throttled nodes").  A wall-clock gap
 * then depends on where the pauses fell.  There, each gap is also timed in
 * this thread's CPU time, and `phantom replay` writes it over the share of
 * the CPU the processes had: the gap on a uniformly slower CPU.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"

#define TIMES_MAGIC "PHTMRTM2"
#define HEADER 80
#define PROBE_NS 1000000000u /* ten periods of the kernel's (and Docker's) default 100 ms */

static uint64_t c0, t0, nevents;
static uint64_t cpu_exit_prev; /* CPU time at the last call's exit */
static uint64_t cpu_cost;      /* of the two CPU clock readings around a gap, in it */
static double cpu_share;       /* of the time the processes had their CPU; 0: wall units */

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

/* ---- CPU-time units -------------------------------------------------------------- */

/* Whether the file holds a CPU quota: v2's cpu.max "QUOTA PERIOD" (not
 * "max"), v1's cpu.cfs_quota_us (not -1). */
static int quota_in(const char *file)
{
    FILE *f = fopen(file, "r");
    long long q = -1;
    int n = f ? fscanf(f, "%lld", &q) : 0;
    if (f)
        fclose(f);
    return n == 1 && q > 0;
}

/* A quota in ROOT/PATH/FILE or in a cgroup above it, up to ROOT (in a
 * container, ROOT is the container's own cgroup). */
static int quota_above(const char *root, const char *path, const char *file)
{
    char p[4200], f[4300];
    size_t base = strlen(root);
    snprintf(p, sizeof p, "%s%s", root, path);
    for (;;) {
        snprintf(f, sizeof f, "%s/%s", p, file);
        if (quota_in(f))
            return 1;
        char *slash = strrchr(p + base, '/');
        if (!slash)
            return 0;
        *slash = 0;
    }
}

/* Whether this process's cgroup, or one above it, has a CPU quota. */
static int cgroup_quota(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[4096];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = 0;
        char ctrl[256];
        snprintf(ctrl, sizeof ctrl, ",%s,", c1 + 1);
        if (!c1[1]) /* "0::PATH": the unified hierarchy */
            found = quota_above("/sys/fs/cgroup", c2 + 1, "cpu.max");
        else if (strstr(ctrl, ",cpu,"))
            found = quota_above("/sys/fs/cgroup/cpu", c2 + 1, "cpu.cfs_quota_us") ||
                    quota_above("/sys/fs/cgroup/cpu,cpuacct", c2 + 1, "cpu.cfs_quota_us");
    }
    if (f)
        fclose(f);
    return found;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* What a gap's CPU time owes to the readings around it: the median
 * difference of two readings back to back. */
static uint64_t reading_cost(void)
{
    uint64_t d[101];
    for (int i = 0; i < 101; i++) {
        uint64_t a = rep_cpu_now();
        d[i] = rep_cpu_now() - a;
    }
    qsort(d, 101, sizeof *d, cmp_u64);
    return d[50];
}

/* The share of the time this thread has its CPU while every process of the
 * replay spins, as the application's ranks share the node's quota: CPU
 * time over wall time. */
static double share_probe(void)
{
    PMPI_Barrier(MPI_COMM_WORLD);
    uint64_t w0 = ph_clock_mono_ns(), c = rep_cpu_now(), w;
    while ((w = ph_clock_mono_ns()) - w0 < PROBE_NS)
        ;
    double share = (double)(rep_cpu_now() - c) / (double)(w - w0);
    return share > 1 ? 1 : share;
}

void rep_out_units(void)
{
    const char *u = getenv("PHANTOM_REPLAY_UNITS");
    if (!u || !*u)
        u = "auto";
    if (strcmp(u, "wall") && strcmp(u, "cpu") && strcmp(u, "auto"))
        rep_die("PHANTOM_REPLAY_UNITS=%s: expected wall, cpu or auto", u);
    /* auto: every process looks, so that all or none take part in the probe's barrier */
    int want = strcmp(u, "cpu") == 0 || (strcmp(u, "auto") == 0 && cgroup_quota()), all = 0;
    PMPI_Allreduce(&want, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!all)
        return;
    cpu_cost = reading_cost();
    cpu_share = share_probe();
    if (cpu_share < 0.01)
        rep_die("this process had its CPU %.2f%% of the time: too little to time the replay",
                cpu_share * 100);
    rep.cpu_units = 1;
}

void rep_out_event(uint64_t t_entry, uint64_t t_exit, uint64_t cpu_exit)
{
    uint64_t gap = 0;
    if (rep.cpu_units && nevents) {
        uint64_t d = rep.cpu_entry - cpu_exit_prev;
        gap = d > cpu_cost ? d - cpu_cost : 0;
    }
    cpu_exit_prev = cpu_exit;
    uint64_t v[3] = {t_entry, t_exit, gap}; /* x86-64 and aarch64 are little-endian */
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
    put64(h + 64, (uint64_t)(cpu_share * 1e6 + 0.5)); /* parts per million; 0: wall units */
    put64(h + 72, cpu_cost);
    int bad = fflush(rep.times) != 0 || fseek(rep.times, 0, SEEK_SET) != 0 ||
              fwrite(h, 1, HEADER, rep.times) != HEADER;
    if (fclose(rep.times) != 0 || bad)
        fprintf(stderr, "phantom replay: rank %d: %s: cannot write: %s\n", rep.rank, rep.times_path,
                strerror(errno));
    rep.times = NULL;
}
