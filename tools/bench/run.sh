#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: figures, not tests. Every boot runs under -icount shift=0
# (guest time then depends only on the instructions executed); amupmu is
# measured on the amupmu devicetree, perf on the stock one, same kernel:
#  - pmu_read: one batch read of the cycle counter + 6 event counters on
#    CPU 0 (amupmu's READ against perf's group read()), on both machines
#    (el1: -M virt; vhe: virtualization=on,gic-version=3);
#  - pmu_sample: guest ns per overflow interrupt, both machines;
#  - the same three in shared mode (ABI 2.3), on the stock devicetree's
#    boot beside perf's figures: amupmu's READ and READ_ALL and its
#    sampling through perf core (pmu_read_shared, pmu_read_all's shared_ns_N,
#    pmu_sample_shared); pmu_read_remote: CPU 1's 7 counters read from
#    CPU 0, amupmu (exclusive and shared) against perf; pmu_read_shared_mux:
#    the 7 as a multiplexed group read with their times, against 7 solo
#    perf events read one by one;
#  - pmu_read_all: the same counters on every vCPU read from CPU 0, one
#    AMUPMU_PMU_READ_ALL against one read() per CPU, at -smp 2, 4 and 8
#    (el1) and 2 (vhe);
#  - amu_read (ABI 2.1): one AMUPMU_AMU_READ of CPU 0 (every AMU counter
#    and the time, read on the CPU) against one AMUPMU_PMU_READ of four PMU
#    counters, in one boot of the mock build (QEMU hides the AMU: the mock
#    model's function computes each register where hardware runs an mrs),
#    both machines;
#  - exporter (issue 28): amupmu exporter serving the mock build's AMU,
#    two PMU events and the driver's health, scraped every second by
#    Prometheus on the host for 30 s (tools/board/exporter-test.py
#    --bench): guest CPU time per scrape and the share of a CPU at a 15 s
#    scrape interval, at -smp 2, 4 and 8 (el1).
# Writes build/bench/results.json. K=6.12 make bench: the trixie kernel.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
K=${K:-6.1}
OUT=$TOP/build/bench
mkdir -p "$OUT"
SMPS=${BENCH_SMPS:-"2 4 8"}

# boot MACH DT SMP [VARIANT] -> the console log of that bench boot
boot() {
	local v=${4:-prod} log name
	log=$OUT/$1-$2-$v-smp$3.log
	./tools/board/run.sh -q -i -k "$K" -m "$1" -s "$3" -d "$2" -v "$v" bench >"$log" 2>&1 ||
		{ cat "$log" >&2; exit 1; }
	name=$K-$1-$2-$v$([ "$3" = 2 ] || echo "-smp$3")-icount-bench
	echo "build/board/$name/console.log"
}
# fig LOG NAME -> the figure printed as "BENCH NAME <n>"
fig() { sed -n "s/.*BENCH $2 \([0-9]*\) .*/\1/p" "$1" | head -1; }
ratio() { awk -v a="$1" -v p="$2" 'BEGIN { if (a == "" || p == "") print "null"; else printf "%.3f", a / p }'; }
num() { [ -n "$1" ] && echo "$1" || echo null; }
sline() { sed -n "s/.*BENCH pmu_sample\.$2_ns_per_irq [0-9]* (\(.*\)).*/\1/p" "$1" | head -1; }

