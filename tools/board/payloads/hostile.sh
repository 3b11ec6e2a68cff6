# SPDX-License-Identifier: GPL-2.0
# Board payload: the concurrency fuzzer amupmu_hostile (issue 24), hostile
# local users against the module: worker processes as root and as uid 65534
# with several files and threads each (every command, poll/epoll, mmap of
# every mapping offset, read, fork, close/dup, netlink) while a controller
# takes CPUs offline and online, unbinds and binds amupmu-spe (boards with
# an SPE node, run.sh -S yes), writes the arm_spe knobs and toggles
# pmu_shared (stock boards). The module is the board's build (prod or mock);
# on a board with an SPE node the device is handed to amupmu first (by
# hand, as spe-claim does: on a production build the probe refuses, ENODEV,
# and the device stays unbound). Then the module must unload. run.sh fails
# the board on any Oops/BUG/WARNING/lockup in the kernel log; the fuzzer
# also checks /dev/kmsg itself (KASAN, lockdep, hung tasks, ...).
#
# Environment (a wrapper payload, or the kernel command line through
# run.sh's BOARD_APPEND="AMUPMU_HOSTILE_SECONDS=20 ..."):
#   AMUPMU_HOSTILE_SECONDS  guest seconds (default 60)
#   AMUPMU_HOSTILE_CALLS    bound on the calls (default 0: time only)
#   AMUPMU_HOSTILE_SEED     replay a seed (default: a new one, printed)
#   AMUPMU_HOSTILE_EXCLUDE  -x list, e.g. "spe" (default: nothing)
#   AMUPMU_HOSTILE_PROCS    worker processes (default 4)
. /lib.sh

secs=${AMUPMU_HOSTILE_SECONDS:-60}
set -- -t "$secs" -p "${AMUPMU_HOSTILE_PROCS:-4}"
[ -n "${AMUPMU_HOSTILE_CALLS:-}" ] && set -- "$@" -n "$AMUPMU_HOSTILE_CALLS"
[ -n "${AMUPMU_HOSTILE_SEED:-}" ] && set -- "$@" -s "$AMUPMU_HOSTILE_SEED"
[ -n "${AMUPMU_HOSTILE_EXCLUDE:-}" ] && set -- "$@" -x "$AMUPMU_HOSTILE_EXCLUDE"

tap_check insmod insmod "$AMUPMU_KO"
board_backend

spe_dev=
for d in /sys/bus/platform/devices/*; do
	if grep -qs 'arm,statistical-profiling-extension-v1' "$d/of_node/compatible"; then
		spe_dev=$(basename "$d")
		break
	fi
done
if [ -n "$spe_dev" ]; then
	echo amupmu-spe >"/sys/bus/platform/devices/$spe_dev/driver_override"
	echo "$spe_dev" >/sys/bus/platform/drivers/amupmu-spe/bind 2>/dev/null
	drv=$(basename "$(readlink "/sys/bus/platform/devices/$spe_dev/driver" 2>/dev/null)" 2>/dev/null)
	echo "# SPE device $spe_dev: driver ${drv:-none} (the controller unbinds and binds amupmu-spe)"
else
	echo "# no SPE devicetree node (run.sh -S yes adds one): the controller skips amupmu-spe unbind/bind"
fi

run_test amupmu_hostile /selftests/amupmu_hostile "$@"
# nothing of the fuzz may keep the module: every file and mapping went with its process
tap_check rmmod-after-hostile rmmod amupmu
