#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# amupmu and CPU hotplug: load the module with cpu1 offline, bring cpu1 up
# and down, cycle it while the driver is used, unload and reload. A PMU
# session (amupmu_session count 0-1: CPU_CYCLES on cpu0 and cpu1) is
# configured while cpu1 is offline and held through the cycles; it must
# count on cpu1 at the end: in exclusive mode amupmu programs cpu1's PMU
# when it comes up, in shared mode its perf events are created then (and
# again at every cycle). Where the kernel's arm_pmu owns the PMU and shared
# mode is off, the CONFIG must be ENXIO instead.
# busybox sh compatible; prints TAP 13 itself. Needs root, cpu1 with an
# online file, and the module at $AMUPMU_KO (default: the installed one,
# modinfo -n amupmu; else /amupmu.ko). Leaves cpu1 online and the module
# loaded.
#
# Environment:
#   AMUPMU_KO            module to insmod (default: modinfo -n amupmu, else /amupmu.ko)
#   AMUPMU_SELFTEST_DIR  where amupmu_info_test lives (default: this dir)
#   AMUPMU_CYCLES        offline/online cycles (default 20)

# The t_* steps are called through step "$@".
# shellcheck disable=SC2317

TAP_NAME=amupmu_hotplug
# shellcheck source=selftests/amupmu/amupmu_tap.sh
. "$(dirname "$0")/amupmu_tap.sh"

AMUPMU_KO=$(amupmu_ko)
AMUPMU_SELFTEST_DIR=${AMUPMU_SELFTEST_DIR:-$(dirname "$0")}
AMUPMU_CYCLES=${AMUPMU_CYCLES:-20}

KSFT_PASS=0
KSFT_FAIL=1

CPU1=/sys/devices/system/cpu/cpu1
DRV=/sys/class/misc/amupmu
INFO_TEST=$AMUPMU_SELFTEST_DIR/amupmu_info_test
SESSION=$AMUPMU_SELFTEST_DIR/amupmu_session
SESSION_OUT=/tmp/amupmu_hotplug_session.$$
NR_TESTS=14

session_pid=

midr_saved=

# ------------------------------------------------------------------ TAP

# step <name> <function>: run one test, report it
step() {
	name=$1
	shift
	"$@"
	result $? "$name"
}

# ------------------------------------------------------------------ helpers

read_file() { cat "$1" 2>/dev/null; }

# expect_file <path> <value>: the file holds exactly <value>
expect_file() {
	got=$(read_file "$1")
	[ "$got" = "$2" ] && return 0
	log "$1: expected '$2', got '${got:-<missing>}'"
	return 1
}

expect_absent() {
	[ ! -e "$1" ] && return 0
	log "$1 exists, should not"
	return 1
}

module_loaded() { [ -d /sys/module/amupmu ]; }

# set_cpu1 <0|1>: change cpu1's state and check that it took
set_cpu1() {
	if ! echo "$1" > "$CPU1/online"; then
		log "echo $1 > $CPU1/online failed"
		return 1
	fi
	expect_file "$CPU1/online" "$1"
}

load_module() {
	if ! insmod "$AMUPMU_KO"; then
		log "insmod $AMUPMU_KO failed"
		return 1
	fi
	[ -d "$DRV" ] && return 0
	log "$DRV missing after insmod"
	return 1
}

unload_module() {
	if ! rmmod amupmu; then
		log "rmmod amupmu failed"
		return 1
	fi
	module_loaded && { log "/sys/module/amupmu still present"; return 1; }
	expect_absent "$DRV"
}

kernel_trouble() { # count of BUG/WARNING/Oops lines in the kernel log
	dmesg 2>/dev/null | grep -cE 'BUG:|WARNING:|Oops|Unable to handle kernel'
}

# ------------------------------------------------------------------ steps

t_rmmod_if_loaded() {
	module_loaded || return 0
	unload_module
}

t_offline_cpu1() { set_cpu1 0; }

t_insmod_cpu1_offline() { load_module; }

t_never_online_state() {
	rc=0
	expect_file "$DRV/cpu1/online" 0 || rc=1
	expect_file "$DRV/cpu1/discovered" 0 || rc=1
	expect_absent "$DRV/cpu1/midr_el1" || rc=1
	return "$rc"
}

