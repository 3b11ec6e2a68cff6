// SPDX-License-Identifier: LGPL-2.1-or-later
//
// What an SPE record's Data Source packet (spe::Record::data_source())
// names: the encoding of the CPU that recorded it, by its MIDR_EL1, and
// the name of each code in that encoding.
#ifndef AMUPMU_SPE_DATA_SOURCE_HPP
#define AMUPMU_SPE_DATA_SOURCE_HPP

#include <cstdint>
#include <string>
#include <string_view>

namespace amupmu {

/// Encodings of the Data Source packet, which the Arm ARM leaves
/// IMPLEMENTATION DEFINED. The table is Linux perf's
/// (tools/perf/util/arm-spe.c: the MIDRs of common_ds_encoding_cpus and
/// ampereone_ds_encoding_cpus; the codes of tools/perf/util/arm-spe-decoder/
/// arm-spe-decoder.h, enum arm_spe_common_data_source and
/// arm_spe_ampereone_data_source), kept here as data.
enum class SpeDataSourceEncoding : std::uint8_t {
	unknown,	///< the MIDR is not in the table: raw codes only
	common,		///< Arm's Neoverse/Cortex encoding
	ampereone,	///< AmpereOne's
};

/// "unknown", "arm-common", "ampereone".
[[nodiscard]] std::string_view to_string(SpeDataSourceEncoding e) noexcept;
/// The encoding of a CPU by its MIDR_EL1 (implementer and part; every
/// variant and revision).
[[nodiscard]] SpeDataSourceEncoding spe_data_source_encoding(std::uint64_t midr) noexcept;
/// The name of a code in an encoding ("L1D", "L2", "PEER-CORE",
/// "LOCAL-CLUSTER", "SYS-CACHE", "PEER-CLUSTER", "REMOTE", "DRAM"; AmpereOne:
/// "LOCAL-CHIP-CACHE-OR-DEVICE", "SLC", "REMOTE-CHIP-CACHE", "DRAM", "L1D",
/// "L2"); empty for a code the encoding does not name.
[[nodiscard]] std::string_view spe_data_source_name(SpeDataSourceEncoding e, std::uint64_t code) noexcept;

/// A data source as recorded, with the encoding of the CPU that recorded it.
struct SpeDataSource {
	SpeDataSourceEncoding encoding = SpeDataSourceEncoding::unknown;
	std::uint64_t code = 0;

	/// "L1D (0x0)", or "0x3" when the encoding does not name it.
	[[nodiscard]] std::string label() const;
	friend bool operator==(const SpeDataSource&, const SpeDataSource&) = default;
	/// by encoding, then code
	friend bool operator<(const SpeDataSource& a, const SpeDataSource& b) noexcept
	{
		return a.encoding != b.encoding ? a.encoding < b.encoding : a.code < b.code;
	}
};

} // namespace amupmu

#endif
