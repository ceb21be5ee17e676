# SPDX-License-Identifier: GPL-2.0-or-later
"""bench/run's report: the CSV, the goals, the Markdown page and the gnuplot plots.

Layout of a results directory (the same as docs/, so that the page's links work in both):
  benchmarks.md   the page
  bench/results.csv, bench/sustained.csv, bench/runtimes.csv, bench/*.png"""

import csv
import math
import os
import re
import shutil
import subprocess

import benchdsreport

COLUMNS = ['server', 'mode', 'workload', 'record', 'sync', 'file', 'writers', 'qd', 'bytes',
           'seconds', 'mib_s', 'writes', 'dev_reads', 'dev_reads_per_write',
           'loop_reads_per_write', 'write_amp', 'pagecache_pct', 'cached_pct', 'cpu_s_per_gib',
           'peak_rss_mib', 'verified', 'note', 'ctxsw_per_write', 'dev_write_kib',
           'dev_write_med_kib', 'image', 'machine_cpu_s_per_gib', 'sec', 'file_reads_per_write']
DIGITS = {'ctxsw_per_write': 2, 'dev_write_kib': 0, 'dev_write_med_kib': 0, 'seconds': 3,
          'mib_s': 1, 'dev_reads': 0, 'dev_reads_per_write': 6, 'loop_reads_per_write': 6,
          'write_amp': 4, 'pagecache_pct': 3, 'cached_pct': 2, 'cpu_s_per_gib': 3,
          'peak_rss_mib': 1, 'machine_cpu_s_per_gib': 3, 'file_reads_per_write': 6}
IL_RECORDS = (47008, 6000)          # the goals' interleaved record sizes
GOAL_READS = 0.0005
GOAL_PAGECACHE = 1.0
GOAL_AMP = 1.01
GOAL_SPEEDUP = 1.5
GOAL_RAW = 0.8
GOAL_CPU = 0.5
GOAL_CTXSW = 2.0
GOAL_WRITE_KIB = 512
GOAL_READBACK = 1.0
GOAL_COLD_READ = 0.9        # of fio's O_DIRECT read of the same file, beside the case
GOAL_RANDREAD = 1.0         # of Ganesha's, cold
GOAL_FLAT = 0.9             # sustained: last window over first
GOAL_SUSTAINED = 1.5        # sustained: last window against Ganesha's
GOAL_MACHINE_CPU = 1.0      # whole-machine CPU per GiB, client excluded: below Ganesha's
GOAL_NO_TRAP = 0.95         # the default mode against the best of nfsd-uc's modes, each case
PEER_MOVE = 1.5             # a peer's figure moving more than this between shapes or images
UC_MODES = ('cached', 'direct', 'dontcache', 'buffered')
IMAGE_ORDER = ('preconditioned', 'sparse', 'guest')
# Why a peer's figures move between shapes and images (the "Peers between shapes" section).
PEER_MOVES_NOTE = (
    'Why they move. (1) Memory that is new to the server. This machine is a virtual one whose '
    'host takes back the memory the guest frees within seconds, and the first touch of such '
    'memory is slow: 512 MiB written into the page cache took 0.65-0.82 s after the bench had '
    'dropped the caches and waited, 0.05 s right after another process had freed that much '
    '(dd to a file on this XFS). Ganesha writes every byte into the kernel\'s page cache, so '
    'its MiB/s and CPU per GiB follow how much memory the case before it freed and how long '
    'ago: a peer\'s figure on one shape is one sample of that, and its ratio against nfsd-uc '
    'moves with it (nfsd-uc reuses its own memory: written data is held to a share of the cache '
    'and its frames written again). (2) The image: on a sparse one the host allocates the '
    'space at the first write to each region, so every write-back, the peers\' and ours, '
    'costs more there than on an image written end to end. (3) The shape itself: with one '
    'WRITE in flight per writer a server is paid in latency per WRITE as well as CPU, and '
    'Ganesha\'s hand-over from its receiving thread to a worker is on that path; with four, '
    'it overlaps. Compare ratios within a shape and image, where both servers met the same '
    'conditions minutes apart.')
FIO_SERIES = 'fio/alone'    # the sustained runs' yardstick: the disk alone, the same bytes
SUSTAINED_WINDOW = 10       # seconds, or a third of the write phase when that is shorter
WRITE_WORKLOADS = ('interleave', 'seqwrite', 'randwrite', 'sustained', 'ds-write')
GSS_WORKLOADS = ('gss-interleave', 'gss-seqwrite', 'gss-seqread')
GSS_FLAVORS = ('krb5', 'krb5i', 'krb5p')
GOAL_GSS_SPEEDUP = 1.5      # MiB/s against Ganesha with the same flavor, every gss case
GOAL_GSS_CPU = 1.5          # krb5p server CPU per GiB over the GSS-API's own sealing of it


# ---- values

def num(v):
    """A float, or None for '-', '' and the like."""
    if v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(v)
    except ValueError:
        return None


def fmt(v, digits=2):
    x = num(v)
    if x is None:
        return '-' if v in (None, '') else str(v)
    return f'{x:.{digits}f}'


def csv_value(col, v):
    if col in DIGITS and num(v) is not None:
        return fmt(v, DIGITS[col])
    return '-' if v in (None, '') else str(v)


def label(r):
    return r['server'] if r['mode'] in ('-', '') else f"{r['server']}/{r['mode']}"


def is_guest(r):
    return r.get('origin') == 'guest'


def verified(r):
    return r.get('verified') == 'yes'


def image_of(r):
    """The image a row ran on. Runs before --images had one, the preconditioned image; the
    guest's rows their own disk."""
    if is_guest(r):
        return 'guest'
    img = r.get('image')
    return img if img in IMAGE_ORDER else 'preconditioned'


def shape_of(r):
    """(writers, qd) of a row, or None where they do not apply."""
    try:
        return int(r['writers']), int(r['qd'])
    except (KeyError, TypeError, ValueError):
        return None


def shape_name(shape):
    return f'{shape[0]}x{shape[1]}' if shape else '-'


def variant(r):
    """Where an interleaved row sits in the matrix: (image, (writers, qd))."""
    return image_of(r), shape_of(r)


def variant_name(v):
    return f'{shape_name(v[1])} {v[0]}'


def variants(rows):
    """The (image, shape) pairs of the rows in a stable order: image, then writers, then qd."""
    vs = {variant(r) for r in rows}
    return sorted(vs, key=lambda v: (IMAGE_ORDER.index(v[0]), v[1] or (0, 0)))


# ---- sustained

def writing(series):
    """The MiB/s of the seconds of the write phase proper, before the final COMMIT."""
    return [p[1] for p in series if not (len(p) > 2 and p[2])]


