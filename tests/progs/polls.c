/* polls.c - MPI_Test on MPI_REQUEST_NULL back to back, POLLS times (argv[1],
 * default 100000): a program with next to no computation between calls,
 * so that its gaps are the tools' own part of a gap.  The loop calls MPI
 * directly (an O_Test would put the oracle's work between the calls); the
 * Allreduce of the flags it saw feeds the checksum. */
#include "oracle.h"

int main(int argc, char **argv)
{
    O_Init(&argc, &argv);
    long polls = argc > 1 ? atol(argv[1]) : 100000, done = 0, all = 0;
    MPI_Request none = MPI_REQUEST_NULL;
    for (long i = 0; i < polls; i++) {
        int flag = 0;
        MPI_Test(&none, &flag, MPI_STATUS_IGNORE);
        done += flag;
    }
    O_Allreduce(&done, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (all != size * polls) /* a null request's Test always says done */
        fail("the ranks saw %ld of %ld Tests done", all, size * polls);
    O_Finalize();
    return 0;
}
