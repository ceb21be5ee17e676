# SPDX-License-Identifier: GPL-2.0-or-later
"""The ds workload's part of the report (issue 38): its table, and a model of a 16-DS flexfiles
cluster at 100 Gb/s per DS built from the rows of this run. bench/lib/benchds.py measures."""

NIC_GBIT = 100              # per DS
CLUSTER_DS = 16
GIB = 1 << 30
PHASES = ('ds-write', 'ds-read', 'ds-holes')


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _fmt(v, digits=2):
    x = _num(v)
    return '-' if x is None else f'{x:.{digits}f}'


def _label(r):
    return r['server'] if r['mode'] in ('-', '') else f"{r['server']}/{r['mode']}"


def _note(r, key):
    for word in (r.get('note') or '').split('; '):
        k, _, v = word.partition('=')
        if k == key:
            return v
    return None


def nic_gib_s():
    """What one DS's NIC carries, in GiB/s of payload (RPC and TCP headers left out: under 1%
    at 1 MiB per call)."""
    return NIC_GBIT * 1e9 / 8 / GIB


def ds_table(rows):
    rs = [r for r in rows if r['workload'] in PHASES]
    rs.sort(key=lambda r: PHASES.index(r['workload']))
    lines = [[r['workload'], _label(r), _fmt(r['mib_s'], 1), _fmt(r['cpu_s_per_gib']),
              _fmt(r.get('machine_cpu_s_per_gib')), _fmt(r.get('write_amp'), 3),
              _fmt(r.get('pagecache_pct')), _note(r, 'loop_read_mib') or '-',
              _fmt(r['peak_rss_mib'], 0), r['verified']] for r in rs]
    head = ['phase', 'server', 'MiB/s', 'server CPU s/GiB', 'machine CPU s/GiB', 'write amp',
            'page cache %', 'device read MiB', 'peak RSS MiB', 'verified']
    out = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    out += ['| ' + ' | '.join(str(x) for x in line) + ' |' for line in lines]
    return '\n'.join(out)


def _cores(r, key):
    """CPUs one DS needs to carry its NIC's worth of this phase, at this row's CPU per GiB."""
    c = _num(r.get(key)) if r else None
    return None if c is None else c * nic_gib_s()


def model_table(rows, servers):
    """Per server and phase: what one DS needs at 100 Gb/s, and the 16-DS cluster."""
    by = {(_label(r), r['workload']): r for r in rows if r['workload'] in PHASES and
          r.get('verified') == 'yes'}
    lines = []
    for srv in servers:
        for ph in PHASES[:2]:
            r = by.get((srv, ph))
            if r is None:
                continue
            own, machine = _cores(r, 'cpu_s_per_gib'), _cores(r, 'machine_cpu_s_per_gib')
            lines.append([ph, srv, _fmt(r['mib_s'], 0), _fmt(own, 1), _fmt(machine, 1),
                          _fmt(None if machine is None else machine * CLUSTER_DS, 0),
                          _fmt(_num(r['peak_rss_mib']), 0)])
    head = ['phase', 'server', 'MiB/s here (one DS, this disk)',
            f'server CPUs per DS at {NIC_GBIT} Gb/s', f'machine CPUs per DS at {NIC_GBIT} Gb/s',
            f'machine CPUs, {CLUSTER_DS} DSs', 'peak RSS MiB here']
    out = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    out += ['| ' + ' | '.join(str(x) for x in line) + ' |' for line in lines]
    return '\n'.join(out)


def _servers(rows):
    seen = []
    for r in rows:
        if r['workload'] in PHASES and _label(r) not in seen:
            seen.append(_label(r))
    return seen


def _holes_line(rows):
    """What READs of holes cost, per server: device reads and CPU per GiB of holes."""
    parts = []
    for r in rows:
        if r['workload'] != 'ds-holes' or r.get('verified') != 'yes':
            continue
        parts.append(f"{_label(r)} {_fmt(r['mib_s'], 0)} MiB/s, "
                     f"{_note(r, 'loop_read_mib') or '?'} MiB read from the device, "
                     f"{_fmt(r['cpu_s_per_gib'])} server CPU s/GiB")
    return '; '.join(parts)


def ds_section(rows, a):
    """The section's lines, or [] when the ds workload did not run."""
    if not any(r['workload'] in PHASES for r in rows):
        return []
    w, q, u, st = (getattr(a, k, '?') for k in ('ds_writers', 'ds_qd', 'ds_units', 'ds_stride'))
    nic = nic_gib_s()
    L = ['## A pNFS flexfiles data server (ds)\n',
         f'{w} clients, each with its own connection, file and uid (AUTH_SYS, as a layout gives '
         'it): an MDS connection as root creates the files and SETATTRs each to its client, mode '
         f'0640. Each client keeps {q} 1 MiB stripe units in flight; its file is striped sparse '
         f'over {st} DSs, so this DS gets every {st}th MiB of it, at the client\'s offsets, with '
         f'holes between. ds-write: {u} units per client, UNSTABLE, then a COMMIT per file; '
         'ds-read: the units read back after dropping caches, each checked; ds-holes: as many '
         'bytes of the holes, after dropping caches, each checked to be zeros. Each phase on a '
         'fresh server process; `device read MiB` is the loop device\'s reads over the phase.\n',
         ds_table(rows), '',
         f'### Model: {CLUSTER_DS} DSs at {NIC_GBIT} Gb/s each\n',
         f'A {NIC_GBIT} Gb/s NIC carries {nic:.2f} GiB/s of payload; the cluster, '
         f'{CLUSTER_DS * nic:.0f} GiB/s, each client\'s file spread over the {CLUSTER_DS} DSs as '
         f'above so that each DS takes 1/{CLUSTER_DS} of every stream. A DS keeps up with its '
         'NIC when it has the CPUs for it (CPU seconds per GiB measured here, times '
         f'{nic:.2f} GiB/s), the disks for it, and the memory bandwidth for the copies its '
         'server makes. Machine CPU counts the kernel\'s work for the server (the page cache\'s '
         'write-back threads, XFS, the block layer) and is the figure to size a DS by; server '
         'CPU is the server process alone.\n',
         model_table(rows, _servers(rows)), '',
         'Where the limits are, per DS, read off the rows above: **CPU**, the CPUs in the '
         'table (a DS with fewer runs at its CPUs\' share of the NIC); **disk**, '
         f'{NIC_GBIT * 1e9 / 8 / 1e9:.1f} GB/s of writes takes several NVMe drives (one writes '
         '2-7 GB/s), and nfsd-uc writes each stripe unit once with O_DIRECT, no read-back and no '
         'page cache, so write amplification stays at the table\'s figure; **memory**, '
         'nfsd-uc copies each byte once, from the socket into the buffer its O_DIRECT write '
         'or its cache uses, where a page-cache server copies it into the page cache as well; '
         '**network**, the NIC itself once the CPUs and disks are there. Holes: '
         + (_holes_line(rows) or 'not measured') + ' (the holes are the other DSs\' share of '
         'each sparse file, read by a client that reads past its own units; a hole should '
         'cost no device read and no cache memory).\n']
    return L
