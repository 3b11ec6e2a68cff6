# SPDX-License-Identifier: GPL-2.0
# Board payload: PMU counting sessions. On the amupmu devicetree the module
# owns the PMU (exclusive mode); on the stock one the kernel's arm_pmu does
# and the sessions count through perf core (shared mode), with the same
# tests (run with -i for exact INST_RETIRED); with pmu_shared=N there every
# PMU request must fail with ENXIO and leave perf's counters alone.
# PMU_COUNTER_BITS=32 (pmu32.sh) forces
# 32-bit event counters so that overflows are accumulated.
. /lib.sh
. /tool.sh

bits=${PMU_COUNTER_BITS:-64}
tap_check "insmod-pmu_counter_bits=$bits" insmod "$AMUPMU_KO" pmu_counter_bits=$bits
board_backend
echo "# pmu_counter_bits=$(cat /sys/module/amupmu/parameters/pmu_counter_bits)"
# the PMU session programs, one per area (selftests/amupmu/Makefile's
# AMUPMU_PMU_TESTS)
for t in amupmu_pmu_mode_test amupmu_pmu_count_test amupmu_pmu_filter_test \
	amupmu_pmu_alloc_test amupmu_pmu_abi_test amupmu_pmu_sample_test \
	amupmu_pmu_hotplug_test amupmu_pmu_priv_test; do
	if [ -x "/selftests/$t" ]; then
		run_test "$t-$bits" "/selftests/$t"
	else
		tap_check "$t-present" false
	fi
done
# the amupmu tool: stat (the fixed loop within 0.1 % under -icount), errors,
# record/report, calibrate
[ "$bits" = 64 ] && tool_tests
# record/report of a dynamic program and its forked child (tool.sh)
[ "$bits" = 64 ] && record_tool_tests
tap_check "rmmod-$bits" rmmod amupmu
[ "$bits" = 64 ] && tool_tests_unloaded
