#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Prove the board harness can fail: each self-test payload must make
# tools/board/run.sh exit non-zero for the stated reason. Prints TAP.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
D=$TOP/tools/board/selftest
echo "1..5"
out=$("$TOP/tools/board/run.sh" -q -k 6.1 -d stock "$D/warn.sh" 2>&1); rc=$?
if [ $rc != 0 ] && grep -q 'kernel log: .*WARNING: CPU' <<<"$out"; then
	echo "ok 1 - harness fails a boot whose kernel log has a WARNING"
else
	echo "not ok 1 - harness missed a WARNING (status $rc)"; echo "$out" | sed 's/^/# /'
fi
out=$("$TOP/tools/board/run.sh" -q -k 6.1 -d stock -t 15 "$D/hang.sh" 2>&1); rc=$?
if [ $rc != 0 ] && grep -q 'timeout after 15 s' <<<"$out"; then
	echo "ok 2 - harness enforces its timeout"
else
	echo "not ok 2 - harness did not time out (status $rc)"; echo "$out" | sed 's/^/# /'
fi
out=$("$TOP/tools/board/run.sh" -q -k 6.1 -d stock "$D/hang.sh" -t 15 2>&1); rc=$?
if [ $rc = 2 ]; then
	echo "ok 3 - harness refuses a malformed command line"
else
	echo "not ok 3 - harness accepted options after the payload (status $rc)"
fi
# a VHE/GICv3 machine where el1 was asked for: the AMUPMU-BOARD line must say so
out=$(BOARD_QEMU_EXTRA="-M virt,virtualization=on,gic-version=3" \
	"$TOP/tools/board/run.sh" -q -k 6.1 -d stock -m el1 "$D/pass.sh" 2>&1); rc=$?
if [ $rc != 0 ] && grep -q 'booted kernel_el=2, asked for kernel_el=1' <<<"$out" &&
   grep -q 'booted gic=v3, asked for gic=v2' <<<"$out"; then
	echo "ok 4 - harness fails a boot on another machine than the one asked for"
else
	echo "not ok 4 - harness missed a machine mismatch (status $rc)"; sed 's/^/# /' <<<"$out"
fi
# every debug-kernel report (splats.sh writes their first lines into the
# kernel log) fails the boot, each named in a "kernel log:" failure
# (printk.devkmsg=on: /dev/kmsg would keep only 10 lines in 5 s)
out=$(BOARD_APPEND=printk.devkmsg=on "$TOP/tools/board/run.sh" -q -k 6.1 -d stock "$D/splats.sh" 2>&1); rc=$?
kl=$(grep -F "kernel log: " <<<"$out")
missed=$(sed -n '/^SPLATS$/,$d; 1,/<<.SPLATS.$/d; p' "$D/splats.sh" | while IFS= read -r l; do
	grep -qF -- "$l" <<<"$kl" || echo "$l"
done)
if [ $rc != 0 ] && [ -z "$missed" ]; then
	echo "ok 5 - harness fails a boot on each debug-kernel report (lockdep, KASAN, KFENCE, UBSAN, ODEBUG, lists, hung task, RCU stall, lockups)"
else
	echo "not ok 5 - harness missed debug-kernel reports (status $rc)"; sed 's/^/# missed: /' <<<"$missed"
fi
