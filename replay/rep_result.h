/* rep_result.h - replay results, without MPI (linked into `phantom`).
 *
 * One replay run leaves a times file per replayed rank (replay/rep_out.c:
 * entry and exit of every call in raw clock units, calibrated at both ends).
 * `phantom replay` combines the runs into a trace directory beside the
 * recorded one, TRACE/replay/NAME: each replayed rank's recorded events with
 * the replay's times, so its gaps are the computation vector measured on
 * this node (doc/replay.md).
 */
#ifndef REP_RESULT_H
#define REP_RESULT_H

#include <stdint.h>
#include <stdio.h>

#include "ph_trace.h"

enum rep_end { REP_END_KILLED = 0, REP_END_FINALIZE = 1, REP_END_PARTIAL = 2, REP_END_RECORDING = 3 };

typedef struct rep_times {
    FILE *f;
    char path[4200];
    uint32_t rank, nranks;
    uint64_t events; /* entries in the file after the probe's */
    uint64_t probe_events; /* the replayer's calls timing its own part of a gap, first in the file */
    int end;         /* enum rep_end */
    int isolated;
    double cpu_share; /* of the time the process had its CPU; 0: wall-clock gaps */
    double busy;      /* of MPI_Init to MPI_Finalize, the time it had its CPU; 0: not known */
    uint64_t c0, t0, c1, t1; /* calibration: clock c0 was CLOCK_MONOTONIC t0, c1 was t1 */
} rep_times;

int rep_times_open(const char *path, rep_times *t, ph_err *err);
/* The next entry's (the probe's first) entry and exit in CLOCK_MONOTONIC ns, and the CPU time of
 * the gap before it (0 unless cpu_share > 0). */
int rep_times_next(rep_times *t, uint64_t *entry, uint64_t *exit_, uint64_t *gap_cpu, ph_err *err);
void rep_times_close(rep_times *t);

/* What one replayed rank measured, for the summary and meta.json. */
typedef struct rep_rank_result {
    uint32_t rank;
    uint64_t events, recorded_events;
    int end;
    /* sums of the units 1..events-1: the gaps less the replayer's own part
     * (probe_ns), and the recording's less the recorder's */
    uint64_t comp_ns, comp_min_ns, recorded_comp_ns;
    uint64_t wall_ns, recorded_wall_ns;              /* MPI_Init entry to the last exit */
    uint64_t *run_comp_ns, *run_wall_ns;             /* per run */
    uint64_t *run_busy_ppt; /* per run, the time it had its CPU in thousandths; 0: not known */
    uint64_t *run_probe_ns; /* per run, the replayer's own part of each gap, taken off it */
    uint64_t probe_ns;      /* their median */
    double cpu_share; /* gaps in CPU time over this share of the CPU (median of the runs); 0: wall clock */
    double busy;      /* the median of the runs' run_busy_ppt (as a fraction); 0: not known */
} rep_rank_result;

/* Whether a replayed rank had its CPU markedly less of the time than a rank
 * alone on its core (its cpu_share under a quota): something else ran on
 * its core, and its computation holds the turns it waited. */
int rep_rank_shared_cpu(const rep_rank_result *r);

/* A trace directory for results, with the recorded trace's communicator and
 * call-site tables (so events keep their ids). */
ph_writer *rep_result_writer(ph_trace *t, const char *dir, const char *command, ph_err *err);

/* Rank `rank`'s events from the recorded trace, with the per-unit median of
 * the runs' times into med and their minimum into min (may be NULL). */
int rep_result_rank(ph_trace *t, uint32_t rank, char *const *run_dirs, int nruns, ph_writer *med,
                    ph_writer *min, rep_rank_result *res, ph_err *err);

#endif
