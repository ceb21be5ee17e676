# SPDX-License-Identifier: GPL-2.0-or-later
"""The machine side of bench/run: the images (a preconditioned and a sparse one, each a loop
device with its XFS), the private network namespace, the memory cgroups, the raw device's own
bandwidth, and the counters sampled around each case (the whole machine's CPU among them).

Everything made here is recorded in the Host object and undone by Host.cleanup(), which is safe
to call at any point (and twice). Only processes this module started are signalled, by PID."""

import bisect
import ctypes
import fcntl
import json
import os
import re
import signal
import struct
import subprocess
import tempfile
import time

SECTOR = 512            # /sys/block/*/stat counts 512-byte sectors whatever the device's own size
PAGE = 4096


def run(argv, check=True, capture=True, timeout=None, **kw):
    """subprocess.run with text output; raises with the command's stderr on failure."""
    r = subprocess.run(argv, text=True, capture_output=capture, timeout=timeout, **kw)
    if check and r.returncode != 0:
        err = (r.stderr or '').strip() if capture else ''
        raise RuntimeError(f"{' '.join(argv)}: exit {r.returncode}{': ' + err if err else ''}")
    return r


def read_int(path, default=None):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return default


def fio_sequential(path, size, rw, extra=()):
    """fio, O_DIRECT, 1 MiB sequential, iodepth 16 on path: MiB/s, seconds and bytes moved.
    rw: write | read; extra: more fio options."""
    r = run(['fio', '--name=raw', '--filename=' + path, '--rw=' + rw, '--bs=1M',
             '--size=' + str(size), '--direct=1', '--ioengine=libaio', '--iodepth=16',
             '--output-format=json', *extra])
    job = json.loads(r.stdout[r.stdout.index('{'):])['jobs'][0][rw]
    return job['bw_bytes'] / 1048576.0, job['runtime'] / 1000.0, job['io_bytes']


def fio_file_write(path, size, depth):
    """fio writing a new file on our XFS as nfs-workload's seqwrite writes one through a server:
    O_DIRECT, 1 MiB blocks in ascending order, depth writes in flight (the client's connections
    x RPCs in flight each: one job keeps the order the client keeps, where several jobs would
    each write a run of their own), no preallocation (fio would fallocate the file first,
    which a server's writes do not get), and an fsync at the end, in the time: the server's
    figure ends with a COMMIT, which makes the file's data and its size and extents durable, and
    a yardstick that left them in the disk's and XFS's log's caches would time less work (on
    this machine's virtual disk that flush took a sixth to a half of fio's time). MiB/s,
    seconds, bytes."""
    return fio_sequential(path, size, 'write',
                          ['--iodepth=' + str(depth), '--fallocate=none', '--end_fsync=1'])


def machine_busy_seconds():
    """CPU seconds every CPU of the machine spent working since boot: /proc/stat's user, nice,
    system, irq and softirq. Not idle or iowait (nothing ran), not steal (the hypervisor ran
    another guest: no work of this machine), not guest and guest_nice (already inside user and
    nice). The kernel's writeback threads, io_uring's workers and every other process on the
    machine are in it: a server's whole cost, and a shared machine's noise."""
    with open('/proc/stat') as f:
        v = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq = v[:7]
    return (user + nice + system + irq + softirq) / os.sysconf('SC_CLK_TCK')


def fio_write_series(path, size):
    """fio_sequential's write of size bytes to a new file, as the MiB/s of each second:
    [(t, MiB/s, 0)], the shape of a sustained client's series."""
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, 'w')
        fio_sequential(path, size, 'write', ['--write_bw_log=' + log, '--log_avg_msec=1000'])
        with open(log + '_bw.1.log') as f:      # msec, KiB/s, ...
            rows = [line.split(',') for line in f if line.strip()]
    return [(int(r[0]) / 1000.0, int(r[1]) / 1024.0, 0) for r in rows]


def meminfo(key):
    """A /proc/meminfo value in bytes."""
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith(key + ':'):
                return int(line.split()[1]) * 1024
    return 0


