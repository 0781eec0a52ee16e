/* rep_out.c - the clocks, and the times file of one replay run.
 *
 * PHANTOM_REPLAY_OUT/rank-NNNNNN.times: an 88-byte header, then per replayed
 * event its entry and exit time in clock units and the CPU time of the gap
 * before it in ns (0 unless the node is throttled, below), three
 * little-endian u64 (doc/replay.md).  Ahead of the events, as many entries
 * as the header's probe count: the calls of rep_out_probe.  `phantom
 * replay` turns the files of N runs into the computation vectors it writes
 * beside the trace.  A call costs one 24-byte copy into a buffer of about
 * 1 MiB, written out inside a call, before its exit clock, so that no gap
 * holds a write(2) or a stream's lock.
 *
 * A throttled node.  Under a CPU quota (a container's CPU limit, a cgroup's
 * cfs_quota_us) the kernel notices a spent quota at its tick or at the next
 * system call, so a gap shorter than a tick mostly runs unpaused and the
 * pause falls in the MPI call after it: 3.5 ms gaps of computation took 1.0
 * to 1.5 times their CPU time under half a CPU, not twice, and the calls
 * absorbed the rest (doc/replay.md, "Throttled nodes").  A wall-clock gap
 * then depends on where the pauses fell.  There, `phantom replay` writes
 * each gap's CPU time over the share of the CPU the processes had: the gap
 * on a uniformly slower CPU.  A long gap is timed with the thread's CPU
 * clock.  A short one is its wall time: the clock's system calls would slow
 * it by more than they tell (HPCC's 100 ns gaps ran 30% slower between
 * them), and a pause rarely falls in it; one that did is seen by its length
 * and taken at its call site's typical time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rep.h"

#define TIMES_MAGIC "PHTMRTM3"
#define HEADER 88
#define PROBE_NS 1000000000u /* ten periods of the kernel's (and Docker's) default 100 ms */
#define LONG_GAP_NS 50000     /* from here on a gap is timed with the CPU clock */
#define PAUSE_NS 1000000      /* a short gap this long (and 100 times its site's) met a pause */
#define GAP_WALL UINT64_MAX   /* in the times file: this gap's CPU time is its wall time */
#define SITES 1024            /* call sites whose gaps are followed */

static uint64_t c0, t0, nevents, nprobe;

#define BUF_ENTRIES 43690 /* 24 bytes each: just under 1 MiB */
static uint64_t buf[3 * BUF_ENTRIES];
static uint32_t nbuf;       /* entries in buf */
static int times_fd = -1;
static int write_errno;     /* the first write's failure, reported at the close */

/* This process is one thread of replay: plain statics. */
typedef struct site_gap {
    const void *pc;   /* a call site */
    uint64_t typical; /* the gaps after it, clock units (a running mean, weight 1/8) */
} site_gap;
static site_gap sites[SITES];
typedef struct open_gap {
    site_gap *site; /* after which call site (NULL: not followed) */
    int cpu;        /* timed with the CPU clock, which read cpu0 at its start */
    uint64_t cpu0, t0;
} open_gap;
static open_gap cur, next; /* the gap before the current call, the one after it */
static uint64_t rec_exit;  /* the recording's exit time of the last call (ns) */
static uint64_t cpu_cost;  /* of the two CPU clock readings around a gap, in it */
static double cpu_share;   /* of the time the processes had their CPU; 0: wall units */
static double ns_per_tick; /* of rep_now()'s clock */
static uint64_t long_ticks, pause_ticks;
/* The span from MPI_Init's end to MPI_Finalize's entry: this thread's CPU
 * time and the wall time at its start, then their lengths. */
static uint64_t busy_cpu0, busy_wall0, busy_cpu, busy_wall;

/* Before main: MPI_Init's entry is already timed with the chosen clock. */
static void __attribute__((constructor)) clock_init(void)
{
    rep.tsc = ph_clock_use_tsc();
    ph_clock_pair(rep.tsc, &c0, &t0);
}

