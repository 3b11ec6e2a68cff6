#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deb-e2e.sh [-i] [STEP...]: the Debian packages' end-to-end test (issue 26).
# The packages of build/deb/1/ (make deb) go into a Debian bookworm arm64
# system as a user installs them, and that system boots on the emulated
# board (tools/board/machines.sh's el1 machine) with its own kernel and
# initrd from a virtio disk. STEP (default all; each runs alone once the
# ones before it have run):
#
#   prepare   the root filesystem, cached outside the tree (below):
#             mmdebstrap --variant=minbase --arch=arm64 (its maintainer
#             scripts under qemu-user through binfmt_misc) with the kernel
#             (linux-image-arm64) and its headers, dkms, build-essential,
#             pkg-config, man-db, udev, systemd-sysv and the packages' own
#             dependencies; no network configuration
#   install   build/e2e/disk.img: an ext4 image (LABEL amupmu-e2e) made from
#             that tree and loop-mounted; in a chroot (qemu-user): apt-get
#             install of the .debs, so DKMS builds amupmu.ko for the 6.1
#             kernel there; a C++ program built with pkg-config against
#             libamupmu-dev; the test's unit (tools/e2e/e2e.service); then
#             the disk is copied to build/e2e/upgrade.img, the disk of the
#             two last steps (check and upgrade may then run at once)
#   check     boots the disk's 6.1 vmlinuz and initrd.img (root=LABEL=
#             amupmu-e2e); e2e.service runs tools/e2e/guest.sh from a second
#             small disk (LABEL e2e-payload): the module loaded at boot,
#             /dev/amupmu as packaged, amupmu doctor/info/stat, the
#             exporter's systemd unit (a scrape as its dynamic user), man, the
#             program, the kselftests of amupmu-tests (run_kselftest.sh);
#             then the guest powers off
#   upgrade   in upgrade.img's chroot, as a bookworm user upgrades the kernel:
#             apt-get update; apt-get -t bookworm-backports install
#             linux-image-arm64 linux-headers-arm64; DKMS's kernel hook
#             builds amupmu.ko for 6.12
#   upgraded  boots the new kernel (the disk's /vmlinuz), checks the module
#             there; then, in the chroot, apt-get purge of the packages and
#             nothing of them may be left (dpkg -L, find)
#   all       the five in order
#
# -i boots the check with -icount shift=0 (the boards' count tests do);
# without it (the default: cheaper) the kselftest stress case
# hotplug_counting is skipped with its reason (QEMU's multi-threaded TCG
# loses counter values beside a sampling counter: amupmu-reliability.rst).
#
# Each check prints one line, "E2E: PASS NAME" or "E2E: FAIL NAME: why"
# (the host's, and the guest's from the serial console); a step fails on
# any FAIL, a result missing, a kernel Oops/WARNING/... in the console log
# (machines.sh's BOARD_SPLATS) or a timeout. The transcript (every command,
# a summary of its output, the boots' results) is build/e2e/transcript.txt,
# each step's full log build/e2e/STEP.log, the consoles build/e2e/*-console.log,
# the steps' seconds build/e2e/timings.txt (each step also writes its own
# transcript-STEP.txt, timings-STEP.txt and results-STEP.txt: two steps may
# run at once, in two processes, as make check runs check and upgraded).
#
# The root filesystem is cached in ${AMUPMU_KCACHE:-/var/cache/amupmu}/e2e/
# bookworm-KEY, KEY a hash of the package list and of this script's recipe
# (the functions that make the tree), made under flock in a temporary
# directory (/dev/shm/amupmu-e2e-HASH-*, HASH of the cache's path) and
# renamed into place: a build that fails leaves nothing (the next prepare
# of the same cache removes it). A cached tree is never changed (install copies it into the
# image); apt's downloads of the upgrade are kept in .../e2e/apt-archives.
#
# Needs root, mmdebstrap, qemu-user-static, binfmt-support, qemu-system-arm,
# e2fsprogs (tools/deps.sh) and the archive (deb.debian.org or the host's
# apt mirror) for prepare and upgrade.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/board/machines.sh
. "$TOP/tools/board/machines.sh"
# shellcheck source=tools/apt-mirror.sh
. "$TOP/tools/apt-mirror.sh"

W=${AMUPMU_E2E_OUT:-$TOP/build/e2e}
DEBS=${AMUPMU_E2E_DEBS:-$TOP/build/deb/1}
ECACHE=${AMUPMU_KCACHE:-/var/cache/amupmu}/e2e
# the installed system's disk (install, check) and its copy made at the
# end of install (upgrade, upgraded): the first boot and the upgrade can
# run at once (make check does); each step mounts at its own MNT
DISK=$W/disk.img
UDISK=$W/upgrade.img
IMG=$DISK
IMG_SIZE=6G
MNT=$W/mnt
LABEL=amupmu-e2e
PLABEL=e2e-payload
SUITE=bookworm
MACH=el1
SMP=2
ICOUNT=0
# the boots' limits: the check runs the kselftests (about 10 min of it on
# a quiet host)
CHECK_TIMEOUT=${AMUPMU_E2E_CHECK_TIMEOUT:-1500}
UPGRADED_TIMEOUT=${AMUPMU_E2E_UPGRADED_TIMEOUT:-1200}
# any one command in the chroot, and mmdebstrap (the cold root file system
# took 377 s on a quiet host, an apt-get install with DKMS 1669 s at nice 19
# beside load 12), and the wait for another run's root file system
CMD_TIMEOUT=${AMUPMU_E2E_CMD_TIMEOUT:-2700}
TRANSCRIPT=$W/transcript.txt
STEPS_ALL=(prepare install check upgrade upgraded)
STEP=none

