#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: everything, in order; one result line per check, logs under
# build/check/, and a last line "check: N passed, N failed[, N skipped]".
# Exits non-zero when anything failed.
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1
LOGS=$TOP/build/check
rm -rf "$LOGS"; mkdir -p "$LOGS"
# the figures check counts the boards booted after this stamp (not after
# $LOGS itself, whose mtime moves each time a log is created in it)
STAMP=$LOGS/.started
touch "$STAMP"
PASSED=0 FAILED=0 SKIPPED=0
T0=$(date +%s)

note() { printf '%s\n' "$*" | tee -a "$LOGS/results.txt"; }

# step NAME CMD...: one result, pass when CMD succeeds
step() {
	local name=$1 log t0 rc
	shift
	log=$LOGS/$(echo "$name" | tr -c 'A-Za-z0-9._\n-' '_').log
	t0=$(date +%s)
	"$@" >"$log" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		PASSED=$((PASSED + 1)); note "ok - $name ($(($(date +%s) - t0)) s)"
	else
		FAILED=$((FAILED + 1)); note "not ok - $name (status $rc, log $log)"
		tail -15 "$log" | sed 's/^/#   /'
	fi
	return $rc
}

# tap NAME CMD...: CMD prints TAP/KTAP; every "ok"/"not ok" line is a result
tap() {
	local name=$1 log rc p f s
	shift
	log=$LOGS/$(echo "$name" | tr -c 'A-Za-z0-9._\n-' '_').log
	"$@" >"$log" 2>&1
	rc=$?
	p=$(grep -cE '^ok( |$)' "$log")
	s=$(grep -E '^ok( |$)' "$log" | grep -cE '# *SKIP')
	f=$(grep -cE '^not ok( |$)' "$log")
	p=$((p - s))
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
	PASSED=$((PASSED + p)); FAILED=$((FAILED + f)); SKIPPED=$((SKIPPED + s))
	note "$([ "$f" = 0 ] && echo ok || echo 'not ok') - $name: $p passed, $f failed, $s skipped"
	[ "$f" = 0 ] || grep -E '^not ok' "$log" | head -20 | sed 's/^/#   /'
}

# e2e_report STEP WHAT OUT: an end-to-end step's results (build/e2e/
# results-STEP.txt, "PASS|FAIL|SKIP NAME" a line) count one by one; a step
# without results failed
e2e_report() {
	local st=$1 what=$2 out=$3 r=build/e2e/results-$1.txt p f s
	if [ ! -s "$r" ]; then
		FAILED=$((FAILED + 1)); note "not ok - e2e $st: $what: no results (log $out)"
		tail -15 "$out" | sed 's/^/#   /'
		return
	fi
	p=$(grep -c '^PASS ' "$r"); f=$(grep -c '^FAIL ' "$r"); s=$(grep -c '^SKIP ' "$r")
	PASSED=$((PASSED + p)); FAILED=$((FAILED + f)); SKIPPED=$((SKIPPED + s))
	note "$([ "$f" = 0 ] && echo ok || echo 'not ok') - e2e $st: $what: $p passed, $f failed, $s skipped ($(cut -d' ' -f2 "build/e2e/timings-$st.txt" 2>/dev/null || echo '?') s)"
	grep '^FAIL ' "$r" | head -20 | sed 's/^/#   /'
	[ "$f" = 0 ] || grep -E '^E2E: FAIL ' "$out" | head -20 | cut -c1-300 | sed 's/^/#   /'
}

# board_log PAYLOAD K MACHINE DT VARIANT [flags]: where that boot's output goes
board_log() {
	local p=$1 k=$2 m=$3 dt=$4 v=$5
	shift 5
	echo "$LOGS/board-$p-$k-$m-$dt-$v$(printf '%s' "$@" | tr -c 'A-Za-z0-9' '_').log"
}

# board_run PAYLOAD K MACHINE DT VARIANT [flags]: one boot, its output in
# board_log's file and how long it took in that file's .time
board_run() {
	local p=$1 k=$2 m=$3 dt=$4 v=$5 log t0
	shift 5
	log=$(board_log "$p" "$k" "$m" "$dt" "$v" "$@")
	t0=$(date +%s)
	# a loaded host (distro CI) slows the boards without -icount: 300 s
	# was once within 50 s of a check board; the debug kernel's own
	# default (900 s) is kept
	local t=()
	case "$k $*" in *-debug*) ;; *) t=(-t 900) ;; esac
	./tools/board/run.sh -q -k "$k" -m "$m" -d "$dt" -v "$v" "${t[@]}" "$@" "$p" >"$log" 2>&1
	echo $(($(date +%s) - t0)) >"$log.time"
}

