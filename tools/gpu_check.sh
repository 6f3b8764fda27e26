#!/usr/bin/env bash
# The GPU check: what a GPU changes, in one prepared run within a budget, every step's result kept as it ends.
#
#   tools/gpu_check.sh [--results DIR] [--budget S] [--only "STEP..."] [--device cpu] [--quick] [--without "MOD..."] [BIN]
#   tools/gpu_check.sh --dry-run [--results DIR] [BIN]
#
# BIN: the folder holding `python` and `nexus` (default .venv/bin; /tmp/g/bin on the GPU machine, ../shared/GPU.md).
# Without a CUDA device (and without --device cpu) it says so and exits 0: there is nothing to check.
#
# Steps, most important first (docs/benchmarking.md, "The GPU check"), each under its own time limit:
#   flight1   nexus run --device cuda: the default mission (on a cold Warp cache this compiles the flight's kernels)
#   flight2   the same flight again
#   compare   are the two records bit-identical? (a report: CUDA is promised tolerance, not bits)
#   flight    nexus bench --suite flight --device cuda --json  (rtf_captured >= 19 on one H200)
#   worlds    ... --suite worlds (1, 1,024, 4,096 and 16,384 worlds; >= 10 M drone-steps/s at 16,384)
#   pytest    python -m pytest -m cuda (the test files that hold cuda-marked tests)
#   diff, render, engine, plant, sensors: ... --suite NAME --device cuda --json
# host, sweep and px4 are CPU suites and are not run. A suite whose optional packages are missing is skipped
# with a line that says so (nexus/bench/suites.py: NEEDS).
#
# Results, under DIR (default /tmp/nexus-gpu-check-<UTC time>), each written when its step ends:
#   plan.json                 the steps, their limits, the device, the code
#   env.txt                   date, code, Python, Warp, nvidia-smi
#   NN-STEP.status.json       the step's exit status, status (ok, failed, timed out, skipped, not run), seconds, limit
#   NN-STEP.log               its output (stdout and stderr)
#   NN-STEP.json              a suite's JSON (as `nexus bench --json` prints it), or the comparison's
#   runs/flight1, runs/flight2  the two flights' run folders
#   summary.txt, summary.json every step with its status and its figures against their targets; rewritten after
#                             every step, so a check cut short still leaves one
# A failing step is reported and the next one runs. Exit status: 0 when every step that ran passed (targets
# missed are reported, not failures), 1 when a step failed or timed out, 2 on bad arguments.
#
# Options:
#   --results DIR     where the results go (created; must be empty or absent)
#   --budget S        the whole check's time limit, default 480 (8 minutes); a step gets its own limit or what is
#                     left of the budget, whichever is less, and a step with under 15 s left is not run
#   --only "STEP..."  run only these steps (the others are listed as not selected)
#   --device cpu      run the steps on the CPU (a dry run of the check's mechanics)
#   --quick           a few ticks and rounds per suite and a 3 s flight: minutes, not measurements
#   --without "MOD..." make these Python modules unimportable for every step, as on a machine that lacks them
#   --dry-run         --device cpu --quick --without "casadi ray polars imageio_ffmpeg": the GPU machine's
#                     missing packages, on this machine's CPU
# Environment:
#   NEXUS_GPU_CHECK_FAIL="STEP[:hang]..."  make these steps fail on purpose (exit 1 without running), or hang
#                     until their time limit (":hang"), to check that the others still run and report
#   NEXUS_GPU_CHECK_LIMITS="STEP=S..."     override steps' time limits [s]
#   NEXUS_GPU_CHECK_CODE="..."             the code's commit and date, where the copy has no .git
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2

