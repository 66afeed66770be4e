#!/bin/bash
# Assembles every PTX file in DIR with `ptxas -c -arch=sm_90` (relocatable,
# so the runtime hooks such as texture reads may stay unresolved) and prints
# the failures and a count. Run it where CUDA is installed, on PTX written by
#   build/bin/msl-corpus ../shared/corpus --ptx-dir DIR
# Usage: scripts/ptxas-check.sh DIR [ARCH]
set -u
dir=${1:?usage: $0 DIR [ARCH]}
arch=${2:-sm_90}
ptxas=$(command -v ptxas || ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1)
[ -n "$ptxas" ] || { echo "ptxas not found (no CUDA here)"; exit 77; }
echo "ptxas: $ptxas ($("$ptxas" --version | tail -1))"
ok=0; bad=0; err=$(mktemp)
for f in "$dir"/*.ptx; do
  if "$ptxas" -c -arch="$arch" "$f" -o /dev/null 2>"$err"; then
    ok=$((ok + 1))
  else
    bad=$((bad + 1))
    echo "FAIL $(basename "$f"): $(head -3 "$err" | tr '\n' ' ' | cut -c1-300)"
  fi
done
rm -f "$err"
echo "ptxas: $ok assembled, $bad failed"
[ "$bad" -eq 0 ]
