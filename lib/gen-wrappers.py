#!/usr/bin/env python3
"""Generate phantom's MPI wrappers and op table from lib/mpi-calls.def.

One description of the MPI calls drives everything that must agree about them:

  ph_ops.h / ph_ops.c   the op table of the trace format: ids, names, kinds and
                        the fields each event carries, in encoding order;
  --wrappers rec        the recorder's C wrappers (MPI_X -> PMPI_X) and Fortran
                        wrappers (mpi_x_, mpi_x__, mpi_x, MPI_X, mpi_x_f08_),
                        which call the Fortran PMPI symbol (pmpi_x_) so Fortran
                        semantics (MPI_IN_PLACE, MPI_BOTTOM, ...) stay Open MPI's.
  --wrappers rep --replay
                        the replayer's: the same wrappers, but the runtime may
                        answer a call itself (ph_pre returns 0), so the wrapper
                        hands it pointers to every output (ph_call.*_p; C views
                        of them in Fortran wrappers, copied back afterwards);
                        --local F,G,... gives the listed local calls a hook
                        ph_local_F(&rc, args...) that answers them when it
                        returns 1 (prototypes: --local-header OUT.h).

A wrapper only moves arguments into a `ph_call` (lib/ph_call.h) by role and calls
the runtime's ph_enter / ph_pre / ph_post; what each kind of call means lives in
the runtime, once per kind, not once per function.  The recorder's wrappers
ignore ph_pre's result: it always lets the call through.

Roles (parameter -> ph_call field):
  sbuf rbuf count dtype peer tag rcount rdtype rpeer rtag root comm mop ival
  scounts sdispls stypes rcounts rdispls rtypes   (vector collectives)
  newcomm   MPI_Comm * out          commp   MPI_Comm * in/out (Comm_free)
  newreq    MPI_Request * out       req     MPI_Request * in/out (Wait, Test, Start)
  nreqs + reqs                      request arrays, copied before the call
  status statuses index indices outcount flag   completion results
  msgin msgout                      MPI_Message * in / out
Kinds are listed in KIND_FIELDS below.
"""
import argparse
import re
import sys

# Event fields, in encoding order, that a role contributes (before results).
ROLE_FIELDS = [
    ('comm', 'COMM'), ('commp', 'COMM'), ('peer', 'PEER'), ('tag', 'TAG'),
    ('count', 'COUNT'), ('dtype', 'DTYPE'), ('rpeer', 'RPEER'), ('rtag', 'RTAG'),
    ('rcount', 'RCOUNT'), ('rdtype', 'RDTYPE'), ('root', 'ROOT'),
    ('scounts', 'SBYTESV'), ('rcounts', 'RBYTESV'), ('ival', 'INT'),
    ('newcomm', 'NEWCOMM'),
]
# Result fields appended per kind.
KIND_FIELDS = {
    'init': [], 'finalize': [], 'abort': [], 'pcontrol': [],
    'send': [], 'recv': ['STATUS'],
    'isend': ['NEWREQ'], 'irecv': ['NEWREQ'], 'psend': ['NEWREQ'], 'precv': ['NEWREQ'],
    'start': ['REQ'], 'startall': ['REQS'],
    'sendrecv': ['STATUS'],
    'probe': ['STATUS'], 'iprobe': ['FLAG', 'STATUS_IF_FLAG'],
    'mprobe': ['STATUS', 'NEWREQ'], 'improbe': ['FLAG', 'STATUS_IF_FLAG', 'NEWREQ_IF_FLAG'],
    'mrecv': ['REQ', 'STATUS'], 'imrecv': ['REQ', 'NEWREQ'],
    'wait': ['REQ', 'STATUS'], 'waitall': ['REQS', 'STATUSES'],
    'waitany': ['REQS', 'ANY'], 'waitsome': ['REQS', 'SOME'],
    'test': ['REQ', 'FLAG', 'STATUS_IF_FLAG'], 'testall': ['REQS', 'FLAG', 'STATUSES_IF_FLAG'],
    'testany': ['REQS', 'FLAG', 'ANY_IF_FLAG'], 'testsome': ['REQS', 'SOME'],
    'request_free': ['REQ'], 'cancel': ['REQ'],
    'coll': [], 'icoll': ['NEWREQ'],
    'comm_dup': [], 'comm_idup': ['NEWREQ'], 'comm_new': [], 'comm_free': [],
}
FIELDS = ['COMM', 'PEER', 'TAG', 'COUNT', 'DTYPE', 'RPEER', 'RTAG', 'RCOUNT', 'RDTYPE',
          'ROOT', 'SBYTESV', 'RBYTESV', 'INT', 'NEWCOMM', 'NEWREQ', 'REQ', 'REQS',
          'STATUS', 'STATUSES', 'ANY', 'SOME', 'FLAG', 'STATUS_IF_FLAG',
          'STATUSES_IF_FLAG', 'ANY_IF_FLAG', 'NEWREQ_IF_FLAG']
