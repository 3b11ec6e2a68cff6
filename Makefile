# SPDX-License-Identifier: GPL-2.0
#
# amupmu: top-level targets. The README's two commands are `make demo` and
# `make check`; both install what is missing (as root) first.

TOP := $(CURDIR)
BUILD := $(TOP)/build
KERNELS := 6.1 6.12
CMAKE_HOST := $(BUILD)/host
CMAKE_ASAN := $(BUILD)/host-asan
CMAKE_AARCH64 := $(BUILD)/aarch64
SELFTESTS_OUT := $(BUILD)/selftests/aarch64
JOBS ?= $(shell nproc)

# board defaults: make board K=6.12 MACHINE=vhe DT=stock V=prod PAYLOAD=check
K ?= 6.1
MACHINE ?= el1
SMP ?= 2
DT ?= amupmu
V ?= prod
PAYLOAD ?= check

.PHONY: all deps module host-build host-test cross-build cross-test selftests \
	dtcheck board check bench demo clean help host-asan host-asan-test static \
	syzcheck soak reliability-doc bench-host install deb e2e

all: module host-build cross-build selftests

help:
	@echo "make demo     boot the emulated board, load amupmu, print what it sees (MACHINE=vhe)"
	@echo "make check    every test: host, both kernels' modules, dt, the boards"
	@echo "make deps     install Debian packages, fetch the 6.1 and 6.12 kernels (root)"
	@echo "make module   amupmu.ko for $(KERNELS) (prod and mock test builds)"
	@echo "make bench    amupmu vs perf figures (build/bench/results.json)"
	@echo "make bench-host  host-only figures (SPE decoder vs memcpy) into the same file"
	@echo "make soak     the ioctl fuzzer with 10,000,000 calls on both kernels"
	@echo "make static   clang-tidy and cppcheck; make host-asan-test: ASan+UBSan"
	@echo "make deb      the Debian packages for arm64 (build/deb/1/), lintian-checked"
	@echo "make e2e      the packages installed into Debian arm64, booted, kernel upgraded, purged (after make deb)"
	@echo "make install  library, headers, amupmu.pc, CMake package, tool, UAPI header [PREFIX= DESTDIR= KDIR= for the module]"
	@echo "make board K=6.1|6.12 MACHINE=el1|vhe DT=stock|amupmu V=prod|mock PAYLOAD=check [SMP=2] [ICOUNT=1]"

deps:
	./tools/deps.sh

deb:
	./tools/deb-build.sh

# the packages of build/deb/1/ (make deb) installed into a bookworm arm64
# system that boots on the emulated board, its kernel upgraded to 6.12,
# then purged (tools/deb-e2e.sh; transcript and timings in build/e2e/)
e2e:
	./tools/deb-e2e.sh all

module:
	@for k in $(KERNELS); do for v in prod mock; do \
		./tools/build-module.sh $$k $$v || exit 1; done; done

host-build:
	cmake -S . -B $(CMAKE_HOST) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAMUPMU_WERROR=ON >/dev/null
	cmake --build $(CMAKE_HOST) -j$(JOBS)

host-test: host-build
	./tools/catch2-tap.sh --once -- $(CMAKE_HOST)/lib/libamupmu/tests/amupmu_host_tests

# the host tests again under ASan + UBSan (every report fatal): the
# library's and the tool's own (child.cpp); the rest of the tree is
# compiled once by host-build, so only what runs here is built again
ASAN_TESTS := lib/libamupmu/tests/amupmu_host_tests tools/amupmu/amupmu_cli_unit_tests
ASAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
host-asan:
	./tools/asan-configure.sh $(CMAKE_ASAN)
	cmake --build $(CMAKE_ASAN) -j$(JOBS) --target $(notdir $(ASAN_TESTS))

host-asan-test: host-asan
	@for t in $(ASAN_TESTS); do \
		$(ASAN_ENV) ./tools/catch2-tap.sh --once -- $(CMAKE_ASAN)/$$t || exit 1; done

# clang-tidy and cppcheck of lib/, tools/ and examples/ (.clang-tidy, tools/static/)
static:
	./tools/static-check.sh

# selftests/syzkaller/dev_amupmu.txt against include/uapi/linux/amupmu.h
syzcheck:
	./selftests/syzkaller/check.py

