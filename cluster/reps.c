/* reps.c - representatives, ranks on nodes, and rank lists.
 *
 * The representative of a group is the member closest to the group's mean
 * vector (Section 5.4.1: "the process that is closest to the center of the
 * cluster"): its computation stands for every member's in the simulation.
 * Its replay subgroup is the set of ranks on its node, replayed together so
 * that they contend for the node as in the real run (Section 4.3).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct rad_job {
    const cl_points *p;
    const uint32_t *mem;
    const float *mean;
    uint32_t d;
    double *dist;
} rad_job;

static void rad(void *ctx, uint64_t begin, uint64_t end)
{
    rad_job *j = ctx;
    for (uint64_t k = begin; k < end; k++)
        j->dist[k] = cl_distance(j->p->vec[j->mem[k]], j->p->dim[j->mem[k]], j->mean, j->d);
}

/* Members of every group, in rank order: mem[start[g] .. start[g+1]). */
static uint32_t *members_by_group(uint32_t n, const uint32_t *label, uint32_t ngroups, uint32_t **startp)
{
    uint32_t *start = calloc((size_t)ngroups + 1, sizeof *start), *mem = malloc((n ? n : 1) * sizeof *mem);
    if (!start || !mem) {
        free(start);
        free(mem);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++)
        start[label[i] + 1]++;
    for (uint32_t g = 0; g < ngroups; g++)
        start[g + 1] += start[g];
    for (uint32_t i = 0; i < n; i++)
        mem[start[label[i]]++] = i;
    for (uint32_t g = ngroups; g > 0; g--) /* the fill moved each start to the next group's */
        start[g] = start[g - 1];
    start[0] = 0;
    *startp = start;
    return mem;
}

int cl_representatives(const cl_points *p, const uint32_t *label, uint32_t ngroups,
                       int nthreads, uint32_t *rep, double *radius, ph_err *err)
{
    uint32_t *start = NULL, *mem = members_by_group(p->n, label, ngroups, &start), maxd = 0;
    for (uint32_t i = 0; i < p->n; i++)
        maxd = p->dim[i] > maxd ? p->dim[i] : maxd;
    float *mean = malloc(((size_t)maxd + 1) * sizeof *mean);
    double *dist = malloc((p->n ? p->n : 1) * sizeof *dist);
    if (!mem || !mean || !dist) {
        free(start);
        free(mem);
        free(mean);
        free(dist);
        ph_err_set(err, "out of memory choosing representatives of %u ranks", p->n);
        return -1;
    }
    nthreads = cl_threads(nthreads);
    for (uint32_t g = 0; g < ngroups; g++) {
        uint32_t m = start[g + 1] - start[g], *gm = mem + start[g], d = m ? p->dim[gm[0]] : 0;
        rep[g] = m ? gm[0] : UINT32_MAX;
        if (radius)
            radius[g] = 0;
        if (m < 2)
            continue;
        cl_mean(p, gm, m, d, mean);
        rad_job j = {p, gm, mean, d, dist};
        cl_parallel(m < 64 ? 1 : nthreads, m, 16, rad, &j);
        uint32_t best = 0;
        for (uint32_t k = 1; k < m; k++)
            if (dist[k] < dist[best]) /* strict: ties go to the lowest rank */
                best = k;
        rep[g] = gm[best];
        for (uint32_t k = 0; radius && k < m; k++)
            radius[g] = fmax(radius[g], dist[k]);
    }
    free(start);
    free(mem);
    free(mean);
    free(dist);
    return 0;
}

char *cl_format_ranks(const uint32_t *sorted, uint32_t n)
{
    size_t cap = 24 * (size_t)n + 1, len = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    s[0] = 0;
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i;
        while (j + 1 < n && sorted[j + 1] == sorted[j] + 1)
            j++;
        const char *sep = i ? "," : "";
        if (j == i)
            len += (size_t)snprintf(s + len, cap - len, "%s%u", sep, sorted[i]);
        else
            len += (size_t)snprintf(s + len, cap - len, "%s%u-%u", sep, sorted[i], sorted[j]);
        i = j + 1;
    }
    return s;
}
