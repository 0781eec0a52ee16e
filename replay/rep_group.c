/* rep_group.c - local queries on virtual communicators, and virtual groups.
 *
 * MPI_Comm_rank and MPI_Comm_size answer as in the recorded run.  Groups of
 * virtual communicators hold world ranks of the recorded run, which no real
 * group of this job can: the application gets a real group handle as a
 * token (a fresh one-process group, so that it can be passed anywhere) and
 * every group operation on tokens is computed here on recorded world ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "rep.h"

typedef struct vgroup {
    MPI_Group token;
    int n;
    int32_t *world; /* world ranks of the recorded run, by group rank */
} vgroup;

static vgroup **groups; /* by MPI_Group_c2f index */
static size_t ngroups;
static MPI_Group self_group = MPI_GROUP_NULL;

static vgroup *group_of(MPI_Group g)
{
    if (g == MPI_GROUP_NULL)
        return NULL;
    int f = PMPI_Group_c2f(g);
    return f >= 0 && (size_t)f < ngroups && groups[f] && groups[f]->token == g ? groups[f] : NULL;
}

/* A new token for these world ranks (MPI_GROUP_EMPTY when there are none). */
static MPI_Group make_group(int n, const int32_t *world)
{
    vgroup *v = calloc(1, sizeof *v);
    if (!v)
        rep_die("out of memory");
    v->n = n;
    v->world = rep_xmalloc((size_t)(n > 0 ? n : 1) * sizeof *v->world);
    if (n > 0)
        memcpy(v->world, world, (size_t)n * sizeof *v->world);
    if (n == 0) {
        v->token = MPI_GROUP_EMPTY;
    } else {
        int zero = 0;
        if (self_group == MPI_GROUP_NULL)
            PMPI_Comm_group(MPI_COMM_SELF, &self_group);
        PMPI_Group_incl(self_group, 1, &zero, &v->token);
    }
    int f = PMPI_Group_c2f(v->token);
    if ((size_t)f >= ngroups) {
        size_t cap = (size_t)f * 2 + 16;
        vgroup **t = realloc(groups, cap * sizeof *t);
        if (!t)
            rep_die("out of memory");
        memset(t + ngroups, 0, (cap - ngroups) * sizeof *t);
        groups = t;
        ngroups = cap;
    }
    if (groups[f]) { /* MPI_GROUP_EMPTY again: keep one entry */
        free(groups[f]->world);
        free(groups[f]);
    }
    groups[f] = v;
    return v->token;
}

static int find(const vgroup *g, int32_t world)
{
    for (int i = 0; i < g->n; i++)
        if (g->world[i] == world)
            return i;
    return MPI_UNDEFINED;
}

/* ---- communicators -------------------------------------------------------------- */

static rep_comm *known(MPI_Comm comm) { return rep.active ? rep_comm_of(comm) : NULL; }

int ph_local_Comm_rank(int *rc, MPI_Comm comm, int *rank)
{
    rep_comm *k = known(comm);
    if (!k)
        return 0;
    *rank = k->rank;
    *rc = MPI_SUCCESS;
    return 1;
}

int ph_local_Comm_size(int *rc, MPI_Comm comm, int *size)
{
    rep_comm *k = known(comm);
    if (!k)
        return 0;
    *size = k->size;
    *rc = MPI_SUCCESS;
    return 1;
}

int ph_local_Comm_remote_size(int *rc, MPI_Comm comm, int *size)
{
    rep_comm *k = known(comm);
    if (!k)
        return 0;
    *rc = k->rsize ? MPI_SUCCESS : MPI_ERR_COMM;
    if (k->rsize)
        *size = k->rsize;
    return 1;
}

int ph_local_Comm_test_inter(int *rc, MPI_Comm comm, int *flag)
{
    rep_comm *k = known(comm);
    if (!k)
        return 0;
    *flag = k->rsize > 0;
    *rc = MPI_SUCCESS;
    return 1;
}

static int same_list(const int32_t *a, uint32_t na, const int32_t *b, uint32_t nb)
{
    return na == nb && memcmp(a, b, na * sizeof *a) == 0;
}

