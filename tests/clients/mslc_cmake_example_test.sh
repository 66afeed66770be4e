#!/usr/bin/env bash
# issue 11: mslc as a drop-in for `metal` in a build. Against a real msld:
# configures and builds examples/cmake (a copy, out of the source tree) with
# Ninja through mslc, checks that nothing is left to do, touches the header
# only blur.metal includes and checks that exactly blur.air is rebuilt (ninja
# -n and the files' mtimes), then breaks the header and checks that the error
# names it by its absolute host path, as clang prints it; and that mslc's
# fast path and gRPC's client write the same bytes.
#
#   mslc_cmake_example_test.sh BIN_DIR EXAMPLE_DIR [static]
# With "static", also checks that mslc links no shared gRPC (MSLC_STATIC).
set -euo pipefail
bin=$1 example=$2 static=${3:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/mslc-cmake-example.XXXXXX")
msld_pid=
cleanup() {
  if [[ -n $msld_pid ]]; then kill "$msld_pid" 2>/dev/null || true; wait "$msld_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [[ -f $work/msld.log ]] && tail -20 "$work/msld.log" >&2; exit 1; }

if [[ $static == static ]] && ldd "$bin/mslc" | grep -Eq 'libgrpc|libprotobuf|libabsl'; then
  fail "mslc links shared gRPC/protobuf/abseil: $(ldd "$bin/mslc" | grep -Ec 'libgrpc|libprotobuf|libabsl') libraries"
fi

"$bin/msld" --listen 127.0.0.1:0 --metrics-listen '' --data-dir "$work/data" --compile-workers 1 \
  --exec-workers 0 --cuda off --ready-file "$work/ready.json" >"$work/msld.log" 2>&1 &
msld_pid=$!
for _ in $(seq 300); do [[ -s $work/ready.json ]] && break; sleep 0.1; done
[[ -s $work/ready.json ]] || fail "msld did not start"
port=$(sed -n 's/.*"grpc_port":\([0-9]*\).*/\1/p' "$work/ready.json")
export MSLD_ADDRESS=127.0.0.1:$port

cp -r "$example" "$work/src"
cmake -S "$work/src" -B "$work/build" -G Ninja -DMSLC="$bin/mslc" >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; fail "cmake configure"; }
ninja -C "$work/build" >"$work/build1.log" 2>&1 || { cat "$work/build1.log"; fail "first build"; }
for air in blur tint; do [[ -s $work/build/$air.air ]] || fail "$air.air not built"; done
# The dependency files, with their line continuations joined.
rule() { tr '\n' ' ' <"$1" | sed 's/ \\  */ /g; s/ *$//'; }
[[ $(rule "$work/build/blur.air.d") == \
   "$work/build/blur.air: $work/src/shaders/blur.metal $work/src/include/blur_params.h" ]] ||
  fail "blur.air.d: $(cat "$work/build/blur.air.d")"
[[ $(rule "$work/build/tint.air.d") == "$work/build/tint.air: $work/src/shaders/tint.metal" ]] ||
  fail "tint.air.d: $(cat "$work/build/tint.air.d")"

ninja -C "$work/build" -n >"$work/noop.log"
grep -q "no work to do" "$work/noop.log" || { cat "$work/noop.log"; fail "a second build has work to do"; }

blur_before=$(stat -c %Y "$work/build/blur.air")
tint_before=$(stat -c %Y "$work/build/tint.air")
sleep 1.1  # mtimes with a second's resolution still differ
touch "$work/src/include/blur_params.h"
ninja -C "$work/build" -n -d explain >"$work/explain.log" 2>&1
grep -q "mslc shaders/blur.metal" "$work/explain.log" || { cat "$work/explain.log"; fail "blur.metal not rebuilt"; }
grep -q "mslc shaders/tint.metal" "$work/explain.log" && { cat "$work/explain.log"; fail "tint.metal rebuilt too"; }
ninja -C "$work/build" >"$work/build2.log" 2>&1 || { cat "$work/build2.log"; fail "rebuild"; }
grep -q "mslc shaders/blur.metal" "$work/build2.log" || fail "rebuild did not compile blur.metal"
grep -q "mslc shaders/tint.metal" "$work/build2.log" && fail "rebuild compiled tint.metal"
[[ $(stat -c %Y "$work/build/tint.air") == "$tint_before" ]] || fail "tint.air was rewritten"
[[ $(stat -c %Y "$work/build/blur.air") != "$blur_before" ]] || fail "blur.air was not rewritten"

# An error in the header: named by its host path (outside the build
# directory, where mslc runs), line and column as clang prints them.
printf '#define BLUR_RADIUS 2\nstruct BlurParams { uint width; uint height; };\nconstant float broken = ;\n' \
  >"$work/src/include/blur_params.h"
if ninja -C "$work/build" >"$work/build3.log" 2>&1; then fail "a broken header built"; fi
grep -q "^$work/src/include/blur_params.h:3:25: error: " "$work/build3.log" ||
  { cat "$work/build3.log"; fail "the error does not name the header's host path"; }
# mslc's own HTTP/2 call (FastCompile.h) and gRPC's client give the same
# bytes, for a response of many HTTP/2 frames too and past HTTP/2's initial 64 KiB window (LLVM IR of 150 kernels).
{
  echo '#include <metal_stdlib>'; echo 'using namespace metal;'
  for i in $(seq 150); do
    echo "kernel void k$i(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] = sin(a[i]) * $i.0f; }"
  done
} >"$work/many.metal"
(cd "$work" && "$bin/mslc" -S -emit-llvm many.metal -o fast.ll && MSLC_NO_FAST_PATH=1 "$bin/mslc" -S -emit-llvm many.metal -o slow.ll) ||
  fail "compiling many.metal"
(( $(stat -c %s "$work/fast.ll") > 65536 )) || fail "many.ll is only $(stat -c %s "$work/fast.ll") bytes"
cmp -s "$work/fast.ll" "$work/slow.ll" || fail "the fast path's LLVM IR differs from the Client's"

echo "PASS: built, no-op, rebuilt only blur.air after its header changed, errors name host paths"
