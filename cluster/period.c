/* period.c - iterations: the repeating pattern of a rank's calls and how
 * alike its iterations compute (Section 5.4.2, Equation 2).
 *
 * The paper slides a window over the communication sequence to find the
 * repeated pattern.  Here a window's smallest period comes from the KMP
 * failure function in O(window); the period is then extended both ways for
 * as long as event i matches event i + period, which finds the whole loop
 * even though initialisation and finalisation break the pattern at the
 * ends.  Several windows are tried (the middle half, then quarters and
 * eighths) because a window that straddles the end of the loop has no short
 * period; the period covering the most events wins.
 */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

/* Smallest period of w[0..n) (n itself when nothing repeats). */
static uint64_t smallest_period(const uint32_t *w, uint64_t n, uint64_t *fail)
{
    fail[0] = 0;
    for (uint64_t i = 1, k = 0; i < n; i++) {
        while (k > 0 && w[i] != w[k])
            k = fail[k - 1];
        if (w[i] == w[k])
            k++;
        fail[i] = k;
    }
    return n - fail[n - 1];
}

/* The longest run [a, e) around [s, s+len) in which tok[i] == tok[i+p]. */
static void extend(const uint32_t *tok, uint64_t n, uint64_t s, uint64_t len, uint64_t p,
                   cl_period *out)
{
    uint64_t a = s, e = s + len; /* inside the window the period holds */
    while (a > 0 && tok[a - 1] == tok[a - 1 + p])
        a--;
    while (e < n && tok[e] == tok[e - p])
        e++;
    out->start = a;
    out->period = p;
    out->iterations = (e - a) / p;
}

void cl_find_period(const uint32_t *tok, uint64_t n, cl_period *out)
{
    *out = (cl_period){0, n, 1};
    if (n < 2)
        return;
    uint64_t *fail = malloc(n * sizeof *fail);
    if (!fail)
        return; /* no period found: a full replay, which is never wrong */
    /* windows as (start, length) in eighths of n */
    static const int win[][2] = {{2, 4}, {1, 2}, {3, 2}, {5, 2}, {0, 2}, {6, 2}, {3, 1}, {1, 1}, {6, 1}};
    uint64_t best_cover = 0;
    for (size_t w = 0; w < sizeof win / sizeof win[0]; w++) {
        uint64_t s = n * (uint64_t)win[w][0] / 8, len = n * (uint64_t)win[w][1] / 8;
        if (len < 2)
            continue;
        uint64_t p = smallest_period(tok + s, len, fail);
        if (2 * p > len)
            continue; /* not two repetitions in this window */
        cl_period c;
        extend(tok, n, s, len, p, &c);
        uint64_t cover = c.iterations * c.period;
        if (c.iterations >= 2 && (cover > best_cover || (cover == best_cover && p < out->period))) {
            best_cover = cover;
            *out = c;
        }
    }
    free(fail);
}

/* Equation 2, then the number of leading iterations to replay. */
void cl_iteration_plan(const float *vec, uint64_t dim, const cl_period *per, double limit,
                       cl_iter_plan *out)
{
    uint64_t p = per->period, n = per->iterations;
    if (n >= 2 && per->start + n * p > dim) /* the loop's last unit is past the last gap */
        n = per->start < dim ? (dim - per->start) / p : 0;
    if (n < 2) /* no loop to cut short: the run is one iteration, replayed whole */
        n = 1;
    *out = (cl_iter_plan){.iterations = n, .limit = limit, .replay_iterations = n};
    if (n < 2)
        return;
    const float *c = vec + per->start;
    double loop = 0, sim = 0;
    for (uint64_t j = 0; j < n; j++) {
        for (uint64_t i = 0; i < p; i++)
            loop += c[j * p + i];
        if (j + 1 < n)
            sim += cl_l1(c + j * p, c + (j + 1) * p, p);
    }
    out->similarity = sim;
    out->partial = sim <= limit;
    if (!out->partial)
        return;
    double head = 0;
    for (uint64_t r = 1; r <= n; r++) {
        for (uint64_t i = 0; i < p; i++)
            head += c[(r - 1) * p + i];
        double miss = fabs(head * (double)n / (double)r - loop);
        if (miss <= limit || r == n) {
            out->replay_iterations = r;
            out->extrapolation_error = miss;
            return;
        }
    }
}