CLASS = {  # coarse class for tools: what the simulator and stats group by
    'p2p': ['send', 'recv', 'isend', 'irecv', 'psend', 'precv', 'start', 'startall',
            'sendrecv', 'probe', 'iprobe', 'mprobe', 'improbe', 'mrecv', 'imrecv'],
    'wait': ['wait', 'waitall', 'waitany', 'waitsome', 'test', 'testall', 'testany',
             'testsome', 'request_free', 'cancel'],
    'coll': ['coll', 'icoll'],
    'comm': ['comm_dup', 'comm_idup', 'comm_new', 'comm_free'],
    'other': ['init', 'finalize', 'abort', 'pcontrol'],
}
KIND_CLASS = {k: c for c, ks in CLASS.items() for k in ks}
# What a passed-through call does that the simulation leaves out: `pass:K` in
# mpi-calls.def.  The recorder times these calls (their time tells the user
# whether leaving them out matters); a plain `pass` is local and not timed.
# K -> (enum ph_untraced member, the name tools print).
UNTRACED = {
    'rma': ('ONE_SIDED', 'one-sided'),
    'neighbor': ('NEIGHBOR', 'neighbourhood collective'),
    'io': ('FILE_IO', 'file I/O'),
    'procs': ('PROCESSES', 'process management'),
}
# The `unknown` field of a COUNTERS(_TIMED) entry (doc/trace-format.md).
COUNTED_LOCAL, COUNTED_TIMED, COUNTED_UNTIMED = 0, 1, 2


class Param:
    def __init__(self, text):
        text = text.strip()
        self.text = text
        self.array = '[' in text
        t = re.sub(r'\[\w*\]', '', text)
        m = re.match(r'(.*?)([A-Za-z_]\w*)$', t.strip())
        if not m:
            raise SystemExit('cannot parse parameter: ' + text)
        self.ctype = ' '.join(m.group(1).replace('*', ' * ').split()).replace(' *', '*')
        self.name = m.group(2)
        self.base = self.ctype.replace('const ', '').replace('*', '').strip()
        self.pointer = self.ctype.count('*') + (1 if self.array else 0)

    def decl(self, name=None):
        n = name or self.name
        return self.text if name is None else self.text.replace(self.name, n)


class Call:
    def __init__(self, opid, kind, proto, roles, lineno):
        self.kind, _, self.untraced = kind.partition(':')
        self.opid, self.proto, self.lineno = opid, proto, lineno
        if self.untraced and (self.kind != 'pass' or self.untraced not in UNTRACED):
            raise SystemExit(f'mpi-calls.def:{lineno}: unknown kind {kind}')
        m = re.match(r'(.*?)\bMPI_(\w+)\s*\((.*)\)$', proto)
        if not m:
            raise SystemExit(f'mpi-calls.def:{lineno}: cannot parse prototype')
        self.ret = m.group(1).strip()
        self.name = m.group(2)
        args = m.group(3).strip()
        self.variadic = args.endswith('...')
        if self.variadic:
            args = args[:args.rfind(',')]
        self.params = [] if args in ('', 'void') else [Param(a) for a in args.split(',')]
        self.roles = {}
        for kv in roles.split():
            role, pname = kv.split('=')
            if pname not in [p.name for p in self.params]:
                raise SystemExit(f'mpi-calls.def:{lineno}: MPI_{self.name} has no parameter {pname}')
            self.roles[role] = pname
        self.role_of = {v: k for k, v in self.roles.items()}

    def fields(self):
        f = [fld for role, fld in ROLE_FIELDS if role in self.roles]
        return f + KIND_FIELDS[self.kind]


def parse(path):
    calls = []
    for n, line in enumerate(open(path), 1):
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        head, _, roles = line.partition('|')
        m = re.match(r'(\S+)\s+(\S+)\s+(.*)$', head.strip())
        opid, kind, proto = m.groups()
        if opid != '-' and kind not in KIND_FIELDS:
            raise SystemExit(f'mpi-calls.def:{n}: unknown kind {kind}')
        if opid == '-' and kind.partition(':')[0] not in ('count', 'pass'):
            raise SystemExit(f'mpi-calls.def:{n}: unknown kind {kind} of a call that is no event')
        calls.append(Call(None if opid == '-' else int(opid), kind, proto, roles, n))
    ids = [c.opid for c in calls if c.opid is not None]
    if len(ids) != len(set(ids)) or max(ids) >= 0xF0:
        raise SystemExit('mpi-calls.def: op ids must be unique and below 240')
    return calls


