# SPDX-License-Identifier: GPL-2.0
# Board payload: libamupmu's SPE sessions and the "amupmu spe" commands
# (issue 13) alone: the Catch2 [spe] board tests, then record, dump and
# knobs (spe_tool_checks in lib.sh, which make check's check.sh runs too).
# A mock build has the mock SPE model; elsewhere QEMU has no SPE and the
# tests check the refusals.
#   ./tools/board/run.sh -q -k 6.1 -m el1 -d amupmu -v mock spe-tool
. /lib.sh

tap_check insmod insmod "$AMUPMU_KO"
board_backend
if [ -x /tests/amupmu_board_tests ]; then
	run_test amupmu_board_tests-spe /tests/amupmu_board_tests -r tap "[spe]"
else
	tap_check amupmu_board_tests-present false
fi
spe_tool_checks
tap_check "kernel-log-no-oops" sh -c '! dmesg | grep -E "Oops|BUG:|Unable to handle kernel"'
tap_check rmmod rmmod amupmu
