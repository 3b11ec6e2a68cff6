# SPDX-License-Identifier: GPL-2.0
# Helpers for board payloads (busybox sh).

# run_test NAME CMD...: frame one test program's TAP output for the host.
run_test() {
	name=$1
	shift
	echo "AMUPMU-BEGIN $name"
	"$@"
	rc=$?
	echo "AMUPMU-END $name rc=$rc"
	return 0
}

# tap_check NAME CMD...: a one-result TAP test from a shell command.
tap_check() {
	name=$1
	shift
	echo "AMUPMU-BEGIN $name"
	if "$@"; then echo "ok 1 $name"; else echo "not ok 1 $name"; fi
	echo "AMUPMU-END $name rc=0"
}

# the backend every test of this boot runs on
board_backend() {
	be=$(cat /sys/class/misc/amupmu/backend 2>/dev/null || echo unloaded)
	echo "# backend: QEMU TCG PMUv3 ($AMUPMU_BOARD), AMU/SPE registers: $be"
}
