#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The end-to-end test's checks in the booted Debian system (tools/deb-e2e.sh
# puts this script and env on the payload disk; e2e.service runs it at boot,
# output on the serial console). Each check prints its commands and their
# output ("E2E-OUT: " lines, the first 40 of each), then one result line,
#   E2E: PASS NAME[: detail]   or   E2E: FAIL NAME[: detail]
# ("E2E: SKIP NAME: reason" for a kselftest that skipped itself) and the
# last line is "E2E: DONE". The host knows which NAMEs each MODE
# must print; a missing one fails too.
#
# env: MODE (check: the 6.1 boot after the installation; upgraded: the
# 6.12 boot after the kernel upgrade), KSERIES (the kernel's x.y), WANT_NODE
# ("MODE OWNER GROUP" of /dev/amupmu as debian/amupmu.udev packages it),
# KSFT_SKIP (stress test cases to skip, AMUPMU_STRESS_SKIP) and KSFT_WHY.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH LC_ALL=C.UTF-8
D=$(dirname "$0")
# shellcheck source=/dev/null
. "$D/env"

# before anything of this script could have loaded it
at_boot=no
[ -d /sys/module/amupmu ] && at_boot=yes

say() { echo "E2E: $*"; }
out() { sed 's/^/E2E-OUT: /' | head -"${1:-40}"; }

# check NAME CMD...: run CMD (echoed), PASS when it exits 0
check() {
	name=$1
	shift
	echo "E2E-OUT: \$ $*"
	"$@" >/tmp/e2e.out 2>&1
	rc=$?
	out <"/tmp/e2e.out"
	if [ "$rc" = 0 ]; then say "PASS $name"; else say "FAIL $name: status $rc"; fi
}

# expect NAME PATTERN CMD...: as check, and its output must match PATTERN
# (grep -E)
expect() {
	name=$1 pat=$2
	shift 2
	echo "E2E-OUT: \$ $*"
	"$@" >/tmp/e2e.out 2>&1
	rc=$?
	out <"/tmp/e2e.out"
	if [ "$rc" != 0 ]; then
		say "FAIL $name: status $rc"
	elif ! grep -Eq -- "$pat" /tmp/e2e.out; then
		say "FAIL $name: no line matches '$pat'"
	else
		say "PASS $name"
	fi
}

say "BEGIN $MODE $(uname -r) $(uname -m), up $(cut -d' ' -f1 /proc/uptime) s"

# the kernel booted is the one of this step
case $(uname -r) in
"$KSERIES".*) say "PASS kernel: $(uname -r)" ;;
*) say "FAIL kernel: $(uname -r), expected $KSERIES.*" ;;
esac

# loaded at boot (before this script) by systemd-modules-load, which the
# package's modules-load.d file asks for, from DKMS's build for this kernel
ko=$(modinfo -n amupmu 2>&1)
res=$(systemctl show -p Result --value systemd-modules-load.service 2>&1)
conf=$(grep -v '^#' /usr/lib/modules-load.d/amupmu.conf 2>&1)
echo "E2E-OUT: loaded before the test: $at_boot; systemd-modules-load.service: $res;" \
	"/usr/lib/modules-load.d/amupmu.conf: $conf; modinfo -n amupmu: $ko"
dmesg | grep -m3 amupmu | out
if [ "$at_boot" = yes ] && [ "$res" = success ] && [ "$conf" = amupmu ]; then
	case $ko in
	/lib/modules/"$(uname -r)"/updates/dkms/amupmu.ko*) say "PASS module-at-boot: $ko" ;;
	*) say "FAIL module-at-boot: loaded, but from $ko, not DKMS's updates/dkms" ;;
	esac
else
	say "FAIL module-at-boot: loaded before the test: $at_boot, systemd-modules-load: $res, modules-load.d: '$conf'"
fi
check modprobe modprobe amupmu

# the node's mode, owner and group as packaged (udev rule)
udevadm settle -t 60
node=$(stat -c '%a %U %G' /dev/amupmu 2>&1)
echo "E2E-OUT: \$ stat -c '%a %U %G' /dev/amupmu: $node"
udevadm info -q property /dev/amupmu 2>&1 | grep -E '^(DEVNAME|DEVMODE|SUBSYSTEM)=' | out
if [ "$node" = "$WANT_NODE" ]; then
	say "PASS device-node: /dev/amupmu $node"
