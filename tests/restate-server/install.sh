#!/usr/bin/env bash
# Installs the Restate server the durable-run tests start, pinned
# (package-lock.json): npm's linux-x64 build, a single binary, no container.
set -euo pipefail
cd "$(dirname "$0")"
stamp=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat .installed 2>/dev/null)" = "$stamp" ]; then
    exit 0
fi
if ! command -v npm >/dev/null; then
    echo "tests/restate-server/install.sh: npm is not installed; the Restate tests need it" >&2
    exit 1
fi
echo "tests/restate-server/install.sh: npm ci into $(pwd)/node_modules (the Restate server)" >&2
npm ci --no-audit --no-fund --loglevel=error
echo "$stamp" > .installed
