/* persistent.c - persistent requests matched against plain ones, on a
 * duplicated communicator: rank 0 sends with Send_init/Start to rank 1's
 * MPI_Recv, then with MPI_Send to rank 1's Recv_init/Start.
 * An MPI_Start names no communicator; the simulator must post each
 * instance on the one the request was created on.
 *
 *   mpirun -np 2 persistent [ROUNDS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, buf[16] = {0};
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    MPI_Comm comm;
    MPI_Request r;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "persistent: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (rank == 0)
        MPI_Send_init(buf, 16, MPI_INT, 1, 7, comm, &r);
    else
        MPI_Recv_init(buf, 16, MPI_INT, 0, 8, comm, &r);
    for (int i = 0; i < rounds; i++) {
        if (rank == 0) {
            buf[0] = i;
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            MPI_Send(buf, 16, MPI_INT, 1, 9, comm); /* a plain one beside it */
        } else {
            MPI_Recv(buf, 16, MPI_INT, 0, 7, comm, MPI_STATUS_IGNORE);
            MPI_Recv(buf, 16, MPI_INT, 0, 9, comm, MPI_STATUS_IGNORE);
        }
    }
    for (int i = 0; i < rounds; i++) {
        if (rank == 1) {
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Send(buf, 16, MPI_INT, 1, 8, comm);
        }
    }
    MPI_Request_free(&r);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
