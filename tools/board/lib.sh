# SPDX-License-Identifier: GPL-2.0
# Helpers for board payloads (busybox sh).

# run_test NAME CMD...: frame one test program's TAP output for the host.
run_test() {
	name=$1
	shift
	echo "AMUPMU-BEGIN $name"
	t0=$(cut -d' ' -f1 /proc/uptime)
	"$@"
	rc=$?
	echo "AMUPMU-END $name rc=$rc"
	section_time "$name" "$t0"
	return 0
}

# section_time NAME T0: how long a section took (uptime seconds), for
# make check's time budget (run.sh keeps these lines in the summary)
section_time() {
	echo "AMUPMU-TIME $1 $(awk -v t0="$2" '{ printf "%.1f", $1 - t0 }' /proc/uptime)"
}

# tap_check NAME CMD...: a one-result TAP test from a shell command.
tap_check() {
	name=$1
	shift
	echo "AMUPMU-BEGIN $name"
	t0=$(cut -d' ' -f1 /proc/uptime)
	if "$@"; then echo "ok 1 $name"; else echo "not ok 1 $name"; fi
	echo "AMUPMU-END $name rc=0"
	section_time "$name" "$t0"
}

# demo STEP CMD...: one framed step of a demo payload, the command echoed
# before its output (make demo prints it without the frame)
demo() {
	step=$1
	shift
	echo "AMUPMU-BEGIN $step"
	echo "# \$ $*"
	"$@"
	rc=$?
	[ $rc = 0 ] && echo "ok 1 $step" || echo "not ok 1 $step"
	echo "AMUPMU-END $step rc=$rc"
}

# board_kernel: the running kernel as run.sh -k names it: 6.1, 6.12, or
# 6.1-debug for the debug kernel of tools/debug-kernel.sh (its release
# is 6.1.N-amupmu-debug)
board_kernel() {
	case $(uname -r) in
	*-amupmu-debug) echo "$(uname -r | cut -d. -f1,2)-debug" ;;
	*) uname -r | cut -d. -f1,2 ;;
	esac
}

# board_identity: the board of this boot, one line of key=value. The
# kernel, its exception level, the GIC, the devicetree, its number of
# "amupmu,cpu-frames" nodes and of SPE nodes ("arm,statistical-profiling-
# extension-v1"), the vCPUs and the CPU's MIDR implementer/part come from
# the running system;
# the machine, the module build and icount from amupmu_board=
# (K/MACHINE/DT/VARIANT/smpN/icountI, set by run.sh), which run.sh
# compares with what it asked for.
# shellcheck disable=SC2154 # amupmu_board: a kernel parameter, from run.sh
board_identity() {
	local el gic dt frames spe
	el=$(dmesg | sed -n 's/.*CPU: All CPU(s) started at EL\([0-9]\).*/\1/p' | head -1)
	# booted at EL2, the kernel stays there with VHE; without VHE it runs
	# at EL1 under a hypervisor stub
	if [ "$el" = 2 ] && ! dmesg | grep -q 'CPU features: detected: Virtualization Host Extensions'; then
		el=1
	fi
	# the irq chip's name: "GICv3", or "GIC-0" for a GICv2
	if grep -q ' GICv3 ' /proc/interrupts; then
		gic=v3
	elif grep -q ' GIC-[0-9]' /proc/interrupts; then
		gic=v2
	else
		gic=unknown
	fi
	dt=stock
	grep -q 'amupmu,pmuv3' /proc/device-tree/amupmu/compatible 2>/dev/null && dt=amupmu
	frames=$(find /proc/device-tree/ -name compatible | while read -r f; do
		grep -q 'amupmu,cpu-frames' "$f" && echo "$f"; done | wc -l)
	spe=$(find /proc/device-tree/ -name compatible | while read -r f; do
		grep -q 'arm,statistical-profiling-extension-v1' "$f" && echo "$f"; done | wc -l)
	echo "kernel=$(board_kernel) machine=$(echo "$amupmu_board" | cut -d/ -f2)" \
		"kernel_el=${el:-unknown} gic=$gic dt=$dt module=$(echo "$amupmu_board" | cut -d/ -f4)" \
		"icount=$(echo "$amupmu_board" | cut -d/ -f6 | sed 's/^icount//')" \
		"smp=$(grep -c '^processor' /proc/cpuinfo) frames=$frames spe=$spe" \
		"cpu=$(sed -n 's/^CPU implementer[[:space:]]*: //p' /proc/cpuinfo | head -1)/$(sed -n 's/^CPU part[[:space:]]*: //p' /proc/cpuinfo | head -1)"
}

