#!/bin/bash
# scripts/fuzz.sh - build the libFuzzer targets of tests/fuzz with Clang 19
# (-fsanitize=fuzzer,address; the libraries they test instrumented with
# fuzzer-no-link,address) in build-fuzz/, and run each for RUNS inputs
# (default 1000000) from a copy of its seed corpus. Prints one line per
# target; exits nonzero when a target fails (its crash file is kept in
# build-fuzz/crashes/).
#   scripts/fuzz.sh [RUNS] [TARGET...]   TARGET: request_options action_key worker_protocol
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
msld_install_packages
# libFuzzer and AddressSanitizer's runtimes (only this script needs them).
if ! dpkg -s libclang-rt-19-dev >/dev/null 2>&1; then
  sudo=(); [[ "$(id -u)" -ne 0 ]] && sudo=(sudo)
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends libclang-rt-19-dev
fi
runs=${1:-1000000}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(request_options action_key worker_protocol)
dir=build-fuzz
flags="-fsanitize=fuzzer-no-link,address -fno-omit-frame-pointer -g"
if [[ ! -f $dir/build.ninja ]]; then
  cmake -S . -B $dir -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMSLD_FUZZ=ON \
    -DCMAKE_CXX_COMPILER=clang++-19 "-DCMAKE_CXX_FLAGS=$flags" >/dev/null
fi
ninja -C $dir -j"${MSLD_JOBS:-$(nproc)}" "${targets[@]/#/msl_fuzz_}"
mkdir -p $dir/crashes
status=0
for t in "${targets[@]}"; do
  work=$dir/corpus-$t
  rm -rf "$work" && mkdir -p "$work" && cp tests/fuzz/corpus/$t/* "$work"/
  start=$(date +%s)
  if "$dir/bin/msl_fuzz_$t" -runs="$runs" -max_len=4096 -rss_limit_mb=4096 \
      -artifact_prefix="$dir/crashes/$t-" "$work" >"$dir/fuzz-$t.log" 2>&1; then
    result=ok
  else
    result=FAILED
    status=1
  fi
  done_line=$(grep -E '^Done [0-9]+ runs' "$dir/fuzz-$t.log" || true)
  echo "$t: $result in $(( $(date +%s) - start )) s; ${done_line:-see $dir/fuzz-$t.log}"
done
exit $status
