# SPDX-License-Identifier: GPL-2.0
# Board payload of make check: load the module, run the kselftests, the
# Catch2 board tests and the amupmu tool, unload.
. /lib.sh

tap_check insmod insmod "$AMUPMU_KO"
board_backend

# the ABI sweep, bad sysfs input and the privilege table: issue 5;
# platform device unbind/bind with sessions open (amupmu devicetree), and
# on the stock one shared mode turned off under open sessions (pmu_shared);
# the PMU mode (exclusive or shared) each test ran in is in its backend
# line; CPU power-down and PMU sessions (mock builds only: the
# debugfs cpu_pm file; on the amupmu/mock board this is where its stress
# runs, without its sampler thread; cpupm.sh runs it all under -icount);
# the AMU (ABI 2.1): the mock model on mock builds, EOPNOTSUPP and no AMU
# register touched on production builds (QEMU hides the AMU: an access
# would be an undefined instruction in the kernel); the SPE filter knobs
# (debugfs arm_spe/) and the mock's spe_model on mock builds, no arm_spe
# directory on production builds (QEMU hides SPE); the SPE sessions, one
# program per area (records, buffers, hotplug, refusals, lifetime: the
# mock model on mock builds, EOPNOTSUPP on production builds); the generic
# netlink family (issue 15: dumps, validation, hotplug events, privilege,
# unload with a subscriber attached); shared mode's multiplexed groups and
# per-event times (issue 16; skipped in exclusive mode but the refusals);
# netlink CPU_GET's per-CPU totals of lost samples and throttles (ABI 2.5:
# exact, across hotplug, CAP_PERFMON only)
for t in amupmu_info_test amupmu_caps_test amupmu_abi_test amupmu_sysfs_test amupmu_priv_test \
	amupmu_unbind_test amupmu_cpupm_test amupmu_amu_info_test amupmu_amu_abi_test \
	amupmu_amu_model_test amupmu_amu_hotplug_test amupmu_spe_test \
	amupmu_spe_record_test amupmu_spe_buffer_test amupmu_spe_hotplug_test amupmu_spe_abi_test \
	amupmu_spe_lifetime_test amupmu_netlink_test amupmu_mux_test amupmu_memlock_test \
	amupmu_totals_test; do
	if [ -x "/selftests/$t" ]; then
		run_test "$t" "/selftests/$t"
	else
		tap_check "$t-present" false
	fi
done
# shared mode: RELEASE of groups whose sampling counter overflows every
# sample_period_min cycles, 400 times on both vCPUs, where the vCPUs run
# in parallel (no -icount; the pmu payload runs every PMU program under
# -icount, where this test makes 20 rounds): an overflow handler once met
# a half-released group (kernel NULL dereference, found by the fuzzer).
# The sampling program's other tests skip here (AMUPMU_PMU_ONLY)
if [ "$(pmu_mode)" = shared ]; then
	run_test amupmu_pmu_release_race env AMUPMU_PMU_ONLY=sample_release_while_overflowing \
		/selftests/amupmu_pmu_sample_test
fi

# the library's unit tests, on the target CPU (they also run on the host
# and under qemu-aarch64-static). They touch no device, so the kernel and
# the machine do not change them: one board runs them (6.1's amupmu/mock
# on EL1), the others save the 34 s (make check's budget)
case $AMUPMU_BOARD in
6.1/el1/amupmu/mock/*)
	if [ -x /tests/amupmu_host_tests ]; then
		# no locales in the initramfs: the locale tests with a C++
		# locale of their own (they run under de_DE.UTF-8 on the host
		# and under qemu-aarch64-static)
		export AMUPMU_ALLOW_NO_LOCALE=1
		run_test amupmu_host_tests sh /catch2-tap.sh --once -- /tests/amupmu_host_tests
	else
		tap_check amupmu_host_tests-present false
	fi
	;;
esac

if [ -x /tests/amupmu_board_tests ]; then
	run_test amupmu_board_tests sh /catch2-tap.sh -- /tests/amupmu_board_tests
else
	tap_check amupmu_board_tests-present false
fi

# "amupmu spe record", "dump" and "knobs" (issue 13): on the mock model
# (mock builds), skipped without SPE
spe_tool_checks
stat_signal_checks

# no AMU (or any) register access trapped: on QEMU an AMU system register
# is UNDEFINED, and run.sh's log check does not know that message
tap_check "kernel-log-no-undefined-instruction" sh -c \
	'! dmesg | grep -E "Undefined instruction|Oops|BUG:|Unable to handle kernel"'

# the PMU PPI belongs to whoever pmu_owner names
owner_irq() {
	case $(cat /sys/class/misc/amupmu/pmu_owner) in
	amupmu) grep -q ' amupmu$' /proc/interrupts && ! grep -q arm-pmu /proc/interrupts ;;
	kernel) grep -q arm-pmu /proc/interrupts && ! grep -q ' amupmu$' /proc/interrupts ;;
	*) ! grep -qE 'arm-pmu| amupmu$' /proc/interrupts ;;
	esac
}
tap_check "pmu-interrupt-owner" owner_irq

tap_check "amupmu-info" sh -c 'amupmu info && amupmu info --json >/tmp/info.json && grep -q "\"pmu_owner\"" /tmp/info.json'

# module parameters at load (pmu_counter_bits 32/64 only); the module
# test and the hotplug test reload the module themselves and leave it loaded
if [ -f /selftests/amupmu_modparam.sh ]; then
	run_test amupmu_modparam sh /selftests/amupmu_modparam.sh
else
	tap_check amupmu_modparam-present false
fi
# the shell-level hotplug script: load with cpu1 offline, the info test
# in both states, unload and reload. 4 offline/online cycles here (its
# default is 20, 0.8 s each: the info test twice per cycle): the many
# cycles are amupmu_netlink_test's (100 on every board) and the stress
# payload's (100 while counting and sampling)
if [ -f /selftests/amupmu_hotplug.sh ]; then
	run_test amupmu_hotplug env AMUPMU_CYCLES=4 sh /selftests/amupmu_hotplug.sh
fi

tap_check rmmod rmmod amupmu
