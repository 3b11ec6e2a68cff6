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
if [ -x /selftests/amupmu_pmu_test ]; then
	run_test "amupmu_pmu_test-$bits" /selftests/amupmu_pmu_test
else
	tap_check amupmu_pmu_test-present false
fi
# the amupmu tool: stat (the fixed loop within 0.1 % under -icount), errors,
# record/report, calibrate
[ "$bits" = 64 ] && tool_tests
# record/report of a dynamic program and its forked child (tool.sh)
[ "$bits" = 64 ] && record_tool_tests
tap_check "rmmod-$bits" rmmod amupmu
[ "$bits" = 64 ] && tool_tests_unloaded