BIN=.venv/bin RESULTS="" BUDGET=480 ONLY="" DEVICE=cuda QUICK=0 WITHOUT=""
while [ $# -gt 0 ]; do
    case $1 in
        --results) RESULTS=${2:?--results needs a folder}; shift 2;;
        --budget) BUDGET=${2:?--budget needs seconds}; shift 2;;
        --only) ONLY=${2:?--only needs step names}; shift 2;;
        --device) DEVICE=${2:?--device needs cpu or cuda}; shift 2;;
        --quick) QUICK=1; shift;;
        --without) WITHOUT=${2:?--without needs module names}; shift 2;;
        --dry-run) DEVICE=cpu QUICK=1 WITHOUT="casadi ray polars imageio_ffmpeg"; shift;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0;;
        -*) echo "gpu-check: unknown option $1 (see tools/gpu_check.sh --help)" >&2; exit 2;;
        *) BIN=$1; shift;;
    esac
done
case $DEVICE in cpu|cuda) ;; *) echo "gpu-check: --device $DEVICE: choose cpu or cuda" >&2; exit 2;; esac
case $BUDGET in ''|*[!0-9]*) echo "gpu-check: --budget $BUDGET: give whole seconds" >&2; exit 2;; esac
START=$(date +%s)  # the budget counts from here: the probe and the set-up are part of the check
PY="$BIN/python" NEXUS="$BIN/nexus"
[ -x "$PY" ] || { echo "gpu-check: no $PY; run make setup, or give the folder holding python and nexus" >&2; exit 2; }
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1

if [ "$DEVICE" != cpu ]; then
    DEVICE_NAME=$("$PY" tools/gpu_check.py probe 2>/dev/null); probe=$?  # Warp warns on stderr when it finds no driver
    if [ $probe -eq 3 ]; then
        echo "gpu-check: no CUDA device on this machine; skipping the GPU tests and benchmarks (nothing to check)."
        [ -n "$RESULTS" ] && mkdir -p "$RESULTS" && echo "no CUDA device on this machine: nothing checked" > "$RESULTS/summary.txt"
        exit 0
    elif [ $probe -ne 0 ]; then
        echo "$DEVICE_NAME" >&2; exit 1
    fi
else
    DEVICE_NAME="cpu (a dry run of the check on the CPU)"
fi

STAMP=$(date -u +%Y-%m-%dT%H:%M:%SZ)
R=${RESULTS:-${TMPDIR:-/tmp}/nexus-gpu-check-$(date -u +%Y%m%dT%H%M%SZ)}
if [ -e "$R" ] && [ -n "$(ls -A "$R" 2>/dev/null)" ]; then
    echo "gpu-check: $R is not empty; give --results a new or empty folder" >&2; exit 2
fi
case $R in *[[:space:]]*) echo "gpu-check: --results $R: give a folder whose path has no spaces" >&2; exit 2;; esac
mkdir -p "$R/runs" || exit 2
R=$(cd "$R" && pwd)
if [ -n "$WITHOUT" ]; then  # a stub package per module that fails to import, first on the path of every step
    for mod in $WITHOUT; do
        mkdir -p "$R/without/$mod"
        printf 'raise ModuleNotFoundError("No module named %s (left out by tools/gpu_check.sh --without)", name="%s")\n' \
            "'$mod'" "$mod" > "$R/without/$mod/__init__.py"
    done
    export PYTHONPATH="$R/without:$PYTHONPATH"
fi
if CODE=$(git log -1 --format='%h %cd' --date=format:%Y-%m-%d 2>/dev/null); then
    git diff --quiet HEAD 2>/dev/null || CODE="$CODE, with uncommitted changes"
else
    CODE=${NEXUS_GPU_CHECK_CODE:-unknown (no git here: say which in NEXUS_GPU_CHECK_CODE)}
fi
{
    echo "date: $STAMP"; echo "code: $CODE"; echo "device: $DEVICE_NAME"
    echo "python: $("$PY" -c 'import sys; print(sys.version.split()[0])' 2>&1)"
    echo "warp: $("$PY" -c 'import warp; print(warp.config.version)' 2>&1)"
    echo "without: ${WITHOUT:-nothing}"; echo
    nvidia-smi 2>&1 || true
} > "$R/env.txt"