# the packages of the root filesystem: a bookworm board's system with the
# kernel and headers (DKMS builds against them), DKMS, a compiler and
# pkg-config (a user's program against libamupmu-dev), man, udev, systemd;
# lz4 (the initrd's compressor, below); the packages' own dependencies
# (libamupmu-dev's in debian/control, and the libraries dpkg-shlibdeps
# finds: libpfm4, prometheus-cpp's core and civetweb for the exporter), so that installing
# the packages downloads nothing (install falls back to apt-get update
# and says so when one is missing)
E2E_PKGS=(linux-image-arm64 linux-headers-arm64 dkms build-essential pkg-config man-db kmod
	udev systemd-sysv initramfs-tools lz4 libnl-3-dev libnl-genl-3-dev libdw-dev libpfm4-dev
	libprometheus-cpp-core1.0 libcivetweb1)

log() { printf 'e2e: %s\n' "$*"; }
die() { printf 'e2e: error: %s\n' "$*" >&2; exit 1; }

# result PASS|FAIL NAME [DETAIL]: one host-side check's line
result() {
	printf 'E2E: %s %s%s\n' "$1" "$2" "${3:+: $3}"
	echo "$1 $2" >>"$W/results-$STEP.txt"
}

# ---------------------------------------------------------------- mounts
# umount_under DIR: unmount everything mounted at DIR or below, deepest first
umount_under() {
	local d m
	d=$(realpath -m "$1")
	findmnt -rn -o TARGET | awk -v d="$d" '$0 == d || index($0, d "/") == 1' | sort -r |
		while IFS= read -r m; do
			umount "$m" 2>/dev/null || umount -l "$m"
		done
}

# rm_tree DIR: remove a tree that may have things mounted in it (a chroot
# of a build that died): unmount them first, never cross into another
# file system
rm_tree() {
	[ -e "$1" ] || return 0
	umount_under "$1"
	rm -rf --one-file-system "$1"
}

# binfmt: run arm64 programs through qemu-user-static: binfmt-support's
# entry (update-binfmts), else the systemd-binfmt line the package ships;
# both with the F flag (the chroot needs no interpreter of its own)
binfmt() {
	local conf=/usr/lib/binfmt.d/qemu-aarch64.conf
	[ -d /proc/sys/fs/binfmt_misc ] || die "no binfmt_misc in this kernel"
	[ -e /proc/sys/fs/binfmt_misc/status ] ||
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
	if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
		if command -v update-binfmts >/dev/null; then
			update-binfmts --enable qemu-aarch64
		elif [ -f "$conf" ]; then
			cat "$conf" >/proc/sys/fs/binfmt_misc/register
		fi
	fi
	[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] ||
		die "cannot register qemu-aarch64 with binfmt_misc (qemu-user-static, binfmt-support: make deps)"
	grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 ||
		die "binfmt_misc's qemu-aarch64 entry is disabled"
}

# mount_disk: the image at $MNT with what a chroot needs; cleanup (trap)
# unmounts it all
mount_disk() {
	mkdir -p "$MNT"
	umount_under "$MNT"
	mount -o loop "$IMG" "$MNT"
	mount -t proc proc "$MNT/proc"
	mount -t sysfs sysfs "$MNT/sys"
	mount --bind /dev "$MNT/dev"
	mount --bind /dev/pts "$MNT/dev/pts"
	mount -t tmpfs tmpfs "$MNT/run"
	mount -t tmpfs tmpfs "$MNT/tmp"
	# name resolution for apt (mmdebstrap left the host's file there)
	if [ -f "$MNT/etc/resolv.conf" ]; then mount --bind /etc/resolv.conf "$MNT/etc/resolv.conf"; fi
	# no daemon starts in the chroot (invoke-rc.d asks policy-rc.d)
	printf '#!/bin/sh\nexit 101\n' >"$MNT/usr/sbin/policy-rc.d"
	chmod 755 "$MNT/usr/sbin/policy-rc.d"
}

cleanup() {
	rm -f "$MNT/usr/sbin/policy-rc.d"
	umount_under "$MNT" 2>/dev/null || true
	if [ -n "${TMPTREE:-}" ]; then rm_tree "$TMPTREE"; fi
}
trap cleanup EXIT

# in_chroot CMD...: CMD in the mounted image, with a user's environment,
# no terminal, and a time limit (CMD_TIMEOUT: a stalled mirror or a hung
# qemu-user process fails the step instead of hanging make check)
in_chroot() {
	timeout -k 30 "$CMD_TIMEOUT" chroot "$MNT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive TERM=dumb "$@" </dev/null
}

