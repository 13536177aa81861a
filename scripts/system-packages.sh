#!/usr/bin/env bash
# System packages some tests and the demo use, given as COMMAND:PACKAGE arguments: Graphviz's
# `dot` (drawings; dot:graphviz) and Chromium (the explorer's browser tests; chromium:chromium).
# `make test` and `make demo` run this first. It installs what is
# missing with apt-get when it can (as root, or with sudo that needs no password) and otherwise
# says what to install; it never fails the build: the tests that need a missing tool skip with a
# reason (and fail in CI, where CI is set and .ci/run expects these to be installed).
set -uo pipefail

need=()
for pair in "$@"; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
((${#need[@]})) || exit 0

if [ "$(id -u)" = 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo=(sudo -n)
else
  echo "note: ${need[*]} not installed and no root or password-less sudo to install it;" \
       "tests that need it will skip (install with: sudo apt-get install ${need[*]})" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "note: ${need[*]} not installed and apt-get is not available; tests that need it will skip" >&2
  exit 0
fi

echo "installing system packages: ${need[*]}" >&2
if ! { "${sudo[@]}" apt-get update -qq &&
       DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq \
         --no-install-recommends "${need[@]}" >/dev/null; }; then
  echo "note: installing ${need[*]} failed; tests that need it will skip" >&2
fi
exit 0
