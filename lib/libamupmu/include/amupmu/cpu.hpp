// SPDX-License-Identifier: LGPL-2.1-or-later
//
// CPU identity: what a CPU is (MIDR_EL1, its implementer's and part's
// names), which monitoring features it has (ID_AA64DFR0_EL1,
// ID_AA64PFR0_EL1), and who designed its memory-mapped AMU and PMU frames
// (IIDR, DEVARCH, DEVTYPE, PIDR, CIDR; JEDEC JEP106), cross-checked against
// MIDR_EL1. Field positions are the Arm ARM's (DDI 0487). Pure functions:
// no device needed. Functions not marked noexcept throw only std::bad_alloc.
#ifndef AMUPMU_CPU_HPP
#define AMUPMU_CPU_HPP

#include <amupmu/bits.hpp>
#include <amupmu/info.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu {

// ---------------------------------------------------------------- MIDR_EL1

/// MIDR_EL1 fields.
struct Midr {
	std::uint8_t implementer = 0;	///< [31:24]
	std::uint8_t variant = 0;	///< [23:20], the "r" of rXpY
	std::uint8_t architecture = 0;	///< [19:16], 0xF: ID registers scheme
	std::uint16_t part = 0;		///< [15:4]
	std::uint8_t revision = 0;	///< [3:0], the "p" of rXpY

	friend constexpr bool operator==(const Midr&, const Midr&) = default;
};

/// Splits MIDR_EL1 into its fields.
[[nodiscard]] constexpr Midr decode_midr(std::uint64_t midr) noexcept
{
	return Midr{
		.implementer = static_cast<std::uint8_t>(field<31, 24>(midr)),
		.variant = static_cast<std::uint8_t>(field<23, 20>(midr)),
		.architecture = static_cast<std::uint8_t>(field<19, 16>(midr)),
		.part = static_cast<std::uint16_t>(field<15, 4>(midr)),
		.revision = static_cast<std::uint8_t>(field<3, 0>(midr)),
	};
}

/// The implementer's name ("Arm", "NVIDIA"; 0x00: "reserved for software
/// use (e.g. QEMU -cpu max)"); empty when unknown.
[[nodiscard]] std::string_view implementer_name(std::uint8_t implementer) noexcept;

/// The core's name ("Cortex-X2"); empty when unknown.
[[nodiscard]] std::string_view part_name(std::uint8_t implementer, std::uint16_t part) noexcept;

/// "r<variant>p<revision>", e.g. "r2p1".
[[nodiscard]] std::string revision_string(const Midr& midr);

/// One line: "Arm Cortex-X2 r2p1", "Arm part 0xd99 r0p0" (unknown part),
/// "implementer 0x00 part 0x051 r0p0" (unknown implementer).
[[nodiscard]] std::string describe_midr(std::uint64_t midr);

// ---------------------------------------------------------------- features

/// ID_AA64DFR0_EL1.PMUVer [11:8].
[[nodiscard]] constexpr unsigned dfr0_pmuver(std::uint64_t dfr0) noexcept
{
	return static_cast<unsigned>(field<11, 8>(dfr0));
}
/// ID_AA64DFR0_EL1.PMSVer [35:32].
[[nodiscard]] constexpr unsigned dfr0_pmsver(std::uint64_t dfr0) noexcept
{
	return static_cast<unsigned>(field<35, 32>(dfr0));
}
/// ID_AA64DFR0_EL1.TraceBuffer [47:44].
[[nodiscard]] constexpr unsigned dfr0_tracebuffer(std::uint64_t dfr0) noexcept
{
	return static_cast<unsigned>(field<47, 44>(dfr0));
}
/// ID_AA64DFR0_EL1.BRBE [55:52].
[[nodiscard]] constexpr unsigned dfr0_brbe(std::uint64_t dfr0) noexcept
{
	return static_cast<unsigned>(field<55, 52>(dfr0));
}
/// ID_AA64PFR0_EL1.EL2 [11:8]; 0 when the CPU does not implement EL2.
[[nodiscard]] constexpr unsigned pfr0_el2(std::uint64_t pfr0) noexcept
{
	return static_cast<unsigned>(field<11, 8>(pfr0));
}
/// ID_AA64PFR0_EL1.AMU [47:44].
[[nodiscard]] constexpr unsigned pfr0_amu(std::uint64_t pfr0) noexcept
{
	return static_cast<unsigned>(field<47, 44>(pfr0));
}

