/* phantom-calibrate.c - measure LogGP parameters with ping-pong micro-benchmarks.
 *
 *   mpirun -np 2 --map-by node phantom calibrate [-o FILE] [--name NAME] [--reps N]
 *   mpirun -np N phantom calibrate --check-cpu
 *
 * `phantom calibrate` (cli/cmd-calibrate.c) execs this MPI program in each
 * rank, as  phantom-calibrate NAME REPS SHARE [FILE], or phantom-calibrate
 * --check-cpu (only the CPU's availability, below, for any number of ranks).  Rank 0 writes a platform
 * file (doc/platform-format.md) to FILE, or stdout, with
 * o_s, o_r, L, G, o' and the eager limit between the two ranks, measured as
 * in Kielmann et al., "Fast measurement of LogP parameters" (one-way times
 * from round trips; overheads from bursts) and the SIM-MPI model of Zhai et
 * al., Section 6:
 *
 *   T(K)      half a ping-pong round trip of K bytes (the fastest of REPS runs:
 *             on a shared machine interference only ever adds time; on a
 *             throttled CPU the median of short runs, below)
 *   o_s       per-call time of a burst of small MPI_Sends into pre-posted receives
 *   o_r       per-call time of MPI_Recv of small messages that have already
 *             arrived, at most T(1) - o_s (taking an unexpected message can cost
 *             more than one the receive waits for, which is what T(1) shows)
 *   L         T(1) - o_s - o_r                    (eager: T = o_s + G(K-1) + L + o_r)
 *   G         slope of T between 1 MiB and 4 MiB (the bandwidth of large messages;
 *             throttled, between 256 KiB and 1 MiB)
 *   eager     the largest K whose MPI_Send returns before the receiver, 2 ms
 *             late (polling meanwhile), posts its receive (bisection)
 *   O         the sender's CPU per byte of an eager message (LogGOPS's O):
 *             the least-squares slope of T over the eager sizes (64 B to the
 *             largest power of two under the eager limit, at least 4 KiB)
 *             less G, at least 0.  Where the CPU copies each message (TCP)
 *             eager messages cost more a byte than large ones, which the
 *             transport pipelines
 *   o'        from the jump: T(E+1) less the eager sizes' line at E+1 (where
 *             there is none, less T(E)) = 2(o' + L + o') - OE, so
 *             o' = ((jump + OE)/2 - L) / 2
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

#include "simmpi.h" /* SIMMPI_THROTTLED_SHARE */

#define MAX_REPS 64     /* runs kept per measurement (cmd-calibrate's --reps) */

/* This program is one thread per rank: plain globals. */
static int me;
/* Sends read sbuf, receives write rbuf, as an application's do.  One
 * buffer for both halved the bandwidth of large messages over shared
 * memory (8.7 against 15-19 GB/s here): the receive then writes the lines
 * the partner's copy has just read, which first leave the partner's cache. */
static char *sbuf, *rbuf;
#define BUF_BYTES (5L << 20)
static int keep_median; /* throttled: the median of the short runs, not the fastest */

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The run kept: the fastest (interference only ever adds time), or on a
 * throttled CPU the median of the short runs, most of which no pause hit:
 * the fastest of many varies more, calibration to calibration. */
static double kept(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmpd);
    return keep_median ? v[n / 2] : v[0];
}

/* How a measurement is repeated.  Unthrottled: reps runs of the usual
 * length, the fastest kept.  On a throttled CPU a long run always meets the
 * quota's pauses (milliseconds, at random), so the fastest of long runs is
 * not the CPU at full speed, and it varies from calibration to calibration:
 * runs are then cut to about 0.2 ms, short enough to fit between two pauses,
 * there are three times as many, and the median is kept. */
typedef struct runs {
    int reps, throttled;
} runs;

#define SHORT_RUN_NS 2e5

/* Iterations of a run: dflt, or on a throttled CPU as many as fit in a
 * short run at about est_ns each. */
static int iters(const runs *rs, int dflt, double est_ns)
{
    if (!rs->throttled)
        return dflt;
    double n = SHORT_RUN_NS / (est_ns > 1 ? est_ns : 1);
    return n < 1 ? 1 : n > dflt ? dflt : (int)n;
}