def proc_io_read_bytes(pid):
    try:
        with open(f'/proc/{pid}/io') as f:
            for line in f:
                if line.startswith('read_bytes:'):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def proc_cpu_seconds(pid):
    """utime + stime of the whole process (every thread, io_uring's io-wq workers included)."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            fields = f.read().rsplit(')', 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')
    except (OSError, IndexError, ValueError):
        return None


def proc_ctx_switches(pid):
    """Voluntary + involuntary context switches of every thread of the process now (io_uring's
    io-wq workers included; a thread that exited meanwhile takes its count with it)."""
    total = 0
    try:
        tids = os.listdir(f'/proc/{pid}/task')
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f'/proc/{pid}/task/{tid}/status') as f:
                for line in f:
                    if line.startswith(('voluntary_ctxt_switches:', 'nonvoluntary_ctxt_switches:')):
                        total += int(line.split()[1])
        except (OSError, ValueError):
            continue
    return total


def proc_status_kib(pid, key):
    try:
        with open(f'/proc/{pid}/status') as f:
            for line in f:
                if line.startswith(key + ':'):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


_SYS_CACHESTAT = 451      # x86_64 and the generic table alike (Linux 6.5)
_libc = None


def _cachestat_pages(path):
    """Pages of the file in the page cache by cachestat(2), or None where there is none.
    fincore maps the file and asks mincore about every page of it: 0.36 s of system time for an
    empty 24 GiB file, so sampled every second it took a fifth of this machine's two CPUs by the
    end of the sustained run and slowed every server more as its file grew. cachestat walks
    only the pages that are there."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    rng = (ctypes.c_uint64 * 2)(0, 0)          # off, len (0: to the end of the file)
    st = (ctypes.c_uint64 * 5)()               # nr_cache, nr_dirty, nr_writeback, ...
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return 0
    try:
        if _libc.syscall(_SYS_CACHESTAT, fd, rng, st, 0) != 0:
            return None
        return st[0]
    finally:
        os.close(fd)


def fincore_bytes(path):
    """Bytes of the file resident in the page cache (0 when the file is not there)."""
    if not os.path.exists(path):
        return 0
    pages = _cachestat_pages(path)
    if pages is not None:
        return pages * PAGE
    r = run(['fincore', '--bytes', '--noheadings', '--output', 'RES', path], check=False)
    try:
        return int(r.stdout.split()[0])
    except (IndexError, ValueError):
        return 0


class WriteSizes:
    """The size of every write request the block layer issues to one device, from the kernel's
    block_rq_issue trace event in a tracing instance of our own (nobody else's tracing is
    touched). /sys/block/*/stat only gives the average, which a few small journal writes pull
    down; the median is the figure that says what size the device is mostly given.
    Read requests are kept too (self.reads, [(first byte, length)] after stop()): which of them
    fell in a file's own blocks (file_bytes_read) tells a read-back of its data from the file
    system's metadata, which a cold cache reads once whatever the server."""

    ROOT = '/sys/kernel/tracing'

    def __init__(self, dev_path, tag):
        st = os.stat(dev_path)
        self.dev = (os.major(st.st_rdev) << 20) | os.minor(st.st_rdev)  # the kernel's dev_t
        self.dir = os.path.join(self.ROOT, 'instances', tag)
        self.event = os.path.join(self.dir, 'events', 'block', 'block_rq_issue')
        self.on = False
        self.reads = None
        # tracefs mounted here where nobody had (a fresh machine: without it the run had no
        # median), once, and unmounted again by close()
        self.mounted = (not os.path.isdir(os.path.join(self.ROOT, 'events')) and
                        os.path.isdir(self.ROOT) and
                        run(['mount', '-t', 'tracefs', 'nodev', self.ROOT],
                            check=False).returncode == 0)

    def available(self):
        return os.path.isdir(os.path.join(self.ROOT, 'events', 'block', 'block_rq_issue'))

    def close(self):
        self.stop()
        if self.mounted:
            run(['umount', self.ROOT], check=False)
            self.mounted = False

    def _put(self, name, value, base=None):
        with open(os.path.join(base or self.event, name), 'w') as f:
            f.write(value)

    def start(self):
        """Begin recording (a fresh instance: an empty buffer). False when tracing is missing."""
        if not self.available():
            return False
        self.stop()
        try:
            os.mkdir(self.dir)
            self._put('buffer_size_kb', '16384', self.dir)
            self._put('filter', f'dev == {self.dev} && (rwbs ~ "*W*" || rwbs ~ "*R*")')
            self._put('enable', '1')
        except OSError:         # tracefs read-only, or the event without filters: no median
            self.stop()
            return False
        self.on = True
        return True

    def stop(self):
        """The request sizes in bytes since start() (None: not recorded, or events were lost),
        and the instance removed."""
        if not os.path.isdir(self.dir):
            return None
        sizes = None
        self.reads = None
        if self.on:
            self._put('enable', '0')
            lost = 0
            for cpu in os.listdir(os.path.join(self.dir, 'per_cpu')):
                with open(os.path.join(self.dir, 'per_cpu', cpu, 'stats')) as f:
                    for line in f:
                        if line.startswith('overrun:'):
                            lost += int(line.split()[1])
            sizes, reads = [], []
            with open(os.path.join(self.dir, 'trace')) as f:
                for line in f:
                    m = None if line.startswith('#') else re.search(
                        r'block_rq_issue: \d+,\d+ (\S+) .* (\d+) \+ (\d+) ', line)
                    if m and 'W' in m.group(1):
                        sizes.append(int(m.group(3)) * SECTOR)
                    elif m and 'R' in m.group(1):
                        reads.append((int(m.group(2)) * SECTOR, int(m.group(3)) * SECTOR))
            sizes = None if lost else sizes
            self.reads = None if lost else reads
        self.on = False
        os.rmdir(self.dir)
        return sizes


