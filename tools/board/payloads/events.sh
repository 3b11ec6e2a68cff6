# SPDX-License-Identifier: GPL-2.0
# Board payload: every core's events by name (issue 27), on QEMU's real
# cores (run.sh -c cortex-a76 | neoverse-n1 | a64fx: their MIDR_EL1).
# amupmu list from the driver (a header per core type saying where its own
# names come from, or that libpfm4 has none, the PMCEID marks), stat -e of
# a core-specific event (counted, or refused as not implemented by the
# CPU's PMCEID, with the reason), and stat --topdown: QEMU's PMU has no
# STALL_SLOT events, so no metric is printed and the missing ones are
# named; on the mock build (-v mock) CPU_CYCLES then comes from the mock
# AMU (an amu/cpu_cycles/ line and the comment saying so).
. /lib.sh
. /tool.sh

tap_check insmod insmod "$AMUPMU_KO"
board_backend
D=/sys/class/misc/amupmu/cpu0
impl=$(sed -n 's/^CPU implementer[[:space:]]*: //p' /proc/cpuinfo | head -1)
part=$(sed -n 's/^CPU part[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "# CPU 0: implementer $impl part $part, midr $(cat $D/midr_el1), pmceid0 $(cat $D/pmceid0_el0), pmceid1 $(cat $D/pmceid1_el0)"

# show FILE: the output, as TAP diagnostics
show() { sed 's/^/# /' "$1"; }

# implemented N: CPU 0's PMCEID0/1 (sysfs) mark common event N (< 0x40)
implemented() {
	if [ "$1" -lt 32 ]; then r=$(cat $D/pmceid0_el0); b=$1; else r=$(cat $D/pmceid1_el0); b=$(($1 - 32)); fi
	[ $(((r >> b) & 1)) = 1 ]
}

# what each core is: its name in amupmu's header, a core-specific event of
# its libpfm4 table (name, number) that PMCEID describes; none where
# libpfm4 has no table
case $impl/$part in
0x41/0xd0c) core="Arm Neoverse-N1 r4p1"; table="libpfm4 arm_n1 (Arm Neoverse N1)"; ev=l1i_cache_access; num=20 ;;
0x46/0x001) core="Fujitsu A64FX r1p0"; table="libpfm4 arm_a64fx (Fujitsu A64FX)"; ev=""; num="" ;;
0x41/0xd0b) core="Arm Cortex-A76 r4p1"; table=""; ev=""; num=20 ;;
*) core=""; table=""; ev=""; num="" ;;
esac

list_header() {
	amupmu list >/tmp/list.out 2>&1
	rc=$?
	sed -n '1,6p' /tmp/list.out | sed 's/^/# /'
	grep -c '^  ' /tmp/list.out | sed 's/^/# listed: /'
	[ $rc = 0 ] && [ -n "$core" ] &&
		grep -q '^# CPUs from AMUPMU_INFO of /dev/amupmu; event names of libpfm4 (arm64 core tables)$' /tmp/list.out || return 1
	if [ -n "$table" ]; then
		grep -q "^# CPUs 0-1: $core: its own events from $table; top-down: sbsa$" /tmp/list.out &&
			grep -q '^Core-specific events:$' /tmp/list.out
	else
		grep -q "^# CPUs 0-1: $core: libpfm4 has no event table for $core: architected events and raw codes (r<hex>) only; top-down: sbsa$" /tmp/list.out &&
			! grep -q '^Core-specific events:$' /tmp/list.out
	fi
}
tap_check "list-header-$part" list_header

# the driver's PMCEID marks: STALL_SLOT (0x3f) is no QEMU event, CPU_CYCLES
# is (INST_RETIRED only under -icount); the top-down metrics that need the
# STALL_SLOT events say so
list_pmceid() {
	amupmu list stall_slot >/tmp/list.out 2>&1 || return 1
	amupmu list frontend_bound >>/tmp/list.out 2>&1 || return 1
	show /tmp/list.out
	grep -q '^  stall_slot  *\[event=0x3f\] (not implemented on CPUs 0-1: PMCEID)$' /tmp/list.out &&
		grep -q '^  TopdownL1/frontend_bound  *\[.*\] (not computable on CPUs 0-1: missing STALL_SLOT_FRONTEND (0x3e), ' /tmp/list.out &&
		amupmu list cpu_cycles | grep -q '^  cpu_cycles  *\[event=0x11\]$'
}
tap_check list-pmceid list_pmceid

