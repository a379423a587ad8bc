#!/usr/bin/env bash
# Compile-time cost of #[iris::tool]: clean and incremental builds of 100
# tools, against the same 100 plain functions (a) and against hand-written
# #[derive(Deserialize, JsonSchema)] argument structs (b), measured in one
# run on this machine. Usage: benches/compile/run.sh [ROUNDS] (default 5).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
rounds="${1:-5}"
work="${COMPILE_BENCH_DIR:-$root/target/compile-bench}"
rm -rf "$work/src-tree"
python3 "$root/benches/compile/generate.py" "$work/src-tree" "$root"
cd "$work/src-tree"
# The generated workspace resolves the same dependency versions as Iris.
cp "$root/Cargo.lock" Cargo.lock
export CARGO_TARGET_DIR="$work/target"
export CARGO_TERM_QUIET=true

# Dependencies are built once; only the generated crates are timed.
cargo build --workspace >/dev/null 2>&1 || cargo build --workspace

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.3f}')"; }

measure_clean() {
  local crate="$1" start end
  cargo clean -p "bench-$crate" >/dev/null 2>&1
  start=$(now); cargo build -p "bench-$crate" >/dev/null; end=$(now)
  elapsed "$start" "$end"
}

# Edits one function body (a different literal each round) and rebuilds.
measure_incremental() {
  local crate="$1" round="$2" start end
  sed -i "s/tool 50: /tool 50 r${round}: /; s/tool 50 r[0-9]*: /tool 50 r${round}: /" "$crate/src/lib.rs"
  start=$(now); cargo build -p "bench-$crate" >/dev/null; end=$(now)
  elapsed "$start" "$end"
}

declare -A clean incr
for crate in plain derive iris; do
  clean[$crate]=""; incr[$crate]=""
done
for round in $(seq 1 "$rounds"); do
  # Interleaved so that drift on a shared machine hits every variant alike.
  for crate in plain derive iris; do
    clean[$crate]+="$(measure_clean "$crate") "
    incr[$crate]+="$(measure_incremental "$crate" "$round") "
  done
done

python3 - "${clean[plain]}" "${clean[derive]}" "${clean[iris]}" "${incr[plain]}" "${incr[derive]}" "${incr[iris]}" <<'PY'
import statistics, sys
vals = [[float(x) for x in a.split()] for a in sys.argv[1:]]
med = [statistics.median(v) for v in vals]
low = [min(v) for v in vals]
names = ["(a) plain", "(b) derive", "iris"]
print(f"{'':12} {'clean build (s)':>16} {'incremental (s)':>16}")
for i, n in enumerate(names):
    print(f"{n:12} {med[i]:>16.3f} {med[i+3]:>16.3f}")
print(f"iris / (b):  clean {med[2]/med[1]:.3f}x   incremental {med[5]/med[4]:.3f}x   (goal: at most 1.15x)")
print(f"iris / (a):  clean {med[2]/med[0]:.3f}x   incremental {med[5]/med[3]:.3f}x")
print(f"fastest runs, iris / (b): clean {low[2]/low[1]:.3f}x   incremental {low[5]/low[4]:.3f}x")
print(f"rounds: {len(vals[0])}, medians; raw clean: {vals[:3]}, raw incremental: {vals[3:]}")
PY
