# SPDX-License-Identifier: GPL-2.0-or-later
"""The servers bench/run compares, each started by the bench on the same XFS, inside the run's
private network namespace, in a memory cgroup of its own, and stopped by PID.

  nfsd-uc   one instance per write_mode (direct, dontcache, buffered); read_mode follows it
  ganesha   NFS-Ganesha (Debian's nfs-ganesha + nfs-ganesha-vfs), NFSv3 only, VFS export. It
            will not start without rpcbind: an rpcbind of our own runs beside it in the same
            network namespace and in a private mount namespace whose /run is a tmpfs, so that
            its socket (/run/rpcbind.sock) is neither the host's nor another run's.

Both listen on port 2049 (NFS) and 20048 (MOUNT) of the namespace's 127.0.0.1. With gss set (a
benchgss.Kdc, for the gss workload), each serves its export with sec=krb5:krb5i:krb5p only (nfsd-uc:
[server] keytab and the client rule's sec=; Ganesha: NFS_KRB5 and SecType), its environment
holding the KDC's krb5.conf and keytab (KRB5_CONFIG, KRB5_KTNAME), and its configuration otherwise
the same as for every other workload."""

import glob
import os
import shutil
import subprocess
import time

from benchhost import kill_pidfile, proc_cpu_seconds, run, stop_pid

NFS_PORT = 2049
MOUNT_PORT = 20048

GANESHA_WRAPPER = r'''#!/bin/sh
# Started by bench/run as: ip netns exec NS unshare --mount --propagation private sh THIS DIR
# A private /run, our own rpcbind there, then Ganesha in its place (same PID as this shell).
set -e
mount -t tmpfs -o mode=755 nfsd-uc-bench /run
rpcbind -f -w &
echo $! > "$1/rpcbind.pid"
i=0
while [ ! -S /run/rpcbind.sock ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
exec ganesha.nfsd -F -f "$1/ganesha.conf" -L "$1/ganesha.log" -N NIV_EVENT -p "$1/ganesha.pid"
'''


def _join_cgroup(procs_file):
    """preexec_fn: the child moves itself into the cgroup before it execs, so every byte the
    server allocates or caches is charged there."""
    def join():
        with open(procs_file, 'w') as f:
            f.write(str(os.getpid()))
    return join


class Server:
    server = '?'
    mode = '-'

    def __init__(self, host, log):
        self.host = host
        self.log = log
        self.proc = None
        self.cg = None
        self.dir = None
        self.starts = 0
        self.gss = None         # a benchgss.Kdc while the gss workload runs
    @property
    def label(self):
        return self.server if self.mode == '-' else f'{self.server}/{self.mode}'

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def export_path(self):
        return self.host.export

    def _popen(self, argv, logfile):
        out = open(logfile, 'a')
        env = dict(os.environ, **self.gss.server_env()) if self.gss else None
        try:
            return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True, env=env,
                                    preexec_fn=_join_cgroup(self.host.cgroup.procs_file(self.cg)))
        finally:
            out.close()

    def start(self, mem_limit=None):
        self.cg = self.host.new_cgroup(mem_limit)
        self.starts += 1
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        comm = open(f'/proc/{self.pid}/comm').read().strip()
        if comm != self.comm:
            raise RuntimeError(f'{self.label}: pid {self.pid} is {comm}, not {self.comm}')
        self._settle()

    def _settle(self, quiet=0.3, longest=10.0):
        """Wait until the server has used no CPU for `quiet` seconds (at most `longest`), so
        that the first case is not charged with what the server does once when it starts, as
        long-running servers are (nfsd-uc faults in its reserve of cache frames: 0.01 to 0.3
        CPU seconds here, by how recently the host took that memory back; 0.3 s is 4.7 CPU
        s/GiB over the 65 MiB of a 6000-byte case). Every server gets the same."""
        deadline = time.monotonic() + longest
        last, since = proc_cpu_seconds(self.pid), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.05)
            now = proc_cpu_seconds(self.pid)
            if now is None:
                return
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return

    def stop(self):
        """Stop it; its exit status (None when it had to be killed or was not running)."""
        rc = stop_pid(self.proc, self.label, self.log)
        self.proc = None
        self._after_stop()
        if self.cg:
            self.host.drop_cgroup(self.cg)
            self.cg = None
        return rc

    def _after_stop(self):
        pass

    def log_tail(self, n=15):
        try:
            with open(self.logfile) as f:
                return ''.join(f.readlines()[-n:])
        except OSError:
            return ''

    def death(self):
        """Why the server is gone before we stopped it, or None while it runs."""
        if self.proc is None or self.proc.poll() is None:
            return None
        rc = self.proc.returncode
        why = f'the server died (exit {rc})' if rc >= 0 else f'the server died (signal {-rc})'
        kills = self.host.cgroup.oom_kills(self.cg) if self.cg else None
        if kills:
            why += f': killed by the OOM killer of its cgroup ({kills} kill(s))'
        return why

    def cgroup_peak(self):
        return self.host.cgroup.peak(self.cg) if self.cg else None


