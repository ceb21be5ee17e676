# SPDX-License-Identifier: GPL-2.0-or-later
"""bench/run's gss workload (issue 37): sec=krb5, krb5i and krb5p, nfsd-uc against NFS-Ganesha
with the same flavor, in one run, on the same XFS (the preconditioned image).

A KDC of the run's own (Kdc: MIT's krb5kdc, the steps of tests/with_kdc.sh) runs in the run's
network namespace with a realm made for the run, the servers' key nfs/localhost in a keytab they
are given, and the client's: host/localhost, a machine principal in a client keytab, which both
servers take as root (as rpc.gssd's calls for root are), so that the files are written as the
other workloads write them (AUTH_SYS root, no_root_squash). Then, per flavor, each server of
--gss-servers in turn, each case on a fresh server process:

  gss-interleave  the seeds' 47008-byte records (gss-load, --gss-shape writers x calls in flight,
                  --gss-writes records, UNSTABLE + one COMMIT, or FILE_SYNC with --gss-syncs) to a
                  fresh file, read back and checked afterwards (not timed)
  gss-seqwrite    a file of --gss-size in 1 MiB WRITEs in order (--gss-seq-shape connections x
                  calls in flight), UNSTABLE + COMMIT
  gss-seqread     that file read back at once from the same server process, 1 MiB READs,
                  --gss-read-passes times over, timed as one, every byte checked: warm, as the
                  readback workload reads (the crypto and the server's path, not the disk)

gss-cost (what the GSS-API's own sealing costs on this CPU, per GiB, with the context's enctype)
runs first, and `openssl speed` beside it for reference when openssl is there: the yardstick of
krb5p's CPU per GiB. Rows carry the flavor in the `sec` column."""

import os
import re
import secrets
import shutil
import subprocess
import time

from benchhost import run, stop_pid
from benchservers import MOUNT_PORT, NFS_PORT

FLAVORS = ('krb5', 'krb5i', 'krb5p')
ENCTYPES = ('aes256-cts-hmac-sha1-96', 'aes256-cts-hmac-sha384-192')
CLIENT = 'host/localhost'
KDC_TOOLS = ('kdb5_util', 'kadmin.local', 'krb5kdc')
COST_SIZES = (1048576, 47008)


def sbin(tool):
    """A KDC tool, from PATH or /usr/sbin (root's PATH may lack it)."""
    return shutil.which(tool) or shutil.which(tool, path='/usr/sbin:/sbin')


def missing():
    """Why the gss workload cannot run here, or None."""
    gone = [t for t in KDC_TOOLS if sbin(t) is None]
    if gone:
        return f'{", ".join(gone)} not installed (Debian: krb5-kdc krb5-admin-server)'
    return None


