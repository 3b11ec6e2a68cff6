#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# /init of the amupmu test board: mount, print which board this is, run
# /payload.sh, dump the kernel log for the host to check, power off.
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/tests
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp
# shellcheck disable=SC2154 # amupmu_board: a kernel parameter, from run.sh
echo "AMUPMU-BOARD: start $(uname -r) board=$amupmu_board uptime=$(cut -d' ' -f1 /proc/uptime)"
# shellcheck source=tools/board/lib.sh
. /lib.sh
AMUPMU_BOARD_ID=$(board_identity)
# the board this boot runs on: run.sh checks it and names every result after it
echo "AMUPMU-BOARD: $AMUPMU_BOARD_ID"
export AMUPMU_BOARD="$amupmu_board" AMUPMU_BOARD_ID AMUPMU_KO=/amupmu.ko AMUPMU_SELFTEST_DIR=/selftests
cd / && sh /payload.sh
echo "AMUPMU-BOARD: payload status $?"
dmesg | sed 's/^/DMESG: /'
echo "AMUPMU-BOARD: done uptime=$(cut -d' ' -f1 /proc/uptime)"
poweroff -f