QUICK_FLAG=() RUN_QUICK=()
[ $QUICK -eq 1 ] && QUICK_FLAG=(--quick) RUN_QUICK=(--duration 3)
PYTEST_FILES=$(grep -rlE --include='test_*.py' 'mark\.cuda' tests | sort | tr '\n' ' ')
PYTEST_WORKERS=()
if [ "$DEVICE" != cpu ] && "$PY" -c 'import xdist' 2>/dev/null; then
    PYTEST_WORKERS=(-n 4 --dist loadfile)  # the CPU halves of the cuda tests compile CPU kernels: in parallel
fi

# name  limit[s]  title  command...   (the order is the order of importance)
PLAN=(
    "flight1|120|the default mission on $DEVICE (a cold cache compiles its kernels)|$NEXUS run --device $DEVICE --quiet ${RUN_QUICK[*]} --out $R/runs/flight1"
    "flight2|40|the default mission again|$NEXUS run --device $DEVICE --quiet ${RUN_QUICK[*]} --out $R/runs/flight2"
    "compare|20|the two flights' records, bit for bit|$PY tools/gpu_check.py compare $R/runs/flight1 $R/runs/flight2 --json-out @JSON"
    "flight|110|nexus bench --suite flight|$PY tools/gpu_check.py bench flight $DEVICE ${QUICK_FLAG[*]} --json-out @JSON"
    "worlds|140|nexus bench --suite worlds|$PY tools/gpu_check.py bench worlds $DEVICE ${QUICK_FLAG[*]} --json-out @JSON"
    "pytest|100|python -m pytest -m cuda|$PY -m pytest -q -m cuda -p no:cacheprovider ${PYTEST_WORKERS[*]} --junitxml @STEM.xml $PYTEST_FILES"
    "diff|60|nexus bench --suite diff|$PY tools/gpu_check.py bench diff $DEVICE ${QUICK_FLAG[*]} --json-out @JSON"
    "render|60|nexus bench --suite render|$PY tools/gpu_check.py bench render $DEVICE ${QUICK_FLAG[*]} --json-out @JSON"
    "engine|25|nexus bench --suite engine|$PY tools/gpu_check.py bench engine $DEVICE ${QUICK_FLAG[*]} --json-out @JSON"
    "plant|25|nexus bench --suite plant|$PY tools/gpu_check.py bench plant $DEVICE ${QUICK_FLAG[*]} --json-out @JSON"
    "sensors|25|nexus bench --suite sensors|$PY tools/gpu_check.py bench sensors $DEVICE ${QUICK_FLAG[*]} --json-out @JSON"
)
# A CPU dry run compiles CPU kernels on a shared machine: give every step more room (still within the budget).
[ "$DEVICE" = cpu ] && CPU_SLACK=4 || CPU_SLACK=1
[ "$DEVICE" = cpu ] && [ "$BUDGET" -eq 480 ] && BUDGET=1800

limit_of() {  # limit_of NAME DEFAULT: NEXUS_GPU_CHECK_LIMITS's value for NAME, else DEFAULT (times CPU_SLACK)
    local item
    for item in ${NEXUS_GPU_CHECK_LIMITS:-}; do
        [ "${item%%=*}" = "$1" ] && { echo "${item#*=}"; return; }
    done
    echo $(( $2 * CPU_SLACK ))
}
faked() {  # faked NAME: "fail", "hang" or nothing, from NEXUS_GPU_CHECK_FAIL
    local item
    for item in ${NEXUS_GPU_CHECK_FAIL:-}; do
        case $item in "$1") echo fail; return;; "$1:hang") echo hang; return;; esac
    done
}
status_json() {  # status_json ID NAME STATUS RC SECONDS LIMIT NOTE COMMAND
    "$PY" - "$@" <<'PY'
import json, sys
sid, name, status, rc, seconds, limit, note, command = sys.argv[1:9]
data = {"id": sid, "step": name, "status": status, "rc": None if rc == "" else int(rc),
        "seconds": None if seconds == "" else round(float(seconds), 1), "limit_s": None if limit == "" else int(limit),
        "note": note, "command": command}
data = {k: v for k, v in data.items() if v is not None}
with open(sys.argv[9], "w") as f:
    json.dump(data, f, sort_keys=True)
PY
}