class Kdc:
    """MIT's KDC in the run's network namespace on port 88 of its 127.0.0.1, a realm of its own
    in a directory of the run's; everything undone by stop(). Only the process started here is
    signalled, by PID."""

    REALM = 'NFSDUC.BENCH'

    def __init__(self, host, log, enctype):
        self.host = host
        self.log = log
        self.enctype = enctype
        self.dir = os.path.join(host.work, 'kdc')
        self.conf = os.path.join(self.dir, 'krb5.conf')
        self.server_keytab = os.path.join(self.dir, 'nfs.keytab')
        self.client_keytab = os.path.join(self.dir, 'host.keytab')
        self.proc = None

    def client_env(self):
        """The Kerberos environment of every process of the run's realm: its krb5.conf, tickets
        in memory, and the acceptors' replay cache in the KDC's directory (MIT's default is
        /var/tmp, shared with the host)."""
        return {'KRB5_CONFIG': self.conf, 'KRB5CCNAME': 'MEMORY:nfsd-uc-bench',
                'KRB5RCACHEDIR': self.dir}

    def server_env(self):
        return dict(self.client_env(), KRB5_KTNAME=self.server_keytab)

    def _write_confs(self):
        e = self.enctype
        with open(self.conf, 'w') as f:
            f.write(f'''# written by bench/run
[libdefaults]
	default_realm = {self.REALM}
	dns_lookup_kdc = false
	dns_lookup_realm = false
	rdns = false
	permitted_enctypes = {e}
	default_tkt_enctypes = {e}
	default_tgs_enctypes = {e}
[realms]
	{self.REALM} = {{
		kdc = 127.0.0.1:88
	}}
[domain_realm]
	localhost = {self.REALM}
''')
        with open(os.path.join(self.dir, 'kdc.conf'), 'w') as f:
            f.write(f'''# written by bench/run
[kdcdefaults]
	kdc_ports = 88
	kdc_tcp_ports = 88
[realms]
	{self.REALM} = {{
		database_name = {self.dir}/principal
		key_stash_file = {self.dir}/stash
		acl_file = {self.dir}/kadm5.acl
		supported_enctypes = {e}:normal
	}}
[logging]
	kdc = FILE:{self.dir}/kdc.log
''')

    def _env(self):
        return dict(os.environ, KRB5_CONFIG=self.conf,
                    KRB5_KDC_PROFILE=os.path.join(self.dir, 'kdc.conf'))

    def start(self):
        os.makedirs(self.dir, exist_ok=True)
        self._write_confs()
        env = self._env()
        run([sbin('kdb5_util'), 'create', '-s', '-r', self.REALM, '-P', secrets.token_hex(16)],
            env=env)
        for q in ('addprinc -randkey nfs/localhost', f'ktadd -k {self.server_keytab} nfs/localhost',
                  f'addprinc -randkey {CLIENT}', f'ktadd -k {self.client_keytab} {CLIENT}'):
            run([sbin('kadmin.local'), '-q', q], env=env)
        out = open(os.path.join(self.dir, 'krb5kdc.out'), 'w')
        try:
            self.proc = subprocess.Popen(
                self.host.in_netns([sbin('krb5kdc'), '-n', '-P', os.path.join(self.dir, 'pid')]),
                env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True)
        finally:
            out.close()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            r = run(self.host.in_netns(['ss', '-Hltn', 'sport = :88']), check=False)
            if r.stdout.strip():
                self.log(f'KDC for {self.REALM} ({self.enctype}) in the namespace, pid '
                         f'{self.proc.pid}')
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f'krb5kdc did not start: see {self.dir}/kdc.log')

    def stop(self):
        stop_pid(self.proc, 'krb5kdc', self.log)
        self.proc = None


# ---- what the cryptography costs here

def gss_cost(b, kdc, seconds):
    """gss-cost in the namespace (it needs the KDC): {'enctype', 'ops': {'OP/SIZE': {...}}}."""
    argv = ['env'] + [f'{k}={v}' for k, v in kdc.client_env().items()] + [
        b.tools['gss-cost'], '--seconds', str(seconds),
        '--sizes', ','.join(str(s) for s in COST_SIZES), '--principal', CLIENT,
        '--keytab', kdc.client_keytab, '--server-keytab', kdc.server_keytab]
    r = run(b.host.in_netns(argv), timeout=600)
    out = {'enctype': '?', 'ops': {}}
    for line in r.stdout.splitlines():
        w = dict(x.split('=', 1) for x in line.split() if '=' in x)
        if 'enctype' in w:
            out['enctype'] = w['enctype']
        elif 'op' in w:
            out['ops'][f"{w['op']}/{w['size']}"] = {
                'cpu_s_per_gib': float(w['cpu_s_per_gib']), 'mib_s': float(w['MiB/s'])}
    return out


def openssl_speed(enctype, seconds=1):
    """`openssl speed` over 1 MiB buffers of the cipher and HMAC of the enctype, for reference
    (OpenSSL's AES-NI and SHA extensions, where MIT's built-in crypto may have none): {name:
    bytes/s}, {} without openssl."""
    if shutil.which('openssl') is None:
        return {}
    digest = 'sha384' if 'sha384' in enctype else 'sha1'
    runs = {'aes-256-cbc encrypt': ['-evp', 'aes-256-cbc'],
            'aes-256-cbc decrypt': ['-decrypt', '-evp', 'aes-256-cbc'],
            f'hmac({digest})': ['-hmac', digest]}
    out = {}
    for name, args in runs.items():
        r = run(['openssl', 'speed', *args, '-bytes', '1048576', '-seconds', str(seconds)],
                check=False, timeout=120)
        m = re.search(r'^\S+\s+([\d.]+)k\s*$', r.stdout.strip().splitlines()[-1]) \
            if r.returncode == 0 and r.stdout.strip() else None
        if m:
            out[name] = float(m.group(1)) * 1000
    version = run(['openssl', 'version'], check=False).stdout.strip()
    return {'version': version, 'rates': out} if out else {}