# the PMU mode of the loaded module: exclusive (the amupmu devicetree:
# amupmu owns the PMU), shared (the kernel's arm_pmu owns it, sessions go
# through perf core), off (arm_pmu owns it and pmu_shared is N: PMU
# requests ENXIO), none (no PMU) or unloaded
pmu_mode() {
	case $(cat /sys/class/misc/amupmu/pmu_owner 2>/dev/null) in
	amupmu) echo exclusive ;;
	kernel)
		if [ "$(cat /sys/module/amupmu/parameters/pmu_shared 2>/dev/null)" = N ]; then
			echo off
		else
			echo shared
		fi
		;;
	"") echo unloaded ;;
	*) echo none ;;
	esac
}

# PMU sessions work: exclusive or shared mode
pmu_sessions() { case $(pmu_mode) in exclusive | shared) return 0 ;; esac; return 1; }

# the backend every test of this boot runs on
board_backend() {
	be=$(cat /sys/class/misc/amupmu/backend 2>/dev/null || echo unloaded)
	echo "# backend: QEMU TCG PMUv3 ($AMUPMU_BOARD_ID) in $(pmu_mode) mode, AMU/SPE registers: $be"
}

# mem_snapshot NAME: Slab and MemAvailable (kB) after dropping the caches,
# into mem_NAME_slab / mem_NAME_avail.
mem_snapshot() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	sleep 1
	eval "$(awk -v n="$1" '/^Slab:/ { printf "mem_%s_slab=%s\n", n, $2 }
		/^VmallocUsed:/ { printf "mem_%s_vmalloc=%s\n", n, $2 }
		/^MemAvailable:/ { printf "mem_%s_avail=%s\n", n, $2 }' /proc/meminfo)"
}

# mem_within A B SUITE: the slab grew by at most AMUPMU_SLAB_SLACK_KB
# (default 512) and VmallocUsed by at most AMUPMU_VMALLOC_SLACK_KB (default
# 256: kernel thread stacks are vmalloc, 16 kB each) from snapshot A to B;
# prints the figure line (MemAvailable too).
# shellcheck disable=SC2154 # s0 a0 s1 a1 v0 v1 come from the eval
mem_within() {
	eval "s0=\$mem_$1_slab a0=\$mem_$1_avail s1=\$mem_$2_slab a1=\$mem_$2_avail"
	eval "v0=\$mem_$1_vmalloc v1=\$mem_$2_vmalloc"
	ds=$((s1 - s0)) da=$((a0 - a1)) dv=$((v1 - v0))
	echo "# $3 memory: Slab ${s0} -> ${s1} kB ($ds), VmallocUsed ${v0} -> ${v1} kB ($dv), MemAvailable ${a0} -> ${a1} kB (-$da)"
	echo "# AMUPMU-FIGURE $3-memory slab_delta_kb=$ds vmalloc_delta_kb=$dv avail_drop_kb=$da"
	# the driver allocates from the slab and vmalloc (rings) only; MemAvailable
	# moves by MiBs with page-cache refills (seen: -4.6 MB with slab +60 kB)
	# and is reported, not bounded. The debug kernel's KASAN quarantine
	# keeps freed objects in the slab for a while (seen: +516 kB after the
	# fuzz on 6.1-debug vhe), so its bound is wider: the production
	# kernels' boards keep the leak check tight
	local slack=512
	case $(uname -r) in *-debug*) slack=4096 ;; esac
	[ "$ds" -le "${AMUPMU_SLAB_SLACK_KB:-$slack}" ] && [ "$dv" -le "${AMUPMU_VMALLOC_SLACK_KB:-256}" ]
}

