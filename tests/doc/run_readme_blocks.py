#!/usr/bin/env python3
"""Runs the shell blocks of README files, so that the documented commands cannot drift.

Usage:
  run_readme_blocks.py --source DIR --build DIR README.md [README.md ...]
      runs every ```sh block of each README (a path relative to --source), in order, in one bash
      session per README (set -euo pipefail) whose working folder mirrors the source tree
      (symlinks to its top-level entries; `build` -> --build), with --build/bin on PATH.
  run_readme_blocks.py --source DIR --list
      checks the markers of every README under DIR and prints every shell block (file:line, run
      or skip and why) without running anything.

The markers (HTML comments on the lines right above a block) are documented in
tests/doc/README.md. Exit status: 0 when every block ran as its markers say, 1 when one did not,
2 for a malformed marker or a block that looks like a command but is not tagged.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

SHELL_TAGS = ('sh', 'bash')
DEFAULT_TIMEOUT_S = 60
MARKER = re.compile(r'^\s*<!--\s*doctest:\s*(.*?)\s*-->\s*$')
FENCE = re.compile(r'^( {0,3})(`{3,})\s*([^`\s]*)')
# A block tagged neither sh nor anything else whose first line reads like a command was most
# likely meant to run: the doc-test must not skip it silently.
LOOKS_LIKE_COMMAND = re.compile(
    r'^(\$ |build/bin/|tools/\w+\.sh|cmake |ctest |wsemu(-memoryx|-swarmx)? [a-z][\w-]*(\s|$))')
SKIPPED_DIRS = ('.git', '.doctest')


class MarkerError(Exception):
    pass


class Block:
    def __init__(self, path, line, tag, body, markers):
        self.path, self.line, self.tag, self.body = path, line, tag, body
        self.skip = None
        self.exit_code = 0
        self.expects = []
        self.timeout_s = DEFAULT_TIMEOUT_S
        for marker_line, text in markers:
            self._apply(marker_line, text)

    def _apply(self, marker_line, text):
        where = f'{self.path}:{marker_line}'
        if text.startswith('skip'):
            reason = text[4:].lstrip(':').strip()
            if not reason:
                raise MarkerError(f'{where}: "skip" needs a reason: <!-- doctest: skip: WHY -->')
            self.skip = reason
        elif m := re.fullmatch(r'exit\s+(\d+)', text):
            self.exit_code = int(m.group(1))
        elif m := re.fullmatch(r'expect\s+"(.*)"', text):
            self.expects.append(m.group(1))
        elif m := re.fullmatch(r'timeout\s+(\d+)', text):
            self.timeout_s = int(m.group(1))
        else:
            raise MarkerError(f'{where}: unknown doctest marker "{text}" '
                              '(skip: WHY | exit N | expect "TEXT" | timeout SECONDS)')

    @property
    def runs(self):
        return self.tag in SHELL_TAGS and self.skip is None


def parse_blocks(root, path):
    """Every fenced block of one README (shell or not), with the markers right above it."""
    with open(os.path.join(root, path), encoding='utf-8') as f:
        lines = f.read().split('\n')
    blocks, pending, i = [], [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        marker = MARKER.match(lines[i])
        if marker:
            pending.append((i + 1, marker.group(1)))
            i += 1
            continue
        if not fence:
            if pending and lines[i].strip():
                raise MarkerError(f'{path}:{pending[0][0]}: a doctest marker must stand on the '
                                  'line(s) right above a fenced block')
            i += 1
            continue
        indent, ticks, tag = fence.group(1), fence.group(2), fence.group(3)
        start, body, i = i + 1, [], i + 1
        while i < len(lines) and not re.match(rf'^ {{0,3}}{ticks}`*\s*$', lines[i]):
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        i += 1
        if pending and tag not in SHELL_TAGS:
            raise MarkerError(f'{path}:{start}: doctest markers above a block not tagged sh')
        blocks.append(Block(path, start, tag, body, pending))
        pending = []
    if pending:
        raise MarkerError(f'{path}:{pending[0][0]}: a doctest marker with no block below it')
    for block in blocks:
        first = next((l for l in block.body if l.strip()), '')
        if block.tag == '' and LOOKS_LIKE_COMMAND.match(first):
            raise MarkerError(f'{path}:{block.line}: this untagged block looks like a command; '
                              'tag it ```sh (it then runs) or ```text (a synopsis or output)')
    return [b for b in blocks if b.tag in SHELL_TAGS]


def find_readmes(root):
    found = []
    for folder, dirs, files in os.walk(root, followlinks=True):  # a scratch folder is links
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith('build')
                         and not os.path.exists(os.path.join(folder, d, 'CMakeCache.txt')))
        if 'README.md' in files:
            found.append(os.path.relpath(os.path.join(folder, 'README.md'), root))
    return sorted(found)


def describe(block):
    if block.skip is not None:
        return f'skip: {block.skip}'
    what = [f'exit {block.exit_code}'] if block.exit_code else []
    what += [f'expect "{e}"' for e in block.expects]
    return 'run' + (f' ({", ".join(what)})' if what else '')


def numpy_python():
    """A python3 that imports numpy (the READMEs make their inputs with it), or None."""
    for candidate in (shutil.which('python3'), '/usr/bin/python3', sys.executable):
        if candidate and subprocess.run([candidate, '-c', 'import numpy'],
                                        capture_output=True).returncode == 0:
            return candidate
    return None


def make_scratch(source, build, work):
    """A working folder that looks like the source tree, with `build` -> the CTest build tree."""
    if os.path.lexists(work):
        shutil.rmtree(work)
    os.makedirs(os.path.join(work, '.doctest', 'bin'))
    for entry in os.listdir(source):
        if entry in SKIPPED_DIRS or entry.startswith('build'):
            continue
        os.symlink(os.path.join(source, entry), os.path.join(work, entry))
    os.symlink(build, os.path.join(work, 'build'))
    python = numpy_python()
    if python:
        os.symlink(python, os.path.join(work, '.doctest', 'bin', 'python3'))
    return python


def bash_script(blocks, work):
    out = ['set -euo pipefail', f'cd {shquote(work)}',
           'doctest_mark() { echo "$*" >> .doctest/status; }']
    for n, block in enumerate(blocks):
        if not block.runs:
            continue
        body = '\n'.join(block.body)
        log = f'.doctest/{n}.out'
        out.append(f'doctest_mark begin {n}')
        if block.exit_code == 0:
            out.append(f'{{\n{body}\n}} > {log} 2>&1 < /dev/null')
            out.append(f'doctest_mark end {n} 0')
        else:
            # A block that must fail runs in a subshell, so that its failure does not end the
            # session (and so its cd and variables do not carry over either).
            out.append('set +e')
            out.append(f'(\nset -euo pipefail\n{body}\n) > {log} 2>&1 < /dev/null')
            out.append(f'doctest_rc=$?\nset -e\ndoctest_mark end {n} $doctest_rc')
    return '\n'.join(out) + '\n'


def shquote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def read_status(work):
    try:
        with open(os.path.join(work, '.doctest', 'status')) as f:
            return [line.split() for line in f if line.strip()]
    except FileNotFoundError:
        return []


def read_text(path):
    try:
        with open(path, errors='replace') as f:
            return f.read()
    except FileNotFoundError:
        return ''


def tail(path, lines=40):
    text = read_text(path).rstrip('\n').split('\n')
    if text == ['']:
        return '    (no output)'
    if len(text) > lines:
        text = [f'... ({len(text) - lines} lines above)'] + text[-lines:]
    return '\n'.join('    | ' + l for l in text)


def run_readme(source, build, readme, verbose):
    blocks = parse_blocks(source, readme)
    print(f'{readme}: {len(blocks)} shell block(s)')
    if not any(b.runs for b in blocks):
        for b in blocks:
            print(f'  {b.path}:{b.line}  {describe(b)}')
        return True
    work = os.path.join(build, 'doctest', readme.replace('/', '_').removesuffix('.md'))
    python = make_scratch(source, build, work)
    if not python:
        print('  note: no python3 with numpy found (tools/setup.sh installs python3-numpy); '
              'blocks that make their inputs with numpy will fail')
    with open(os.path.join(work, '.doctest', 'script.sh'), 'w') as f:
        f.write(bash_script(blocks, work))
    env = dict(os.environ)
    env['PATH'] = os.pathsep.join([os.path.join(build, 'bin'), os.path.join(work, '.doctest', 'bin'),
                                   env.get('PATH', '')])
    started = time.monotonic()
    shell = subprocess.Popen(['bash', os.path.join(work, '.doctest', 'script.sh')], cwd=work,
                             env=env, start_new_session=True, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    began, ended, timed_out = {}, {}, None
    while True:
        done = shell.poll() is not None
        for fields in read_status(work):
            n = int(fields[1])
            if fields[0] == 'begin' and n not in began:
                began[n] = time.monotonic()
            elif fields[0] == 'end' and n not in ended:
                ended[n] = (int(fields[2]), time.monotonic() - began.get(n, started))
        running = [n for n in began if n not in ended]
        if done:
            break
        if running and time.monotonic() - began[running[0]] > blocks[running[0]].timeout_s:
            timed_out = running[0]
            break
        time.sleep(0.05)
    # Whatever a README started in the background (nodes, servers) ends with its session.
    try:
        os.killpg(shell.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    shell_output = shell.communicate()[0].decode(errors='replace')
    shell_rc = shell.returncode

    ok = True
    for n, block in enumerate(blocks):
        where = f'{block.path}:{block.line}'
        if not block.runs:
            print(f'  {where}  {describe(block)}')
            continue
        log = os.path.join(work, '.doctest', f'{n}.out')
        if n in ended:
            rc, seconds = ended[n]
        elif n in began:
            rc = 'timeout' if n == timed_out else shell_rc
            seconds = time.monotonic() - began[n]
        else:
            print(f'  {where}  not reached (an earlier block failed)')
            ok = False
            continue
        problems = []
        if rc == 'timeout':
            problems.append(f'still running after {block.timeout_s} s (marker: timeout N)')
        elif rc != block.exit_code:
            problems.append(f'exit status {rc}, expected {block.exit_code}')
        if rc != 'timeout':
            output = read_text(log)
            problems += [f'output lacks "{e}"' for e in block.expects if e not in output]
        status = 'FAIL: ' + '; '.join(problems) if problems else 'ok'
        print(f'  {where}  {describe(block)}: {status} ({seconds:.1f} s)')
        if problems or verbose:
            print('    $ ' + '\n    $ '.join(block.body).rstrip())
            print(tail(log))
        ok = ok and not problems
    if not ok and shell_output.strip():
        print('  the session itself printed:\n' + '\n'.join('    | ' + l for l in
                                                         shell_output.rstrip().split('\n')))
    print(f'  {time.monotonic() - started:.1f} s in all, scratch folder {work}')
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--source', required=True)
    parser.add_argument('--build')
    parser.add_argument('--list', action='store_true')
    parser.add_argument('-v', '--verbose', action='store_true', help='print every output')
    parser.add_argument('readmes', nargs='*')
    args = parser.parse_args()
    source = os.path.abspath(args.source)
    try:
        if args.list:
            counts = {'run': 0, 'skip': 0}
            for readme in find_readmes(source):
                for block in parse_blocks(source, readme):
                    counts['run' if block.runs else 'skip'] += 1
                    print(f'{block.path}:{block.line}  {describe(block)}')
            print(f'{counts["run"]} shell blocks run, {counts["skip"]} skipped')
            return 0
        if not args.build or not args.readmes:
            parser.error('give --build and at least one README (or --list)')
        build = os.path.abspath(args.build)
        results = [run_readme(source, build, r, args.verbose) for r in args.readmes]
        return 0 if all(results) else 1
    except MarkerError as e:
        print(f'error: {e}')
        return 2


if __name__ == '__main__':
    sys.exit(main())
