// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/bits.hpp>
#include <amupmu/cpu.hpp>

#include <algorithm>

namespace amupmu {

namespace {

struct Implementer {
	std::uint8_t code;
	std::string_view name;
	bool vendor;	// name can prefix a part ("Arm Cortex-X2")
};

// MIDR_EL1.Implementer codes (Arm ARM, "MIDR_EL1").
constexpr Implementer implementers[] = {
	{0x00, "reserved for software use (e.g. QEMU -cpu max)", false},
	{0x41, "Arm", true},
	{0x42, "Broadcom", true},
	{0x43, "Cavium", true},
	{0x44, "DEC", true},
	{0x46, "Fujitsu", true},
	{0x48, "HiSilicon", true},
	{0x49, "Infineon", true},
	{0x4D, "Motorola/Freescale", true},
	{0x4E, "NVIDIA", true},
	{0x50, "APM", true},
	{0x51, "Qualcomm", true},
	{0x53, "Samsung", true},
	{0x56, "Marvell", true},
	{0x61, "Apple", true},
	{0x69, "Intel", true},
	{0x6D, "Microsoft", true},
	{0xC0, "Ampere", true},
};

struct Part {
	std::uint8_t implementer;
	std::uint16_t part;
	std::string_view name;
};

constexpr Part parts[] = {
	{0x41, 0xD03, "Cortex-A53"},
	{0x41, 0xD04, "Cortex-A35"},
	{0x41, 0xD05, "Cortex-A55"},
	{0x41, 0xD07, "Cortex-A57"},
	{0x41, 0xD08, "Cortex-A72"},
	{0x41, 0xD09, "Cortex-A73"},
	{0x41, 0xD0A, "Cortex-A75"},
	{0x41, 0xD0B, "Cortex-A76"},
	{0x41, 0xD0C, "Neoverse-N1"},
	{0x41, 0xD0D, "Cortex-A77"},
	{0x41, 0xD0E, "Cortex-A76AE"},
	{0x41, 0xD40, "Neoverse-V1"},
	{0x41, 0xD41, "Cortex-A78"},
	{0x41, 0xD42, "Cortex-A78AE"},
	{0x41, 0xD44, "Cortex-X1"},
	{0x41, 0xD46, "Cortex-A510"},
	{0x41, 0xD47, "Cortex-A710"},
	{0x41, 0xD48, "Cortex-X2"},
	{0x41, 0xD49, "Neoverse-N2"},
	{0x41, 0xD4B, "Cortex-A78C"},
	{0x41, 0xD4C, "Cortex-X1C"},
	{0x41, 0xD4D, "Cortex-A715"},
	{0x41, 0xD4E, "Cortex-X3"},
	{0x41, 0xD4F, "Neoverse-V2"},
	{0x41, 0xD80, "Cortex-A520"},
	{0x41, 0xD81, "Cortex-A720"},
	{0x41, 0xD82, "Cortex-X4"},
	{0x41, 0xD84, "Neoverse-V3"},
	{0x41, 0xD85, "Cortex-X925"},
	{0x41, 0xD87, "Cortex-A725"},
	{0x41, 0xD89, "Cortex-A720AE"},
	{0x41, 0xD8E, "Neoverse-N3"},
	{0x42, 0x516, "Vulcan"},
	{0x43, 0x0A1, "ThunderX"},
	{0x43, 0x0A2, "ThunderX 81xx"},
	{0x43, 0x0A3, "ThunderX 83xx"},
	{0x43, 0x0AF, "ThunderX2"},
	{0x46, 0x001, "A64FX"},
	{0x48, 0xD01, "TSV110"},
	{0x4E, 0x003, "Denver"},
	{0x4E, 0x004, "Carmel"},
	{0x50, 0x000, "X-Gene"},
	{0xC0, 0xAC3, "Ampere-1"},
	{0xC0, 0xAC4, "Ampere-1A"},
};

const Implementer* find_implementer(std::uint8_t code) noexcept
{
	const auto* const it = std::ranges::find(implementers, code, &Implementer::code);
	return it == std::end(implementers) ? nullptr : it;
}

} // namespace

std::string_view implementer_name(std::uint8_t implementer) noexcept
{
	const Implementer* imp = find_implementer(implementer);
	return imp ? imp->name : std::string_view{};
}

std::string_view part_name(std::uint8_t implementer, std::uint16_t part) noexcept
{
	const auto* const it = std::ranges::find_if(parts, [&](const Part& p) {
		return p.implementer == implementer && p.part == part;
	});
	return it == std::end(parts) ? std::string_view{} : it->name;
}

std::string revision_string(const Midr& midr)
{
	return "r" + std::to_string(midr.variant) + "p" + std::to_string(midr.revision);
}

std::string describe_midr(std::uint64_t midr)
{
	const Midr id = decode_midr(midr);
	const Implementer* imp = find_implementer(id.implementer);
	std::string s;
	if (imp && imp->vendor) {
		s = std::string{imp->name} + " ";
		const std::string_view part = part_name(id.implementer, id.part);
		s += part.empty() ? "part " + hex(id.part, 3) : std::string{part};
	} else {
		s = "implementer " + hex(id.implementer, 2) + " part " + hex(id.part, 3);
	}
	return s + " " + revision_string(id);
}

std::string_view pmu_version_name(unsigned pmuver) noexcept
{
	switch (pmuver) {
	case 0x0: return "none";
	case 0x1: return "PMUv3";
	case 0x4: return "PMUv3p1";
	case 0x5: return "PMUv3p4";
	case 0x6: return "PMUv3p5";
	case 0x7: return "PMUv3p7";
	case 0x8: return "PMUv3p8";
	case 0x9: return "PMUv3p9";
	case 0xF: return "IMPLEMENTATION DEFINED";
	default: return "reserved";
	}
}

std::string_view spe_version_name(unsigned pmsver) noexcept
{
	switch (pmsver) {
	case 0x0: return "none";
	case 0x1: return "SPE";
	case 0x2: return "SPEv1p1";
	case 0x3: return "SPEv1p2";
	case 0x4: return "SPEv1p3";
	case 0x5: return "SPEv1p4";
	default: return "reserved";
	}
}

std::string_view amu_version_name(unsigned amu) noexcept
{
	switch (amu) {
	case 0x0: return "none";
	case 0x1: return "AMUv1";
	case 0x2: return "AMUv1p1";
	default: return "reserved";
	}
}

} // namespace amupmu