def gen_ops_h(calls, out):
    ev = [c for c in calls if c.opid is not None]
    w = out.write
    w('/* Generated by lib/gen-wrappers.py from lib/mpi-calls.def. Do not edit. */\n')
    w('#ifndef PH_OPS_H\n#define PH_OPS_H\n#include <stdint.h>\n\n')
    w('enum ph_op {\n    PH_OP_NONE = 0,\n')
    for c in ev:
        w(f'    PH_OP_{c.name.upper()} = {c.opid},\n')
    w(f'    PH_OP_LIMIT = {max(c.opid for c in ev) + 1}\n}};\n\n')
    w('/* Event fields in encoding order; doc/trace-format.md gives each encoding. */\n')
    w('enum ph_field {\n    PH_F_END = 0,\n')
    for f in FIELDS:
        w(f'    PH_F_{f},\n')
    w('};\n\nenum ph_kind {\n')
    for k in KIND_FIELDS:
        w(f'    PH_K_{k.upper()},\n')
    w('};\n\nenum ph_class { PH_C_P2P, PH_C_WAIT, PH_C_COLL, PH_C_COMM, PH_C_OTHER };\n\n')
    w('#define PH_MAX_FIELDS 16\n')
    w('typedef struct ph_op_info {\n    const char *name; /* "MPI_Send"; NULL for unused ids */\n')
    w('    uint8_t kind, cls;\n    uint8_t fields[PH_MAX_FIELDS]; /* PH_F_END-terminated */\n} ph_op_info;\n\n')
    w('extern const ph_op_info ph_ops[PH_OP_LIMIT];\n')
    w('/* Functions that are counted, not sequenced (local calls), then unknown ones;\n'
      ' * for each, the unknown field of its COUNTERS entry: 0 a local call, 1\n'
      ' * passed through and timed, 2 passed through, local, not timed. */\n')
    w('extern const char *const ph_counted_names[];\nextern const uint8_t ph_counted_unknown[];\n')
    w('extern const unsigned ph_ncounted;\n\n')
    w('/* What a function phantom passes through without tracing does that the\n'
      ' * simulator leaves out: it sees none of these calls, so their time is part\n'
      ' * of the computation around them (`pass:K` in mpi-calls.def). */\n')
    w('typedef enum ph_untraced {\n    PH_UNTRACED_OTHER, /* none of the below (MPI_Info_set, MPI_Type_get_name, ...) */\n')
    for k, (member, name) in UNTRACED.items():
        w(f'    PH_UNTRACED_{member}, /* {k}: {name} */\n')
    w('    PH_UNTRACED_KINDS\n} ph_untraced;\n')
    w('/* "other", then each kind\'s name */\nextern const char *const ph_untraced_names[PH_UNTRACED_KINDS];\n')
    w('/* The functions of a kind other than PH_UNTRACED_OTHER, sorted by name */\n')
    w('typedef struct ph_untraced_fn {\n    const char *name;\n    uint8_t kind;\n} ph_untraced_fn;\n')
    w('extern const ph_untraced_fn ph_untraced_fns[];\nextern const unsigned ph_nuntraced_fns;\n\n')
    w('/* NULL when op is not a valid id.  Inline: the reader asks it for every\n'
      ' * event it decodes, the recorder for every call it writes. */\n')
    w('static inline const ph_op_info *ph_op(unsigned op)\n{\n'
      '    return op < PH_OP_LIMIT && ph_ops[op].name ? &ph_ops[op] : (const ph_op_info *)0;\n}\n')
    w('#endif\n')


def gen_ops_c(calls, out):
    w = out.write
    w('/* Generated by lib/gen-wrappers.py from lib/mpi-calls.def. Do not edit. */\n')
    w('#include <stddef.h>\n#include "ph_ops.h"\n\nconst ph_op_info ph_ops[PH_OP_LIMIT] = {\n')
    for c in calls:
        if c.opid is None:
            continue
        flds = ', '.join('PH_F_' + f for f in c.fields()) or '0'
        assert len(c.fields()) < 16
        w(f'    [{c.opid}] = {{"MPI_{c.name}", PH_K_{c.kind.upper()}, '
          f'PH_C_{KIND_CLASS[c.kind].upper()}, {{{flds}}}}},\n')
    w('};\n\nconst char *const ph_counted_names[] = {\n')
    counted = [c for c in calls if c.kind == 'count'] + [c for c in calls if c.kind == 'pass']
    for c in counted:
        w(f'    "MPI_{c.name}",\n')
    w('};\n\nconst uint8_t ph_counted_unknown[] = {')
    w(', '.join(str(counted_unknown(c)) for c in counted) + '};\n')
    w(f'const unsigned ph_ncounted = {len(counted)};\n\n')
    w('const char *const ph_untraced_names[PH_UNTRACED_KINDS] = {"other", ')
    w(', '.join(f'"{name}"' for _, name in UNTRACED.values()) + '};\n\n')
    w('const ph_untraced_fn ph_untraced_fns[] = {\n')
    untraced = sorted((f'MPI_{c.name}', c.untraced) for c in calls if c.untraced)
    for name, k in untraced:
        w(f'    {{"{name}", PH_UNTRACED_{UNTRACED[k][0]}}},\n')
    w(f'}};\nconst unsigned ph_nuntraced_fns = {len(untraced)};\n')


def counted_unknown(call):
    if call.kind == 'count':
        return COUNTED_LOCAL
    return COUNTED_TIMED if call.untraced else COUNTED_UNTIMED


# ---- C wrappers -------------------------------------------------------------

def c_assign(call, p):
    """Statements moving C parameter p into ph_call `c` before the call."""
    role = call.role_of.get(p.name)
    n = p.name
    if role is None:
        return []
    simple = {'sbuf': f'c.sbuf = {n};', 'rbuf': f'c.rbuf = {n};', 'count': f'c.count = {n};',
              'dtype': f'c.dtype = {n};', 'peer': f'c.peer = {n};', 'tag': f'c.tag = {n};',
              'rcount': f'c.rcount = {n};', 'rdtype': f'c.rdtype = {n};', 'rpeer': f'c.rpeer = {n};',
              'rtag': f'c.rtag = {n};', 'root': f'c.root = {n};', 'comm': f'c.comm = {n};',
              'mop': f'c.mop = {n};', 'ival': f'c.ival = {n};',
              'scounts': f'c.scounts = {n};', 'sdispls': f'c.sdispls = {n};',
              'stypes': f'c.stypes = {n};', 'rcounts': f'c.rcounts = {n};',
              'rdispls': f'c.rdispls = {n};', 'rtypes': f'c.rtypes = {n};',
              'commp': f'c.comm = *{n};', 'req': f'c.req = *{n};',
              'msgin': f'c.msg = *{n};', 'nreqs': f'c.nreqs = {n};'}
    if role in simple:
        return [simple[role]]
    return []


