/* threads.c - MPI_THREAD_MULTIPLE: T threads per rank exchange with the
 * partner rank concurrently, each on its own tag, with Sendrecv and with
 * Irecv/Isend/Waitall.  Prints how many calls each rank made, so the test
 * can compare with the trace.  Needs an even number of ranks. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { T = 4, ITERS = 200, LEN = 64 };
static int rank, partner;

static void *worker(void *arg)
{
    int tag = (int)(long)arg;
    int out[LEN], in[LEN];
    for (int i = 0; i < ITERS; i++) {
        for (int k = 0; k < LEN; k++)
            out[k] = rank * 1000000 + tag * 1000 + k + i;
        MPI_Status st;
        MPI_Sendrecv(out, LEN, MPI_INT, partner, tag, in, LEN, MPI_INT, partner, tag, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG != tag || in[1] != partner * 1000000 + tag * 1000 + 1 + i) {
            fprintf(stderr, "FAIL rank %d thread %d: wrong message\n", rank, tag);
            exit(1);
        }
        MPI_Request rq[2];
        MPI_Irecv(in, LEN, MPI_INT, partner, tag + 100, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(out, LEN, MPI_INT, partner, tag + 100, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        printf("no MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    partner = rank ^ 1;
    pthread_t th[T];
    for (long t = 0; t < T; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d calls %d\n", rank, 2 + 1 + T * ITERS * 4);
    MPI_Finalize();
    return 0;
}
