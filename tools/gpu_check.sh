#!/usr/bin/env bash
# Runs every cuda-marked test and every benchmark suite on the GPU, in one go, then flies the default
# mission twice on CUDA and reports whether the two records are bit-identical (a report, not a test:
# the GPU is only promised tolerance, since contact solves add forces in a race-dependent order).
# Without a CUDA device it says so and exits 0: there is nothing to check.
set -euo pipefail
BIN=${1:-.venv/bin}
if ! "$BIN/python" -c 'import sys, warp as wp; wp.config.log_level = wp.LOG_ERROR; wp.init(); sys.exit(0 if wp.get_cuda_device_count() else 1)'; then
    echo "gpu-check: no CUDA device on this machine; skipping the GPU tests and benchmarks."
    exit 0
fi
nvidia-smi || true
"$BIN/python" -m pytest -q -m cuda
"$BIN/nexus" bench --suite all --device cuda
"$BIN/nexus" bench --suite all --device cuda --json
"$BIN/nexus" plan --device cuda --verbose

# Two flights of the default mission on CUDA: same seed, same code. The flight suite above states the
# target (rtf_captured >= 19 on one H200); this part only says whether CUDA repeats itself bit for bit.
RUNS=$(mktemp -d)
trap 'rm -rf "$RUNS"' EXIT
for name in first second; do
    "$BIN/nexus" run --device cuda --quiet --out "$RUNS/$name"
done
"$BIN/python" - "$RUNS/first" "$RUNS/second" <<'PY'
import sys

from nexus.replay import compare, load_run

first_info, first = load_run(sys.argv[1])
second_info, second = load_run(sys.argv[2])
print(f"gpu-check: two CUDA flights of the default mission: {first_info['ticks']} and {second_info['ticks']} ticks, "
      f"RTF {first_info['real_time_factor']:.1f}x and {second_info['real_time_factor']:.1f}x")
result = compare(first, second)
missing = sorted(set(first) ^ set(second))
if result.identical and not missing and first_info["ticks"] == second_info["ticks"]:
    print(f"gpu-check: the records are bit-identical ({len(result.compared)} columns, {result.ticks} rows)")
elif result.first_difference is None:
    print(f"gpu-check: the records differ in length or columns (not in either: {missing})")
else:
    tick, column = result.first_difference
    print(f"gpu-check: the records differ; first at tick {tick}, column {column} "
          f"(first {result.details.get('recorded')}, second {result.details.get('replayed')})")
PY