t_online_cpu1() { set_cpu1 1; }

t_discovered_on_online() {
	rc=0
	expect_file "$DRV/cpu1/online" 1 || rc=1
	expect_file "$DRV/cpu1/discovered" 1 || rc=1
	midr_saved=$(read_file "$CPU1/regs/identification/midr_el1")
	if [ -z "$midr_saved" ]; then
		log "$CPU1/regs/identification/midr_el1 unreadable"
		return 1
	fi
	expect_file "$DRV/cpu1/midr_el1" "$midr_saved" || rc=1
	return "$rc"
}

t_offline_keeps_registers() {
	set_cpu1 0 || return 1
	rc=0
	expect_file "$DRV/cpu1/online" 0 || rc=1
	expect_file "$DRV/cpu1/discovered" 1 || rc=1
	expect_file "$DRV/cpu1/midr_el1" "$midr_saved" || rc=1
	return "$rc"
}

t_online_again() {
	set_cpu1 1 || return 1
	expect_file "$DRV/cpu1/online" 1
}

# Between the state changes use the device: the info test when it was
# installed next to this script, a sysfs read otherwise.
use_driver() {
	if [ -x "$INFO_TEST" ]; then
		out=$("$INFO_TEST" 2>&1) && return 0
		log "$INFO_TEST failed (cpu1 online=$(read_file "$CPU1/online")):"
		echo "$out" | grep -E '^not ok|Expected|:[0-9]+:' | head -20 |
			sed 's/^/#   /'
		return 1
	fi
	expect_file "$DRV/cpu1/midr_el1" "$midr_saved"
}

cycle_once() { # cycle_once <n>
	set_cpu1 0 || { log "cycle $1: offline failed"; return 1; }
	expect_file "$DRV/cpu1/online" 0 || return 1
	use_driver || { log "cycle $1: with cpu1 offline"; return 1; }
	set_cpu1 1 || { log "cycle $1: online failed"; return 1; }
	expect_file "$DRV/cpu1/online" 1 || return 1
	use_driver || { log "cycle $1: with cpu1 online"; return 1; }
}

t_cycles() {
	if [ -x "$INFO_TEST" ]; then
		log "$AMUPMU_CYCLES cycles, running $INFO_TEST in between"
	else
		log "$AMUPMU_CYCLES cycles, $INFO_TEST not found: sysfs reads in between"
	fi
	i=0
	while [ "$i" -lt "$AMUPMU_CYCLES" ]; do
		i=$((i + 1))
		if ! cycle_once "$i"; then
			# leave cpu1 online so that the next steps stand alone
			[ "$(read_file "$CPU1/online")" = 1 ] || echo 1 > "$CPU1/online"
			return 1
		fi
	done
	return 0
}

# the PMU mode INFO reports: exclusive, shared, off or none
pmu_mode() {
	out=$("$SESSION" info 2>/dev/null) || { echo unknown; return; }
	echo "${out##*mode=}"
}

# a session counting CPU_CYCLES on cpu0 and cpu1 (offline now) in the background
t_session_start() {
	if [ ! -x "$SESSION" ]; then
		log "$SESSION not found: no session through the cycles"
		return 0
	fi
	mode=$(pmu_mode)
	log "PMU mode: $mode"
	case $mode in
	exclusive | shared) ;;
	off)
		out=$("$SESSION" count 0-1 2>&1)
		rc=$?
		[ "$rc" = 3 ] && [ "$out" = "CONFIG: ENXIO" ] && return 0
		log "shared mode off: CONFIG status $rc, '$out', expected ENXIO"
		return 1
		;;
	*) log "no PMU sessions here ($mode)"; return 0 ;;
	esac
	"$SESSION" count 0-1 >"$SESSION_OUT" 2>&1 &
	session_pid=$!
	# up to 30 s: a loaded host without -icount can take seconds to start it
	i=0
	while ! grep -q counting "$SESSION_OUT" 2>/dev/null && kill -0 "$session_pid" 2>/dev/null && [ "$i" -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q counting "$SESSION_OUT" && return 0
	log "the session did not start:"
	sed 's/^/#   /' "$SESSION_OUT"
	session_pid=
	return 1
}

