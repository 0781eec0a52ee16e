/* bigtype.c - datatypes of more than 2 GiB, where MPI_Type_size answers
 * MPI_UNDEFINED and only MPI_Type_size_x the size.  BIG is 3072 blocks of
 * the same 1 MiB (an hindexed type whose blocks overlap, which a send may
 * use): 3 GiB of data from 1 MiB of memory.  Each rank sends 1 BIG with
 * MPI_Send, 2 with MPI_Isend and 1 with MPI_Sendrecv, all to MPI_PROC_NULL
 * (no data moves), then a Sendrecv ring of 80 MiB (a message log record
 * larger than the 64 MiB a block of the trace format holds at most,
 * unless it is one record alone) and one of 16 bytes.  Prints "rank R
 * checksum" of what it received.
 *
 * `bigtype real` also sends 2.5 GiB for real from rank 0 to rank 1: 2,560
 * elements of a 1 MiB type resized to 1 MiB + 64 bytes (non-contiguous, as
 * the whole message is); `bigtype real1` sends the same bytes as one
 * element of a vector type.  2.5 GiB of memory on each of the two ranks,
 * more with the message log: too big for the test suite, run by hand
 * (doc/replay.md, "Limits").
 *
 * `bigtype noise` fills the ring messages with pseudo-random bytes (all
 * but each MiB's first, which the receiver checks), which zstd cannot
 * shrink: tests/bigtype.sh measures what recording the 80 MiB one with
 * its message log adds to a rank's memory. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MIB = 1 << 20, BLOCKS = 3072, REAL_BLOCKS = 2560, GAP = 64, LARGE = 80 * MIB, SMALL = 16 };

static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* Rank 0 sends 2.5 GiB to rank 1, which checks every block: COUNT elements
 * of type VEC. */
static uint64_t real_transfer(int rank, uint64_t h, int one_element)
{
    MPI_Datatype vec, block;
    int count = 1;
    if (one_element) {
        MPI_Type_vector(REAL_BLOCKS, MIB, MIB + GAP, MPI_BYTE, &vec);
    } else {
        MPI_Type_contiguous(MIB, MPI_BYTE, &block);
        MPI_Type_create_resized(block, 0, MIB + GAP, &vec);
        MPI_Type_free(&block);
        count = REAL_BLOCKS;
    }
    MPI_Type_commit(&vec);
    size_t span = (size_t)REAL_BLOCKS * (MIB + GAP);
    unsigned char *buf = calloc(span, 1);
    if (!buf) {
        printf("FAIL rank %d: no memory for %zu bytes\n", rank, span);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) {
        for (size_t b = 0; b < REAL_BLOCKS; b++)
            memset(buf + b * (MIB + GAP), (int)(b % 251) + 1, MIB);
        MPI_Send(buf, count, vec, 1, 9, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(buf, count, vec, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (size_t b = 0; b < REAL_BLOCKS; b++) {
            const unsigned char *p = buf + b * (MIB + GAP);
            if (p[0] != (unsigned char)(b % 251 + 1) || p[MIB - 1] != p[0] || (b && p[-1] != 0)) {
                printf("FAIL rank 1: block %zu of the 2.5 GiB message\n", b);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            h = fnv(h, p, MIB);
        }
    }
    free(buf);
    MPI_Type_free(&vec);
    return h;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *mib = malloc(LARGE), *in = malloc(LARGE);
    int noise = argc > 1 && strcmp(argv[1], "noise") == 0;
    uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1);
    for (size_t i = 0; i < LARGE; i++) {
        mib[i] = (unsigned char)(rank + 1 + i / MIB);
        if (noise && i % MIB) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
            mib[i] = (unsigned char)(x >> 32);
        }
    }

    MPI_Datatype chunk, big;
    MPI_Type_contiguous(MIB, MPI_BYTE, &chunk);
    int lens[BLOCKS];
    MPI_Aint displs[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) {
        lens[i] = 1;
        displs[i] = 0;
    }
    MPI_Type_create_hindexed(BLOCKS, lens, displs, chunk, &big);
    MPI_Type_commit(&big);
    MPI_Count bytes;
    MPI_Type_size_x(big, &bytes);
    if (bytes != (MPI_Count)BLOCKS * MIB)
        printf("FAIL rank %d: the big type holds %lld bytes\n", rank, (long long)bytes);

    MPI_Send(mib, 1, big, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    MPI_Request req;
    MPI_Isend(mib, 2, big, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Sendrecv(mib, 1, big, MPI_PROC_NULL, 3, in, 1, MPI_BYTE, MPI_PROC_NULL, 3, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);

    uint64_t h = 0xcbf29ce484222325ull;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const int ring[] = {LARGE, SMALL};
    for (int k = 0; k < 2; k++) {
        int len = ring[k];
        MPI_Sendrecv(mib, len, MPI_BYTE, right, 4, in, len, MPI_BYTE, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < len; i += MIB)
            if (in[i] != (unsigned char)(left + 1 + i / MIB))
                printf("FAIL rank %d: ring message of %d bytes at byte %d\n", rank, len, i);
        h = fnv(h, in, (size_t)len);
    }
    if (argc > 1 && strncmp(argv[1], "real", 4) == 0)
        h = real_transfer(rank, h, strcmp(argv[1], "real1") == 0);

    MPI_Type_free(&big);
    MPI_Type_free(&chunk);
    free(mib);
    free(in);
    printf("rank %d checksum 0x%016llx\n", rank, (unsigned long long)h);
    MPI_Finalize();
    return 0;
}
