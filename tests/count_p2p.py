#!/usr/bin/env python3
"""count_p2p.py - check phantom's point-to-point counts against Open MPI's own.

usage:
  count_p2p.py DUMP_JSONL MON_PREFIX NRANKS   compare (DUMP_JSONL may be '-')
  count_p2p.py --selftest                     check this checker

DUMP_JSONL is `phantom dump TRACE --json`: one event per line,
  {"rank":0,"index":12,"op":"MPI_Send","peer":1,"peer_world":1,"bytes":400,...}
(lines without "op", e.g. communicator definitions, are ignored).

MON_PREFIX names the files Open MPI's pml monitoring component writes at
MPI_Finalize when the job runs with
  --mca pml_monitoring_enable 2 --mca pml_monitoring_enable_output 3
  --mca pml_monitoring_filename MON_PREFIX
one per rank, MON_PREFIX.<rank>.prof, with lines
  E <rank> <peer> <B> bytes <M> msgs sent <histogram>
for the application's own ("external") point-to-point messages; "I" lines
(internal traffic of collectives) are ignored.  The monitoring sits below the
PMPI layer, so it is an independent count of what the job sent.

What phantom must count as one message from rank R to world rank P of B bytes:
  MPI_Send, Ssend, Bsend, Rsend, Isend, Issend, Ibsend, Irsend, and
  MPI_Sendrecv and Sendrecv_replace (their send half).
A send to MPI_PROC_NULL (peer -2) is not a message: it never reaches the PML.

Blind spots of Open MPI 4.1's monitoring, measured with 4.1.4:
  - MPI_Start/Startall of persistent sends (Send_init, ...) are not counted:
    MPI_Start calls the request's own start function, not the monitoring
    PML.  The checker counts them from the trace, prints them, and leaves
    them out of the comparison;
  - the internal messages of MPI_Alltoallv, MPI_Alltoallw,
    MPI_Comm_create_group and MPI_Intercomm_create use non-negative tags and
    so are counted as "E" (application) traffic.  When the trace holds one of
    these calls the checker says so: the counts cannot agree exactly.

For every (rank, peer) pair that either side reports, the message counts and
byte counts must be equal.  The job must have sent at least one message (a
checker that compares two empty tables proves nothing).  Prints a table and
"ok: ..." and exits 0, or prints every difference and exits 1; unreadable
input exits 2.
"""
import json
import os
import re
import sys
import tempfile
from collections import defaultdict

SEND_OPS = {'MPI_Send', 'MPI_Ssend', 'MPI_Bsend', 'MPI_Rsend',
            'MPI_Isend', 'MPI_Issend', 'MPI_Ibsend', 'MPI_Irsend',
            'MPI_Sendrecv', 'MPI_Sendrecv_replace'}
PSEND_OPS = {'MPI_Send_init', 'MPI_Ssend_init', 'MPI_Bsend_init', 'MPI_Rsend_init'}
START_OPS = {'MPI_Start', 'MPI_Startall'}
WANTED = SEND_OPS | PSEND_OPS | START_OPS
# Calls whose internal traffic Open MPI 4.1's monitoring files as "E".
E_NOISE = {'MPI_Alltoallv', 'MPI_Alltoallw', 'MPI_Comm_create_group', 'MPI_Intercomm_create'}
# A cheap test on the raw line before json.loads: traces of real applications
# have millions of Test/Wait events that do not matter here.
QUICK = re.compile(r'"op"\s*:\s*"(MPI_[A-Za-z_]+)"')
PROC_NULL = (-2, 'PROC_NULL', 'MPI_PROC_NULL')
MON_LINE = re.compile(r'^E\s+(\d+)\s+(\d+)\s+(\d+) bytes\s+(\d+) msgs sent')


class Bad(Exception):
    pass


def as_int(ev, key, where):
    v = ev.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise Bad(f'{where}: "{key}" is {v!r}, expected an integer')
    return v