else
	say "FAIL device-node: /dev/amupmu '$node', packaged '$WANT_NODE'"
fi

check doctor amupmu doctor
expect info 'amupmu' amupmu info
# the node is open to every user for identification (README.Debian)
expect info-unprivileged 'amupmu' setpriv --reuid=nobody --regid=nogroup --clear-groups amupmu info
expect stat 'cycles' amupmu stat -- true

# the packaged exporter unit (installed, not enabled): started as systemd
# starts it (a dynamic user, CAP_PERFMON alone, the package's config), it
# answers a scrape with amupmu_up 1 and the driver's exact per-CPU totals
# (netlink CPU_GET, CAP_PERFMON's); then stopped. perl-base's
# IO::Socket::INET fetches: minbase has no HTTP client.
scrape() {
	perl -MIO::Socket::INET -e '
		my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$ARGV[0]", Timeout => 5) or exit 3;
		print $s "GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n";
		print while <$s>;' "$1"
}
exporter_check() {
	# the port of the package's configuration (listen = [ADDR]:PORT), else
	# the exporter's default
	port=$(sed -n 's/^listen *= *.*:\([0-9][0-9]*\) *$/\1/p' /etc/amupmu/exporter.conf)
	port=${port:-10140}
	echo "E2E-OUT: \$ systemctl start amupmu-exporter; GET http://127.0.0.1:$port/metrics"
	if ! systemctl start amupmu-exporter >/tmp/e2e.out 2>&1; then
		out </tmp/e2e.out
		journalctl -b -u amupmu-exporter --no-pager 2>&1 | tail -20 | out
		say "FAIL exporter: systemctl start amupmu-exporter failed"
		return
	fi
	i=0
	: >/tmp/metrics
	while [ $i -lt 30 ] && ! grep -q '^amupmu_up 1' /tmp/metrics; do
		sleep 1
		scrape "$port" >/tmp/metrics 2>&1
		i=$((i + 1))
	done
	pid=$(systemctl show -p MainPID --value amupmu-exporter)
	ids=$(awk '/^Uid:/ { u = $2 } /^CapEff:/ { c = $2 } END { print u, c }' "/proc/$pid/status" 2>&1)
	grep -E '^(HTTP|amupmu_up|amupmu_sessions|amupmu_driver_info)|^# HELP amupmu_pmu_samples_lost_total' \
		/tmp/metrics | out
	echo "E2E-OUT: pid $pid: uid, CapEff: $ids"
	journalctl -b -u amupmu-exporter --no-pager 2>&1 | tail -5 | out
	systemctl stop amupmu-exporter
	st=$(systemctl show -p Result --value amupmu-exporter)
	# CAP_PERFMON (38) alone: CapEff 0000004000000000
	if ! grep -q '^amupmu_up 1' /tmp/metrics; then
		say "FAIL exporter: no 'amupmu_up 1' in $i s"
	elif ! grep -q "^# HELP amupmu_pmu_samples_lost_total.*the driver's CPU_GET total" /tmp/metrics; then
		say "FAIL exporter: the driver's exact totals not served (CAP_PERFMON not effective?)"
	elif [ "$ids" != "${ids#0 }" ] || [ "${ids#* }" != 0000004000000000 ]; then
		say "FAIL exporter: uid and CapEff '$ids', expected a dynamic user with CAP_PERFMON alone"
	elif [ "$st" != success ]; then
		say "FAIL exporter: stopped with result $st"
	else
		say "PASS exporter: amupmu_up 1 after $i s, uid ${ids% *}, CapEff ${ids#* }, stopped: $st"
	fi
}
exporter_check