# Replay: where each output role lets the runtime write when it answers a call
# itself.  The post-call reads below then read back what it wrote.
C_OUT_POINTERS = [('newreq', 'c.newreq_p = {};'), ('req', 'c.req_p = {};'),
                  ('reqs', 'c.reqs_p = {};'), ('index', 'c.index_p = {};'),
                  ('flag', 'c.flag_p = {};'), ('outcount', 'c.outcount_p = {};'),
                  ('indices', 'c.indices_p = {};'), ('newcomm', 'c.newcomm_p = {};'),
                  ('commp', 'c.commp = {};'), ('msgout', 'c.msg_p = {};'),
                  ('msgin', 'c.msg_p = {};')]


def args_array(call, fortran):
    """Replay: every argument of a communicator-creating call (topologies need
    dims, periods, edges...).  Entry i points to the value of a scalar and is
    the pointer itself for a pointer or array, in C and in Fortran alike."""
    if call.kind != 'comm_new':
        return []
    ptrs = []
    for p in call.params:
        scalar = p.pointer == 0
        if fortran:
            ptrs.append(f'(void *){p.name}')
        else:
            ptrs.append(f'(void *)&{p.name}' if scalar else f'(void *){p.name}')
    return [f'void *ph_args[] = {{{", ".join(ptrs)}}};', 'c.args = ph_args;']


def c_local_hook(call, args):
    """Replay: a local call the runtime may answer (virtual communicators)."""
    return [f'    int rc;', f'    if (ph_local_{call.name}(&rc{", " if args else ""}{args}))',
            '        return rc;']


def pass_timer_start(call, replay):
    """The recorder times a passed-through call the simulator leaves out
    (`pass:K`: one-sided, MPI-IO, ...): its time tells the user whether
    that matters.  Local calls (kinds count and pass) are many and short,
    and not timed: two clock reads would double the cost of MPI_Comm_f2c."""
    return ['    uint64_t ph_t0 = ph_pass_now();'] if call.untraced and not replay else []


def pass_timer_stop(call, replay):
    if not call.untraced or replay:
        return []
    return [f'    ph_count_time({COUNTED_INDEX[call.name]}, ph_t0, ph_pass_now());']


def c_wrapper(call, replay=False):
    ps = call.params
    decl = ', '.join(p.text for p in ps) if ps else 'void'
    if call.variadic:
        decl += ', ...'
    args = ', '.join(p.name for p in ps)
    L = [f'{call.ret} MPI_{call.name}({decl})', '{']
    if call.kind in ('count', 'pass'):
        L.append(f'    ph_count_call({COUNTED_INDEX[call.name]});')
        if call.name == 'Type_free':  # forget the datatype before its handle is reused
            L.append('    ph_type_freed(*type);')
        if replay and call.name in LOCAL_HOOKS:
            L += c_local_hook(call, args)
        if call.name in RUNTIME_ANSWERS:  # the runtime logs or replays the result
            L.append(f'    return {RUNTIME_ANSWERS[call.name]}({args});')
        else:  # inside MPI: the library's own clock reads are not the program's
            L += ['    ph_mark_enter();'] + pass_timer_start(call, replay)
            L += [f'    {call.ret} ph_rc = PMPI_{call.name}({args});'] + pass_timer_stop(call, replay)
            L += ['    ph_mark_leave();', '    return ph_rc;']
        L.append('}')
        return L
    L.append('    ph_call c;')
    L.append(f'    if (!ph_enter(&c, PH_OP_{call.name.upper()}, 0))')
    L.append(f'        return PMPI_{call.name}({args});')
    for p in ps:
        L += ['    ' + s for s in c_assign(call, p)]
    r = call.roles
    if 'reqs' in r:
        L.append(f'    c.reqs = ph_copy_requests(&c, {r["reqs"]}, {r["nreqs"]});')
    # Results always land in memory we can read: substitute ignored statuses.
    if 'status' in r:
        s = r['status']
        L.append(f'    MPI_Status st_local;')
        L.append(f'    if ({s} == MPI_STATUS_IGNORE) {s} = &st_local;')
        L.append(f'    c.status = {s};')
    if 'statuses' in r:
        s = r['statuses']
        L.append(f'    if ({s} == MPI_STATUSES_IGNORE) {s} = ph_scratch_statuses(&c, {r["nreqs"]});')
        L.append(f'    c.statuses = {s};')
    if replay:
        for role, stmt in C_OUT_POINTERS:
            if role in r:
                L.append('    ' + stmt.format(r[role]))
        L += ['    ' + s for s in args_array(call, False)]
        L.append('    if (ph_pre(&c))')
        L.append(f'        c.rc = PMPI_{call.name}({args});')
    else:
        L.append('    ph_pre(&c);')
        L.append(f'    c.rc = PMPI_{call.name}({args});')
    for role, stmt in [('newcomm', 'c.newcomm = *{};'), ('newreq', 'c.newreq = *{};'),
                       ('msgout', 'c.msg = *{};'), ('index', 'c.index = *{};'),
                       ('flag', 'c.flag = *{};'), ('outcount', 'c.outcount = *{};'),
                       ('indices', 'c.indices = {};'), ('commp', 'c.commp = {};')]:
        if role in r:
            L.append('    ' + stmt.format(r[role]))
    L.append('    ph_post(&c);')
    L.append('    return c.rc;')
    L.append('}')
    return L


# ---- Fortran wrappers ---------------------------------------------------------

