#!/usr/bin/env bash
# One command that runs the suite's GPU paths on a bare single-GPU machine (aimed at one H200,
# under 8 minutes in all) and keeps going past a failed step: every step is bounded by `timeout`,
# and the summary lists each step's exit status and seconds.
#
#   bash bench/gpu_check.sh                      # results and logs under reports/gpu_check/
#   OUT=/some/dir bash bench/gpu_check.sh        # ... under $OUT
#   GPU_CHECK_DRY_RUN=1 bash bench/gpu_check.sh  # print the commands, run nothing
#   GPU_CHECK_ONLY=install,training bash ...     # run only these steps (names as in summary.tsv)
#   GPU_CHECK_BUDGET_S=450                       # the whole check's time limit (default 450 s)
#
# Writes under $OUT: gpu_check.log (every step's output), summary.tsv (step, exit status,
# seconds), results-<step>.json (the results files), <step>.md (the pytest summaries),
# preflight.json, telemetry.json. Exit status: 0 when every step passed, else 1.
#
# A machine without a package registry. It needs torch (any CUDA build: 2.11+cu130 works) and
# this project's dependencies; the ones it lacks come as wheels carried in `.whl/` at the
# repository root. Download them on a machine with a registry (Python 3.12, x86_64 Linux):
#
#   for w in torchdata==0.11.0 pytest-benchmark==5.3.1 nvidia-ml-py==13.615.71 tabulate==0.10.0 \
#            hypothesis==6.170.17; do
#     python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d .whl "$w"
#   done
#
# (add psutil, safetensors, pillow, scipy, matplotlib, fsspec, pyyaml the same way if the machine
# lacks them; s3fs and moto are optional: without them the storage sweep leaves s3 out). The
# script installs them with
#   pip install --no-index --no-deps --target /tmp/site .whl/*.whl; export PYTHONPATH=/tmp/site
# and, when `import trainbench` fails, makes the project importable without pip or setuptools:
# /tmp/site/trainbench is a tree of links to plugin/ (reference_models/ as trainbench.models), and
# a dist-info folder carries the pytest11 entry point, so pytest loads the plugin as if installed.
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-reports/gpu_check}
PY=${PYTHON:-python3}
DRY=${GPU_CHECK_DRY_RUN:-0}
SITE=${GPU_CHECK_SITE:-/tmp/site}
ONLY=${GPU_CHECK_ONLY:-}
FORCE_LINK=${GPU_CHECK_FORCE_LINK:-0}  # link the project into $SITE even when it is importable (tests)
mkdir -p "$OUT"
LOG="$OUT/gpu_check.log"
SUMMARY="$OUT/summary.tsv"
: >"$LOG"
printf 'step\texit\tseconds\n' >"$SUMMARY"
FAILED=()

BUDGET=${GPU_CHECK_BUDGET_S:-450}  # the whole check: each step's timeout is cut to what is left
START=$SECONDS

# step NAME SECONDS CMD...: run CMD bounded by `timeout` (and the budget), log it, record its status
step() {
    local name=$1 limit=$2
    shift 2
    if [ -n "$ONLY" ] && [[ ",$ONLY," != *",$name,"* ]]; then return 0; fi
    local left=$((BUDGET - (SECONDS - START)))
    [ "$limit" -gt "$left" ] && limit=$left
    echo "== $name (timeout ${limit}s): $*" | tee -a "$LOG"
    if [ "$DRY" = 1 ]; then
        printf '%s\tdry-run\t0\n' "$name" >>"$SUMMARY"
        return 0
    fi
    if [ "$limit" -lt 10 ]; then
        printf '%s\tno-time-left\t0\n' "$name" >>"$SUMMARY"
        FAILED+=("$name (not run: the ${BUDGET}s budget was spent)")
        return 0
    fi
    local t0=$SECONDS rc
    timeout --kill-after=15 "$limit" "$@" >>"$LOG" 2>&1
    rc=$?
    finish "$name" "$rc" "$t0"
}

finish() {
    local name=$1 rc=$2 t0=$3
    printf '%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - t0))" >>"$SUMMARY"
    [ "$rc" = 0 ] || FAILED+=("$name (exit $rc$([ "$rc" = 124 ] && echo ', timed out'))")
    echo "== $name: exit $rc after $((SECONDS - t0))s" | tee -a "$LOG"
}

has() { "$PY" -c "import $1" >/dev/null 2>&1; }

