#!/usr/bin/env bash
# scripts/setup.sh - install the build dependencies (Debian 12), configure and
# build msld. Idempotent: packages already installed skip apt entirely, an
# existing build directory is not reconfigured (ninja re-runs CMake itself
# when a CMakeLists.txt changed), and ninja only rebuilds what changed.
#
# Run as root on a fresh Debian 12 (sudo is used when not root). Called by
# scripts/run.sh and scripts/test.sh; may also be sourced.
#
# Environment:
#   MSLD_BUILD_DIR   build directory, relative to the repo (default: build)
#   MSLD_JOBS        ninja -j (default: nproc)
#   MSLD_CMAKE_ARGS  extra arguments for the first configure (word-split)
#
# Sourced, it only defines msld_setup, msld_install_packages, msld_build and
# msld_missing_packages (and leaves the caller's shell options alone).

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Exactly what the build (CMakeLists.txt: gRPC, Protobuf, RocksDB, OpenSSL,
# nlohmann_json, CLI11, prometheus-cpp, cpp-httplib (msld's /metrics endpoint
# and the tests' scrapes), LLVM/Clang 19, GTest) and
# the tests need (prometheus: promtool, which checks a /metrics scrape; MPFR:
# the exact results of msl-conformance, tests/conformance; openssl: the
# certificates of the TLS tests, tests/integration/make-test-certs.sh;
# python3-yaml: the checks of the Kubernetes manifests and alert rules,
# tests/deploy/; libseccomp-dev: the workers' seccomp filter, service/Sandbox.h).
MSLD_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git ca-certificates curl python3
  llvm-19-dev libclang-19-dev libclang-cpp19-dev clang-19
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  librocksdb-dev libssl-dev openssl
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libcpp-httplib-dev
  prometheus-cpp-dev prometheus
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd
  libmpfr-dev
  python3-yaml
  libseccomp-dev
)

msld_missing_packages() {
  local p
  for p in "${MSLD_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
      echo "$p"
    fi
  done
}

msld_install_packages() {
  local missing
  missing="$(msld_missing_packages | tr '\n' ' ')"
  if [[ -z "${missing// /}" ]]; then
    echo "setup: all ${#MSLD_PACKAGES[@]} packages already installed"
    return 0
  fi
  echo "setup: installing (missing: ${missing})"
  local sudo=()
  if [[ "$(id -u)" -ne 0 ]]; then sudo=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update
  "${sudo[@]}" apt-get install -y --no-install-recommends "${MSLD_PACKAGES[@]}"
}

msld_build() (
  set -euo pipefail
  cd "$REPO"
  local BUILD_DIR="${MSLD_BUILD_DIR:-build}"
  if [[ ! -f "$BUILD_DIR/build.ninja" || ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
    # ccache is picked up by CMakeLists.txt when installed.
    # shellcheck disable=SC2086
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo ${MSLD_CMAKE_ARGS:-}
  else
    echo "setup: $BUILD_DIR already configured"
  fi
  ninja -C "$BUILD_DIR" -j"${MSLD_JOBS:-$(nproc)}"
)

msld_setup() {
  msld_install_packages
  msld_build
}

# Executed (not sourced): do it all.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  msld_setup
fi
