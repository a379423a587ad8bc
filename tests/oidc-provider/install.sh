#!/usr/bin/env bash
# Installs the OpenID provider the gateway tests start, pinned
# (package-lock.json): npm's oidc-provider, an OpenID Certified
# authorization server, run by provider.mjs on loopback.
set -euo pipefail
cd "$(dirname "$0")"
exec ../support/npm-peer.sh "oidc-provider" "the gateway tests"