# -- make the project and its missing dependencies importable, without a registry ----------------
install_offline() {
    if compgen -G ".whl/*.whl" >/dev/null; then
        "$PY" -m pip install --no-index --no-deps --target "$SITE" .whl/*.whl || return 1
        export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
    fi
    [ "$FORCE_LINK" != 1 ] && has trainbench && return 0
    mkdir -p "$SITE/trainbench" || return 1
    local entry
    for entry in plugin/*; do ln -sfn "$ROOT/$entry" "$SITE/trainbench/$(basename "$entry")"; done
    ln -sfn "$ROOT/reference_models" "$SITE/trainbench/models"
    local info="$SITE/pytest_trainbench-0.1.0.dist-info"
    mkdir -p "$info"
    printf 'Metadata-Version: 2.1\nName: pytest-trainbench\nVersion: 0.1.0\n' >"$info/METADATA"
    printf '[pytest11]\ntrainbench = trainbench.pytest_plugin.hooks\n\n[console_scripts]\ntrainbench = trainbench.cli:main\n' \
        >"$info/entry_points.txt"
    export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
    has trainbench
}

# a shell function cannot run under `timeout`, and its exports must reach the steps: run it here
echo "== install: wheels from .whl/ into $SITE; the project linked there unless importable" | tee -a "$LOG"
if [ "$DRY" != 1 ] && { [ -z "$ONLY" ] || [[ ",$ONLY," == *",install,"* ]]; }; then
    t0=$SECONDS
    install_offline >>"$LOG" 2>&1
    finish install $? "$t0"
fi

PYTEST=("$PY" -m pytest -p no:cacheprovider -q -rA)
TB=("$PY" -m trainbench.cli)
res() { echo "--trainbench-results=$OUT/results-$1.json" "--trainbench-report=$OUT/$1.md"; }

# -- the machine, as the driver and torch see it ---------------------------------------------------
step environment 60 bash -c "nvidia-smi; $PY -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)'"

# -- preflight: environment, memory fit, pipeline checks (bf16) ---------------------------------------
step preflight 120 "${TB[@]}" preflight --precision=bf16 --data-dir="$OUT" --results="$OUT/preflight.json"
# >>> hardware tier (issue 18): runs only once `trainbench preflight --hardware` exists on main
if [ "$DRY" = 1 ] || "${TB[@]}" preflight --help 2>/dev/null | grep -q -- '--hardware'; then
    step preflight-hardware 90 "${TB[@]}" preflight --hardware --burn-s 30 --results="$OUT/preflight-hardware.json"
fi
# <<< hardware tier

# -- full presets of every workload at bf16 and fp16 ---------------------------------------------------
# shellcheck disable=SC2046
step training 240 "${PYTEST[@]}" bench/test_training.py --size=full --precision=bf16,fp16 $(res training)

# -- storage sweep over loader workers (s3 only where s3fs and moto are installed) ------------------
STORAGE=local,throttle:1000,500  # throttle:<MB/s>,<IOPS>
if [ "$DRY" != 1 ] && has s3fs && has moto; then STORAGE=$STORAGE,s3; fi
# shellcheck disable=SC2046
step storage 150 "${PYTEST[@]}" bench/test_storage.py -k training_storage --workload=resnet50 \
    --storage="$STORAGE" --num-workers=0,4,8 --precision=bf16 --steps=40 --warmup=10 $(res storage)

# -- the resume drill: kill-and-resume compared bitwise under deterministic mode ------------------------
# shellcheck disable=SC2046
step resume 120 "${PYTEST[@]}" bench/test_resume.py --workload=resnet50,gpt-small --precision=bf16 $(res resume)

# -- harness against a plain loop on CUDA -------------------------------------------------------------
# shellcheck disable=SC2046
step harness-overhead 90 "${PYTEST[@]}" bench/test_harness_overhead.py $(res harness)

# -- NVML telemetry over a short busy window: energy, power, SM clocks, clock-event reasons -------------
step telemetry 60 "$PY" - "$OUT/telemetry.json" <<'PYEOF'
import json, sys, time
import torch
from trainbench.telemetry.nvml import NvmlTelemetry
dev = torch.device("cuda:0")
tel = NvmlTelemetry(0, cuda_uuid=str(torch.cuda.get_device_properties(dev).uuid))
assert tel.active, "NVML found no handle for cuda:0"
a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
torch.cuda.synchronize(dev)
tel.start()
t0 = time.perf_counter()
while time.perf_counter() - t0 < 3.0:
    a = (a @ a).clamp_(-1, 1)
torch.cuda.synchronize(dev)
out = tel.stop()
out["window_s"] = time.perf_counter() - t0
json.dump(out, open(sys.argv[1], "w"), indent=1, default=str)
print(json.dumps(out, default=str))
assert out["energy_j"] and out["energy_j"] > 0, "no energy reading"
PYEOF

echo "== summary ($SUMMARY)" | tee -a "$LOG"
column -t -s $'\t' "$SUMMARY" 2>/dev/null | tee -a "$LOG" || cat "$SUMMARY"
if [ "${#FAILED[@]}" -gt 0 ]; then
    echo "FAILED: ${FAILED[*]}" | tee -a "$LOG"
    exit 1
fi
echo "all steps passed" | tee -a "$LOG"