list_json() {
	amupmu list --json >/tmp/list.json 2>&1 || return 1
	grep -q "^{\"cpu_source\":\"AMUPMU_INFO of /dev/amupmu\",.*\"pmceid_known\":true,\"cpus\":\\[{\"cpus\":\"0-1\",\"midr\":\"$(cat $D/midr_el1 | sed 's/0x00000000/0x/')\"" /tmp/list.json
}
tap_check list-json list_json

# a core event by name: counted when PMCEID marks it, else refused before
# anything is programmed, naming the register
stat_core_event() {
	name=$1
	amupmu stat -C 0 -e "$name:u" -x, -- true >/tmp/stat.out 2>&1
	rc=$?
	show /tmp/stat.out
	if implemented "$num"; then
		[ $rc = 0 ] && grep -q "^[0-9]*,,$name:u," /tmp/stat.out
	else
		reg=PMCEID0_EL0
		[ "$num" -ge 32 ] && reg=PMCEID1_EL0
		[ $rc = 1 ] && grep -q "event check: $name:u (0x$(printf %04x "$num")): not implemented ($reg) on CPU 0" /tmp/stat.out
	fi
}
if [ -n "$ev" ]; then
	tap_check "stat-core-event-$ev" stat_core_event "$ev"
elif [ -z "$table" ] && [ -n "$num" ]; then
	# no table: the core's names are unknown, its raw code goes by PMCEID
	stat_unknown_name() {
		amupmu stat -C 0 -e l1i_cache_access -- true >/tmp/stat.out 2>&1
		rc=$?
		show /tmp/stat.out
		[ $rc = 1 ] && grep -q "unknown event 'l1i_cache_access'" /tmp/stat.out
	}
	tap_check stat-core-name-unknown stat_unknown_name
	tap_check "stat-raw-r$(printf %x "$num")" stat_core_event "r$(printf %x "$num")"
fi
# an architected event QEMU implements counts on every core
stat_arch() {
	amupmu stat -C 0 -e cpu_cycles:u -x, -- true >/tmp/stat.out 2>&1
	rc=$?
	show /tmp/stat.out
	[ $rc = 0 ] && grep -q '^[0-9]*,,cpu_cycles:u,' /tmp/stat.out
}
tap_check stat-cpu-cycles stat_arch

# --topdown: no STALL_SLOT events on QEMU: no metric, each named with what
# it lacks; the PMU events that exist are counted
stat_topdown() {
	amupmu stat -C 0 --topdown -- amupmu-workload loop 100000 >/tmp/td.out 2>&1
	rc=$?
	show /tmp/td.out
	[ $rc = 0 ] &&
		grep -q '^# note: topdown: frontend_bound not computed: missing stall_slot_frontend (0x3e): not implemented (PMCEID1_EL0) on CPU 0' /tmp/td.out &&
		grep -q '^# note: topdown: retiring not computed: missing .*stall_slot (0x3f): not implemented (PMCEID1_EL0) on CPU 0' /tmp/td.out &&
		grep -q '^# note: topdown: Arm top-down level 1 (SBSA), level 1 (sbsa: ' /tmp/td.out &&
		! grep -q '%  \(frontend_bound\|backend_bound\|bad_speculation\|retiring\)' /tmp/td.out || return 1
	if grep -qw amu /sys/class/misc/amupmu/features; then
		# the mock AMU counts CPU_CYCLES: read there, said so
		grep -q '^ *[0-9,][0-9,]*  *amu/cpu_cycles/' /tmp/td.out &&
			grep -q 'cpu_cycles from the AMU (group 0, amu/NAME/ lines), the other events from the PMU' /tmp/td.out
	else
		grep -q 'every event from the PMU' /tmp/td.out && ! grep -q 'amu/cpu_cycles/' /tmp/td.out
	fi
}
tap_check stat-topdown stat_topdown
# -M TopdownL1 is the same request
stat_metric_group() {
	amupmu stat -C 0 -M TopdownL1 -- true >/tmp/td.out 2>&1 &&
		grep -q '^# note: topdown: frontend_bound not computed: missing ' /tmp/td.out
}
tap_check stat-M-TopdownL1 stat_metric_group
tap_check rmmod rmmod amupmu