# board PAYLOAD K MACHINE DT VARIANT [flags]: one boot (board_run) and its
# results (board_report)
board() {
	board_run "$@"
	board_report "$@"
}

# board_report PAYLOAD K MACHINE DT VARIANT [flags]: a boot's results count
# one by one; the line names the board and says how long it took
board_report() {
	local p=$1 k=$2 m=$3 dt=$4 v=$5 log name sum what secs
	shift 5
	what="board $p $k/$m/$dt/$v${*:+ $*}"
	log=$(board_log "$p" "$k" "$m" "$dt" "$v" "$@")
	secs=$(cat "$log.time" 2>/dev/null)
	name=$(sed -n 's/^board \(.*\): [0-9]* passed, .*/\1/p' "$log" | tail -1)
	sum=build/board/$name/summary
	if [ -z "$name" ] || [ ! -f "$sum" ] || ! grep -q '^passed=' "$sum"; then
		FAILED=$((FAILED + 1)); note "not ok - $what: no summary (log $log)"
		tail -15 "$log" | sed 's/^/#   /'
		return
	fi
	local passed failed skipped identity
	# shellcheck disable=SC1090
	. "$sum"
	PASSED=$((PASSED + passed)); FAILED=$((FAILED + failed)); SKIPPED=$((SKIPPED + skipped))
	note "$([ "$failed" = 0 ] && echo ok || echo 'not ok') - $what: $passed passed, $failed failed, $skipped skipped (${secs:-?} s)"
	[ "$failed" = 0 ] || echo "#   booted: ${identity:-unknown}"
	grep -E '^not ok' "$log" | head -20 | sed 's/^/#   /'
	# the last lines each failed section printed (a board check's "#"
	# diagnostics), for the same reason as below
	[ "$failed" = 0 ] || sed -n "s/^not ok - $name: \([^:]*\): .*/\1/p" "$log" | sort -u | head -5 |
		while read -r sec; do
			awk -v s="$sec" '$0 == "AMUPMU-BEGIN " s { on = 1; next }
				on && /^AMUPMU-END / { on = 0 } on && !/^DMESG: /' \
				"build/board/$name/console.log" 2>/dev/null | tail -12 | cut -c1-300 | sed 's/^/#     /'
		done
	# the failed kselftests' own lines ("# file.c:LINE:test:..."), so that
	# the cause is in CI's output, not only in a log CI does not keep
	[ "$failed" = 0 ] || grep -oE 'not ok [0-9]+ [A-Za-z0-9_]+\.[A-Za-z0-9_]+' "$log" |
		awk '{print $4}' | sort -u | head -5 | while read -r t; do
			grep -F ":${t#*.}:" "build/board/$name/console.log" 2>/dev/null |
				grep -v ':backend:' | tail -8 | cut -c1-300 | sed 's/^/#     /'
		done
}

step "make deps" ./tools/deps.sh || { note "check: deps failed, nothing else can run"; exit 1; }

