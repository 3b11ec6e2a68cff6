// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Identification of the memory-mapped AMU and PMU frames (AMIIDR/PMIIDR,
// DEVARCH, DEVTYPE, PIDR0-4, CIDR0-3) and of their designer through JEDEC
// JEP106, cross-checked against each other and against MIDR_EL1. Field
// positions from the Arm ARM (DDI 0487), "External AMU register
// descriptions" / "External PMU register descriptions" and "About the
// Peripheral identification scheme". Pure functions: no device needed.
#ifndef AMUPMU_IDENT_HPP
#define AMUPMU_IDENT_HPP

#include <amupmu/bits.hpp>
#include <amupmu/info.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu {

// ---------------------------------------------------------------- JEP106

/// A JEP106 manufacturer code: the bank (1-based; bank n follows n - 1
/// continuation codes 0x7F) and the 7-bit identity within it (the parity
/// bit of the JEDEC byte dropped). Arm Limited: bank 5 (continuation 4),
/// identity 0x3B.
struct Jep106 {
	unsigned continuation = 0;	///< bank - 1
	unsigned identity = 0;		///< [6:0]

	/// The 12-bit form of IIDR.Implementer: continuation [11:8], identity [6:0].
	[[nodiscard]] constexpr std::uint16_t code() const noexcept
	{
		return static_cast<std::uint16_t>(((continuation & 0xF) << 8) | (identity & 0x7F));
	}
	[[nodiscard]] constexpr unsigned bank() const noexcept { return continuation + 1; }
	/// Zero is not a valid JEP106 code (the register is not implemented).
	[[nodiscard]] constexpr bool valid() const noexcept { return identity != 0 && identity != 0x7F; }

	friend constexpr bool operator==(const Jep106&, const Jep106&) = default;
};

/// Arm Limited, 0x43B.
inline constexpr Jep106 jep106_arm{.continuation = 4, .identity = 0x3B};

/// From IIDR.Implementer [11:0]: continuation [11:8], bit 7 RES0, identity [6:0].
[[nodiscard]] constexpr Jep106 jep106_from_iidr(std::uint32_t implementer) noexcept
{
	return {static_cast<unsigned>(field<11, 8>(implementer)), static_cast<unsigned>(field<6, 0>(implementer))};
}

/// From DEVARCH.ARCHITECT [31:21] (given shifted down): continuation
/// [10:7], identity [6:0].
[[nodiscard]] constexpr Jep106 jep106_from_architect(std::uint32_t architect) noexcept
{
	return {static_cast<unsigned>(field<10, 7>(architect)), static_cast<unsigned>(field<6, 0>(architect))};
}

/// The manufacturer's name from the library's JEP106 table (JEDEC
/// JEP106; Arm and the common Arm-architecture implementers only); empty
/// when not in it.
[[nodiscard]] std::string_view jep106_name(Jep106 id) noexcept;

/// "Arm Limited (JEP106 0x43b: bank 5, 0x3b)", "JEP106 0x123 (bank 2,
/// 0x23; not in the library's table)", "none (0)".
[[nodiscard]] std::string describe_jep106(Jep106 id);

/// The JEP106 code of a MIDR_EL1.Implementer (the Arm ARM's one-byte
/// code: 0x41 'A' Arm -> 0x43B); nullopt when the library does not know
/// it (0x00, software use, has none).
[[nodiscard]] std::optional<Jep106> midr_implementer_jep106(std::uint8_t implementer) noexcept;

// ---------------------------------------------------------------- registers

/// AMIIDR / PMIIDR (offset 0xE08).
struct Iidr {
	unsigned product_id = 0;	///< [31:20]
	unsigned variant = 0;		///< [19:16]
	unsigned revision = 0;		///< [15:12]
	unsigned implementer = 0;	///< [11:0] JEP106 (jep106_from_iidr)

	friend constexpr bool operator==(const Iidr&, const Iidr&) = default;
};

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

/// "AMUv1 (FEAT_AMU_EXT32)" for 0x0A66, "AMUv1 (FEAT_AMU_EXT64)" 0x0A67,
/// "PMUv3" for ARCHPART 0xA16; empty otherwise.
[[nodiscard]] std::string_view archid_name(unsigned archid) noexcept;

/// DEVTYPE (0xFCC): MAJOR [3:0], SUB [7:4].
struct Devtype {
	unsigned major = 0;
	unsigned sub = 0;
	friend constexpr bool operator==(const Devtype&, const Devtype&) = default;
};
[[nodiscard]] constexpr Devtype decode_devtype(std::uint32_t devtype) noexcept
{
	return {static_cast<unsigned>(field<3, 0>(devtype)), static_cast<unsigned>(field<7, 4>(devtype))};
}
/// "performance monitor component within a PE" for MAJOR 6 SUB 1, ...
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

/// pidr as struct amupmu_id_frame holds it: [0..3] PIDR0-3, [4] PIDR4.
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

[[nodiscard]] constexpr Cidr decode_cidr(std::span<const std::uint32_t, 4> cidr) noexcept
{
	return Cidr{
		.component_class = static_cast<unsigned>(field<7, 4>(cidr[1])),
		.preamble_ok = field<7, 0>(cidr[0]) == 0x0D && field<3, 0>(cidr[1]) == 0x0 &&
			       field<7, 0>(cidr[2]) == 0x05 && field<7, 0>(cidr[3]) == 0xB1,
	};
}

/// "CoreSight component" (0x9), "ROM table" (0x1), "generic IP" (0xE),
/// "PrimeCell / system component" (0xF), "class 0x<n>".
[[nodiscard]] std::string describe_component_class(unsigned component_class);

/// One frame decoded.
struct FrameId {
	Iidr iidr{};
	Devarch devarch{};
	Devtype devtype{};
	Pidr pidr{};
	Cidr cidr{};
};
[[nodiscard]] FrameId decode_id_frame(const IdFrame& frame) noexcept;

// ---------------------------------------------------------------- cross-check

enum class CheckResult {
	match,
	mismatch,
	unavailable,	///< a register the check needs is not implemented (reads 0)
};
[[nodiscard]] std::string_view to_string(CheckResult r) noexcept;

/// One comparison, e.g. "AMIIDR.ProductID vs AMPIDR part": 0xd48 vs 0xd48.
struct IdCheck {
	std::string what{};
	std::string expected{};	///< the reference (the first register named)
	std::string actual{};
	CheckResult result = CheckResult::unavailable;
};

/// A frame's IIDR against its PIDR (part number, designer, variant =
/// REVISION, revision = REVAND), both against MIDR_EL1 (implementer
/// through midr_implementer_jep106(), part number, variant, revision), and
/// DEVARCH's architect and PIDR4.DES_2/JEDEC sanity. prefix: "AM" or "PM".
/// Reports each mismatch; nothing is hidden or corrected. Seed 001 notes
/// that some SoCs' AMIIDR.ProductID does not follow the core's part number.
[[nodiscard]] std::vector<IdCheck> cross_check_frame(const IdFrame& frame, std::uint64_t midr,
						     std::string_view prefix);

/// "consistent (7 checks)", "MISMATCH: 2 of 7 checks" or "no
/// identification registers", for one line.
[[nodiscard]] std::string cross_check_summary(std::span<const IdCheck> checks);

} // namespace amupmu

#endif
