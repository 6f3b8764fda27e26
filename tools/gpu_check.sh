#!/usr/bin/env bash
# Runs every cuda-marked test and every benchmark suite on the GPU, in one go.
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
