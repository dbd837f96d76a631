#!/usr/bin/env bash
# Tile timelines of selected bench rows in one device call (perf-notes,
# power-of-two v29): builds the library with -DROTQ_TIMELINE (src/cuda/timeline.cuh)
# for sm_90a, runs each `rotq bench --filter` row on that build, one row a file,
# and summarizes them with scripts/timeline.py.
#
# Environment:
#   TL_FILTERS="a;b"   `rotq bench --filter` strings, each selecting one row
#   OUT                where the summary and the raw lines (tar.gz) go (default build-tl/out)
set -uo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-build-tl/out}
FILTERS=${TL_FILTERS:-"hadamard-pow2 hadamard f16 n=4096 elements=33554432"}
mkdir -p "$OUT" build-tl/rows
rm -f build-tl/rows/*
t0=$SECONDS
cmake -S . -B build-tl -G Ninja -DCMAKE_BUILD_TYPE=Release -DROTQ_CUDA=ON -DROTQ_BUILD_TESTS=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90a-real -DCMAKE_CUDA_FLAGS=-DROTQ_TIMELINE >build-tl.configure.log 2>&1 ||
    { echo "configure failed"; tail -n 20 build-tl.configure.log; exit 1; }
cmake --build build-tl --parallel "$(nproc)" --target rotq_cli >"$OUT/build-tl.log" 2>&1 ||
    { echo "build failed"; tail -n 30 "$OUT/build-tl.log"; exit 1; }
echo "build: ok ($((SECONDS - t0)) s)"
IFS=';' read -ra list <<<"$FILTERS"
i=0
for f in "${list[@]}"; do
    i=$((i + 1))
    timeout 120 build-tl/tools/rotq bench --backend cuda --reps 20 --filter "$f" >"build-tl/rows/row$(printf %02d $i).txt" 2>&1
    echo "row $i '$f': exit $?, $(grep -c '^TL ' "build-tl/rows/row$(printf %02d $i).txt") TL lines"
done
python3 scripts/timeline.py build-tl/rows/row*.txt | tee "$OUT/timeline.txt"
tar -czf "$OUT/timeline-rows.tar.gz" -C build-tl rows
echo "total: $((SECONDS - t0)) s"
