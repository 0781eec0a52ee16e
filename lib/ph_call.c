/* ph_call.c - helpers shared by the generated wrappers of every runtime. */
#include "ph_call.h"
#include "ph_clock.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { SLOT_REQS, SLOT_STATUSES, SLOT_FSTATUSES, SLOT_INDICES, SLOT_STYPES, SLOT_RTYPES, NSLOTS };

/* Thread-local so that MPI_THREAD_MULTIPLE callers never share scratch. */
static _Thread_local __attribute__((tls_model("initial-exec"))) struct {
    void *p;
    size_t cap;
} scratch[NSLOTS];

_Thread_local __attribute__((tls_model("initial-exec"))) ph_thread_mark ph_thread;

int64_t ph_time_now(void)
{
    struct timespec ts;
    if (ph_clock_gettime(CLOCK_REALTIME_COARSE, &ts) != 0 && ph_clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec;
}

clock_t clock(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
        return (clock_t)-1;
    return (clock_t)(ts.tv_sec * CLOCKS_PER_SEC + ts.tv_nsec / (1000000000 / CLOCKS_PER_SEC));
}

uint64_t ph_mpi_type_bytes(MPI_Datatype t)
{
    MPI_Count size = 0;
    if (t == MPI_DATATYPE_NULL || PMPI_Type_size_x(t, &size) != MPI_SUCCESS || size < 0)
        return 0;
    return (uint64_t)size;
}

int ph_mpi_type_is_plain(MPI_Datatype t, uint64_t size)
{
    MPI_Aint lb, extent, tlb, textent;
    PMPI_Type_get_extent(t, &lb, &extent);
    PMPI_Type_get_true_extent(t, &tlb, &textent);
    return tlb == 0 && (uint64_t)textent == size && (uint64_t)extent == size;
}

static void *slot(int i, size_t bytes)
{
    if (bytes > scratch[i].cap) {
        size_t cap = scratch[i].cap ? scratch[i].cap : 256;
        while (cap < bytes)
            cap *= 2;
        void *p = realloc(scratch[i].p, cap);
        if (!p)
            abort(); /* out of memory for a few request handles: nothing sane left */
        scratch[i].p = p;
        scratch[i].cap = cap;
    }
    return scratch[i].p;
}

MPI_Request *ph_copy_requests(ph_call *c, const MPI_Request *reqs, int n)
{
    (void)c;
    if (n <= 0)
        return NULL;
    MPI_Request *copy = slot(SLOT_REQS, (size_t)n * sizeof *copy);
    memcpy(copy, reqs, (size_t)n * sizeof *copy);
    return copy;
}

MPI_Status *ph_scratch_statuses(ph_call *c, int n)
{
    (void)c;
    return slot(SLOT_STATUSES, (size_t)(n > 0 ? n : 1) * sizeof(MPI_Status));
}

/* ~6 ms an exec on the development VM (a shell that does nothing: 8.7 to
 * 14.5 ms).  Before MPI_Init is too early: `mpirun ./run.sh` preloads a
 * shell that execs the rank.  After it, MPI's threads may read the
 * environment, so the variable is replaced (setenv on an existing name
 * swaps one pointer), never removed (unsetenv moves the entries). */
int ph_preload_forget(const void *addr)
{
    Dl_info info;
    const char *preload = getenv("LD_PRELOAD");
    if (!preload || !dladdr(addr, &info) || !info.dli_fname)
        return 0;
    char *self = realpath(info.dli_fname, NULL), *words = strdup(preload), *kept = calloc(1, strlen(preload) + 1);
    int found = 0;
    size_t len = 0;
    for (char *save = NULL, *w = self && words && kept ? strtok_r(words, ": ", &save) : NULL; w;
         w = strtok_r(NULL, ": ", &save)) {
        char *real = realpath(w, NULL);
        int is_self = real && strcmp(real, self) == 0;
        free(real);
        if (is_self) {
            found = 1;
            continue;
        }
        len += (size_t)sprintf(kept + len, "%s%s", len ? " " : "", w);
    }
    if (found)
        setenv("LD_PRELOAD", kept, 1);
    free(self);
    free(words);
    free(kept);
    return found;
}

/* Fortran PMPI entry points are looked up on first use, so that C programs
 * never need Open MPI's Fortran libraries loaded. */
void *ph_fortran_pmpi(void **cache, const char *name)
{
    void *f = atomic_load_explicit((_Atomic(void *) *)cache, memory_order_acquire);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        if (!f)
            f = dlsym(RTLD_DEFAULT, name);
        if (!f)
            abort(); /* a Fortran binding called without Fortran MPI: cannot happen */
        atomic_store_explicit((_Atomic(void *) *)cache, f, memory_order_release);
    }
    return f;
}

