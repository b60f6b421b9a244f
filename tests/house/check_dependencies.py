#!/usr/bin/env python3
"""Checks that every #include between the project's folders is an allowed edge.

Usage: check_dependencies.py ROOT EDGES_FILE
Scans the C++ sources under ROOT (skipping build trees and this test's fixtures), maps each file
and each included header to its folder by the longest prefix listed in EDGES_FILE, and prints
every include whose edge is not listed, with file:line. Exit 0 when there is none, 1 otherwise,
2 for a bad edges file. Generated headers (protobuf, version) belong to the folder they name.
"""
import os
import re
import sys

SOURCE_SUFFIXES = ('.cpp', '.hpp', '.h', '.cc')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_edges(path):
    allowed = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            if ':' not in line:
                sys.exit(f'{path}:{number}: expected "FOLDER: DEPS..."')
            folder, deps = line.split(':', 1)
            allowed[folder.strip()] = set(deps.split())
    return allowed


def folder_of(path, folders):
    best = None
    for folder in folders:
        if path == folder or path.startswith(folder + '/'):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    root, edges_file = sys.argv[1], sys.argv[2]
    allowed = read_edges(edges_file)
    folders = list(allowed)
    violations, checked = [], 0
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        dirnames[:] = [d for d in dirnames if not d.startswith(('build', '.')) and
                       not (rel_dir == os.path.join('tests', 'house') and d.startswith('fixture'))]
        for name in filenames:
            if not name.endswith(SOURCE_SUFFIXES):
                continue
            rel = os.path.normpath(os.path.join(rel_dir, name))
            source = folder_of(rel, folders)
            if source is None or '*' in allowed[source]:
                continue
            with open(os.path.join(root, rel), errors='replace') as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m or '/' not in m.group(1):
                        continue
                    checked += 1
                    target = folder_of(m.group(1), folders)
                    if target is None or target == source or target in allowed[source]:
                        continue
                    # "compiler" in a deps list allows every compiler/... folder.
                    if any(target.startswith(dep + '/') for dep in allowed[source]):
                        continue
                    violations.append(f'{rel}:{number}: {source} may not include {m.group(1)} '
                                      f'({target}); allowed: {" ".join(sorted(allowed[source])) or "nothing"}')
    for v in violations:
        print(v)
    print(f'{checked} includes between folders checked, {len(violations)} not allowed '
          f'(edges: {edges_file})')
    return 1 if violations else 0


if __name__ == '__main__':
    sys.exit(main())
