/* fault-loop.c - many MPI events, a chosen exit code, optionally a rank that dies.
 *
 *   fault-loop [-n ITERS] [-b BYTES] [-s USEC] [-x EXITCODE] [-k RANK -t SECONDS]
 *
 * Ranks pair up (0-1, 2-3, ...; an odd last rank talks to MPI_PROC_NULL) and
 * ping-pong BYTES bytes (default 8) of pseudo-random, incompressible data
 * ITERS times (default 100000), with an MPI_Allreduce of a checksum every
 * 1000 iterations, computing (sleeping) USEC microseconds per iteration
 * (default 0).  Rank 0 then prints one line,
 *   fault-loop: N ranks, ITERS iterations, checksum 0x...
 * that is the same for every run with the same arguments, calls
 * MPI_Finalize, and every rank exits with EXITCODE (default 0).
 *
 * With -k RANK -t SECONDS the loop runs until SECONDS have passed instead
 * (ITERS is ignored; the ranks agree on the moment by an Allreduce of their
 * clocks' verdicts), then RANK kills itself with SIGKILL while the other
 * ranks go on to the next Allreduce and wait there: what a crashed node
 * looks like to mpirun.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long iters = 100000, bytes = 8, usec = 0;
    int code = 0, kill_rank = -1;
    double kill_after = 0;
    int opt;
    while ((opt = getopt(argc, argv, "n:b:s:x:k:t:")) != -1) {
        switch (opt) {
        case 'n': iters = atol(optarg); break;
        case 'b': bytes = atol(optarg); break;
        case 's': usec = atol(optarg); break;
        case 'x': code = atoi(optarg); break;
        case 'k': kill_rank = atoi(optarg); break;
        case 't': kill_after = atof(optarg); break;
        default:
            fprintf(stderr, "usage: %s [-n ITERS] [-b BYTES] [-s USEC] [-x EXITCODE] [-k RANK -t SECONDS]\n",
                    argv[0]);
            return 2;
        }
    }
    if (bytes < 8)
        bytes = 8;
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int peer = me ^ 1;
    if (peer >= np)
        peer = MPI_PROC_NULL;
    rng += (uint64_t)me * 0x2545f4914f6cdd1dull;
    uint64_t *sbuf = malloc((size_t)bytes + 8), *rbuf = malloc((size_t)bytes + 8);
    if (!sbuf || !rbuf)
        MPI_Abort(MPI_COMM_WORLD, 2);
    size_t nwords = (size_t)bytes / 8;
    uint64_t sum = 0;
    double t0 = now();
    long done = 0;
    for (long i = 0; kill_rank >= 0 || i < iters; i++) {
        for (size_t w = 0; w < nwords; w++)
            sbuf[w] = next_rand();
        memset(rbuf, 0, nwords * 8);
        if (me % 2 == 0) {
            MPI_Send(sbuf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, (int)bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
        }
        for (size_t w = 0; w < nwords; w++)
            sum = sum * 31 + rbuf[w];
        if (usec > 0) {
            struct timespec d = {usec / 1000000, (usec % 1000000) * 1000};
            nanosleep(&d, NULL);
        }
        done = i + 1;
        if (done % 1000 == 0) {
            /* The ranks must agree on when to stop: each one's clock started
             * at its own time, and a rank that stopped alone would leave its
             * peer in a Recv that never completes (a hang, not a kill). */
            int stop = 0;
            if (kill_rank >= 0) {
                int late = now() - t0 >= kill_after;
                MPI_Allreduce(&late, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            }
            if (stop && me == kill_rank) {
                fflush(stdout);
                raise(SIGKILL);
            }
            uint64_t total = 0;
            MPI_Allreduce(&sum, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
            sum = total;
            if (stop) /* the killed rank never joins this Allreduce */
                break;
        }
    }
    uint64_t total = 0;
    MPI_Allreduce(&sum, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("fault-loop: %d ranks, %ld iterations, checksum 0x%016llx\n", np, done,
               (unsigned long long)total);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return code;
}
