#!/usr/bin/env bash
# scripts/test.sh - setup + build (scripts/setup.sh), then the whole test
# suite with ctest. Exits non-zero when a test fails or none were found.
#
# Environment: MSLD_BUILD_DIR (default build), MSLD_JOBS (build -j),
# MSLD_TEST_JOBS (ctest -j, default 2).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
"$REPO/scripts/setup.sh"

BUILD_DIR="${MSLD_BUILD_DIR:-build}"
exec ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error -j"${MSLD_TEST_JOBS:-2}"
