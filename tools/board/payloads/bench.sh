# SPDX-License-Identifier: GPL-2.0
# Board payload of make bench: one batch read of 7 counters, amupmu's ioctl
# on the amupmu devicetree (exclusive mode), perf's group read() on the
# stock one, and on the stock one amupmu's ioctl in shared mode too (ABI
# 2.3: arm_pmu owns the PMU, amupmu counts through perf core) against the
# same perf read() in the same boot; the same read of CPU 1's counters from
# CPU 0 (*-remote: amupmu's IPI against perf's); the same 7 counters on
# every vCPU read at once (amupmu's AMUPMU_PMU_READ_ALL against perf's
# read() per CPU, exclusive and shared); the cost of an overflow interrupt
# (amupmu exclusive, amupmu shared, perf). Boards
# with more than 2 vCPUs (make bench's -smp 4 and 8) run only the
# every-CPU read. A mock build (make bench's AMU boot) runs only the AMU
# figure: one AMUPMU_AMU_READ of CPU 0 against one AMUPMU_PMU_READ of four
# PMU counters, in the same boot (the model as it runs, at its cheapest,
# and frozen: the driver path), and SPE records per second through
# `amupmu spe report` (mock SPE model).
. /lib.sh
tap_check insmod insmod "$AMUPMU_KO"
board_backend
if grep -q "amupmu,pmuv3" /proc/device-tree/amupmu/compatible 2>/dev/null; then
	mode=amupmu
else
	mode=perf
fi
ncpu=$(grep -c '^processor' /proc/cpuinfo)
if [ "$(cat /sys/class/misc/amupmu/backend)" = mock ]; then
	run_test "amu_read_bench-amu" sh -c "/tests/pmu_read_bench amu 10000 | sed 's/^BENCH/ok 1 - BENCH/'"
	# the model at its cheapest (active fixed, counters disabled): what
	# the model's arithmetic adds to the figure above
	m=/sys/kernel/debug/amupmu/amu_model
	echo "0 active=1000 enable0=0x0 enable1=0x0" >$m
	run_test "amu_read_bench-amu-min" sh -c "/tests/pmu_read_bench amu-min 10000 | sed 's/^BENCH/ok 1 - BENCH/'"
	echo "0 active=auto enable0=0xf enable1=0x3" >$m
	# the model frozen (a bench aid: each counter read is a plain load of
	# a held value): the driver's path around the eight register reads
	echo "0 frozen=1" >$m
	run_test "amu_read_bench-amu-bare" sh -c "/tests/pmu_read_bench amu-bare 10000 | sed 's/^BENCH/ok 1 - BENCH/'"
	echo "0 frozen=0" >$m
	[ $mode = amupmu ] &&
		run_test "amu_read_bench-pmu4" sh -c "/tests/pmu_read_bench amupmu4 10000 | sed 's/^BENCH/ok 1 - BENCH/'"
	# SPE end to end (mock SPE model): a pointer chase on CPU 0 recorded
	# with loads/stores and timestamps, then records per second through
	# `amupmu spe report` (exec, file, decoding, symbols, aggregation)
	mount -t debugfs none /sys/kernel/debug 2>/dev/null
	f=/tmp/bench-spe.data
	tap_check spe_record sh -c "amupmu spe record -C 0 --interval 1024 --ts -o $f \
		-- taskset 1 amupmu-workload chase 2000000 4096 >/dev/null 2>&1"
	records=$(grep -a '^cpu ' $f | sed 's/.* records=\([0-9]*\) .*/\1/' | awk '{ n += $1 } END { print n + 0 }')
	run_test "spe_report_bench" sh -c "/tests/spe_report_bench $records 5 -- amupmu spe report -i $f |
		sed 's/^BENCH/ok 1 - BENCH/'"
	# the SPE buffer interrupt with interrupts off at the largest buffer
	# (4 MiB, watermark 4 MiB: each buffer event ends a 4 MiB region): the
	# longest handler call of a run, best of 3 runs (selftest irq_o1; the
	# mock model times each call); O(1) since issue 24 (it walked the region)
	run_test "spe_irq_bench" sh -c "AMUPMU_SPE_ONLY=irq_o1 /selftests/amupmu_spe_buffer_test 2>&1 |
		sed -n 's/.*best of 3 runs with a 4 MiB region: \([0-9]*\) ns.*/ok 1 - BENCH spe_irq.max_ns \1 (buffer=4MiB watermark=4MiB best-of-3)/p'"
	exit 0
fi
# the stock devicetree: amupmu in shared mode beside perf (pmu_shared=Y,
# the default; the benches check the mode themselves)
shared=no
[ $mode = perf ] && [ "$(cat /sys/module/amupmu/parameters/pmu_shared 2>/dev/null)" = Y ] && shared=yes
echo "# bench: devicetree $mode, shared mode $shared, $ncpu vCPUs"
bench() { run_test "$1-$2" sh -c "/tests/$1 $2 $3 | sed 's/^BENCH/ok 1 - BENCH/'"; }
if [ "$ncpu" -le 2 ]; then
	[ $mode = amupmu ] && bench pmu_read_bench null 10000
	bench pmu_read_bench $mode 10000
	# CPU 1's counters read from CPU 0: the cross-CPU call of each
	[ "$ncpu" = 2 ] && bench pmu_read_bench $mode-remote 10000
	# overflow-interrupt cost: CPU_CYCLES at EL0 sampled every 100003 cycles
	bench pmu_sample_bench $mode "100003 10000000"
	if [ $shared = yes ]; then
		bench pmu_read_bench null-shared 10000
		bench pmu_read_bench shared 10000
		[ "$ncpu" = 2 ] && bench pmu_read_bench shared-remote 10000
		bench pmu_sample_bench shared "100003 10000000"
		# a multiplexed group read with its times, against perf's 7
		# solo events read one by one with theirs
		bench pmu_read_bench shared-mux 10000
		bench pmu_read_bench perf-mux 10000
	fi
fi
bench pmu_read_bench $mode-all 2000
[ $shared = yes ] && bench pmu_read_bench shared-all 2000
