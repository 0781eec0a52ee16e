/* spawns.c - a job that starts processes of its own with MPI_Comm_spawn.
 * The ranks meet at a Barrier, spawn two children, and rank 0 sends 100 to
 * child 0 over the intercommunicator; the ranks then Allreduce 100 + rank
 * and disconnect from the children.  Prints "parent R sum S" on each rank
 * and "child R got V" on each child (V is -1 on child 1, which receives
 * nothing).  The children's own MPI_COMM_WORLD has ranks 0 and 1 too: a
 * recorder that recorded them would write over the job's rank files. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent, children;
    MPI_Comm_get_parent(&parent);
    int me, v = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (parent != MPI_COMM_NULL) {
        if (me == 0)
            MPI_Recv(&v, 1, MPI_INT, 0, 5, parent, MPI_STATUS_IGNORE);
        printf("child %d got %d\n", me, v);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int errs[2];
    MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &children, errs);
    v = 100;
    if (me == 0)
        MPI_Send(&v, 1, MPI_INT, 0, 5, children);
    int mine = 100 + me, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("parent %d sum %d\n", me, sum);
    MPI_Comm_disconnect(&children);
    MPI_Finalize();
    return 0;
}
