# SPDX-License-Identifier: GPL-2.0
#
# CMake toolchain file for Debian's aarch64-linux-gnu cross toolchain
# (gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu).
#
# Target libraries are looked up in the cross sysroot /usr/aarch64-linux-gnu
# and in the multiarch directory /usr/lib/aarch64-linux-gnu (foreign-arch
# -dev packages such as libnl-3-dev:arm64 install there), never in the host's
# /usr/lib. Executables are linked statically by default (AMUPMU_STATIC) so
# they run in the board's busybox initramfs and under qemu-aarch64-static,
# which is also registered as the emulator for CTest.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(AMUPMU_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${AMUPMU_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${AMUPMU_TRIPLE}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${AMUPMU_TRIPLE})

set(CMAKE_FIND_ROOT_PATH /usr/${AMUPMU_TRIPLE} /usr/lib/${AMUPMU_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config (pkg_check_modules) must see the arm64 .pc files only.
set(ENV{PKG_CONFIG_LIBDIR}
	"/usr/lib/${AMUPMU_TRIPLE}/pkgconfig:/usr/${AMUPMU_TRIPLE}/lib/pkgconfig:/usr/share/pkgconfig")
unset(ENV{PKG_CONFIG_PATH})

find_program(AMUPMU_QEMU_USER NAMES qemu-aarch64-static qemu-aarch64)
if(AMUPMU_QEMU_USER)
	set(CMAKE_CROSSCOMPILING_EMULATOR ${AMUPMU_QEMU_USER} -L /usr/${AMUPMU_TRIPLE})
endif()
