#!/usr/bin/env bash
# Installs the MCP peers the tests run against, pinned: the reference
# servers and the inspector from npm (package-lock.json), and the official
# Python SDK (requirements.txt) in a virtual environment beside them.
set -euo pipefail
cd "$(dirname "$0")"
# What is installed: a changed lock or requirements file installs again.
stamp=$(cat package-lock.json requirements.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat .installed 2>/dev/null)" = "$stamp" ]; then
    exit 0
fi
for tool in npm python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "tests/mcp-peers/install.sh: $tool is not installed; the MCP peer tests need it" >&2
        exit 1
    fi
done
echo "tests/mcp-peers/install.sh: npm ci into $(pwd)/node_modules (the reference servers and inspector), pip into $(pwd)/.venv (the Python SDK)" >&2
npm ci --no-audit --no-fund --loglevel=error
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
echo "$stamp" > .installed
