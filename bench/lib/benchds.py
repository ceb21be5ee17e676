# SPDX-License-Identifier: GPL-2.0-or-later
"""bench/run's ds workload (issue 38): nfsd-uc as one data server (DS) of a pNFS flexfiles
cluster, against NFS-Ganesha as that DS, in one run, on the same XFS (the preconditioned image).

Load generator nfs-stripes (bench/stripes.c). --ds-writers clients, each with its own
connection, its own file and its own uid and gid, as layouts give them: an "MDS" connection
(root) creates the files and SETATTRs each to its client's uid, mode 0640. Each client keeps
--ds-qd 1 MiB stripe units in flight; its file is striped sparse over --ds-stride DSs, so that
this DS holds every stride-th MiB of it at the client's own offsets and holes between. Per server
of --ds-servers, each phase on a fresh server process:

  ds-write  --ds-units units per client, UNSTABLE, then a COMMIT per file
  ds-read   the units read back after dropping the host's caches (cold), each checked; the write
            row is verified by it
  ds-holes  as many bytes of the files' holes read (after dropping caches), each checked to be
            zeros: what a READ of a hole costs (the note gives the device's reads)

The report's model of a 16-DS cluster at 100 Gb/s per DS is built from these rows
(benchreport.ds_section)."""

import os

from benchservers import MOUNT_PORT, NFS_PORT

PHASES = ('write', 'read', 'holes')
BS = 1 << 20
UID = 20000


def options(p):
    g = p.add_argument_group('the ds workload (a pNFS flexfiles data server)')
    g.add_argument('--ds-servers', default=None,
                   help='the servers of --servers that run it (default: all of them)')
    g.add_argument('--ds-writers', type=int, default=32,
                   help='clients: a connection, a file and a uid each (32)')
    g.add_argument('--ds-qd', type=int, default=2,
                   help='1 MiB stripe units in flight per client (2)')
    g.add_argument('--ds-units', type=int, default=None,
                   help='stripe units per client and phase (quick 8, full 128: 4 GiB a phase; '
                   'at 32, 1 GiB, a cold read took half a second and swung from 0.64x to 1.2x '
                   'between two write modes that read alike)')
    g.add_argument('--ds-stride', type=int, default=16,
                   help='DSs a file is striped over, sparse (16: the model\'s cluster)')


def args(p, a, servers):
    """The ds options, checked and in their working form."""
    a.ds_servers = [s for s in (a.ds_servers or ','.join(servers)).split(',') if s]
    if a.ds_units is None:
        a.ds_units = 8 if a.matrix == 'quick' else 128
    if not (1 <= a.ds_writers <= 1024 and 1 <= a.ds_qd <= 256 and a.ds_units >= 1 and
            2 <= a.ds_stride <= 4096):
        p.error('--ds-writers 1-1024, --ds-qd 1-256, --ds-units 1 or more, --ds-stride 2-4096 '
                '(a stride of 1 has no holes to read)')


def total_cases(a, nservers):
    return len(PHASES) * nservers


def _argv(b, d, phase, seed):
    a = b.a
    return [b.tools['nfs-stripes'], '-w', str(a.ds_writers), '-q', str(a.ds_qd),
            '--units', str(a.ds_units), '--bs', str(BS), '--stride', str(a.ds_stride),
            '--uid', str(UID), '--seed', str(seed), '127.0.0.1', str(NFS_PORT), str(MOUNT_PORT),
            b.host.export, d, phase]


def _files(b, d):
    return [os.path.join(b.host.export, d, f's{i:03d}') for i in range(b.a.ds_writers)]


def _phase(b, srv, d, phase, seed):
    """One phase on a fresh server process: its row, verified 'yes', 'pending' (the write,
    until the read checks it) or 'FAILED'."""
    a = b.a
    writing = phase == 'write'
    label = f'{srv.label} ds-{phase}'
    row = b.row(srv, f'ds-{phase}', BS, 'unstable' if writing else '-',
                'fresh' if writing else '-', a.ds_writers, a.ds_qd)
    if not b.start(srv, label):
        return b.failed_row(row, label, 'server did not start')
    if writing:
        b.host.syncfs()
    else:
        b.host.drop_caches()
    logname = f'{srv.label.replace("/", "-")}.client.log'
    m = b.measure(srv, _argv(b, d, phase, seed), _files(b, d), writing, logname)
    if m['rc'] != 0 or not m['out']:
        return b.failed_row(row, label, f'nfs-stripes exit {m["rc"]}: {m["err"]}', srv)
    row.update(b.figures(m, writing))
    notes = [f'client_cpu={m["client_cpu"]:.2f}s']
    if not writing:
        notes.append(f'loop_read_mib={m["d_loop_r"] * 512 / BS:.1f}')
    b.stat_note(srv, notes)
    b.stop(srv, notes)
    row.update(verified='pending' if writing else 'yes', note='; '.join(notes))
    b.rows.append(row)
    b.progress.finish(label, f'{row["mib_s"]:.1f} MiB/s')
    return row


def cases(b, srv):
    d = f'ds-{srv.label.replace("/", "-")}'
    seed = b.seed()
    got = {}
    for phase in PHASES:
        got[phase] = _phase(b, srv, d, phase, seed)
        if got[phase]['verified'] == 'FAILED':
            break
    w = got['write']
    if w['verified'] == 'pending':
        checked = got.get('read', {}).get('verified')
        w['verified'] = 'yes' if checked == 'yes' else 'FAILED'
    b.unlink(d)


def run_ds(b):
    servers = [s for s in b.servers if s.label in b.a.ds_servers]
    if not servers:
        b.log(f'ds: none of --ds-servers ({", ".join(b.a.ds_servers)}) runs: nothing to do')
        return
    k = b.case_no % len(servers)
    for srv in servers[k:] + servers[:k]:
        cases(b, srv)
        b.case_no += 1
    b.settle('the ds cases')
