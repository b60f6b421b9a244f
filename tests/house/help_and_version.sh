#!/usr/bin/env bash
# The command-line convention of tools/cli_conventions.hpp, checked on every program the project
# builds for people to run: `--help` prints its usage and exits 0, `--version` prints
# "PROGRAM VERSION" and exits 0, an unknown flag prints a message and exits 2, and none of the
# three starts the program's work (each call has 20 s). wsemu's subcommands, read from
# `wsemu --help`, answer `--help` and an unknown flag the same way.
# Usage: help_and_version.sh BIN_DIR PROGRAM...
set -uo pipefail
bin=$1
shift
failures=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# expect WANTED_EXIT DESCRIPTION COMMAND...: runs it, fails unless it exits WANTED_EXIT having
# printed something.
expect() {
  local wanted=$1 what=$2
  shift 2
  timeout 20 "$@" >"$out" 2>&1
  local got=$?
  if [[ $got -ne $wanted || ! -s $out ]]; then
    echo "FAIL: $what: exit $got (want $wanted), $(wc -c <"$out") bytes of output: $(head -c 200 "$out")"
    failures=$((failures + 1))
  else
    echo "ok: $what"
  fi
}

for program in "$@"; do
  expect 0 "$program --help" "$bin/$program" --help
  expect 0 "$program --version" "$bin/$program" --version
  if ! grep -q "^$program [0-9]" "$out"; then
    echo "FAIL: $program --version printed '$(head -c 200 "$out")', not '$program VERSION'"
    failures=$((failures + 1))
  fi
  expect 2 "$program --no-such-flag" "$bin/$program" --no-such-flag
done

subcommands=$("$bin/wsemu" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 && /^  [a-z]/ {print $1}')
[[ -n $subcommands ]] || { echo "FAIL: no subcommands in wsemu --help"; failures=$((failures + 1)); }
for sub in $subcommands; do
  expect 0 "wsemu $sub --help" "$bin/wsemu" "$sub" --help
  expect 2 "wsemu $sub --no-such-flag" "$bin/wsemu" "$sub" --no-such-flag
done

echo "$failures failure(s)"
[[ $failures -eq 0 ]]
