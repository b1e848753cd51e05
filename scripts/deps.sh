#!/usr/bin/env bash
# Install what building and testing ubikit needs on a fresh Debian machine
# (packages listed in scripts/deps.txt, one per line). Idempotent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t pkgs < <(grep -v '^\s*\(#\|$\)' "$here/deps.txt")
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
