#!/usr/bin/env bash
# Refreshes the generated instruction list in isa/README.md from the instruction table.
# Usage: isa/update_reference.sh [path/to/wsemu]   (default: build/bin/wsemu)
set -euo pipefail
cd "$(dirname "$0")/.."
wsemu=${1:-build/bin/wsemu}
list=$("$wsemu" isa --markdown)
python3 - "$list" <<'PY'
import sys
begin, end = "<!-- BEGIN GENERATED INSTRUCTION LIST -->\n", "<!-- END GENERATED INSTRUCTION LIST -->"
text = open("isa/README.md").read()
a, b = text.index(begin) + len(begin), text.index(end)
open("isa/README.md", "w").write(text[:a] + sys.argv[1] + "\n" + text[b:])
PY
echo "isa/README.md: instruction list refreshed"
