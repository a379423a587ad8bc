#!/usr/bin/env bash
# Installs the MCP peers the tests run against, pinned: the reference
# servers and the inspector from npm (package-lock.json), and the official
# Python SDK (requirements.txt) in a virtual environment beside them.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
touch .installed
