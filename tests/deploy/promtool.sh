#!/bin/sh
# Runs promtool with the arguments given, or skips (exit 77, ctest's
# SKIP_RETURN_CODE) when it is not installed.
if ! command -v promtool >/dev/null 2>&1; then
  echo "SKIP: promtool not found (Debian package 'prometheus'; scripts/setup.sh installs it)"
  exit 77
fi
exec promtool "$@"
