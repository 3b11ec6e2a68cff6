#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: boot the same kernel twice under -icount shift=0 (guest time
# then depends only on the instructions executed), measure one batch read
# of the cycle counter + 6 event counters through amupmu (amupmu board) and
# through perf (stock board), and write build/bench/results.json.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
K=${K:-6.1}
OUT=$TOP/build/bench
mkdir -p "$OUT"
fig() { # fig DT MODE -> median ns
	./tools/board/run.sh -q -i -k "$K" -d "$1" bench >"$OUT/$1.log" 2>&1 || { cat "$OUT/$1.log" >&2; exit 1; }
	sed -n "s/.*BENCH pmu_read\.$2_ns \([0-9]*\) .*/\1/p" "build/board/$K-$1-prod-icount-bench/console.log" | head -1
}
a=$(fig amupmu amupmu)
z=$(sed -n 's/.*BENCH pmu_read\.null_ns \([0-9]*\) .*/\1/p' "build/board/$K-amupmu-prod-icount-bench/console.log" | head -1)
p=$(fig stock perf)
[ -n "$a" ] && [ -n "$p" ] || { echo "bench: no figure (see $OUT/*.log)" >&2; exit 1; }
ratio=$(awk -v a="$a" -v p="$p" 'BEGIN { printf "%.3f", a / p }')
cat >"$OUT/results.json" <<JSON
{
  "kernel": "$(cat build/cache/kernels/$K/abi)",
  "board": "qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -smp 2 -icount shift=0",
  "what": "median guest ns of one batch read of CPU_CYCLES + 6 event counters on CPU 0, 10000 reads",
  "pmu_read": { "amupmu_ns": $a, "perf_ns": $p, "ratio": $ratio, "target_ratio": 0.5,
                "refused_ioctl_ns": ${z:-null},
                "note": "refused_ioctl_ns: an ioctl the driver refuses at once (system call + dispatch + the timing itself), the floor under both figures" }
}
JSON
cat "$OUT/results.json"