machines=""
for m in el1 vhe; do
	la=$(boot "$m" amupmu 2)
	ls=$(boot "$m" stock 2)
	a=$(fig "$la" pmu_read.amupmu_ns) p=$(fig "$ls" pmu_read.perf_ns) z=$(fig "$la" pmu_read.null_ns)
	sa=$(fig "$la" pmu_sample.amupmu_ns_per_irq) sp=$(fig "$ls" pmu_sample.perf_ns_per_irq)
	# shared mode, from the stock boot
	h=$(fig "$ls" pmu_read.shared_ns) hz=$(fig "$ls" pmu_read.null_shared_ns)
	hs=$(fig "$ls" pmu_sample.shared_ns_per_irq)
	ra1=$(fig "$la" pmu_read_remote.amupmu_ns) rh1=$(fig "$ls" pmu_read_remote.shared_ns)
	rp1=$(fig "$ls" pmu_read_remote.perf_ns)
	hx=$(fig "$ls" pmu_read_mux.shared_ns) px=$(fig "$ls" pmu_read_mux.perf_ns)
	[ -n "$h" ] && [ -n "$hs" ] && [ -n "$rh1" ] && [ -n "$rp1" ] && [ -n "$hx" ] && [ -n "$px" ] ||
		{ echo "bench: no shared-mode figure on $m (see $OUT/$m-stock-*.log)" >&2; exit 1; }
	lm=$(boot "$m" amupmu 2 mock)
	ua=$(fig "$lm" amu_read.amu_ns) up=$(fig "$lm" amu_read.pmu4_ns) um=$(fig "$lm" amu_read.amu_min_ns)
	sr=$(fig "$lm" spe_report.records_per_s)
	srl=$(sed -n "s/.*BENCH spe_report\.records_per_s [0-9]* (\(.*\)).*/\1/p" "$lm" | head -1)
	ub=$(fig "$lm" amu_read.amu_bare_ns)
	si=$(fig "$lm" spe_irq.max_ns)
	[ -n "$ua" ] && [ -n "$up" ] || { echo "bench: no AMU figure on $m (see $OUT/$m-*mock*.log)" >&2; exit 1; }
	[ -n "$a" ] && [ -n "$p" ] && [ -n "$sa" ] && [ -n "$sp" ] ||
		{ echo "bench: no figure on $m (see $OUT/$m-*.log)" >&2; exit 1; }
	all="" sep=""
	for n in $SMPS; do
		[ "$m" = vhe ] && [ "$n" != 2 ] && continue
		if [ "$n" = 2 ]; then lan=$la lsn=$ls; else lan=$(boot "$m" amupmu "$n") lsn=$(boot "$m" stock "$n"); fi
		ra=$(fig "$lan" pmu_read_all.amupmu_ns) rp=$(fig "$lsn" pmu_read_all.perf_ns)
		rh=$(fig "$lsn" pmu_read_all.shared_ns)
		all="$all$sep\"amupmu_ns_$n\": $(num "$ra"), \"perf_ns_$n\": $(num "$rp"), \"ratio_$n\": $(ratio "$ra" "$rp"),
                      \"shared_ns_$n\": $(num "$rh"), \"shared_ratio_$n\": $(ratio "$rh" "$rp")"
		sep=", "
	done
	machines="$machines${machines:+,
}  \"$m\": {
    \"pmu_read\": { \"amupmu_ns\": $a, \"perf_ns\": $p, \"ratio\": $(ratio "$a" "$p"), \"target_ratio\": 0.5,
                  \"refused_ioctl_ns\": $(num "$z") },
    \"pmu_read_shared\": { \"shared_ns\": $h, \"perf_ns\": $p, \"ratio\": $(ratio "$h" "$p"),
                         \"refused_ioctl_ns\": $(num "$hz"), \"exclusive_ns\": $a, \"shared_over_exclusive\": $(ratio "$h" "$a") },
    \"pmu_read_remote\": { \"amupmu_ns\": $(num "$ra1"), \"shared_ns\": $rh1, \"perf_ns\": $rp1,
                         \"ratio\": $(ratio "$ra1" "$rp1"), \"shared_ratio\": $(ratio "$rh1" "$rp1") },
    \"pmu_read_shared_mux\": { \"shared_ns\": $hx, \"perf_ns\": $px, \"ratio\": $(ratio "$hx" "$px") },
    \"pmu_read_all\": { $all },
    \"pmu_sample\": { \"amupmu_ns_per_irq\": $sa, \"perf_ns_per_irq\": $sp, \"ratio\": $(ratio "$sa" "$sp"),
                    \"amupmu_run\": \"$(sline "$la" amupmu)\", \"perf_run\": \"$(sline "$ls" perf)\" },
    \"pmu_sample_shared\": { \"shared_ns_per_irq\": $hs, \"perf_ns_per_irq\": $sp, \"ratio\": $(ratio "$hs" "$sp"),
                           \"shared_run\": \"$(sline "$ls" shared)\" },
    \"amu_read\": { \"backend\": \"mock\", \"amu_read_ns\": $ua, \"pmu_read4_ns\": $up, \"ratio\": $(ratio "$ua" "$up"),
                  \"amu_read_model_min_ns\": $(num "$um"), \"ratio_model_min\": $(ratio "$um" "$up"),
                  \"amu_read_driver_path_ns\": $(num "$ub"), \"ratio_driver_path\": $(ratio "$ub" "$up") },
    \"spe_report\": { \"backend\": \"mock\", \"records_per_s\": $(num "$sr"), \"run\": \"$srl\" },
    \"spe_irq\": { \"backend\": \"mock\", \"max_ns\": $(num "$si") }
  }"
done
exporter="" sep=""
for n in $SMPS; do
	elog=$OUT/exporter-smp$n.log
	./tools/board/exporter-test.py --bench -k "$K" -v mock -s "$n" >"$elog" 2>&1 ||
		{ cat "$elog" >&2; exit 1; }
	exporter="$exporter$sep\"smp$n\": $(sed -n 's/^BENCH-JSON //p' "$elog" | head -1)"
	sep=", "
done
# the SPE histograms' cost: 2 vCPUs, CPU 1 busy, one record in 2^18 operations
elog=$OUT/exporter-spe.log
./tools/board/exporter-test.py --bench --spe -k "$K" -v mock -s 2 >"$elog" 2>&1 ||
	{ cat "$elog" >&2; exit 1; }
