#!/usr/bin/env bash
# Installs the S3-compatible server the object-store artifact tests run
# against, pinned (requirements.txt): moto's server mode, in a virtual
# environment beside this script.
set -euo pipefail
cd "$(dirname "$0")"
stamp=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ "$(cat .installed 2>/dev/null)" = "$stamp" ]; then
    exit 0
fi
if ! command -v python3 >/dev/null; then
    echo "tests/s3-server/install.sh: python3 is not installed; the S3 tests need it" >&2
    exit 1
fi
echo "tests/s3-server/install.sh: pip into $(pwd)/.venv (moto, an S3-compatible server)" >&2
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
echo "$stamp" > .installed
