#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# amupmu and CPU hotplug: load the module with cpu1 offline, bring cpu1 up
# and down, cycle it while the driver is used, unload and reload.
# busybox sh compatible; prints TAP 13 itself. Needs root, cpu1 with an
# online file, and the module at $AMUPMU_KO (default /amupmu.ko). Leaves
# cpu1 online and the module loaded.
#
# Environment:
#   AMUPMU_KO            module to insmod (default /amupmu.ko)
#   AMUPMU_SELFTEST_DIR  where amupmu_info_test lives (default: this dir)
#   AMUPMU_CYCLES        offline/online cycles (default 20)

# The t_* steps are called through step "$@".
# shellcheck disable=SC2317

TAP_NAME=amupmu_hotplug
# shellcheck source=selftests/amupmu/amupmu_tap.sh
. "$(dirname "$0")/amupmu_tap.sh"

AMUPMU_KO=${AMUPMU_KO:-/amupmu.ko}
AMUPMU_SELFTEST_DIR=${AMUPMU_SELFTEST_DIR:-$(dirname "$0")}
AMUPMU_CYCLES=${AMUPMU_CYCLES:-20}

KSFT_PASS=0
KSFT_FAIL=1

CPU1=/sys/devices/system/cpu/cpu1
DRV=/sys/class/misc/amupmu
INFO_TEST=$AMUPMU_SELFTEST_DIR/amupmu_info_test
NR_TESTS=12

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
step "online cpu1 again"                         t_online_again
step "$AMUPMU_CYCLES offline/online cycles of cpu1 while in use" t_cycles
step "rmmod amupmu"                              t_rmmod
step "insmod amupmu again"                       t_insmod_again
step "no kernel BUG/WARNING during the test"     t_no_kernel_trouble

[ $test_num -eq $NR_TESTS ] || log "ran $test_num of $NR_TESTS steps"
[ $failed -eq 0 ] && exit $KSFT_PASS
exit $KSFT_FAIL