class NfsdUc(Server):
    server = 'nfsd-uc'
    comm = 'nfsd-uc'

    def __init__(self, host, log, exe, mode, threads=None, cache=None, rev=None):
        super().__init__(host, log)
        self.exe = exe
        self.mode = mode
        self.threads = threads
        self.cache = cache
        if rev:     # another build of nfsd-uc (bench/run --baseline): its rows say which
            self.server = f'nfsd-uc@{rev}'
        self.dir = os.path.join(host.work, f'{self.server}-{mode}')
        os.makedirs(os.path.join(self.dir, 'state'), exist_ok=True)
        self.conf = os.path.join(self.dir, 'nfsd-uc.conf')
        self.logfile = os.path.join(self.dir, 'daemon.log')
        self._write_conf(cache)

    def _write_conf(self, cache, receive=None):
        lines = ['# written by bench/run', '[server]', 'listen = 127.0.0.1',
                 f'port = {NFS_PORT}', f'mount_port = {MOUNT_PORT}',
                 f"state_dir = {os.path.join(self.dir, 'state')}", 'rpcbind = no']
        if receive:
            lines.append(f'receive_memory = {receive}')
        if self.gss:
            lines.append(f'keytab = {self.gss.server_keytab}')
        if self.threads:
            lines.append(f'threads = {self.threads}')
        if cache:
            lines += ['[cache]', f'size = {cache}']
        lines += [f'[export {self.host.export}]',
                  'clients = 127.0.0.1(rw,no_root_squash,insecure' +
                  (',sec=krb5:krb5i:krb5p)' if self.gss else ')'),
                  f'write_mode = {self.mode}', f'read_mode = {self.mode}']
        with open(self.conf, 'w') as f:
            f.write('\n'.join(lines) + '\n')

    def start(self, mem_limit=None):
        # In a memory-capped cgroup the cache must fit under the cap, as anyone running the
        # daemon as such a service would size it (nfsd-uc.conf says how): [cache] size half of
        # the cap, receive_memory (records and READ replies in flight) an eighth, and the rest
        # for stacks, the allocator's slack and the binary.
        cache = self.cache or (f'{mem_limit // 2 >> 20}M' if mem_limit else None)
        receive = f'{max(mem_limit // 8, 4 << 20) >> 20}M' if mem_limit else None
        self._write_conf(cache, receive)
        super().start(mem_limit)

    def _start(self):
        with open(self.logfile, 'a') as f:
            start = f.tell()
        self.proc = self._popen(self.host.in_netns([self.exe, '-c', self.conf]), self.logfile)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            with open(self.logfile) as f:
                f.seek(start)
                if ' ready' in f.read():
                    return
            if self.proc.poll() is not None:
                raise RuntimeError(f'nfsd-uc exited with status {self.proc.returncode} at start:\n'
                                   + self.log_tail())
            time.sleep(0.05)
        raise RuntimeError('nfsd-uc did not say ready in 15 s:\n' + self.log_tail())


