#!/usr/bin/env python3
"""check_trace.py - compare what the test programs did with what phantom recorded.

usage:
  check_trace.py EXPECT_DIR DUMP_JSONL [--log] [--all]
                                                 compare an oracle with a dump
                                                 (--all: the first difference of
                                                 every rank, not only the first)
  check_trace.py --selftest                      check this checker
  check_trace.py --fake-dump EXPECT_DIR OUT      write the dump a perfect recorder
                                                 would give (a debugging aid)

EXPECT_DIR holds expect-<rank>.jsonl, written by the programs in tests/progs
when PH_EXPECT is set (tests/progs/oracle.h, tests/progs/oracle_f.f90): one JSON
object per sequenced MPI call, in call order, plus one line
  {"comm_def":LABEL,"members":[world ranks],"remote":[...]}
before a communicator's first use.  DUMP_JSONL is `phantom dump TRACE --json`
(with --log: `--json --log`): one event per line,
  {"rank":0,"seq":12,"op":"MPI_Send","comm":2,"peer":1,...}
and one {"rank":R,"comm_def":ID,"members":[...],"remote":[...]} per communicator.
An event's position in its rank's sequence is "seq" (then "index" is the
Waitany/Testany result, as in struct ph_event) or, in a dump without "seq",
"index" (then the Waitany/Testany result must be "any_index").

For every rank the two sequences are walked event by event.  They must have
the same length and, event by event, the same op and the same value for every
field the oracle gives (fields the oracle leaves out are not checked).
Fields with a meaning of their own:
  comm, newcomm   oracle: a label; dump: a trace-wide id.  Labels map to ids
                  through one bijection over the whole trace (a label stands for
                  one communicator per member set; both sides of an
                  intercommunicator may share one id or have one each), and the
                  recorded members/remote lists must equal the oracle's.
                  "world" must be id 0.  newcomm null: MPI_COMM_NULL.
  newreq,reqlabel oracle: "newreq":true and a label for the request or message;
                  dump: an integer id > 0, remembered per rank.
  reqs            oracle: labels and nulls; dump: the ids (0 for
                  MPI_REQUEST_NULL).  A request whose id the recorder gave to a
                  newer request must not be referred to again.
  status          compared key by key (only the keys the oracle gives);
  statuses        element by element, null in the oracle: not checked.
  payload_fnv     with --log: the event's log entry of slot 0 has this fnv;
  payloads        with --log: one entry per completed request (null: not
                  checked), equal to the fnv of the log entry whose slot is
                  that request's index in the call's request array
                  (doc/trace-format.md section 6): k for Waitall/Testall, the
                  index for Waitany/Testany, completed[k] for Waitsome/Testsome,
                  0 for Wait/Test.
  count, bytes, rcount, rbytes   an expected 0 also matches an absent field.
On the first difference the checker prints the rank, the index, both lines,
and exits 1; malformed input exits 2; otherwise it prints
"ok: R ranks, E events checked".
"""
import json
import os
import re
import sys
import tempfile

COMM_NULL_IDS = (None, -1, 0xFFFFFFFF)
NULL_REQ_IDS = (None, 0)
# Oracle keys that are not compared as plain values.
SPECIAL = {'op', 'comm', 'newcomm', 'newreq', 'reqlabel', 'reqs', 'status', 'statuses',
           'payload_fnv', 'payloads', 'index'}
ZERO_IF_ABSENT = {'count', 'bytes', 'rcount', 'rbytes'}


class Malformed(Exception):
    pass


class Mismatch(Exception):
    pass


