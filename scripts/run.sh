#!/usr/bin/env bash
# scripts/run.sh - setup + build (scripts/setup.sh), start msld on
# 127.0.0.1, compile examples/*.metal through mslc into out/, show what came
# out, then keep msld in the foreground until Ctrl-C (SIGTERM is forwarded
# to msld, which drains in-flight requests and stops).
#
# Environment:
#   MSLD_PORT          gRPC port (default 8980)
#   MSLD_METRICS_PORT  Prometheus port (default 9464)
#   MSLD_DATA_DIR      RocksDB cache directory (default: <repo>/data)
#   MSLD_BUILD_DIR     build directory (default: build); MSLD_JOBS: ninja -j
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
"$REPO/scripts/setup.sh"

BUILD_DIR="${MSLD_BUILD_DIR:-build}"
BIN="$REPO/$BUILD_DIR/bin"
PORT="${MSLD_PORT:-8980}"
METRICS_PORT="${MSLD_METRICS_PORT:-9464}"
DATA_DIR="${MSLD_DATA_DIR:-$REPO/data}"
OUT="$REPO/out"
READY="$OUT/msld-ready.json"
LOG="$OUT/msld.log"
mkdir -p "$DATA_DIR" "$OUT"
rm -f "$READY"

echo
echo "== starting msld (gRPC 127.0.0.1:$PORT, metrics 127.0.0.1:$METRICS_PORT, data $DATA_DIR)"
"$BIN/msld" --listen "127.0.0.1:$PORT" --metrics-listen "127.0.0.1:$METRICS_PORT" \
  --data-dir "$DATA_DIR" --ready-file "$READY" 2> >(tee "$LOG" >&2) &
MSLD_PID=$!

stop_msld() {
  trap - INT TERM EXIT
  if kill -0 "$MSLD_PID" 2>/dev/null; then
    echo
    echo "== stopping msld (SIGTERM to pid $MSLD_PID)"
    kill -TERM "$MSLD_PID" 2>/dev/null || true
    wait "$MSLD_PID" 2>/dev/null || true
  fi
}
trap 'stop_msld; exit 130' INT
trap 'stop_msld; exit 143' TERM
trap 'stop_msld' EXIT

for _ in $(seq 1 600); do
  [[ -f "$READY" ]] && break
  if ! kill -0 "$MSLD_PID" 2>/dev/null; then
    wait "$MSLD_PID" || true
    echo "run.sh: msld exited before it was ready (see $LOG; is port $PORT or $METRICS_PORT taken?)" >&2
    exit 1
  fi
  sleep 0.1
done
[[ -f "$READY" ]] || { echo "run.sh: msld not ready after 60 s" >&2; exit 1; }
echo "msld is ready: $(cat "$READY")"

export MSLD_ADDRESS="127.0.0.1:$PORT"
MSLC="$BIN/mslc"

echo
echo "== compiling examples/*.metal through mslc"
for src in examples/*.metal; do
  name="$(basename "$src" .metal)"
  "$MSLC" -c "$src" -o "out/$name.x86_64.bc" --target x86_64 --emit llvm-bc
  "$MSLC" -c "$src" -o "out/$name.nvptx64.ptx" --target nvptx64 --emit ptx
  echo "  $src -> out/$name.x86_64.bc, out/$name.nvptx64.ptx"
done

echo
echo "== artifacts (bytes)"
for f in out/*.bc out/*.ptx; do
  printf '  %8d  %s\n' "$(wc -c < "$f")" "$f"
done

echo
echo "== PTX kernels (.entry lines)"
grep -H '\.entry' out/*.ptx | sed 's/^/  /'

echo
echo "== vertex and fragment functions (reflection of examples/textured_quad.metal)"
"$MSLC" -c examples/textured_quad.metal -o - --emit reflection | grep -E '"(stage|name)": "(vertex|fragment|quad_)' | sed 's/^ */  /'

echo
echo "== reflection of saxpy (--emit reflection)"
"$MSLC" -c examples/saxpy.metal -o out/saxpy.reflection.json --emit reflection
cat out/saxpy.reflection.json
echo

echo
echo "== the same compile again: an action-cache hit (--stats)"
"$MSLC" -c examples/saxpy.metal -o out/saxpy.x86_64.bc --target x86_64 --emit llvm-bc --stats

echo
echo "== a first kernel run on the cpu device: y = 2 * x + y over 8 elements (mslc run)"
"$MSLC" run examples/saxpy.metal --kernel saxpy --grid 8 --threadgroup 4 \
  --buffer 0=float:2 --buffer 1=float:0,1,2,3,4,5,6,7 --buffer 2=float:1,1,1,1,1,1,1,1 \
  --buffer 3=uint:8 --print 2 --stats

echo
echo "== a reduction with barriers and threadgroup memory: 1024 ones in threadgroups of 256"
"$MSLC" run examples/reduce.metal --kernel reduce_sum --threadgroups 4 --threadgroup 256 \
  --buffer 0=float:$(python3 -c "print(','.join(['1'] * 1024))") --buffer 1=zeros:16 \
  --buffer 2=uint:1024 --print 1

echo
echo "== metrics: http://127.0.0.1:$METRICS_PORT/metrics"
curl -fsS "http://127.0.0.1:$METRICS_PORT/metrics" 2>/dev/null \
  | grep -E '^msld_(action_cache_(hits|misses)_total|cas_blobs|cas_bytes)' | sed 's/^/  /' || true

echo
echo "== msld (pid $MSLD_PID) is serving on $MSLD_ADDRESS; Ctrl-C stops it"
echo "   try: $MSLC -c examples/reduce.metal -o - --emit reflection"
echo "        $MSLC run examples/saxpy.metal --kernel saxpy --grid 1000 --threadgroup 256 --buffer 0=float:3 \\"
echo "          --buffer 1=zeros:4000 --buffer 2=zeros:4000 --buffer 3=uint:1000 --print 2"
wait "$MSLD_PID"
