# SPDX-License-Identifier: GPL-2.0
# Board payload: the generic netlink family alone (issue 15), for a quick
# run; check.sh runs the same test among the others. Loads the module, runs
# amupmu_netlink_test (dumps against INFO, strict validation, CPU 1 hotplug
# events, an overrun listener, the privilege rows, unload and reload with a
# subscriber attached), unloads.
. /lib.sh

tap_check insmod insmod "$AMUPMU_KO"
board_backend
run_test amupmu_netlink_test /selftests/amupmu_netlink_test
tap_check rmmod rmmod amupmu
