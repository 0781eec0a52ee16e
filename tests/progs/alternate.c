/* alternate.c - a job whose ranks swap roles from one run to the next, with
 * the same number of MPI calls in all: rank 0 reads and bumps a run counter
 * in FILE (argv[1]) and broadcasts it; on the second run (counter 1) rank 1
 * makes 5 extra sends to MPI_PROC_NULL, on every other run rank 0 does.  So
 * its first two runs differ rank by rank but not in their totals, and its
 * third and later runs are alike (a replay of the third makes its calls).
 * Prints "rank R checksum 0x..." of the counter's parity and its sends. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np, run = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (me == 0 && argc > 1) {
        FILE *f = fopen(argv[1], "r");
        if (f) {
            if (fscanf(f, "%d", &run) != 1)
                run = 0;
            fclose(f);
        }
        if ((f = fopen(argv[1], "w"))) {
            fprintf(f, "%d\n", run + 1);
            fclose(f);
        }
    }
    MPI_Bcast(&run, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int busy = run == 1 ? 1 % np : 0, sends = 0, x = 0;
    for (int i = 0; i < 10 + (me == busy ? 5 : 0); i++, sends++)
        MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD);
    int total = 0;
    MPI_Allreduce(&sends, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d checksum 0x%016x (%d sends of %d)\n", me, (unsigned)(sends * 1000 + total), sends, total);
    MPI_Finalize();
    return 0;
}