def sustained_notes(series, mem_limit, cg_peak):
    notes = [f'memory.max {mem_limit >> 20} MiB']
    v = writing(series)
    if v:
        k = max(1, min(5, len(v) // 3))
        notes += [f'first {k} s {sum(v[:k]) / k:.0f} MiB/s',
                  f'last {k} s {sum(v[-k:]) / k:.0f} MiB/s', f'slowest second {min(v):.0f} MiB/s']
    commit = len(series) - len(v)
    notes.append(f'final COMMIT about {commit} s' if commit else 'final COMMIT under 1 s')
    if cg_peak:
        notes.append(f'cgroup peak {cg_peak / 1048576:.0f} MiB')
    return notes


def windows(series):
    """(first, last, k): the mean MiB/s of the first and of the last k seconds of the write
    phase, k = SUSTAINED_WINDOW or a third of the phase when it is shorter (at least 1 s);
    None when the phase had under 2 whole seconds."""
    v = writing(series)
    if len(v) < 2:
        return None
    k = max(1, min(SUSTAINED_WINDOW, len(v) // 3))
    return sum(v[:k]) / k, sum(v[-k:]) / k, k


def flatness(series):
    """Mean MiB/s of the last third of the write phase over that of the first third."""
    v = writing(series)
    if len(v) < 3:
        return None
    k = len(v) // 3
    first, last = sum(v[:k]) / k, sum(v[-k:]) / k
    return last / first if first > 0 else None


# ---- goals

def _goal(goal, target, measured, ok, short=None, caveat=None):
    if ok is None:
        verdict = 'not measured'
    elif ok:
        verdict = 'met'
    else:
        verdict = 'NOT met' + (f': {short}' if short else '')
    if caveat and ok is not None:
        verdict += f' ({caveat})'
    return dict(goal=goal, target=target, measured=measured, verdict=verdict)


def _case(r):
    s = f"{r['workload']} {r['record']}" if r['workload'] in ('interleave', 'sustained') \
        else r['workload']
    if r['sync'] not in ('-', ''):
        s += f" {r['sync']}"
    if r['file'] not in ('-', ''):
        s += f" {r['file']}"
    if r['workload'] == 'interleave':
        s += f' at {variant_name(variant(r))}'
    return s


def goals_mode(rows):
    """The write_mode the goals judge: nfsd-uc's default (cached) when the run has it."""
    return 'cached' if any(r['server'] == 'nfsd-uc' and r['mode'] == 'cached'
                           for r in rows if not is_guest(r)) else 'direct'


def goals(rows, raw, series=None):
    """The goals for nfsd-uc's default write_mode (cached) when the run has it, else direct.
    The gss workload's rows have goals of their own (gss_goals)."""
    host = [r for r in rows if not is_guest(r) and not is_gss(r)]
    mode = goals_mode(rows)
    uc = [r for r in host if r['server'] == 'nfsd-uc' and r['mode'] == mode]
    gan = [r for r in host if r['server'] == 'ganesha']
    who = f'nfsd-uc {mode}'
    modes = [r for r in host if r['server'] == 'nfsd-uc']
    return _goals(uc, gan, raw, who) + [_machine_cpu_goal(uc, gan, who),
                                        _trap_goal(modes, mode, who)] + \
        _read_goals(uc, gan, who) + _sustained_goals(uc, gan, series or {}, who)


def _interleaved(r):
    return r['workload'] == 'interleave' and int(r['record']) in IL_RECORDS


def _by_variant(ratios, pick):
    """'32x1 sparse 0.45x, ...': the worst ratio (pick: min or max) of each image and shape."""
    worst = {}
    for x, r in ratios:
        v = variant(r)
        worst[v] = x if v not in worst else pick(worst[v], x)
    return ', '.join(f'{variant_name(v)} {worst[v]:.2f}x' for v in variants(
        [r for _, r in ratios]))


def _machine_cpu_goal(uc, gan, who):
    """Whole-machine CPU per GiB, the load generator's excluded: what the server costs the
    machine, the kernel's write-back threads of a page-cache server included."""
    title = (f"whole-machine CPU seconds per GiB (client excluded) against NFS-Ganesha's, "
             f"interleaved 47008 and 6000, every shape and image ({who})")
    pairs = _pairs(uc, gan, _interleaved)
    ratios = [(num(u.get('machine_cpu_s_per_gib')) / num(g.get('machine_cpu_s_per_gib')), u)
              for u, g in pairs if num(u.get('machine_cpu_s_per_gib')) is not None
              and num(g.get('machine_cpu_s_per_gib'))]
    if not ratios:
        return _goal(title, f'< {GOAL_MACHINE_CPU:g}x', '-', None)
    worst = max(ratios, key=lambda x: x[0])
    within = sum(1 for x, _ in ratios if x < GOAL_MACHINE_CPU)
    ok = within == len(ratios)
    meas = (f"{within} of {len(ratios)} cases below; worst {worst[0]:.2f}x Ganesha's "
            f"({_case(worst[1])}); worst by shape and image: {_by_variant(ratios, max)}")
    return _goal(title, f'< {GOAL_MACHINE_CPU:g}x', meas, ok,
                 None if ok else f'worst case {worst[0]:.2f}x Ganesha\'s')


def _trap_goal(modes, mode, who):
    """No mode is a trap: on every case nfsd-uc ran in more than one write_mode, the judged mode
    within 5% of the best mode's MiB/s, so that a user never has to pick a mode to be fast."""
    title = (f"{who} against the best of nfsd-uc's write modes on each case "
             f"({', '.join(UC_MODES)}; every case with MiB/s, two modes or more)")
    by_case = {}
    for r in modes:
        if verified(r) and num(r['mib_s']) and r['workload'] not in ('meta', 'sustained'):
            by_case.setdefault(_key(r), {})[r['mode']] = r
    ratios = []
    for case in by_case.values():
        if mode in case and len(case) > 1:
            best = max(case.values(), key=lambda r: num(r['mib_s']))
            ratios.append((num(case[mode]['mib_s']) / num(best['mib_s']), case[mode], best))
    if not ratios:
        return _goal(title, f'>= {GOAL_NO_TRAP * 100:.0f}% of the best', '-', None)
    worst = min(ratios, key=lambda x: x[0])
    within = sum(1 for x, _, _ in ratios if x >= GOAL_NO_TRAP)
    ok = within == len(ratios)
    lost = sorted({b['mode'] for x, _, b in ratios if x < GOAL_NO_TRAP})
    il = [x for x, r, _ in ratios if _interleaved(r)]
    meas = (f"{within} of {len(ratios)} cases within 5% (interleaved 47008 and 6000: "
            f"{sum(1 for x in il if x >= GOAL_NO_TRAP)} of {len(il)}); worst "
            f"{worst[0] * 100:.0f}% of "
            f"{worst[2]['mode']}'s {num(worst[2]['mib_s']):.0f} MiB/s ({_case(worst[1])})"
            + (f"; faster where it lost: {', '.join(lost)}" if lost else ''))
    return _goal(title, f'>= {GOAL_NO_TRAP * 100:.0f}% of the best', meas, ok,
                 None if ok else f'{len(ratios) - within} case(s) short, worst by '
                 f'{(1 - worst[0]) * 100:.0f}%')


def fio_beside(r):
    """The MiB/s fio read the same file at, around a cold seqread row (its note), or None."""
    for part in r['note'].split(';'):
        part = part.strip()
        if part.startswith('fio_same_file='):
            return num(part.split('=', 1)[1].split()[0])
    return None


def cold_read_method(rounds):
    """How the cold seqread rows were measured against fio (runs before --cold-rounds: one)."""
    if rounds == 1:
        return ("Around seqread, fio reads the same file with O_DIRECT (1 MiB, iodepth 16) "
                "once to warm the host under the virtual disk, then just before and just after "
                "it: `fio_same_file` in the note is their mean, the cold-read goal's yardstick. ")
    return ("seqread and fio's O_DIRECT read of the same file (1 MiB, iodepth 16) take turns: "
            f"{rounds} server reads, each on a fresh server process, between {rounds + 1} fio "
            "reads, after one fio read to warm the host under the virtual disk. Each server "
            "read is held against the mean of the fio reads before and after it (`cold_rounds` "
            "in the note); the row is the round of the median ratio, and `fio_same_file` its "
            "yardstick, the cold-read goal's. ")


def _read_goals(uc, gan, who):
    out = []
    # 10. cold sequential reads against the disk's own O_DIRECT read of the same file
    cases = [(num(r['mib_s']), fio_beside(r), r) for r in uc
             if r['workload'] == 'seqread' and verified(r) and fio_beside(r)]
    if cases:
        u, f, _ = cases[0]
        ok = u / f >= GOAL_COLD_READ
        out.append(_goal(f'cold sequential 1 MiB reads against fio reading the same file just '
                         f'before and after (the median of its rounds; {who})',
                         f'>= {GOAL_COLD_READ * 100:.0f}%',
                         f'{u:.0f} vs {f:.0f} MiB/s = {u / f * 100:.0f}%', ok,
                         None if ok else f'{(GOAL_COLD_READ - u / f) * 100:.0f} points short'))
    else:
        out.append(_goal('cold sequential reads against fio on the same file',
                         f'>= {GOAL_COLD_READ * 100:.0f}%', '-', None))
    # 11. random 4 KiB reads at queue depth 32 (4 connections x 8), cold
    pairs = _pairs(uc, gan, lambda r: r['workload'] == 'randread')
    u, g = pairs[0] if pairs else ({}, {})
    out.append(_against(f"random 4 KiB reads, cold, against NFS-Ganesha ({who}, "
                        f"{u.get('writers')} x {u.get('qd')} in flight)",
                        'random 4 KiB reads against NFS-Ganesha', GOAL_RANDREAD,
                        num(u.get('mib_s')), num(g.get('mib_s'))))
    return out


def _against(title, title_unmeasured, goal, mine, theirs, caveat=None):
    """The goal mine / theirs >= goal, both in MiB/s; not measured when either is missing."""
    if not mine or not theirs:
        return _goal(title_unmeasured, f'>= {goal:g}x', '-', None)
    x = mine / theirs
    ok = x >= goal
    return _goal(title, f'>= {goal:g}x', f'{mine:.0f} vs {theirs:.0f} MiB/s = {x:.2f}x', ok,
                 None if ok else f'{x / goal * 100:.0f}% of the goal', caveat)


def _sustained_goals(uc, gan, series, who):
    """12, 13. The sustained run: flat, and ahead of Ganesha at its end."""
    def win(rows):
        for r in rows:
            if r['workload'] == 'sustained' and verified(r):
                w = windows(series.get(label(r), []))
                if w:
                    return w
        return None
    u, g = win(uc), win(gan)
    out = []
    if u:
        first, last, k = u
        x = last / first
        ok = x >= GOAL_FLAT
        disk = windows(series.get(FIO_SERIES, []))
        beside = '' if not disk or disk[0] <= 0 else \
            (f'; the disk alone (fio, the same bytes, 1 MiB O_DIRECT): {disk[1]:.0f} vs '
             f'{disk[0]:.0f} MiB/s = {disk[1] / disk[0] * 100:.0f}% over its last and first '
             f'{disk[2]} s')
        out.append(_goal(f'sustained writes in a memory cgroup, last {k} s over first {k} s '
                         f'({who})', f'>= {GOAL_FLAT * 100:.0f}%',
                         f'{last:.0f} vs {first:.0f} MiB/s = {x * 100:.0f}%{beside}', ok,
                         None if ok else f'{(GOAL_FLAT - x) * 100:.0f} points short',
                         None if k >= SUSTAINED_WINDOW else
                         f'windows of {k} s, not {SUSTAINED_WINDOW}: the run was too short; '
                         '--sustained-factor makes it longer'))
    else:
        out.append(_goal('sustained writes, last window over first', f'>= {GOAL_FLAT * 100:.0f}%',
                         '-', None))
    short = u and g and min(u[2], g[2]) < SUSTAINED_WINDOW
    out.append(_against(f"sustained writes, last {u and u[2]} s against NFS-Ganesha's last "
                        f'{g and g[2]} s ({who})', "sustained writes against NFS-Ganesha's",
                        GOAL_SUSTAINED, u and u[1], g and g[1],
                        f'windows under {SUSTAINED_WINDOW} s: the run was too short' if short
                        else None))
    return out


def _worst_reads(vals):
    """'N of M cases within; worst V (case: n reads in W WRITEs)' over [(reads/WRITE, row)]."""
    worst = max(vals, key=lambda x: x[0])
    within = sum(1 for v, _ in vals if v <= GOAL_READS)
    w = worst[1]
    return within, worst[0], (f"{within} of {len(vals)} cases within; worst {worst[0]:.6f} "
                              f"({_case(w)}: {worst[0] * float(w['writes']):.0f} reads in "
                              f"{w['writes']} WRITEs)")


def _reads_goal(label, cases, reads_per_write, uc):
    """Judged on the reads of the file's own blocks where every case traced them, else on every
    read; the other figure and the 49152 control's (no shared block: metadata alone) quoted."""
    bad = [r for r in cases if not verified(r)]
    ok_rows = [r for r in cases if verified(r)]
    every = [(v, r) for r in ok_rows if (v := reads_per_write(r)) is not None]
    data = [(v, r) for r in ok_rows if (v := num(r.get('file_reads_per_write'))) is not None]
    traced = bool(data) and len(data) == len(every)
    judged = data if traced else every
    within, worst, meas = _worst_reads(judged) if judged else (0, None, '')
    if traced:
        meas = (f"reads of the file's own blocks: {meas}; every read, the file system's metadata "
                f"included: {_worst_reads(every)[2]}")
        ctl = [v * float(r['writes']) for r in uc if r['workload'] == 'interleave' and
               str(r['record']) == '49152' and r['file'] == 'overwrite' and verified(r) and
               (v := num(r.get('loop_reads_per_write'))) is not None]
        if ctl:
            meas += (f" (the 49152 control, which shares no block, read {max(ctl):.0f} after the "
                     "caches were dropped: metadata)")
    if bad:
        meas += f'; {len(bad)} case(s) failed'
    ok = not bad and bool(judged) and within == len(judged)
    short = None
    if not ok and worst:
        short = f'worst case {worst / GOAL_READS:.1f}x the limit'
    elif bad:
        short = 'failed cases'
    return _goal(label, f'<= {GOAL_READS}', meas, ok, short)


def _goals(uc, gan, raw, who):
    """who: the server the goals judge, as the goal column names it ('nfsd-uc cached')."""
    out = []

    # 1. device reads per WRITE: the export's device (the loop device) where the row has it.
    # The server's own /proc/PID/io also counts its code and libraries paged in from the root
    # disk after the bench drops caches before an overwrite (34 of 39 pages in one such case).
    # The loop device's own count holds the file system's metadata too, which a cold cache reads
    # once whatever the server (the seeds' 0.0005 is that floor, over 1 GiB runs): the goal is
    # judged on the reads that fell in the file's own blocks (traced) where the run has them.
    def reads_per_write(r):
        v = num(r.get('loop_reads_per_write'))
        return v if v is not None else num(r['dev_reads_per_write'])

    label = ('device reads per WRITE (the loop device under the export), interleaved 47008 and '
             f'6000, both sync modes, fresh and overwrite, every shape and image ({who})')
    cases = [r for r in uc if r['workload'] == 'interleave' and int(r['record']) in IL_RECORDS]
    if not cases:
        out.append(_goal(label, f'<= {GOAL_READS}', '-', None))
    else:
        out.append(_reads_goal(label, cases, reads_per_write, uc))

    # 2. page-cache growth
    cases = [r for r in uc if r['workload'] in WRITE_WORKLOADS and verified(r)]
    vals = [(num(r['pagecache_pct']), r) for r in cases if num(r['pagecache_pct']) is not None]
    if vals:
        worst = max(vals, key=lambda x: x[0])
        cached = [num(r['cached_pct']) for r in cases if num(r['cached_pct']) is not None]
        meas = (f'file pages resident (cachestat, peak): worst {worst[0]:.3f}% ({_case(worst[1])}); '
                f'/proc/meminfo Cached delta, machine-wide: worst {max(cached):.2f}%')
        ok = worst[0] <= GOAL_PAGECACHE
        out.append(_goal(f'kernel page-cache growth, % of bytes written ({who}, every '
                         'write case)', f'<= {GOAL_PAGECACHE}%', meas, ok,
                         None if ok else f'worst {worst[0]:.2f}%, '
                         f'{worst[0] / GOAL_PAGECACHE:.1f}x the limit'))
    else:
        out.append(_goal('kernel page-cache growth, % of bytes written', f'<= {GOAL_PAGECACHE}%',
                         '-', None))

    # 3. write amplification with UNSTABLE + COMMIT
    cases = [r for r in uc if r['workload'] in WRITE_WORKLOADS and r['sync'] == 'unstable'
             and verified(r) and num(r['write_amp']) is not None]
    if cases:
        worst = max(cases, key=lambda r: num(r['write_amp']))
        wa = num(worst['write_amp'])
        ok = wa <= GOAL_AMP
        meas = f"worst {wa:.4f} ({_case(worst)}) over {len(cases)} UNSTABLE cases"
        out.append(_goal(f'device write amplification, UNSTABLE + COMMIT ({who})',
                         f'<= {GOAL_AMP}', meas, ok,
                         None if ok else f'{(wa - 1) * 100:.1f}% extra bytes, limit 1%'))
    else:
        out.append(_goal('device write amplification, UNSTABLE + COMMIT', f'<= {GOAL_AMP}', '-',
                         None))

    # 4. MiB/s against Ganesha
    pairs = _pairs(uc, gan, _interleaved)
    if pairs:
        ratios = [(num(u['mib_s']) / num(g['mib_s']), u) for u, g in pairs
                  if num(g['mib_s'])]
        worst = min(ratios, key=lambda x: x[0])
        within = sum(1 for x, _ in ratios if x >= GOAL_SPEEDUP)
        ok = within == len(ratios)
        median = sorted(x for x, _ in ratios)[len(ratios) // 2]
        meas = (f'{within} of {len(ratios)} cases at 1.5x or more; worst {worst[0]:.2f}x '
                f'({_case(worst[1])}); median {median:.2f}x; worst by shape and image: '
                f'{_by_variant(ratios, min)}')
        out.append(_goal(f'MiB/s against NFS-Ganesha, interleaved 47008 and 6000, every shape '
                         f'and image ({who})',
                         f'>= {GOAL_SPEEDUP}x', meas, ok,
                         None if ok else f'worst case at {worst[0] / GOAL_SPEEDUP * 100:.0f}% '
                         f'of the goal'))
    else:
        out.append(_goal('MiB/s against NFS-Ganesha, interleaved 47008 and 6000',
                         f'>= {GOAL_SPEEDUP}x', 'no pair of verified cases', None))

    # 5. aligned 1 MiB writes against fio writing a file on the same XFS at the client's depth
    out.append(_raw_goal([r for r in uc if r['workload'] == 'seqwrite' and verified(r)], raw,
                         who))

    # 6. CPU per GiB against Ganesha
    pairs = _pairs(uc, gan, lambda r: r['workload'] != 'meta')
    ratios = [(num(u['cpu_s_per_gib']) / num(g['cpu_s_per_gib']), u) for u, g in pairs
              if num(u['cpu_s_per_gib']) is not None and num(g['cpu_s_per_gib'])]
    if ratios:
        worst = max(ratios, key=lambda x: x[0])
        within = sum(1 for x, _ in ratios if x <= GOAL_CPU)
        ok = within == len(ratios)
        meas = (f'{within} of {len(ratios)} cases at half or less; worst {worst[0]:.2f}x '
                f"Ganesha's ({_case(worst[1])}); median "
                f'{sorted(x for x, _ in ratios)[len(ratios) // 2]:.2f}x')
        out.append(_goal(f"server CPU seconds per GiB against NFS-Ganesha's ({who}, every "
                         "workload both ran)", f'<= {GOAL_CPU}x', meas, ok,
                         None if ok else f'worst case {worst[0] / GOAL_CPU:.1f}x the limit'))
    else:
        out.append(_goal("server CPU per GiB against NFS-Ganesha's", f'<= {GOAL_CPU}x', '-', None))

    # 7. context switches per WRITE (issue 8: the request runs on its ring from socket to reply)
    cases = [r for r in uc if r['workload'] == 'interleave' and int(r['record']) in IL_RECORDS
             and verified(r) and num(r.get('ctxsw_per_write')) is not None]
    if cases:
        worst = max(cases, key=lambda r: num(r['ctxsw_per_write']))
        w = num(worst['ctxsw_per_write'])
        gsw = [num(g.get('ctxsw_per_write')) for _, g in _pairs(cases, gan, lambda r: True)
               if num(g.get('ctxsw_per_write')) is not None]
        meas = (f'worst {w:.2f} ({_case(worst)}) over {len(cases)} cases'
                + (f"; Ganesha's median {sorted(gsw)[len(gsw) // 2]:.2f}" if gsw else ''))
        ok = w <= GOAL_CTXSW
        out.append(_goal('server context switches per WRITE, interleaved 47008 and 6000 '
                         f'({who}, every thread)', f'<= {GOAL_CTXSW:g}', meas, ok,
                         None if ok else f'worst {w / GOAL_CTXSW:.1f}x the limit'))
    else:
        out.append(_goal('server context switches per WRITE', f'<= {GOAL_CTXSW:g}', '-', None))

    # 8. device write size on the interleaved workloads: the median of the write requests the
    # block layer issued (traced), as the goal says; the stat file's average where no trace ran
    def size_of(r):
        med = num(r.get('dev_write_med_kib'))
        return (med, 'median') if med is not None else (num(r.get('dev_write_kib')), 'average')
    cases = [r for r in uc if r['workload'] == 'interleave' and int(r['record']) in IL_RECORDS
             and r['sync'] == 'unstable' and verified(r) and size_of(r)[0]]
    if cases:
        worst = min(cases, key=lambda r: size_of(r)[0])
        w, kind = size_of(worst)
        ok = w >= GOAL_WRITE_KIB
        out.append(_goal(f'{kind} device write size, interleaved 47008 and 6000 UNSTABLE '
                         f'({who}, loop device)', f'>= {GOAL_WRITE_KIB} KiB',
                         f'worst {w:.0f} KiB ({_case(worst)}) over {len(cases)} cases; average '
                         f"{num(worst.get('dev_write_kib')) or 0:.0f} KiB", ok,
                         None if ok else f'{w / GOAL_WRITE_KIB * 100:.0f}% of the goal'))
    else:
        out.append(_goal('median device write size', f'>= {GOAL_WRITE_KIB} KiB', '-', None))

    # 9. reading back just-written data that fits the cache
    pairs = _pairs(uc, gan, lambda r: r['workload'] == 'readback')
    u, g = pairs[0] if pairs else ({}, {})
    out.append(_against(f"reading back just-written data against NFS-Ganesha's page cache "
                        f'({who})', 'reading back just-written data', GOAL_READBACK,
                        num(u.get('mib_s')), num(g.get('mib_s'))))
    return out


def _client_share(r):
    """How much of one CPU the load generator kept busy over the row's run: near 100%, it (one
    thread, sending over loopback on the same cores) set the rate, not the server."""
    m = re.search(r'client_cpu=([0-9.]+)s', str(r.get('note', '')))
    secs = num(r.get('seconds'))
    if not m or not secs:
        return ''
    share = float(m.group(1)) / secs
    return f"; the load generator kept {share * 100:.0f}% of a CPU busy"


def _raw_goal(seq, raw, who):
    """1 MiB sequential writes against fio's O_DIRECT write of a new file on the same XFS at
    the client's depth (runs before it had one: fio on the bare device at iodepth 16)."""
    yard, what = (raw.get('file_write'),
                  "fio's O_DIRECT write of a new file on the same XFS, fsync at the end")
    if not yard:
        yard, what = raw.get('write'), "fio's O_DIRECT write of the bare device (iodepth 16)"
    if not seq or not yard:
        return _goal('aligned 1 MiB sequential writes against fio O_DIRECT at the same depth',
                     f'>= {GOAL_RAW * 100:.0f}%', '-', None)
    r = seq[0]
    mine = num(r['mib_s'])
    x = mine / yard
    ok = x >= GOAL_RAW
    meas = f"{mine:.1f} MiB/s = {x * 100:.0f}% of {what}, {yard:.1f} MiB/s"
    if raw.get('file_write') and raw.get('write'):
        meas += (f"; the bare device before mkfs (iodepth 16): {raw['write']:.1f} MiB/s, "
                 f"{mine / raw['write'] * 100:.0f}%")
    meas += _client_share(r)
    return _goal(f"aligned 1 MiB sequential writes against fio O_DIRECT 1 MiB at the client's "
                 f"depth ({r['writers']} x {r['qd']} in flight), same file system ({who})",
                 f'>= {GOAL_RAW * 100:.0f}%', meas, ok,
                 None if ok else f'{(GOAL_RAW - x) * 100:.0f} points short')


def _key(r):
    """The case a row measured, the same for every server: workload, record, sync, file, image,
    client shape and Kerberos flavor (the gss rows')."""
    return (r['workload'], str(r['record']), r['sync'], r['file']) + variant(r) + \
        (r.get('sec') or '-',)


def _pairs(uc, gan, pred):
    g = {_key(r): r for r in gan if verified(r) and pred(r)}
    return [(u, g[_key(u)]) for u in uc if verified(u) and pred(u) and _key(u) in g]


# ---- tables

def md_table(header, rows):
    out = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    for r in rows:
        out.append('| ' + ' | '.join(str(x) for x in r) + ' |')
    return '\n'.join(out)


def _io_cells(r):
    return [label(r), fmt(r['mib_s'], 1), r['writes'], fmt(r['dev_reads'], 0),
            fmt(r['dev_reads_per_write'], 5), fmt(r['loop_reads_per_write'], 5),
            fmt(r.get('file_reads_per_write'), 5), fmt(r['write_amp'], 3),
            fmt(r['pagecache_pct'], 2), fmt(r['cached_pct'], 1),
            fmt(r['cpu_s_per_gib'], 2), fmt(r.get('machine_cpu_s_per_gib'), 2),
            fmt(r.get('ctxsw_per_write'), 2),
            fmt(r.get('dev_write_kib'), 0), fmt(r.get('dev_write_med_kib'), 0),
            fmt(r['peak_rss_mib'], 0), r['verified'], r['note'] if r['note'] not in ('', '-') else '']


IO_HEAD = ['server', 'MiB/s', 'WRITEs', 'dev reads', 'reads/WRITE', 'loop reads/WRITE',
           'file reads/WRITE', 'write amp', 'page cache %', 'Cached Δ %', 'CPU s/GiB',
           'machine CPU s/GiB', 'ctx sw/WRITE',
           'dev write KiB', 'median dev write KiB', 'peak RSS MiB', 'verified', 'note']


def interleave_tables(rows, level='###'):
    """One table per image and client shape, each under its heading."""
    rs = [r for r in rows if r['workload'] == 'interleave']
    out = []
    for v in variants(rs):
        w, q = v[1] or ('?', '?')
        out += [f'{level} {w} writers x {q} in flight, {v[0]} image', '',
                interleave_table([r for r in rs if variant(r) == v]), '']
    return '\n'.join(out)


def interleave_table(rows, workload='interleave'):
    rs = [r for r in rows if r['workload'] == workload]
    order = {}      # the cases in the order they ran, each server's row under it
    for r in rs:
        order.setdefault((str(r['record']), r['sync'], r['file']), []).append(r)
    lines = []
    for (rec, sync, fm), group in order.items():
        for r in group:
            lines.append([rec, sync, fm] + _io_cells(r))
    return md_table(['record', 'sync', 'file'] + IO_HEAD, lines)


def io_table(rows):
    order = ['fio-file', 'seqwrite', 'seqread', 'readback', 'randwrite', 'randread']
    rs = [r for r in rows if r['workload'] in order]
    rs.sort(key=lambda r: order.index(r['workload']))
    return md_table(['workload', 'bs'] + IO_HEAD,
                    [[r['workload'], r['record']] + _io_cells(r) for r in rs])


def meta_table(rows):
    rs = [r for r in rows if r['workload'] == 'meta']
    lines = []
    for r in rs:
        n = dict(x.split('=', 1) for x in r['note'].split('; ') if '=' in x)
        lines.append([label(r), r['record'], fmt(r['seconds'], 2), n.get('create', '-'),
                      n.get('lookup', '-'), n.get('readdirplus', '-'), n.get('remove', '-'),
                      r['writes'], fmt(r['dev_reads'], 0), n.get('cpu', '-'),
                      fmt(r['peak_rss_mib'], 0), r['verified']])
    return md_table(['server', 'files', 'seconds', 'CREATE', 'LOOKUP', 'READDIRPLUS (3 listings)',
                     'REMOVE', 'RPCs', 'dev reads', 'CPU', 'peak RSS MiB', 'verified'], lines)


def small_table(rows):
    """Each shape's servers together, with files/s against the first nfsd-uc mode and Ganesha."""
    rs = [r for r in rows if r['workload'] == 'small']
    notes = [dict(x.split('=', 1) for x in r['note'].split('; ') if '=' in x) for r in rs]
    rate = {(r['writers'], r['qd'], label(r)): num(n.get('files/s')) for r, n in zip(rs, notes)}
    lines = []
    for r, n in sorted(zip(rs, notes), key=lambda x: (num(x[0]['writers']) or 0,
                                                       num(x[0]['qd']) or 0)):
        mine = num(n.get('files/s'))
        gan = rate.get((r['writers'], r['qd'], 'ganesha'))
        lines.append([label(r), f"{r['writers']} x {r['qd']}", n.get('files/s', '-'),
                      fmt(mine / gan, 2) if mine and gan else '-', n.get('read_MiB/s', '-'),
                      n.get('cpu_ms_per_file', '-'), n.get('machine_cpu_ms_per_file', '-'),
                      fmt(r['dev_reads'], 0), fmt(r['peak_rss_mib'], 0), r['verified']])
    return md_table(['server', 'writers x in flight', 'files/s', "/ Ganesha's",
                     'read back MiB/s', 'server CPU ms/file', 'machine CPU ms/file',
                     'dev reads', 'peak RSS MiB', 'verified'], lines)


def sustained_table(rows, series):
    lines = []
    for r in rows:
        if r['workload'] != 'sustained':
            continue
        s = series.get(label(r), [])
        fl = flatness(s)
        lines.append([label(r), fmt(r['mib_s'], 1), fmt(r['bytes'] and num(r['bytes']) / 2**30, 2),
                      fmt(fl, 2) if fl is not None else '-', fmt(r['pagecache_pct'], 2),
                      fmt(r['write_amp'], 3), fmt(r['cpu_s_per_gib'], 2),
                      fmt(r.get('machine_cpu_s_per_gib'), 2), fmt(r['peak_rss_mib'], 0),
                      r['verified'], r['note']])
    return md_table(['server', 'MiB/s (whole run)', 'GiB written', 'last third / first third',
                     'page cache %', 'write amp', 'CPU s/GiB', 'machine CPU s/GiB',
                     'peak RSS MiB', 'verified', 'note'], lines)


def guest_table(rows):
    """The guest's rows, each case's servers together; the parts of the notes every row shares
    are said once, above the table."""
    rs = sorted((r for r in rows if is_guest(r)),
                key=lambda r: (r['workload'], str(r['record']), r['sync'], r['file']))
    parts = [[p.strip() for p in r['note'].split(';') if p.strip()] for r in rs]
    common = [p for p in parts[0] if all(p in q for q in parts)] if parts else []
    lines = []
    for r, p in zip(rs, parts):
        r = dict(r, note='; '.join(x for x in p if x not in common) or '-')
        lines.append([r['workload'], r['record'], r['sync'], r['file']] + _io_cells(r))
    head = f"Every row: {'; '.join(common)}.\n\n" if common else ''
    return head + md_table(['workload', 'record', 'sync', 'file'] + IO_HEAD, lines)


def guest_pivot(rows):
    """Device reads per WRITE of each server in the guest, one line per case."""
    rs = [r for r in rows if is_guest(r) and r['workload'] in ('interleave', 'sustained')]
    servers, cases, cell = [], [], {}
    for r in sorted(rs, key=lambda r: (r['workload'], str(r['record']), r['sync'], r['file'])):
        c = (r['workload'], str(r['record']), r['sync'], r['file'])
        if label(r) not in servers:
            servers.append(label(r))
        if c not in cases:
            cases.append(c)
        cell[(c, label(r))] = fmt(r['dev_reads_per_write'], 4) if verified(r) else 'FAILED'
    return md_table(['workload', 'record', 'sync', 'file'] + servers,
                    [list(c) + [cell.get((c, s), '-') for s in servers] for c in cases])


# ---- plots

def gnuplot(script, cwd):
    if shutil.which('gnuplot') is None:
        return False
    r = subprocess.run(['gnuplot'], input=script, text=True, cwd=cwd, capture_output=True)
    return r.returncode == 0


def _terminal():
    r = subprocess.run(['gnuplot', '-e', 'set terminal'], capture_output=True, text=True) \
        if shutil.which('gnuplot') else None
    text = (r.stdout + r.stderr) if r else ''
    return 'pngcairo' if 'pngcairo' in text else 'png'


def interleave_plots(rows, bdir):
    """For each image: two clustered histograms, MiB/s and device reads per WRITE, per server,
    for each (record, sync, file, shape) case. Files written: their names."""
    rs = [r for r in rows if r['workload'] == 'interleave' and not is_guest(r)]
    made = []
    for img in [i for i in IMAGE_ORDER if any(image_of(r) == i for r in rs)]:
        made += _interleave_plots([r for r in rs if image_of(r) == img], img, bdir)
    return made


def _interleave_plots(rs, img, bdir):
    servers = []
    for r in rs:
        if label(r) not in servers:
            servers.append(label(r))

    def case(r):
        return (str(r['record']), r['sync'], r['file'], shape_name(shape_of(r)))
    cases = []
    for r in rs:
        if case(r) not in cases:
            cases.append(case(r))
    val = {(label(r), case(r)): r for r in rs}
    made = []
    term = _terminal()
    width = max(1280, 48 * len(cases) + 320)
    goal_line = (f"set arrow from graph 0, first {GOAL_READS} to graph 1, first {GOAL_READS} "
                 "nohead dt 2 lc rgb 'red'")
    for name, col, ylabel, title, log in (
            (f'interleave_mibs_{img}', 'mib_s', 'MiB/s (write phase, final COMMIT included)',
             'MiB/s', False),
            (f'interleave_reads_{img}', 'dev_reads_per_write',
             'device reads per WRITE (log scale; 0 drawn at 1e-5)',
             'device reads per WRITE (dashed: the goal, 0.0005)', True)):
        dat = os.path.join(bdir, name + '.dat')
        with open(dat, 'w') as f:
            f.write('case\t' + '\t'.join(servers) + '\n')
            for c in cases:
                cells = []
                for s in servers:
                    r = val.get((s, c))
                    v = num(r[col]) if r and verified(r) else None
                    if v is not None and log:
                        v = max(v, 1e-5)
                    cells.append('-' if v is None else f'{v:.6g}')
                f.write(' '.join(c) + '\t' + '\t'.join(cells) + '\n')
        script = f'''set terminal {term} size {width},640 noenhanced font ",10"
set output '{name}.png'
set datafile separator '\\t'
set datafile missing '-'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -25 scale 0
set key outside right top
set grid ytics
set ylabel '{ylabel}'
set title 'Interleaved records on the {img} image, {title}; by record size, sync mode, file, \\
writers x in flight'
{"set logscale y; set yrange [1e-5:*]" if log else "set yrange [0:*]"}
{goal_line if log else ""}
plot for [i=2:{len(servers) + 1}] '{name}.dat' using i:xtic(1) title columnheader(i)
'''
        if gnuplot(script, bdir):
            made.append(name + '.png')
        os.unlink(dat)
    return made


def sustained_plot(series, raw_write, bdir):
    if not series:
        return []
    dat = os.path.join(bdir, 'sustained.dat')
    names = list(series)
    with open(dat, 'w') as f:
        for i, n in enumerate(names):
            if i:
                f.write('\n\n')
            f.write(f'# {n}\n')
            for p in series[n]:
                if not (len(p) > 2 and p[2]):
                    f.write(f'{p[0]:.3f}\t{p[1]:.3f}\n')
    plots = ', '.join(f"'sustained.dat' index {i} using 1:2 with lines lw 2 title '{n}'"
                      for i, n in enumerate(names))
    if raw_write:
        plots += (f", {raw_write:.1f} with lines dt 2 lc rgb 'gray' "
                  "title 'raw device O_DIRECT write'")
    script = f'''set terminal {_terminal()} size 1280,560 noenhanced font ",10"
set output 'sustained.png'
set datafile separator '\\t'
set key outside right top
set grid
set xlabel 'seconds'
set ylabel 'MiB/s acknowledged in each second'
set xrange [0:*]
set yrange [0:*]
set title "Sustained interleaved writes, many times the memory limit of each server's cgroup\\n\\
(the write phase; the final COMMIT's seconds are in the table)"
plot {plots}
'''
    ok = gnuplot(script, bdir)
    os.unlink(dat)
    return ['sustained.png'] if ok else []


# ---- peers between shapes

PEER_FIGURES = (('mib_s', 'MiB/s', 1), ('cpu_s_per_gib', 'CPU s/GiB', 2),
                ('machine_cpu_s_per_gib', 'machine CPU s/GiB', 2))


def _is_peer(r):
    return r['server'] in ('ganesha', 'knfsd')


def peer_moves(rows):
    """Every interleaved case where a peer's (Ganesha's, knfsd's) figure moves by more than
    PEER_MOVE between client shapes or images: [(peer, case, figure name, digits,
    {variant: value}, max / min)], in the order the cases ran."""
    groups = {}
    for r in rows:
        if r['workload'] == 'interleave' and _is_peer(r) and verified(r):
            case = (str(r['record']), r['sync'], r['file'])
            groups.setdefault((label(r), is_guest(r), case), []).append(r)
    out = []
    for (peer, guest, case), rs in groups.items():
        for col, name, digits in PEER_FIGURES:
            vals = {variant(r): num(r.get(col)) for r in rs if num(r.get(col))}
            if len(vals) < 2:
                continue
            x = max(vals.values()) / min(vals.values())
            if x > PEER_MOVE:
                out.append((peer + (' (guest)' if guest else ''), ' '.join(case), name, digits,
                            vals, x))
    return out


def peers_section(rows):
    """The "Peers between shapes" section: the lead's explanation, then the figures."""
    il = [r for r in rows if r['workload'] == 'interleave' and _is_peer(r)]
    L = ['## Peers between shapes\n', PEER_MOVES_NOTE + '\n']
    seen = {}
    for r in il:
        seen.setdefault((label(r), is_guest(r)), set()).add(variant(r))
    if all(len(v) < 2 for v in seen.values()):
        L.append('This run has one client shape on one image for the peers: nothing to '
                 'compare.\n')
        return L
    moves = peer_moves(rows)
    if not moves:
        L.append(f"No peer's MiB/s or CPU per GiB moved by more than {PEER_MOVE:g}x between "
                 'the client shapes and images of this run.\n')
        return L
    cols = variants([r for r in il if verified(r)])
    L.append(f"Each interleaved case where a peer's MiB/s, server CPU per GiB or whole-machine "
             f"CPU per GiB differs by more than {PEER_MOVE:g}x between client shapes (writers x "
             'WRITEs in flight each) or images, its figures side by side; the last column is the '
             'largest over the smallest.\n')
    L.append(md_table(['peer', 'case', 'figure'] + [variant_name(v) for v in cols] +
                      ['max / min'],
                      [[p, c, n] + [fmt(vals.get(v), d) for v in cols] + [f'{x:.2f}x']
                       for p, c, n, d, vals, x in moves]))
    L.append('')
    return L


# ---- another build of nfsd-uc beside this one (bench/run --baseline)

BASELINE_SLOWER = 0.95      # "no case more than 5% slower than before" (issue 35)


# ---- Kerberos (the gss workload)

def is_gss(r):
    return r['workload'] in GSS_WORKLOADS


def gss_crypto(gss, r):
    """What the cryptography itself costs for a krb5p row's bytes on the server's side, CPU
    s/GiB (gss-cost, at the row's size): RFC 4121 on OpenSSL, at the CPU's AES and SHA speed
    (what `openssl speed` says cipher and HMAC cost together), opening a WRITE's body in place
    (own_unwrap) or sealing a READ's reply from the cache's pages (own_wrap_out); MIT's
    gss_unwrap_iov and gss_wrap_iov when gss-cost has no such figures. (figure, op), or
    (None, op)."""
    ops = (gss or {}).get('ops') or {}
    for op in (('own_wrap_out', 'wrap_iov') if r['workload'] == 'gss-seqread'
               else ('own_unwrap', 'unwrap_iov')):
        got = ops.get(f"{op}/{r['record']}")
        if got:
            return got['cpu_s_per_gib'], op
    return None, op


def gss_goals(rows, gss):
    """Issue 37's: per flavor, nfsd-uc's MiB/s against Ganesha's on every gss case; and krb5p's
    server CPU per GiB against what the GSS-API's sealing of those bytes costs on this CPU."""
    host = [r for r in rows if not is_guest(r) and is_gss(r)]
    mode = goals_mode(host)
    who = f'nfsd-uc {mode}'
    uc = [r for r in host if r['server'] == 'nfsd-uc' and r['mode'] == mode]
    gan = [r for r in host if r['server'] == 'ganesha']
    out = []
    for flavor in GSS_FLAVORS:
        title = (f"{flavor}: MiB/s against NFS-Ganesha with {flavor}, 47008-byte interleaved "
                 f"writes and 1 MiB sequential writes and reads ({who})")
        pairs = _pairs([r for r in uc if r.get('sec') == flavor],
                       [r for r in gan if r.get('sec') == flavor], lambda r: True)
        ratios = [(num(u['mib_s']) / num(g['mib_s']), u) for u, g in pairs if num(g['mib_s'])]
        if not ratios:
            out.append(_goal(title, f'>= {GOAL_GSS_SPEEDUP:g}x', '-', None))
            continue
        worst = min(ratios, key=lambda x: x[0])
        within = sum(1 for x, _ in ratios if x >= GOAL_GSS_SPEEDUP)
        ok = within == len(ratios)
        meas = (f'{within} of {len(ratios)} cases at {GOAL_GSS_SPEEDUP:g}x or more: ' +
                ', '.join(f"{u['workload'][4:]} {x:.2f}x" for x, u in ratios))
        out.append(_goal(title, f'>= {GOAL_GSS_SPEEDUP:g}x', meas, ok,
                         None if ok else f"worst {worst[1]['workload'][4:]} at "
                         f"{worst[0] / GOAL_GSS_SPEEDUP * 100:.0f}% of the goal"))
    out.append(_gss_cpu_goal([r for r in uc if r.get('sec') == 'krb5p' and verified(r)], gss,
                             who))
    return out


def _gss_cpu_goal(cases, gss, who):
    enc = (gss or {}).get('enctype', '?')
    title = (f"krb5p: server CPU s/GiB against what the cryptography of those bytes costs on this "
             f"CPU (gss-cost: RFC 4121 on OpenSSL, own_unwrap for WRITEs, own_wrap_out for READs; "
             f"{enc}; {who})")
    ratios = []
    for r in cases:
        cost, op = gss_crypto(gss, r)
        if cost and num(r['cpu_s_per_gib']) is not None:
            ratios.append((num(r['cpu_s_per_gib']) / cost, r, cost))
    if not ratios:
        return _goal(title, f'<= {GOAL_GSS_CPU:g}x', '-', None)
    worst = max(ratios, key=lambda x: x[0])
    within = sum(1 for x, _, _ in ratios if x <= GOAL_GSS_CPU)
    ok = within == len(ratios)
    meas = f'{within} of {len(ratios)} cases within: ' + ', '.join(
        f"{r['workload'][4:]} {num(r['cpu_s_per_gib']):.2f} vs {c:.2f} s/GiB = {x:.2f}x"
        for x, r, c in ratios)
    return _goal(title, f'<= {GOAL_GSS_CPU:g}x', meas, ok,
                 None if ok else f"worst {worst[1]['workload'][4:]}, "
                 f"{worst[0] / GOAL_GSS_CPU:.1f}x the limit")


GSS_OPS = (('wrap_iov', 'gss_wrap_iov in place, confidentiality: krb5p sealing (READ replies: '
            'nfsd-uc and ntirpc 4.3, Ganesha\'s, both seal in place)'),
           ('unwrap_iov', 'gss_unwrap_iov in place: krb5p opening (WRITE bodies)'),
           ('wrap', 'gss_wrap, the token in a new buffer (the plain call, libtirpc\'s)'),
           ('unwrap', 'gss_unwrap, the plain text in a new buffer'),
           ('get_mic', 'gss_get_mic: krb5i checksum made'),
           ('verify_mic', 'gss_verify_mic: krb5i checksum checked'),
           ('own_wrap', "rpc/gss_krb5.c on OpenSSL, sealing in place (gss-load's --crypto "
            "openssl: a WRITE's body)"),
           ('own_unwrap', 'rpc/gss_krb5.c opening in place (nfsd-uc: a WRITE\'s body)'),
           ('own_wrap_out', 'rpc/gss_krb5.c sealing from 4 KiB pages into the reply (nfsd-uc: a '
            'READ from the cache)'),
           ('own_mic', 'rpc/gss_krb5.c, a MIC made (krb5i replies, verifiers)'),
           ('own_verify_mic', 'rpc/gss_krb5.c, a MIC checked (krb5i calls, headers)'))


def gss_cost_table(gss):
    sizes = sorted({int(k.split('/')[1]) for k in gss.get('ops', {})}, reverse=True)
    rows = []
    for op, what in GSS_OPS:
        cells = []
        for size in sizes:
            got = gss['ops'].get(f'{op}/{size}')
            cells.append(f"{got['cpu_s_per_gib']:.2f} ({got['mib_s']:.0f} MiB/s)" if got else '-')
        rows.append([f'`{op}`', what] + cells)
    return md_table(['operation', 'what it is'] + [f'CPU s/GiB at {s} bytes' for s in sizes],
                    rows)


def gss_openssl_line(gss):
    o = (gss or {}).get('openssl') or {}
    if not o.get('rates'):
        return 'openssl is not installed here: no reference figures.'
    rates = o['rates']
    per = {name: (1 << 30) / rate for name, rate in rates.items()}
    parts = [f"{name} {rate / 1e6:.0f} MB/s = {per[name]:.2f} CPU s/GiB"
             for name, rate in rates.items()]
    mac = next((v for k, v in per.items() if k.startswith('hmac')), None)
    both, than = '', ''
    if mac and 'aes-256-cbc encrypt' in per and 'aes-256-cbc decrypt' in per:
        seal = per['aes-256-cbc encrypt'] + mac
        both = (f" Cipher and HMAC together: {seal:.2f} s/GiB to seal, "
                f"{per['aes-256-cbc decrypt'] + mac:.2f} to open.")
        mine = ((gss.get('ops') or {}).get('wrap_iov/1048576') or {}).get('cpu_s_per_gib')
        if mine:
            than = f" (here gss_wrap_iov costs {mine / seal:.1f}x that)"
    version = ' '.join(o.get('version', 'OpenSSL').split()[:2])
    return (f"For reference, `openssl speed` over 1 MiB buffers ({version}, one CPU): "
            f"{'; '.join(parts)}.{both} OpenSSL uses the CPU's AES and SHA instructions; MIT's "
            "built-in crypto, which libk5crypto is when not built on OpenSSL (Debian 12's: what "
            f"Ganesha calls), does not{than}. nfsd-uc's own tokens (rpc/gss_krb5.c, the own_* "
            "rows) run at OpenSSL's speed, and the CPU goal is held against them.")


def gss_table(rows, gss):
    rs = sorted((r for r in rows if is_gss(r)), key=lambda r: r['server'] == 'ganesha')
    gan = {_key(r): r for r in rs if r['server'] == 'ganesha' and verified(r)}
    lines = []
    for flavor in GSS_FLAVORS:
        for wl in GSS_WORKLOADS:
            for r in [x for x in rs if x.get('sec') == flavor and x['workload'] == wl]:
                g = gan.get(_key(r))
                vs = f"{num(r['mib_s']) / num(g['mib_s']):.2f}x" if g and r is not g and \
                    verified(r) and num(g['mib_s']) else ''
                cost, _ = gss_crypto(gss, r) if flavor == 'krb5p' else (None, None)
                cpu = num(r['cpu_s_per_gib'])
                crypto = f"{cost:.2f} ({cpu / cost:.2f}x)" if cost and cpu is not None else ''
                lines.append([flavor, wl[4:], r['record'], r['sync'],
                              f"{r['writers']}x{r['qd']}", label(r), fmt(r['mib_s'], 1), vs,
                              fmt(r['cpu_s_per_gib'], 2), fmt(r.get('machine_cpu_s_per_gib'), 2),
                              crypto, fmt(r['peak_rss_mib'], 0),
                              r['verified'], r['note'] if r['note'] not in ('', '-') else ''])
    return md_table(['sec', 'workload', 'bytes/call', 'sync', 'shape', 'server', 'MiB/s',
                     "over Ganesha's", 'CPU s/GiB', 'machine CPU s/GiB',
                     "crypto s/GiB (CPU over it)", 'peak RSS MiB', 'verified',
                     'note'], lines)


def gss_section(rows, info):
    gss = info.get('gss') or {}
    a = info['args']
    shape = getattr(a, 'gss_shape', None)
    seq = getattr(a, 'gss_seq_shape', None) or (a.io_writers, a.io_qd)
    L = ['## Kerberos: krb5, krb5i, krb5p\n']
    L.append("Each server with an export that allows `sec=krb5:krb5i:krb5p` only (nfsd-uc: "
             "`[server] keytab` and the client rule's `sec=`; Ganesha: `NFS_KRB5` with "
             "`Active_krb5`, and `SecType = krb5, krb5i, krb5p`, its configuration otherwise the "
             "one of every other workload), beside a KDC of the run's own in the namespace; the "
             "client is the machine principal host/localhost, which both take as root. Load "
             "generator `gss-load` (bench/gssload.c: a context per connection, calls pipelined, "
             "a WRITE's data sealed where it is sent from and a READ's reply opened where it was "
             "received): `interleave`, the seeds' 47008-byte records"
             + (f" at {shape[0]} writers x {shape[1]} in flight" if shape else '') +
             f", {getattr(a, 'gss_writes', '?')} per case, one COMMIT at the end (or FILE_SYNC), "
             "read back and checked after; `seqwrite`, a file of "
             f"{(getattr(a, 'gss_size', 0) or 0) >> 20} MiB in 1 MiB WRITEs in order "
             f"({seq[0]} x {seq[1]} in flight), UNSTABLE + COMMIT; `seqread`, that file "
             "read back at once from the same server process, 1 MiB READs, "
             f"{getattr(a, 'gss_read_passes', None) or 'by flavor (krb5 32, krb5i 16, krb5p 4)'}"
             " time(s) over, every byte checked (warm: the "
             "cryptography and the server's path, not the disk). Each case on a fresh server "
             "process. `crypto s/GiB`: what gss-cost measured the server's side of "
             "krb5p to cost for those bytes at OpenSSL's speed (own_unwrap of the WRITEs' bodies, "
             "own_wrap_out of the READ replies), the yardstick of the CPU goal, and the server's "
             "CPU s/GiB over it. The client seals and opens every byte too, on the same CPUs: "
             f"with `--gss-client-crypto {getattr(a, 'gss_client_crypto', 'openssl')}` "
             "(openssl: rpc/gss_krb5.c, as a Linux client's kernel crypto; gssapi: MIT's "
             "built-in crypto, as much CPU per byte as a server's; `client_cpu` in the "
             "notes).\n")
    L.append(gss_table(rows, gss))
    L.append('')
    if gss.get('ops'):
        L.append(f"**What the cryptography costs here** (gss-cost, bench/gsscost.c: a context "
                 f"made in one process from the KDC's tickets, each operation's own CPU time; "
                 f"enctype **{gss.get('enctype', '?')}**):\n")
        L.append(gss_cost_table(gss))
        L.append('')
    L.append(gss_openssl_line(gss) + '\n')
    return L


def baseline_pairs(rows):
    """{(mode, case): [(this build's row, the baseline's row)]}: the i-th verified run of a
    case by each build, paired in the order they ran (a group's two runs are minutes apart at
    most, so a pair shares the disk's mood)."""
    mine, base = {}, {}
    for r in rows:
        if is_guest(r) or not verified(r) or not num(r.get('mib_s')):
            continue
        if r['server'] == 'nfsd-uc':
            mine.setdefault((r['mode'], _key(r)), []).append(r)
        elif r['server'].startswith('nfsd-uc@'):
            base.setdefault((r['mode'], _key(r)), []).append(r)
    return {k: list(zip(v, base[k])) for k, v in mine.items() if k in base}


def _log_interval(xs):
    """The geometric mean of ratios xs and its rough 95% interval (two standard errors of the
    mean of their logarithms either side): (mean, low, high); the interval None for one."""
    logs = [math.log(x) for x in xs]
    m = sum(logs) / len(logs)
    if len(logs) < 2:
        return math.exp(m), None, None
    sd = math.sqrt(sum((v - m) ** 2 for v in logs) / (len(logs) - 1))
    half = 2 * sd / math.sqrt(len(logs))
    return math.exp(m), math.exp(m - half), math.exp(m + half)


def _interval_cell(xs):
    g, lo, hi = _log_interval(xs)
    return f'{g:.3f}' + (f' ({lo:.2f}-{hi:.2f})' if lo is not None else '')


def baseline_section(rows):
    """'Against the baseline': per case, this build over the baseline's, over its pairs."""
    revs = sorted({r['server'][len('nfsd-uc@'):] for r in rows
                   if r['server'].startswith('nfsd-uc@')})
    pairs = baseline_pairs(rows)
    if not revs or not pairs:
        return []
    pct = f'{100 - BASELINE_SLOWER * 100:.0f}%'
    L = ['## Against the baseline\n',
         f"This build's nfsd-uc against the build of {', '.join(revs)} (`--baseline`), in the "
         'same run on the same disk, taking turns. Per case, over its pairs of runs: the median '
         "and the geometric mean of this build's MiB/s over the baseline's (above 1 is faster), "
         'the mean with a rough 95% interval (two standard errors of the mean log ratio either '
         'side), the range of the pairs, and the median of the CPU s/GiB ratios (below 1 is '
         'cheaper). One pair of runs on this machine differs by up to 20% with the same build, '
         'so a case is taken as slower only when its whole interval lies below 1; the pooled '
         'figures at the end, over every pair, are the sharp ones.\n']
    table, all_mib, by_sync, below, slower = [], [], {}, [], []
    for (mode, key), ps in pairs.items():
        mib = [num(a['mib_s']) / num(b['mib_s']) for a, b in ps]
        cpu = [num(a['cpu_s_per_gib']) / num(b['cpu_s_per_gib']) for a, b in ps
               if num(a.get('cpu_s_per_gib')) and num(b.get('cpu_s_per_gib'))]
        all_mib += mib
        by_sync.setdefault(f'{key[0]} {key[2]} {key[3]}', []).extend(mib)
        name = f'{mode} {" ".join(key[:4])} {variant_name(key[4:])}'
        med = bh_median(mib)
        _, _, hi = _log_interval(mib)
        if med < BASELINE_SLOWER:
            below.append(name)
        if hi is not None and hi < 1:
            slower.append(name)
        table.append([mode, ' '.join(key[:4]), variant_name(key[4:]), len(ps), f'{med:.3f}',
                      _interval_cell(mib), f'{min(mib):.2f}-{max(mib):.2f}',
                      f'{bh_median(cpu):.3f}' if cpu else '-'])
    L.append(md_table(['mode', 'case', 'shape, image', 'pairs', 'MiB/s ratio, median',
                       'geometric mean (95%)', 'range', 'CPU s/GiB ratio, median'], table))
    L.append('')
    L.append(f'{len(table)} cases, {len(all_mib)} pairs. Every pair: {_interval_cell(all_mib)}. '
             + '; '.join(f'{k}: {_interval_cell(v)} ({len(v)} pairs)'
                         for k, v in sorted(by_sync.items())) + '.\n')
    L.append((f'Slower beyond the noise (the whole interval below 1): {"; ".join(slower)}. '
              if slower else 'No case is slower beyond the noise (its whole interval below 1). ')
             + (f'Median below {BASELINE_SLOWER:g} ({pct} slower): {len(below)} of '
                f'{len(table)}: {"; ".join(below)}.\n' if below else
                f'No median is below {BASELINE_SLOWER:g} ({pct} slower).\n'))
    return L


def bh_median(xs):
    xs = sorted(xs)
    n = len(xs)
    return (xs[n // 2] + xs[(n - 1) // 2]) / 2 if n else None


# ---- the page

NOISE = ('This machine is shared: other engineers build and test on the same 2 CPUs while the '
         'bench runs, so MiB/s and CPU figures are noisy (compare servers within this run, '
         'not across runs; the load average at start and end is above). The order of the '
         'servers rotates from case to case so that no server always runs first.')


def device_line(info):
    """The header's line on the images: which were made, and the disk's bandwidth."""
    size = f"{info['image'] >> 30} GiB" if info['image'] else '? GiB'
    made = info.get('images') or ['preconditioned']      # runs before --images: that one
    text = []
    if 'preconditioned' in made:
        text.append(f"a {size} image in /var/tmp written once end to end before the run "
                    "(preconditioned)")
    if 'sparse' in made:
        text.append(f"a {size} sparse image in /var/tmp never written before the run (sparse: "
                    "each first write to a region allocates in the host's file system)")
    raw = info['raw']
    each = 'each on a loop device of its own' if len(text) > 1 else 'on a loop device'
    line = (f"- **Device:** {'; and '.join(text)}; {each} (`losetup --direct-io=on "
            f"--sector-size 4096`) with a fresh XFS, {info['block']}-byte blocks and "
            f"{info['sector']}-byte sectors.")
    if raw.get('write'):
        line += (f" Raw O_DIRECT bandwidth of the preconditioned device before mkfs: "
                 f"{fmt(raw.get('write'), 1)} MiB/s write, {fmt(raw.get('read'), 1)} MiB/s read "
                 "(fio, 1 MiB, iodepth 16; the disk is virtual: reads of data just written may "
                 "come from the hypervisor's cache)")
    if raw.get('file_write'):
        line += (f"; fio's O_DIRECT write of a new file on its XFS at the seq workload's depth, "
                 "fsync at the end: "
                 f"{fmt(raw['file_write'], 1)} MiB/s")
    return line


def _load_generators_text(a):
    """The bullet naming the load generators, the interleaved cases' by --interleave-client
    (async when a run.json from before it has none)."""
    gss = ('The gss workload\'s: `gss-load` (bench/gssload.c, on the RPCSEC_GSS client of '
           'tests/integration/rawgss.c: libnfs has no Kerberos), one connection and context per '
           'writer, calls pipelined.')
    if getattr(a, 'interleave_client', 'async') != 'threads':
        return ('- Load generators: `nfs-interleave` and `nfs-workload` (bench/), libnfs, one '
                'connection per writer, asynchronous; they run on the same machine as the server '
                'and share its CPUs, as every server\'s client does here. ' + gss)
    return ('- Load generators: the interleaved and sustained cases ran `nfs-interleave-threads` '
            '(bench/interleave_threads.c, `--interleave-client threads`), the way applications '
            'write: one thread per connection, each making blocking calls through libnfs\'s '
            'synchronous API (nfs_pwrite, nfs_fsync, nfs_pread), a shape WxQ being W writers of '
            'Q threads each, so W x Q connections with one WRITE in flight on each (an UNSTABLE '
            'case\'s final COMMIT on one of them), where `nfs-interleave` keeps Q WRITEs in flight on each of '
            'W connections; the knfsd guest\'s rows still come from `nfs-interleave`. The other '
            'workloads: `nfs-workload` (bench/), libnfs, one connection per writer, '
            'asynchronous. They run on the same machine as the server and share its CPUs, as '
            'every server\'s client does here. ' + gss)


def _warmup_text(a):
    w = getattr(a, 'warmup', 0) or 0
    if w <= 0:
        return ("Each case is the first pass of a server just started (its memory faulted in "
                "as it goes). ")
    return (f"Each server is started for its case and first writes {w:.0%} of the case's records "
            "(same shape and sync mode) to a file of its own, removed before the measured pass: "
            "the figures are a running server's, not a just-started one's (the note gives that "
            "pass's MiB/s and CPU). ")


def unstable_writes(a, rec):
    """WRITEs of an interleaved UNSTABLE case of rec-byte records: --writes when given, else
    --case-bytes' worth (a run.json from before --case-bytes has writes only)."""
    if getattr(a, 'writes', None):
        return a.writes
    return max(1, a.case_bytes // rec)


def _unstable_size(a, records):
    """What the intro says an UNSTABLE case is: its WRITEs, per record size when they differ."""
    if getattr(a, 'writes', None):
        return f"{a.writes} WRITEs"
    per = ", ".join(f"{unstable_writes(a, r)} WRITEs of {r} bytes" for r in records)
    return f"{a.case_bytes >> 20} MiB ({per})"


def interleave_intro(a, il):
    """The paragraph above the interleaved tables: the shapes, images and sizes of the run."""
    shapes = ', '.join(sorted({shape_name(shape_of(r)) for r in il},
                              key=lambda x: tuple(int(y) for y in x.split('x'))))
    images = [i for i in IMAGE_ORDER if any(image_of(r) == i for r in il)]
    controls = sorted({int(r['record']) for r in il if int(r['record']) % 4096 == 0})
    records = sorted({int(r['record']) for r in il}, reverse=True)
    least = min([unstable_writes(a, r) for r in records] or [1])
    return (f"Client shapes (writers x WRITEs in flight per writer): {shapes}. Each writer has a "
            "TCP connection of its own; record i is at offset i x R, and writer t of W writes "
            f"records t, t+W, ...; {_unstable_size(a, records)} per UNSTABLE case (one COMMIT at "
            f"the end, in the time), {a.sync_writes} WRITEs per FILE_SYNC case (each is a sync: "
            "its cost does not fade with the case's length), whatever the shape. Image"
            f"{'s' if len(images) > 1 else ''}: {' and '.join(images)} (preconditioned: written "
            "end to end before mkfs; sparse: a sparse file never written before, with its own "
            "loop device and XFS; later cases on it may land where earlier ones had made the "
            "host allocate). "
            + (f"The block-aligned record{'s' if len(controls) > 1 else ''} "
               f"({', '.join(map(str, controls))}) run{'' if len(controls) > 1 else 's'} in one "
               "shape on one image only, as a control. " if controls else '') +
            "`fresh`: a new file; `overwrite`: the same file written again with other data after "
            "dropping the host's caches. " + _warmup_text(a) +
            "Every byte is read back through the server and checked after each case; after the "
            "cases of each record size, sync mode, image and shape the files are removed and the "
            "bench waits 10 s for the disk under ours to settle (the first server of the next case "
            "paid for it otherwise); the images and shapes of one record size and sync mode run "
            "one after the other. One device read in a "
            f"case is at most {1 / least:.5f} reads/WRITE for UNSTABLE and {1 / a.sync_writes:.5f} "
            "for FILE_SYNC: the `dev reads` column gives the absolute count (a handful are "
            "metadata: inode, extent map, directory). `machine CPU s/GiB` is every CPU's "
            "work over the phase, the load generator's own taken out (see How it was measured). "
            "`dev write KiB` is the loop device's average write (/sys/block stat), `median dev "
            "write KiB` the median of the write requests the block layer issued to it (traced): "
            "the loop device takes at most 128 segments a request, so a write from memory that "
            "is not physically contiguous reaches it as requests of at most 512 KiB.\n")


def page(rows, series, info, goal_rows, plots, runtimes):
    a = info['args']
    m = info['machine']
    host = [r for r in rows if not is_guest(r)]
    el = info['elapsed']
    L = []
    L.append('# nfsd-uc benchmarks\n')
    L.append('Generated by `bench/run`; do not edit by hand (`bench/run` rewrites this page, '
             '`bench/run --quick --update-docs` too).\n')
    L.append(f"- **Date:** {info['started'].strftime('%Y-%m-%d %H:%M UTC')}")
    L.append(f"- **Matrix:** {info['matrix']}" + (' (the quick one: fewer WRITEs per case and '
             'two record sizes; see [Run times](#run-times) for the full one)'
             if info['matrix'] == 'quick' else ''))
    L.append(f"- **Command:** `{info['command']}` (as root)")
    L.append(f"- **Run time:** {el / 60:.1f} min, measured (build check and set-up included)")
    L.append(f"- **Machine:** {m['nproc']} CPUs ({m['cpu']}), {m['mem_gib']:.1f} GiB memory, "
             f"kernel {m['kernel']}, disk under /var/tmp: {m['disk']}")
    L.append(device_line(info))
    L.append(f"- **Load average:** {' / '.join(f'{x:.2f}' for x in info['load_start'])} at start, "
             f"{' / '.join(f'{x:.2f}' for x in info['load_end'])} at the end")
    L.append(f"- **Memory cgroups:** {info['cgroup']}")
    L.append(f"- **knfsd:** {info['knfsd']}")
    if shutil.which('gnuplot') is None:
        L.append('- **Plots:** not drawn: gnuplot is not installed (Debian: gnuplot-nox)')
    if info['ganesha_missing']:
        L.append(f"- **NFS-Ganesha:** not run: {info['ganesha_missing']}")
    if info['interrupted']:
        L.append('- **The run was interrupted or stopped on an error: the tables hold what was '
                 'measured before.**')
    if info['failures']:
        L.append(f"- **{info['failures']} case(s) FAILED** (verification or error): their rows say "
                 'why, and their figures are not used.')
    L.append('')
    L.append(NOISE + '\n')

    L.append('## Goals\n')
    met = sum(1 for g in goal_rows if g['verdict'] == 'met')
    measured = sum(1 for g in goal_rows if g['verdict'] != 'not measured')
    mode = goals_mode(rows)
    L.append(f'**{met} of {measured} goals measured in this run are met.** Each goal is checked on '
             f'nfsd-uc with `write_mode = {mode}`'
             + (' (its default)' if mode == 'cached' else ' (the default, cached, did not run)')
             + ' against the figures below; "NOT met" says by how much.\n')
    L.append(md_table(['goal', 'target', 'measured', 'verdict'],
                      [[g['goal'], g['target'], g['measured'], g['verdict']] for g in goal_rows]))
    L.append('')
    L += baseline_section(rows)

    if any(r['workload'] == 'interleave' for r in host):
        L.append('## Interleaved records (the seeds\' workload)\n')
        L.append(interleave_intro(a, [r for r in host if r['workload'] == 'interleave']))
        L.append(interleave_tables(host))
        for p in plots:
            if p.startswith('interleave'):
                L.append(f'![{p}](bench/{p})\n')
        L += peers_section(rows)
    if any(r['workload'] in ('seqwrite', 'seqread', 'randwrite', 'randread') for r in host):
        L.append('## Sequential and random I/O on one large file\n')
        L.append(f"{a.io_writers} connections, {a.io_qd} RPCs in flight each. seqwrite: "
                 f"{a.seq_size >> 20} MiB in 1 MiB WRITEs in order, UNSTABLE + COMMIT; seqread: "
                 "1 MiB READs of it after dropping caches (each checked); randwrite: "
                 f"{a.rand_ops} 4 KiB WRITEs at random aligned offsets, UNSTABLE + COMMIT; "
                 f"randread: {a.rand_ops} 4 KiB READs at random offsets after dropping caches. "
                 + cold_read_method(getattr(a, 'cold_rounds', 1)) +
                 "The whole file is read back and checked after the random WRITEs. readback: "
                 f"a file of {min(a.seq_size, 256 << 20) >> 20} MiB written the same way and "
                 "read back at once from the same server, "
                 f"{getattr(a, 'readback_passes', 1)} time(s) over, timed as one (one pass "
                 "takes a tenth of a second from a cache: shorter than this machine's noise). "
                 "Each step runs on a fresh server process. `fio-file`: fio's O_DIRECT write "
                 "of a new file of the same size on the same XFS, 1 MiB blocks in order, as "
                 f"many in flight as the client keeps ({a.io_writers} x {a.io_qd}, one job), no "
                 "preallocation, an fsync at the end in its time (as the servers' COMMIT), run "
                 "just before and just after the servers' cases (the row is "
                 "their mean, the note each): the 1 MiB write goal's yardstick. "
                 "For READ rows, `dev reads` counts "
                 "the server's device reads and page cache % the file's resident pages against "
                 "the bytes read.\n")
        L.append(io_table(host))
        L.append('')
    if any(r['workload'] == 'meta' for r in host):
        L.append('## Metadata: one directory\n')
        L.append(f"{a.files} files, {a.io_writers} connections, {a.io_qd} RPCs in flight each: "
                 "CREATE (GUARDED) each file, LOOKUP each, list the directory three times with "
                 "READDIRPLUS (each listing must hold every name once), REMOVE each, and check "
                 "that a last listing is empty. Rates are operations (or listed entries) per "
                 "second.\n")
        L.append(meta_table(host))
        L.append('')
    if any(r['workload'] == 'small' for r in host):
        L.append('## Small files\n')
        L.append(f"{a.small_files} files of 16 KiB in a new directory, as `tar x` makes them "
                 "through a Linux client: each file's CREATE, its WRITE (UNSTABLE) and its COMMIT "
                 "(what close() waits for) one after the other, one file at a time (1 x 1: one "
                 "tar) and files side by side; then each file READ back and checked, and "
                 "removed. files/s is the writing phase's; CPU per file covers the whole run "
                 "(read back and removal too); machine CPU is every CPU's busy time less the "
                 "load generator's (a page-cache server's write-back runs in kernel threads). "
                 "Not run against knfsd (its guest runs the interleaved cases).\n")
        L.append(small_table(host))
        L.append('')
    L += benchdsreport.ds_section(host, a)
    if any(r['workload'] == 'sustained' for r in host):
        L.append('## Sustained writes against a memory limit\n')
        L.append(f"The interleaved workload (47008-byte records, UNSTABLE, one COMMIT at the end) "
                 f"writing {a.sustained_factor} x {a.mem_limit >> 20} MiB with each server in a "
                 f"memory cgroup limited to {a.mem_limit >> 20} MiB ({info['cgroup']}), so that "
                 "a server that fills the page cache has to reclaim it. MiB/s acknowledged in "
                 "each second of the write phase is plotted; the final COMMIT (every WRITE "
                 "answered, the server writing back what it holds) follows it, and its length "
                 "is in the note. `last third / first third` is the ratio of the mean MiB/s at "
                 "the end of the write phase to that at its start (1.0 is flat). After the "
                 f"servers, fio writes the same bytes alone (`{FIO_SERIES}` in the plot: 1 MiB "
                 "O_DIRECT, iodepth 16, a new file on the same XFS): the disk's own course over "
                 "that much data, which the goal's verdict quotes beside nfsd-uc's.\n")
        L.append(sustained_table(host, series))
        L.append('')
        if 'sustained.png' in plots:
            L.append('![sustained](bench/sustained.png)\n')
    if any(is_gss(r) for r in host):
        L += gss_section(host, info)
    guest = [r for r in rows if is_guest(r)]
    L.append('## knfsd (in a qemu guest)\n')
    L.append(f"{info['knfsd']}.\n")
    if guest:
        L.append('These rows come from `bench/knfsd-guest.sh`: knfsd and nfsd-uc in the same qemu '
                 'guest, on the guest\'s disk. Compare them with each other, not with the host '
                 'rows above (another kernel, an emulated machine).\n')
        L.append('Device reads per WRITE, side by side:\n')
        L.append(guest_pivot(rows))
        L.append('')
        L.append('Every figure:\n')
        L.append(guest_table(rows))
        L.append('')

    # Hand-written analyses kept beside the plots: where the CPU goes (issue 33's profile) and
    # how the core scales past this machine.
    for name in ('profile.md', 'scaling.md'):
        page = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'docs',
                            'bench', name)
        if os.path.exists(page):
            with open(page) as f:
                L.append(f.read().rstrip('\n') + '\n')

    L.append('## How it was measured\n')
    L.append('\n'.join([
        '- Servers: nfsd-uc in each `write_mode` (`read_mode` set to the same mode), with its '
        'defaults otherwise' + (f' (threads {a.threads})' if a.threads else '') +
        (f' (cache {a.cache})' if a.cache else '') + '; NFS-Ganesha '
        '(Debian 12, FSAL VFS, NFSv3 only, defaults otherwise) with its own rpcbind. All of them '
        'on the same XFS, listening on 127.0.0.1 in a private network namespace; each measured '
        'case starts a fresh server process in a memory cgroup of its own and stops it after. '
        'A case is measured once its server has used no CPU for 0.3 s (at most 10 s after it '
        'said it was ready), so that no case is charged with what a server does once at its '
        'start (nfsd-uc faults in its reserve of cache frames then).',
        _load_generators_text(a),
        '- client_cpu (in the notes): user + system CPU seconds of the load generator over the '
        'phase, to tell a busy client from a slow server.',
        '- MiB/s: bytes the client wrote (or read and checked) over the time of the phase, the '
        'final COMMIT included, as the load generator measures it.',
        '- dev reads: the server process\'s `/proc/PID/io` read_bytes (all its threads, io_uring '
        'workers included) / 4096 over the measured phase; reads/WRITE divides it by the WRITEs '
        'sent; it also counts the server\'s own code and libraries paged in from the root disk '
        'after the caches are dropped before an overwrite. loop reads/WRITE: the loop device\'s '
        'read sectors (`/sys/block/loopN/stat`) in 4 KiB units per WRITE: the export\'s device; '
        'it also sees metadata reads of the file system itself (inode, extent map, directory: '
        'read once after the caches are dropped, by any server). file reads/WRITE: those of '
        'the loop device\'s read requests (the block_rq_issue trace event) that fell in the '
        'case\'s file\'s own blocks (placed by FIEMAP after the case), in 4 KiB units per WRITE: '
        'a block read back to complete a partial one, the goal\'s figure where it was traced.',
        '- write amp: bytes the loop device wrote (the file system synced with `sync -f` before '
        'the sample, so its log is counted) / bytes the client wrote.',
        '- page cache %: peak of the file\'s resident pages (cachestat(2), `fincore` on a kernel '
        'without it; sampled every second and '
        'at the end) as % of the bytes; Cached Δ %: the machine\'s `/proc/meminfo` Cached after '
        'minus before, same unit: it includes whatever else ran on the machine, and can be '
        'negative.',
        '- CPU s/GiB: the server process\'s utime + stime over the phase per GiB. The kernel\'s '
        'writeback threads are not in it: it flatters servers that write through the page cache '
        '(machine CPU s/GiB has them). '
        'Each case is a fresh process, so nfsd-uc\'s figure also holds the first touch of the '
        'cache\'s memory it maps beyond the reserve it faulted in before the case (see Servers '
        'above), up to its peak RSS, which a long-running server pays once: the kernel '
        'zeroes each new page, and on a virtual machine whose host backs a page only when it is '
        'touched (the 2-CPU one of docs/benchmarks.md), clear_page took 15% and 50% of the '
        'daemon\'s CPU in two runs of one fresh 47008-byte UNSTABLE case under perf.',
        '- machine CPU s/GiB: the whole machine\'s CPU seconds over the phase (`/proc/stat`, '
        'every CPU: user + nice + system + irq + softirq; not idle or iowait, when nothing ran, '
        'nor steal, when the hypervisor ran another guest), the final `sync -f` included, less '
        'the load generator\'s own user + system time (its rusage), per GiB. It holds what the '
        'server\'s own figure leaves out (the kernel\'s write-back threads, softirqs of the '
        'network and block layers), and also every other process on the machine: on a shared '
        'machine compare it between the servers of one run, never across runs.',
        '- peak RSS: the server\'s VmHWM at the end of the measured phase (a fresh process per '
        'case).',
        '- Overwrite cases and READ workloads start after `sync -f` and '
        '`echo 3 > /proc/sys/vm/drop_caches`; other cases after `sync -f`.',
        '- A case whose read-back finds one wrong byte is a failure (row marked FAILED), not a '
        'figure.',
    ]))
    L.append('')
    L.append('## Run times\n')
    if runtimes:
        L.append('Measured by bench/run on this machine (the latest of each matrix):\n')
        L.append(md_table(['matrix', 'date', 'minutes', 'load at start', 'command'],
                          [[r['matrix'], r['date'], f"{float(r['seconds']) / 60:.1f}",
                            r['load_start'], f"`{r['command']}`"] for r in runtimes]))
    L.append('')
    L.append('## Files\n')
    L.append('- [bench/results.csv](bench/results.csv): every row, columns as documented in the '
             'header of `bench/run`')
    if series:
        L.append('- [bench/sustained.csv](bench/sustained.csv): MiB/s of every second of the '
                 'sustained runs (commit = 1: waiting for the final COMMIT)')
    L.append('')
    return '\n'.join(L)


def summary(rows, goal_rows, info):
    host = [r for r in rows if not is_guest(r)]
    out = ['', '## Goals', md_table(['goal', 'target', 'measured', 'verdict'],
                                    [[g['goal'], g['target'], g['measured'], g['verdict']]
                                     for g in goal_rows])]
    base = baseline_section(rows)
    if base:
        out += [''] + base
    if any(r['workload'] == 'interleave' for r in host):
        out += ['', '## Interleaved records', interleave_tables(host, '###')]
        out += [''] + peers_section(rows)
    if any(r['workload'] in ('seqwrite', 'seqread', 'randwrite', 'randread') for r in host):
        out += ['', '## Sequential and random', io_table(host)]
    if any(r['workload'] == 'meta' for r in host):
        out += ['', '## Metadata', meta_table(host)]
    if any(r['workload'] == 'small' for r in host):
        out += ['', '## Small files', small_table(host)]
    if any(r['workload'] == 'sustained' for r in host):
        out += ['', '## Sustained']
        out += [' | '.join(f'{label(r)}: {fmt(r["mib_s"], 1)} MiB/s ({r["note"]})'
                           for r in host if r['workload'] == 'sustained')]
    if any(is_gss(r) for r in host):
        out += ['', '## Kerberos', gss_table(host, info.get('gss'))]
        if (info.get('gss') or {}).get('ops'):
            out += ['', f"gss-cost ({info['gss'].get('enctype', '?')}):", '',
                    gss_cost_table(info['gss'])]
    raws = [r for r in host if r['workload'] == 'raw']
    if raws:
        out += ['', 'raw device: ' + ', '.join(f"{r['note'].split()[1]} {fmt(r['mib_s'], 1)} MiB/s"
                                               for r in raws)]
    return '\n'.join(out)


# ---- writing it all

def write_csv(path, rows):
    with open(path, 'w', newline='') as f:
        w = csv.writer(f, lineterminator='\n')
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([csv_value(c, r.get(c)) for c in COLUMNS])


def write_series(path, series):
    with open(path, 'w', newline='') as f:
        w = csv.writer(f, lineterminator='\n')
        w.writerow(['server', 'mode', 't', 'mib_s', 'commit'])
        for lab, pts in series.items():
            srv, _, mode = lab.partition('/')
            for p in pts:
                w.writerow([srv, mode or '-', f'{p[0]:.3f}', f'{p[1]:.1f}',
                            p[2] if len(p) > 2 else 0])


RUNTIME_COLS = ['matrix', 'date', 'seconds', 'load_start', 'failures', 'command']


def runtimes_update(path, info):
    """The latest run of each matrix (the docs' copy keeps one line per matrix)."""
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            rows = [r for r in csv.DictReader(f) if r.get('matrix') != info['matrix']]
    rows.append(dict(matrix=info['matrix'], date=info['started'].strftime('%Y-%m-%d %H:%M UTC'),
                     seconds=f"{info['elapsed']:.1f}",
                     load_start=' / '.join(f'{x:.2f}' for x in info['load_start']),
                     failures=str(info['failures']), command=info['command']))
    rows.sort(key=lambda r: r['matrix'])
    with open(path, 'w', newline='') as f:
        w = csv.DictWriter(f, RUNTIME_COLS, lineterminator='\n')
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, '') for k in RUNTIME_COLS})
    return rows


def write_all(out, rows, series, info, repo):
    """The results directory, and docs/ when repo is given. Paths and the summary."""
    bdir = os.path.join(out, 'bench')
    os.makedirs(bdir, exist_ok=True)
    write_csv(os.path.join(bdir, 'results.csv'), rows)
    if series:
        write_series(os.path.join(bdir, 'sustained.csv'), series)
    plots = interleave_plots(rows, bdir) + sustained_plot(series, info['raw'].get('write'), bdir)
    docs_bench = os.path.join(repo, 'docs', 'bench') if repo else None
    rt_src = os.path.join(docs_bench, 'runtimes.csv') if docs_bench else None
    rt_path = os.path.join(bdir, 'runtimes.csv')
    if rt_src and os.path.exists(rt_src):
        shutil.copy(rt_src, rt_path)
    runtimes = runtimes_update(rt_path, info)
    g = goals(rows, info['raw'], series)
    if any(is_gss(r) for r in rows if not is_guest(r)):
        g += gss_goals(rows, info.get('gss'))
    with open(os.path.join(out, 'benchmarks.md'), 'w') as f:
        f.write(page(rows, series, info, g, plots, runtimes))
    res = {'summary': summary(rows, g, info), 'docs': []}
    if repo:
        os.makedirs(docs_bench, exist_ok=True)
        for name in os.listdir(docs_bench):      # the previous run's files
            if name.endswith(('.png', '.csv')):
                os.unlink(os.path.join(docs_bench, name))
        for name in os.listdir(bdir):
            shutil.copy(os.path.join(bdir, name), os.path.join(docs_bench, name))
            res['docs'].append(os.path.join('docs', 'bench', name))
        shutil.copy(os.path.join(out, 'benchmarks.md'), os.path.join(repo, 'docs', 'benchmarks.md'))
        res['docs'].insert(0, 'docs/benchmarks.md')
    return res