def f_param(call, p):
    """Declaration of parameter p in the Fortran binding (all by reference)."""
    if p.base == 'void' or (p.base == 'char' and p.pointer >= 2):
        return f'void *{p.name}'
    if p.base == 'MPI_Aint':
        return f'MPI_Aint *{p.name}'
    return f'MPI_Fint *{p.name}'


def f_assign(call, p):
    role = call.role_of.get(p.name)
    n = p.name
    if role is None:
        return []
    conv = {
        'sbuf': f'c.sbuf = ph_fortran_buffer({n});', 'rbuf': f'c.rbuf = ph_fortran_buffer({n});',
        'count': f'c.count = *{n};', 'rcount': f'c.rcount = *{n};', 'peer': f'c.peer = *{n};',
        'tag': f'c.tag = *{n};', 'rpeer': f'c.rpeer = *{n};', 'rtag': f'c.rtag = *{n};',
        'root': f'c.root = *{n};', 'ival': f'c.ival = *{n};', 'nreqs': f'c.nreqs = *{n};',
        'dtype': f'c.dtype = PMPI_Type_f2c(*{n});', 'rdtype': f'c.rdtype = PMPI_Type_f2c(*{n});',
        'comm': f'c.comm = PMPI_Comm_f2c(*{n});', 'commp': f'c.comm = PMPI_Comm_f2c(*{n});',
        'mop': f'c.mop = PMPI_Op_f2c(*{n});',
        'scounts': f'c.scounts = (const int *){n};', 'sdispls': f'c.sdispls = (const int *){n};',
        'rcounts': f'c.rcounts = (const int *){n};', 'rdispls': f'c.rdispls = (const int *){n};',
        'req': f'c.req = PMPI_Request_f2c(*{n});', 'msgin': f'c.msg = PMPI_Message_f2c(*{n});',
    }
    if role in conv:
        return [conv[role]]
    return []


def f_wrapper(call, replay=False):
    lname = call.name.lower()
    r = call.roles
    special_init = call.kind == 'init'
    fparams = [] if special_init else call.params
    if call.name == 'Init_thread':
        fparams = [p for p in call.params if p.name in ('required', 'provided')]
    if call.name == 'Pcontrol':
        fparams = call.params
    decls = [f_param(call, p) for p in fparams] + ['MPI_Fint *ierr']
    fargs = [p.name for p in fparams] + ['ierr']
    proto = ', '.join(decls)
    # The body is inlined into both entry points, ph_f_X (the mpif.h and use
    # mpi names alias it) and mpi_X_f08_, so that ph_enter's backtrace starts
    # at the application's call in both, not in a frame of ours.
    L = [f'static inline __attribute__((always_inline)) void ph_f_{lname}_body({proto})', '{']
    L.append(f'    static void *real;')
    L.append(f'    void (*pmpi)({proto}) = (void (*)({proto}))ph_fortran_pmpi(&real, "pmpi_{lname}_");')
    if call.kind in ('count', 'pass'):
        L.append(f'    ph_count_call({COUNTED_INDEX[call.name]});')
        if call.name == 'Type_free':
            L.append('    ph_type_freed(PMPI_Type_f2c(*type));')
        hooked = replay and call.name in LOCAL_HOOKS
        if hooked:
            L += f_local_hook(call)
        L += ['    ph_mark_enter();', f'    pmpi({", ".join(fargs)});', '    ph_mark_leave();']
        L.append('}')
        # Every name, not only the hooked ones': Open MPI's Fortran bindings
        # call PMPI_* directly, so the C wrapper never sees a Fortran
        # MPI_TYPE_FREE, and a datatype made later on the freed handle would
        # keep the freed one's size.
        return L + f_entry(call, proto, fargs) + f_aliases(call, proto)
    L.append('    ph_call c;')
    L.append(f'    if (!ph_enter(&c, PH_OP_{call.name.upper()}, 1)) {{')
    L.append(f'        pmpi({", ".join(fargs)});')
    L.append('        return;\n    }')
    for p in fparams:
        L += ['    ' + s for s in f_assign(call, p)]
    if 'stypes' in r:
        L.append(f'    c.stypes = ph_fortran_types(&c, {r["stypes"]}, 0);')
    if 'rtypes' in r:
        L.append(f'    c.rtypes = ph_fortran_types(&c, {r["rtypes"]}, 1);')
    if 'reqs' in r:
        L.append(f'    c.reqs = ph_fortran_requests(&c, {r["reqs"]}, *{r["nreqs"]});')
    if 'status' in r:
        s = r['status']
        L.append('    MPI_Fint fst_local[PH_F_STATUS_SIZE];')
        L.append(f'    if (ph_fortran_status_ignored({s})) {s} = fst_local;')
    if 'statuses' in r:
        s = r['statuses']
        L.append(f'    if (ph_fortran_statuses_ignored({s})) {s} = ph_scratch_fortran_statuses(&c, *{r["nreqs"]});')
    back = []
    if replay:
        views, back = f_replay_views(call)
        L += ['    ' + s for s in views + args_array(call, True)]
        L.append('    int answered = !ph_pre(&c);')
        L.append('    if (answered) {')
        L.append('        *ierr = c.rc;')
        L.append('    } else {')
        L.append(f'        pmpi({", ".join(fargs)});')
        L.append('        c.rc = *ierr;')
        L.append('    }')
        L.append('    if (c.rc == MPI_SUCCESS && answered) {')
        L += ['        ' + s for s in back]
        L.append('    } else if (c.rc == MPI_SUCCESS) {')
    else:
        L.append('    ph_pre(&c);')
        L.append(f'    pmpi({", ".join(fargs)});')
        L.append('    c.rc = *ierr;')
        L.append('    if (c.rc == MPI_SUCCESS) {')
    post = {
        'newcomm': 'c.newcomm = PMPI_Comm_f2c(*{});', 'newreq': 'c.newreq = PMPI_Request_f2c(*{});',
        'msgout': 'c.msg = PMPI_Message_f2c(*{});', 'flag': 'c.flag = *{} != 0;',
        'outcount': 'c.outcount = *{};',
        'index': 'c.index = *{0} == MPI_UNDEFINED ? MPI_UNDEFINED : *{0} - 1;',
        'status': 'c.status = ph_fortran_status(&c, {});',
    }
    for role, stmt in post.items():
        if role in r:
            L.append('        ' + stmt.format(r[role]))
    if 'indices' in r:
        L.append(f'        c.indices = ph_fortran_indices(&c, {r["indices"]}, c.outcount);')
    if 'statuses' in r:
        n = 'c.outcount' if 'outcount' in r else f'*{r["nreqs"]}'
        L.append(f'        c.statuses = ph_fortran_statuses(&c, {r["statuses"]}, {n});')
    if 'commp' in r:
        L.append('        c.commp = &c.newcomm; /* Comm_free: the handle is gone */')
    L.append('    }')
    L.append('    ph_post(&c);')
    L.append('}')
    return L + f_entry(call, proto, fargs) + f_aliases(call, proto)


