#!/usr/bin/env bash
# What each feature of `iris` costs a user's first build: the crates it
# brings (beyond the default features) and the time of a cold debug build of
# `iris` with it, each in a target folder of its own so that nothing is
# shared between rows. Prints a Markdown table (the one in the guide's
# "Features and what they cost" chapter). Takes a while: one cold build per row.
#
#   benches/features/measure.sh [FEATURE ...]    # default: every feature
set -euo pipefail
cd "$(dirname "$0")/../.."

features=("$@")
if [ ${#features[@]} -eq 0 ]; then
  features=(default none macros runner assembly openai anthropic gemini mcp decision
    skills otlp sqlite restate object-store testing cassettes cli encoder)
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The crates a build of `iris` with these flags compiles (normal and build
# dependencies, proc macros included; dev-dependencies are not the user's).
crates() {
  cargo tree -p iris --locked -e normal,build --prefix none "$@" 2>/dev/null \
    | sed 's/ (\*)$//; s/ (proc-macro)$//' | sort -u | wc -l
}

flags_for() {
  case "$1" in
    default) echo "" ;;
    none) echo "--no-default-features" ;;
    *) echo "--no-default-features --features $1" ;;
  esac
}

default_crates=$(crates)
echo "| feature | crates | beyond the defaults | cold build |"
echo "|---|---:|---:|---:|"
for feature in "${features[@]}"; do
  # shellcheck disable=SC2046
  count=$(crates $(flags_for "$feature"))
  rm -rf "$scratch/target"
  start=$(date +%s)
  # shellcheck disable=SC2046
  if ! CARGO_TARGET_DIR="$scratch/target" CARGO_INCREMENTAL=0 \
    cargo build -p iris --locked --quiet $(flags_for "$feature") >"$scratch/build.log" 2>&1; then
    echo "the build with \`$feature\` failed:" >&2
    cat "$scratch/build.log" >&2
    exit 1
  fi
  seconds=$(( $(date +%s) - start ))
  beyond=$(( count - default_crates ))
  [ "$beyond" -lt 0 ] && beyond="$beyond" || beyond="+$beyond"
  echo "| \`$feature\` | $count | $beyond | ${seconds} s |"
done