/// PMUVer values.
inline constexpr unsigned pmuver_none = 0x0;
inline constexpr unsigned pmuver_v3 = 0x1;
inline constexpr unsigned pmuver_v3p1 = 0x4;
inline constexpr unsigned pmuver_v3p4 = 0x5;
inline constexpr unsigned pmuver_imp_def = 0xF;

/// Whether PMUVer says PMUv3 (neither none nor an IMPLEMENTATION DEFINED PMU).
[[nodiscard]] constexpr bool pmuver_is_pmuv3(unsigned pmuver) noexcept
{
	return pmuver != pmuver_none && pmuver != pmuver_imp_def;
}

/// PMUVer's name: "none", "PMUv3", "PMUv3p1" ... "PMUv3p9",
/// "IMPLEMENTATION DEFINED", else "reserved".
[[nodiscard]] std::string_view pmu_version_name(unsigned pmuver) noexcept;
/// PMSVer's name: "none", "SPE", "SPEv1p1" ... "SPEv1p4", else "reserved".
[[nodiscard]] std::string_view spe_version_name(unsigned pmsver) noexcept;
/// ID_AA64PFR0_EL1.AMU's name: "none", "AMUv1", "AMUv1p1", else "reserved".
[[nodiscard]] std::string_view amu_version_name(unsigned amu) noexcept;

// ---------------------------------------------------------------- JEP106

/// A JEDEC JEP106 manufacturer code: the bank (continuation codes + 1) and
/// the 7-bit identity in it. Arm Limited: bank 5, identity 0x3B.
struct Jep106 {
	unsigned continuation = 0;	///< bank - 1
	unsigned identity = 0;		///< [6:0]

	/// The 12-bit form of IIDR.Implementer: continuation [11:8], identity [6:0].
	[[nodiscard]] constexpr std::uint16_t code() const noexcept
	{
		return static_cast<std::uint16_t>(((continuation & 0xF) << 8) | (identity & 0x7F));
	}
	/// The 1-based bank.
	[[nodiscard]] constexpr unsigned bank() const noexcept { return continuation + 1; }
	/// Whether the identity is a code (0: the register is not implemented).
	[[nodiscard]] constexpr bool valid() const noexcept { return identity != 0 && identity != 0x7F; }

	friend constexpr bool operator==(const Jep106&, const Jep106&) = default;
};

/// Arm Limited, 0x43B.
inline constexpr Jep106 jep106_arm{.continuation = 4, .identity = 0x3B};

/// The code in IIDR.Implementer [11:0]: continuation [11:8], bit 7 RES0, identity [6:0].
[[nodiscard]] constexpr Jep106 jep106_from_iidr(std::uint32_t implementer) noexcept
{
	return {static_cast<unsigned>(field<11, 8>(implementer)), static_cast<unsigned>(field<6, 0>(implementer))};
}

/// The code in DEVARCH.ARCHITECT [31:21], given shifted down: continuation
/// [10:7], identity [6:0].
[[nodiscard]] constexpr Jep106 jep106_from_architect(std::uint32_t architect) noexcept
{
	return {static_cast<unsigned>(field<10, 7>(architect)), static_cast<unsigned>(field<6, 0>(architect))};
}

/// The manufacturer's name; empty when not in the library's table (Arm and
/// the common Arm-architecture implementers only).
[[nodiscard]] std::string_view jep106_name(Jep106 id) noexcept;

/// One phrase: "Arm Limited (JEP106 0x43b: bank 5, 0x3b)", "JEP106 0x123:
/// bank 2, 0x23 (not in the library's table)", "none (0)".
[[nodiscard]] std::string describe_jep106(Jep106 id);

/// The JEP106 code of a MIDR_EL1.Implementer (0x41 'A' Arm: 0x43B);
/// nullopt when the library does not know it (0x00 has none).
[[nodiscard]] std::optional<Jep106> midr_implementer_jep106(std::uint8_t implementer) noexcept;

// ---------------------------------------------------------------- AMU and PMU frames

