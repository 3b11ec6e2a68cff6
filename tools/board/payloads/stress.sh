# SPDX-License-Identifier: GPL-2.0
# Board payload: CPU hotplug while counting (100 cycles of every secondary
# CPU), 8 threads of sessions against a hotplug toggler, 100 load/unload
# cycles, and what an unprivileged shell may not do. Run on the amupmu
# devicetree (exclusive mode) and on the stock one (shared mode: the
# sessions go through perf core, and pmu_shared is also toggled under the
# session storm) with -icount: under
# QEMU 7.2's multi-threaded TCG another CPU's PMU counters are reset now
# and then while sampling interrupts fire and a CPU comes online, which
# the monotonic-totals check of hotplug_counting catches (not amupmu:
# ftrace shows no amupmu PMU write on that CPU; single-threaded -icount
# TCG never shows it).
. /lib.sh

tap_check insmod insmod "$AMUPMU_KO"
board_backend
if [ -x /selftests/amupmu_stress_test ]; then
	# 4 guest seconds of the session/hotplug storm (the test's default is
	# 20; about 90,000 sessions and 40 hotplug toggles): under -icount a
	# busy guest second costs about 10 host seconds and make check has a
	# 30-minute budget
	run_test amupmu_stress_test env AMUPMU_STRESS_SECONDS="${AMUPMU_STRESS_SECONDS:-4}" \
		/selftests/amupmu_stress_test
else
	tap_check amupmu_stress_test-present false
fi

# uid 65534 without capabilities: the shell side of the privilege table
nobody() { ! /selftests/amupmu_runas 65534 "$@" 2>/dev/null; }
tap_check nobody-cannot-rmmod nobody rmmod amupmu
tap_check nobody-cannot-insmod nobody insmod "$AMUPMU_KO"
tap_check nobody-cannot-offline-cpu1 nobody sh -c 'echo 0 >/sys/devices/system/cpu/cpu1/online'
tap_check nobody-cannot-read-debugfs nobody ls /sys/kernel/debug
tap_check nobody-can-open-device /selftests/amupmu_runas 65534 sh -c ': </dev/amupmu'
tap_check module-still-loaded grep -q '^amupmu ' /proc/modules
tap_check rmmod rmmod amupmu
