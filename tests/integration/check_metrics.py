#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check a Prometheus text exposition of nfsd-uc (a file, or stdin) the way a scraper reads it:
parsed by the official Python client's parser (prometheus_client.parser, Debian's
python3-prometheus-client), every family with a HELP and a TYPE and no family given twice,
counters' samples ending in _total, histograms' buckets cumulative and ending at +Inf with their
_count, and the families every nfsd-uc exposes (nfsd_uc_build_info, the process_* families, the
calls in flight, the per-export series). Run by tests/integration/test_metrics.c on a scrape of
a running daemon; further arguments NAME:TYPE are families this text must hold too (it-gss asks
for the RPCSEC_GSS ones, which only a daemon with a keytab has). Exit 0, 1 with the reasons, or 77
(skip) without the client library."""
import re
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print('check_metrics: python3-prometheus-client is missing (scripts/install-deps.sh)',
          file=sys.stderr)
    sys.exit(77)

NAME = re.compile(r'^[a-z_][a-z0-9_]*$')
REQUIRED = {
    'nfsd_uc_build_info': 'gauge',
    'nfsd_uc_requests_in_flight': 'gauge',
    'nfsd_uc_requests': 'counter',
    'nfsd_uc_request_duration_seconds': 'histogram',
    'nfsd_uc_cache_writeback_size_bytes': 'histogram',
    'nfsd_uc_lock_callback_results': 'counter',
    'nfsd_uc_export_requests': 'counter',
    'nfsd_uc_export_written_bytes': 'counter',
    'nfsd_uc_export_read_bytes': 'counter',
    'process_cpu_seconds': 'counter',
    'process_resident_memory_bytes': 'gauge',
    'process_virtual_memory_bytes': 'gauge',
    'process_open_fds': 'gauge',
    'process_max_fds': 'gauge',
    'process_start_time_seconds': 'gauge',
}


def comment_names(text, kind):
    """The metric names of the text's '# KIND name ...' lines, in order."""
    return [line.split()[2] for line in text.splitlines() if line.startswith('# ' + kind + ' ')]


def check_histogram(fam, errors):
    """Each label set's buckets cumulative, the last +Inf, equal to its _count."""
    series = {}
    for s in fam.samples:
        key = tuple(sorted((k, v) for k, v in s.labels.items() if k != 'le'))
        series.setdefault(key, {'buckets': [], 'count': None})
        if s.name.endswith('_bucket'):
            series[key]['buckets'].append((float(s.labels['le']), s.value))
        elif s.name.endswith('_count'):
            series[key]['count'] = s.value
    for key, h in series.items():
        b = h['buckets']
        if not b or b[-1][0] != float('inf'):
            errors.append(f'{fam.name}{dict(key)}: no +Inf bucket')
            continue
        if any(b[i][1] > b[i + 1][1] or b[i][0] >= b[i + 1][0] for i in range(len(b) - 1)):
            errors.append(f'{fam.name}{dict(key)}: buckets not cumulative')
        if h['count'] != b[-1][1]:
            errors.append(f'{fam.name}{dict(key)}: _count {h["count"]} != +Inf {b[-1][1]}')


def check(text, required):
    errors = []
    families = list(text_string_to_metric_families(text))
    seen = {}
    for fam in families:
        if fam.name in seen:
            errors.append(f'{fam.name}: family given twice (split)')
        seen[fam.name] = fam
        if not fam.documentation.strip():
            errors.append(f'{fam.name}: no HELP')
        if fam.type == 'unknown':
            errors.append(f'{fam.name}: no TYPE')
        if not NAME.match(fam.name):
            errors.append(f'{fam.name}: not a snake_case name')
        for s in fam.samples:
            if fam.type == 'counter' and not s.name.endswith('_total'):
                errors.append(f'{s.name}: a counter\'s sample without _total')
        if fam.type == 'histogram':
            check_histogram(fam, errors)
    # A HELP or TYPE line of a name no sample uses, or one given twice, is an error too.
    for kind in ('HELP', 'TYPE'):
        names = comment_names(text, kind)
        for n in {n for n in names if names.count(n) > 1}:
            errors.append(f'# {kind} {n}: given twice')
    for name, kind in required.items():
        if name not in seen:
            errors.append(f'{name}: missing')
        elif seen[name].type != kind:
            errors.append(f'{name}: {seen[name].type}, want {kind}')
    info = seen.get('nfsd_uc_build_info')
    if info and not any(s.labels.get('version') and s.value == 1 for s in info.samples):
        errors.append('nfsd_uc_build_info: no sample {version=...} 1')
    return families, errors


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else '-'
    required = dict(REQUIRED)
    for arg in sys.argv[2:]:
        name, _, kind = arg.partition(':')
        required[name] = kind
    text = sys.stdin.read() if path == '-' else open(path, encoding='utf-8').read()
    try:
        families, errors = check(text, required)
    except ValueError as e:   # the parser's refusal of a line
        print(f'check_metrics: not parsed: {e}', file=sys.stderr)
        return 1
    for e in errors:
        print('check_metrics: ' + e, file=sys.stderr)
    samples = sum(len(f.samples) for f in families)
    print(f'check_metrics: {len(families)} families, {samples} samples, '
          f'{len(errors)} problem(s)')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
