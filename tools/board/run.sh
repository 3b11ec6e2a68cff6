#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The emulated arm64 board: build an initramfs (busybox, amupmu.ko, the
# selftests, the aarch64 test binaries and the amupmu tool), boot Debian's
# kernel on qemu-system-aarch64 -M virt, run a payload, collect its KTAP/TAP
# results from the serial console and check the kernel log.
#
# run.sh -k 6.1|6.12|6.1-debug -d stock|amupmu [-m el1|vhe] [-c CPU] [-s N] [-v prod|mock] [-i]
#        [-f yes|no] [-S yes|no|two] [-n HOSTPORT:PORT[,...]] [-t SECS] [-q] PAYLOAD
#   -k  kernel (Debian bookworm 6.1 / trixie 6.12; 6.1-debug: the debug
#       kernel of tools/debug-kernel.sh, lockdep/KASAN/KFENCE/UBSAN/...)
#   -d  devicetree: stock = QEMU's own (the kernel's arm_pmu owns the PMU);
#       amupmu = QEMU's DTB + dts/amupmu-virt.dtso (the PMU goes to amupmu)
#   -m  machine (tools/board/machines.sh): el1 = -M virt (kernel at EL1,
#       GICv2; default), vhe = -M virt,virtualization=on,gic-version=3
#       (kernel at EL2 with VHE, GICv3, like real boards)
#   -c  CPU model (machines.sh BOARD_CPUS): max (default: QEMU's every
#       feature, MIDR part 0x051), or a real core with its MIDR_EL1:
#       cortex-a76, neoverse-n1, a64fx (payload events.sh)
#   -s  vCPUs (-smp, default 2)
#   -v  module build: prod, or mock (AMU/SPE from the mock register model)
#   -i  add -icount shift=0 (exact, deterministic INST_RETIRED)
#   -f  "amupmu,cpu-frames" nodes (machines.sh machine_frames: an AMU and a
#       PMU ID frame per CPU, answered by the mock build's frame model);
#       default yes with -d amupmu -v mock, else no; bad: yes plus three
#       nodes the driver must refuse (payload frames.sh). Refused on a
#       production build (nothing is mapped there, its read would abort)
#       and with -d stock (QEMU's own DTB is not rewritten).
#   -S  an SPE device node (machines.sh machine_spe: /spe, compatible
#       "arm,statistical-profiling-extension-v1", PPI 5); default no. QEMU's
#       CPUs have no SPE: the node only gives "amupmu-spe" a device to
#       claim (payload spe-claim.sh). two: a second node, /spe2, on the
#       same PPI (amupmu takes one SPE device at a time). With -d stock,
#       QEMU's DTB is dumped and gets the node(s), nothing else.
#   -n  QEMU user networking (a virtio-net NIC, restrict=on: the guest
#       reaches nothing, not even the host) forwarding each 127.0.0.1:HOSTPORT
#       of the host to the guest's PORT; the initramfs gets the kernel's
#       virtio-net modules (board_net_up in lib.sh brings eth0 up as
#       10.0.2.15) and amupmu-dyn, the dynamically linked amupmu with the
#       exporter, with its shared libraries (tools/board/exporter-test.py)
#   -t  timeout in seconds (default 300; 6.1-debug: 900: with KASAN,
#       lockdep and UBSAN under TCG the vhe amupmu mock check payload took
#       246 s on a loaded 2-core host, user space at 7 s)
#   -q  print only the summary, not the payload's console output
#   PAYLOAD  a script in tools/board/payloads/ (without .sh), or a path to one
#
# The board's name is K-MACHINE-DT-VARIANT[-CPU when not max][-smpN when N != 2][-icount]
# [-noframes when -f no on an amupmu/mock board, -badframes with -f bad]
# [-spe with -S yes, -spe2 with -S two]-PAYLOAD.
# Prints "board NAME: P passed, F failed, S skipped" and writes the same
# counts to build/board/NAME/summary; exits 1 when anything failed, also
# when the booted system is not the board asked for (the AMUPMU-BOARD line
# init prints: kernel, exception level, GIC, devicetree, vCPUs, frame nodes,
# SPE nodes, the CPU's implementer and part), and when the kernel complained
# in its log: an Oops, BUG or WARNING, a lockdep, KASAN, KFENCE, UBSAN or DEBUG_OBJECTS report, list
# corruption, a hung task, a soft or hard lockup, an RCU stall.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${CACHE:-$TOP/build/cache}
# shellcheck source=tools/board/machines.sh
. "$TOP/tools/board/machines.sh"
K=6.1 DT=stock MACH=el1 CPU=max SMP=2 VARIANT=prod ICOUNT=0 TIMEOUT="" QUIET=0 FRAMES="" SPE=no NET=""
while getopts "k:d:m:c:s:v:if:S:n:t:q" o; do
	case $o in
	k) K=$OPTARG ;; d) DT=$OPTARG ;; m) MACH=$OPTARG ;; c) CPU=$OPTARG ;; s) SMP=$OPTARG ;;
	v) VARIANT=$OPTARG ;; i) ICOUNT=1 ;; t) TIMEOUT=$OPTARG ;; q) QUIET=1 ;;
	f) FRAMES=$OPTARG ;; S) SPE=$OPTARG ;; n) NET=$OPTARG ;;
	*) sed -n '4,56p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