# the fuzzer with 10,000,000 calls on both kernels (amupmu devicetree)
soak: module selftests
	@for k in $(KERNELS); do \
		./tools/board/run.sh -t 3600 -k $$k -d amupmu -v prod soak || exit 1; done

# Documentation/dev-tools/amupmu-reliability.rst from the last boards' figures
reliability-doc:
	./tools/reliability-table.py --update

# -O2 as the host build, without DWARF: these binaries run on the boards
# and under qemu-user, where nothing reads it (the symbol tables stay),
# and it is a third of their compile time
cross-build:
	cmake -S . -B $(CMAKE_AARCH64) -DCMAKE_BUILD_TYPE=Release -DAMUPMU_WERROR=ON \
		-DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
		-DCMAKE_TOOLCHAIN_FILE=$(TOP)/cmake/aarch64-linux-gnu.cmake >/dev/null
	cmake --build $(CMAKE_AARCH64) -j$(JOBS)

cross-test: cross-build
	./tools/catch2-tap.sh --once qemu-aarch64-static -- $(CMAKE_AARCH64)/lib/libamupmu/tests/amupmu_host_tests

selftests:
	$(MAKE) -C selftests/amupmu CC=aarch64-linux-gnu-gcc OUTPUT=$(BUILD)/selftests/obj \
		INSTALL_PATH=$(SELFTESTS_OUT) install

dtcheck:
	./dts/check.sh

board: module cross-build selftests
	./tools/board/run.sh -k $(K) -m $(MACHINE) -s $(SMP) -d $(DT) -v $(V) $(if $(ICOUNT),-i) $(PAYLOAD)

check:
	./tools/check.sh

# figures, not tests: amupmu vs perf in the same kernel, build/bench/results.json
bench: deps module cross-build
	./tools/bench/run.sh
	$(MAKE) bench-host

# host-only figures, merged into build/bench/results.json as "spe_decode"
# (the SPE record decoder against memcpy() of the same buffer, and the
# whole SPE report's records/s)
bench-host:
	cmake -S . -B $(CMAKE_HOST) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAMUPMU_WERROR=ON >/dev/null
	cmake --build $(CMAKE_HOST) -j$(JOBS) --target spe_decode_bench
	mkdir -p $(BUILD)/bench
	$(CMAKE_HOST)/lib/libamupmu/tests/spe_decode_bench --json $(BUILD)/bench/spe_decode.json
	python3 -c 'import json, os, sys; r, f = sys.argv[1:]; d = json.load(open(r)) if os.path.exists(r) else {}; \
		d["spe_decode"] = json.load(open(f)); json.dump(d, open(r, "w"), indent=2); print(r)' \
		$(BUILD)/bench/results.json $(BUILD)/bench/spe_decode.json

demo:
	./tools/demo.sh

# make install [PREFIX=/usr/local] [DESTDIR=] [KDIR=kernel build dir]:
# the library (shared and static), its headers under include/amupmu/,
# amupmu.pc, the CMake package, the amupmu command and the UAPI header
# (include/linux/amupmu.h) from the host build; with KDIR, also amupmu.ko
# through Kbuild's modules_install (built from a copy of the sources under
# build/, so the tree stays clean; cross: add ARCH=arm64
# CROSS_COMPILE=aarch64-linux-gnu-)
PREFIX ?= /usr/local
install: host-build
	DESTDIR=$(DESTDIR) cmake --install $(CMAKE_HOST) --prefix $(PREFIX)
ifneq ($(KDIR),)
	rm -rf $(BUILD)/module-install && mkdir -p $(BUILD)/module-install/kernel $(BUILD)/module-install/include
	cp -r kernel/amu_pmu_drv $(BUILD)/module-install/kernel/
	cp -r include/uapi $(BUILD)/module-install/include/
	$(MAKE) -C $(KDIR) M=$(BUILD)/module-install/kernel/amu_pmu_drv modules
	$(MAKE) -C $(KDIR) M=$(BUILD)/module-install/kernel/amu_pmu_drv \
		INSTALL_MOD_PATH=$(DESTDIR) modules_install
endif

clean:
	rm -rf $(BUILD)/host $(BUILD)/host-asan $(BUILD)/aarch64 $(BUILD)/selftests $(BUILD)/module \
		$(BUILD)/board $(BUILD)/check
