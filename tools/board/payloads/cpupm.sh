# SPDX-License-Identifier: GPL-2.0
# Board payload: CPU power-down (the mock build's debugfs cpu_pm) and PMU
# sessions, on a mock module: on the amupmu devicetree amupmu's CPU PM
# notifier restores the PMU, on the stock one arm_pmu's (shared mode); counts exact
# across power-downs (run with -i: INST_RETIRED needs -icount), disabled
# groups stay disabled, sampling periods kept, and the stress of sessions
# and a sampling thread while both CPUs power-cycle (AMUPMU_CPUPM_SECONDS
# guest seconds, 4 here: under -icount a guest second of two busy vCPUs is
# about ten host seconds, and make check has a 30-minute budget). check.sh runs the same program on its amupmu/mock board for the
# default 5 s, without -icount and so without the sampling thread. On a
# production module every test skips. The amupmu_amu_*_test programs: the
# mock AMU model.
#   ./tools/board/run.sh -k 6.1 -d amupmu -v mock -i cpupm
. /lib.sh

tap_check insmod insmod "$AMUPMU_KO"
board_backend
if [ -x /selftests/amupmu_cpupm_test ]; then
	run_test amupmu_cpupm_test env AMUPMU_CPUPM_SECONDS="${AMUPMU_CPUPM_SECONDS:-4}" \
		/selftests/amupmu_cpupm_test
else
	tap_check amupmu_cpupm_test-present false
fi
# the AMU model across the same power-downs, hotplug and readers, under
# -icount (and on the VHE machine: check.sh's mock boards are el1 only)
for t in amupmu_amu_info_test amupmu_amu_abi_test amupmu_amu_model_test \
	amupmu_amu_hotplug_test; do
	if [ -x "/selftests/$t" ]; then
		run_test "$t" "/selftests/$t"
	else
		tap_check "$t-present" false
	fi
done
tap_check rmmod rmmod amupmu
