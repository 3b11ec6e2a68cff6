# SPDX-License-Identifier: GPL-2.0
# Board payload: the programs of examples/ (the aarch64 build's, in /tests),
# each run with checks on what it prints. Meant for the amupmu/mock board
# under -icount (tools/check.sh): amupmu owns the PMU, INST_RETIRED counts
# exactly (QEMU counts instructions only under -icount), the AMU registers
# come from the mock model (whose debugfs knobs set the figures), the
# netlink family sees CPU 1 go offline and online.
. /lib.sh

tap_check insmod insmod "$AMUPMU_KO"
board_backend
mount -t debugfs none /sys/kernel/debug 2>/dev/null
X=/tests/amupmu-example-

# show FILE: the output, as TAP diagnostics
show() { sed 's/^/# /' "$1"; }

# 10M iterations of a two-instruction loop on CPU 0: at least 20M
# instructions, at most 10% more (the timer ticks, the kernel's own work)
count_region() {
	n=10000000
	${X}count_region $n 0 >/tmp/ex.out 2>&1
	rc=$?
	show /tmp/ex.out
	ins=$(sed -n 's/^instructions \([0-9]*\)$/\1/p' /tmp/ex.out)
	cyc=$(sed -n 's/^cycles  *\([0-9]*\)$/\1/p' /tmp/ex.out)
	[ $rc = 0 ] && grep -q "^region: $n iterations on CPU 0 in [0-9.]* ms$" /tmp/ex.out &&
		[ -n "$ins" ] && [ "$ins" -ge $((2 * n)) ] && [ "$ins" -le $((2 * n + 2 * n / 10)) ] &&
		[ -n "$cyc" ] && [ "$cyc" -gt 0 ] && grep -q '^IPC  *[0-9]*\.[0-9][0-9]$' /tmp/ex.out
}
if grep -q icount1 /proc/cmdline; then
	tap_check example-count_region count_region
else
	tap_check "example-count_region # SKIP QEMU counts no instructions without -icount" true
fi

# cpu_cycles:u every 100000 over the xorshift loop: the hottest PC and at
# least 90% of the samples in example::hot_function, none lost
hot_pcs() {
	${X}hot_pcs 100000 10000000 >/tmp/ex.out 2>&1
	rc=$?
	show /tmp/ex.out
	last=$(tail -1 /tmp/ex.out)
	all=$(echo "$last" | sed -n 's/^\([0-9]*\) samples of cpu_cycles:u every 100000 on CPU [0-9]* (0 lost), .*/\1/p')
	inside=$(echo "$last" | sed -n 's/.* lost), \([0-9]*\) in example::hot_function at 0x[0-9a-f]*$/\1/p')
	echo "# $inside of $all samples in example::hot_function"
	[ $rc = 0 ] && [ -n "$all" ] && [ "$all" -ge 100 ] && [ -n "$inside" ] && [ $((inside * 10)) -ge $((all * 9)) ] &&
		head -1 /tmp/ex.out | grep -q '^ *[0-9]*  0x[0-9a-f]*  example::hot_function+0x[0-9a-f]*$'
}
tap_check example-hot_pcs hot_pcs

# the mock model's "DVFS" points: CPU 0 at 2.4 GHz and IPC 2.1, CPU 1 at
# 1.2 GHz and IPC 0.9, each active a fixed share of the time; two seconds,
# every line labelled mock. A production build has no AMU here: the
# example says EOPNOTSUPP.
amu_rates() {
	model=/sys/kernel/debug/amupmu/amu_model
	echo '0 freq=2400000000 ipc=2100 active=800' >$model && echo '1 freq=1200000000 ipc=900 active=500' >$model ||
		return 1
	${X}amu_rates --count 2 >/tmp/ex.out 2>&1
	rc=$?
	show /tmp/ex.out
	[ $rc = 0 ] && [ "$(head -1 /tmp/ex.out)" = "AMU of 2 CPUs, registers: mock" ] &&
		[ "$(grep -c '^ *[12] s  cpu[01] .*  mock$' /tmp/ex.out)" = 4 ] &&
		[ "$(grep -c '^ *[12] s  cpu0  *2[34][0-9][0-9]\.[0-9] MHz  IPC 2\.10 ' /tmp/ex.out)" = 2 ] &&
		[ "$(grep -c '^ *[12] s  cpu1  *1[12][0-9][0-9]\.[0-9] MHz  IPC 0\.90 ' /tmp/ex.out)" = 2 ] &&
		awk '/ MHz / { m = $4 + 0; if (m < ($3 == "cpu0" ? 2390 : 1190) || m > ($3 == "cpu0" ? 2410 : 1210)) bad = 1 }
			END { exit bad }' /tmp/ex.out
}
amu_unsupported() {
	${X}amu_rates --count 1 >/tmp/ex.out 2>&1
	rc=$?
	show /tmp/ex.out
	[ $rc = 1 ] && grep -q '^amu_rates: AMUPMU_AMU_READ: .*(EOPNOTSUPP)' /tmp/ex.out
}
if grep -qw amu /sys/class/misc/amupmu/features; then
	tap_check example-amu_rates amu_rates
else
	tap_check example-amu_rates-no-amu amu_unsupported
fi

