#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# /init of the amupmu test board: mount, run /payload.sh, dump the kernel
# log for the host to check, power off.
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/tests
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp
echo "AMUPMU-BOARD: start $(uname -r) board=$amupmu_board uptime=$(cut -d' ' -f1 /proc/uptime)"
export AMUPMU_BOARD="$amupmu_board" AMUPMU_KO=/amupmu.ko AMUPMU_SELFTEST_DIR=/selftests
cd / && sh /payload.sh
echo "AMUPMU-BOARD: payload status $?"
dmesg | sed 's/^/DMESG: /'
echo "AMUPMU-BOARD: done uptime=$(cut -d' ' -f1 /proc/uptime)"
poweroff -f
