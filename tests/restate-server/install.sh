#!/usr/bin/env bash
# Installs the Restate server the durable-run tests start, pinned
# (package-lock.json): npm's linux-x64 build, a single binary, no container.
set -euo pipefail
cd "$(dirname "$0")"
exec ../support/npm-peer.sh "the Restate server" "the Restate tests"