int rep_out_open(ph_err *err)
{
    const char *dir = getenv("PHANTOM_REPLAY_OUT");
    if (!dir || !*dir) {
        ph_err_set(err, "PHANTOM_REPLAY_OUT is not set: run the program through `phantom replay`");
        return -1;
    }
    snprintf(rep.times_path, sizeof rep.times_path, "%s/rank-%06d.times", dir, rep.rank);
    static const char zero[HEADER];
    times_fd = open(rep.times_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (times_fd < 0 || write(times_fd, zero, HEADER) != HEADER) {
        ph_err_set(err, "%s: cannot write: %s", rep.times_path, strerror(errno));
        return -1;
    }
    busy_cpu0 = rep_cpu_now(); /* after the share probe, which spins */
    busy_wall0 = ph_clock_mono_ns();
    return 0;
}

/* A rank that waits in MPI spins on its CPU, so on a node of its own it has
 * the CPU nearly all the time (under a quota, its share).  Less means that
 * other work took turns on its core, and its gaps hold those turns. */
void rep_out_busy_end(void)
{
    if (busy_wall || !busy_wall0)
        return;
    busy_cpu = rep_cpu_now() - busy_cpu0;
    busy_wall = ph_clock_mono_ns() - busy_wall0;
}

/* CPU time over wall time in thousandths, at least 1; 0 when not known. */
static uint64_t busy_permille(void)
{
    rep_out_busy_end();
    if (!busy_wall)
        return 0;
    uint64_t p = (busy_cpu * 1000 + busy_wall / 2) / busy_wall;
    return p < 1 ? 1 : p > 1000 ? 1000 : p;
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

/* What a gap's CPU time owes to the readings around it: the median
 * difference of two readings back to back. */
static uint64_t reading_cost(void)
{
    uint64_t d[101];
    for (int i = 0; i < 101; i++) {
        uint64_t a = rep_cpu_now();
        d[i] = rep_cpu_now() - a;
    }
    qsort(d, 101, sizeof *d, ph_cmp_u64);
    return d[50];
}

/* The share of the time this thread has its CPU while every process of the
 * replay spins, as the application's ranks share the node's quota: CPU
 * time over wall time.  And the rate of the replay's clock. */
static double share_probe(void)
{
    PMPI_Barrier(MPI_COMM_WORLD);
    uint64_t k0 = rep_now(), w0 = ph_clock_mono_ns(), c = rep_cpu_now(), w;
    while ((w = ph_clock_mono_ns()) - w0 < PROBE_NS)
        ;
    double share = (double)(rep_cpu_now() - c) / (double)(w - w0);
    ns_per_tick = (double)(w - w0) / (double)(rep_now() - k0);
    return share > 1 ? 1 : share;
}

static site_gap *site_of(const void *pc)
{
    size_t h = (size_t)(((uintptr_t)pc * 0x9E3779B97F4A7C15ull) >> 54); /* 10 bits */
    for (size_t i = 0; i < SITES; i++) {
        site_gap *s = &sites[(h + i) & (SITES - 1)];
        if (s->pc == pc || !s->pc) {
            s->pc = pc;
            return s;
        }
    }
    return NULL; /* a program of more than SITES call sites: the rest are timed as long */
}

static void put(const void *p, size_t n, off_t at)
{
    for (const char *c = p; n && !write_errno;) {
        ssize_t k = at < 0 ? write(times_fd, c, n) : pwrite(times_fd, c, n, at);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            write_errno = k < 0 ? errno : EIO;
            break;
        }
        c += k, n -= (size_t)k;
        at = at < 0 ? at : at + k;
    }
}

static void flush_buf(void)
{
    if (times_fd >= 0)
        put(buf, nbuf * 3 * sizeof *buf, -1);
    nbuf = 0;
}

void rep_out_exit(const void *pc)
{
    if (nbuf == BUF_ENTRIES)
        flush_buf();
    if (!rep.cpu_units)
        return;
    next.site = site_of(pc);
    next.cpu = !next.site || !next.site->typical || next.site->typical >= long_ticks;
    rep.cpu_read = next.cpu;
    next.cpu0 = next.cpu ? rep_cpu_now() : 0;
}

/* The CPU time of the gap that ends at t_entry (ns), or GAP_WALL. */
static uint64_t close_gap(uint64_t t_entry)
{
    uint64_t wall = t_entry - cur.t0, gap = GAP_WALL;
    site_gap *s = cur.site;
    if (cur.cpu) {
        uint64_t d = rep.cpu_entry - cur.cpu0;
        gap = d > cpu_cost ? d - cpu_cost : 0;
    } else if (s && wall > pause_ticks) {
        /* far longer than its site's gaps and than the recorded one: it met a pause */
        uint64_t rec = rep.ev.t_entry > rec_exit ? rep.ev.t_entry - rec_exit : 0, usual = s->typical;
        if ((double)rec / ns_per_tick > (double)usual)
            usual = (uint64_t)((double)rec / ns_per_tick);
        if (wall / 100 > usual)
            return (uint64_t)((double)s->typical * ns_per_tick);
    }
    if (s) /* the first gap sets it; a short gap never reaches zero */
        s->typical = !s->typical ? wall + 1 : s->typical - s->typical / 8 + wall / 8 + 1;
    return gap;
}

void rep_out_units(void)
{
    const char *u = getenv("PHANTOM_REPLAY_UNITS");
    if (!u || !*u)
        u = "auto";
    if (strcmp(u, "wall") && strcmp(u, "cpu") && strcmp(u, "auto"))
        rep_die("PHANTOM_REPLAY_UNITS=%s: expected wall, cpu or auto", u);
    if (!strcmp(u, "wall")) /* every process has the same setting */
        return;
    /* auto: every process looks, so that all or none take part in the probe's barrier */
    int want = !strcmp(u, "cpu") || cgroup_quota(), all = 0; /* u is cpu or auto here */
    PMPI_Allreduce(&want, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!all)
        return;
    cpu_cost = reading_cost();
    cpu_share = share_probe();
    if (cpu_share < 0.01)
        rep_die("this process had its CPU %.2f%% of the time: too little to time the replay",
                cpu_share * 100);
    long_ticks = (uint64_t)(LONG_GAP_NS / ns_per_tick);
    pause_ticks = (uint64_t)(PAUSE_NS / ns_per_tick);
    rep.cpu_units = 1;
}

void rep_out_event(uint64_t t_entry, uint64_t t_exit)
{
    uint64_t gap = 0;
    if (rep.cpu_units) {
        gap = nevents ? close_gap(t_entry) : 0;
        cur = next;
        cur.t0 = t_exit;
        rec_exit = rep.ev.t_exit;
    }
    if (nbuf == BUF_ENTRIES) /* a call whose exit skipped rep_out_exit */
        flush_buf();
    uint64_t *v = buf + 3 * nbuf++; /* x86-64 and aarch64 are little-endian */
    v[0] = t_entry, v[1] = t_exit, v[2] = gap;
    nevents++;
}

/* The replayer's own time inside every gap: from the exit clock of one
 * call to the entry clock of the next, the copy into the buffer, the
 * returns, and the next wrapper's entry.  About 10 ns here, as the
 * recorder's (30 ns when the entries went through stdio and its lock): a
 * program that polls every few ns (HPCC's RandomAccess, about 2.4 million
 * MPI_Test and MPI_Testany a rank) would measure that much computation per
 * call on any node.  Its calls, MPI_Test on MPI_REQUEST_NULL back to back,
 * take the same path as the program's (rep.probing: MPI answers them,
 * nothing is checked); their entries precede MPI_Init's in the file, so
 * that `phantom replay` can turn their gaps into the same units as the
 * program's (on a throttled node, CPU time over the share) and take their
 * mean off each unit. */
void rep_out_probe(void)
{
    MPI_Request none = MPI_REQUEST_NULL;
    int flag;
    rep.probing = 1;
    for (int i = 0; i < REP_PROBE_CALLS; i++)
        MPI_Test(&none, &flag, MPI_STATUS_IGNORE); /* the wrapper, as a program calls it */
    rep.probing = 0;
    nprobe = nevents;
    nevents = 0; /* MPI_Init's entry is the first unit's start, as without the probe */
}

void rep_out_close(int how)
{
    if (times_fd < 0)
        return;
    uint64_t c1, t1;
    ph_clock_pair(rep.tsc, &c1, &t1);
    uint8_t h[HEADER] = {0};
    memcpy(h, TIMES_MAGIC, 8);
    ph_put_le(h + 8, rep.rank, 4);
    ph_put_le(h + 12, rep.nranks, 4);
    ph_put_le(h + 16, c0, 8);
    ph_put_le(h + 24, t0, 8);
    ph_put_le(h + 32, c1, 8);
    ph_put_le(h + 40, t1, 8);
    ph_put_le(h + 48, nevents, 8);
    h[56] = (uint8_t)how;
    ph_put_le(h + 58, busy_permille(), 2);
    h[60] = (uint8_t)rep.isolated;
    ph_put_le(h + 64, (uint64_t)(cpu_share * 1e6 + 0.5), 8); /* parts per million; 0: wall units */
    ph_put_le(h + 72, cpu_cost, 8);
    ph_put_le(h + 80, nprobe, 8);
    flush_buf();
    put(h, HEADER, 0);
    if (close(times_fd) != 0 && !write_errno)
        write_errno = errno;
    if (write_errno)
        fprintf(stderr, "phantom replay: rank %d: %s: cannot write: %s\n", rep.rank, rep.times_path,
                strerror(write_errno));
    times_fd = -1;
}