# the session ends: both CPUs counted, cpu1 online and counting again
t_session_counts() {
	[ -n "$session_pid" ] || { log "no session was started"; return 0; }
	kill -TERM "$session_pid"
	wait "$session_pid"
	rc=$?
	session_pid=
	sed 's/^/#   /' "$SESSION_OUT"
	[ "$rc" = 0 ] || { log "amupmu_session: status $rc"; return 1; }
	grep -q '^cpu0 value=[1-9][0-9]* ' "$SESSION_OUT" || { log "no count on cpu0"; return 1; }
	grep -q '^cpu1 value=[1-9][0-9]* ' "$SESSION_OUT" || { log "no count on cpu1"; return 1; }
	# READ_OFFLINE (bit 1) is not set: cpu1 is back
	st=$(sed -n 's/^cpu1 .* state=0x\([0-9a-f]*\)$/\1/p' "$SESSION_OUT")
	[ $(( 0x${st:-2} & 2 )) = 0 ] || { log "cpu1 reads offline (state 0x$st)"; return 1; }
	rm -f "$SESSION_OUT"
	return 0
}

t_rmmod() { unload_module; }

t_insmod_again() {
	load_module || return 1
	[ -c /dev/amupmu ] || log "note: no /dev/amupmu node (devtmpfs not mounted?)"
	expect_file "$DRV/cpu1/discovered" 1
}

t_no_kernel_trouble() {
	now=$(kernel_trouble)
	[ "$now" -le "$trouble_before" ] && return 0
	log "kernel log gained $((now - trouble_before)) BUG/WARNING/Oops line(s):"
	dmesg | grep -E 'BUG:|WARNING:|Oops|Unable to handle kernel' | tail -5 | sed 's/^/#   /'
	return 1
}

# Whatever happened: cpu1 back online, the module loaded.
cleanup() {
	[ -n "$session_pid" ] && kill -TERM "$session_pid" 2>/dev/null && wait "$session_pid"
	rm -f "$SESSION_OUT"
	[ "$(read_file "$CPU1/online")" = 1 ] || echo 1 > "$CPU1/online" 2>/dev/null
	module_loaded || insmod "$AMUPMU_KO" 2>/dev/null
}

# ------------------------------------------------------------------ main

[ "$(id -u)" = 0 ] || skip_all "needs root"
[ -d "$CPU1" ] || skip_all "no cpu1"
[ -f "$CPU1/online" ] || skip_all "cpu1 cannot be offlined (no $CPU1/online)"
[ -f "$AMUPMU_KO" ] || skip_all "module $AMUPMU_KO not found (set AMUPMU_KO)"
for tool in insmod rmmod; do
	command -v $tool >/dev/null || skip_all "$tool not available"
done

echo "TAP version 13"
echo "1..$NR_TESTS"
trouble_before=$(kernel_trouble)
trouble_before=${trouble_before:-0}
trap cleanup EXIT

step "rmmod amupmu (if loaded)"                  t_rmmod_if_loaded
step "offline cpu1"                              t_offline_cpu1
step "insmod with cpu1 offline"                  t_insmod_cpu1_offline
step "cpu1 never online: online=0 discovered=0, no registers" t_never_online_state
step "online cpu1"                               t_online_cpu1
step "cpu1 discovered on online, midr_el1 matches the kernel" t_discovered_on_online
step "offline cpu1: online=0, registers kept"    t_offline_keeps_registers
step "a PMU session on cpu0-1 configured with cpu1 offline" t_session_start
step "online cpu1 again"                         t_online_again
step "$AMUPMU_CYCLES offline/online cycles of cpu1 while in use" t_cycles
step "the session counted on cpu0 and cpu1 (back online)" t_session_counts
step "rmmod amupmu"                              t_rmmod
step "insmod amupmu again"                       t_insmod_again
step "no kernel BUG/WARNING during the test"     t_no_kernel_trouble

[ $test_num -eq $NR_TESTS ] || log "ran $test_num of $NR_TESTS steps"
[ $failed -eq 0 ] && exit $KSFT_PASS
exit $KSFT_FAIL
