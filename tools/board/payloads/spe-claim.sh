# SPDX-License-Identifier: GPL-2.0
# Board payload: claiming the stock SPE device for amupmu ("amupmu-spe",
# Documentation/admin-guide/amupmu.rst, "Claiming the SPE device"). Needs a
# board with an SPE node (run.sh -S yes: /spe, PPI 5). QEMU's CPUs have no
# SPE: on a production module every claim fails with ENODEV and leaves the
# device unbound; on a mock module the CPUs report SPE through the mock
# model and the claim succeeds. By hand (driver_override + bind, unbind),
# then with "amupmu spe claim/release"; claim twice, release when not
# claimed, hotplug of the last CPU and rmmod while claimed; SPE sessions
# across unbind and bind (amupmu_spe_lifetime_test unbind_stale). The harness
# fails the board on any WARN/Oops in the kernel log.
#   ./tools/board/run.sh -q -k 6.12 -m vhe -d amupmu -v mock -S yes spe-claim
#   ./tools/board/run.sh -q -k 6.1 -m el1 -d amupmu -v prod -S yes spe-claim
. /lib.sh

variant=$(echo "$AMUPMU_BOARD" | cut -d/ -f4)
if [ "$variant" = mock ]; then
	spe_be=mock
else
	spe_be="QEMU no SPE"
fi
drv=/sys/bus/platform/drivers/amupmu-spe
ncpu=$(grep -c '^processor' /proc/cpuinfo)
last=$((ncpu - 1))

# t NAME CMD...: tap_check with the backend in the test's name
t() {
	n=$1
	shift
	tap_check "$n [$spe_be]" "$@"
}

