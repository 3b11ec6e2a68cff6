# SPDX-License-Identifier: GPL-2.0
# Board payload: the generic netlink family alone (issue 15), for a quick
# run; check.sh runs the same test among the others. Loads the module, runs
# amupmu_netlink_test (dumps against INFO, strict validation, CPU 1 hotplug
# events, an overrun listener, the privilege rows, unload and reload with a
# subscriber attached), the library's Monitor board tests and the tool's
# monitor checks (tool.sh), unloads.
. /lib.sh

tap_check insmod insmod "$AMUPMU_KO"
board_backend
run_test amupmu_netlink_test /selftests/amupmu_netlink_test
# the library's amupmu::Monitor (dumps against INFO, a session's events, an
# overrun and its gaps) and the tool's monitor and info fallback
if [ -x /tests/amupmu_board_tests ]; then
	run_test amupmu_board_tests-monitor /tests/amupmu_board_tests -r tap --use-colour no "[monitor]"
else
	tap_check amupmu_board_tests-present false
fi
. /tool.sh
monitor_tool_tests
tap_check rmmod rmmod amupmu
