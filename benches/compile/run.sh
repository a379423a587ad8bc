#!/usr/bin/env bash
# Compile-time cost of #[iris::tool]: clean and incremental builds of the
# same 100 tools written seven ways (see generate.py), measured in one run on
# this machine. Incremental builds follow an edit of one body that keeps the
# file's length, and one that moves the text after it. The figures to compare: a registered tool against the
# hand-written derive + dispatch, and against rmcp's #[tool_router].
# Usage: benches/compile/run.sh [ROUNDS] (default 5).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
rounds="${1:-5}"
work="${COMPILE_BENCH_DIR:-$root/target/compile-bench}"
rm -rf "$work/src-tree"
python3 "$root/benches/compile/generate.py" "$work/src-tree" "$root"
cd "$work/src-tree"
# The generated workspace resolves the same dependency versions as Iris
# (rmcp, which Iris does not use, is resolved on top).
cp "$root/Cargo.lock" Cargo.lock
export CARGO_TARGET_DIR="$work/target"
export CARGO_TERM_QUIET=true

crates=(plain derive dispatch iris registered cataloged toolbox rmcp)

# Dependencies are built once, for each crate on its own (their feature sets
# differ: building them together would unify them); only the generated
# crates are timed.
for crate in "${crates[@]}"; do
  cargo build -p "bench-$crate" >/dev/null 2>&1 || cargo build -p "bench-$crate"
done

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.3f}')"; }

measure_clean() {
  local crate="$1" start end
  cargo clean -p "bench-$crate" >/dev/null 2>&1
  start=$(now); cargo build -p "bench-$crate" >/dev/null; end=$(now)
  elapsed "$start" "$end"
}

# Edits one function body and rebuilds. `same`: the literal changes but
# keeps its length, so nothing after it in the file moves; `longer`: it
# grows by a character, so everything after it moves, as most edits do
# (rustc then redoes more of the code that macros wrote after the edit).
measure_incremental() {
  local crate="$1" round="$2" how="$3" start end text
  text="r$((round % 10))"
  if [ "$how" = longer ]; then text+="$(printf 'l%.0s' $(seq 1 "$round"))"; fi
  sed -i -E "s/tool 50[^:]*: /tool 50 ${text}: /" "$crate/src/lib.rs"
  start=$(now); cargo build -p "bench-$crate" >/dev/null; end=$(now)
  elapsed "$start" "$end"
}

declare -A clean incr longer
for crate in "${crates[@]}"; do
  clean[$crate]=""; incr[$crate]=""; longer[$crate]=""
done
for round in $(seq 1 "$rounds"); do
  # Interleaved so that drift on a shared machine hits every variant alike.
  for crate in "${crates[@]}"; do
    clean[$crate]+="$(measure_clean "$crate") "
    # The clean build left the literal as generated: one length-keeping
    # edit first, so that the timed one starts from a settled build.
    measure_incremental "$crate" 0 same >/dev/null
    incr[$crate]+="$(measure_incremental "$crate" "$round" same) "
    longer[$crate]+="$(measure_incremental "$crate" "$round" longer) "
  done
done

args=()
for crate in "${crates[@]}"; do
  args+=("$crate=${clean[$crate]}|${incr[$crate]}|${longer[$crate]}")
done
python3 - "${args[@]}" <<'PY'
import statistics, sys
runs = {}
for arg in sys.argv[1:]:
    name, times = arg.split("=", 1)
    runs[name] = tuple([float(x) for x in part.split()] for part in times.split("|"))
med = {n: tuple(statistics.median(t) for t in parts) for n, parts in runs.items()}
print(f"{'':12} {'clean build (s)':>16} {'incremental (s)':>16} {'text moved (s)':>16}")
for n, (c, i, l) in med.items():
    print(f"{n:12} {c:>16.3f} {i:>16.3f} {l:>16.3f}")
def ratio(a, b):
    return (f"clean {med[a][0] / med[b][0]:.3f}x   incremental {med[a][1] / med[b][1]:.3f}x"
            f"   text moved {med[a][2] / med[b][2]:.3f}x")
print(f"registered / dispatch: {ratio('registered', 'dispatch')}   (goal: at most 1.15x)")
print(f"rmcp / registered:     {ratio('rmcp', 'registered')}   (goal: at least 1.3x)")
print(f"toolbox / dispatch:    {ratio('toolbox', 'dispatch')}")
print(f"iris / derive:         {ratio('iris', 'derive')}   (unregistered)")
print(f"cataloged / derive:    {ratio('cataloged', 'derive')}   (each tool in the assembly catalog; goal: at most 1.15x)")
print(f"rounds: {len(next(iter(runs.values()))[0])}, medians; raw: {runs}")
PY