spe_devs() {
	for d in /sys/bus/platform/devices/*; do
		grep -qs 'arm,statistical-profiling-extension-v1' "$d/of_node/compatible" &&
			basename "$d"
	done
}
dev=$(spe_devs | head -1)
dev2=$(spe_devs | sed -n 2p)
dd=/sys/bus/platform/devices/$dev
echo "# SPE devices: $(spe_devs | tr '\n' ' ')($ncpu CPUs, module build: $variant)"

driver() { basename "$(readlink "$dd/driver" 2>/dev/null)" 2>/dev/null; }
bound() { [ "$(driver)" = amupmu-spe ]; }
unbound() { [ ! -e "$dd/driver" ]; }
override_clear() { [ "$(cat "$dd/driver_override")" = "(null)" ]; }
ppi_requested() { grep -q ' amupmu-spe$' /proc/interrupts; }
ppi_free() { ! ppi_requested; }
claimed() { bound && ppi_requested; }
ppi_intid() {
	n=$(sed -n 's/^ *\([0-9]*\):.* amupmu-spe$/\1/p' /proc/interrupts)
	echo "# Linux IRQ ${n:-none}, hwirq $(cat "/sys/kernel/irq/$n/hwirq" 2>/dev/null)"
	[ "$(cat "/sys/kernel/irq/$n/hwirq" 2>/dev/null)" = "$1" ]
}
released() { unbound && override_clear && ppi_free; }
logged() { dmesg | grep -q "$1"; }
logged_since() { since "$1" | grep -q "$2"; }
# wr FILE VALUE ERRTEXT: the write fails with that error text (strerror)
wr_fails() {
	out=$(sh -c "echo $2 >$1" 2>&1) && { echo "# write $2 >$1 succeeded"; return 1; }
	echo "# $out"
	case $out in *"$3"*) return 0 ;; esac
	return 1
}
wr() { sh -c "echo $2 >$1"; }
mark() { echo "amupmu-spe-test: $1" >/dev/kmsg; }
since() { dmesg | sed -n "/amupmu-spe-test: $1\$/,\$p"; }
# tool NAME STATUS PATTERN CMD...: CMD exits with STATUS and says PATTERN
tool() {
	n=$1 st=$2 pat=$3
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	echo "AMUPMU-BEGIN $n [$spe_be]"
	echo "$out" | sed 's/^/# /'
	if [ "$rc" = "$st" ] && echo "$out" | grep -q "$pat"; then
		echo "ok 1 $n [$spe_be]"
	else
		echo "not ok 1 $n [$spe_be] (status $rc, want $st and /$pat/)"
	fi
	echo "AMUPMU-END $n [$spe_be] rc=0"
}

t spe-node-present test -n "$dev"
t insmod insmod "$AMUPMU_KO"
board_backend
t driver-registered test -d "$drv"
t unbound-at-load unbound
# INFO's spe_owner (amupmu info): QEMU's CPUs have no SPE, so "none" on a
# production build; the mock model is its own SPE device, so "amupmu"
owner() { amupmu info 2>/dev/null | grep -q "spe owner *:* *$1"; }
if [ -x /bin/amupmu ]; then
	if [ "$variant" = mock ]; then
		t owner-mock-amupmu owner amupmu
	else
		t owner-none owner none
	fi
fi

# ---- by hand, as the admin guide says
mark byhand
wr "$dd/driver_override" amupmu-spe
if [ "$variant" = mock ]; then
	t byhand-bind wr "$drv/bind" "$dev"
	t byhand-bound bound
	t byhand-ppi-requested ppi_requested
	# the devicetree's <1 5 4> is INTID 21 (GIC_PPI 5) on this GIC
	t byhand-ppi-is-intid-21 ppi_intid 21
	t byhand-logged logged_since byhand "amupmu-spe $dev: owns SPE: buffer interrupt [0-9]* for CPUs 0-$last"
	# a bound device takes no second driver (the driver core's EBUSY)
	t byhand-bind-twice-ebusy wr_fails "$drv/bind" "$dev" "busy"
	t byhand-still-bound bound
	if [ "$ncpu" -gt 1 ]; then
		echo 0 >/sys/devices/system/cpu/cpu$last/online
		t hotplug-offline-while-bound claimed
		echo 1 >/sys/devices/system/cpu/cpu$last/online
		t hotplug-online-while-bound test "$(cat /sys/devices/system/cpu/cpu$last/online)" = 1
	fi
	t byhand-unbind wr "$drv/unbind" "$dev"
	t byhand-unbound unbound
	t byhand-ppi-freed ppi_free
	t byhand-release-logged logged_since byhand "amupmu-spe $dev: SPE released"
else
	# no CPU has SPE: the probe refuses, the device stays unbound
	t byhand-bind-enodev wr_fails "$drv/bind" "$dev" "No such device"
	t byhand-unbound unbound
	t byhand-ppi-free ppi_free
	t byhand-why-logged logged_since byhand "amupmu-spe $dev: none of the CPUs 0-$last of its PPI has SPE"
fi
# a second SPE device (run.sh -S two) while the first is amupmu's: EBUSY
if [ -n "$dev2" ] && [ "$variant" = mock ]; then
	wr "$drv/bind" "$dev"
	wr "/sys/bus/platform/devices/$dev2/driver_override" amupmu-spe
	t second-device-bind-ebusy wr_fails "$drv/bind" "$dev2" "busy"
	t second-device-unbound test ! -e "/sys/bus/platform/devices/$dev2/driver"
	t second-device-why-logged logged_since byhand "amupmu-spe $dev2: $dev is amupmu's SPE device already"
	t first-device-still-bound claimed
	wr "/sys/bus/platform/devices/$dev2/driver_override" ""
	wr "$drv/unbind" "$dev"
fi
# releasing what is not bound: the driver core's ENODEV
t byhand-unbind-not-bound-enodev wr_fails "$drv/unbind" "$dev" "No such device"
wr "$dd/driver_override" ""
t byhand-override-cleared override_clear

# ---- the tool (naming the device when there are two: -S two)
set --
[ -n "$dev2" ] && set -- "$dev"
if [ -x /bin/amupmu ]; then
	if [ "$variant" = mock ]; then
		tool tool-claim 0 "claimed $dev" amupmu spe claim "$@"
		t tool-claimed claimed
		tool tool-claim-twice 0 "$dev is amupmu's already" amupmu spe claim "$@"
		tool tool-release 0 "released $dev" amupmu spe release "$@"
		t tool-released released
	else
		tool tool-claim-enodev 1 "bind $dev: No such device (ENODEV) -- none of the CPUs" amupmu spe claim "$@"
		t tool-claim-left-unbound released
	fi
	if [ -n "$dev2" ]; then
		tool tool-claim-ambiguous 1 "2 SPE devices ($dev, $dev2): name the one to use" amupmu spe claim
		if [ "$variant" = mock ]; then
			wr "/sys/bus/platform/devices/$dev2/driver_override" amupmu-spe
			wr "$drv/bind" "$dev2"
			tool tool-claim-second-ebusy 1 "bind $dev: Device or resource busy (EBUSY) -- another SPE device is amupmu's" \
				amupmu spe claim "$dev"
			t tool-claim-second-reset override_clear
			wr "$drv/unbind" "$dev2"
			wr "/sys/bus/platform/devices/$dev2/driver_override" ""
		fi
	fi
	tool tool-release-not-claimed 0 "$dev is not claimed" amupmu spe release "$@"
	tool tool-claim-no-such-device 1 "no SPE device named nosuch" amupmu spe claim nosuch
	# not root: the sysfs writes are refused
	tool tool-claim-not-root 1 "Permission denied (EACCES) -- claiming needs root" \
		su -s /bin/sh nobody -c "amupmu spe claim $*"
	t tool-not-root-left-unbound released
else
	t tool-present false
fi

# ---- rmmod while claimed: the platform driver unregisters and unbinds;
# driver_override stays, so loading amupmu again binds the device again
if [ "$variant" = mock ]; then
	wr "$dd/driver_override" amupmu-spe
	wr "$drv/bind" "$dev"
	t rmmod-while-claimed rmmod amupmu
	t rmmod-unbound unbound
	t rmmod-ppi-freed ppi_free
	t insmod-rebinds insmod "$AMUPMU_KO"
	t insmod-rebound claimed
	wr "$drv/unbind" "$dev"
	wr "$dd/driver_override" ""
fi
# sessions configured, enabled, polled and mapped across unbind and bind
# (issue 24): stale with ENXIO, not restarted by CPU online, EPOLLHUP; the
# data stays (mock builds: sessions need the model)
if [ "$variant" = mock ] && [ -x /selftests/amupmu_spe_lifetime_test ]; then
	run_test amupmu_spe_unbind_stale env AMUPMU_SPE_ONLY=unbind_stale \
		/selftests/amupmu_spe_lifetime_test
	t unbind-stale-left-unbound released
fi
t rmmod rmmod amupmu
t rmmod-left-unbound unbound
t rmmod-override-clear override_clear
