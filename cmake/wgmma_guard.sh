#!/usr/bin/env bash
# CUDA compiler launcher of librotq's objects (CMakeLists.txt, ROTQ_WGMMA_GUARD):
# runs the compile command it is given and fails it when ptxas reports that it
# serialized the wgmma instructions of a kernel ("ptxas info : (C75xx)
# Potential Performance Loss: wgmma.mma_async instructions are serialized ...").
# ptxas does that, silently but for this note, e.g. when a wgmma is issued or
# awaited under a run-time condition; the kernel still runs, but slower
# (docs/perf-notes.md, factor kernel v19 and v22), so the build stops instead.
# The compiler's messages pass through unchanged.
log=$(mktemp "${TMPDIR:-/tmp}/rotq-ptxas.XXXXXX") || exit 1
"$@" 2>"$log"
rc=$?
cat "$log" >&2
if [ "$rc" -eq 0 ] && grep -q "wgmma.mma_async instructions are serialized" "$log"; then
    echo "error: ptxas serialized wgmma instructions; its C75xx note above gives the reason (e.g. a" \
         "wgmma issued or awaited under a run-time condition, or accumulators written by other" \
         "instructions inside a pipeline stage). Restructure the kernel, or configure with" \
         "-DROTQ_WGMMA_GUARD=OFF to build anyway." >&2
    rc=1
fi
rm -f "$log"
exit "$rc"
