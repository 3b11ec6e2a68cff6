# SPDX-License-Identifier: GPL-2.0
# Board payload of make bench: one batch read of 7 counters, amupmu's ioctl
# on the amupmu devicetree, perf's group read() on the stock one.
. /lib.sh
tap_check insmod insmod "$AMUPMU_KO"
board_backend
if grep -q "amupmu,pmuv3" /proc/device-tree/amupmu/compatible 2>/dev/null; then
	mode=amupmu
	run_test "pmu_read_bench-null" sh -c "/tests/pmu_read_bench null 10000 | sed 's/^BENCH/ok 1 - BENCH/'"
else
	mode=perf
fi
run_test "pmu_read_bench-$mode" sh -c "/tests/pmu_read_bench $mode 10000 | sed 's/^BENCH/ok 1 - BENCH/'"
# overflow-interrupt cost: CPU_CYCLES at EL0 sampled every 100003 cycles
run_test "pmu_sample_bench-$mode" sh -c "/tests/pmu_sample_bench $mode 100003 10000000 | sed 's/^BENCH/ok 1 - BENCH/'"