/* One round trip of K bytes: rank 0 sends first, rank 1 answers. */
static void round_trip(long k)
{
    if (me == 0) {
        MPI_Send(sbuf, (int)k, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(rbuf, (int)k, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(rbuf, (int)k, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sbuf, (int)k, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
}

/* One exchange of K bytes each way: both ranks in MPI_Sendrecv. */
static void swap(long k)
{
    int peer = 1 - me;
    MPI_Sendrecv(sbuf, (int)k, MPI_BYTE, peer, 4, rbuf, (int)k, MPI_BYTE, peer, 4, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
}

/* The time of one step(k) over the transfers it makes one after the other
 * (ns), from the run kept() keeps of reps runs of iters steps each, after
 * a barrier; rank 0's, on every rank. */
static double timed(void (*step)(long), long k, int iters, int reps, double transfers)
{
    double t[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            step(k);
        t[r] = (MPI_Wtime() - t0) * 1e9 / (transfers * iters);
    }
    double m = kept(t, reps);
    MPI_Bcast(&m, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return m;
}

/* One-way time of K bytes (ns): half a round trip. */
static double oneway(long k, int iters, int reps) { return timed(round_trip, k, iters, reps, 2.0); }

/* Time of one exchange of K bytes each way (ns).  Against the one-way time
 * it tells whether a rank sends and receives at once (a NIC, or shared
 * memory: about the same time) or takes turns, as where its own CPU copies
 * the bytes of both directions (TCP over loopback: up to twice as long). */
static double exchange(long k, int iters, int reps) { return timed(swap, k, iters, reps, 1.0); }

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
    double t[MAX_REPS];
    MPI_Request rq[BURST];
    for (int r = 0; r < reps; r++) {
        if (me == 1)
            for (int i = 0; i < BURST; i++)
                MPI_Irecv(rbuf + i * 8, 8, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &rq[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (me == 0)
            for (int i = 0; i < BURST; i++)
                MPI_Send(sbuf + i * 8, 8, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
        t[r] = (MPI_Wtime() - t0) * 1e9 / BURST;
        if (me == 1)
            MPI_Waitall(BURST, rq, MPI_STATUSES_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double m = kept(t, reps);
    MPI_Bcast(&m, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return m;
}

#define POLL_SPREAD_S 1.5

/* The mean of the runs of v that took at most twice the median: the runs
 * a pause or a burst of other work hit are out, as long as they are fewer
 * than half (dropping the slowest tenth let through a calibration whose
 * o_poll came out 45 us where it is 0.5: a CPU quota's 50 ms pauses had
 * hit about 12 of its 45 short runs), and the two levels a failed Test
 * costs over TCP (0.55 and 0.75 us) both count. */
static double robust_mean(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmpd);
    double limit = 2 * v[n / 2], sum = 0;
    int keep = 0;
    while (keep < n && v[keep] <= limit)
        sum += v[keep++];
    return sum / keep; /* keep >= n/2 + 1: the median is within its limit */
}

/* o_poll (probe = 0: MPI_Test of a receive) and o_iprobe (probe = 1):
 * rank 0 polls for a message that never comes.  Over TCP a failed Test
 * costs one of two levels (here about 0.55 and 0.65-0.75 us) that each
 * last about a second, and an application polling for seconds pays the
 * mixture; one calibration timing its runs back to back got one level or
 * the other (HPCC's prediction moved by up to a half with it).  So the runs are
 * spread over POLL_SPREAD_S, and their mean within twice the median is
 * kept (robust_mean). */
static double poll_overhead(int reps, int probe, int polls)
{
    double t[MAX_REPS];
    int dummy;
    MPI_Request q = MPI_REQUEST_NULL;
    if (me == 0 && !probe)
        MPI_Irecv(&dummy, 1, MPI_INT, 1, 98, MPI_COMM_WORLD, &q);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int r = 0; r < reps; r++) {
        while (MPI_Wtime() - start < POLL_SPREAD_S * r / reps)
            ;
        MPI_Barrier(MPI_COMM_WORLD);
        int flag;
        double t0 = MPI_Wtime();
        for (int i = 0; i < polls && me == 0; i++) {
            if (probe)
                MPI_Iprobe(1, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            else
                MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
        }
        t[r] = (MPI_Wtime() - t0) * 1e9 / polls;
    }
    if (q != MPI_REQUEST_NULL) {
        MPI_Cancel(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    double m = robust_mean(t, reps);
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
    double t[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0)
            for (int i = 0; i < BURST; i++)
                MPI_Send(sbuf + i * 8, 8, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
        spin(0.002);
        double t0 = MPI_Wtime();
        if (me == 1)
            for (int i = 0; i < BURST; i++)
                MPI_Recv(rbuf + i * 8, 8, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        t[r] = (MPI_Wtime() - t0) * 1e9 / BURST;
    }
    double m = kept(t, reps);
    MPI_Bcast(&m, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
    return m;
}

/* The eager-limit scan's runs: T(1) and G estimate a round trip of K bytes. */
typedef struct scan {
    runs rs;
    double t1, g;
} scan;

static double scan_oneway(const scan *sc, long k, int dflt)
{
    return oneway(k, iters(&sc->rs, dflt, 2 * (sc->t1 + sc->g * (double)k)), sc->rs.reps);
}

#define SCAN_SIZES 15 /* 64 B to 1 MiB */

/* t[i] = T(64 << i), the lesser of what it was and a new run. */
static void scan_point(const scan *sc, double *t, int i, int first)
{
    long k = 64L << i;
    double tk = scan_oneway(sc, k, k < 65536 ? 2000 : 200);
    t[i] = !first && t[i] < tk ? t[i] : tk;
}

/* Whether a K-byte MPI_Send returns before its receive is posted.  Rank 1
 * posts the receive only after HOLD_S, all of which it spends in Iprobes
 * for another tag: a rendezvous send cannot complete before the receive
 * matches it, an eager one returns as soon as the receiver's progress has
 * taken the data (over shared memory, Open MPI's sends above 256 bytes wait
 * for that, while a receiver that never polled would hold them: those
 * were taken for rendezvous before the Iprobes).  A send that took long
 * may have met a pause of its own, so that takes another try.
 * Unlike a jump in the one-way time, this does not move with the noise:
 * over this VM's TCP loopback, whose one-way times change level from one
 * second to the next by a fifth, the largest jump of a scan over 64 B to 1
 * MiB was at 1, 4, 14 or 300 KiB in four calibrations of seven
 * (2026-12-07); Open MPI's limit is 64 KiB less its headers. */
#define HOLD_S 0.002
static int sends_eagerly(long k)
{
    int eager = 0;
    for (int try = 0; try < 3 && !eager; try++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            double t0 = MPI_Wtime();
            MPI_Send(sbuf, (int)k, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
            eager = MPI_Wtime() - t0 < HOLD_S / 2;
        } else {
            int flag;
            for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < HOLD_S;)
                MPI_Iprobe(0, 6, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            MPI_Recv(rbuf, (int)k, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Bcast(&eager, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    return eager;
}

/* The eager limit: the largest size sent eagerly, by bisection over 0 to
 * 1 MiB (1 MiB: none up to there). */
static long eager_limit(void)
{
    if (sends_eagerly(1L << 20))
        return 1L << 20;
    long lo = 0, hi = 1L << 20; /* lo eager (0: nothing is), hi not */
    while (hi - lo > 1) {
        long mid = lo + (hi - lo) / 2;
        if (sends_eagerly(mid))
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The least-squares line T(k) = icpt + slope k over the eager sizes 64 B,
 * 128 B, ..., up to the largest power of two under the limit, at least 4
 * KiB (else slope 0 and *n_out 0): O is its slope less G.  Each T(k) the
 * lesser of two passes: other work on the node slows a run, never speeds it. */
#define O_SIZES_MIN 7 /* 64 B to 4 KiB */
static double eager_slope(const scan *sc, long limit, double t[SCAN_SIZES], int *n_out, double *icpt)
{
    int n = 0;
    while (n < SCAN_SIZES && (64L << n) <= limit)
        n++;
    *n_out = n >= O_SIZES_MIN ? n : 0;
    if (!*n_out)
        return 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            scan_point(sc, t, i, !pass);
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double x = (double)(64L << i);
        sx += x, sy += t[i], sxx += x * x, sxy += x * t[i];
    }
    double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    *icpt = (sy - slope * sx) / n;
    return slope;
}

/* Every rank probes its CPU at once; rank 0 gets them all (others NULL).
 * For a second: ten periods of the kernel's (and a container's) default 100
 * ms quota period, whose part-period would otherwise skew the share by up
 * to a tenth (the better of two half-second probes said 0.57 where probes
 * of a second said 0.50). */
static cpu_seen *cpu_of_ranks(int np)
{
    MPI_Barrier(MPI_COMM_WORLD);
    cpu_seen mine = cpu_availability(1.0), *all = me == 0 ? malloc((size_t)np * sizeof *all) : NULL;
    if (me == 0 && !all)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Gather(&mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return all;
}

/* Rank 0: the least share of the time any rank ran. */
static double least_share(const cpu_seen *all, int np)
{
    double least = 1;
    for (int r = 0; r < np; r++)
        least = all[r].share < least ? all[r].share : least;
    return least;
}

/* The CPU a calibration measures on.  A quota or steal time lasts, a burst
 * of other work (the launcher still starting up) does not: when a rank
 * looks throttled, every rank probes once more and keeps its better probe. */
static cpu_seen *settled_cpu(int np)
{
    cpu_seen *cpu = cpu_of_ranks(np);
    int again = me == 0 && least_share(cpu, np) < SIMMPI_THROTTLED_SHARE;
    MPI_Bcast(&again, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!again)
        return cpu;
    cpu_seen *second = cpu_of_ranks(np);
    for (int r = 0; me == 0 && r < np; r++)
        if (second[r].share > cpu[r].share)
            cpu[r] = second[r];
    free(second);
    return cpu;
}

/* --check-cpu: rank 0 prints a line for each rank. */
static int check_cpu(int np)
{
    cpu_seen *all = cpu_of_ranks(np);
    for (int r = 0; me == 0 && r < np; r++)
        printf("rank %d: ran %.1f%% of the time, paused %.0f times a second for %.3f ms on average%s\n", r,
               100 * all[r].share, all[r].per_sec, all[r].pause_ms,
               all[r].share < SIMMPI_THROTTLED_SHARE ? " (throttled or shared)" : "");
    free(all);
    MPI_Finalize();
    return 0;
}

/* What the ping-pongs measured (ns, G in ns per byte). */
typedef struct measured {
    double os, orr, l, g, oprime, opoll, oiprobe, half_duplex;
    double o_byte, eager_slope; /* O; the slope it came from (0: range too short) */
    double scan_t[SCAN_SIZES];  /* T(64 << i) for i < nscan: O's scan */
    int nscan;                  /* 0: too few eager sizes, O not measured */
    double os_seen, orr_seen; /* before the cut that keeps o_s + o_r <= T(1) */
    double t1, t256, tb0, tb1, jump, xb0, xb1;
    long big0, big1, eager;
    int reps;
} measured;

/* Progress on stderr, from rank 0: a calibration takes about 10 s, and
 * under mpirun stderr is no terminal to draw a bar on, so one line a step. */
#define STEPS 6
static double started_s; /* set once in main (this program has one thread) */

static void step(int k, const char *what)
{
    if (me == 0)
        fprintf(stderr, "phantom calibrate: [%d/%d] %s (at %.1f s)\n", k, STEPS, what, mono_s() - started_s);
}

static measured measure(int reps, int throttled)
{
    runs rs = {.reps = throttled ? (3 * reps < MAX_REPS ? 3 * reps : MAX_REPS) : reps, .throttled = throttled};
    measured m = {.reps = rs.reps};
    keep_median = throttled;
    step(2, "send and receive overheads o_s, o_r");
    double warm = oneway(8, iters(&rs, 2000, 0), 3); /* warms up, and estimates T(8) from a long run */
    m.os = send_overhead(rs.reps);
    m.orr = recv_overhead(rs.reps);
    step(3, "polls that find nothing: o_poll, o_iprobe");
    m.opoll = poll_overhead(rs.reps, 0, iters(&rs, 10000, 1000));
    m.oiprobe = poll_overhead(rs.reps, 1, iters(&rs, 10000, 1000));
    step(4, "ping-pong of small messages: L");
    m.t1 = oneway(1, iters(&rs, 5000, 2 * warm), rs.reps);
    m.t256 = oneway(256, iters(&rs, 5000, 2 * warm), rs.reps);
    m.os_seen = m.os;
    m.orr_seen = m.orr;
    if (m.os > m.t1)
        m.os = m.t1;
    if (m.orr > m.t1 - m.os)
        m.orr = m.t1 - m.os;
    m.l = m.t1 - m.os - m.orr;
    /* G: the slope over large messages; throttled, between 256 KiB and 1
     * MiB, whose round trips fit in a short run as 4 MiB ones do not. */
    long big0 = throttled ? 256L << 10 : 1L << 20, big1 = throttled ? 1L << 20 : 4L << 20;
    step(5, "large messages, one way and exchanged: G, half_duplex");
    m.tb0 = oneway(big0, throttled ? 1 : 20, rs.reps);
    m.tb1 = oneway(big1, throttled ? 1 : 10, rs.reps);
    m.big0 = big0;
    m.big1 = big1;
    m.g = (m.tb1 - m.tb0) / (double)(big1 - big0);
    /* half_duplex: how much longer an exchange's bytes take than one way's,
     * over the same sizes (doc/simmpi.md section 3) */
    m.xb0 = exchange(big0, throttled ? 1 : 20, rs.reps);
    m.xb1 = exchange(big1, throttled ? 1 : 10, rs.reps);
    double gx = (m.xb1 - m.xb0) / (double)(big1 - big0);
    m.half_duplex = m.g > 0 ? gx / m.g - 1 : 0;
    m.half_duplex = m.half_duplex < 0 ? 0 : m.half_duplex > 1 ? 1 : m.half_duplex;
    step(6, "the eager limit, O and o'");
    scan sc = {.rs = rs, .t1 = m.t1, .g = m.g};
    m.eager = eager_limit();
    double icpt = 0;
    m.eager_slope = eager_slope(&sc, m.eager, m.scan_t, &m.nscan, &icpt);
    m.o_byte = m.eager_slope > m.g ? m.eager_slope - m.g : 0;
    /* the jump: T(E+1) above the eager sizes' line where there is one.
     * T(E) itself can be off it: over TCP loopback, whose MTU is 64 KiB,
     * the last eager size took as long as the first rendezvous one. */
    double after = scan_oneway(&sc, m.eager + 1, 2000);
    m.jump = after - (m.nscan ? icpt + m.eager_slope * (double)(m.eager + 1) : scan_oneway(&sc, m.eager, 2000));
    m.oprime = ((m.jump + m.o_byte * (double)m.eager) / 2 - m.l) / 2;
    if (m.oprime < 0)
        m.oprime = 0;
    return m;
}

static void warn_throttled(FILE *out, const cpu_seen *cpu)
{
    for (int r = 0; r < 2; r++) {
        if (cpu[r].share >= SIMMPI_THROTTLED_SHARE)
            continue;
        fprintf(out, "# WARNING: rank %d ran %.0f%% of the time, paused %.0f times a second for %.2f ms on "
                     "average\n# (a CPU quota, steal time or another busy process): a paused rank delays every "
                     "exchange\n# with it, which no LogGP parameter holds (doc/accuracy.md).\n",
                r, 100 * cpu[r].share, cpu[r].per_sec, cpu[r].pause_ms);
        fprintf(stderr, "phantom calibrate: warning: rank %d's CPU ran %.0f%% of the time (pauses of %.2f ms, "
                        "%.0f a second): the target's communication will be slower than this file says\n",
                r, 100 * cpu[r].share, cpu[r].pause_ms, cpu[r].per_sec);
    }
}

/* A throttled node's pauses, as the simulator's CPU noise would take them
 * (commented out): the ranks' mean rate and their mean length (all the
 * ranks' time off over all their pauses). */
static void write_noise(FILE *out, const cpu_seen *cpu, int np)
{
    double off = 0, rate = 0;
    for (int r = 0; r < np; r++) {
        off += cpu[r].per_sec * cpu[r].pause_ms;
        rate += cpu[r].per_sec;
    }
    if (!(rate > 0))
        return;
    double pause_ms = off / rate;
    rate /= np;
    if (pause_ms * rate >= 1e3) /* no time left to run: not a pattern to simulate */
        return;
    fprintf(out, "# To simulate these pauses (doc/simmpi.md, CPU noise; not done by default:\n"
                 "# on a quota shared by the node's ranks they are partly synchronised, and\n"
                 "# unsynchronised noise over-predicted, doc/accuracy.md):\n");
    fprintf(out, "# noise_pause = %.3fms\n# noise_rate = %.1f\n# noise_sync = rank\n", pause_ms, rate);
}

/* Rank 0: the platform file.  The CPU overheads are the kept runs' times
 * over the share (cpu_scale = 1 / share, or 1 unthrottled). */
static void write_platform(FILE *out, const char *name, const measured *m, const cpu_seen *cpu,
                           double share, double measured_share, double cpu_scale)
{
    int len;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n,")] = 0;
    char host[256] = "?", when[64];
    time_t now = time(NULL);
    gethostname(host, sizeof host - 1);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(out, "# Measured by phantom calibrate on %s at %s\n", host, when);
    fprintf(out, "# (ping-pong, %s of %d runs%s) with %s.\n", cpu_scale != 1 ? "median" : "fastest", m->reps,
            cpu_scale != 1 ? " of about 0.2 ms, most of which fit between two pauses" : "", lib);
    fprintf(out, "# T(1) = %.1f ns, T(256) = %.1f ns, T(%ld KiB) = %.0f ns, T(%ld KiB) = %.0f ns,\n", m->t1,
            m->t256, m->big0 >> 10, m->tb0, m->big1 >> 10, m->tb1);
    long slope_kib = m->nscan ? (64L << (m->nscan - 1)) >> 10 : 0; /* O's largest size */
    if (m->nscan) {
        fprintf(out, "# T(64 B), T(128 B) .. T(%ld KiB), O's scan, ns:\n#", slope_kib);
        for (int i = 0; i < m->nscan; i++)
            fprintf(out, " %.0f%s", m->scan_t[i], i == 7 && i + 1 < m->nscan ? "\n#" : ""); /* 8 a line */
        fputc('\n', out);
    }
    fprintf(out, "# rendezvous jump at the eager limit (T(E+1) over the eager sizes): %.1f ns%s.\n", m->jump,
            m->oprime > 0 ? "" : " (not above 2L: o_prime is below what this run can see, 0 taken)");
    if (m->l < 0.05) /* what L = %.1f writes as 0.0 */
        fprintf(out, "# L is 0: o_s + o_r as measured (%.1f + %.1f ns) take the whole one-way\n"
                     "# time T(1) (o_r is cut to fit, if need be).\n",
                m->os_seen, m->orr_seen);
    warn_throttled(out, cpu);
    if (cpu_scale != 1)
        fprintf(out, "# The CPU ran %.0f%% of the time, so each CPU overhead below is its time at\n"
                     "# full speed over %.3f (o_s %.1f, o_r %.1f, o_prime %.1f, o_poll %.1f, o_iprobe\n"
                     "# %.1f ns): a call's own work takes as much longer as the computation replayed\n"
                     "# here.  L and G are as measured.\n",
                100 * share, share, m->os, m->orr, m->oprime, m->opoll, m->oiprobe);
    fprintf(out, "name = %s\nnetwork_model = loggp\n", name);
    fprintf(out, "calibrated = %s by phantom calibrate on %.40s\n", when, host);
    if (share != measured_share)
        fprintf(out, "cpu_share = %.3f      # given by --cpu-share; measured %.3f\n", share, measured_share);
    else
        fprintf(out, "cpu_share = %.3f      # the least share of the time a rank had its CPU (below %.2f: throttled)\n",
                share, SIMMPI_THROTTLED_SHARE);
    fprintf(out, "o_s = %.1fns\no_r = %.1fns\nL = %.1fns\no_prime = %.1fns\n", m->os * cpu_scale,
            m->orr * cpu_scale, m->l, m->oprime * cpu_scale);
    fprintf(out, "G = %.5f          # ns per byte: %.2f GB/s\n", m->g, m->g > 0 ? 1.0 / m->g : 0.0);
    fprintf(out, "eager_limit = %ld\n", m->eager);
    if (m->nscan)
        fprintf(out, "# O: T's slope over the eager sizes, 64 B to %ld KiB, %.5f ns a byte, less G\n"
                     "O = %.5f          # ns per byte an eager send takes of the sender's CPU\n",
                slope_kib, m->eager_slope, m->o_byte);
    else
        fprintf(out, "O = 0              # not measured: eager sizes stop below 4 KiB\n");
    fprintf(out, "half_duplex = %.2f     # exchanging %ld KiB and %ld KiB each way: %.0f and %.0f ns\n",
            m->half_duplex, m->big0 >> 10, m->big1 >> 10, m->xb0, m->xb1);
    fprintf(out, "o_poll = %.1fns\no_iprobe = %.1fns\n", m->opoll * cpu_scale, m->oiprobe * cpu_scale);
    if (cpu_scale != 1)
        write_noise(out, cpu, 2); /* calibrate runs on two ranks */
}

/* phantom-calibrate NAME REPS SHARE [FILE]  (SHARE: "auto" or --cpu-share's value) */
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
    const char *share_arg = argc > 3 ? argv[3] : "auto";
    const char *path = argc > 4 ? argv[4] : NULL;
    if (np != 2 || reps < 1 || reps > MAX_REPS) {
        if (me == 0)
            fprintf(stderr, "phantom calibrate: needs exactly 2 ranks (it has %d): "
                            "mpirun -np 2 --map-by node phantom calibrate -o FILE\n", np);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* The result goes to PATH.part, made only once the measurements are
     * done and renamed over PATH at once: a calibration cut short (^C, a
     * job's time limit, even SIGKILL) leaves PATH as it was and no
     * PATH.part.  Whether PATH.part can be made is tried first, so that a
     * bad path fails now, not after the measurements. */
    char *part = NULL;
    if (me == 0 && path) {
        FILE *probe = NULL;
        if ((part = malloc(strlen(path) + sizeof ".part")))
            strcat(strcpy(part, path), ".part");
        if (!part || !(probe = fopen(part, "w"))) {
            fprintf(stderr, "phantom calibrate: %s: cannot create: %s\n", part ? part : path, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 1);
        } else {
            fclose(probe);
            unlink(part);
        }
    }
    sbuf = malloc(BUF_BYTES);
    rbuf = malloc(BUF_BYTES);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "phantom calibrate: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sbuf, 1, BUF_BYTES); /* touched: no page faults inside the timed runs */
    memset(rbuf, 2, BUF_BYTES);
    started_s = mono_s();
    step(1, "the CPU's share of the time");
    cpu_seen *cpu = settled_cpu(np);
    /* The least share any rank ran, or the one --cpu-share gave: both
     * ranks need it (the eager-limit scan's runs depend on it). */
    double measured_share = me == 0 ? least_share(cpu, np) : 0;
    MPI_Bcast(&measured_share, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double share = strcmp(share_arg, "auto") ? atof(share_arg) : measured_share;
    int throttled = share < SIMMPI_THROTTLED_SHARE;
    measured m = measure(reps, throttled);
    if (me == 0) {
        FILE *out = part ? fopen(part, "w") : stdout;
        if (out)
            write_platform(out, name, &m, cpu, share, measured_share, throttled ? 1 / share : 1);
        if (!out || (out != stdout && (fclose(out) != 0 || rename(part, path) != 0))) {
            fprintf(stderr, "phantom calibrate: %s: write failed: %s\n", path, strerror(errno));
            unlink(part); /* set: writing to stdout (no PATH) never comes here */
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fprintf(stderr, "phantom calibrate: %s%s in %.1f s\n", path ? "wrote " : "done", path ? path : "",
                mono_s() - started_s);
    }
    free(part);
    free(cpu);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
