#!/usr/bin/env bash
# Installs the OpenID provider the gateway tests start, pinned
# (package-lock.json): npm's oidc-provider, an OpenID Certified
# authorization server, run by provider.mjs on loopback.
set -euo pipefail
cd "$(dirname "$0")"
stamp=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat .installed 2>/dev/null)" = "$stamp" ]; then
    exit 0
fi
if ! command -v npm >/dev/null; then
    echo "tests/oidc-provider/install.sh: npm is not installed; the gateway tests need it" >&2
    exit 1
fi
echo "tests/oidc-provider/install.sh: npm ci into $(pwd)/node_modules (oidc-provider)" >&2
npm ci --no-audit --no-fund --loglevel=error
echo "$stamp" > .installed
