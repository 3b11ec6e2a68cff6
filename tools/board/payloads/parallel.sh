# SPDX-License-Identifier: GPL-2.0
# Board payload: the concurrency and load/unload stress without -icount, so
# that both vCPUs run at once (under -icount QEMU runs them in turn). The
# hotplug test runs in stress.sh under -icount only (see there why).
. /lib.sh

tap_check insmod insmod "$AMUPMU_KO"
board_backend
run_test amupmu_stress_test env AMUPMU_STRESS_SKIP=hotplug_counting /selftests/amupmu_stress_test
tap_check rmmod rmmod amupmu