# run NAME PATTERN CMD...: CMD in the chroot, its output into STEP.log, the
# lines matching PATTERN (grep -E) into the transcript; a result line
run() {
	local name=$1 pat=$2 rc t0
	shift 2
	echo "E2E-OUT: (chroot) \$ $*"
	echo "== (chroot) \$ $*" >>"$W/$STEP.log"
	t0=$(date +%s)
	set +e
	in_chroot "$@" >>"$W/$STEP.log.tmp" 2>&1
	rc=$?
	set -e
	cat "$W/$STEP.log.tmp" >>"$W/$STEP.log"
	grep -E -- "$pat" "$W/$STEP.log.tmp" | head -60 | sed 's/^/E2E-OUT: /' || true
	rm -f "$W/$STEP.log.tmp"
	if [ "$rc" = 0 ]; then
		result PASS "$name" "$(($(date +%s) - t0)) s"
	else
		result FAIL "$name" "status $rc after $(($(date +%s) - t0)) s (log $W/$STEP.log)"
	fi
	return "$rc"
}

# ---------------------------------------------------------------- prepare
# The recipe: these functions' text is part of the cache key.

# essential_hook ROOT: after the Essential packages, before the others
essential_hook() {
	local r=$1
	# man-db's index is rebuilt at every package installation otherwise:
	# minutes under qemu-user, for nothing man needs (it finds pages by name)
	echo "man-db man-db/auto-update boolean false" | chroot "$r" debconf-set-selections
	# initramfs-tools: only the modules listed (most are modules in Debian's
	# kernel), those that find the root file system on the board's virtio
	# disk; lz4 at level 1: update-initramfs runs under qemu-user here
	mkdir -p "$r/etc/initramfs-tools/conf.d" "$r/etc/initramfs-tools/hooks"
	printf 'MODULES=list\nCOMPRESS=lz4\nCOMPRESSLEVEL=1\n' >"$r/etc/initramfs-tools/conf.d/e2e.conf"
	cat >"$r/etc/initramfs-tools/hooks/e2e-virtio" <<-'HOOK'
	#!/bin/sh
	# the board's root disk: virtio-blk on PCI or MMIO, ext4
	[ "$1" = prereqs ] && exit 0
	. /usr/share/initramfs-tools/hook-functions
	manual_add_modules virtio_blk virtio_pci virtio_mmio ext4
	HOOK
	chmod 755 "$r/etc/initramfs-tools/hooks/e2e-virtio"
}

# customize_hook ROOT: after all packages
customize_hook() {
	local r=$1 u
	echo "LABEL=$LABEL / ext4 rw,errors=remount-ro 0 1" >"$r/etc/fstab"
	echo e2e >"$r/etc/hostname"
	# the serial console carries the test's lines: no getty on it; no
	# timers that would start apt, man-db or fstrim in the middle of a boot
	for u in serial-getty@ttyAMA0.service getty@tty1.service apt-daily.timer \
		apt-daily-upgrade.timer man-db.timer e2scrub_all.timer fstrim.timer; do
		ln -sf /dev/null "$r/etc/systemd/system/$u"
	done
}

# sources: what a bookworm user's sources.list has, and backports
sources() {
	local m s
	m=$(apt_mirror) || die "no Debian archive in the host's apt sources"
	echo "deb $m $SUITE main"
	echo "deb $m $SUITE-updates main"
	s=$(apt_mirror security) && echo "deb $s $SUITE-security main"
	echo "deb $m $SUITE-backports main"
}

recipe_key() {
	{
		printf '%s\n' "$SUITE" "${E2E_PKGS[@]}" "$LABEL"
		declare -f essential_hook customize_hook make_tree
	} | sha256sum | cut -c1-12
}

# make_tree DIR: mmdebstrap into DIR
make_tree() {
	local d=$1 src=()
	mapfile -t src < <(sources)
	timeout -k 30 "$CMD_TIMEOUT" mmdebstrap --mode=root --variant=minbase --arch=arm64 --format=directory \
		--include="$(IFS=,; echo "${E2E_PKGS[*]}")" \
		--aptopt='Acquire::Retries "3"' \
		--essential-hook="\"$TOP/tools/deb-e2e.sh\" _hook essential \"\$1\"" \
		--customize-hook="\"$TOP/tools/deb-e2e.sh\" _hook customize \"\$1\"" \
		"$SUITE" "$d" "${src[@]}"
}

