// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/bits.hpp>
#include <amupmu/cpu.hpp>
#include <amupmu/spe_data_source.hpp>

namespace amupmu {

namespace {

// Linux perf, tools/perf/util/arm-spe.c: common_ds_encoding_cpus and
// ampereone_ds_encoding_cpus (every variant and revision of each part).
// Part numbers: arch/arm64/include/asm/cputype.h.
struct DsCpu {
	std::uint8_t implementer;
	std::uint16_t part;
	SpeDataSourceEncoding encoding;
};
constexpr DsCpu ds_cpus[] = {
	{0x41, 0xD0C, SpeDataSourceEncoding::common},	// Neoverse N1
	{0x41, 0xD40, SpeDataSourceEncoding::common},	// Neoverse V1
	{0x41, 0xD49, SpeDataSourceEncoding::common},	// Neoverse N2
	{0x41, 0xD4C, SpeDataSourceEncoding::common},	// Cortex-X1C
	{0x41, 0xD4E, SpeDataSourceEncoding::common},	// Cortex-X3
	{0x41, 0xD4F, SpeDataSourceEncoding::common},	// Neoverse V2
	{0x41, 0xD81, SpeDataSourceEncoding::common},	// Cortex-A720
	{0x41, 0xD85, SpeDataSourceEncoding::common},	// Cortex-X925
	{0x41, 0xD87, SpeDataSourceEncoding::common},	// Cortex-A725
	{0x41, 0xD89, SpeDataSourceEncoding::common},	// Cortex-A720AE
	{0xC0, 0xAC4, SpeDataSourceEncoding::ampereone},	// AmpereOne AC04 (Ampere-1A)
};

// tools/perf/util/arm-spe-decoder/arm-spe-decoder.h: enum
// arm_spe_common_data_source and enum arm_spe_ampereone_data_source.
struct DsName {
	SpeDataSourceEncoding encoding;
	std::uint64_t code;
	std::string_view name;
};
constexpr DsName ds_names[] = {
	{SpeDataSourceEncoding::common, 0x0, "L1D"},
	{SpeDataSourceEncoding::common, 0x8, "L2"},
	{SpeDataSourceEncoding::common, 0x9, "PEER-CORE"},
	{SpeDataSourceEncoding::common, 0xa, "LOCAL-CLUSTER"},
	{SpeDataSourceEncoding::common, 0xb, "SYS-CACHE"},
	{SpeDataSourceEncoding::common, 0xc, "PEER-CLUSTER"},
	{SpeDataSourceEncoding::common, 0xd, "REMOTE"},
	{SpeDataSourceEncoding::common, 0xe, "DRAM"},
	{SpeDataSourceEncoding::ampereone, 0x0, "LOCAL-CHIP-CACHE-OR-DEVICE"},
	{SpeDataSourceEncoding::ampereone, 0x3, "SLC"},
	{SpeDataSourceEncoding::ampereone, 0x5, "REMOTE-CHIP-CACHE"},
	{SpeDataSourceEncoding::ampereone, 0x7, "DRAM"},
	{SpeDataSourceEncoding::ampereone, 0x8, "L1D"},
	{SpeDataSourceEncoding::ampereone, 0x9, "L2"},
};

} // namespace

std::string_view to_string(SpeDataSourceEncoding e) noexcept
{
	switch (e) {
	case SpeDataSourceEncoding::common: return "arm-common";
	case SpeDataSourceEncoding::ampereone: return "ampereone";
	case SpeDataSourceEncoding::unknown: break;
	}
	return "unknown";
}

SpeDataSourceEncoding spe_data_source_encoding(std::uint64_t midr) noexcept
{
	const Midr m = decode_midr(midr);
	for (const DsCpu& c : ds_cpus)
		if (c.implementer == m.implementer && c.part == m.part)
			return c.encoding;
	return SpeDataSourceEncoding::unknown;
}

std::string_view spe_data_source_name(SpeDataSourceEncoding e, std::uint64_t code) noexcept
{
	for (const DsName& n : ds_names)
		if (n.encoding == e && n.code == code)
			return n.name;
	return {};
}

std::string SpeDataSource::label() const
{
	const std::string_view name = spe_data_source_name(encoding, code);
	return name.empty() ? hex(code, 1) : std::string{name} + " (" + hex(code, 1) + ")";
}

} // namespace amupmu
