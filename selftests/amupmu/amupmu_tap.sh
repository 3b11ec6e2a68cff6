# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
#
# TAP 13 helpers of amupmu's shell selftests (busybox sh compatible),
# sourced after the test sets TAP_NAME:
#   . "$(dirname "$0")/amupmu_tap.sh"

# the sourcing test reads them
# shellcheck disable=SC2034
KSFT_SKIP=4 test_num=0 failed=0

log() { echo "# $*"; }

result() { # result <0|1> <name>
	test_num=$((test_num + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $test_num - $2"
	else
		echo "not ok $test_num - $2"
		# shellcheck disable=SC2034 # read by the sourcing test
		failed=1
	fi
}

# amupmu_ko: the module file to insmod: $AMUPMU_KO (the board harness sets
# /amupmu.ko), else the module installed for the running kernel as modinfo
# finds it (amupmu-dkms: /lib/modules/RELEASE/updates/dkms/amupmu.ko),
# else /amupmu.ko
amupmu_ko() {
	if [ -n "${AMUPMU_KO:-}" ]; then
		echo "$AMUPMU_KO"
		return
	fi
	_ko=$(modinfo -n amupmu 2>/dev/null) || _ko=""
	if [ -n "$_ko" ] && [ -f "$_ko" ]; then echo "$_ko"; else echo /amupmu.ko; fi
}

skip_all() {
	echo "TAP version 13"
	echo "1..1"
	echo "ok 1 - $TAP_NAME # SKIP $*"
	exit $KSFT_SKIP
}