if [ "$MODE" = check ]; then
	expect man 'amupmu-stat' man -P cat amupmu-stat
	expect help-stat 'amupmu-stat' env MANPAGER=cat PAGER=cat amupmu help stat
	# the program built in the chroot against libamupmu-dev with pkg-config
	expect program-libamupmu 'libamupmu\.so\.[0-9]+ => (/usr)?/lib/aarch64-linux-gnu/' ldd /usr/local/bin/e2e-count
	expect program-runs '^cycles [1-9][0-9]*$' /usr/local/bin/e2e-count

	# the kselftests of amupmu-tests, as its README.Debian runs them
	k=/usr/libexec/amupmu-tests/kselftest
	n=$(grep -c . "$k/kselftest-list.txt")
	if [ -n "$KSFT_SKIP" ]; then
		say "NOTE kselftests: AMUPMU_STRESS_SKIP=$KSFT_SKIP: $KSFT_WHY"
	fi
	# the suite as installed, with its long runs shortened: the boards run
	# them at full length (fuzz, stress: 200000 calls, 20 s, 100 load
	# cycles); here the packaged tests run against the installed module
	set -- AMUPMU_STRESS_SKIP="$KSFT_SKIP" AMUPMU_FUZZ_CALLS=20000 AMUPMU_STRESS_SECONDS=5 \
		AMUPMU_LOAD_CYCLES=10
	echo "E2E-OUT: \$ $* $k/run_kselftest.sh ($n tests)"
	t0=$(cut -d' ' -f1 /proc/uptime)
	# appended to: kselftest's runner writes the tests' own output through
	# a second descriptor it opens on /dev/stdout with >> (O_APPEND); a
	# plain > here would let its result lines overwrite that output
	: >/tmp/ksft.out
	env "$@" "$k/run_kselftest.sh" >>/tmp/ksft.out 2>&1
	rc=$?
	t1=$(cut -d' ' -f1 /proc/uptime)
	# the runner's own lines and the tests' skip reasons; the whole TAP
	# is on the console log only for failures (below)
	grep -E '^(not )?ok [0-9]+ selftests: |^# (ok|not ok) .*# SKIP' /tmp/ksft.out | out 400
	p=0 f=0 s=0
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		t=${line#*selftests: amupmu: }
		t=${t%% *}
		case $line in
		"not ok "*)
			f=$((f + 1))
			say "FAIL kselftest-$t: $line"
			# that test's own output, from its header to its result
			awk -v t="$t" 'index($0, "# selftests: amupmu: " t) { on = 1 }
				on { print } on && /^(not )?ok [0-9]+ selftests: / { exit }' /tmp/ksft.out |
				tail -60 | sed 's/^/E2E-OUT: /'
			;;
		*"# SKIP"*) s=$((s + 1)); say "SKIP kselftest-$t:${line#*# SKIP}" ;;
		*) p=$((p + 1)); say "PASS kselftest-$t" ;;
		esac
	done <<EOF
$(grep -E '^(not )?ok [0-9]+ selftests: amupmu: ' /tmp/ksft.out)
EOF
	# the tests that unload and load the module find the installed one
	# (no skip "set AMUPMU_KO")
	if grep -Eq 'SKIP.*AMUPMU_KO' /tmp/ksft.out; then
		grep -E 'SKIP.*AMUPMU_KO' /tmp/ksft.out | out
		say "FAIL kselftest-module-file: a test did not find the installed module"
	else
		say "PASS kselftest-module-file: the load/unload tests found $(modinfo -n amupmu)"
	fi
	sec=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", b - a }')
	if [ $((p + f + s)) = "$n" ] && [ "$f" = 0 ]; then
		say "PASS kselftests: $p passed, $s skipped of $n in $sec s (run_kselftest.sh status $rc)"
	else
		say "FAIL kselftests: $p passed, $f failed, $s skipped, $((n - p - f - s)) without a result, of $n in $sec s (status $rc)"
	fi
fi

# no unit failed during the boot or the tests
failed=$(systemctl --failed --no-legend --plain 2>&1)
printf '%s\n' "$failed" | grep . | out
if [ -z "$failed" ]; then
	say "PASS units: none failed"
else
	say "FAIL units: $(printf '%s' "$failed" | awk '{ printf "%s ", $1 }')"
fi

# the kernel's warnings and errors, for the host's check of the log
dmesg -l emerg,alert,crit,err,warn 2>&1 | sed 's/^/E2E-DMESG: /'
say "DONE $MODE, up $(cut -d' ' -f1 /proc/uptime) s"
