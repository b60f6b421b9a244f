#!/usr/bin/env bash
# Installs the Debian packages named that are not installed yet (with sudo unless root); a
# second run installs nothing. Shared by tools/setup.sh and tools/fuzz.sh.
#
# Usage: tools/install_packages.sh LABEL PACKAGE...     (LABEL prefixes the line it prints)
set -euo pipefail
label=$1
shift

missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "$label: installing missing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