# The packages' end-to-end test (tools/deb-e2e.sh; amupmu-testing.rst, "The
# packages, end to end") runs beside everything else: its root file system
# from here at the lowest priority (cached in /var/cache/amupmu: the cold
# step), the packages' installation and the kernel upgrade in chroots once
# the packages are built (below, nice 10), its two boots at the end (the
# results and disks of an earlier run go first)
unset AMUPMU_E2E_OUT AMUPMU_E2E_DEBS
mkdir -p build/e2e
rm -f build/e2e/results-*.txt build/e2e/timings*.txt build/e2e/transcript*.txt build/e2e/*.img.installed \
	build/e2e/*.img.upgraded
nice -n 19 ./tools/deb-e2e.sh prepare >"$LOGS/e2e-prepare.out" 2>&1 &
e2e_prepare_pid=$!

step "host build (cmake, -Wall -Wextra -Werror)" make -s host-build
tap "host tests (Catch2, x86-64)" make -s host-test
step "host CLI and workload tests (ctest, x86-64)" \
	ctest --test-dir build/host -L host -E '^amupmu_host_tests$' --output-on-failure
step "manual pages: every command and option in its page, amupmu help shows it (rst2man, man-db)" \
	./tools/man-check.py
step "make install (DESTDIR, PREFIX, KDIR: 6.1 module) and consumers: find_package(amupmu) shared + static, pkg-config" ./tools/install-test.sh
tap "libamupmu.so ABI: exports, abidiff against lib/libamupmu/abi/" ./tools/abi-check.sh
step "host build under ASan+UBSan" make -s host-asan
tap "host tests under ASan+UBSan (x86-64)" make -s host-asan-test
tap "syzkaller description in sync with the UAPI" ./selftests/syzkaller/check.py
tap "netlink spec (Documentation/netlink/specs/amupmu.yaml) and UAPI header agree" \
	./selftests/amupmu/netlink_spec_check.py
tap "ioctl type free in ioctl-number.rst (linux-source), no AMUPMU_CMD_LAST" \
	./selftests/amupmu/ioctl_number_check.sh

for k in 6.1 6.12 6.1-debug; do
	for v in prod mock; do
		step "module $k/$v (W=1 and sparse, 0 warnings)" env SPARSE=1 ./tools/build-module.sh "$k" "$v"
	done
done

tap "checkpatch --strict" ./tools/checkpatch.sh
# which file includes and calls which, in every build above: no unit uses
# another, the core no unit, amupmu_main.c only the units' entry points
tap "kernel layers: includes and calls by owner (tools/kernel-layers.py)" \
	./tools/kernel-layers.py kernel/amu_pmu_drv build/module/{6.1,6.12,6.1-debug}/{prod,mock}/obj --check

step "aarch64 build (cmake toolchain, static)" make -s cross-build
tap "host tests (Catch2, aarch64 under qemu-aarch64-static)" make -s cross-test
step "CLI and workload tests (ctest, aarch64 under qemu-aarch64-static)" \
	ctest --test-dir build/aarch64 -L host -E '^amupmu_host_tests$' --output-on-failure
step "selftests build (kselftest lib.mk, aarch64)" make -s selftests
tap "devicetree checks (dt-schema, dtc, fdtoverlay)" ./dts/check.sh

tap "board harness self-test (WARN, timeout and machine detection)" ./tools/board/selftest/run.sh

# The static check (clang-tidy, cppcheck) from here to the end, at the
# lowest priority: it takes the CPU time the boards leave (a board without
# -icount keeps about one of the two cores busy), and the boards' QEMU
# threads preempt it when they wake
nice -n 19 ./tools/static-check.sh >"$LOGS/static.tap" 2>&1 &
static_pid=$!
# The Debian packages beside it, at nice 10 (about 8 min of CPU; before the
# static check, because the end-to-end test's boots wait for it): cross-built
# for arm64 with dpkg-buildpackage, the symbols file, dkms.conf's MAKE line
# against the 6.1 headers, lintian (tools/deb-build.sh)
# then, in the same chain, the end-to-end test's steps that need no board:
# the packages installed into the root file system (DKMS builds amupmu for
# 6.1 under qemu-user) and, on a copy of that disk, the kernel upgrade to
# 6.12 (DKMS builds it again); deb-e2e.sh's install waits for the prepare
# above (flock)
(
	nice -n 10 ./tools/deb-build.sh >"$LOGS/deb.log" 2>&1
	rc=$?
	echo "$rc" >"$LOGS/deb.rc"
	[ "$rc" = 0 ] || exit "$rc"
	nice -n 10 ./tools/deb-e2e.sh install upgrade >"$LOGS/e2e-install.out" 2>&1
) &
deb_pid=$!

# The boards (Documentation/dev-tools/amupmu-testing.rst, "The boards"): the EL1/GICv2 board (-M virt)
# and the EL2/VHE/GICv3 board real hardware is like (-M
# virt,virtualization=on,gic-version=3). Reliability (issue 5): hotplug,
# concurrency, load/unload on the amupmu DT under -icount (without it QEMU's
# multi-threaded TCG resets another CPU's PMU counters now and then while
# sampling interrupts fire and a CPU comes online, Documentation/dev-tools/
# amupmu-reliability.rst); concurrency and load/unload again with both vCPUs
# in parallel; the fuzzer (parallel vCPUs) on both DTs and mock. The AMU
# (issue 11) needs no board of its own: the amupmu_amu_*_test programs run
# in the check payload (the mock model on the amupmu/mock boards, the
# EOPNOTSUPP paths and "no AMU register touched" on every production board)
# and in cpupm (the mock model under -icount on both machines);
# amupmu_modparam.sh loads amu=0 on every check board; the fuzzer covers
# AMU_READ.
for k in 6.1 6.12; do
	board check "$k" el1 stock prod
	board check "$k" el1 amupmu prod
	board check "$k" el1 amupmu mock
	board parallel "$k" el1 amupmu prod
	board check "$k" vhe stock prod
	board fuzz "$k" vhe amupmu prod
done
# on one kernel only: what the other kernel runs on the VHE board, or
# module logic the kernel version does not change (the time budget: 30 min)
board fuzz 6.1 el1 amupmu prod
board fuzz 6.1 el1 stock prod
board pmu32 6.12 el1 amupmu prod
board fuzz 6.12 el1 amupmu mock
# the CPUs' memory-mapped ID frames ("amupmu,cpu-frames" nodes, which the
# mock boards get): read once per CPU, hotplug before and after load, the
# cross-check, refused nodes (-f bad); one kernel on each machine
board frames 6.1 el1 amupmu mock -f bad
board frames 6.12 vhe amupmu mock -s 4
# the SPE device claimed for amupmu (an SPE node, -S yes): by hand and with
# "amupmu spe claim/release", twice, hotplug and rmmod while claimed on the
# mock (its CPUs report SPE); refused with ENODEV and left unbound on a
# production build (QEMU's CPUs have no SPE); one kernel on each machine;
# and two SPE devices (-S two): one at a time, the second EBUSY
board spe-claim 6.12 vhe amupmu mock -S yes
board spe-claim 6.1 el1 amupmu prod -S yes
board spe-claim 6.1 vhe amupmu mock -S two
# every core's events by name (issue 27) on QEMU's real cores (run.sh -c):
# the Neoverse N1 (libpfm4's arm_n1 table; the mock build: exclusive mode,
# and --topdown's CPU_CYCLES from the mock AMU) and the Cortex-A76 (no
# libpfm4 table: the architected names and raw codes; shared mode); the
# list, a core event counted or refused by PMCEID, --topdown naming what
# QEMU's PMU lacks (about 30 s each on a quiet host, 75 s beside a package
# build)
board events 6.1 el1 amupmu mock -c neoverse-n1
board events 6.12 el1 stock prod -c cortex-a76
# the concurrency fuzzer (issue 24): hostile local users, root and uid
# 65534, every command, poll/epoll, mmap, fork, close, while a controller
# offlines CPUs, unbinds amupmu-spe, writes the SPE knobs and toggles
# pmu_shared; shared mode on 6.12 (the debug kernel runs the others below)
board hostile 6.12 vhe stock prod
# The debug kernel (tools/debug-kernel.sh: Debian's linux-source-6.1 with
# lockdep, KASAN, KFENCE, UBSAN, DEBUG_OBJECTS/LIST, atomic-sleep, hung-task
# and stall detection): any report fails the board (run.sh's console
# check). Both machines, prod and mock, both devicetrees: the check payload,
# the ioctl fuzzer, spe-claim and the concurrency fuzzer; stress and cpupm
# under -icount in the lanes below
board check 6.1-debug el1 stock prod
board check 6.1-debug el1 amupmu prod
board check 6.1-debug vhe amupmu mock
board fuzz 6.1-debug vhe amupmu prod
board spe-claim 6.1-debug el1 amupmu mock -S yes
board hostile 6.1-debug el1 amupmu mock -S yes
board hostile 6.1-debug vhe amupmu prod

# amupmu exporter scraped by Debian's Prometheus server on 127.0.0.1
# (issue 28; tools/board/exporter-test.py): the mock build's AMU against
# amupmu amu and the model, the production build's PMU (-icount) against
# amupmu stat, CPU hotplug and module reloads under it; 50-90 s each on the
# loaded 2-core host
for k in 6.1 6.12; do
	tap "exporter scraped by Prometheus: $k mock (AMU)" ./tools/board/exporter-test.py -k "$k" -v mock
	tap "exporter scraped by Prometheus: $k prod (PMU, -icount)" ./tools/board/exporter-test.py -k "$k" -v prod
done

# The boards under -icount last: QEMU runs their vCPUs on one thread, and
# their guest time follows the instructions, not the host's load, so two
# of them run at once (one per core), in two lanes of about equal length;
# their results are counted afterwards, in the order below.
# (seconds on a quiet host in brackets: even positions are one lane, odd
# the other, about 390 s each; cpupm is idle power-down driven by the mock
# build's debugfs hook against every session command, one kernel on each
# machine; shared mode, the stock devicetree, runs the PMU suite on both
# machines and kernels and the stress payload (hotplug, the storm with
# pmu_shared toggled, load/unload) on the VHE board)
icount_boards=(
	"stress 6.1-debug el1 amupmu prod -i"
	"cpupm 6.1-debug vhe amupmu mock -i"
	"stress 6.12 vhe amupmu prod -i"	# 132
	"cpupm 6.1 el1 amupmu mock -i"		# 119
	"pmu 6.1 el1 amupmu prod -i"		# 37
	"stress 6.1 vhe amupmu prod -i"		# 62
	"pmu 6.1 el1 stock prod -i"		# 14
	"stress 6.1 el1 amupmu prod -i"		# 63
	"pmu 6.12 el1 stock prod -i"		# 15
	"pmu 6.1 vhe amupmu prod -i"		# 32
	"cpupm 6.12 vhe amupmu mock -i"		# 80
	"pmu 6.12 el1 amupmu prod -i"		# 32
	"pmu 6.12 vhe amupmu prod -i"		# 39
	"pmu 6.1 vhe stock prod -i"		# 40
	"stress 6.12 vhe stock prod -i"		# 85
	"pmu 6.12 vhe stock prod -i"		# 40
	# the programs of examples/, each checked on what it prints: exact
	# instruction counts (-icount), the mock AMU model, CPU 1 hotplug
	"examples 6.1 el1 amupmu mock -i"	# 24
)
lane() { # lane N: the boards at even (0) or odd (1) positions
	local i args
	for ((i = $1; i < ${#icount_boards[@]}; i += 2)); do
		read -ra args <<<"${icount_boards[$i]}"
		board_run "${args[@]}"
	done
}
lane 0 &
lane0=$!
lane 1 &
lane1=$!
wait "$lane0" "$lane1"
for b in "${icount_boards[@]}"; do
	read -ra args <<<"$b"
	board_report "${args[@]}"
done
wait "$deb_pid"
deb_rc=$(cat "$LOGS/deb.rc" 2>/dev/null || echo 1)
step "Debian packages for arm64 (dpkg-buildpackage, symbols, dkms MAKE, lintian)" \
	sh -c 'cat "$1"; exit "$2"' sh "$LOGS/deb.log" "$deb_rc"
# the end-to-end test: its steps so far, then its two boots at once (the
# installed system on 6.1 and the upgraded one on 6.12, each on its own disk)
wait "$e2e_prepare_pid"
e2e_report prepare "the end-to-end test's root file system (mmdebstrap, arm64 bookworm)" "$LOGS/e2e-prepare.out"
if [ "$deb_rc" = 0 ]; then
	e2e_report install "the packages installed in it (apt, DKMS for 6.1, pkg-config program)" "$LOGS/e2e-install.out"
	e2e_report upgrade "the kernel upgrade to bookworm-backports' 6.12 (apt, DKMS's kernel hook)" "$LOGS/e2e-install.out"
	# (each boot needs its disk: install's, the upgrade's; deb-e2e.sh
	# refuses a missing one, which counts as that step's failure)
	./tools/deb-e2e.sh check >"$LOGS/e2e-check.out" 2>&1 &
	e2e_check_pid=$!
	./tools/deb-e2e.sh upgraded >"$LOGS/e2e-upgraded.out" 2>&1 </dev/null
	wait "$e2e_check_pid"
	e2e_report check "the installed system booted on 6.1 (el1): module at boot, /dev/amupmu, doctor, info, stat, exporter unit, man, program, kselftests" "$LOGS/e2e-check.out"
	e2e_report upgraded "the upgraded system booted on 6.12 (module, doctor, info, stat, exporter unit), then the packages purged: nothing left" "$LOGS/e2e-upgraded.out"
else
	FAILED=$((FAILED + 1)); note "not ok - the packages end to end: not run, the packages did not build"
fi
wait "$static_pid"
static_rc=$?
tap "clang-tidy and cppcheck (lib/, tools/)" sh -c 'cat "$1"; exit "$2"' sh "$LOGS/static.tap" "$static_rc"

# every reliability suite printed its figure on its boards; the committed
# suite table of Documentation/dev-tools/amupmu-reliability.rst is current
tap "reliability figures and table" ./tools/reliability-table.py --check --require-figures --since "$STAMP"

line="check: $PASSED passed, $FAILED failed"
[ "$SKIPPED" = 0 ] || line="$line, $SKIPPED skipped"
note "# check took $(($(date +%s) - T0)) s"
note "$line"
[ "$FAILED" = 0 ]