/// AMIIDR / PMIIDR (offset 0xE08).
struct Iidr {
	unsigned product_id = 0;	///< [31:20]
	unsigned variant = 0;		///< [19:16]
	unsigned revision = 0;		///< [15:12]
	unsigned implementer = 0;	///< [11:0] JEP106 (jep106_from_iidr)

	friend constexpr bool operator==(const Iidr&, const Iidr&) = default;
};

/// Splits AMIIDR / PMIIDR into its fields.
[[nodiscard]] constexpr Iidr decode_iidr(std::uint32_t iidr) noexcept
{
	return Iidr{
		.product_id = static_cast<unsigned>(field<31, 20>(iidr)),
		.variant = static_cast<unsigned>(field<19, 16>(iidr)),
		.revision = static_cast<unsigned>(field<15, 12>(iidr)),
		.implementer = static_cast<unsigned>(field<11, 0>(iidr)),
	};
}

/// AMDEVARCH / PMDEVARCH (0xFBC).
struct Devarch {
	unsigned architect = 0;		///< [31:21] JEP106 (jep106_from_architect)
	bool present = false;		///< [20]
	unsigned revision = 0;		///< [19:16]
	unsigned archid = 0;		///< [15:0]
	unsigned archver = 0;		///< [15:12] (ARCHID of Arm architectures)
	unsigned archpart = 0;		///< [11:0]

	friend constexpr bool operator==(const Devarch&, const Devarch&) = default;
};

/// Splits AMDEVARCH / PMDEVARCH into its fields.
[[nodiscard]] constexpr Devarch decode_devarch(std::uint32_t devarch) noexcept
{
	return Devarch{
		.architect = static_cast<unsigned>(field<31, 21>(devarch)),
		.present = bit<20>(devarch),
		.revision = static_cast<unsigned>(field<19, 16>(devarch)),
		.archid = static_cast<unsigned>(field<15, 0>(devarch)),
		.archver = static_cast<unsigned>(field<15, 12>(devarch)),
		.archpart = static_cast<unsigned>(field<11, 0>(devarch)),
	};
}

/// DEVARCH.ARCHID's name: "AMUv1 (FEAT_AMU_EXT32)" (0x0A66), "AMUv1
/// (FEAT_AMU_EXT64)" (0x0A67), "PMU (Arm A-profile PMU architecture)"
/// (ARCHPART 0xA16); empty otherwise.
[[nodiscard]] std::string_view archid_name(unsigned archid) noexcept;

/// AMDEVTYPE / PMDEVTYPE (0xFCC).
struct Devtype {
	unsigned major = 0;	///< [3:0]
	unsigned sub = 0;	///< [7:4]
	friend constexpr bool operator==(const Devtype&, const Devtype&) = default;
};
/// Splits DEVTYPE into its fields.
[[nodiscard]] constexpr Devtype decode_devtype(std::uint32_t devtype) noexcept
{
	return {static_cast<unsigned>(field<3, 0>(devtype)), static_cast<unsigned>(field<7, 4>(devtype))};
}
/// DEVTYPE in words: "performance monitor component within a PE" for
/// MAJOR 6, SUB 1.
[[nodiscard]] std::string describe_devtype(Devtype t);

/// PIDR0-4 (PIDR4 at 0xFD0, PIDR0-3 at 0xFE0-0xFEC), the peripheral ID.
struct Pidr {
	unsigned part = 0;	///< PIDR1.PART_1 [3:0] : PIDR0.PART_0 [7:0]
	unsigned des_0 = 0;	///< PIDR1 [7:4]: JEP106 identity [3:0]
	unsigned des_1 = 0;	///< PIDR2 [2:0]: JEP106 identity [6:4]
	bool jedec = false;	///< PIDR2 [3]: a JEP106 code is used (reads 1)
	unsigned revision = 0;	///< PIDR2 [7:4]: major revision
	unsigned cmod = 0;	///< PIDR3 [3:0]: customer modified
	unsigned revand = 0;	///< PIDR3 [7:4]: minor revision
	unsigned des_2 = 0;	///< PIDR4 [3:0]: JEP106 continuation code
	unsigned size = 0;	///< PIDR4 [7:4]: log2 of the 4 KB pages of the component

