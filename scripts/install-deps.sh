#!/usr/bin/env bash
# Installs aiprof's build and test dependencies from Debian 12's packages.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
PKGS=(g++ cmake ninja-build pkg-config python3
      libsimdjson-dev libfmt-dev libcli11-dev libxxhash-dev zlib1g-dev libzstd-dev
      libsqlite3-dev libyaml-cpp-dev libboost-math-dev libre2-dev nettle-dev
      libgtest-dev libgmock-dev libbenchmark-dev)
# Each part of aiprof that needs more packages lists them, one a line, in
# scripts/deps/<part>.txt ('#' starts a comment).
for f in "$(dirname "$0")"/deps/*.txt; do
  [ -e "$f" ] || continue
  # A line may be "PACKAGE if-missing:COMMAND": skipped when COMMAND already runs.
  while read -r p cond _; do
    case "$p" in ''|'#'*) continue ;; esac
    case "$cond" in if-missing:*) command -v "${cond#if-missing:}" >/dev/null 2>&1 && continue ;; esac
    PKGS+=("$p")
  done < "$f"
done
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
