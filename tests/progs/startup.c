/* startup.c - a start-up of known CPU time before MPI_Init.
 *
 *   startup MS
 *
 * World rank r (from Open MPI's OMPI_COMM_WORLD_RANK, as MPI cannot say it
 * yet) spins until its thread has used (r + 1) x MS milliseconds of CPU,
 * loading included (the clock starts before exec), then calls MPI_Init, a
 * Barrier and MPI_Finalize.  The recorder's STARTUP record reads the same
 * clock at MPI_Init's entry. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    double ms = argc > 1 ? atof(argv[1]) : 100;
    double until = (atoi(r ? r : "0") + 1) * ms;
    volatile unsigned long spin = 0;
    while (thread_cpu_ms() < until)
        spin++;
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d spun %.0f ms of CPU before MPI_Init\n", rank, until);
    MPI_Finalize();
    return 0;
}