FS_IOC_FIEMAP = 0xC020660B
FIEMAP_FLAG_SYNC = 1
FIEMAP_EXTENT_LAST = 1


def file_extents(path):
    """Where a file's blocks are on its device: [(first byte, length)] from FIEMAP (synced
    first), or None where the file system cannot say."""
    head, ext, batch = struct.Struct('=QQIIII'), struct.Struct('=QQQQQIIII'), 256
    out, start = [], 0
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        while True:
            buf = bytearray(head.size + batch * ext.size)
            head.pack_into(buf, 0, start, (1 << 64) - 1 - start, FIEMAP_FLAG_SYNC, 0, batch, 0)
            fcntl.ioctl(fd, FS_IOC_FIEMAP, buf)
            n = head.unpack_from(buf, 0)[3]
            last = None
            for i in range(n):
                logical, phys, length, _, _, flags, _, _, _ = ext.unpack_from(
                    buf, head.size + i * ext.size)
                out.append((phys, length))
                last = (logical + length, flags)
            if n == 0 or last[1] & FIEMAP_EXTENT_LAST:
                return out
            start = last[0]
    except OSError:
        return None
    finally:
        os.close(fd)


def file_bytes_read(reads, extents):
    """How many bytes of the read requests `reads` lay in `extents` (both [(first byte,
    length)] on one device)."""
    ext = sorted(extents)
    starts = [e0 for e0, _ in ext]
    total = 0
    for r0, rlen in reads:
        r1 = r0 + rlen
        # from the last extent that starts at or before the read (extents do not overlap)
        i = max(bisect.bisect_right(starts, r0) - 1, 0)
        while i < len(ext) and ext[i][0] < r1:
            e0, elen = ext[i]
            total += max(0, min(r1, e0 + elen) - max(r0, e0))
            i += 1
    return total


def median(values):
    v = sorted(values)
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


