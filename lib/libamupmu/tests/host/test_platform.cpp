// SPDX-License-Identifier: GPL-2.0
//
// The GIC version from /proc/interrupts texts [host]: what Linux 6.1 and
// 6.12 print on QEMU virt with gic-version=3 and with GICv2.
#include <amupmu/platform.hpp>

#include <catch2/catch.hpp>

#include <fstream>

#include <unistd.h>

using namespace amupmu;

namespace {

// QEMU -M virt,gic-version=3 -smp 2 (irq-gic-v3: chip "GICv3", and the ITS)
constexpr std::string_view gicv3 =
	"           CPU0       CPU1       \n"
	" 10:       5123       4987     GICv3  27 Level     arch_timer\n"
	" 12:          0          0     GICv3  23 Level     arm-pmu\n"
	" 13:         77          0     GICv3  33 Level     uart-pl011\n"
	" 14:          0          0  ITS-MSI 16384 Edge      virtio0-config\n"
	"IPI0:        20         31       Rescheduling interrupts\n"
	"IPI1:       100         88       Function call interrupts\n"
	"Err:          0\n";

// QEMU -M virt (GICv2): irq-gic names its primary chip "GIC-0"
constexpr std::string_view gicv2 =
	"           CPU0       CPU1       \n"
	" 11:       4242       4100      GIC-0  27 Level     arch_timer\n"
	" 13:         10          0      GIC-0  33 Level     uart-pl011\n"
	" 44:          0          0  GICv2m-PCI-MSI 16384 Edge      virtio0-config\n"
	"IPI0:        12         13       Rescheduling interrupts\n"
	"Err:          0\n";

} // namespace

TEST_CASE("GIC version from /proc/interrupts", "[host][platform]")
{
	CHECK(gic_version_from_interrupts(gicv3) == GicVersion::v3);
	CHECK(gic_version_from_interrupts(gicv2) == GicVersion::v2);
	// older kernels named the EOImode1 chip "GICv2", or the first "GIC"
	CHECK(gic_version_from_interrupts(" 3:  1  GICv2  27 Level  arch_timer\n") == GicVersion::v2);
	CHECK(gic_version_from_interrupts(" 3:  1  GIC  27 Level  arch_timer\n") == GicVersion::v2);
	CHECK(gic_version_from_interrupts("  3:  1  2  3  4  GICv4  27 Level  x") == GicVersion::v3);
	// an x86 host, nothing, a device merely named like a GIC
	CHECK(gic_version_from_interrupts("  0:  10  IO-APIC  2-edge  timer\n") == GicVersion::unknown);
	CHECK(gic_version_from_interrupts("") == GicVersion::unknown);
	CHECK(gic_version_from_interrupts(" 5:  1  intc  27 Level  GICv3\n") == GicVersion::unknown);
	CHECK(gic_version_from_interrupts("IPI0:  1  GICv3 Rescheduling\n") == GicVersion::unknown);
	CHECK(to_string(GicVersion::v3) == "GICv3");
	CHECK(to_string(GicVersion::v2) == "GICv2");
	CHECK(to_string(GicVersion::unknown) == "unknown");
}

TEST_CASE("read_gic_version of a file, unknown when unreadable", "[host][platform]")
{
	CHECK(read_gic_version("/nonexistent/interrupts") == GicVersion::unknown);
	char path[] = "/tmp/amupmu-interrupts-XXXXXX";
	const int fd = ::mkstemp(path);
	REQUIRE(fd >= 0);
	::close(fd);
	{
		std::ofstream out{path};
		out << gicv3;
	}
	CHECK(read_gic_version(path) == GicVersion::v3);
	::unlink(path);
	// whatever this host is, it answers
	CHECK_NOTHROW(read_gic_version());
}
