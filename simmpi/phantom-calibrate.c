/* phantom-calibrate.c - measure LogGP parameters with ping-pong micro-benchmarks.
 *
 *   mpirun -np 2 --map-by node phantom calibrate [-o FILE] [--name NAME] [--reps N]
 *   mpirun -np N phantom calibrate --check-cpu
 *
 * `phantom calibrate` (cli/cmd-calibrate.c) execs this MPI program in each
 * rank, as  phantom-calibrate NAME REPS [FILE], or phantom-calibrate
 * --check-cpu (only the CPU's availability, below, for any number of ranks).  Rank 0 writes a platform
 * file (doc/platform-format.md) to FILE, or stdout, with
 * o_s, o_r, L, G, o' and the eager limit between the two ranks, measured as
 * in Kielmann et al., "Fast measurement of LogP parameters" (one-way times
 * from round trips; overheads from bursts) and the SIM-MPI model of Zhai et
 * al., Section 6:
 *
 *   T(K)      half a ping-pong round trip of K bytes (the fastest of REPS runs:
 *             on a shared machine interference only ever adds time)
 *   o_s       per-call time of a burst of small MPI_Sends into pre-posted receives
 *   o_r       per-call time of MPI_Recv of small messages that have already
 *             arrived, at most T(1) - o_s (taking an unexpected message can cost
 *             more than one the receive waits for, which is what T(1) shows)
 *   L         T(1) - o_s - o_r                    (eager: T = o_s + G(K-1) + L + o_r)
 *   G         slope of T between 1 MiB and 4 MiB (the bandwidth of large messages)
 *   eager     the size at which T jumps: the power-of-two interval whose
 *             growth most exceeds the linear trend, then bisection in it
 *   o'        from the jump: T(E+1) - T(E) = 2(o' + L + o') + G, so
 *             o' = (jump/2 - L) / 2
 *   o_poll    per-call time of MPI_Test of a receive nothing arrives for (a
 *             Test that fails: a poll of the progress engine)
 *   o_iprobe  per-call time of MPI_Iprobe when nothing is there; over shared
 *             memory Open MPI's Iprobe costs about three Tests
 *
 * Before that, each rank spins on the clock for a while and notes when it
 * was off the CPU: a CPU quota (a container's CPU limit, a cgroup), steal
 * time on a shared VM or another busy process pause a rank for
 * milliseconds, which LogGP has no term for, and which delay every exchange
 * with a paused partner.  The file then says so, and so does stderr.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int me;
static char *buf;

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double fastest(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmpd);
    return v[0];
}

/* One-way time of K bytes (ns): half the median round trip over reps runs of iters. */
static double oneway(long k, int iters, int reps)
{
    double t[64];
    for (int r = 0; r < reps && r < 64; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (me == 0) {
                MPI_Send(buf, (int)k, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)k, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, (int)k, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)k, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
        }
        t[r] = (MPI_Wtime() - t0) * 1e9 / (2.0 * iters);
    }
    double m = fastest(t, reps);
    MPI_Bcast(&m, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return m;
}

/* The CPU as a rank sees it: spin on the clock for `secs` and count the
 * gaps of more than 50 us (the rank was off the CPU). */
typedef struct cpu_seen {
    double share;     /* of the time this rank ran */
    double pause_ms;  /* mean pause */
    double per_sec;   /* pauses a second */
} cpu_seen;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static cpu_seen cpu_availability(double secs)
{
    double t0 = mono_s(), last = t0, now = t0, off = 0;
    long pauses = 0;
    while (now - t0 < secs) {
        now = mono_s();
        if (now - last > 50e-6) {
            off += now - last;
            pauses++;
        }
        last = now;
    }
    double span = now - t0;
    cpu_seen c = {.share = span > 0 ? 1 - off / span : 1,
                  .pause_ms = pauses ? off / (double)pauses * 1e3 : 0,
                  .per_sec = span > 0 ? (double)pauses / span : 0};
    return c;
}

#define BURST 16

