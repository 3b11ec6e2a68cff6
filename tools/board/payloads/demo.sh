# SPDX-License-Identifier: GPL-2.0
# Board payload of make demo: load the module and show what the board has.
. /lib.sh

tap_check insmod insmod "$AMUPMU_KO"
board_backend
echo "AMUPMU-BEGIN amupmu-info"
echo "# \$ amupmu info"
amupmu info
rc=$?
[ $rc = 0 ] && echo "ok 1 amupmu info" || echo "not ok 1 amupmu info"
echo "AMUPMU-END amupmu-info rc=$rc"