class Cgroup:
    """One memory cgroup per server run. cgroup v2 where the memory controller is there
    (memory.max), else the v1 memory hierarchy (memory.limit_in_bytes) under this process's own
    group. Which one is used is said in the report."""

    def __init__(self, tag):
        self.tag = tag
        self.version, self.parent = self._find()
        self.serial = 0

    @staticmethod
    def _find():
        try:
            with open('/sys/fs/cgroup/cgroup.controllers') as f:
                if 'memory' in f.read().split():
                    sub = '/sys/fs/cgroup/cgroup.subtree_control'
                    with open(sub) as g:
                        if 'memory' not in g.read().split():
                            with open(sub, 'w') as h:
                                h.write('+memory')
                    return 2, '/sys/fs/cgroup'
        except OSError:
            pass
        own = ''
        with open('/proc/self/cgroup') as f:
            for line in f:
                _, ctrls, path = line.rstrip('\n').split(':', 2)
                if 'memory' in ctrls.split(','):
                    own = path
        base = '/sys/fs/cgroup/memory' + own
        if os.path.isfile(os.path.join(base, 'memory.limit_in_bytes')):
            return 1, base
        return 0, None

    def describe(self):
        if self.version == 2:
            return 'cgroup v2 (memory.max)'
        if self.version == 1:
            return 'cgroup v1 memory controller, memory.limit_in_bytes: this kernel has no ' \
                   'cgroup v2 memory controller'
        return 'no memory cgroup available'

    def make(self, limit):
        """A fresh child group (limit in bytes, or None): its directory."""
        if self.version == 0:
            raise RuntimeError('no memory cgroup controller on this machine')
        self.serial += 1
        path = os.path.join(self.parent, f'{self.tag}.{self.serial}')
        os.mkdir(path)
        if limit:
            if self.version == 2:
                self._write(path, 'memory.max', str(limit))
                if os.path.exists(os.path.join(path, 'memory.swap.max')):
                    self._write(path, 'memory.swap.max', '0')
            else:
                self._write(path, 'memory.limit_in_bytes', str(limit))
                if os.path.exists(os.path.join(path, 'memory.memsw.limit_in_bytes')):
                    self._write(path, 'memory.memsw.limit_in_bytes', str(limit))
            got = self.limit(path)
            if got is None or abs(got - limit) > PAGE:
                raise RuntimeError(f'{path}: memory limit {limit} did not hold (reads {got})')
        return path

    @staticmethod
    def _write(path, name, value):
        with open(os.path.join(path, name), 'w') as f:
            f.write(value)

    def limit(self, path):
        name = 'memory.max' if self.version == 2 else 'memory.limit_in_bytes'
        try:
            with open(os.path.join(path, name)) as f:
                v = f.read().strip()
        except OSError:
            return None
        return None if v == 'max' else int(v)

    def procs_file(self, path):
        return os.path.join(path, 'cgroup.procs')

    def peak(self, path):
        name = 'memory.peak' if self.version == 2 else 'memory.max_usage_in_bytes'
        return read_int(os.path.join(path, name))

    def page_cache(self, path):
        """The page cache charged to the group (bytes)."""
        key = 'file' if self.version == 2 else 'cache'
        try:
            with open(os.path.join(path, 'memory.stat')) as f:
                for line in f:
                    k, v = line.split()
                    if k == key:
                        return int(v)
        except OSError:
            pass
        return None

    def oom_kills(self, path):
        """Processes the group's OOM killer killed (None when the kernel does not say)."""
        name = 'memory.events' if self.version == 2 else 'memory.oom_control'
        try:
            with open(os.path.join(path, name)) as f:
                for line in f:
                    k, v = line.split()
                    if k == 'oom_kill':
                        return int(v)
        except (OSError, ValueError):
            pass
        return None

    def remove(self, path):
        for _ in range(50):
            try:
                os.rmdir(path)
                return
            except OSError:
                time.sleep(0.1)


class Image:
    """One image file, its loop device and the XFS on it. The fields are filled in as each piece
    is made, so that Host.cleanup() undoes exactly what exists even after a failure half-way."""

    def __init__(self, name, path):
        self.name = name
        self.path = path
        self.loop = None
        self.mnt = None
        self.export = None
        self.write_sizes = None
        self.block = None
        self.sector = None