def f_entry(call, proto, fargs):
    """The Fortran entry point the aliases name: the inlined body."""
    lname = call.name.lower()
    return [f'static void ph_f_{lname}({proto});', f'static void ph_f_{lname}({proto})', '{',
            f'    ph_f_{lname}_body({", ".join(fargs)});', '}']


def f_aliases(call, proto):
    """Every name a Fortran compiler or mpi_f08 may use for this routine."""
    lname = call.name.lower()
    return [f'void mpi_{lname}_({proto}) __attribute__((alias("ph_f_{lname}")));',
            f'void mpi_{lname}__({proto}) __attribute__((alias("ph_f_{lname}")));',
            f'void mpi_{lname}({proto}) __attribute__((alias("ph_f_{lname}")));',
            f'void MPI_{call.name.upper()}({proto}) __attribute__((alias("ph_f_{lname}")));']


def f_replay_views(call):
    """Replay: C views of a Fortran call's outputs, which the runtime writes
    when it answers the call itself, and the statements that copy them back
    into the Fortran arguments (1-based indices, Fortran handles)."""
    r = call.roles
    n_reqs = f'*{r["nreqs"]}' if 'nreqs' in r else '0'
    views, back = [], []
    def add(role, decl, setp, copy):
        if role in r:
            views.extend([decl.format(r[role]), setp])
            back.append(copy.format(r[role]))
    add('newreq', 'MPI_Request cv_newreq = MPI_REQUEST_NULL;', 'c.newreq_p = &cv_newreq;',
        '*{} = PMPI_Request_c2f(cv_newreq);')
    add('req', 'MPI_Request cv_req = c.req;', 'c.req_p = &cv_req;', '*{} = PMPI_Request_c2f(cv_req);')
    add('reqs', 'MPI_Request *cv_reqs = ph_rep_fortran_requests(&c);', 'c.reqs_p = cv_reqs;',
        f'for (int i = 0; i < {n_reqs}; i++) {{}}[i] = PMPI_Request_c2f(cv_reqs[i]);')
    add('flag', 'int cv_flag = 0;', 'c.flag_p = &cv_flag;', '*{} = cv_flag;')
    add('index', 'int cv_index = MPI_UNDEFINED;', 'c.index_p = &cv_index;',
        '*{} = cv_index == MPI_UNDEFINED ? MPI_UNDEFINED : cv_index + 1;')
    add('outcount', 'int cv_outcount = MPI_UNDEFINED;', 'c.outcount_p = &cv_outcount;',
        '*{} = cv_outcount;')
    add('indices', f'int *cv_indices = ph_rep_scratch_ints(&c, {n_reqs});', 'c.indices_p = cv_indices;',
        'for (int i = 0; cv_outcount != MPI_UNDEFINED && i < cv_outcount; i++) {}[i] = cv_indices[i] + 1;')
    add('status', 'MPI_Status cv_status;', 'c.status = &cv_status;', 'PMPI_Status_c2f(&cv_status, {});')
    if 'statuses' in r:
        n = ('cv_outcount == MPI_UNDEFINED ? 0 : cv_outcount' if 'outcount' in r
             else f'cv_flag ? {n_reqs} : 0' if 'flag' in r else n_reqs)
        add('statuses', f'MPI_Status *cv_statuses = ph_scratch_statuses(&c, {n_reqs});',
            'c.statuses = cv_statuses;',
            f'for (int i = 0; i < ({n}); i++) PMPI_Status_c2f(&cv_statuses[i], {{}} + i * PH_F_STATUS_SIZE);')
    add('newcomm', 'MPI_Comm cv_newcomm = MPI_COMM_NULL;', 'c.newcomm_p = &cv_newcomm;',
        '*{} = PMPI_Comm_c2f(cv_newcomm);')
    add('commp', 'MPI_Comm cv_comm = c.comm;', 'c.commp = &cv_comm;', '*{} = PMPI_Comm_c2f(cv_comm);')
    add('msgout', 'MPI_Message cv_msg = MPI_MESSAGE_NULL;', 'c.msg_p = &cv_msg;',
        '*{} = PMPI_Message_c2f(cv_msg);')
    add('msgin', 'MPI_Message cv_msg = c.msg;', 'c.msg_p = &cv_msg;', '*{} = PMPI_Message_c2f(cv_msg);')
    return views, back