# rootfs: print the cached tree's path (prepare it when missing)
ROOTFS=""
prepare() {
	local key t0 tmp shm
	key=$(recipe_key)
	ROOTFS=$ECACHE/$SUITE-$key
	if [ -f "$ROOTFS/.complete" ]; then
		log "prepare: cached $ROOTFS ($(cat "$ROOTFS/.complete"))"
		[ "$STEP" != prepare ] || result PASS rootfs "cached: $(cat "$ROOTFS/.complete")"
		return
	fi
	mkdir -p "$ECACHE"
	exec 8>"$ECACHE/.lock"
	flock -w "$CMD_TIMEOUT" 8 || die "another run held $ECACHE/.lock for $CMD_TIMEOUT s"
	if [ -f "$ROOTFS/.complete" ]; then
		log "prepare: cached $ROOTFS (made by another run meanwhile)"
		[ "$STEP" != prepare ] || result PASS rootfs "made by another run meanwhile"
		exec 8>&-
		return
	fi
	binfmt
	# what a build that died left (we hold the lock)
	# (only this cache's: another AMUPMU_KCACHE has its own lock and trees)
	shm=/dev/shm/amupmu-e2e-$(printf '%s' "$ECACHE" | sha256sum | cut -c1-8)
	for tmp in "$ECACHE"/.tmp-* "$shm"-*; do
		[ -e "$tmp" ] && { log "prepare: removing the unfinished $tmp"; rm_tree "$tmp"; }
	done
	t0=$(date +%s)
	TMPTREE=$(mktemp -d "$shm-XXXXXX")
	log "prepare: mmdebstrap $SUITE arm64 (${E2E_PKGS[*]}) into $TMPTREE (log $W/prepare.log)"
	if ! make_tree "$TMPTREE/root" >>"$W/prepare.log" 2>&1; then
		tail -30 "$W/prepare.log" >&2
		die "mmdebstrap failed (log $W/prepare.log)"
	fi
	dpkg-query --admindir="$TMPTREE/root/var/lib/dpkg" -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' \
		'linux-image-[0-9]*' 'linux-headers-[0-9]*-arm64' dkms | awk '$1 == "ii" { printf "%s %s ", $2, $3 }' \
		>"$TMPTREE/root/.complete"
	# onto the cache's file system, then one rename
	cp -a "$TMPTREE/root" "$ECACHE/.tmp-$key"
	rm_tree "$TMPTREE"; TMPTREE=""
	rm_tree "$ROOTFS"
	mv -T "$ECACHE/.tmp-$key" "$ROOTFS"
	exec 8>&-
	log "prepare: $ROOTFS in $(($(date +%s) - t0)) s: $(cat "$ROOTFS/.complete")"
	[ "$STEP" != prepare ] || result PASS rootfs "made in $(($(date +%s) - t0)) s: $(cat "$ROOTFS/.complete")"
	du -sh "$ROOTFS" | sed 's/^/e2e: prepare: size /'
}

# ---------------------------------------------------------------- install
# test_unit: the test's unit into the mounted disk, enabled; its payload
# disk may take more than the 90 s that systemd waits for a device by
# default (the 6.12 boot beside apparmor's first profile compilation, on a
# loaded host, did not get it in time): the host's timeout bounds the boot
test_unit() {
	local dev='dev-disk-by\x2dlabel-e2e\x2dpayload.device'
	cp "$TOP/tools/e2e/e2e.service" "$MNT/etc/systemd/system/e2e.service"
	ln -sf /etc/systemd/system/e2e.service "$MNT/etc/systemd/system/multi-user.target.wants/e2e.service"
	mkdir -p "$MNT/etc/systemd/system/$dev.d"
	printf '[Unit]\nJobRunningTimeoutSec=infinity\n' >"$MNT/etc/systemd/system/$dev.d/e2e.conf"
}

