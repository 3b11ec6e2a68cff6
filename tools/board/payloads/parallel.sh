# SPDX-License-Identifier: GPL-2.0
# Board payload: the concurrency and load/unload stress without -icount, so
# that both vCPUs run at once (under -icount QEMU runs them in turn). The
# hotplug test runs in stress.sh under -icount only (see there why).
. /lib.sh

tap_check insmod insmod "$AMUPMU_KO"
board_backend
# 8 s of the session storm (the test's default is 20): make check's budget
run_test amupmu_stress_test env AMUPMU_STRESS_SKIP=hotplug_counting \
	AMUPMU_STRESS_SECONDS="${AMUPMU_STRESS_SECONDS:-8}" /selftests/amupmu_stress_test
tap_check rmmod rmmod amupmu