def f_local_hook(call):
    """Replay: the Fortran form of a hooked local call, converted to C handles.
    Integers and integer arrays are passed as they are (MPI_Fint is int)."""
    pre, args, back = [], [], []
    for p in call.params:
        n = p.name
        if p.base in ('MPI_Comm', 'MPI_Group') and p.pointer == 0:
            args.append(f'PMPI_{p.base[4:]}_f2c(*{n})')
        elif p.base in ('MPI_Comm', 'MPI_Group') and p.pointer == 1:
            pre.append(f'{p.base} cv_{n} = PMPI_{p.base[4:]}_f2c(*{n});')
            args.append(f'&cv_{n}')
            back.append(f'*{n} = PMPI_{p.base[4:]}_c2f(cv_{n});')
        elif p.base == 'int' and p.pointer == 0:
            args.append(f'*{n}')
        elif p.base == 'int' and '[3]' in p.text:
            args.append(f'(int (*)[3]){n}')
        elif p.base == 'int':
            args.append(f'(int *){n}')
        else:
            raise SystemExit(f'--local: cannot convert {p.text} of MPI_{call.name} from Fortran')
    L = ['    int rc;'] + ['    ' + s for s in pre]
    L.append(f'    if (ph_local_{call.name}(&rc, {", ".join(args)})) {{')
    L += ['        ' + s for s in back]
    L += ['        *ierr = rc;', '        return;', '    }']
    return L


def f08_wrapper(call):
    """mpi_f08 entry points: same arguments, but ierror is optional (may be NULL)."""
    lname = call.name.lower()
    fparams = [] if call.kind == 'init' else call.params
    if call.name == 'Init_thread':
        fparams = [p for p in call.params if p.name in ('required', 'provided')]
    decls = [f_param(call, p) for p in fparams] + ['MPI_Fint *ierr']
    fargs = [p.name for p in fparams]
    return [f'void mpi_{lname}_f08_({", ".join(decls)});',
            f'void mpi_{lname}_f08_({", ".join(decls)})', '{',
            '    MPI_Fint e = MPI_SUCCESS;',
            f'    ph_f_{lname}_body({", ".join(fargs + ["&e"])});',
            '    if (ierr) *ierr = e;', '}']


# Local calls whose result is non-deterministic input to the program: the
# runtime's function answers them (C, and Fortran's mpif.h/use mpi names;
# mpi_f08's module binds the C symbol MPI_Wtime, so the C wrapper sees it).
RUNTIME_ANSWERS = {'Wtime': 'ph_wtime'}
COUNTED_INDEX = {}
LOCAL_HOOKS = set()  # --local: local calls the replay runtime may answer
# Fortran bindings we generate: every event call plus the counted local calls
# whose Fortran form takes no strings or callbacks.
F_SKIP = {'Pcontrol', 'Wtime', 'Wtick', 'Get_processor_name', 'Error_string',
          'Get_library_version', 'Op_create', 'Address', 'Get_address', 'Alloc_mem',
          'Free_mem', 'Buffer_attach', 'Buffer_detach', 'Comm_get_attr', 'Attr_get',
          'Pack', 'Unpack', 'Pack_size', 'Comm_set_errhandler', 'Type_get_extent',
          'Type_get_true_extent', 'Type_create_hvector', 'Type_create_hindexed',
          'Type_create_struct', 'Type_create_resized', 'Type_hvector', 'Type_create_subarray'}


# C-only functions of the pass list: MPI_T has no Fortran binding, and the
# status converters are C's own.
F_NONE = {'Status_c2f', 'Status_f2c'}
# MPI-1 attribute calls that mpi_f08 does not bind (MPI-3.0 left them out).
F08_NONE = {'Attr_delete', 'Attr_get', 'Attr_put', 'Keyval_create', 'Keyval_free'}


def has_fortran_forwarder(call):
    """Local and unknown calls with no typed Fortran wrapper still get their
    Fortran names, so that a Fortran program's calls are counted as a C
    program's are (a window made from Fortran must stop an isolated replay
    as one made from C does).  Not the events, the Wtime and Wtick
    functions, nor the handle converters, which return a value."""
    return (call.kind in ('count', 'pass') and (call.kind == 'pass' or call.name in F_SKIP)
            and call.ret == 'int' and not call.name.startswith('T_') and call.name not in F_NONE)