# debs: the .debs to install, one a line: the packages, not their -dbgsym
# (Debian serves those from its debug archive, a user seldom has them)
debs() {
	local d
	for d in "$DEBS"/*.deb; do
		[ -f "$d" ] || continue
		[ "$(dpkg-deb -f "$d" Auto-Built-Package)" = debug-symbols ] || echo "$d"
	done
}

install_step() {
	local debs=() names=() d kver t0
	# nothing of an earlier run's disks is used if this step stops early
	rm -f "$DISK.installed" "$UDISK" "$UDISK.installed" "$UDISK.upgraded"
	mapfile -t debs < <(debs)
	[ ${#debs[@]} -gt 0 ] || die "no .deb in $DEBS (make deb)"
	for d in "${debs[@]}"; do names+=("$(dpkg-deb -f "$d" Package)"); done
	log "install: ${names[*]} from $DEBS"
	prepare
	binfmt
	t0=$(date +%s)
	rm -f "$IMG" "$UDISK" "$UDISK.installed" "$UDISK.upgraded"
	mke2fs -q -F -t ext4 -L "$LABEL" -d "$ROOTFS" "$IMG" "$IMG_SIZE"
	rm -f "$IMG.installed"
	log "install: $IMG (ext4, $IMG_SIZE sparse) from the cached tree in $(($(date +%s) - t0)) s"
	mount_disk
	rm -f "$MNT/.complete"
	mkdir -p "$MNT/tmp/debs"
	cp "${debs[@]}" "$MNT/tmp/debs/"
	local inchroot=()
	for d in "${debs[@]}"; do inchroot+=("/tmp/debs/$(basename "$d")"); done
	# as a user installs them: apt resolves against the disk's dpkg status;
	# the tree has the packages' dependencies, so this downloads nothing
	# unless they changed (then the lists are fetched first)
	if ! run apt-install '^(Get:|Setting up)|DKMS|Building|Installing|depmod|[Ee]rror|newly installed' \
		apt-get install -y "${inchroot[@]}"; then
		# not a failure yet: a user's apt would fetch the lists too
		sed -i '/^FAIL apt-install$/d' "$W/results-$STEP.txt"
		log "install: retrying after apt-get update (a new dependency to download? the root file system's package list, E2E_PKGS, lacks one)"
		run apt-update 'Err|Hit|Get' apt-get update || die "apt-get update failed"
		run apt-install '^(Get:|Setting up)|DKMS|Building|Installing|depmod|[Ee]rror|newly installed' \
			apt-get install -y "${inchroot[@]}" || die "apt-get install of the packages failed"
	fi
	# DKMS's build for the installed kernel, and how long it took
	kver=$(basename "$(ls -d "$MNT"/lib/modules/6.1.*-arm64)")
	run dkms-status "amupmu" dkms status amupmu || true
	if grep -q "^amupmu/[^,]*, $kver, aarch64: installed" <(in_chroot dkms status amupmu); then
		result PASS dkms-6.1 "amupmu installed for $kver"
	else
		result FAIL dkms-6.1 "no installed amupmu for $kver in dkms status"
	fi
	run module-6.1 "^(filename|vermagic|version):" modinfo -k "$kver" amupmu || true
	# the user's program, with pkg-config
	mkdir -p "$MNT/usr/local/src"
	cp "$TOP/tools/e2e/count.cpp" "$MNT/usr/local/src/e2e-count.cpp"
	# shellcheck disable=SC2016 # expanded in the chroot
	run program-build '.' sh -c 'g++ -std=c++20 -O2 -Wall -Wextra -Werror -o /usr/local/bin/e2e-count \
		/usr/local/src/e2e-count.cpp $(pkg-config --cflags --libs amupmu) && pkg-config --modversion amupmu' || true
	# the test's unit, started at boot when the payload disk is there
	test_unit
	printf '%s\n' "${names[@]}" >"$W/packages"
	cleanup
	# the upgrade's disk: the installed system, copied (holes kept)
	rm -f "$UDISK" "$UDISK.installed" "$UDISK.upgraded"
	cp --sparse=always "$IMG" "$UDISK"
	touch "$IMG.installed" "$UDISK.installed"
}

# ---------------------------------------------------------------- boots
# shvar NAME VALUE: NAME='VALUE' for sh, the value's quotes escaped
shvar() {
	printf "%s='%s'\n" "$1" "$(printf '%s' "$2" | sed "s/'/'\\\\''/g")"
}

# boot NAME KSERIES TIMEOUT ICOUNT: boot the disk's kernel KSERIES.* with
# its initrd, the payload disk for MODE NAME; the guest's and the host's
# findings as result lines
boot() {
	local name=$1 kseries=$2 timeout=$3 icount=$4 k kver P console qrc t0 extra=() node skip="" why=""
	[ -f "$IMG.installed" ] || die "no installed disk $IMG (tools/deb-e2e.sh install)"
	k=$(debugfs -R 'ls -p /boot' "$IMG" 2>/dev/null | awk -F/ '{ print $6 }' |
		grep -E "^vmlinuz-$kseries\.[0-9].*-arm64$" | sort -V | tail -1)
	[ -n "$k" ] || die "no /boot/vmlinuz-$kseries.* in $IMG"
	kver=${k#vmlinuz-}
	debugfs -R "dump /boot/vmlinuz-$kver $W/vmlinuz-$kver" "$IMG" >/dev/null 2>&1
	debugfs -R "dump /boot/initrd.img-$kver $W/initrd.img-$kver" "$IMG" >/dev/null 2>&1
	if [ ! -s "$W/vmlinuz-$kver" ] || [ ! -s "$W/initrd.img-$kver" ]; then
		die "cannot read /boot/vmlinuz-$kver and /boot/initrd.img-$kver from $IMG"
	fi
	log "$name: booting $kver (initrd.img-$kver, $(stat -c %s "$W/initrd.img-$kver") bytes)"

	# the payload disk: the guest script and what it must find
	P=$W/payload-$name
	rm -rf "$P"; mkdir -p "$P"
	cp "$TOP/tools/e2e/guest.sh" "$P/guest.sh"
	node=$(sed -n 's/.*KERNEL=="amupmu".*MODE="0*\([0-7]*\)".*OWNER="\([^"]*\)".*GROUP="\([^"]*\)".*/\1 \2 \3/p' \
		"$TOP/debian/amupmu.udev")
	[ -n "$node" ] || die "cannot read MODE, OWNER and GROUP from debian/amupmu.udev"
	if [ "$icount" = 0 ]; then
		skip=hotplug_counting
		why="QEMU's multi-threaded TCG (no -icount) loses counter values beside a sampling counter (Documentation/dev-tools/amupmu-reliability.rst); tools/deb-e2e.sh -i runs it under -icount"
	fi
	{
		shvar MODE "$name"
		shvar KSERIES "$kseries"
		shvar WANT_NODE "$node"
		shvar KSFT_SKIP "$skip"
		shvar KSFT_WHY "$why"
	} >"$P/env"
	rm -f "$W/payload-$name.img"
	mke2fs -q -F -t ext4 -O ^has_journal -L "$PLABEL" -d "$P" "$W/payload-$name.img" 8M

	machine_qemu "$MACH" "$SMP"
	[ "$icount" = 1 ] && extra+=(-icount shift=0)
	console=$W/$name-console.log
	t0=$(date +%s)
	set +e
	timeout "$timeout" "${QEMU_CMD[@]}" "${extra[@]}" \
		-drive "if=none,id=root,file=$IMG,format=raw,cache=unsafe" -device virtio-blk-pci,drive=root \
		-drive "if=none,id=payload,file=$W/payload-$name.img,format=raw,readonly=on" \
		-device virtio-blk-pci,drive=payload \
		-kernel "$W/vmlinuz-$kver" -initrd "$W/initrd.img-$kver" \
		-append "root=LABEL=$LABEL rw console=ttyAMA0 loglevel=5 panic=-1" \
		-serial stdio -monitor none -no-reboot </dev/null >"$console" 2>&1
	qrc=$?
	set -e
	sed -i 's/\r$//' "$console"
	log "$name: qemu exited with status $qrc after $(($(date +%s) - t0)) s (console $console)"
	rm -f "$W/vmlinuz-$kver" "$W/initrd.img-$kver"

	# the transcript: the guest's lines, the kernel's boot and module lines
	grep -E '^E2E(-OUT)?: |amupmu|Linux version|Run /init|EXT4-fs \(vda\)|Reached target|Power down|reboot: ' \
		"$console" | grep -v '^E2E-DMESG: ' | cut -c1-400 || true
	# the guest's results, the kernel's log, the end
	local want
	case $name in
	check) want="kernel module-at-boot modprobe device-node doctor info info-unprivileged stat exporter man help-stat program-libamupmu program-runs kselftest-module-file kselftests units" ;;
	*) want="kernel module-at-boot modprobe device-node doctor info info-unprivileged stat exporter units" ;;
	esac
	awk -v want="$want" -v splats="$BOARD_SPLATS" -v qrc="$qrc" -v timeout="$timeout" '
		BEGIN { nsplat = split(splats, splat, "|"); n = split(want, w, " ") }
		/^E2E: (PASS|FAIL|SKIP) / { r = $3; sub(/:$/, "", r); seen[r] = 1; next }
		/^E2E: DONE/ { done = 1; next }
		/^E2E(-OUT)?: / { next }
		{
			for (i = 1; i <= nsplat; i++)
				if (index($0, splat[i])) {
					if (!(bad[$0]++)) printf "E2E: FAIL kernel-log: %s\n", $0
					break
				}
		}
		END {
			for (i = 1; i <= n; i++)
				if (!(w[i] in seen)) printf "E2E: FAIL %s: no result from the guest\n", w[i]
			if (qrc == 124) printf "E2E: FAIL boot: timeout after %d s\n", timeout
			else if (!done) printf "E2E: FAIL boot: the guest did not finish (qemu status %d)\n", qrc
		}' "$console" | tee -a "$W/host-$name.txt"
	grep -E '^E2E: (PASS|FAIL|SKIP) ' "$console" "$W/host-$name.txt" -h |
		awk '{ print $2, $3 }' | sed 's/:$//' >>"$W/results-$STEP.txt"
	rm -f "$W/host-$name.txt"
}