# spe_tool_checks: "amupmu spe record", "dump" and "knobs" on a loaded
# module with SPE (the mock model on a mock build); skipped (ok, with the
# reason) without SPE. The mock's operation stream is slowed on CPUs 0-1
# (ops_per_us=50, restored) and the knobs are put back at the end.
# shellcheck disable=SC2016 # each sh -c script expands its own variables
spe_tool_checks() {
	if ! grep -qw spe /sys/class/misc/amupmu/features; then
		tap_check "spe-tool # SKIP no SPE ($(cat /sys/class/misc/amupmu/backend))" true
		return 0
	fi
	stream=/sys/kernel/debug/amupmu/spe_stream
	spe_cpus=0
	grep -q 1 /sys/devices/system/cpu/cpu1/online 2>/dev/null && spe_cpus=0-1
	for c in 0 1; do [ -e "$stream" ] && echo "$c ops_per_us=50" >"$stream" 2>/dev/null; done
	export spe_cpus
	tap_check spe-record sh -c 'amupmu spe record -C $spe_cpus --ts -o /tmp/spe.data -- \
			/tests/amupmu-workload loop 20000000 2>/tmp/spe.err; rc=$?; cat /tmp/spe.err;
		[ $rc = 0 ] && grep -q "^amupmu spe record: SPE backend: $(
			grep -qw mock /sys/class/misc/amupmu/features && echo "mock model (test build)" || echo hardware)$" /tmp/spe.err &&
		grep -q "^   cpu  *records" /tmp/spe.err && ! grep -q "bytes read)" /tmp/spe.err'
	# every record the driver counted is in the dump, none damaged
	tap_check spe-dump sh -c 'amupmu spe dump /tmp/spe.data >/tmp/spe.dump || exit 1;
		sed -n 1,40p /tmp/spe.dump; tail -1 /tmp/spe.dump;
		want=$(sed -n "s/^# cpu [0-9]*: \([0-9]*\) records.*/\1/p" /tmp/spe.dump | awk "{ s += \$1 } END { print s }");
		got=$(tail -1 /tmp/spe.dump | sed -n "s/.*bytes: \([0-9]*\) records.*/\1/p");
		echo "# driver records $want, dumped $got";
		[ "$want" -gt 0 ] && [ "$want" = "$got" ] && tail -1 /tmp/spe.dump | grep -q " 0 unknown, 0 truncated$"'
	tap_check spe-record-exit-status sh -c 'amupmu spe record -C 0 -o /tmp/spe2.data -- sh -c "exit 3"; [ $? = 3 ]'
	tap_check spe-record-exec-fails sh -c 'amupmu spe record -C 0 -o /tmp/spe3.data -- /nonexistent; [ $? = 127 ]'
	tap_check spe-knobs-list sh -c 'amupmu spe knobs | tee /tmp/knobs.txt; [ "$(wc -l </tmp/knobs.txt)" = 11 ] &&
		grep -q "^pmsirr_interval [0-9]" /tmp/knobs.txt'
	tap_check spe-knobs-set sh -c 'amupmu spe knobs pmslatfr_minlat=200 pmsfcr_fl=1 &&
		[ "$(amupmu spe knobs pmsfcr_fl)" = "pmsfcr_fl 1" ] &&
		[ "$(cat /sys/kernel/debug/arm_spe/pmslatfr_minlat)" = 200 ]'
	# FL with MINLAT 0 is refused by the driver: the error names the knob,
	# nothing changes; a list whose second write is refused leaves the first
	tap_check spe-knobs-refused sh -c '! amupmu spe knobs pmslatfr_minlat=0 2>/tmp/k.err; cat /tmp/k.err;
		grep -q "arm_spe knob pmslatfr_minlat=0: Invalid argument (EINVAL) -- " /tmp/k.err &&
		[ "$(amupmu spe knobs pmslatfr_minlat)" = "pmslatfr_minlat 200" ]'
	tap_check spe-knobs-rollback sh -c 'before=$(amupmu spe knobs pmsirr_interval);
		! amupmu spe knobs pmsirr_interval=8192 pmsirr_interval=100 2>/tmp/k.err; cat /tmp/k.err;
		grep -q "written before it are restored" /tmp/k.err && [ "$(amupmu spe knobs pmsirr_interval)" = "$before" ]'
	tap_check spe-record-defaults sh -c 'amupmu spe record --defaults -C 0 -o /tmp/spe4.data -- \
			/tests/amupmu-workload loop 5000000 && grep -a "^config " /tmp/spe4.data &&
		grep -a -q "^config flags=0x1 enables=0x1 pct=0 pmsfcr=0x4 pmsevfr=0x0 pmsnevfr=0x0 min_latency=200 " /tmp/spe4.data'
	amupmu spe knobs pmsfcr_fl=0 pmslatfr_minlat=0 >/dev/null
	for c in 0 1; do [ -e "$stream" ] && echo "$c ops_per_us=1000" >"$stream" 2>/dev/null; done
	return 0
}