def count_trace(lines, name='dump'):
    """Counts from dump lines: (sent, started, nevents, noise) where sent and
    started map (rank, peer world rank) -> [messages, bytes] for plain sends
    and for starts of persistent sends, and noise counts the E_NOISE calls."""
    sent = defaultdict(lambda: [0, 0])
    started = defaultdict(lambda: [0, 0])
    noise = defaultdict(int)
    persistent = {}  # (rank, request id) -> (peer world rank or None, bytes)
    nevents = 0
    for n, line in enumerate(lines, 1):
        m = QUICK.search(line)
        if m and m.group(1) in E_NOISE:
            noise[m.group(1)] += 1
        if not m or m.group(1) not in WANTED:
            continue
        where = f'{name}:{n}'
        try:
            ev = json.loads(line)
        except ValueError as e:
            raise Bad(f'{where}: not JSON ({e})')
        op = ev.get('op')
        if op not in WANTED:
            continue
        nevents += 1
        rank = as_int(ev, 'rank', where)
        if op in SEND_OPS or op in PSEND_OPS:
            peer = ev.get('peer')
            if peer in PROC_NULL:
                dest = None
            else:
                dest = as_int(ev, 'peer_world', where)
                if dest < 0:
                    raise Bad(f'{where}: {op} to peer {peer!r} has peer_world {dest}')
            nbytes = as_int(ev, 'bytes', where)
            if op in SEND_OPS:
                if dest is not None:
                    sent[(rank, dest)][0] += 1
                    sent[(rank, dest)][1] += nbytes
            else:
                persistent[(rank, as_int(ev, 'newreq', where))] = (dest, nbytes)
        else:
            reqs = ev.get('reqs')
            if reqs is None and 'req' in ev:
                reqs = [ev['req']]
            if not isinstance(reqs, list):
                raise Bad(f'{where}: {op} without a "reqs" list')
            for q in reqs:
                p = persistent.get((rank, q))
                if p is None:
                    continue  # a persistent receive
                dest, nbytes = p
                if dest is not None:
                    started[(rank, dest)][0] += 1
                    started[(rank, dest)][1] += nbytes
    return sent, started, nevents, noise


def count_monitoring(prefix, nranks):
    sent = defaultdict(lambda: [0, 0])
    for r in range(nranks):
        path = f'{prefix}.{r}.prof'
        try:
            f = open(path, encoding='utf-8', errors='replace')
        except OSError as e:
            raise Bad(f'{path}: {e.strerror} (was the job run with --mca pml_monitoring_enable 2 '
                      f'--mca pml_monitoring_enable_output 3 --mca pml_monitoring_filename {prefix}?)')
        with f:
            text = f.read()
        if '# POINT TO POINT' not in text:
            raise Bad(f'{path}: not a pml monitoring profile')
        for line in text.splitlines():
            m = MON_LINE.match(line)
            if not m:
                continue
            src, dst, b, msgs = (int(x) for x in m.groups())
            if src != r:
                raise Bad(f'{path}: line for rank {src} in the file of rank {r}')
            sent[(src, dst)][0] += msgs
            sent[(src, dst)][1] += b
    return sent


def compare(rec, mon, out=sys.stdout):
    keys = sorted(set(rec) | set(mon))
    bad = 0
    out.write(f'{"rank":>5} {"peer":>5} {"msgs(phantom)":>14} {"msgs(ompi)":>11} '
              f'{"bytes(phantom)":>15} {"bytes(ompi)":>13}\n')
    for k in keys:
        a, b = rec.get(k, [0, 0]), mon.get(k, [0, 0])
        mark = '' if a == b else '   <-- differs'
        bad += a != b
        out.write(f'{k[0]:>5} {k[1]:>5} {a[0]:>14} {b[0]:>11} {a[1]:>15} {b[1]:>13}{mark}\n')
    total = sum(v[0] for v in mon.values())
    if bad:
        out.write(f'FAIL: {bad} of {len(keys)} (rank, peer) pairs differ\n')
        return 1
    if total == 0:
        out.write('FAIL: the job sent no point-to-point message: nothing was compared\n')
        return 1
    out.write(f'ok: {len(keys)} (rank, peer) pairs, {total} messages, '
              f'{sum(v[1] for v in mon.values())} bytes agree\n')
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == '--selftest':
        return selftest()
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    dump, prefix, nranks = argv[1], argv[2], int(argv[3])
    try:
        if dump == '-':
            rec, started, n, noise = count_trace(sys.stdin, 'stdin')
        else:
            with open(dump, encoding='utf-8') as f:
                rec, started, n, noise = count_trace(f, dump)
        mon = count_monitoring(prefix, nranks)
    except (Bad, OSError) as e:
        sys.stderr.write(f'count_p2p: {e}\n')
        return 2
    print(f'phantom: {n} send/start events; Open MPI pml monitoring: {nranks} profiles')
    if started:
        print(f'not compared: {sum(v[0] for v in started.values())} starts of persistent sends '
              f'({sum(v[1] for v in started.values())} bytes), invisible to Open MPI 4.1 monitoring')
    for op, k in sorted(noise.items()):
        print(f'note: {k} {op} calls: Open MPI counts their internal messages as application '
              f'traffic, so the counts below cannot agree exactly')
    return compare(rec, mon)


