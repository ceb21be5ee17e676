#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The shape of the code, checked (the suite's test "layers"; docs/architecture.md explains it).

  scripts/layers.py SOURCE_ROOT [BUILD_ROOT]

1. Layers. Each folder of src/ is a layer with a rank; a file may include headers of its own
   folder and of folders of a lower rank only: dependencies point down. Folders of one rank are
   independent of each other (the four programs do not include one another). The programs
   include the file-system layer, xdr/ and, of svc/, only the dispatch header; never io/ or
   cache/. Includes of our headers are path-qualified ("svc/worker.h"), except in the folders
   that keep their own names (the cache's private headers, rpcgen's output, the stats tool).
2. No io_uring header reaches a program's object, even through another header: with a build
   directory, the compiler's own record of each object's headers (ninja -t deps) says so.
3. Size: no .c file of src/ or tests/ over 800 lines, no function over 80.

Exit 0, or 1 with one line per finding.
"""
import os
import re
import subprocess
import sys

RANK = {
    'base': 0,              # log, arena, socket addresses
    'io': 1,                # rings, fibers, fiber-aware locks, the blocking pool
    'xdr': 1,               # rpcgen's codecs, the zero-copy READ/WRITE paths
    'rpc': 2,               # record marking, headers, DRC, the callback client
    'conf': 3,              # the conf file, client rules, host names
    'cache': 3,             # the write-behind cache (an ops table reaches the disk)
    'fs': 4,                # the file-system layer: one verb per operation
    'svc': 5,               # ring threads, connections, listeners, dispatch
    'nfs3': 6, 'mount': 6, 'lock': 6, 'pmap': 6,   # the programs
    'ops': 7,               # metrics, counters, the service list
    '': 8,                  # main.c: builds the layers bottom-up
    'tools': 9,             # nfsd-uc-stat: a program of its own
}
PROGRAMS = {'nfs3', 'mount', 'lock', 'pmap'}
PROGRAM_SVC_HEADERS = {'svc/dispatch.h'}
PROGRAM_FORBIDDEN = {'io', 'cache'}
OWN_NAMES = {'cache', 'xdr', 'tools'}   # may include their own headers unqualified
# io_uring's headers as the compiler records them: liburing's (liburing.h, liburing/*.h), the
# kernel's (linux/io_uring.h), and ours that carries them (io/ring.h).
URING = re.compile(r'(^|/)(liburing\.h|liburing/[^/]+\.h|linux/io_uring\.h|io/ring\.h)$')

FILE_MAX = 800
FUNC_MAX = 80

# Known departures, each until the commit that ends it; one that no longer occurs is reported
# too, so that these lists only shrink.
ALLOWED_INCLUDES = set()
ALLOWED_URING = set()
# Files and functions to split by theme.
ALLOWED_LONG_FILES = set()
ALLOWED_LONG_FUNCS = set()

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(rel):
    """'src/svc/worker.c' -> 'svc'; 'src/main.c' -> ''."""
    parts = rel.split('/')
    return parts[1] if len(parts) > 2 else ''


def check_includes(root, rel, text, out, seen):
    me = folder_of(rel)
    here = os.path.dirname(os.path.join(root, rel))
    for name in INCLUDE.findall(text):
        if '/' not in name:
            generated = name.endswith('.h') and os.path.exists(os.path.join(here, name[:-2] + '.x'))
            if (os.path.exists(os.path.join(here, name)) or generated) and me in OWN_NAMES:
                continue
            if os.path.exists(os.path.join(here, name)):
                if me != '':
                    report(out, seen, rel, name, 'include it path-qualified')
                continue
            if not os.path.exists(os.path.join(root, 'src', name)):
                report(out, seen, rel, name, 'not a header of this folder or of src/')
                continue
            dep = ''
        else:
            dep = name.split('/')[0]
        if dep not in RANK:
            if not os.path.exists(os.path.join(root, 'src', name)):
                report(out, seen, rel, name, 'no such header under src/')
            continue
        if dep == me:
            continue
        if RANK[dep] >= RANK[me]:
            what = 'a higher layer' if RANK[dep] > RANK[me] else 'a layer of the same rank'
            report(out, seen, rel, name, f'{what} ({dep or "src"}/ is {RANK[dep]}, {me or "src"}/ {RANK[me]})')
        elif me in PROGRAMS and (dep in PROGRAM_FORBIDDEN or
                                 (dep == 'svc' and name not in PROGRAM_SVC_HEADERS)):
            report(out, seen, rel, name, 'a program includes fs/, xdr/ and svc/dispatch.h only')


def report(out, seen, rel, name, why):
    seen.add((rel, name))
    if (rel, name) not in ALLOWED_INCLUDES:
        out.append(f'{rel}: #include "{name}": {why}')


def functions(text):
    """(name, body lines, line) of each function: kernel style, braces at column 0."""
    lines = text.split('\n')
    start = None
    for i, line in enumerate(lines):
        if start is None and line == '{' and i > 0:
            j = i - 1
            while j > 0 and not re.match(r'[A-Za-z_]', lines[j]):
                j -= 1
            m = re.search(r'([A-Za-z_]\w*)\s*\(', lines[j])
            name, start = (m.group(1) if m else '?'), i
        elif start is not None and line.startswith('}'):
            yield name, i - start - 1, start + 1
            start = None


def check_sizes(rel, text, out, seen):
    if not rel.endswith('.c'):
        return
    n = text.count('\n')
    if n > FILE_MAX:
        seen.add(rel)
        if rel not in ALLOWED_LONG_FILES:
            out.append(f'{rel}: {n} lines (at most {FILE_MAX}: split it by theme)')
    for name, body, line in functions(text):
        if body > FUNC_MAX:
            seen.add((rel, name))
            if (rel, name) not in ALLOWED_LONG_FUNCS:
                out.append(f'{rel}:{line}: {name}() is {body} lines (at most {FUNC_MAX})')


def check_uring(build, out, seen):
    """Program sources whose objects' recorded headers include io_uring's."""
    try:
        deps = subprocess.run(['ninja', '-C', build, '-t', 'deps'], capture_output=True,
                              text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        out.append(f'{build}: cannot read the build\'s header dependencies: {e}')
        return
    src = None
    for line in deps.split('\n'):
        if line and not line[0].isspace():
            m = re.match(r'src/(nfs3|mount|lock|pmap)/libnfsduc_\w+\.a\.p/(\w+\.c)\.o:', line)
            src = f'src/{m.group(1)}/{m.group(2)}' if m else None
        elif src and URING.search(line.strip()):
            seen.add(('uring', src))
            if ('uring', src) not in ALLOWED_URING:
                out.append(f'{src}: io_uring reaches this program\'s object through '
                           f'{line.strip()}')
            src = None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    build = sys.argv[2] if len(sys.argv) > 2 else None
    out, seen = [], set()
    for top in ('src', 'tests'):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith(('.c', '.h')):
                    continue
                rel = os.path.relpath(os.path.join(d, f), root)
                with open(os.path.join(d, f), errors='replace') as fh:
                    text = fh.read()
                if top == 'src':
                    check_includes(root, rel, text, out, seen)
                check_sizes(rel, text, out, seen)
    allowed = ALLOWED_INCLUDES | ALLOWED_LONG_FILES | ALLOWED_LONG_FUNCS
    if build:
        check_uring(build, out, seen)
        allowed |= ALLOWED_URING
    for gone in sorted(allowed - seen, key=str):
        out.append(f'{gone}: listed as allowed in scripts/layers.py but no longer found: drop it')
    for line in out:
        print(line)
    return 1 if out else 0


if __name__ == '__main__':
    sys.exit(main())