exporter="$exporter, \"spe_smp2\": $(sed -n 's/^BENCH-JSON //p' "$elog" | head -1)"
cat >"$OUT/results.json" <<JSON
{
  "kernel": "$(cat build/cache/kernels/$K/abi)",
  "board": "qemu-system-aarch64 -cpu max,pauth-impdef=on -icount shift=0; el1: -M virt, vhe: -M virt,virtualization=on,gic-version=3",
  "what": {
    "pmu_read": "median guest ns of one batch read of CPU_CYCLES + 6 event counters on CPU 0, 10000 reads; refused_ioctl_ns: an AMUPMU_PMU_CTL the driver refuses (system call, LSM hooks, dispatch, timing), for reference",
    "pmu_read_all": "median guest ns of reading the same 7 counters on every vCPU from CPU 0, 2000 reads, at -smp N: one AMUPMU_PMU_READ_ALL against one read() per CPU of a perf group per CPU; shared_ns_N: amupmu's READ_ALL in shared mode on the stock devicetree's boot, shared_ratio_N against that boot's perf",
    "pmu_read_shared": "pmu_read in shared mode (ABI 2.3, stock devicetree, pmu_shared=Y: the 7 events are pinned in-kernel perf counters, read on CPU 0 by the ioctl's local path), against perf's group read() in the same boot; refused_ioctl_ns: the refused AMUPMU_PMU_CTL with the shared group configured; exclusive_ns: pmu_read's amupmu_ns (amupmu devicetree boot)",
    "pmu_read_remote": "median guest ns of one read of the 7 counters of CPU 1 from CPU 0, 10000 reads, at -smp 2: AMUPMU_PMU_READ of CPU 1 (exclusive: amupmu devicetree boot; shared: stock boot) against read() of a perf group bound to CPU 1 (stock boot): each a cross-CPU call",
    "pmu_read_shared_mux": "median guest ns of one read of the same 7 events configured as a multiplexed group (shared mode, AMUPMU_PMU_CONFIG_MULTIPLEX: each a flexible perf event of its own), AMUPMU_PMU_READ with AMUPMU_PMU_READ_TIMES (each value with its time enabled and running), against perf's equivalent in the same boot: the 7 events opened on their own, one read() each with the times; 10000 reads; the 7 fit QEMU's counters, so this is the read path, not rotation",
    "pmu_sample_shared": "pmu_sample with amupmu in shared mode (stock devicetree: perf core's overflow callback writes amupmu's record), against perf sampling in the same boot",
    "pmu_sample": "guest ns per overflow interrupt: CPU_CYCLES at EL0 on CPU 0 sampled every 100003 cycles over 20M instructions, (median sampled - median plain run) / samples, 11 runs",
    "amu_read": "median guest ns of one AMUPMU_AMU_READ of CPU 0 (4 group 0 + 2 group 1 counters and the time, read on the CPU) against one AMUPMU_PMU_READ of 4 PMU counters on CPU 0, 10000 reads each, same boot of the mock build (amupmu devicetree): QEMU hides the AMU, so the mock model computes each AMU register in a function call where hardware runs an mrs; the figure is the ioctl path around the reads, not the hardware's register cost; amu_read_model_min_ns: the same read with the model at its cheapest (active fixed, counters disabled: no idle-time lookup, no 128-bit divisions), what the read costs with little model arithmetic; amu_read_driver_path_ns: the same read with CPU 0's model frozen (amu_model frozen=1: each counter read a plain load of a held value), the driver's path around the eight register reads, which is what hardware would add its eight mrs to",
    "spe_report": "records per second through \`amupmu spe report -i FILE\` on CPU 0 (exec, reading the file, decoding every record, symbols, aggregation; median of 5 runs, guest time) of a recording of a pointer chase on CPU 0 (interval 1024, timestamps) made in the same boot by the mock SPE model (QEMU has no SPE): the records are the model's, the decoding and the report are the real code",
    "exporter": "amupmu exporter in the guest (amupmu-dyn, the mock build: AMU, PMU events inst_retired and cpu_cycles on every CPU, the netlink dumps) scraped every second by Debian's Prometheus on the host for 30 s: cpu_ms_per_scrape, the exporter's utime + stime (10 ms ticks) over the scrapes; cpu_share_at_15s, that per 15 s; scrape_ms_median, its own amupmu_exporter_scrape_duration_seconds (reading the driver and building the metrics, not the HTTP and gzip); samples_per_scrape, what Prometheus stored per scrape; guest time under -icount; spe_smp2: the same with spe = on (spe_interval 2^18) and CPU 1 busy at EL0 (the mock SPE model: 1e9 operations a second), spe_records_per_s decoded, cpu_ms_per_s and us_per_record the exporter's CPU time (its drain thread and scrapes) per second and per record",
    "spe_irq": "guest ns of the longest call of the SPE buffer interrupt handler (interrupts off all along) in a run with the largest buffer (4 MiB) and its watermark at 4 MiB, so that each buffer event ends a 4 MiB region; best of 3 runs (selftest amupmu_spe_buffer_test irq_o1, the mock model timing each call): the handler is O(1), the region's records are walked in process context"
  },
$machines,
  "exporter": { $exporter }
}
JSON
cat "$OUT/results.json"
