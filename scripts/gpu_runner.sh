#!/usr/bin/env bash
# The GPU runner: everything CI cannot do (CI has no GPU), in one go, on a
# machine with an NVIDIA GPU (`make gpu`):
#   1. build with all cores: Release, CUDA ON (into build-gpu/);
#   2. the full test suite (ctest, `rotq demo`, then the Python tests when
#      pytest is there);
#   3. compute-sanitizer memcheck and racecheck over the CUDA op-suite driver
#      (tests/rotq_test_ops --backend cuda, the quick table: the full one is
#      what ctest's ops_cuda runs, and is too slow under the sanitizer), both
#      started right after the build and run in the background beside step 2
#      (the bench waits for them: it must have the GPU to itself);
#   4. rotq bench --backend cuda (table, JSON, SVG chart);
#   5. cuobjdump --dump-resource-usage of librotq.so (registers, shared
#      memory, spills of every kernel).
# Logs go to build-gpu/gpu-runner/ and, when OUT is set, are copied to $OUT
# (8 files at most, each under 16 MiB, no sub-folders). A summary is printed
# at the end. Exit status 0 only when everything passed AND the library has
# GPU kernels that ran: a build whose CUDA ops are all "not supported" is
# reported as such, never as a pass.
#
# Environment:
#   BUILD=build-gpu          build folder
#   JOBS=<all cores>         parallel build jobs
#   ROTQ_CUDA_ARCHS=...      CMAKE_CUDA_ARCHITECTURES (default: the project's
#                            default, sm_90a + sm_80; e.g. 90a-real to build faster)
#   ROTQ_GPU_BUDGET=585      seconds for the whole run; late steps are skipped
#                            (and reported) when too little time is left
#   ROTQ_GPU_PYTEST=1        0 skips the Python tests
set -uo pipefail
exec </dev/null

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
BUILD=${BUILD:-build-gpu}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 8)}
BUDGET=${ROTQ_GPU_BUDGET:-585}
LOG="$BUILD/gpu-runner"
START=$SECONDS
mkdir -p "$LOG"
rm -f "$LOG"/*

step() { printf '\n=== [gpu_runner %3ds] %s\n' $((SECONDS - START)) "$*"; }
left() { echo $((BUDGET - (SECONDS - START))); }
# run_to LOGFILE LIMIT_SECONDS CMD...: append the command's output to LOGFILE
# (and echo its tail), with a time limit; returns the command's status (124 on timeout).
run_to() {
    local file=$1 limit=$2
    shift 2
    echo "\$ $*" >>"$file"
    timeout --kill-after=10 "$limit" "$@" >>"$file" 2>&1
    local rc=$?
    [ $rc -eq 124 ] && echo "TIMED OUT after ${limit}s" >>"$file"
    echo "(exit status $rc)" >>"$file"
    return $rc
}
find_tool() { # a CUDA tool on PATH or in the toolkit
    local t
    for t in "$(command -v "$1" 2>/dev/null)" "/usr/local/cuda/bin/$1" "/usr/local/cuda/$1/$1" \
        "${CUDA_HOME:-/nonexistent}/bin/$1"; do
        [ -n "$t" ] && [ -x "$t" ] && { echo "$t"; return 0; }
    done
    return 1
}

# compute-sanitizer memcheck and racecheck over the CUDA op-suite driver's quick
# table, both at once in the background (san_start), each into its own log;
# san_collect waits for them, appends both logs to sanitizer.log and sets R[].
SAN_PIDS=() SAN_LIM=0
san_start() {
    EXE="$BUILD/tests/rotq_test_ops"
    if [ ! -x "$EXE" ]; then # ask CTest for the ops_cuda command
        EXE=$(ctest --test-dir "$BUILD" -R '^ops_cuda$' --show-only=json-v1 2>/dev/null |
            python3 -c 'import json,sys; print(json.load(sys.stdin)["tests"][0]["command"][0])' 2>/dev/null)
    fi
    if ! SAN=$(find_tool compute-sanitizer); then
        R[memcheck]="NOT RUN: compute-sanitizer not found"; R[racecheck]=${R[memcheck]}; return
    fi
    if [ -z "$EXE" ] || [ ! -x "$EXE" ]; then
        R[memcheck]="NOT RUN: no CUDA op-suite driver (tests/rotq_test_ops)"; R[racecheck]=${R[memcheck]}; return
    fi
    local tool
    SAN_LIM=$(($(left) - 90)) # the benchmark and the summary after them
    [ $SAN_LIM -gt 360 ] && SAN_LIM=360
    if [ $SAN_LIM -lt 30 ]; then
        R[memcheck]="skipped: too little time left"; R[racecheck]=${R[memcheck]}; return
    fi
    step "compute-sanitizer memcheck and racecheck, $EXE --backend cuda (quick table), in the background (${SAN_LIM}s)"
    for tool in memcheck racecheck; do
        : >"$LOG/san-$tool.tmp"
        # four OpenMP threads each for the CPU references: the tests run beside them
        run_to "$LOG/san-$tool.tmp" "$SAN_LIM" env OMP_NUM_THREADS=4 "$SAN" --tool "$tool" --error-exitcode 86 --print-limit 100 \
            "$EXE" --backend cuda &
        SAN_PIDS+=("$tool:$!")
    done
}
san_collect() {
    local entry tool pid rc section errs cases
    for entry in "${SAN_PIDS[@]}"; do
        tool=${entry%%:*} pid=${entry#*:}
        wait "$pid"
        rc=$?
        { echo "==== $tool ===="; cat "$LOG/san-$tool.tmp"; } >>"$LOG/sanitizer.log"
        section=$(cat "$LOG/san-$tool.tmp")
        rm -f "$LOG/san-$tool.tmp"
        errs=$(grep -Eo '(ERROR SUMMARY: [0-9]+|[0-9]+ errors)' <<<"$section" | tail -n 1 | grep -Eo '[0-9]+')
        cases=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' <<<"$section" | tail -n 1)
        case $rc in
        0) R[$tool]="${errs:-0} errors" ;;
        86) R[$tool]="${errs:-some} ERRORS (see sanitizer.log)" ;;
        124) R[$tool]="TIMED OUT after ${SAN_LIM}s (${errs:-?} errors reported)" ;;
        *) R[$tool]="exit status $rc, ${errs:-?} errors (see sanitizer.log)" ;;
        esac
        if [ $rc -eq 0 ] && [ "${cases%% *}" = 0 ]; then
            R[$tool]="ran no case: $cases"
        elif [ -n "$cases" ]; then
            R[$tool]="${R[$tool]} ($cases)"
        fi
    done
}

declare -A R # results for the summary
R[build]="not run"; R[ctest]="not run"; R[pytest]="not run"; R[memcheck]="not run"
R[racecheck]="not run"; R[bench]="not run"; R[kernels]="unknown"; R[demo]="not run"

# ---- machine ------------------------------------------------------------------
step "machine"
command -v nvcc >/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"; }
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    if rev=$(git rev-parse --short HEAD 2>/dev/null); then
        echo "commit: $rev$(git diff --quiet HEAD 2>/dev/null || echo ' (+ local changes)')"
    else
        echo "commit: unknown (not a git checkout)"
    fi
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,ecc.mode.current \
        --format=csv 2>&1 || echo "nvidia-smi failed"
    nvcc --version 2>&1 | tail -n 1
    cmake --version | head -n 1
    echo "cores: $(nproc)"
} | tee "$LOG/summary.txt"

# ---- 1. build -------------------------------------------------------------------
step "build ($BUILD, Release, CUDA ON, $JOBS jobs)"
cfg=(-S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DROTQ_CUDA=ON)
[ -n "${ROTQ_CUDA_ARCHS:-}" ] && cfg+=("-DCMAKE_CUDA_ARCHITECTURES=$ROTQ_CUDA_ARCHS")
t0=$SECONDS
if run_to "$LOG/build.log" "$(left)" cmake "${cfg[@]}" &&
    run_to "$LOG/build.log" "$(left)" cmake --build "$BUILD" --parallel "$JOBS"; then
    R[build]="ok ($((SECONDS - t0)) s)"
else
    R[build]="FAILED (see build.log)"
    tail -n 40 "$LOG/build.log"
fi
echo "build: ${R[build]}"
BUILT=0
[[ ${R[build]} == ok* ]] && BUILT=1

ROTQ="$BUILD/tools/rotq"
LIB="$BUILD/librotq.so"

if [ $BUILT -eq 1 ]; then
    "$ROTQ" info | tee -a "$LOG/summary.txt"

    # ---- 5 first (cheap): which kernels are in the library -----------------------------
    step "cuobjdump --dump-resource-usage $LIB"
    if CUOBJDUMP=$(find_tool cuobjdump); then
        "$CUOBJDUMP" --dump-resource-usage "$LIB" >"$LOG/resource-usage.txt" 2>&1
        nk=$(grep -c 'Function ' "$LOG/resource-usage.txt" || true)
        # the usage line follows its "Function" line; STACK > 0 here is register spills
        stack=$(awk '/Function /{fn=1; next} fn && /(STACK|LOCAL):[1-9]/{n++} {fn=0} END{print n+0}' \
            "$LOG/resource-usage.txt")
        # CONSTANT[0] is 528 bytes of the driver's plus the kernel's parameters; launches
        # with more than about 200 bytes of parameters can run up to 1 us slower
        # (docs/perf-notes.md, "Kernel parameter size")
        bigp=$(grep -o 'CONSTANT\[0\]:[0-9]*' "$LOG/resource-usage.txt" | awk -F: '$2 > 528 + 192 {n++} END{print n+0}')
        R[kernels]="$nk kernel entries (all architectures) in librotq.so; $stack use stack or local memory (spills); $bigp take more than 192 bytes of parameters"
        [ "$nk" -eq 0 ] && R[kernels]="NONE: librotq.so contains no GPU kernels"
    else
        R[kernels]="unknown (no cuobjdump)"
        echo "cuobjdump not found" >"$LOG/resource-usage.txt"
    fi
    echo "kernels: ${R[kernels]}"

    # ---- 3 starts here: the sanitizers run in the background while the tests run ---------
    # (they are mostly host-bound; in series after the tests they left the last of them
    # too little of the budget)
    san_start

    # ---- 2. tests -----------------------------------------------------------------------
    step "ctest (full suite)"
    t1=$SECONDS
    run_to "$LOG/tests.log" "$(left)" ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS"
    # "100% tests passed, 0 tests failed out of 5" (CMake 3) or "100% tests passed out of 5" (CMake 4)
    line=$(grep -E '^[0-9]+% tests passed' "$LOG/tests.log" | tail -n 1)
    R[ctest]="${line:-"no summary (see tests.log)"} ($((SECONDS - t1)) s)"
    echo "ctest: ${R[ctest]}"
    # What ops_cuda (the CUDA op suite) really ran, from its output in CTest's log:
    # its "N passed, N failed, N skipped" line and its count of NOT_SUPPORTED cases.
    ops_cuda_out=$(awk '/Test: ops_cuda$/ {on = 1} on {print} on && /<end of output>/ {exit}' \
        "$BUILD/Testing/Temporary/LastTest.log" 2>/dev/null)
    cuda_counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' <<<"$ops_cuda_out" | tail -n 1)
    cuda_ns=$(grep -Eo 'note: [0-9]+ case\(s\) skipped on cuda as ROTQ_ERR_NOT_SUPPORTED' <<<"$ops_cuda_out" |
        grep -Eo '[0-9]+' | head -n 1)
    R[ops_cuda]="${cuda_counts:-unknown}; ${cuda_ns:-0} cases NOT_SUPPORTED on cuda"

    # What `make run` shows, on the GPU: quick op suite, quick benchmark, outlier example.
    step "rotq demo"
    if run_to "$LOG/tests.log" 120 "$ROTQ" demo; then R[demo]="ok"; else R[demo]="FAILED (see tests.log)"; fi
    echo "demo: ${R[demo]}"

    if [ "${ROTQ_GPU_PYTEST:-1}" = 1 ] && [ -d python/tests ]; then
        if [ "$(left)" -lt 150 ]; then
            R[pytest]="skipped: too little time left"
        elif python3 -c 'import numpy, pytest' >/dev/null 2>&1; then
            step "pytest python/tests"
            xdist=()
            python3 -c 'import xdist' >/dev/null 2>&1 && xdist=(-n 8)
            # The benchmark after it takes a few seconds (2-3 s on the H100: about 235
            # rows of 30 repetitions, milliseconds each); the rest of the budget is pytest's.
            t1=$SECONDS
            ROTQ_LIBRARY="$(pwd)/$LIB" PYTHONPATH="$(pwd)/python" \
                run_to "$LOG/tests.log" $(($(left) - 60)) python3 -m pytest -q --durations=8 "${xdist[@]}" python/tests
            # pytest's own summary line (the demo above printed "N passed" lines too)
            line=$(awk '/^\$ python3 -m pytest/ {on = 1} on' "$LOG/tests.log" |
                grep -E '^=*.*[0-9]+ (passed|failed)' | tail -n 1)
            R[pytest]="${line:-"no summary (see tests.log)"} ($((SECONDS - t1)) s)"
        else
            R[pytest]="skipped: python3 lacks numpy/pytest"
        fi
        echo "pytest: ${R[pytest]}"
    fi

    # ---- 3. sanitizers: collect what ran in the background --------------------------------
    san_collect
    echo "memcheck: ${R[memcheck]}"
    echo "racecheck: ${R[racecheck]}"

    # ---- 4. benchmark ------------------------------------------------------------------
    if [ "$(left)" -lt 30 ]; then
        R[bench]="skipped: too little time left"
    else
        step "rotq bench --backend cuda"
        t1=$SECONDS
        run_to "$LOG/bench.txt" "$(($(left) - 15))" "$ROTQ" bench --backend cuda \
            --json "$LOG/bench.json" --plot "$LOG/bench.svg"
        rc=$?
        grep -A100 '^## summary' "$LOG/bench.txt" | grep -v '^(exit status' | grep -v '^wrote '
        ok_rows=$(grep -c '"status": "ok"' "$LOG/bench.json" 2>/dev/null || true)
        ns_rows=$(grep -c '"status": "not supported"' "$LOG/bench.json" 2>/dev/null || true)
        R[bench]="exit status $rc; ${ok_rows:-0} rows measured, ${ns_rows:-0} not supported ($((SECONDS - t1)) s)"
        # Rows whose copy baseline ran below 90% of the run's median, or whose empty launch
        # took over 1.25x the median (rotq_bench_flag_disturbed): the device was disturbed
        # while they ran; their ratios are not comparable.
        disturbed=$(grep -c '^warning: .*baseline' "$LOG/bench.txt" 2>/dev/null || true)
        if [ "${disturbed:-0}" -gt 0 ]; then
            grep '^warning: .*baseline' "$LOG/bench.txt"
            R[bench]="${R[bench]}; ${disturbed} with a disturbed baseline (rerun those groups)"
        fi
    fi
fi

# ---- summary ----------------------------------------------------------------------------
step "summary"
no_kernels=0
[[ ${R[kernels]} == NONE* ]] && no_kernels=1
[[ ${R[bench]} == *" 0 rows measured"* ]] && no_kernels=1
# ops_cuda exits 0 when every case was skipped (no device, or nothing implemented).
[[ ${R[ops_cuda]:-} == "0 passed,"* ]] && no_kernels=1
pass=1
[[ ${R[build]} == ok* ]] || pass=0
[[ ${R[ctest]} == *"100% tests passed"* ]] || pass=0
[[ ${R[demo]} == ok ]] || pass=0
[[ ${R[memcheck]} == "0 errors"* ]] || pass=0
[[ ${R[racecheck]} == "0 errors"* ]] || pass=0
[[ ${R[bench]} == "exit status 0;"* ]] || pass=0
case ${R[pytest]} in *failed* | *error* | "no summary"*) pass=0 ;; esac
if [ $no_kernels -eq 1 ]; then
    pass=0
    verdict="VERDICT: NO GPU KERNELS IMPLEMENTED YET (or no usable device): the CUDA op suite
         passed no case, or the benchmark measured no row, or librotq.so has no kernels.
         Nothing on the GPU was tested or timed. This is not a pass."
elif [ $pass -eq 1 ]; then
    # Correctness passed; say plainly what is still missing or slow.
    met=$(grep -c ' met$\| met ' "$LOG/bench.txt" 2>/dev/null || true)
    missed=$(grep -c ' MISSED' "$LOG/bench.txt" 2>/dev/null || true)
    verdict="VERDICT: PASS (correctness; ${cuda_ns:-0} CUDA op-suite cases NOT_SUPPORTED;
         benchmark targets met by ${met:-0} rows, missed by ${missed:-0})"
else
    verdict="VERDICT: FAILED (see the lines above and the logs)"
fi
{
    echo
    echo "build:      ${R[build]}"
    echo "kernels:    ${R[kernels]}"
    echo "ctest:      ${R[ctest]}"
    echo "ops_cuda:   ${R[ops_cuda]:-not run}"
    echo "demo:       ${R[demo]}"
    echo "pytest:     ${R[pytest]}"
    echo "memcheck:   ${R[memcheck]}"
    echo "racecheck:  ${R[racecheck]}"
    echo "bench:      ${R[bench]}"
    if [ -f "$LOG/bench.txt" ]; then
        echo "bench geomeans (ratio = time / same-run baseline):"
        sed -n '/^## summary/,$p' "$LOG/bench.txt" | grep 'geomean' | sed 's/^/  /'
    fi
    echo "time:       $((SECONDS - START)) s"
    echo "$verdict"
} | tee -a "$LOG/summary.txt"

# ---- logs to $OUT ----------------------------------------------------------------------
if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    for f in "$LOG"/*; do
        [ -f "$f" ] || continue
        size=$(stat -c %s "$f")
        if [ "$size" -gt $((15 * 1024 * 1024)) ]; then # keep both ends of an oversized log
            { head -c $((7 * 1024 * 1024)) "$f"; printf '\n[... %d bytes cut ...]\n' "$size"; tail -c $((7 * 1024 * 1024)) "$f"; } >"$OUT/$(basename "$f")"
        else
            cp "$f" "$OUT/"
        fi
    done
    echo "logs copied to \$OUT: $(cd "$LOG" && echo *)"
fi
[ $pass -eq 1 ] && exit 0 || exit 1