check_step() {
	boot check 6.1 "$CHECK_TIMEOUT" "$ICOUNT"
}

# ---------------------------------------------------------------- upgrade
upgrade_step() {
	local kver old
	[ -f "$IMG.installed" ] || die "no installed disk $IMG (tools/deb-e2e.sh install)"
	binfmt
	mount_disk
	# apt's downloads kept across runs (the packages, not the lists)
	mkdir -p "$ECACHE/apt-archives/partial"
	chown -R _apt "$ECACHE/apt-archives/partial" 2>/dev/null || true
	mount --bind "$ECACHE/apt-archives" "$MNT/var/cache/apt/archives"
	run apt-update '^(Err|Get|Hit|Fetched)' apt-get update || die "apt-get update failed in the chroot"
	old=$(basename "$(ls -d "$MNT"/lib/modules/6.1.*-arm64)")
	run apt-upgrade-kernel 'Get:.*(linux|pahole|libbpf|apparmor)|^Setting up linux|dkms|DKMS|amupmu|Building|depmod|update-initramfs|Error|error|Fetched|newly installed' \
		apt-get -y -t "$SUITE-backports" install linux-image-arm64 linux-headers-arm64 ||
		die "the kernel upgrade failed"
	kver=$(find "$MNT/lib/modules" -mindepth 1 -maxdepth 1 -name '6.12.*-arm64' -printf '%f\n' | sort -V | tail -1)
	if [ -n "$kver" ]; then
		result PASS kernel-6.12 "$kver installed beside $old"
	else
		result FAIL kernel-6.12 "no /lib/modules/6.12.*"
		kver=none
	fi
	if grep -q "^amupmu/[^,]*, $kver, aarch64: installed" <(in_chroot dkms status amupmu); then
		result PASS dkms-6.12 "DKMS's kernel hook built amupmu for $kver"
	else
		result FAIL dkms-6.12 "no installed amupmu for $kver in dkms status"
	fi
	if grep -q "^amupmu/[^,]*, $old, aarch64: installed" <(in_chroot dkms status amupmu); then
		result PASS dkms-6.1-kept "amupmu for $old still installed"
	else
		result FAIL dkms-6.1-kept "amupmu for $old gone from dkms status"
	fi
	run dkms-status amupmu dkms status amupmu || true
	run module-6.12 "^(filename|vermagic|version):" modinfo -k "$kver" amupmu || true
	# what a boot loader boots: the newest kernel behind /vmlinuz
	if [ "$(readlink "$MNT/vmlinuz")" = "boot/vmlinuz-$kver" ] && [ -s "$MNT/boot/initrd.img-$kver" ]; then
		result PASS default-kernel "/vmlinuz -> boot/vmlinuz-$kver, initrd.img-$kver made"
	else
		result FAIL default-kernel "/vmlinuz -> $(readlink "$MNT/vmlinuz"), initrd: $(ls "$MNT"/boot/initrd.img-* 2>&1)"
	fi
	cleanup
	echo "$kver" >"$IMG.upgraded"
}