PAYLOAD=${1:?payload name missing (see tools/board/payloads/)}
[ $# = 1 ] || { echo "board: one payload, options before it (got: $*)" >&2; exit 2; }
PSCRIPT=$TOP/tools/board/payloads/$PAYLOAD.sh
case $PAYLOAD in */*) PSCRIPT=$(realpath "$PAYLOAD"); PAYLOAD=$(basename "$PAYLOAD" .sh) ;; esac
[ -f "$PSCRIPT" ] || { echo "board: no payload $PSCRIPT" >&2; exit 2; }
case $K in 6.1 | 6.12 | 6.1-debug) ;; *) echo "board: -k 6.1|6.12|6.1-debug" >&2; exit 2 ;; esac
case $DT in stock|amupmu) ;; *) echo "board: -d stock|amupmu" >&2; exit 2 ;; esac
if [ -z "$TIMEOUT" ]; then
	TIMEOUT=300
	case $K in *-debug) TIMEOUT=900 ;; esac
fi
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || { echo "board: -t SECS" >&2; exit 2; }
machine_opt "$MACH" >/dev/null || { echo "board: -m ${BOARD_MACHINES// /|}" >&2; exit 2; }
BOARD_CPU=$(board_cpu "$CPU") || { echo "board: -c ${BOARD_CPUS// /|}" >&2; exit 2; }
case $SMP in [1-9] | [1-9][0-9]) ;; *) echo "board: -s 1..99 vCPUs" >&2; exit 2 ;; esac
case $FRAMES in
"") FRAMES=no; [ "$DT/$VARIANT" = amupmu/mock ] && FRAMES=yes ;;
yes | bad)
	if [ "$VARIANT" != mock ]; then
		echo "board: -f $FRAMES: frame nodes need the mock build (-v mock): QEMU's virt has no AMU/PMU frames, and a $VARIANT build would read the empty window and take an external abort" >&2
		exit 2
	fi
	[ "$DT" = amupmu ] || { echo "board: -f $FRAMES: frame nodes go into the generated DTB (-d amupmu)" >&2; exit 2; }
	;;
no) ;;
*) echo "board: -f yes|no|bad" >&2; exit 2 ;;
esac
case $SPE in yes | two | no) ;; *) echo "board: -S yes|no|two" >&2; exit 2 ;; esac
[[ -z $NET || $NET =~ ^[0-9]+:[0-9]+(,[0-9]+:[0-9]+)*$ ]] ||
	{ echo "board: -n HOSTPORT:PORT[,HOSTPORT:PORT...]" >&2; exit 2; }

NAME=$K-$MACH-$DT-$VARIANT
[ "$CPU" = max ] || NAME=$NAME-$CPU
[ "$SMP" = 2 ] || NAME=$NAME-smp$SMP
[ "$ICOUNT" = 1 ] && NAME=$NAME-icount
[ "$DT/$VARIANT/$FRAMES" = amupmu/mock/no ] && NAME=$NAME-noframes
[ "$FRAMES" = bad ] && NAME=$NAME-badframes
[ "$SPE" = yes ] && NAME=$NAME-spe
[ "$SPE" = two ] && NAME=$NAME-spe2
NAME=$NAME-$PAYLOAD
W=$TOP/build/board/$NAME
KC=$CACHE/kernels/$K
KO=$TOP/build/module/$K/$VARIANT/amupmu.ko
AARCH64=$TOP/build/aarch64
SELFTESTS=$TOP/build/selftests/aarch64
BUSYBOX=$CACHE/kernels/6.1/root/bin/busybox
for f in "$KC/Image" "$KO" "$BUSYBOX"; do
	[ -e "$f" ] || { echo "board: missing $f (make deps / tools/build-module.sh $K $VARIANT)" >&2; exit 2; }
done
rm -rf "$W"; mkdir -p "$W"

machine_qemu "$MACH" "$SMP"
QEMU=("${QEMU_CMD[@]}")

# ---------------------------------------------------------------- devicetree
dtb_args=()
if [ "$DT" = amupmu ]; then
	# QEMU's DTB dumped with the same -M/-cpu/-smp/-m as the boot, cached
	base=$(machine_dtb "$MACH" "$SMP" "$TOP/build/board/dtb") ||
		{ echo "board: cannot dump the DTB of ${QEMU[*]}" >&2; exit 2; }
	ovl=$(machine_overlay "$MACH")
	dtc -q -@ -I dts -O dtb -o "$W/${ovl%.dtso}.dtbo" "$TOP/dts/$ovl"
	fdtoverlay -i "$base" -o "$W/board.dtb" "$W/${ovl%.dtso}.dtbo"
	if [ "$FRAMES" != no ]; then
		machine_frames "$W/board.dtb" "$FRAMES" || { echo "board: cannot add the frame nodes" >&2; exit 2; }
	fi
	dtb_args=(-dtb "$W/board.dtb")
elif [ "$SPE" != no ]; then
	base=$(machine_dtb "$MACH" "$SMP" "$TOP/build/board/dtb") ||
		{ echo "board: cannot dump the DTB of ${QEMU[*]}" >&2; exit 2; }
	cp "$base" "$W/board.dtb"
	dtb_args=(-dtb "$W/board.dtb")
fi
NSPE=0
[ "$SPE" = yes ] && NSPE=1
[ "$SPE" = two ] && NSPE=2
if [ "$NSPE" -gt 0 ]; then
	machine_spe "$W/board.dtb" "$NSPE" || { echo "board: cannot add the SPE node(s)" >&2; exit 2; }
fi
NFRAMES=0
[ "$FRAMES" = yes ] && NFRAMES=$SMP
[ "$FRAMES" = bad ] && NFRAMES=$((SMP + 3))

# ---------------------------------------------------------------- initramfs
I=$W/initramfs
mkdir -p "$I"/{bin,sbin,proc,sys,dev,tmp,etc,selftests,tests}
cp "$BUSYBOX" "$I/bin/busybox"
# as INSTALL_MOD_STRIP=1 installs modules: without DWARF
aarch64-linux-gnu-strip --strip-debug -o "$I/amupmu.ko" "$KO"
cp "$TOP/tools/board/init.sh" "$I/init"
cp "$PSCRIPT" "$I/payload.sh"
# payloads may build on each other: all of them as /payload-NAME.sh
for f in "$TOP"/tools/board/payloads/*.sh; do cp "$f" "$I/payload-$(basename "$f")"; done
cp "$TOP/tools/board/lib.sh" "$I/lib.sh"
cp "$TOP/tools/board/tool.sh" "$I/tool.sh"
cp "$TOP/tools/catch2-tap.sh" "$I/catch2-tap.sh"
echo "root:x:0:0:root:/:/bin/sh" >"$I/etc/passwd"
echo "nobody:x:65534:65534:nobody:/:/bin/sh" >>"$I/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$I/etc/group"
[ -d "$SELFTESTS" ] && cp -r "$SELFTESTS"/. "$I/selftests/"
for b in tools/amupmu/amupmu tools/workloads/amupmu-workload tools/bench/pmu_read_bench tools/bench/pmu_sample_bench \
	tools/bench/spe_report_bench \
	lib/libamupmu/tests/amupmu_board_tests \
	lib/libamupmu/tests/amupmu_host_tests examples/amupmu-example-count_region examples/amupmu-example-hot_pcs \
	examples/amupmu-example-amu_rates examples/amupmu-example-exc_undef examples/amupmu-example-netlink_events; do
	# without their DWARF (the symbol tables stay: record/report and
	# the ELF tests read .symtab): a quarter of the bytes to pack and
	# for the guest to unpack, which under -icount is most of its boot
	[ -x "$AARCH64/$b" ] && aarch64-linux-gnu-strip --strip-debug -o "$I/tests/$(basename "$b")" "$AARCH64/$b"
done
[ -x "$I/tests/amupmu" ] && mv "$I/tests/amupmu" "$I/bin/amupmu"
# a dynamically linked workload (record/report of a dynamic program) and
# what it needs, the cross toolchain's own loader and libc: everything else
# on the board is static
if [ -x "$AARCH64/tools/workloads/dynamic/amupmu-workload-dyn" ]; then
	mkdir -p "$I/lib"
	for l in ld-linux-aarch64.so.1 libc.so.6; do cp -L "/usr/aarch64-linux-gnu/lib/$l" "$I/lib/"; done
	cp "$AARCH64/tools/workloads/dynamic/amupmu-workload-dyn" "$I/tests/"
fi
# libnl-utils' genl-ctrl-list (arm64, dynamically linked; make deps unpacks
# it into the cache) with the libnl libraries it needs, from the host's
# arm64 multiarch directory: a generic netlink client that is not ours
GENL_CTRL_LIST=$CACHE/libnl-utils-arm64/usr/bin/genl-ctrl-list
if [ -x "$GENL_CTRL_LIST" ]; then
	mkdir -p "$I/lib"
	for l in ld-linux-aarch64.so.1 libc.so.6; do cp -L "/usr/aarch64-linux-gnu/lib/$l" "$I/lib/"; done
	for l in libnl-3 libnl-genl-3 libnl-route-3 libnl-nf-3 libnl-cli-3; do
		cp -L "/usr/lib/aarch64-linux-gnu/$l.so.200" "$I/lib/"
	done
	cp "$GENL_CTRL_LIST" "$I/bin/"
fi
# -n: the network and what runs on it
if [ -n "$NET" ]; then
	# the kernel's virtio-net driver and what it needs, modules in
	# Debian's kernels (6.12's compressed with xz), loaded in this order
	mods=$(find "$KC/root/lib/modules" "$KC/root/usr/lib/modules" -name '*.ko*' -print -quit 2>/dev/null || true)
	[ -n "$mods" ] || { echo "board: -n: no kernel modules in $KC/root" >&2; exit 2; }
	mkdir -p "$I/lib/modules-net"
	n=0
	for m in failover net_failover virtio_mmio virtio_net; do
		f=$(find "$KC/root/lib/modules" "$KC/root/usr/lib/modules" \( -name "$m.ko" -o -name "$m.ko.xz" \) -print -quit 2>/dev/null || true)
		[ -n "$f" ] || { echo "board: -n: no module $m in $KC/root" >&2; exit 2; }
		n=$((n + 1))
		case $f in *.xz) xz -dc "$f" >"$I/lib/modules-net/$n-$m.ko" ;; *) cp "$f" "$I/lib/modules-net/$n-$m.ko" ;; esac
	done
	# amupmu-dyn and the shared libraries it needs, found as the loader
	# would on an arm64 Debian: the cross toolchain's, the arm64
	# multiarch directory's, and prometheus-cpp's unpacked by make deps
	DYN=$AARCH64/tools/amupmu/dynamic/amupmu-dyn
	if [ -x "$DYN" ]; then
		aarch64-linux-gnu-strip --strip-debug -o "$I/tests/amupmu-dyn" "$DYN"
		libdirs=("$CACHE/prometheus-cpp-arm64/usr/lib/aarch64-linux-gnu" "$CACHE/prometheus-cpp-arm64/lib/aarch64-linux-gnu"
			/usr/aarch64-linux-gnu/lib /usr/lib/aarch64-linux-gnu /lib/aarch64-linux-gnu)
		todo=("$DYN") seen=" "
		while [ ${#todo[@]} -gt 0 ]; do
			f=${todo[0]}
			todo=("${todo[@]:1}")
			for need in $(aarch64-linux-gnu-readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
				case $seen in *" $need "*) continue ;; esac
				seen="$seen$need "
				found=
				for d in "${libdirs[@]}"; do [ -e "$d/$need" ] && { found=$d/$need; break; }; done
				[ -n "$found" ] || { echo "board: -n: amupmu-dyn needs $need, not found" >&2; exit 2; }
				cp -L "$found" "$I/lib/$need"
				todo+=("$found")
			done
		done
		cp -L /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 "$I/lib/"
	fi
	fwd=
	for p in ${NET//,/ }; do fwd="$fwd,hostfwd=tcp:127.0.0.1:${p%%:*}-:${p##*:}"; done
	NET_ARGS=(-netdev "user,id=net0,restrict=on$fwd" -device virtio-net-device,netdev=net0)
fi
# BOARD_EXTRA="FILE..." (development): more aarch64 binaries into /tests
for b in ${BOARD_EXTRA:-}; do cp "$b" "$I/tests/"; done
chmod +x "$I/init"
# uncompressed: the kernel copies it instead of inflating it (QEMU
# loads the file into guest RAM either way)
(cd "$I" && find . -print0 | cpio --null -o -H newc --owner 0:0 --quiet) >"$W/initramfs.cpio"

# ---------------------------------------------------------------- boot
extra=()
[ "$ICOUNT" = 1 ] && extra+=(-icount shift=0)
[ -n "$NET" ] && extra+=("${NET_ARGS[@]}")
# BOARD_QEMU_EXTRA="ARGS" (development): more QEMU arguments, e.g. a TCG plugin;
# BOARD_APPEND="ARGS": more kernel command line, e.g. nokaslr
read -ra qextra <<<"${BOARD_QEMU_EXTRA:-}"
extra+=("${qextra[@]}")
# the debug kernel prints every KASAN report, not only the first, and
# writes to the UART from its first line (earlycon): a boot that stalls
# before the console driver registers shows where (a 6.1-debug boot beside
# a CPU hog once printed nothing in 900 s; its rerun booted in 25 s)
case $K in *-debug) extra_append=" kasan_multi_shot earlycon" ;; *) extra_append="" ;; esac
LOG=$W/console.log
set +e
timeout "$TIMEOUT" "${QEMU[@]}" "${dtb_args[@]}" "${extra[@]}" \
	-serial stdio -monitor none -no-reboot \
	-kernel "$KC/Image" -initrd "$W/initramfs.cpio" \
	-append "console=ttyAMA0 panic=-1 loglevel=5 amupmu_board=$K/$MACH/$DT/$VARIANT/smp$SMP/icount$ICOUNT$extra_append${BOARD_APPEND:+ $BOARD_APPEND}" \
	</dev/null >"$LOG" 2>&1
qrc=$?
set -e
tr -d '\r' <"$LOG" >"$LOG.tmp" && mv "$LOG.tmp" "$LOG"
[ "$QUIET" = 1 ] || grep -v '^DMESG: ' "$LOG" || true

# ---------------------------------------------------------------- results
# Sections "AMUPMU-BEGIN name" .. "AMUPMU-END name rc=N" hold one test
# program's TAP; every top-level "ok"/"not ok" line is a result. The
# "AMUPMU-BOARD: kernel=..." line init derives from the running system must
# match the board asked for.
want="kernel=$K machine=$MACH $(machine_expect "$MACH") dt=$DT module=$VARIANT icount=$ICOUNT smp=$SMP frames=$NFRAMES spe=$NSPE cpu=$(cpu_expect "$CPU")"
awk -v board="$NAME" -v qrc="$qrc" -v timeout="$TIMEOUT" -v want="$want" -v splats="$BOARD_SPLATS" '
	function fail(msg) { failed++; printf "not ok - %s: %s\n", board, msg }
	function val(kv) { sub(/^[^=]*=/, "", kv); return kv }
	/^AMUPMU-BOARD: kernel=/ {
		ident = substr($0, 15); gsub(/[^A-Za-z0-9=. _\/-]/, "", ident)
		for (i = 2; i <= NF; i++) { k = $i; sub(/=.*/, "", k); got[k] = val($i) }
		n = split(want, w, " ")
		for (i = 1; i <= n; i++) {
			k = w[i]; sub(/=.*/, "", k)
			if (got[k] != val(w[i])) fail("booted " k "=" got[k] ", asked for " w[i])
		}
	}
	/^AMUPMU-BEGIN / { sec = substr($0, 14); sfail = 0; sres = 0; insec = 1; next }
	/^AMUPMU-END / {
		rc = $NF; sub(/^rc=/, "", rc)
		if (rc != 0 && sfail == 0) fail(sec " exited with status " rc)
		if (rc == 0 && sres == 0) fail(sec " reported no results")
		insec = 0; next
	}
	insec && /^(not )?ok( |$)/ {
		sres++
		if ($0 ~ /^not ok/ && $0 !~ /# *(TODO)/) { sfail++; fail(sec ": " $0) }
		else if ($0 ~ /# *SKIP/) { skipped++; printf "skip - %s: %s: %s\n", board, sec, $0 }
		else passed++
		next
	}
	/^AMUPMU-BOARD: done/ { done = 1 }
	# what any kernel prints when something is wrong, and what the debug
	# kernel adds: BOARD_SPLATS of machines.sh, fixed strings (mawk 1.3.4
	# cannot compile them as one long alternation)
	BEGIN { nsplat = split(splats, splat, "|") }
	{
		for (i = 1; i <= nsplat; i++)
			if (index($0, splat[i])) {
				if (!(seen[$0]++)) fail("kernel log: " $0)
				break
			}
	}
	END {
		if (insec) fail(sec " did not finish")
		if (qrc == 124) fail("timeout after " timeout " s")
		else if (!done) fail("board did not reach the end of the payload (qemu status " qrc ")")
		else if (ident == "") fail("no AMUPMU-BOARD line naming the board")
		printf "board %s: %d passed, %d failed, %d skipped\n", board, passed, failed, skipped
		printf "passed=%d failed=%d skipped=%d\n", passed, failed, skipped > "/dev/stderr"
		printf "identity=\"%s\"\n", ident > "/dev/stderr"
		exit (failed > 0 ? 1 : 0)
	}' "$LOG" 2>"$W/summary" | tee "$W/results.txt" | { if [ "$QUIET" = 1 ]; then grep -v '^skip -' || true; else cat; fi; }
exit "${PIPESTATUS[0]}"