static int same_set(const int32_t *a, uint32_t na, const int32_t *b, uint32_t nb)
{
    if (na != nb)
        return 0;
    for (uint32_t i = 0; i < na; i++) {
        uint32_t j = 0;
        while (j < nb && b[j] != a[i])
            j++;
        if (j == nb)
            return 0;
    }
    return 1;
}

int ph_local_Comm_compare(int *rc, MPI_Comm c1, MPI_Comm c2, int *result)
{
    rep_comm *a = known(c1), *b = known(c2);
    if (!a || !b)
        return 0;
    const ph_comm_info *x = a->ci, *y = b->ci;
    if (c1 == c2)
        *result = MPI_IDENT;
    else if (same_list(x->members, x->size, y->members, y->size) &&
             same_list(x->remote, x->remote_size, y->remote, y->remote_size))
        *result = MPI_CONGRUENT;
    else if (same_set(x->members, x->size, y->members, y->size) &&
             same_set(x->remote, x->remote_size, y->remote, y->remote_size))
        *result = MPI_SIMILAR;
    else
        *result = MPI_UNEQUAL;
    *rc = MPI_SUCCESS;
    return 1;
}

int ph_local_Comm_group(int *rc, MPI_Comm comm, MPI_Group *group)
{
    rep_comm *k = known(comm);
    if (!k)
        return 0;
    *group = make_group(k->size, k->ci->members);
    *rc = MPI_SUCCESS;
    return 1;
}

int ph_local_Comm_remote_group(int *rc, MPI_Comm comm, MPI_Group *group)
{
    rep_comm *k = known(comm);
    if (!k)
        return 0;
    *rc = k->rsize ? MPI_SUCCESS : MPI_ERR_COMM;
    if (k->rsize)
        *group = make_group(k->rsize, k->ci->remote);
    return 1;
}

/* ---- groups --------------------------------------------------------------------- */

int ph_local_Group_size(int *rc, MPI_Group group, int *size)
{
    vgroup *g = group_of(group);
    if (!g)
        return 0;
    *size = g->n;
    *rc = MPI_SUCCESS;
    return 1;
}

int ph_local_Group_rank(int *rc, MPI_Group group, int *rank)
{
    vgroup *g = group_of(group);
    if (!g)
        return 0;
    *rank = find(g, rep.rank);
    *rc = MPI_SUCCESS;
    return 1;
}

/* Group ranks r[0..n) of g, in that order; MPI_ERR_RANK when one is not in g. */
static int subset(int *rc, const vgroup *g, int n, const int *r, MPI_Group *out)
{
    int32_t *w = rep_xmalloc((size_t)(n > 0 ? n : 1) * sizeof *w);
    *rc = MPI_SUCCESS;
    for (int i = 0; i < n && *rc == MPI_SUCCESS; i++) {
        if (r[i] < 0 || r[i] >= g->n)
            *rc = MPI_ERR_RANK;
        else
            w[i] = g->world[r[i]];
    }
    if (*rc == MPI_SUCCESS)
        *out = make_group(n, w);
    free(w);
    return 1;
}

int ph_local_Group_incl(int *rc, MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    vgroup *g = group_of(group);
    return g ? subset(rc, g, n, ranks, newgroup) : 0;
}

/* The ranks of g not listed in r, in group order. */
static int complement(int *rc, const vgroup *g, int n, const int *r, MPI_Group *out)
{
    int *keep = rep_xmalloc((size_t)(g->n + 1) * sizeof *keep), m = 0;
    for (int i = 0; i < g->n; i++) {
        int listed = 0;
        for (int j = 0; j < n && !listed; j++)
            listed = r[j] == i;
        if (!listed)
            keep[m++] = i;
    }
    subset(rc, g, m, keep, out);
    free(keep);
    return 1;
}

int ph_local_Group_excl(int *rc, MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    vgroup *g = group_of(group);
    return g ? complement(rc, g, n, ranks, newgroup) : 0;
}

/* Ranges (first, last, stride) as the list of ranks they name; NULL if bad. */
static int *expand(int n, int ranges[][3], int *count)
{
    int total = 0;
    for (int i = 0; i < n; i++) {
        int f = ranges[i][0], l = ranges[i][1], s = ranges[i][2];
        if (s == 0 || (l - f) / s < 0)
            return NULL;
        total += (l - f) / s + 1;
    }
    int *v = rep_xmalloc((size_t)(total + 1) * sizeof *v), k = 0;
    for (int i = 0; i < n; i++)
        for (int x = ranges[i][0]; ranges[i][2] > 0 ? x <= ranges[i][1] : x >= ranges[i][1];
             x += ranges[i][2])
            v[k++] = x;
    *count = k;
    return v;
}

