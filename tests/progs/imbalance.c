/* imbalance.c - a load-imbalanced iterative program, for any number of ranks >= 2.
 *
 * 20 iterations of: compute, Allreduce, exchange with both ring neighbours.
 * Rank 0 computes 3 units per iteration, every other rank 1 unit (a unit is a
 * deterministic floating-point loop of about 5 ms), so the others wait for
 * rank 0 in every Allreduce: the clustering stage should find two behaviours.
 * The number of iterations per unit can be changed with PH_IMB_UNIT.
 */
#include "oracle.h"

#define ITERS 20
#define UNIT 2000000L /* loop iterations per unit: ~5 ms on the development machine */
#define H 256         /* ints per halo message */

static double work(long n, double x)
{
    for (long i = 0; i < n; i++)
        x = x * 1.0000001 + 1e-7;
    return x;
}

int main(int argc, char **argv)
{
    int me, np;
    O_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np < 2)
        fail("needs at least 2 ranks");
    int left = (me + np - 1) % np, right = (me + 1) % np;
    long unit = getenv("PH_IMB_UNIT") ? atol(getenv("PH_IMB_UNIT")) : UNIT;
    static int sb[H], rb[H];
    MPI_Status st;
    double t0 = MPI_Wtime(), tc = 0;

    for (int it = 0; it < ITERS; it++) {
        double t = MPI_Wtime();
        double x = work((me == 0 ? 3 : 1) * unit, 1.0 + 0.01 * me + 0.001 * it);
        tc += MPI_Wtime() - t;

        /* Sum of (rank, iteration, scaled result, 1) over all ranks. */
        long v[4] = {me, it, (long)(x * 1e6), 1}, s[4];
        O_Allreduce(v, s, 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        check_int(s[0], (long long)np * (np - 1) / 2, "allreduce ranks");
        check_int(s[1], (long long)np * it, "allreduce iteration");
        check_int(s[3], np, "allreduce count");

        /* Halo: to the right from the left, then to the left from the right. */
        pat_fill(sb, sizeof sb, me, it, 0);
        O_Sendrecv(sb, H, MPI_INT, right, 1, rb, H, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
        pat_check(rb, sizeof rb, left, it, 0, "halo from left");
        pat_fill(sb, sizeof sb, me, 100 + it, 0);
        O_Sendrecv(sb, H, MPI_INT, left, 2, rb, H, MPI_INT, right, 2, MPI_COMM_WORLD, &st);
        pat_check(rb, sizeof rb, right, 100 + it, 0, "halo from right");
    }
    if (getenv("PH_IMB_VERBOSE"))
        fprintf(stderr, "rank %d: compute %.3f s of %.3f s\n", me, tc, MPI_Wtime() - t0);

    O_Finalize();
    return 0;
}