# ---- the cases

def _load_argv(b, kdc, flavor, file, *opts):
    return ['env'] + [f'{k}={v}' for k, v in kdc.client_env().items()] + [
        b.tools['gss-load'], '-S', flavor, '--principal', CLIENT, '--keytab', kdc.client_keytab,
        '--threads', str(b.a.gss_threads), '--crypto', b.a.gss_client_crypto, *opts,
        '127.0.0.1', str(NFS_PORT), str(MOUNT_PORT), b.host.export, file]


def _file_uid(b, file):
    try:
        return os.stat(os.path.join(b.host.export, file)).st_uid
    except OSError:
        return '?'


def interleave_case(b, kdc, srv, flavor, sync):
    """47008-byte records to a fresh file, timed; read back and checked after."""
    a = b.a
    shape, rec, n = a.gss_shape, 47008, a.gss_writes
    label = f'{srv.label} gss-interleave {flavor} {sync} {shape[0]}x{shape[1]}'
    row = b.row(srv, 'gss-interleave', rec, sync, 'fresh', *shape, sec=flavor)
    if not b.start(srv, label):
        return b.failed_row(row, label, 'server did not start')
    b.host.syncfs()
    file = f'gss-il-{flavor}-{srv.label.replace("/", "-")}'
    seed = b.seed()
    logname = f'{srv.label.replace("/", "-")}.gss.log'
    common = ['-W', 'interleave', '-r', str(rec), '-n', str(n), '-w', str(shape[0]),
              '-q', str(shape[1]), '-s', sync, '--seed', str(seed)]
    m = b.measure(srv, _load_argv(b, kdc, flavor, file, *common, '--write-only'),
                  os.path.join(b.host.export, file), True, logname)
    if m['rc'] != 0 or not m['out']:
        b.unlink(file)
        return b.failed_row(row, label, f'gss-load exit {m["rc"]}: {m["err"]}', srv)
    notes = []
    b.stat_note(srv, notes)
    notes += [f'client_cpu={m["client_cpu"]:.2f}s ({a.gss_client_crypto})',
              f'file_uid={_file_uid(b, file)}']
    row.update(b.figures(m, True))
    v = b.client(_load_argv(b, kdc, flavor, file, *common, '--read-only'), logname)
    vrc, vtail = b.finish_client(v, logname)
    b.unlink(file)
    if vrc != 0:
        return b.failed_row(row, label, f'read-back: exit {vrc}: {vtail}', srv)
    b.stop(srv, notes)
    row.update(verified='yes', note='; '.join(notes))
    b.rows.append(row)
    b.progress.finish(label, f'{row["mib_s"]:.1f} MiB/s, verified')
    return row


# Warm reads of the 256 MiB file, by flavor, so that each lasts seconds: a pass takes a tenth of
# a second at krb5 and 1.5 s at krb5p. (At 4 passes for all, nfsd-uc's krb5 read was 0.68x
# Ganesha's in one run and 1.65x at 32 in the next: the short one measured start-up and noise.)
READ_PASSES = {'krb5': 32, 'krb5i': 16, 'krb5p': 4}


def read_passes(a, flavor):
    return a.gss_read_passes or READ_PASSES[flavor]