# stat_signal_checks: the command's signals (issue 14; tools/amupmu/child.hpp)
# where PMU sessions work (exclusive or shared mode). A command started under "trap '' INT QUIT"
# keeps ignoring them; SIGTERM to amupmu goes to the command, which does not
# outlive it, and amupmu still writes its counts.
stat_signal_checks() {
	if ! pmu_sessions; then
		echo "# stat signal checks skipped: PMU in $(pmu_mode) mode, no sessions"
		return 0
	fi
	echo "# stat signal checks: PMU in $(pmu_mode) mode"
	tap_check stat-command-keeps-ignored-sigint sh -c 'trap "" INT QUIT;
		amupmu stat -e cpu_cycles -- sh -c "kill -INT \$\$; kill -QUIT \$\$; exit 3" 2>/tmp/st1.txt;
		rc=$?; cat /tmp/st1.txt; [ $rc = 3 ] && grep -q cpu_cycles /tmp/st1.txt'
	tap_check stat-sigint-default-reaches-command sh -c '
		amupmu stat -e cpu_cycles -- sh -c "kill -INT \$\$; exit 3" 2>/tmp/st2.txt;
		rc=$?; cat /tmp/st2.txt; [ $rc = 130 ] && grep -q cpu_cycles /tmp/st2.txt'
	# SIGTERM once the command runs: a ps line whose COMMAND is "sleep 61"
	# (PID, USER, a TIME column where busybox has one), not amupmu's own line, which ends
	# in "-- sleep 61" from before the fork (on a loaded host the signal
	# came before the command was started), nor this script's ("${n}1")
	tap_check stat-sigterm-passed-on sh -c 'n=6; amupmu stat -e cpu_cycles -o /tmp/st3.txt -- sleep ${n}1 & pid=$!;
		i=0; while ! ps | grep -qE "^ *[0-9]+ +[^ ]+ +([0-9:]+ +)?[s]leep 61$" && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done;
		kill -TERM $pid; wait $pid; rc=$?; cat /tmp/st3.txt; sleep 0.2;
		[ $rc = 143 ] && grep -q "exit status" /tmp/st3.txt && grep -q cpu_cycles /tmp/st3.txt &&
		! ps | grep -qE "^ *[0-9]+ +[^ ]+ +([0-9:]+ +)?[s]leep 61$"'
}

# board_net_up: the network of run.sh -n: the virtio-net modules it put in
# /lib/modules-net (in load order), lo, and eth0 as QEMU's user network
# expects it (10.0.2.15/24; with restrict=on the guest reaches nothing
# beyond, the host's forwarded ports come in)
board_net_up() {
	for m in /lib/modules-net/*.ko; do
		insmod "$m" || return 1
	done
	ip link set lo up || return 1
	i=0
	while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	ip addr add 10.0.2.15/24 dev eth0 && ip link set eth0 up
}

# board_control PORT: run the host's commands until it sends "exit": one
# TCP connection on PORT (forwarded by run.sh -n) per command line, run
# with sh -c; its output and "rc=N" go back to the host, and to the
# console as comments; "tap LINE" prints LINE on the console as it is (the
# host's TAP results). tools/board/exporter-test.py drives it.
board_control() {
	cat >/tmp/control.sh <<'EOS'
#!/bin/sh
read -r line
if [ "$line" = exit ]; then
	: >/tmp/control-exit
	echo rc=0
	exit 0
fi
case $line in
"tap "*)
	echo "${line#tap }" >/dev/console
	echo rc=0
	exit 0
	;;
esac
echo "# control: $line" >/dev/console
sh -c "$line" </dev/null >/tmp/control.out 2>&1
rc=$?
sed 's/^/# /' /tmp/control.out >/dev/console
echo "# control: rc=$rc" >/dev/console
cat /tmp/control.out
echo "rc=$rc"
EOS
	chmod +x /tmp/control.sh
	rm -f /tmp/control-exit
	# -ll: a persistent server, one /tmp/control.sh per connection
	nc -ll -p "$1" -e /tmp/control.sh &
	ncpid=$!
	echo "AMUPMU-CONTROL: listening on $1"
	while [ ! -e /tmp/control-exit ] && kill -0 $ncpid 2>/dev/null; do
		sleep 0.5
	done
	kill $ncpid 2>/dev/null
	wait $ncpid 2>/dev/null
	[ -e /tmp/control-exit ]
}