def f_forwarder(call, replay):
    """A Fortran routine counted, then handed as it came to Open MPI's own
    Fortran binding of it: no argument is read or converted, so strings,
    callbacks and handles of any kind pass alike.  Every Fortran argument
    is an address; ierr comes last, then one hidden length per CHARACTER
    argument (size_t, as gfortran passes them).  mpi_f08's entry forwards
    to mpi_f08's own binding, whose optional ierr may be NULL."""
    lname = call.name.lower()
    lens = [f'{p.name}_len' for p in call.params if p.base == 'char']
    proto = ', '.join([f'void *{p.name}' for p in call.params] + ['MPI_Fint *ierr'] +
                      [f'size_t {n}' for n in lens])
    args = ', '.join([p.name for p in call.params] + ['ierr'] + lens)
    L = []
    forms = [(f'ph_fwd_{lname}', f'pmpi_{lname}_')]
    if call.name not in F08_NONE:
        forms.append((f'ph_fwd_{lname}_f08', f'pmpi_{lname}_f08_'))
    for fn, real in forms:
        L += [f'static void {fn}({proto})', '{', '    static void *real;',
              f'    void (*pmpi)({proto}) = (void (*)({proto}))ph_fortran_pmpi(&real, "{real}");',
              f'    ph_count_call({COUNTED_INDEX[call.name]});', '    ph_mark_enter();']
        L += pass_timer_start(call, replay) + [f'    pmpi({args});'] + pass_timer_stop(call, replay)
        L += ['    ph_mark_leave();', '}']
    L += [a.replace(f'"ph_f_{lname}"', f'"ph_fwd_{lname}"') for a in f_aliases(call, proto)]
    if call.name not in F08_NONE:
        L.append(f'void mpi_{lname}_f08_({proto}) __attribute__((alias("ph_fwd_{lname}_f08")));')
    return L


def gen_wrappers(calls, out, prefix, replay=False):
    w = out.write
    w('/* Generated by lib/gen-wrappers.py from lib/mpi-calls.def. Do not edit. */\n')
    w(f'#include "{prefix}.h"\n\n')
    w('/* Deprecated calls are still forwarded: the application chose them. */\n')
    w('#pragma GCC diagnostic ignored "-Wdeprecated-declarations"\n\n')
    for c in calls:
        if c.kind in ('count', 'pass'):
            w('\n'.join(c_wrapper(c, replay)) + '\n\n')
    for c in calls:
        if c.kind not in ('count', 'pass'):
            w('\n'.join(c_wrapper(c, replay)) + '\n\n')
    w('/* ---- Fortran: Open MPI\'s bindings call PMPI_* directly, so wrap them too ---- */\n\n')
    for c in calls:
        if c.kind == 'pass' or c.name in F_SKIP:
            continue
        w('\n'.join(f_wrapper(c, replay)) + '\n')
        w('\n'.join(f08_wrapper(c)) + '\n\n')
    w('/* The Fortran forms the typed wrappers above leave out, forwarded untouched */\n\n')
    for c in calls:
        if has_fortran_forwarder(c):
            w('\n'.join(f_forwarder(c, replay)) + '\n\n')
    for name, fn in RUNTIME_ANSWERS.items():
        lname = name.lower()
        w(f'static double ph_f_{lname}(void)\n{{\n    ph_count_call({COUNTED_INDEX[name]});\n'
          f'    return {fn}();\n}}\n')
        for alias in (f'mpi_{lname}_', f'mpi_{lname}__', f'mpi_{lname}', f'MPI_{name.upper()}'):
            w(f'double {alias}(void) __attribute__((alias("ph_f_{lname}")));\n')
        w('\n')


def gen_local_header(calls, out):
    """Prototypes of the replay runtime's hooks for the --local calls."""
    w = out.write
    w('/* Generated by lib/gen-wrappers.py from lib/mpi-calls.def. Do not edit. */\n')
    w('#ifndef PH_LOCAL_HOOKS_H\n#define PH_LOCAL_HOOKS_H\n#include <mpi.h>\n\n')
    w('/* Each returns 1 when it answered the call (its MPI return code in *rc),\n'
      ' * 0 to let the MPI library answer. */\n')
    for c in calls:
        if c.name in LOCAL_HOOKS:
            params = ', '.join(['int *rc'] + [p.text for p in c.params])
            w(f'int ph_local_{c.name}({params});\n')
    w('\n#endif\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('def_file')
    ap.add_argument('--ops', metavar='DIR', help='write ph_ops.h and ph_ops.c into DIR')
    ap.add_argument('--wrappers', metavar='OUT.c', help='write the wrappers')
    ap.add_argument('--header', default='ph_rec', help='runtime header the wrappers include')
    ap.add_argument('--skip', default='', help='comma-separated functions the MPI library lacks')
    ap.add_argument('--replay', action='store_true',
                    help='wrappers whose runtime may answer calls itself (ph_pre returns 0)')
    ap.add_argument('--local', default='', help='comma-separated local calls with a replay hook')
    ap.add_argument('--local-header', metavar='OUT.h', help='write the hooks\' prototypes')
    a = ap.parse_args()
    calls = parse(a.def_file)
    LOCAL_HOOKS.update(s.strip() for s in a.local.split(',') if s.strip())
    unknown = LOCAL_HOOKS - {c.name for c in calls if c.kind in ('count', 'pass')}
    if unknown:
        raise SystemExit('--local: not local calls in mpi-calls.def: ' + ', '.join(sorted(unknown)))
    idx = 0
    for kind in ('count', 'pass'):
        for c in calls:
            if c.kind == kind:
                COUNTED_INDEX[c.name] = idx
                idx += 1
    if a.ops:
        with open(a.ops + '/ph_ops.h', 'w') as f:
            gen_ops_h(calls, f)
        with open(a.ops + '/ph_ops.c', 'w') as f:
            gen_ops_c(calls, f)
    if a.wrappers:
        skip = set(s for s in a.skip.split(',') if s)
        with open(a.wrappers, 'w') as f:
            gen_wrappers([c for c in calls if c.name not in skip], f, a.header, a.replay)
    if a.local_header:
        with open(a.local_header, 'w') as f:
            gen_local_header(calls, f)


if __name__ == '__main__':
    main()
