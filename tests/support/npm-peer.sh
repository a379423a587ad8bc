#!/usr/bin/env bash
# Installs the npm peer in the folder it is run from, pinned by its
# package-lock.json, once per lock (stamped in .installed).
# Usage, from a peer's install.sh: npm-peer.sh "<what it installs>" "<which tests need it>"
set -euo pipefail
what=$1
needed_by=$2
here="tests/$(basename "$(pwd)")/install.sh"
stamp=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat .installed 2>/dev/null)" = "$stamp" ]; then
    exit 0
fi
if ! command -v npm >/dev/null; then
    echo "$here: npm is not installed; $needed_by need it" >&2
    exit 1
fi
echo "$here: npm ci into $(pwd)/node_modules ($what)" >&2
npm ci --no-audit --no-fund --loglevel=error
echo "$stamp" > .installed