# plan.json: the steps in order (the summary lists them all, run or not)
n=0 PLAN_LINES=""
for entry in "${PLAN[@]}"; do
    n=$((n + 1)); IFS='|' read -r name limit title _ <<< "$entry"
    PLAN_LINES+="$(printf '%02d-%s' "$n" "$name")|$name|$(limit_of "$name" "$limit")|$title"$'\n'
done
"$PY" - "$R/plan.json" "$STAMP" "$CODE" "$DEVICE" "$DEVICE_NAME" "$QUICK" "$WITHOUT" "$BUDGET" <<PY
import json, sys
path, stamp, code, device, name, quick, without, budget = sys.argv[1:9]
steps = [dict(zip(("id", "step", "limit_s", "title"), line.split("|", 3))) for line in """$PLAN_LINES""".splitlines() if line]
for step in steps:
    step["limit_s"] = int(step["limit_s"])
json.dump({"started_utc": stamp, "code": code, "device": device, "device_name": name, "quick": quick == "1",
           "without": without, "budget_s": int(budget), "steps": steps}, open(path, "w"), indent=1)
PY

echo "gpu-check: $DEVICE_NAME; code $CODE; results in $R; budget ${BUDGET} s"
FAILED=0 n=0
for entry in "${PLAN[@]}"; do
    n=$((n + 1)); IFS='|' read -r name limit title command <<< "$entry"
    id=$(printf '%02d-%s' "$n" "$name")
    limit=$(limit_of "$name" "$limit")
    command=${command//@JSON/$R/$id.json}; command=${command//@STEM/$R/$id}
    if [ -n "$ONLY" ] && [[ " $ONLY " != *" $name "* ]]; then
        status_json "$id" "$name" "not selected" "" "" "" "not in --only" "$command" "$R/$id.status.json"
        continue
    fi
    left=$(( BUDGET - ($(date +%s) - START) - 5 ))
    if [ $left -lt 15 ]; then
        echo "gpu-check: [$id] not run: the check's budget of $BUDGET s is spent"
        status_json "$id" "$name" "not run" "" "" "" "the check's budget of $BUDGET s was spent" "$command" "$R/$id.status.json"
        "$PY" tools/gpu_check.py summary "$R" > /dev/null
        continue
    fi
    [ $limit -gt $left ] && limit=$left
    read -r -a argv <<< "$command"
    case $(faked "$name") in
        fail) argv=(bash -c "echo 'gpu-check: step $name fails on purpose (NEXUS_GPU_CHECK_FAIL)'; exit 1");;
        hang) argv=(bash -c "echo 'gpu-check: step $name hangs on purpose (NEXUS_GPU_CHECK_FAIL)'; exec sleep 100000");;
    esac
    echo "gpu-check: [$id] $title (limit $limit s)"
    began=$(date +%s%N)
    { echo "\$ $command"; } > "$R/$id.log"
    timeout -k 10 "$limit" "${argv[@]}" >> "$R/$id.log" 2>&1 < /dev/null
    rc=$?
    ms=$(( ($(date +%s%N) - began) / 1000000 )); seconds=$((ms / 1000)).$(printf %03d $((ms % 1000)))
    case $rc in
        0) status=ok note="";;
        75) status=skipped note=$(grep -m1 -o 'suite .* skipped: .*' "$R/$id.log" || echo "an optional package is missing");;
        124|137) status="timed out" note="stopped at its time limit of $limit s"; FAILED=1;;
        *) status=failed note="exit status $rc"; FAILED=1;;
    esac
    status_json "$id" "$name" "$status" "$rc" "$seconds" "$limit" "$note" "$command" "$R/$id.status.json"
    printf 'gpu-check: [%s] %s in %.0f s%s\n' "$id" "$status" "$seconds" "${note:+ ($note)}"
    if [ "$status" = failed ] || [ "$status" = "timed out" ]; then
        tail -n 5 "$R/$id.log" | sed 's/^/    /'
    fi
    "$PY" tools/gpu_check.py summary "$R" > /dev/null
done
echo
"$PY" tools/gpu_check.py summary "$R"
echo "gpu-check: results in $R"
exit $FAILED
