#!/usr/bin/env bash
# Profiling companion of gpu_runner.sh (one device call): builds the library
# for sm_90a only, then runs Nsight Compute on one launch of the kernel behind
# each selected `rotq bench` row, and the decode-latency probe
# (bench/probes/decode_latency.cu). Output: $OUT/ncu.txt, $OUT/probe.txt.
#   ROTQ_PROFILE_ROWS="filter|kernel-regex;..."  rows to profile (default below)
#   ROTQ_PROFILE_SOURCE=1   per-SASS-instruction execution counts and stall samples
#                           instead of the sections (one CSV per row,
#                           $OUT/source-<i>.csv.gz, summarized into ncu.txt by
#                           scripts/ncu_source_summary.py)
#   ROTQ_PROFILE_PROBE=0    skips the decode-latency probe
set -uo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
BUILD=${BUILD:-build-gpu}
OUT=${OUT:-$BUILD/profile}
mkdir -p "$OUT"
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
t0=$SECONDS
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DROTQ_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES="${ROTQ_CUDA_ARCHS:-90a-real}" >"$OUT/build.log" 2>&1 &&
    cmake --build "$BUILD" --parallel "$(nproc)" >>"$OUT/build.log" 2>&1 || { tail -n 40 "$OUT/build.log"; exit 1; }
echo "build: $((SECONDS - t0)) s"
[ "${ROTQ_PROFILE_PROBE:-1}" = 1 ] && nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -Iinclude -o "$BUILD/decode_latency" bench/probes/decode_latency.cu \
    -L"$BUILD" -lrotq -Xlinker -rpath="$(pwd)/$BUILD" &&
    "$BUILD/decode_latency" | tee "$OUT/probe.txt"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
ROWS=${ROTQ_PROFILE_ROWS:-"hadamard28x512 f16|rotq_had_factor;hadamard12x1024 f16|rotq_had_factor;hadamard172x64 f16|rotq_had_factor;hadamard f16 n=4096 elements=33554432|rotq_had_pow2;hadamard f16 n=32768 elements=33554432|rotq_had_pow2;rot+int8 f16 n=4096 elements=33554432|rotq_qt_rot;hadamard-decode hadamard f16 n=4096 elements=65536|rotq_had_small"}
IFS=';' read -ra list <<<"$ROWS"
i=0
for row in "${list[@]}"; do
    filter=${row%%|*} kernel=${row##*|}
    i=$((i + 1))
    echo "=== $filter ($kernel)" | tee -a "$OUT/ncu.txt"
    if [ "${ROTQ_PROFILE_SOURCE:-0}" = 1 ]; then
        timeout 180 "$NCU" --kernel-name "regex:$kernel" --launch-skip 3 --launch-count 1 \
            --section SourceCounters --page source --print-source sass --csv \
            "$BUILD/tools/rotq" bench --backend cuda --op all --filter "$filter" --reps 1 >"$OUT/source-$i.csv" 2>&1
        echo "(exit $?)" >>"$OUT/ncu.txt"
        python3 scripts/ncu_source_summary.py "$OUT/source-$i.csv" 45 >>"$OUT/ncu.txt" 2>&1
        gzip -f "$OUT/source-$i.csv"
        continue
    fi
    timeout 120 "$NCU" --kernel-name "regex:$kernel" --launch-skip 3 --launch-count 1 \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats \
        --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis \
        "$BUILD/tools/rotq" bench --backend cuda --op all --filter "$filter" --reps 1 >>"$OUT/ncu.txt" 2>&1
    echo "(exit $?)" >>"$OUT/ncu.txt"
done
echo "total: $((SECONDS - t0)) s"
