# SPDX-License-Identifier: GPL-2.0
# Harness self-test: the first line of each report a debug kernel prints
# (lockdep, KASAN, KFENCE, UBSAN, DEBUG_OBJECTS, DEBUG_LIST, hung task,
# atomic sleep, RCU stall, lockup), as 6.1 words it, in the kernel log:
# each must fail the boot on its own (run.sh names every one).
. /lib.sh
tap_check passes true
while read -r l; do
	echo "<3>$l" >/dev/kmsg
done <<'SPLATS'
WARNING: possible circular locking dependency detected
WARNING: inconsistent lock state
BUG: Invalid wait context
BUG: KASAN: use-after-free in remove_wait_queue+0x2c/0x90
BUG: KFENCE: out-of-bounds read in amupmu_self_test+0x10/0x20
UBSAN: shift-out-of-bounds in amupmu_self_test.c:1:2
ODEBUG: free active (active state 0) object type: timer_list hint: amupmu_self_test+0x0/0x10
list_add corruption. prev->next should be next (ffff000000000000), but was 0000000000000000. (prev=ffff000000000008).
list_del corruption, ffff000000000000->next is LIST_POISON1 (dead000000000100)
INFO: task amupmu_self_te:99 blocked for more than 20 seconds.
BUG: scheduling while atomic: amupmu_self_te/99/0x00000002
BUG: sleeping function called from invalid context at kernel/locking/mutex.c:580
rcu: INFO: rcu_preempt self-detected stall on CPU
rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: { 1-... } 21 jiffies s: 1 root: 0x2/.
watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [amupmu_self_te:99]
BUG: workqueue lockup - pool cpus=0 node=0 flags=0x0 nice=0 stuck for 31s!
SPLATS