def norm(v):
    """JSON booleans compare equal to 0/1 (flags)."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    return v


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def int_list(v):
    return isinstance(v, list) and all(is_int(x) for x in v)


def read_jsonl(path):
    """Yields (line number, object) for every non-blank line."""
    try:
        f = open(path, encoding='utf-8')
    except OSError as e:
        raise Malformed(f'{path}: {e.strerror}')
    with f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as e:
                raise Malformed(f'{path}:{n}: not JSON ({e})')
            if not isinstance(obj, dict):
                raise Malformed(f'{path}:{n}: not a JSON object')
            yield n, obj


# ---- the oracle ----------------------------------------------------------------

class Oracle:
    def __init__(self, d):
        self.ranks = {}  # rank -> list of (line number, event)
        self.defs = {}   # rank -> label -> (members, remote)
        self.dir = d
        if not os.path.isdir(d):
            raise Malformed(f'{d}: not a directory')
        found = {}
        for name in os.listdir(d):
            m = re.fullmatch(r'expect-(\d+)\.jsonl', name)
            if m:
                found[int(m.group(1))] = os.path.join(d, name)
        if not found:
            raise Malformed(f'{d}: no expect-<rank>.jsonl files')
        if sorted(found) != list(range(len(found))):
            raise Malformed(f'{d}: ranks {sorted(found)} are not 0..{len(found) - 1}')
        for r in sorted(found):
            self._read(r, found[r])

    def _read(self, r, path):
        evs, defs = [], {}
        for n, o in read_jsonl(path):
            where = f'{path}:{n}'
            if 'comm_def' in o:
                lab = o['comm_def']
                if not isinstance(lab, str) or not int_list(o.get('members')):
                    raise Malformed(f'{where}: comm_def needs a label and a members list')
                if 'remote' in o and not int_list(o['remote']):
                    raise Malformed(f'{where}: remote must be a list of ranks')
                view = (tuple(o['members']), tuple(o['remote']) if o.get('remote') else None)
                if lab in defs and defs[lab] != view:
                    raise Malformed(f'{where}: comm label {lab!r} defined twice')
                defs[lab] = view
                continue
            if not isinstance(o.get('op'), str):
                raise Malformed(f'{where}: neither "op" nor "comm_def"')
            for key in ('comm', 'newcomm'):
                lab = o.get(key)
                if lab is None:
                    continue
                if not isinstance(lab, str):
                    raise Malformed(f'{where}: {key} must be a label')
                if lab not in defs:
                    raise Malformed(f'{where}: comm label {lab!r} used before its comm_def')
            if 'reqlabel' in o and o.get('newreq') is not True:
                raise Malformed(f'{where}: reqlabel without "newreq":true')
            if 'reqs' in o and not (isinstance(o['reqs'], list) and
                                    all(x is None or isinstance(x, str) for x in o['reqs'])):
                raise Malformed(f'{where}: reqs must list request labels and nulls')
            for key in ('payloads', 'statuses'):
                if key in o and not isinstance(o[key], list):
                    raise Malformed(f'{where}: {key} must be a list')
            evs.append((n, o))
        self.ranks[r] = evs
        self.defs[r] = defs


# ---- the dump --------------------------------------------------------------------

class Dump:
    def __init__(self, path, nranks):
        self.path = path
        self.events = {r: [] for r in range(nranks)}
        self.defs = {}     # (rank, id) -> (members, remote)
        self.by_id = {}    # id -> set of views
        self.ignored = 0
        for n, o in read_jsonl(path):
            where = f'{path}:{n}'
            r = o.get('rank')
            if not is_int(r):
                raise Malformed(f'{where}: no integer "rank"')
            if r not in self.events:
                raise Malformed(f'{where}: rank {r}, but the oracle has ranks 0..{nranks - 1}')
            if 'comm_def' in o:
                cid = o['comm_def']
                if not is_int(cid) or not int_list(o.get('members')):
                    raise Malformed(f'{where}: comm_def needs an integer id and members')
                if 'remote' in o and not int_list(o['remote']):
                    raise Malformed(f'{where}: remote must be a list of ranks')
                view = (tuple(o['members']), tuple(o['remote']) if o.get('remote') else None)
                if self.defs.get((r, cid), view) != view:
                    raise Malformed(f'{where}: comm {cid} defined twice on rank {r}, differently')
                self.defs[(r, cid)] = view
                self.by_id.setdefault(cid, set()).add(view)
                continue
            if 'op' not in o:
                self.ignored += 1
                continue
            pos = o.get('seq', o.get('index'))
            if not isinstance(o['op'], str) or not is_int(pos):
                raise Malformed(f'{where}: an event needs "op" and an integer "seq" or "index"')
            evs = self.events[r]
            if pos != len(evs):
                raise Malformed(f'{where}: rank {r} event number {pos}, expected {len(evs)}')
            if 'log' in o:
                log = o['log']
                # MPI_Wtime values the program read before the event: the
                # programs' oracles do not predict them, only their shape
                wt = [e for e in log if isinstance(e, dict) and 'wtime' in e] if isinstance(log, list) else []
                if not all(is_int(e['wtime']) and isinstance(e.get('value'), (int, float)) for e in wt):
                    raise Malformed(f'{where}: a wtime entry needs an integer "wtime" and a "value"')
                o['log'] = log = [e for e in log if e not in wt] if wt else log
                if not isinstance(log, list) or not all(
                        isinstance(e, dict) and is_int(e.get('slot')) and isinstance(e.get('fnv'), str)
                        for e in log):
                    raise Malformed(f'{where}: log must list {{"slot","len","fnv"}} objects')
            evs.append((n, o))

    def view(self, rank, cid, nranks):
        """The members/remote the dump gives communicator cid on rank (None: unknown)."""
        if (rank, cid) in self.defs:
            return [self.defs[(rank, cid)]]
        if cid in self.by_id:
            return list(self.by_id[cid])
        if cid == 0:
            return [(tuple(range(nranks)), None)]
        return None


# ---- comparison -------------------------------------------------------------------

class Checker:
    def __init__(self, oracle, dump, log):
        self.o, self.d, self.log = oracle, dump, log
        self.nranks = len(oracle.ranks)
        self.key2id = {}   # (label, members, remote) -> id
        self.id2canon = {}  # id -> canonical communicator
        self.reqmap = {}   # (rank, label) -> id
        self.byid = {}     # (rank, id) -> label currently holding it
        self.dead = {}     # (rank, label) -> (id, index that reused it)

    def fail(self, why):
        raise Mismatch(why)

    # communicators
    def comm(self, rank, label, cid, what):
        members, remote = self.o.defs[rank][label]
        if not is_int(cid):
            self.fail(f'{what}: recorded {cid!r}, expected the id of {label!r}')
        views = self.d.view(rank, cid, self.nranks)
        if views is None:
            self.fail(f'{what}: comm {cid} has no comm_def in the dump')
        ok = False
        for m, rm in views:
            if (m, rm) == (members, remote):
                ok = True
            elif remote is not None and (rm, m) == (members, remote) and (rank, cid) not in self.d.defs:
                ok = True  # another rank's view of the same intercommunicator
        if not ok:
            m, rm = views[0]
            self.fail(f'{what}: comm {cid} has members {list(m)} remote '
                      f'{list(rm) if rm else None}, but {label!r} has members {list(members)} '
                      f'remote {list(remote) if remote else None}')
        if label == 'world' and cid != 0:
            self.fail(f'{what}: world recorded as comm {cid}, not 0')
        key = (label, members, remote)
        canon = (label, frozenset([members, remote])) if remote else (label, members)
        if self.key2id.setdefault(key, cid) != cid:
            self.fail(f'{what}: {label!r} (members {list(members)}) is comm {cid} here '
                      f'but comm {self.key2id[key]} elsewhere')
        if self.id2canon.setdefault(cid, canon) != canon:
            other = self.id2canon[cid]
            groups = sorted(list(g) for g in other[1] if g) if isinstance(other[1], frozenset) \
                else list(other[1])
            self.fail(f'{what}: comm {cid} stands for {label!r} (members {list(members)}) here '
                      f'but for {other[0]!r} (members {groups}) elsewhere')

    # requests
    def newreq(self, rank, label, rid, index):
        if not is_int(rid) or rid <= 0:
            self.fail(f'newreq: recorded {rid!r}, expected an id > 0')
        if label is None:
            return
        old = self.byid.get((rank, rid))
        if old is not None and old != label:
            self.dead[(rank, old)] = (rid, index)
        self.byid[(rank, rid)] = label
        self.reqmap[(rank, label)] = rid

    def req(self, rank, label, rid, what):
        if label is None:
            if rid not in NULL_REQ_IDS:
                self.fail(f'{what}: recorded {rid!r}, expected MPI_REQUEST_NULL (0)')
            return
        if (rank, label) in self.dead:
            i, at = self.dead[(rank, label)]
            self.fail(f'{what}: request {label} is still in use, but its id {i} was given '
                      f'to a new request at event {at}')
        want = self.reqmap.get((rank, label))
        if want is None:
            raise Malformed(f'oracle rank {rank}: request label {label} used before it was created')
        if rid != want:
            self.fail(f'{what}: recorded id {rid!r}, expected {want} (request {label})')

    def status(self, exp, got, what):
        if not isinstance(got, dict):
            self.fail(f'{what}: recorded {got!r}, expected a status')
        for k, v in exp.items():
            if k not in got:
                self.fail(f'{what}.{k}: missing, expected {v!r}')
            if norm(got[k]) != norm(v):
                self.fail(f'{what}.{k}: recorded {got[k]!r}, expected {v!r}')

    def payload(self, d, slot, fnv, what):
        log = d.get('log')
        if log is None:
            self.fail(f'{what}: the event has no "log" (was the trace recorded with --log?)')
        got = [e for e in log if e.get('slot') == slot]  # not the clock values logged with it
        if not got:
            self.fail(f'{what}: no logged payload for slot {slot}')
        if got[0]['fnv'].lower() != fnv.lower():
            self.fail(f'{what}: logged fnv {got[0]["fnv"]} (len {got[0].get("len")}), '
                      f'expected {fnv}')

    def event(self, rank, e, d):
        if d['op'] != e['op']:
            self.fail(f'op: recorded {d["op"]}, expected {e["op"]}')
        for k, v in e.items():
            if k in SPECIAL:
                continue
            if k not in d:
                if k in ZERO_IF_ABSENT and v == 0:
                    continue
                self.fail(f'{k}: missing, expected {v!r}')
            if norm(d[k]) != norm(v):
                self.fail(f'{k}: recorded {d[k]!r}, expected {v!r}')
        if 'index' in e:
            key = 'index' if 'seq' in d else 'any_index'
            if d.get(key) != e['index']:
                self.fail(f'{key}: recorded {d.get(key)!r}, expected {e["index"]!r}')
        if 'comm' in e:
            self.comm(rank, e['comm'], d.get('comm'), 'comm')
        if 'newcomm' in e:
            if e['newcomm'] is None:
                if d.get('newcomm') not in COMM_NULL_IDS:
                    self.fail(f'newcomm: recorded {d.get("newcomm")!r}, expected MPI_COMM_NULL')
            else:
                self.comm(rank, e['newcomm'], d.get('newcomm'), 'newcomm')
        if 'reqs' in e:
            got = d.get('reqs')
            if got is None and 'req' in d:
                got = [d['req']]
            if not isinstance(got, list) or len(got) != len(e['reqs']):
                self.fail(f'reqs: recorded {got!r}, expected {len(e["reqs"])} requests')
            for i, (lab, rid) in enumerate(zip(e['reqs'], got)):
                self.req(rank, lab, rid, f'reqs[{i}]')
        if e.get('newreq') is True:
            self.newreq(rank, e.get('reqlabel'), d.get('newreq'), d.get('seq', d.get('index')))
        elif 'newreq' in e:
            raise Malformed(f'oracle rank {rank}: newreq must be true when given')
        if 'status' in e:
            got = d.get('status')
            if got is None and isinstance(d.get('statuses'), list) and len(d['statuses']) == 1:
                got = d['statuses'][0]
            self.status(e['status'], got, 'status')
        if 'statuses' in e:
            got = d.get('statuses')
            if got is None and not e['statuses']:
                got = []
            if not isinstance(got, list) or len(got) != len(e['statuses']):
                self.fail(f'statuses: recorded {got!r}, expected {len(e["statuses"])} entries')
            for i, (x, y) in enumerate(zip(e['statuses'], got)):
                if x is not None:
                    self.status(x, y, f'statuses[{i}]')
        if self.log:
            if 'payload_fnv' in e:
                self.payload(d, 0, e['payload_fnv'], 'payload_fnv')
            slots = self.slots(e)
            for i, f in enumerate(e.get('payloads') or []):
                if f is not None:
                    if i >= len(slots):
                        raise Malformed(f'oracle rank {rank}: more payloads than completions')
                    self.payload(d, slots[i], f, f'payloads[{i}] (slot {slots[i]})')

    @staticmethod
    def slots(e):
        """Log slots of the completed requests of a Wait*/Test*, in oracle order."""
        op = e['op']
        if op in ('MPI_Waitany', 'MPI_Testany'):
            return [e.get('index', 0)]
        if op in ('MPI_Waitsome', 'MPI_Testsome'):
            return list(e.get('completed', []))
        if op in ('MPI_Waitall', 'MPI_Testall'):
            return list(range(len(e.get('reqs', e.get('payloads', [])))))
        return [0]

    def run(self, out=sys.stdout, every_rank=False):
        total, bad = 0, 0
        for rank in sorted(self.o.ranks):
            exp, got = self.o.ranks[rank], self.d.events[rank]
            for i in range(max(len(exp), len(got))):
                if i >= len(exp) or i >= len(got):
                    print(f'MISMATCH rank {rank} index {i}: the oracle has {len(exp)} events, '
                          f'the trace {len(got)}', file=out)
                    print(f'  expected: {json.dumps(exp[i][1]) if i < len(exp) else "(end)"}', file=out)
                    print(f'  recorded: {json.dumps(got[i][1]) if i < len(got) else "(end)"}', file=out)
                    bad += 1
                    break
                (en, e), (dn, d) = exp[i], got[i]
                try:
                    self.event(rank, e, d)
                except Mismatch as m:
                    print(f'MISMATCH rank {rank} index {i}: {m}', file=out)
                    print(f'  expected: {json.dumps(e)}   ({self.o.dir}/expect-{rank}.jsonl:{en})', file=out)
                    print(f'  recorded: {json.dumps(d)}   ({self.d.path}:{dn})', file=out)
                    bad += 1
                    break
                total += 1
            if bad and not every_rank:
                return 1
        if bad:
            return 1
        print(f'ok: {len(self.o.ranks)} ranks, {total} events checked', file=out)
        return 0


def check(expect_dir, dump_path, log, out=sys.stdout, every_rank=False):
    """0: match, 1: difference, 2: malformed input."""
    try:
        o = Oracle(expect_dir)
        d = Dump(dump_path, len(o.ranks))
        if d.ignored:
            print(f'note: {d.ignored} dump lines that are neither events nor comm_defs ignored',
                  file=sys.stderr)
        return Checker(o, d, log).run(out, every_rank)
    except Malformed as m:
        print(f'MALFORMED: {m}', file=out)
        return 2


# ---- a dump as a perfect recorder would write it ---------------------------------

def fake_dump(expect_dir, out_path):
    o = Oracle(expect_dir)
    ids = {}  # canonical communicator -> id
    lines = []
    for rank in sorted(o.ranks):
        defined, reqs, next_req = set(), {}, 1
        index = 0

        def cid(label):
            members, remote = o.defs[rank][label]
            canon = (label, frozenset([members, remote])) if remote else (label, members)
            if canon not in ids:
                ids[canon] = 0 if label == 'world' else max([0] + list(ids.values())) + 1
            c = ids[canon]
            if c not in defined and c != 0:
                defined.add(c)
                line = {'rank': rank, 'comm_def': c, 'members': list(members)}
                if remote:
                    line['remote'] = list(remote)
                lines.append(line)
            return c

        for _, e in o.ranks[rank]:
            d = {'rank': rank, 'seq': index, 'op': e['op'], 't_entry': 1000 * index,
                 't_exit': 1000 * index + 10, 'site': 0}
            index += 1
            log = []
            for k, v in e.items():
                if k in ('comm', 'newcomm'):
                    d[k] = 0xFFFFFFFF if v is None else cid(v)
                elif k == 'reqs':
                    d[k] = [0 if x is None else reqs[x] for x in v]
                elif k == 'newreq':
                    d[k] = next_req
                    if 'reqlabel' in e:
                        reqs[e['reqlabel']] = next_req
                    next_req += 1
                elif k == 'payload_fnv':
                    log.append({'slot': 0, 'len': 1, 'fnv': v})
                elif k == 'payloads':
                    log += [{'slot': Checker.slots(e)[i], 'len': 1, 'fnv': f}
                            for i, f in enumerate(v) if f]
                elif k != 'reqlabel':
                    d[k] = v
            if log:
                d['log'] = log
            lines.append(d)
    with open(out_path, 'w') as f:
        for line in lines:
            f.write(json.dumps(line) + '\n')


# ---- self-test ------------------------------------------------------------------------

SELFTEST_ORACLE = {
    0: [
        {'op': 'MPI_Init'},
        {'comm_def': 'world', 'members': [0, 1]},
        {'comm_def': 'half', 'members': [0]},
        {'op': 'MPI_Comm_split', 'comm': 'world', 'ival': 0, 'newcomm': 'half'},
        {'op': 'MPI_Send', 'peer': 1, 'peer_world': 1, 'tag': 7, 'count': 100, 'bytes': 400,
         'comm': 'world'},
        {'op': 'MPI_Irecv', 'peer': 1, 'peer_world': 1, 'tag': 8, 'count': 10, 'bytes': 40,
         'comm': 'world', 'newreq': True, 'reqlabel': 'r1'},
        {'op': 'MPI_Isend', 'peer': 1, 'peer_world': 1, 'tag': 9, 'count': 10, 'bytes': 40,
         'comm': 'world', 'newreq': True, 'reqlabel': 'r2'},
        {'op': 'MPI_Waitall', 'reqs': ['r1', 'r2'],
         'statuses': [{'source': 1, 'source_world': 1, 'tag': 8, 'bytes': 40}, None],
         'payloads': ['0x00000000000000aa', None]},
        {'op': 'MPI_Allreduce', 'count': 1, 'bytes': 4, 'comm': 'half',
         'payload_fnv': '0x00000000000000bb'},
        {'op': 'MPI_Comm_free', 'comm': 'half'},
        {'op': 'MPI_Finalize'},
    ],
    1: [
        {'op': 'MPI_Init'},
        {'comm_def': 'world', 'members': [0, 1]},
        {'comm_def': 'half', 'members': [1]},
        {'op': 'MPI_Comm_split', 'comm': 'world', 'ival': 1, 'newcomm': 'half'},
        {'op': 'MPI_Recv', 'peer': -1, 'tag': -1, 'count': 100, 'bytes': 400, 'comm': 'world',
         'status': {'source': 0, 'source_world': 0, 'tag': 7, 'bytes': 400},
         'payload_fnv': '0x00000000000000cc'},
        {'op': 'MPI_Sendrecv', 'peer': 0, 'peer_world': 0, 'tag': 8, 'count': 10, 'bytes': 40,
         'rpeer': 0, 'rpeer_world': 0, 'rtag': 9, 'rcount': 10, 'rbytes': 40, 'comm': 'world',
         'status': {'source': 0, 'source_world': 0, 'tag': 9, 'bytes': 40},
         'payload_fnv': '0x00000000000000dd'},
        {'op': 'MPI_Irecv', 'peer': 0, 'peer_world': 0, 'tag': 10, 'count': 1, 'bytes': 4,
         'comm': 'world', 'newreq': True, 'reqlabel': 'r1'},
        {'op': 'MPI_Irecv', 'peer': 0, 'peer_world': 0, 'tag': 11, 'count': 1, 'bytes': 4,
         'comm': 'world', 'newreq': True, 'reqlabel': 'r2'},
        {'op': 'MPI_Waitany', 'reqs': ['r1', 'r2'], 'index': 1,
         'status': {'source': 0, 'source_world': 0, 'tag': 11, 'bytes': 4},
         'payloads': ['0x00000000000000f1']},
        {'op': 'MPI_Waitsome', 'reqs': ['r1', None], 'completed': [0],
         'statuses': [{'source': 0, 'source_world': 0, 'tag': 10, 'bytes': 4}],
         'payloads': ['0x00000000000000f2']},
        {'op': 'MPI_Allreduce', 'count': 1, 'bytes': 4, 'comm': 'half',
         'payload_fnv': '0x00000000000000ee'},
        {'op': 'MPI_Comm_free', 'comm': 'half'},
        {'op': 'MPI_Finalize'},
    ],
}


def selftest():
    import io
    tmp = tempfile.mkdtemp(prefix='check_trace.')
    exp = os.path.join(tmp, 'expect')
    os.mkdir(exp)
    for r, lines in SELFTEST_ORACLE.items():
        with open(os.path.join(exp, f'expect-{r}.jsonl'), 'w') as f:
            for line in lines:
                f.write(json.dumps(line) + '\n')
    good = os.path.join(tmp, 'good.jsonl')
    fake_dump(exp, good)
    base = [json.loads(line) for line in open(good)]

    def ev(rank, index):
        return next(i for i, x in enumerate(base) if x.get('rank') == rank and x.get('seq') == index)

    def variant(name, edit):
        lines = json.loads(json.dumps(base))
        edit(lines)
        path = os.path.join(tmp, name + '.jsonl')
        with open(path, 'w') as f:
            for x in lines:
                f.write((x if isinstance(x, str) else json.dumps(x)) + '\n')
        return path

    def drop(lines, rank, index):
        del lines[ev(rank, index)]
        for x in lines:
            if x.get('rank') == rank and x.get('seq', -1) > index:
                x['seq'] -= 1

    def setf(rank, index, key, value):
        def edit(lines):
            lines[ev(rank, index)][key] = value
        return edit

    def swap_half_ids(lines):  # rank 1 calls its half by rank 0's id
        c0 = lines[ev(0, 1)]['newcomm']
        for x in lines:
            if x.get('rank') == 1 and x.get('comm_def') == lines[ev(1, 1)]['newcomm']:
                x['comm_def'] = c0
            if x.get('rank') == 1 and x.get('comm') == lines[ev(1, 1)]['newcomm']:
                x['comm'] = c0
        lines[ev(1, 1)]['newcomm'] = c0

    def bad_log(lines):
        lines[ev(0, 5)]['log'][0]['fnv'] = '0x00000000000000ab'

    def wrong_req(lines):
        lines[ev(0, 5)]['reqs'] = [lines[ev(0, 4)]['newreq'], lines[ev(0, 4)]['newreq']]

    def reused_req(lines):  # the Isend gets the Irecv's id while the Irecv is pending
        lines[ev(0, 4)]['newreq'] = lines[ev(0, 3)]['newreq']
        lines[ev(0, 5)]['reqs'] = [lines[ev(0, 3)]['newreq']] * 2

    def index_convention(lines):  # position in "index", Waitany's result in "any_index"
        for x in lines:
            if 'seq' in x:
                if 'index' in x:
                    x['any_index'] = x.pop('index')
                x['index'] = x.pop('seq')

    def wrong_slot(lines):
        lines[ev(1, 6)]['log'][0]['slot'] = 0

    def members(lines):
        for x in lines:
            if x.get('rank') == 0 and 'comm_def' in x:
                x['members'] = [1]

    cases = [
        ('correct pair', good, False, 0),
        ('correct pair with --log', good, True, 0),
        ('changed tag', variant('tag', setf(0, 2, 'tag', 8)), False, 1),
        ('changed status source', variant('status', setf(1, 2, 'status',
                                                           {'source': 1, 'source_world': 1, 'tag': 7,
                                                            'bytes': 400})), False, 1),
        ('changed op', variant('op', setf(1, 3, 'op', 'MPI_Send')), False, 1),
        ('missing event', variant('missing', lambda l: drop(l, 1, 3)), False, 1),
        ('missing last event', variant('missing_last', lambda l: drop(l, 0, 8)), False, 1),
        ('wrong payload', variant('payload', bad_log), True, 1),
        ('wrong payload ignored without --log', variant('payload2', bad_log), False, 0),
        ('"index"/"any_index" dump convention', variant('convention', index_convention), True, 0),
        ('changed Waitany index', variant('anyindex', setf(1, 6, 'index', 0)), False, 1),
        ('Waitany payload in the wrong slot', variant('slot', wrong_slot), True, 1),
        ('changed Waitsome completed', variant('some', setf(1, 7, 'completed', [1])), False, 1),
        ('missing log', variant('nolog', lambda l: l[ev(1, 2)].pop('log')), True, 1),
        ('one comm id for two comms', variant('comms', swap_half_ids), False, 1),
        ('wrong comm members', variant('members', members), False, 1),
        ('wrong request id', variant('req', wrong_req), False, 1),
        ('request id reused while live', variant('reuse', reused_req), False, 1),
        ('world not id 0', variant('world', lambda l: [x.update(comm=5) for x in l
                                                     if x.get('comm') == 0]), False, 1),
        ('malformed line', variant('malformed', lambda l: l.insert(3, '{"rank": 0, "index"')),
         False, 2),
        ('bad event number', variant('index', setf(0, 3, 'seq', 7)), False, 2),
    ]
    failed = 0
    for name, path, log, want in cases:
        buf = io.StringIO()
        got = check(exp, path, log, buf)
        ok = got == want
        failed += not ok
        first = buf.getvalue().splitlines()[0] if buf.getvalue() else ''
        print(f'{"pass" if ok else "FAIL"}: {name}: exit {got} (want {want})  {first[:110]}')
    # A malformed oracle is refused too.
    with open(os.path.join(exp, 'expect-1.jsonl'), 'a') as f:
        f.write('{"op":"MPI_Send","comm":"nowhere"}\n')
    got = check(exp, good, False, io.StringIO())
    failed += got != 2
    print(f'{"pass" if got == 2 else "FAIL"}: malformed oracle: exit {got} (want 2)')
    if failed:
        print(f'selftest: {failed} case(s) failed (files in {tmp})')
        return 1
    import shutil
    shutil.rmtree(tmp)
    print('selftest: ok')
    return 0


def main(argv):
    if argv[1:] == ['--selftest']:
        return selftest()
    if len(argv) == 4 and argv[1] == '--fake-dump':
        try:
            fake_dump(argv[2], argv[3])
        except Malformed as m:
            print(f'MALFORMED: {m}')
            return 2
        return 0
    args = [a for a in argv[1:] if a not in ('--log', '--all')]
    if len(args) != 2 or any(a.startswith('-') for a in args):
        print(__doc__.split('\n\n')[1], file=sys.stderr)
        return 2
    return check(args[0], args[1], '--log' in argv[1:], every_rank='--all' in argv[1:])


if __name__ == '__main__':
    sys.exit(main(sys.argv))
