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
K=${K:-6.1}	# K=6.12 make bench: the trixie kernel
MACH=el1	# the board machine (tools/board/machines.sh)
OUT=$TOP/build/bench
mkdir -p "$OUT"
boot() { # boot DT: one bench boot
	./tools/board/run.sh -q -i -k "$K" -m "$MACH" -d "$1" bench >"$OUT/$1.log" 2>&1 || { cat "$OUT/$1.log" >&2; exit 1; }
}
fig() { # fig DT NAME -> the figure printed as "BENCH NAME <n>"
	sed -n "s/.*BENCH $2 \([0-9]*\) .*/\1/p" "build/board/$K-$MACH-$1-prod-icount-bench/console.log" | head -1
}
boot amupmu
boot stock
a=$(fig amupmu pmu_read.amupmu_ns)
z=$(fig amupmu pmu_read.null_ns)
p=$(fig stock pmu_read.perf_ns)
sa=$(fig amupmu pmu_sample.amupmu_ns_per_irq)
sp=$(fig stock pmu_sample.perf_ns_per_irq)
# every CPU in one read: pmu_read_bench amupmu-all / perf-all, when the
# bench payload runs them (null otherwise)
ra=$(fig amupmu pmu_read_all.amupmu_ns)
rp=$(fig stock pmu_read_all.perf_ns)
rcpus=$(sed -n "s/.*BENCH pmu_read_all\.[a-z]*_ns [0-9]* (cpus=\([0-9]*\),.*/\1/p" \
	"build/board/$K-amupmu-prod-icount-bench/console.log" | head -1)
rratio=null
[ -n "$ra" ] && [ -n "$rp" ] && rratio=$(awk -v a="$ra" -v p="$rp" 'BEGIN { printf "%.3f", a / p }')
[ -n "$a" ] && [ -n "$p" ] && [ -n "$sa" ] && [ -n "$sp" ] ||
	{ echo "bench: no figure (see $OUT/*.log)" >&2; exit 1; }
ratio=$(awk -v a="$a" -v p="$p" 'BEGIN { printf "%.3f", a / p }')
sratio=$(awk -v a="$sa" -v p="$sp" 'BEGIN { printf "%.3f", a / p }')
sline() { sed -n "s/.*BENCH pmu_sample\.$2_ns_per_irq [0-9]* (\(.*\)).*/\1/p" \
	"build/board/$K-$MACH-$1-prod-icount-bench/console.log" | head -1; }
cat >"$OUT/results.json" <<JSON
{
  "kernel": "$(cat build/cache/kernels/$K/abi)",
  "board": "qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -smp 2 -icount shift=0",
  "what": "median guest ns of one batch read of CPU_CYCLES + 6 event counters on CPU 0, 10000 reads",
  "pmu_read": { "amupmu_ns": $a, "perf_ns": $p, "ratio": $ratio, "target_ratio": 0.5,
                "refused_ioctl_ns": ${z:-null},
                "note": "refused_ioctl_ns: an AMUPMU_PMU_CTL the driver refuses (EINVAL): system call, LSM ioctl hooks, dispatch, the session locks and the timing itself, for reference" },
  "pmu_read_all": { "amupmu_ns": ${ra:-null}, "perf_ns": ${rp:-null}, "ratio": $rratio, "cpus": ${rcpus:-null},
                    "what": "median guest ns of reading the same 7 counters on every vCPU from CPU 0: one AMUPMU_PMU_READ_ALL against one read() per CPU of a perf group per CPU" },
  "pmu_sample": { "amupmu_ns_per_irq": $sa, "perf_ns_per_irq": $sp, "ratio": $sratio,
                  "what": "guest ns per overflow interrupt: CPU_CYCLES at EL0 on CPU 0 sampled every 100003 cycles over 20M instructions, (median sampled - median plain run) / samples, 11 runs",
                  "amupmu_run": "$(sline amupmu amupmu)", "perf_run": "$(sline stock perf)" }
}
JSON
cat "$OUT/results.json"