def seq_cases(b, kdc, srv, flavor):
    """1 MiB WRITEs of a file in order, then 1 MiB READs of it from the same server process at
    once, read_passes() times, every byte checked: two rows."""
    a = b.a
    shape = tuple(a.gss_seq_shape)
    label = f'{srv.label} gss-seq {flavor}'
    wrow = b.row(srv, 'gss-seqwrite', 1048576, 'unstable', 'fresh', *shape, sec=flavor)
    rrow = b.row(srv, 'gss-seqread', 1048576, '-', '-', *shape, sec=flavor)
    if not b.start(srv, label):
        b.failed_row(rrow, label + ' read', 'server did not start')
        return b.failed_row(wrow, label + ' write', 'server did not start')
    b.host.syncfs()
    file = f'gss-seq-{flavor}-{srv.label.replace("/", "-")}'
    path = os.path.join(b.host.export, file)
    logname = f'{srv.label.replace("/", "-")}.gss.log'
    common = ['-W', 'seq', '-r', '1M', '-t', str(a.gss_size), '-w', str(shape[0]),
              '-q', str(shape[1]), '--seed', str(b.seed())]
    got = []
    for row, opts, writing in ((wrow, ['--write-only'], True),
                               (rrow, ['--read-only', '--passes', str(read_passes(a, flavor))], False)):
        m = b.measure(srv, _load_argv(b, kdc, flavor, file, *common, *opts), path, writing,
                      logname)
        if m['rc'] != 0 or not m['out']:
            b.unlink(file)
            why = f'gss-load exit {m["rc"]}: {m["err"]}'
            b.failed_row(wrow if not writing else rrow, label + (' read' if writing else ' write'),
                         'the write failed' if writing else 'the read-back failed')
            return b.failed_row(row, label + (' write' if writing else ' read'), why, srv)
        row.update(b.figures(m, writing))
        got.append(m)
    notes = []
    b.stat_note(srv, notes)
    b.stop(srv, notes)
    b.unlink(file)
    for row, m, what in ((wrow, got[0], 'write'), (rrow, got[1], 'read')):
        n = [f'client_cpu={m["client_cpu"]:.2f}s ({a.gss_client_crypto})'] + notes
        if what == 'read':
            n.insert(0, f'passes={read_passes(a, flavor)}; warm, right after the write')
        row.update(verified='yes', note='; '.join(n))
        b.rows.append(row)
        b.progress.finish(f'{label} {what}', f'{row["mib_s"]:.1f} MiB/s')
    return rrow


def total_cases(a, nservers):
    return 1 + len(a.gss_flavors) * nservers * (len(a.gss_syncs) + 2)


def run_gss(b):
    """The whole workload: KDC, yardsticks, then every flavor's cases; b.gss_info for the
    report."""
    a = b.a
    servers = [s for s in b.servers if s.label in a.gss_servers]
    if not servers:
        b.log(f'gss: none of --gss-servers ({", ".join(a.gss_servers)}) runs: nothing to do')
        return
    kdc = Kdc(b.host, b.log, a.gss_enctype)
    kdc.start()
    try:
        b.progress.step('gss-cost: what sealing costs on this CPU, MIT\'s and ours')
        cost = gss_cost(b, kdc, a.gss_cost_seconds)
        cost['openssl'] = openssl_speed(a.gss_enctype)
        b.gss_info = cost
        per = {op: cost['ops'].get(f'{op}/1048576', {}).get('cpu_s_per_gib', 0)
               for op in ('wrap_iov', 'own_wrap_out')}
        b.progress.finish('gss-cost', f"{cost['enctype']}: sealing 1 MiB: MIT's wrap_iov "
                          f"{per['wrap_iov']:.2f} s/GiB, own_wrap_out {per['own_wrap_out']:.2f}")
        for s in servers:
            s.gss = kdc
        for flavor in a.gss_flavors:
            for srv in rotate(servers, b.case_no):
                for sync in a.gss_syncs:
                    interleave_case(b, kdc, srv, flavor, sync)
                seq_cases(b, kdc, srv, flavor)
            b.case_no += 1
            b.settle(f'the {flavor} cases')
    finally:
        for s in servers:
            if s.proc is not None:
                s.stop()
            s.gss = None
        kdc.stop()


def rotate(lst, k):
    k %= max(len(lst), 1)
    return lst[k:] + lst[:k]