# ---------------------------------------------------------------- upgraded
upgraded_step() {
	local names=() p st left allowed f
	[ -f "$IMG.upgraded" ] || die "no upgraded disk $IMG (tools/deb-e2e.sh upgrade)"
	boot upgraded 6.12 "$UPGRADED_TIMEOUT" 0
	# removal, in the chroot (qemu-user: cheaper than the booted guest)
	mapfile -t names <"$W/packages"
	binfmt
	mount_disk
	run apt-purge 'dkms|DKMS|amupmu|Removing|Purging|depmod|warning|Error|error' \
		apt-get purge -y "${names[@]}" || true
	for p in "${names[@]}"; do
		# unknown, or un/pn: not installed and no conffiles left
		# shellcheck disable=SC2016 # a dpkg-query format
		st=$(in_chroot dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
		case $st in
		"" | un* | pn*) ;;
		*) result FAIL "purged-$p" "dpkg status '$st'"; continue ;;
		esac
		if in_chroot dpkg -L "$p" >/dev/null 2>&1; then
			result FAIL "purged-$p" "dpkg -L still lists files"
		else
			result PASS "purged-$p" "dpkg -L: $(in_chroot dpkg -L "$p" 2>&1 | head -1)"
		fi
	done
	left=$(cd "$MNT" && for f in lib/modules/*/updates/dkms/amupmu.ko* var/lib/dkms/amupmu usr/src/amupmu-* \
		lib/udev/rules.d/*amupmu* usr/lib/udev/rules.d/*amupmu* etc/udev/rules.d/*amupmu* \
		usr/lib/modules-load.d/amupmu.conf etc/modules-load.d/amupmu.conf; do
		if [ -e "$f" ] || [ -L "$f" ]; then echo "/$f"; fi
	done)
	if [ -z "$left" ]; then
		result PASS removed "no module, DKMS tree, source, udev rule or modules-load.d entry"
	else
		result FAIL removed "left: $(echo "$left" | tr '\n' ' ')"
	fi
	if grep -l amupmu "$MNT"/lib/modules/*/modules.dep >/dev/null 2>&1; then
		result FAIL modules-dep "amupmu still in $(grep -l amupmu "$MNT"/lib/modules/*/modules.dep | sed "s|$MNT||" | tr '\n' ' ')"
	else
		result PASS modules-dep "no kernel's modules.dep names amupmu"
	fi
	# every file whose name says amupmu, outside /proc, /sys, /dev, /run
	# and /tmp (not on the disk), less what is expected to stay
	allowed=""
	left=$(cd "$MNT" && find . -xdev -name '*amupmu*' | sed 's|^\.||' | sort)
	echo "E2E-OUT: (chroot) \$ find / -xdev -name '*amupmu*'"
	printf '%s\n' "$left" | grep . | sed 's/^/E2E-OUT: /' || true
	for f in $allowed; do left=$(printf '%s\n' "$left" | grep -vx -- "$f" || true); done
	if [ -z "$left" ]; then
		result PASS find "no file named *amupmu* left"
	else
		result FAIL find "left: $(echo "$left" | tr '\n' ' ')"
	fi
	cleanup
}

# cpu_seconds: CPU, the CPU time (user + system) of the commands this
# script has run and waited for (the times builtin, in this shell: a
# subshell's children are its own)
cpu_seconds() {
	times >"$W/.times-$STEP"
	CPU=$(awk 'NR == 2 { n = split($0, t, " "); s = 0
		for (i = 1; i <= n; i++) { split(t[i], ms, "m"); s += ms[1] * 60 + ms[2] }
		printf "%d", s }' "$W/.times-$STEP")
}