/* o_s: rank 1 pre-posts BURST receives; rank 0 times BURST small sends. */
static double send_overhead(int reps)
{
    double t[64];
    MPI_Request rq[BURST];
    for (int r = 0; r < reps && r < 64; r++) {
        if (me == 1)
            for (int i = 0; i < BURST; i++)
                MPI_Irecv(buf + i * 8, 8, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &rq[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (me == 0)
            for (int i = 0; i < BURST; i++)
                MPI_Send(buf + i * 8, 8, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
        t[r] = (MPI_Wtime() - t0) * 1e9 / BURST;
        if (me == 1)
            MPI_Waitall(BURST, rq, MPI_STATUSES_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double m = fastest(t, reps);
    MPI_Bcast(&m, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return m;
}

/* o_poll (probe = 0: MPI_Test of a receive) and o_iprobe (probe = 1):
 * rank 0 polls for a message that never comes. */
static double poll_overhead(int reps, int probe)
{
    double t[64];
    int dummy;
    MPI_Request q = MPI_REQUEST_NULL;
    if (me == 0 && !probe)
        MPI_Irecv(&dummy, 1, MPI_INT, 1, 98, MPI_COMM_WORLD, &q);
    for (int r = 0; r < reps && r < 64; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        int flag;
        double t0 = MPI_Wtime();
        for (int i = 0; i < 10000 && me == 0; i++) {
            if (probe)
                MPI_Iprobe(1, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            else
                MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
        }
        t[r] = (MPI_Wtime() - t0) * 1e9 / 10000;
    }
    if (q != MPI_REQUEST_NULL) {
        MPI_Cancel(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    double m = fastest(t, reps);
    MPI_Bcast(&m, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return m;
}

static void spin(double secs)
{
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < secs)
        ;
}

/* o_r: rank 0 sends a burst, rank 1 lets it arrive, then times the receives. */
static double recv_overhead(int reps)
{
    double t[64];
    for (int r = 0; r < reps && r < 64; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0)
            for (int i = 0; i < BURST; i++)
                MPI_Send(buf + i * 8, 8, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
        spin(0.002);
        double t0 = MPI_Wtime();
        if (me == 1)
            for (int i = 0; i < BURST; i++)
                MPI_Recv(buf + i * 8, 8, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        t[r] = (MPI_Wtime() - t0) * 1e9 / BURST;
    }
    double m = fastest(t, reps);
    MPI_Bcast(&m, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
    return m;
}

/* The eager limit: where T jumps.  With T linear, T(2k) - T(k) = 2 (T(k) -
 * T(k/2)); a jump J in (k, 2k] adds J to the left side.  Find the k with the
 * largest excess, then bisect (k, 2k] against the line through T(k/2), T(k). */
static long eager_limit(int reps, double *jump_out)
{
    double t[32];
    int n = 0;
    for (long k = 64; k <= (1L << 20) && n < 32; k *= 2)
        t[n++] = oneway(k, k < 65536 ? 2000 : 200, reps);
    int best = -1;
    double excess = 0, rel = 0;
    for (int i = 1; i + 1 < n; i++) { /* k = 64 << i; relative, as noise grows with T */
        double e = (t[i + 1] - t[i]) - 2 * (t[i] - t[i - 1]);
        if (e / t[i + 1] > rel) {
            rel = e / t[i + 1];
            excess = e;
            best = i;
        }
    }
    *jump_out = excess;
    if (best < 0 || rel < 0.15 || excess < 200)
        return 1L << 20; /* no jump up to 1 MiB */
    long lo = 64L << best, hi = lo * 2;
    double slope = (t[best] - t[best - 1]) / (double)(lo / 2), base = t[best];
    while (hi - lo > 1) {
        long mid = lo + (hi - lo) / 2;
        if (oneway(mid, mid < 65536 ? 2000 : 100, reps) - (base + slope * (double)(mid - lo)) > excess / 2)
            hi = mid;
        else
            lo = mid;
    }
    return lo;
}

/* Every rank probes its CPU at once; rank 0 gets them all (others NULL). */
static cpu_seen *cpu_of_ranks(int np)
{
    MPI_Barrier(MPI_COMM_WORLD);
    cpu_seen mine = cpu_availability(0.5), *all = me == 0 ? malloc((size_t)np * sizeof *all) : NULL;
    if (me == 0 && !all)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Gather(&mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return all;
}

/* --check-cpu: rank 0 prints a line for each rank. */
static int check_cpu(int np)
{
    cpu_seen *all = cpu_of_ranks(np);
    for (int r = 0; me == 0 && r < np; r++)
        printf("rank %d: ran %.1f%% of the time, paused %.0f times a second for %.3f ms on average%s\n", r,
               100 * all[r].share, all[r].per_sec, all[r].pause_ms,
               all[r].share < 0.95 ? " (throttled or shared)" : "");
    free(all);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc > 1 && !strcmp(argv[1], "--check-cpu"))
        return check_cpu(np);
    const char *name = argc > 1 ? argv[1] : "calibrated";
    int reps = argc > 2 ? atoi(argv[2]) : 15;
    const char *path = argc > 3 ? argv[3] : NULL;
    if (np != 2 || reps < 1) {
        if (me == 0)
            fprintf(stderr, "phantom calibrate: needs exactly 2 ranks (it has %d): "
                            "mpirun -np 2 --map-by node phantom calibrate -o FILE\n", np);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    FILE *out = stdout;
    if (me == 0 && path && !(out = fopen(path, "w"))) {
        fprintf(stderr, "phantom calibrate: %s: cannot create: %s\n", path, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    buf = calloc(1, 5L << 20);
    cpu_seen *cpu = cpu_of_ranks(np);
    oneway(8, 2000, 3); /* warm up */
    double os = send_overhead(reps), orr = recv_overhead(reps);
    double opoll = poll_overhead(reps, 0), oiprobe = poll_overhead(reps, 1);
    double t1 = oneway(1, 5000, reps), t256 = oneway(256, 5000, reps);
    if (os > t1)
        os = t1;
    if (orr > t1 - os)
        orr = t1 - os;
    double l = t1 - os - orr;
    double tb1 = oneway(1L << 20, 20, reps), tb4 = oneway(4L << 20, 10, reps);
    double g = (tb4 - tb1) / (double)(3L << 20);
    double excess;
    long e = eager_limit(reps, &excess);
    double jump = oneway(e + 1, 2000, reps) - oneway(e, 2000, reps);
    if (jump < excess / 2) /* noise at the exact edge: trust the scan */
        jump = excess;
    double oprime = (jump / 2 - l) / 2;
    if (oprime < 0)
        oprime = 0;
    if (me == 0) {
        int len;
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n,")] = 0;
        char host[256] = "?", when[64];
        time_t now = time(NULL);
        gethostname(host, sizeof host - 1);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        fprintf(out, "# Measured by phantom calibrate on %s at %s\n", host, when);
        fprintf(out, "# (ping-pong, fastest of %d runs) with %s.\n", reps, lib);
        fprintf(out, "# T(1) = %.1f ns, T(256) = %.1f ns, T(1 MiB) = %.0f ns, T(4 MiB) = %.0f ns,\n", t1,
                t256, tb1, tb4);
        fprintf(out, "# rendezvous jump at the eager limit: %.1f ns%s.\n", jump,
                oprime > 0 ? "" : " (not above 2L: o_prime is below what this run can see, 0 taken)");
        for (int r = 0; r < 2; r++) {
            if (cpu[r].share >= 0.95)
                continue;
            fprintf(out, "# WARNING: rank %d ran %.0f%% of the time, paused %.0f times a second for %.2f ms on "
                         "average\n# (a CPU quota, steal time or another busy process): a paused rank delays every "
                         "exchange\n# with it, which no LogGP parameter holds (doc/accuracy.md).\n",
                    r, 100 * cpu[r].share, cpu[r].per_sec, cpu[r].pause_ms);
            fprintf(stderr, "phantom calibrate: warning: rank %d's CPU ran %.0f%% of the time (pauses of %.2f ms, "
                            "%.0f a second): the target's communication will be slower than this file says\n",
                    r, 100 * cpu[r].share, cpu[r].pause_ms, cpu[r].per_sec);
        }
        fprintf(out, "name = %s\nnetwork_model = loggp\n", name);
        fprintf(out, "calibrated = %s by phantom calibrate on %.40s\n", when, host);
        fprintf(out, "cpu_share = %.3f      # the least share of the time a rank had its CPU (below 0.95: throttled)\n",
                cpu[0].share < cpu[1].share ? cpu[0].share : cpu[1].share);
        fprintf(out, "o_s = %.1fns\no_r = %.1fns\nL = %.1fns\no_prime = %.1fns\n", os, orr, l, oprime);
        fprintf(out, "G = %.5f          # ns per byte: %.2f GB/s\n", g, g > 0 ? 1.0 / g : 0.0);
        fprintf(out, "eager_limit = %ld\n", e);
        fprintf(out, "o_poll = %.1fns\no_iprobe = %.1fns\n", opoll, oiprobe);
        if (out != stdout && fclose(out) != 0) {
            fprintf(stderr, "phantom calibrate: %s: write failed: %s\n", path, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    free(cpu);
    free(buf);
    MPI_Finalize();
    return 0;
}
