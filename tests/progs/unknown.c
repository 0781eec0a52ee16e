/* unknown.c - MPI calls the recorder does not sequence: local queries
 * (counted) and one-sided communication (passed through, counted as
 * unknown).  The program must run as without the recorder. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank = 0, size, buf[4] = {0};
    MPI_Win win;
    MPI_Init(&argc, &argv);
    for (int i = 0; i < 3; i++)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    int one = rank + 1;
    MPI_Put(&one, 1, MPI_INT, (rank + 1) % size, rank % 4, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_Barrier(MPI_COMM_WORLD);
    int from = (rank + size - 1) % size;
    printf("rank %d got %d from rank %d\n", rank, buf[from % 4], from);
    MPI_Finalize();
    return buf[from % 4] == from + 1 ? 0 : 1;
}