def selftest():
    """The checker must accept an exact match and reject every kind of miss."""
    d = tempfile.mkdtemp(prefix='count_p2p.')
    prefix = os.path.join(d, 'mon')
    prof = {0: 'E\t0\t1\t4004 bytes\t2 msgs sent\t0,0\nI\t0\t1\t8 bytes\t2 msgs sent\n',
            1: 'E\t1\t0\t20 bytes\t2 msgs sent\t0,0\nE\t1\t1\t8 bytes\t1 msgs sent\n'}
    for r, body in prof.items():
        with open(f'{prefix}.{r}.prof', 'w') as f:
            f.write('# POINT TO POINT\n' + body + '# COLLECTIVES\nC\t0\t1\t9 bytes\t1 msgs sent\n')
    good = [
        {'rank': 0, 'index': 1, 'op': 'MPI_Send', 'peer': 1, 'peer_world': 1, 'bytes': 4000},
        {'rank': 0, 'index': 2, 'op': 'MPI_Isend', 'peer': 1, 'peer_world': 1, 'bytes': 4, 'newreq': 1},
        {'rank': 0, 'index': 3, 'op': 'MPI_Send', 'peer': -2, 'peer_world': -2, 'bytes': 4},
        {'rank': 0, 'index': 4, 'op': 'MPI_Send_init', 'peer': 1, 'peer_world': 1, 'bytes': 4, 'newreq': 2},
        {'rank': 0, 'index': 5, 'op': 'MPI_Recv_init', 'peer': 1, 'peer_world': 1, 'bytes': 4, 'newreq': 3},
        {'rank': 0, 'index': 6, 'op': 'MPI_Startall', 'reqs': [2, 3]},
        {'rank': 0, 'index': 7, 'op': 'MPI_Start', 'reqs': [2]},
        {'rank': 0, 'index': 8, 'op': 'MPI_Send_init', 'peer': -2, 'peer_world': -2, 'bytes': 4, 'newreq': 4},
        {'rank': 0, 'index': 9, 'op': 'MPI_Start', 'reqs': [4]},
        {'rank': 0, 'index': 10, 'op': 'MPI_Testany', 'reqs': [2]},
        {'rank': 1, 'index': 1, 'op': 'MPI_Sendrecv', 'peer': 0, 'peer_world': 0, 'bytes': 12,
         'rpeer': 0, 'rbytes': 100},
        {'rank': 1, 'index': 2, 'op': 'MPI_Sendrecv_replace', 'peer': 0, 'peer_world': 0, 'bytes': 8},
        {'rank': 1, 'index': 3, 'op': 'MPI_Sendrecv', 'peer': -2, 'peer_world': -2, 'bytes': 8},
        {'rank': 1, 'index': 4, 'op': 'MPI_Bsend', 'peer': 0, 'peer_world': 1, 'bytes': 8,
         'comm': 3},
        {'rank': 1, 'comm_def': 3, 'members': [1]},
    ]
    null = open(os.devnull, 'w')

    def run(events):
        rec, _, _, _ = count_trace([json.dumps(e) for e in events])
        return compare(rec, count_monitoring(prefix, 2), null)

    failures = []
    if run(good) != 0:
        failures.append('an exact match was rejected')
    mutants = {
        'a lost send': good[:1] + good[2:],
        'a wrong byte count': [dict(good[0], bytes=3999)] + good[1:],
        'a PROC_NULL send counted': [dict(good[2], peer=1, peer_world=1)] + good[:2] + good[3:],
        'a persistent send counted as a plain send': good[:3] + [dict(good[3], op='MPI_Isend')]
        + good[4:],
        'a wrong peer': good[:13] + [dict(good[13], peer_world=0)] + good[14:],
        'an extra message': good + [{'rank': 1, 'op': 'MPI_Rsend', 'peer': 0, 'peer_world': 0,
                                     'bytes': 0}],
    }
    for what, events in mutants.items():
        if run(events) == 0:
            failures.append(f'{what} went unnoticed')
    for r in prof:
        os.unlink(f'{prefix}.{r}.prof')
    rec, _, _, _ = count_trace([])
    try:
        count_monitoring(prefix, 2)
        failures.append('missing monitoring files went unnoticed')
    except Bad:
        pass
    if compare(rec, {}, null) == 0:
        failures.append('two empty tables were accepted')
    os.rmdir(d)
    for f in failures:
        print(f'selftest FAIL: {f}')
    if not failures:
        print(f'selftest ok: 1 match accepted, {len(mutants) + 2} faults detected')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