/* Open MPI's Fortran sentinels are addresses of common blocks. */
static void *fortran_symbol(const char *name)
{
    static _Atomic(void *) cache[4];
    static const char *const names[4] = {"mpi_fortran_in_place_", "mpi_fortran_bottom_",
                                         "mpi_fortran_status_ignore_",
                                         "mpi_fortran_statuses_ignore_"};
    for (int i = 0; i < 4; i++) {
        if (strcmp(names[i], name) != 0)
            continue;
        void *p = atomic_load(&cache[i]);
        if (!p) {
            p = dlsym(RTLD_DEFAULT, name);
            if (!p)
                p = (void *)-1;
            atomic_store(&cache[i], p);
        }
        return p == (void *)-1 ? NULL : p;
    }
    return NULL;
}

const void *ph_fortran_buffer_c(const void *p)
{
    if (p && p == fortran_symbol("mpi_fortran_in_place_"))
        return MPI_IN_PLACE;
    if (p && p == fortran_symbol("mpi_fortran_bottom_"))
        return MPI_BOTTOM;
    return p;
}

int ph_fortran_status_ignored(const MPI_Fint *s)
{
    return s == fortran_symbol("mpi_fortran_status_ignore_");
}

int ph_fortran_statuses_ignored(const MPI_Fint *s)
{
    return s == fortran_symbol("mpi_fortran_statuses_ignore_");
}

MPI_Fint *ph_scratch_fortran_statuses(ph_call *c, int n)
{
    (void)c;
    return slot(SLOT_FSTATUSES, (size_t)(n > 0 ? n : 1) * PH_F_STATUS_SIZE * sizeof(MPI_Fint));
}

MPI_Status *ph_fortran_status(ph_call *c, const MPI_Fint *s)
{
    PMPI_Status_f2c(s, &c->fstatus);
    return &c->fstatus;
}

MPI_Status *ph_fortran_statuses(ph_call *c, const MPI_Fint *s, int n)
{
    if (n <= 0 || n == MPI_UNDEFINED)
        return NULL;
    MPI_Status *st = ph_scratch_statuses(c, n);
    for (int i = 0; i < n; i++)
        PMPI_Status_f2c(s + (size_t)i * PH_F_STATUS_SIZE, &st[i]);
    return st;
}

int *ph_fortran_indices(ph_call *c, const MPI_Fint *idx, int n)
{
    (void)c;
    if (n <= 0 || n == MPI_UNDEFINED)
        return NULL;
    int *out = slot(SLOT_INDICES, (size_t)n * sizeof *out);
    for (int i = 0; i < n; i++)
        out[i] = idx[i] - 1; /* Fortran indices are 1-based */
    return out;
}

MPI_Request *ph_fortran_requests(ph_call *c, const MPI_Fint *reqs, int n)
{
    (void)c;
    if (n <= 0)
        return NULL;
    MPI_Request *out = slot(SLOT_REQS, (size_t)n * sizeof *out);
    for (int i = 0; i < n; i++)
        out[i] = PMPI_Request_f2c(reqs[i]);
    return out;
}

const MPI_Datatype *ph_fortran_types(ph_call *c, const MPI_Fint *types, int which)
{
    int n = 0;
    int inter = 0;
    PMPI_Comm_test_inter(c->comm, &inter);
    if (inter)
        PMPI_Comm_remote_size(c->comm, &n);
    else
        PMPI_Comm_size(c->comm, &n);
    MPI_Datatype *out = slot(which ? SLOT_RTYPES : SLOT_STYPES, (size_t)(n > 0 ? n : 1) * sizeof *out);
    for (int i = 0; i < n; i++)
        out[i] = PMPI_Type_f2c(types[i]);
    return out;
}