class Host:
    """The images (loop devices and XFS), network namespace and cgroups of one bench run. One
    image is the current one (use()): loop, mnt, export and write_sizes are its, so that the
    servers and the counters follow the image the cases run on."""

    def __init__(self, image_size, log):
        self.image_size = image_size
        self.log = log
        self.work = None
        self.images = {}            # name -> Image, in the order they were made
        self.cur = None
        self.netns = None
        self.cgroup = None
        self.cgroups_made = []

    # the current image's parts
    loop = property(lambda self: self.cur.loop if self.cur else None)
    mnt = property(lambda self: self.cur.mnt if self.cur else None)
    export = property(lambda self: self.cur.export if self.cur else None)
    write_sizes = property(lambda self: self.cur.write_sizes if self.cur else None)

    def use(self, name):
        """Make the named image the current one (the servers pick up its export at their next
        start: no server may be running)."""
        self.cur = self.images[name]

    # ---- set-up

    def _workdir(self):
        if self.work is None:
            self.work = tempfile.mkdtemp(prefix='nfsd-uc-bench.', dir='/var/tmp')
        return self.work

    def _new_image(self, name):
        """A sparse file of image_size in the run's directory with a loop device on it (4096-byte
        sectors, direct I/O: no second copy of the data in the host's page cache); current."""
        img = Image(name, os.path.join(self._workdir(), f'{name}.img'))
        self.images[name] = img
        with open(img.path, 'w') as f:
            f.truncate(self.image_size)
        r = run(['losetup', '--direct-io=on', '--sector-size', '4096', '-f', '--show', img.path])
        img.loop = r.stdout.strip()
        img.write_sizes = WriteSizes(img.loop, f'nfsducbench{os.getpid()}{name}')
        self.cur = img
        return img

    def make_device(self):
        """The preconditioned image: written once end to end before anything is measured, as an
        SSD is before a benchmark. A sparse image is not one disk: the host allocates at the
        first write to each region, so a file XFS placed where an earlier case had written went
        faster than one in new space. 24 GiB of the sustained workload on this machine, last 10
        s over first 10 s: 1.06 and 1.09 through a written image, no second under 280 MiB/s;
        0.77 and 0.94 through a sparse one, 0.86 through one fallocate()d, with stalls of whole
        seconds at under 20 MiB/s. Current once made; make_fs() puts XFS on it after the raw
        device's rows."""
        img = self._new_image('preconditioned')
        mibs, secs, _ = fio_sequential(img.loop, self.image_size, 'write')
        self.log(f'loop device {img.loop} on {img.path} ({self.image_size >> 30} GiB), written '
                 f'once end to end: {secs:.0f} s at {mibs:.0f} MiB/s')

    def make_sparse(self):
        """The sparse image, as a new user's disk image or a thin-provisioned volume is: never
        written, so every first write to a region is an allocation in the host's file system
        (what issue 33's other load generator ran on). Its own loop device and a fresh XFS;
        current once made."""
        img = self._new_image('sparse')
        self.log(f'loop device {img.loop} on {img.path} ({self.image_size >> 30} GiB), sparse')
        return self.make_fs()

    def loop_name(self):
        return os.path.basename(self.loop)

    def raw_bandwidth(self, size, rw):
        """fio, O_DIRECT, 1 MiB sequential, on the bare loop device (before mkfs): MiB/s and
        seconds. rw: write | read."""
        return fio_sequential(self.loop, size, rw)

    def file_read_bandwidth(self, path):
        """fio's O_DIRECT 1 MiB sequential read of one file on our XFS, as raw_bandwidth reads
        the device: the disk's read bandwidth at this moment, for a server's read beside it."""
        return fio_sequential(path, os.path.getsize(path), 'read', ['--readonly'])[0]

    def make_fs(self):
        """XFS on the current image's loop device, mounted in the run's directory: its block and
        sector sizes."""
        img = self.cur
        # -K: no discard, which would punch the preconditioned image's holes again.
        run(['mkfs.xfs', '-q', '-f', '-K', img.loop])
        mnt = os.path.join(self.work, f'mnt-{img.name}')
        os.mkdir(mnt)
        run(['mount', '-t', 'xfs', img.loop, mnt])
        img.mnt = mnt
        img.export = os.path.join(mnt, 'export')
        os.mkdir(img.export)
        os.chmod(img.export, 0o777)
        img.block = os.statvfs(mnt).f_bsize
        img.sector = read_int(f'/sys/block/{self.loop_name()}/queue/logical_block_size')
        self.log(f'XFS on {img.loop} ({img.name}): {img.block}-byte blocks, {img.sector}-byte '
                 'sectors')
        return img.block, img.sector

    def make_netns(self):
        """A private network namespace with only lo: the servers listen on 127.0.0.1 there
        (fixed ports, nobody else's), Ganesha's rpcbind stays private, and the load generators
        join it with `ip netns exec`."""
        name = f'nfsducb{os.getpid()}'
        run(['ip', 'netns', 'add', name])
        self.netns = name
        run(['ip', 'netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up'])

    def make_cgroups(self):
        self.cgroup = Cgroup(f'nfsd-uc-bench.{os.getpid()}')
        return self.cgroup.describe()

    def new_cgroup(self, limit=None):
        path = self.cgroup.make(limit)
        self.cgroups_made.append(path)
        return path

    def drop_cgroup(self, path):
        if path in self.cgroups_made:
            self.cgroup.remove(path)
            self.cgroups_made.remove(path)

    # ---- during the run

    def in_netns(self, argv):
        return ['ip', 'netns', 'exec', self.netns] + list(argv)

    def syncfs(self):
        run(['sync', '-f', self.mnt])

    def drop_caches(self):
        """Write our file system's dirty data, then drop the host's clean caches (every file
        system's: there is no per-file-system knob)."""
        self.syncfs()
        with open('/proc/sys/vm/drop_caches', 'w') as f:
            f.write('3')

    def loop_stat(self):
        """(sectors read, sectors written, writes completed) of the loop device, sectors of
        512 bytes."""
        with open(f'/sys/block/{self.loop_name()}/stat') as f:
            v = f.read().split()
        return int(v[2]), int(v[6]), int(v[4])

    @staticmethod
    def allocated(path):
        """Bytes of the host's disk a (sparse) file takes."""
        return os.stat(path).st_blocks * SECTOR

    @staticmethod
    def var_tmp_free():
        st = os.statvfs('/var/tmp')
        return st.f_bavail * st.f_frsize

    def free_bytes(self):
        st = os.statvfs(self.mnt)
        return st.f_bavail * st.f_frsize

    # ---- tear-down

    def cleanup(self):
        """Undo everything set up, in reverse: tracing instances (the last image's first: the
        first one may have mounted tracefs), cgroups, the namespace, then each image's mount and
        loop device, then the run's directory with the image files in it. Safe to call twice,
        and after a set-up that failed half-way."""
        imgs = list(self.images.values())[::-1]
        for img in imgs:
            if img.write_sizes:
                img.write_sizes.close()
                img.write_sizes = None
        for path in list(self.cgroups_made):
            self.drop_cgroup(path)
        if self.netns:
            run(['ip', 'netns', 'delete', self.netns], check=False)
            self.netns = None
        mounted = [img for img in imgs if not self._unmake(img)]
        for img in imgs:
            if img.name == 'sparse' and os.path.exists(img.path):
                self.log(f'the sparse image held {self.allocated(img.path) / (1 << 30):.2f} GiB '
                         'of the host\'s disk at the end')
        if self.work and mounted:       # rm -rf would go through the mount into its files
            self.log(f'{self.work} left in place: {mounted[0].mnt} is still mounted')
        elif self.work:
            run(['rm', '-rf', self.work], check=False)
            self.work = None

    def _unmake(self, img):
        """Unmount the image's XFS and detach its loop device: False when it stayed mounted."""
        if img.mnt and os.path.ismount(img.mnt):
            for _ in range(20):
                if run(['umount', img.mnt], check=False).returncode == 0:
                    break
                time.sleep(0.5)
            else:
                self.log(f'{img.mnt} would not unmount: left mounted')
                return False
        if img.loop:
            r = run(['losetup', '-d', img.loop], check=False)
            if r.returncode != 0:
                self.log(f'losetup -d {img.loop}: {r.stderr.strip()}')
            img.loop = None
        return True