class Ganesha(Server):
    server = 'ganesha'
    comm = 'ganesha.nfsd'

    def __init__(self, host, log):
        super().__init__(host, log)
        self.dir = os.path.join(host.work, 'ganesha')
        os.makedirs(os.path.join(self.dir, 'v4recov'), exist_ok=True)
        self.logfile = os.path.join(self.dir, 'ganesha.log')
        self.wrapper = os.path.join(self.dir, 'start.sh')
        with open(self.wrapper, 'w') as f:
            f.write(GANESHA_WRAPPER)

    @staticmethod
    def missing():
        """Why Ganesha cannot run here, or None."""
        for tool in ('ganesha.nfsd', 'rpcbind', 'unshare'):
            if shutil.which(tool) is None:
                return f'{tool} is not installed (Debian: nfs-ganesha nfs-ganesha-vfs rpcbind)'
        if not glob.glob('/usr/lib/*/ganesha/libfsalvfs.so*') + \
                glob.glob('/usr/lib*/ganesha/libfsalvfs.so*'):
            return 'the VFS FSAL (libfsalvfs.so, Debian: nfs-ganesha-vfs) is not installed'
        return None

    def _write_conf(self):
        """Written at each start: the export is the host's current image's, which changes
        between the images the interleaved cases run on."""
        # No Bind_addr: the namespace has only lo, and glibc's getaddrinfo(AI_ADDRCONFIG)
        # refuses 127.0.0.1 where no other IPv4 address is configured.
        krb5 = 'Active_krb5 = false;'
        sec = 'sys'
        if self.gss:       # the server's key: KeytabPath here, KRB5_KTNAME in its environment
            krb5 = (f'Active_krb5 = true; PrincipalName = "nfs"; '
                    f'KeytabPath = "{self.gss.server_keytab}";')
            sec = 'krb5, krb5i, krb5p'
        with open(os.path.join(self.dir, 'ganesha.conf'), 'w') as f:
            f.write(f'''# written by bench/run: NFSv3 only, one VFS export, defaults otherwise
NFS_CORE_PARAM {{
    Protocols = 3;
    NFS_Port = {NFS_PORT};
    MNT_Port = {MOUNT_PORT};
    Enable_NLM = false;
    Enable_RQUOTA = false;
    Enable_UDP = false;
}}
NFSv4 {{ Graceless = true; RecoveryRoot = "{self.dir}/v4recov"; }}
NFS_KRB5 {{ {krb5} }}
EXPORT {{
    Export_Id = 1;
    Path = {self.host.export};
    Pseudo = /export;
    Protocols = 3;
    Transports = TCP;
    Access_Type = RW;
    Squash = No_Root_Squash;
    SecType = {sec};
    FSAL {{ Name = VFS; }}
}}
LOG {{ Default_Log_Level = EVENT; }}
''')

    def _listening(self):
        r = run(self.host.in_netns(['ss', '-Hltn']), check=False)
        ports = {line.split()[3].rsplit(':', 1)[-1] for line in r.stdout.splitlines()
                 if len(line.split()) > 3}
        return str(NFS_PORT) in ports and str(MOUNT_PORT) in ports

    def _start(self):
        self._write_conf()
        with open(self.logfile, 'a') as f:
            start = f.tell()
        argv = self.host.in_netns(['unshare', '--mount', '--propagation', 'private',
                                   'sh', self.wrapper, self.dir])
        self.proc = self._popen(argv, os.path.join(self.dir, 'stdout.log'))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with open(self.logfile, 'a+') as f:
                f.seek(start)
                ready = 'NFS SERVER INITIALIZED' in f.read()
            if ready and self._listening():
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f'ganesha exited with status {self.proc.returncode} at start:\n'
                                   + self.log_tail())
            time.sleep(0.1)
        raise RuntimeError('ganesha did not start in 30 s:\n' + self.log_tail())

    def _after_stop(self):
        kill_pidfile(os.path.join(self.dir, 'rpcbind.pid'), self.log)
        try:
            os.unlink(os.path.join(self.dir, 'rpcbind.pid'))
        except OSError:
            pass
