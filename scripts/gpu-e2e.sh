#!/bin/bash
# msld end to end on a GPU machine: the real daemon serving Execute on
# cuda:0, driven by the kernel tests (ExecuteKernelsTest, ExecuteTexturesTest, ExecuteCudaTest, SharedRegionsTest, LocalCallsTest on
# MSLD_TEST_DEVICE=cuda:0), the CUDA device's own tests and `mslc run`.
#
#   here: scripts/gpu-e2e.sh bundle   build, record the compiles, write build-gpu-e2e/bundle.tar.xz
#   GPU:  scripts/gpu-e2e.sh run      (from a copy of the tree with build-gpu-e2e in it)
#
# The GPU machine has the driver but not our Debian libraries, and LLVM is
# too large to carry: `bundle` records every compile the run needs here
# (service/CompileRecording.h) and packs msld, msld-cuda-worker, the replaying
# compile worker (as msld-compile-worker), mslc, the test binaries and the
# shared libraries they load (not glibc or libstdc++: the GPU machine's are
# newer). The CPU device (msld-exec-worker links LLVM) stays behind, so msld
# runs there with --exec-workers 0. BUILD overrides the build command
# (default: ninja -C build).
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-gpu-e2e
stage=$out/stage
filter='ExecuteKernelsTest.*:ExecuteTexturesTest.*:ExecuteCudaTest.*:CorpusKernelsTest.*:SharedRegionsTest.*:LocalCallsTest.*'
saxpy=(examples/saxpy.metal --kernel saxpy --device cuda:0 --grid 8 --threadgroup 4
       --buffer 0=float:2 --buffer 1=float:1,2,3,4,5,6,7,8 --buffer 2=float:1,1,1,1,1,1,1,1
       --buffer 3=uint:8 --print 2 --stats)

# Starts msld on a free port ($1: data dir, then extra flags); sets msld_pid and msld_address.
start_msld() {
  local data=$1 bin=$2
  shift 2
  rm -f "$data.ready"
  "$bin/msld" --listen 127.0.0.1:0 --metrics-listen "" --data-dir "$data" --ready-file "$data.ready" "$@" \
    2>"$data.log" &
  msld_pid=$!
  for _ in $(seq 600); do
    [ -s "$data.ready" ] && break
    kill -0 "$msld_pid" 2>/dev/null || { cat "$data.log"; echo "msld did not start" >&2; return 1; }
    sleep 0.1
  done
  msld_address=127.0.0.1:$(sed -E 's/.*"grpc_port":([0-9]+).*/\1/' "$data.ready")
}

case "${1:-}" in
bundle)
  ${BUILD:-ninja -C build} msld msld-cuda-worker msld-replay-compile-worker msld-compile-worker \
    msld-exec-worker mslc msld_integration_test msl_cuda_device_test
  rm -rf "$out"
  mkdir -p "$stage/bin" "$stage/lib" "$stage/recordings"
  recordings=$PWD/$stage/recordings
  # The kernel tests for cuda:0, here without a GPU: each kernel is compiled
  # for sm_90 (recorded) and run on the cpu.
  MSLD_COMPILE_RECORD_DIR=$recordings MSLD_TEST_DEVICE=cuda:0 MSLD_TEST_RECORD_COMPILES=1 \
    build/bin/msld_integration_test --gtest_filter="$filter" --gtest_brief=1 ||
    echo "gpu-e2e: some cpu runs failed (the compiles are recorded all the same)"
  # mslc run compiles first (recorded), then its Execute fails: no GPU here.
  tmp=$(mktemp -d)
  MSLD_COMPILE_RECORD_DIR=$recordings start_msld "$tmp/data" build/bin
  build/bin/mslc run "${saxpy[@]}" --server "$msld_address" >/dev/null 2>&1 || true
  kill "$msld_pid"
  wait "$msld_pid" || true
  rm -rf "$tmp"
  echo "recorded $(ls "$recordings" | grep -vc identity) compiles"

  for b in msld msld-cuda-worker mslc msld_integration_test msl_cuda_device_test; do
    cp build/bin/$b "$stage/bin/"
  done
  cp build/bin/msld-replay-compile-worker "$stage/bin/msld-compile-worker"
  strip "$stage"/bin/*
  # Every shared library they load but the C and C++ runtimes.
  for b in "$stage"/bin/*; do ldd "$b"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux-x86-64|libstdc\+\+|libgcc_s)\.so' |
    while read -r lib; do cp -L "$lib" "$stage/lib/"; done
  # CorpusKernelsTest reads ../shared/corpus-ml: it travels in the bundle
  # (a build output, never the repository), when this checkout has it.
  corpus=${MSLD_TEST_CORPUS_ML:-../shared/corpus-ml}
  [ -d "$corpus" ] && cp -r "$corpus" "$stage/corpus-ml"
  tar -C "$stage" -cJf "$out/bundle.tar.xz" .
  rm -rf "$stage"
  ls -la "$out/bundle.tar.xz";;
run)
  root=/tmp/msld-e2e
  filter=${MSLD_E2E_FILTER:-$filter} # a part of the tests, when set
  rm -rf "$root"
  mkdir -p "$root"
  python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$out/bundle.tar.xz" "$root"
  export LD_LIBRARY_PATH=$root/lib
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  ldd "$root/bin/msld" | grep "not found" && exit 1
  status=0
  echo "== msl_cuda_device_test"
  "$root/bin/msl_cuda_device_test" --gtest_brief=1 || status=1
  echo "== msld_integration_test on cuda:0 ($filter)"
  MSLD_TEST_BIN_DIR=$root/bin MSLD_TEST_SOURCE_DIR=$PWD MSLD_TEST_DEVICE=cuda:0 MSLD_TEST_CORPUS_ML=$root/corpus-ml \
    MSLD_TEST_DAEMON_ARGS="--exec-workers 0" MSLD_COMPILE_REPLAY_DIR=$root/recordings \
    "$root/bin/msld_integration_test" --gtest_filter="$filter" || status=1
  echo "== mslc run --device cuda:0"
  MSLD_COMPILE_REPLAY_DIR=$root/recordings start_msld "$root/data" "$root/bin" --exec-workers 0
  "$root/bin/mslc" run "${saxpy[@]}" --server "$msld_address" || status=1
  kill "$msld_pid"
  wait "$msld_pid" || true
  grep -h "cuda:" "$root/data.log" || true
  exit $status;;
*)
  echo "usage: $0 bundle | run" >&2
  exit 2;;
esac