def stop_pid(proc, name, log, timeout=20):
    """SIGTERM one process we started (a Popen), SIGKILL it after timeout seconds: its exit
    status, or None when it had to be killed."""
    if proc is None or proc.poll() is not None:
        return None if proc is None else proc.returncode
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        log(f'{name} (pid {proc.pid}) ignored SIGTERM for {timeout} s: killed')
        proc.kill()
        proc.wait()
        return None


def kill_pidfile(path, log, timeout=10):
    """SIGTERM the process whose PID a pid file we had written holds, and wait for it."""
    try:
        with open(path) as f:
            pid = int(f.read().strip())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(timeout * 10):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    log(f'pid {pid} ({path}) ignored SIGTERM: killed')
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def machine_description():
    """nproc, memory, kernel, CPU model, the disk under /var/tmp."""
    cpu = ''
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('model name'):
                cpu = line.split(':', 1)[1].strip()
                break
    src = run(['findmnt', '-no', 'SOURCE,FSTYPE', '-T', '/var/tmp'], check=False).stdout.split()
    disk = ' '.join(src) if src else '?'
    if src:
        dev = re.sub(r'^/dev/', '', src[0])
        base = re.sub(r'p?\d+$', '', dev) if not os.path.exists(f'/sys/block/{dev}') else dev
        rota = read_int(f'/sys/block/{base}/queue/rotational')
        model = ''
        try:
            with open(f'/sys/block/{base}/device/model') as f:
                model = f.read().strip()
        except OSError:
            pass
        disk += f" ({model + ', ' if model else ''}{'rotational' if rota else 'non-rotational'}" \
                f" as the kernel reports it)"
    return {
        'nproc': os.cpu_count(),
        'mem_gib': meminfo('MemTotal') / 2**30,
        'kernel': os.uname().release,
        'cpu': cpu,
        'disk': disk,
    }
