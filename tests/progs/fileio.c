/* fileio.c - fileio FILE: each rank writes its block of FILE with MPI-IO
 * (collective, at its rank's offset), then reads back the next rank's
 * block and says whether it holds what that rank wrote.  MPI-IO is passed
 * through by the recorder and runs for real in a replay, where a rank
 * replayed without the others reads back what they did not write. */
#include <mpi.h>
#include <stdio.h>

enum { BLOCK = 256 };

int main(int argc, char **argv)
{
    int rank, size, out[BLOCK], in[BLOCK];
    MPI_File fh;
    MPI_Init(&argc, &argv);
    if (argc != 2) {
        fprintf(stderr, "usage: fileio FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < BLOCK; i++) {
        out[i] = rank * 1000 + i;
        in[i] = -1; /* what a read past the end of the file leaves */
    }
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_write_at_all(fh, (MPI_Offset)rank * (MPI_Offset)sizeof out, out, BLOCK, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    int next = (rank + 1) % size, same = 1;
    MPI_File_read_at_all(fh, (MPI_Offset)next * (MPI_Offset)sizeof in, in, BLOCK, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    for (int i = 0; i < BLOCK; i++)
        same &= in[i] == next * 1000 + i;
    printf("rank %d read back rank %d's block: %s\n", rank, next, same ? "ok" : "wrong");
    MPI_Finalize();
    return 0;
}
