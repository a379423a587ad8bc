#!/usr/bin/env bash
# Instructions and allocations per call of the same `square` call three ways:
# (a) the floor (parse, call, serialize), (b) Iris's `execute_one`, (d) rmcp's
# `ToolRouter::call`. Instruction counts come from callgrind, which the load
# of a shared machine does not change; only the calls are counted (see
# src/bin/count_square.rs). Needs valgrind.
# Usage: benches/rmcp-baseline/count.sh [CALLS] (default 20480).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
calls="${1:-20480}"
command -v valgrind >/dev/null || { echo "count.sh needs valgrind (apt install valgrind)" >&2; exit 1; }
cargo build --quiet --release --manifest-path "$here/Cargo.toml" --bin count_square
target="$(cargo metadata --format-version 1 --no-deps --manifest-path "$here/Cargo.toml" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
bin="$target/release/count_square"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
declare -A instr allocs
for mode in floor iris rmcp; do
  valgrind --tool=callgrind --toggle-collect='*measured_calls*' \
    --callgrind-out-file="$out/$mode.out" "$bin" "$mode" "$calls" 2>"$out/$mode.log" \
    || { cat "$out/$mode.log" >&2; exit 1; }
  total="$(sed -n 's/^summary: //p; s/^totals: //p' "$out/$mode.out" | head -1)"
  made="$(sed -n 's/^calls \([0-9]*\) .*/\1/p' "$out/$mode.log")"
  instr[$mode]="$(python3 -c "print(f'{$total / $made:.0f}')")"
  allocs[$mode]="$(sed -n 's/.*allocations_per_call \([0-9.]*\).*/\1/p' "$out/$mode.log")"
done
printf '%-28s %14s %12s\n' "" "instructions" "allocations"
printf '%-28s %14s %12s\n' "(a) floor" "${instr[floor]}" "${allocs[floor]}"
printf '%-28s %14s %12s\n' "(b) iris execute_one" "${instr[iris]}" "${allocs[iris]}"
printf '%-28s %14s %12s\n' "(d) rmcp ToolRouter::call" "${instr[rmcp]}" "${allocs[rmcp]}"
python3 - "${instr[floor]}" "${instr[iris]}" "${instr[rmcp]}" <<'PY'
import sys
floor, iris, rmcp = map(float, sys.argv[1:])
print(f"(b)/(a) = {iris / floor:.2f}  (goal: at most 2.0)   (d)/(b) = {rmcp / iris:.2f}  (goal: above 1.0)")
PY