	/// The designer, DES_2 : DES_1 : DES_0.
	[[nodiscard]] constexpr Jep106 designer() const noexcept
	{
		return {des_2, (des_1 << 4) | des_0};
	}
	friend constexpr bool operator==(const Pidr&, const Pidr&) = default;
};

/// Decodes PIDR0-4 as IdFrame::pidr holds them ([0..3] PIDR0-3, [4] PIDR4).
[[nodiscard]] constexpr Pidr decode_pidr(std::span<const std::uint32_t, 5> pidr) noexcept
{
	return Pidr{
		.part = static_cast<unsigned>((field<3, 0>(pidr[1]) << 8) | field<7, 0>(pidr[0])),
		.des_0 = static_cast<unsigned>(field<7, 4>(pidr[1])),
		.des_1 = static_cast<unsigned>(field<2, 0>(pidr[2])),
		.jedec = bit<3>(pidr[2]),
		.revision = static_cast<unsigned>(field<7, 4>(pidr[2])),
		.cmod = static_cast<unsigned>(field<3, 0>(pidr[3])),
		.revand = static_cast<unsigned>(field<7, 4>(pidr[3])),
		.des_2 = static_cast<unsigned>(field<3, 0>(pidr[4])),
		.size = static_cast<unsigned>(field<7, 4>(pidr[4])),
	};
}

/// CIDR0-3 (0xFF0-0xFFC), the component ID: a preamble 0x0D, 0x0, 0x05,
/// 0xB1 around CIDR1.CLASS [7:4].
struct Cidr {
	unsigned component_class = 0;	///< CIDR1 [7:4]
	bool preamble_ok = false;	///< PRMBL_0..3 are 0x0D, 0x0, 0x05, 0xB1
	friend constexpr bool operator==(const Cidr&, const Cidr&) = default;
};

/// Decodes CIDR0-3 as IdFrame::cidr holds them.
[[nodiscard]] constexpr Cidr decode_cidr(std::span<const std::uint32_t, 4> cidr) noexcept
{
	return Cidr{
		.component_class = static_cast<unsigned>(field<7, 4>(cidr[1])),
		.preamble_ok = field<7, 0>(cidr[0]) == 0x0D && field<3, 0>(cidr[1]) == 0x0 &&
			       field<7, 0>(cidr[2]) == 0x05 && field<7, 0>(cidr[3]) == 0xB1,
	};
}

/// CIDR1.CLASS in words: "CoreSight component" (0x9), "ROM table" (0x1),
/// "generic IP" (0xE), "PrimeCell / system component" (0xF), "class 0x<n>".
[[nodiscard]] std::string describe_component_class(unsigned component_class);

/// The identification registers of one frame, decoded.
struct FrameId {
	Iidr iidr{};
	Devarch devarch{};
	Devtype devtype{};
	Pidr pidr{};
	Cidr cidr{};
};
/// Decodes every identification register of a frame.
[[nodiscard]] FrameId decode_id_frame(const IdFrame& frame) noexcept;

// ---------------------------------------------------------------- cross-check

/// The outcome of one identification check.
enum class CheckResult {
	match,
	mismatch,
	unavailable,	///< a register the check needs is not implemented (reads 0)
};
/// "match", "MISMATCH" or "not available".
[[nodiscard]] std::string_view to_string(CheckResult r) noexcept;

/// One comparison, e.g. "AMIIDR.ProductID vs AMPIDR part": 0xd48 vs 0xd48.
struct IdCheck {
	std::string what{};
	std::string expected{};	///< the reference (the first register named)
	std::string actual{};
	CheckResult result = CheckResult::unavailable;
};

/// Checks a frame's identification against itself and against MIDR_EL1:
/// IIDR against PIDR (part, designer, variant, revision), both against
/// MIDR_EL1 (implementer, part, variant, revision), DEVARCH.ARCHITECT and
/// PIDR's JEP106 fields. prefix names the registers: "AM" or "PM". Every
/// mismatch is reported as read, none corrected.
[[nodiscard]] std::vector<IdCheck> cross_check_frame(const IdFrame& frame, std::uint64_t midr,
						     std::string_view prefix);

/// The checks in a phrase: "consistent (7 checks)", "MISMATCH: 2 of 7
/// checks" or "no identification registers".
[[nodiscard]] std::string cross_check_summary(std::span<const IdCheck> checks);

} // namespace amupmu

#endif