static int ranges_op(int *rc, MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup, int excl)
{
    vgroup *g = group_of(group);
    if (!g)
        return 0;
    int m = 0, *r = expand(n, ranges, &m);
    if (!r) {
        *rc = MPI_ERR_ARG;
        return 1;
    }
    if (excl)
        complement(rc, g, m, r, newgroup);
    else
        subset(rc, g, m, r, newgroup);
    free(r);
    return 1;
}

int ph_local_Group_range_incl(int *rc, MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return ranges_op(rc, group, n, ranges, newgroup, 0);
}

int ph_local_Group_range_excl(int *rc, MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return ranges_op(rc, group, n, ranges, newgroup, 1);
}

int ph_local_Group_translate_ranks(int *rc, MPI_Group group1, int n, const int ranks1[],
                                   MPI_Group group2, int ranks2[])
{
    vgroup *a = group_of(group1), *b = group_of(group2);
    if (!a || !b)
        return 0;
    *rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL)
            ranks2[i] = MPI_PROC_NULL;
        else if (ranks1[i] < 0 || ranks1[i] >= a->n)
            *rc = MPI_ERR_RANK;
        else
            ranks2[i] = find(b, a->world[ranks1[i]]);
    }
    return 1;
}

/* union (op 0), intersection (1), difference (2): in the order MPI defines,
 * the first group's ranks first. */
static int set_op(int *rc, MPI_Group g1, MPI_Group g2, MPI_Group *out, int op)
{
    vgroup *a = group_of(g1), *b = group_of(g2);
    if (!a || !b)
        return 0;
    int32_t *w = rep_xmalloc((size_t)(a->n + b->n + 1) * sizeof *w);
    int n = 0;
    for (int i = 0; i < a->n; i++) {
        int in_b = find(b, a->world[i]) != MPI_UNDEFINED;
        if (op == 0 || (op == 1 && in_b) || (op == 2 && !in_b))
            w[n++] = a->world[i];
    }
    for (int i = 0; op == 0 && i < b->n; i++)
        if (find(a, b->world[i]) == MPI_UNDEFINED)
            w[n++] = b->world[i];
    *out = make_group(n, w);
    free(w);
    *rc = MPI_SUCCESS;
    return 1;
}

int ph_local_Group_union(int *rc, MPI_Group g1, MPI_Group g2, MPI_Group *ng)
{
    return set_op(rc, g1, g2, ng, 0);
}

int ph_local_Group_intersection(int *rc, MPI_Group g1, MPI_Group g2, MPI_Group *ng)
{
    return set_op(rc, g1, g2, ng, 1);
}

int ph_local_Group_difference(int *rc, MPI_Group g1, MPI_Group g2, MPI_Group *ng)
{
    return set_op(rc, g1, g2, ng, 2);
}

int ph_local_Group_compare(int *rc, MPI_Group g1, MPI_Group g2, int *result)
{
    vgroup *a = group_of(g1), *b = group_of(g2);
    if (!a || !b)
        return 0;
    if (same_list(a->world, (uint32_t)a->n, b->world, (uint32_t)b->n))
        *result = MPI_IDENT;
    else if (same_set(a->world, (uint32_t)a->n, b->world, (uint32_t)b->n))
        *result = MPI_SIMILAR;
    else
        *result = MPI_UNEQUAL;
    *rc = MPI_SUCCESS;
    return 1;
}

int ph_local_Group_free(int *rc, MPI_Group *group)
{
    vgroup *g = group_of(*group);
    if (!g)
        return 0;
    *rc = MPI_SUCCESS;
    if (g->token == MPI_GROUP_EMPTY) { /* predefined: the entry stays */
        *group = MPI_GROUP_NULL;
        return 1;
    }
    groups[PMPI_Group_c2f(g->token)] = NULL;
    free(g->world);
    free(g);
    *rc = PMPI_Group_free(group);
    return 1;
}
