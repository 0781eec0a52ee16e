/* rep_vectors.h - the computation vectors `phantom replay` measured, as the
 * simulator's computation source (`phantom predict --comp NAME`).  MPI-free.
 *
 * TRACE/replay/NAME holds the replayed ranks' events with the replay's
 * times: unit k of a rank is the gap before its event k.  Past the end of a
 * partial replay (PHANTOM Section 5.4.2: the recorded iteration count against
 * the total), units of the loop are the host's, each scaled by the ratio
 * replayed/host at its position in the loop over the iterations replayed
 * (host: the trace predicted, which holds every iteration), and units after
 * the loop are the host's scaled by the ratio replayed/recorded of the
 * replayed part.  "The host's" are the replayed rank's own, also for the
 * ranks that compute as it (rep_vectors_stand_in). */
#ifndef REP_VECTORS_H
#define REP_VECTORS_H

#include <stdint.h>

#include "ph_trace.h"

typedef struct rep_vectors rep_vectors;

/* NULL with err when TRACE/replay/NAME is missing or unreadable, TRACE
 * being the predicted trace, open (a partial replay's loop is scaled by
 * its host units).  A name with a '/' is a replay directory itself: the
 * replay of another recording of the same job (phantom run replays from
 * the recording of its message log, and predicts from the first). */
rep_vectors *rep_vectors_open(ph_trace *trace, const char *name, ph_err *err);
void rep_vectors_close(rep_vectors *v);
int rep_vectors_has(const rep_vectors *v, uint32_t rank);
/* "0-1,3": the replayed ranks whose units still hold the replayer's own part
 * of each gap (replays made before 2026-11-26: no replayer_gap_ns in
 * meta.json); malloc'd, NULL when there are none. */
char *rep_vectors_raw(const rep_vectors *v);
/* How many events the rank had in the recording the replay was made from;
 * -1 if the rank was not replayed or the replay does not say. */
int64_t rep_vectors_recorded(const rep_vectors *v, uint32_t rank);
/* Whose vector rank computes with: its own when it was replayed (as a
 * member of its representative's node subgroup, or alone), else, with a
 * plan's rep_of (NULL: none), its representative's. */
uint32_t rep_vectors_source(const rep_vectors *v, uint32_t rank, const uint32_t *rep_of);
/* "3-5,9": the ranks without a vector (malloc'd; NULL when there are none). */
char *rep_vectors_missing(const rep_vectors *v, uint32_t nranks, const uint32_t *rep_of);
/* With a plan's rep_of, a rank computing as its representative takes the
 * representative's units past the end of a partial replay too (its host
 * units, scaled as its own are), so that every rank of a group computes
 * exactly as its representative: the representatives' host units are read
 * from the predicted trace (host).  0, or -1 with err. */
int rep_vectors_stand_in(rep_vectors *v, ph_trace *host, uint32_t nranks, const uint32_t *rep_of, ph_err *err);
/* Unit k of rank, in ns; host_ns is the trace's own unit k (for units the
 * replay did not cover; a representative's own, after
 * rep_vectors_stand_in). */
uint64_t rep_vectors_unit(const rep_vectors *v, uint32_t rank, uint64_t k, uint64_t host_ns);

#endif