# ---------------------------------------------------------------- main
# one function, called on the last line: bash has read all of it before it
# runs (a script edited while it runs would otherwise go on elsewhere)
main() {
	while getopts i o; do
		case $o in
		i) ICOUNT=1 ;;
		*) sed -n '3,64p' "$0"; exit 2 ;;
		esac
	done
	shift $((OPTIND - 1))

	# the recipe's hooks, called by mmdebstrap
	if [ "${1:-}" = _hook ]; then
		case $2 in
		essential) essential_hook "$3" ;;
		customize) customize_hook "$3" ;;
		esac
		exit
	fi

	[ "$(id -u)" = 0 ] || die "run as root (mmdebstrap, loop devices, chroot)"
	steps=("$@")
	[ ${#steps[@]} -gt 0 ] || steps=(all)
	[ "${steps[*]}" = all ] && steps=("${STEPS_ALL[@]}")
	for s in "${steps[@]}"; do
		case $s in prepare | install | check | upgrade | upgraded) ;; *) die "unknown step $s (prepare|install|check|upgrade|upgraded|all)" ;; esac
	done
	mkdir -p "$W"

	failed=0
	for STEP in "${steps[@]}"; do
		# each step: its own transcript, timing line and results (the
		# whole transcript.txt and timings.txt are put together from
		# them after every step: steps may run in two processes at once)
		rm -f "$W/results-$STEP.txt" "$W/$STEP.log" "$W/transcript-$STEP.txt" "$W/timings-$STEP.txt"
		case $STEP in upgrade | upgraded) IMG=$UDISK ;; *) IMG=$DISK ;; esac
		MNT=$W/mnt-$STEP
		load=$(cut -d' ' -f1-3 /proc/loadavg)
		# what a step finds cached: prepare the tree, upgrade apt's downloads
		cache=""
		case $STEP in
		prepare) cache=warm; [ -f "$ECACHE/$SUITE-$(recipe_key)/.complete" ] || cache=cold ;;
		upgrade) cache=cold; ls "$ECACHE"/apt-archives/linux-image-6.12*.deb >/dev/null 2>&1 && cache=warm ;;
		esac
		t0=$(date +%s)
		cpu_seconds
		c0=$CPU
		set +e
		(
			set -e
			trap cleanup EXIT
			echo "== e2e $STEP ($(date -u '+%Y-%m-%d %H:%M:%S UTC'), load $load)"
			case $STEP in
			prepare) prepare ;;
			install) install_step ;;
			check) check_step ;;
			upgrade) upgrade_step ;;
			upgraded) upgraded_step ;;
			esac
		) 2>&1 | tee "$W/transcript-$STEP.txt"
		rc=${PIPESTATUS[0]}
		set -e
		secs=$(($(date +%s) - t0))
		cpu_seconds
		cpu=$((CPU - c0))
		p=$(grep -c '^PASS ' "$W/results-$STEP.txt" 2>/dev/null || true)
		f=$(grep -c '^FAIL ' "$W/results-$STEP.txt" 2>/dev/null || true)
		s=$(grep -c '^SKIP ' "$W/results-$STEP.txt" 2>/dev/null || true)
		if [ "$rc" != 0 ]; then
			# the step stopped (die): that is a failure of its own
			echo "FAIL $STEP-step" >>"$W/results-$STEP.txt"
			f=$((${f:-0} + 1))
		fi
		echo "$STEP $secs s${cache:+ ($cache)}, $cpu s of CPU, load before $load: ${p:-0} passed ${f:-0} failed ${s:-0} skipped" >"$W/timings-$STEP.txt"
		echo "== e2e $STEP: ${p:-0} passed, ${f:-0} failed, ${s:-0} skipped in $secs s ($cpu s of CPU)$([ "$rc" = 0 ] || echo ", stopped: status $rc")" |
			tee -a "$W/transcript-$STEP.txt"
		[ "${f:-0}" = 0 ] || failed=1
		# (each process writes its own file, then renames it into place)
		for s in "${STEPS_ALL[@]}"; do cat "$W/transcript-$s.txt" 2>/dev/null || true; done >"$TRANSCRIPT.$$"
		mv -f "$TRANSCRIPT.$$" "$TRANSCRIPT"
		for s in "${STEPS_ALL[@]}"; do cat "$W/timings-$s.txt" 2>/dev/null || true; done >"$W/timings.txt.$$"
		mv -f "$W/timings.txt.$$" "$W/timings.txt"
		# a step that stopped leaves nothing for the next ones
		[ "$rc" = 0 ] || break
	done
	P=$(cat "$W"/results-*.txt 2>/dev/null | grep -c '^PASS ' || true)
	F=$(cat "$W"/results-*.txt 2>/dev/null | grep -c '^FAIL ' || true)
	S=$(cat "$W"/results-*.txt 2>/dev/null | grep -c '^SKIP ' || true)
	echo "e2e: timings (build/e2e/timings.txt):"
	sed 's/^/e2e:   /' "$W/timings.txt"
	echo "e2e: ${P:-0} passed, ${F:-0} failed, ${S:-0} skipped (all steps run so far)"
	[ "$failed" = 0 ] && [ "${F:-0}" = 0 ]
}

main "$@"; exit