# N undefined instructions on CPU 0, each a SIGILL the example steps over:
# every one caught. On a Cortex-X2 (up to r2p1) the compensated count is
# within 10% of N; on any other core no erratum touches EXC_UNDEF and
# nothing may be compensated or added: the raw count alone, N to N + 10%,
# or none and the line that says so (QEMU's TCG PMU does not count 0x81).
exc_undef() {
	n=$1
	${X}exc_undef "$n" 0 >/tmp/ex.out 2>&1
	rc=$?
	show /tmp/ex.out
	raw=$(sed -n 's/^exc_undef  *\([0-9]*\)  *[-+][0-9.]* %$/\1/p' /tmp/ex.out)
	[ $rc = 0 ] && grep -q '^CPU 0: .* (MIDR 0x[0-9a-f]\{8\})$' /tmp/ex.out && [ -n "$raw" ] &&
		grep -q "^$n undefined instructions, $n SIGILL caught, in [0-9.]* ms$" /tmp/ex.out || return 1
	if grep -q '^CPU 0: Arm Cortex-X2 r[0-2]p' /tmp/ex.out; then
		comp=$(sed -n 's/^compensated  *\([0-9]*\) .*/\1/p' /tmp/ex.out)
		[ -n "$comp" ] && [ $((comp * 10)) -ge $((n * 9)) ] && [ $((comp * 10)) -le $((n * 11)) ] &&
			grep -q '^erratum      AMUPMU-X2-EXC_UNDEF ' /tmp/ex.out
	elif [ "$raw" = 0 ]; then
		[ "$(wc -l </tmp/ex.out)" = 5 ] &&
			[ "$(sed -n 4p /tmp/ex.out)" = "the PMU counted none of the $n: it does not count EXC_UNDEF" ] &&
			[ "$(tail -1 /tmp/ex.out)" = "no erratum of this core touches exc_undef: the raw count stands" ]
	else
		[ "$raw" -ge "$n" ] && [ "$raw" -le $((n + n / 10)) ] && [ "$(wc -l </tmp/ex.out)" = 4 ] &&
			[ "$(tail -1 /tmp/ex.out)" = "no erratum of this core touches exc_undef: the raw count stands" ]
	fi
}
# a calibration file that does not parse: read only on a core with errata
# (as amupmu stat reads it), where the example says so and fails; on
# another core (QEMU's) it is not read and the run is as without it
exc_undef_bad_calibration() {
	echo 'AMUPMU-X2-EXC_UNDEF.factor = twelve' >/tmp/bad.cal
	AMUPMU_CALIBRATION=/tmp/no-such-calibration ${X}exc_undef 10 0 >/tmp/ex-core.out 2>&1 || return 1
	AMUPMU_CALIBRATION=/tmp/bad.cal ${X}exc_undef 10 0 >/tmp/ex.out 2>&1
	rc=$?
	show /tmp/ex.out
	if grep -q '^erratum ' /tmp/ex-core.out; then
		[ $rc = 1 ] && grep -q '^exc_undef: .*(EINVAL)' /tmp/ex.out && [ "$(wc -l </tmp/ex.out)" = 1 ]
	else
		[ $rc = 0 ] && [ "$(tail -1 /tmp/ex.out)" = "no erratum of this core touches exc_undef: the raw count stands" ]
	fi
}
tap_check example-exc_undef-1000 exc_undef 1000
tap_check example-exc_undef-20000 exc_undef 20000
tap_check example-exc_undef-bad-calibration exc_undef_bad_calibration

# netlink_events --count 2 in the background, from the line that says it
# subscribed: CPU 1 offline and online (consecutive sequence numbers);
# then a hot_pcs run: its session starting and ending
netlink_events() {
	${X}netlink_events --count 2 --timeout 60 >/tmp/nl.out 2>&1 &
	pid=$!
	i=0
	while ! grep -q '^subscribed to cpu,session,buffer ' /tmp/nl.out && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	"$@" >/tmp/nl-cmd.out 2>&1
	i=0
	while kill -0 $pid 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	kill $pid 2>/dev/null
	wait $pid
	rc=$?
	show /tmp/nl.out
	[ $rc = 0 ] && [ "$(wc -l </tmp/nl.out)" = 4 ] && [ "$(tail -1 /tmp/nl.out)" = "2 events" ]
}
hotplug() { echo 0 >/sys/devices/system/cpu/cpu1/online && echo 1 >/sys/devices/system/cpu/cpu1/online; }
netlink_hotplug() {
	netlink_events hotplug || return 1
	s1=$(sed -n '2s/^cpu#\([0-9]*\) cpu-offline cpu=1$/\1/p' /tmp/nl.out)
	s2=$(sed -n '3s/^cpu#\([0-9]*\) cpu-online cpu=1 midr=0x[0-9a-f]\{8\}$/\1/p' /tmp/nl.out)
	echo "# seqs $s1 $s2"
	[ -n "$s1" ] && [ "$s2" = $((s1 + 1)) ]
}
netlink_session() {
	netlink_events ${X}hot_pcs 100000 1000 || return 1
	sed -n 2p /tmp/nl.out | grep -q '^session#[0-9]* session-start id=[0-9]* pid=[0-9]*$' &&
		sed -n 3p /tmp/nl.out | grep -q '^session#[0-9]* session-end id=[0-9]* pid=[0-9]*$'
}
tap_check example-netlink_events-hotplug netlink_hotplug
tap_check example-netlink_events-session netlink_session
# without CAP_PERFMON: the cpu group only, and the timeout ends it
tap_check example-netlink_events-nobody sh -c "/selftests/amupmu_runas 65534 ${X}netlink_events --count 1 --timeout 1 \
	>/tmp/nl.out 2>&1; rc=\$?; sed 's/^/# /' /tmp/nl.out; [ \$rc = 0 ] &&
	grep -q '^subscribed to cpu (family version [0-9]*): 1 events or 1 s$' /tmp/nl.out && [ \"\$(tail -1 /tmp/nl.out)\" = '0 events' ]"
tap_check rmmod rmmod amupmu
