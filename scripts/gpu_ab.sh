#!/usr/bin/env bash
# Same-run A/B of a kernel change, in one device call: builds a base commit
# (default HEAD, from `git archive`) and the working tree side by side for
# sm_90a, runs the CUDA op suite on the working tree's build, then alternates
# `rotq bench` over the selected rows: base, new, (var,) base, new, ... so that machine
# drift lands on both. Ratios of the same row are comparable only within one run.
#
# Environment:
#   AB_BASE=HEAD            the base commit (anything `git archive` takes), or "none"
#   AB_BASE_DIR=            instead, a base source tree (e.g. a carried folder)
#   AB_FILTERS="a;b"        `rotq bench --filter` strings (each its own bench call)
#   AB_REPS=3               repetitions of each (base, new) pair
#   AB_CHECK="--full"       arguments of the op suite run (empty string: skip it;
#                           split at spaces, so a --filter text must have none)
#   AB_CHECK_TIMEOUT=300    seconds the op suite may take (exit 124 past it); each
#                           bench call gets 60
#   AB_VAR_FLAGS=""         when set, a third build "var": the working tree with
#                           these CMAKE_CUDA_FLAGS (e.g. "-DROTQ_SOME_SWITCH=1")
#   AB_VAR2_FLAGS=""        likewise a fourth build "var2" (the rotq tool only: the op
#                           suite runs on it, racecheck does not)
#   AB_CHECK_ON=new         the build the op suite (and racecheck) runs on: new or var
#   AB_RACECHECK=""         when set, `rotq_test_ops --filter` text: compute-sanitizer
#                           racecheck and memcheck over those cases of that build
#   OUT                     where the logs go (default build-ab/out)
set -uo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
BASE=${AB_BASE:-HEAD}
REPS=${AB_REPS:-3}
CHECK=${AB_CHECK---full}
FILTERS=${AB_FILTERS:-"hadamard-factor"}
OUT=${OUT:-build-ab/out}
mkdir -p "$OUT" build-ab
t0=$SECONDS

VARIANTS="base new"
if [ -n "${AB_BASE_DIR:-}" ]; then
    # A base source tree made beforehand (git archive COMMIT | tar -x -C DIR, an
    # ignored folder the device call carries): the device's git has only the
    # commits its session started from.
    rm -rf build-ab/base-src && cp -r "$AB_BASE_DIR" build-ab/base-src
elif [ "$BASE" = none ]; then
    VARIANTS="new" # only the working tree (and var)
else
    rm -rf build-ab/base-src && mkdir -p build-ab/base-src
    git archive "$BASE" | tar -x -C build-ab/base-src || { echo "git archive $BASE failed"; exit 1; }
fi
configure() { # SRC BUILD [extra cmake arguments]
    local src=$1 dir=$2
    shift 2
    cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROTQ_CUDA=ON -DROTQ_BUILD_TESTS=ON \
        -DCMAKE_CUDA_ARCHITECTURES=90a-real "$@" >"$dir.configure.log" 2>&1
}
if [[ $VARIANTS == base* ]]; then
    configure build-ab/base-src build-ab/base || { echo "configure base failed"; exit 1; }
fi
configure . build-ab/new || { echo "configure failed"; exit 1; }
if [ -n "${AB_VAR_FLAGS:-}" ]; then
    configure . build-ab/var -DCMAKE_CUDA_FLAGS="$AB_VAR_FLAGS" || { echo "configure var failed"; exit 1; }
    VARIANTS="$VARIANTS var"
fi
if [ -n "${AB_VAR2_FLAGS:-}" ]; then
    configure . build-ab/var2 -DCMAKE_CUDA_FLAGS="$AB_VAR2_FLAGS" || { echo "configure var2 failed"; exit 1; }
    VARIANTS="$VARIANTS var2"
fi
# The builds share the cores.
NV=$(wc -w <<<"$VARIANTS")
J=$(( $(nproc) / NV > 1 ? $(nproc) / NV : 1 ))
pids=()
for v in $VARIANTS; do
    tgt=(); [ "$v" = var2 ] && tgt=(--target rotq_cli)
    cmake --build "build-ab/$v" --parallel "$J" ${tgt[@]+"${tgt[@]}"} >"$OUT/build-$v.log" 2>&1 &
    pids+=($!)
done
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=1; done
echo "builds ($VARIANTS): $([ $fail -eq 0 ] && echo ok || echo FAILED) ($((SECONDS - t0)) s)"
[ $fail -eq 0 ] || { tail -n 30 "$OUT"/build-*.log; exit 1; }
grep -h "spill" "$OUT/build-new.log" | sort -u >"$OUT/spills-new.txt"

CHECK_ON=${AB_CHECK_ON:-new}
if [ -n "$CHECK" ]; then
    timeout "${AB_CHECK_TIMEOUT:-300}" "build-ab/$CHECK_ON/tools/rotq" check --backend cuda $CHECK >"$OUT/check.txt" 2>&1
    echo "op suite ($CHECK_ON, $CHECK): exit $? -- $(tail -n 1 "$OUT/check.txt") ($((SECONDS - t0)) s)"
    grep -m 20 "^FAIL" "$OUT/check.txt"
fi
if [ -n "${AB_RACECHECK:-}" ]; then
    SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    for tool in racecheck memcheck; do
        timeout 240 "$SAN" --tool "$tool" --error-exitcode 86 --print-limit 20 "build-ab/$CHECK_ON/tests/rotq_test_ops" \
            --backend cuda --full --filter "$AB_RACECHECK" >"$OUT/$tool.txt" 2>&1
        echo "$tool ($CHECK_ON, '$AB_RACECHECK'): exit $? -- $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed,' "$OUT/$tool.txt" | tr '\n' ' ') ($((SECONDS - t0)) s)"
    done
fi

IFS=';' read -ra list <<<"$FILTERS"
for f in "${list[@]}"; do
    for r in $(seq 1 "$REPS"); do
        for v in $VARIANTS; do
            echo "### $v rep $r filter '$f'" >>"$OUT/bench.txt"
            timeout 60 "build-ab/$v/tools/rotq" bench --backend cuda --filter "$f" >>"$OUT/bench.txt" 2>&1
        done
    done
done
# One line per row: its µs/ratio over the repetitions, base then new.
awk '/^### /{v=$2; next}
     $1 ~ /^(hadamard|quant)/ && $0 ~ /copy|empty/ && $3 ~ /^(f16|bf16|f32)$/ {
        key=$1" "$2" "$3" "$4; seen[key]=1; r[key" "v]=r[key" "v]" "$6"/"$10 }
     END { for (k in seen) { printf "%-40s base%s | new%s", k, r[k" base"], r[k" new"];
                             if (r[k" var"] != "") printf " | var%s", r[k" var"];
                             if (r[k" var2"] != "") printf " | var2%s", r[k" var2"]; printf "\n" } }' "$OUT/bench.txt" | sort
echo "total: $((SECONDS - t0)) s"
