// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/bits.hpp>
#include <amupmu/cpu.hpp>

#include <algorithm>

namespace amupmu {

namespace {

struct Jep106Entry {
	std::uint16_t code;	// continuation [11:8], identity [6:0]
	std::string_view name;
};

// JEDEC JEP106 ("Standard Manufacturer's Identification Code"), revision
// JEP106BL (February 2025), the entries of Arm and of the common
// Arm-architecture implementers only: bank - 1 in the high nibble, the
// 7-bit identity (parity dropped) below. Checked against JEP106BL as the
// jep106 crate (github.com/Yatekii/jep106 0.3.0) transcribes it: every
// code below names the same company there, except 0x004, which JEP106BL
// lists as "RAMXEED Limited" (Fujitsu's former memory business; kept as
// Fujitsu here, the name Arm-based Fujitsu parts report), and 0x070
// (Qualcomm), which that transcription leaves empty (not verified).
// Also where Linux names the same codes: Arm 0x43B (the Arm ARM's
// AMIIDR/PMIIDR "for an implementation designed by Arm"), NVIDIA 0x36B and
// Ampere 0xA16 (drivers/perf/arm_cspmu).
constexpr Jep106Entry jep106_table[] = {
	{0x004, "Fujitsu"},
	{0x009, "Intel"},
	{0x048, "Apple"},
	{0x04E, "Samsung"},
	{0x070, "Qualcomm"},
	{0x13F, "Broadcom"},
	{0x34C, "Cavium"},
	{0x369, "Marvell"},
	{0x36B, "NVIDIA"},
	{0x426, "MediaTek"},
	{0x43B, "Arm Limited"},
	{0x455, "Microsoft"},
	{0x736, "HiSilicon"},
	{0xA16, "Ampere Computing"},
};

// MIDR_EL1.Implementer (Arm ARM, "MIDR_EL1") -> the same company's JEP106
// code. Only companies whose code the table above has.
struct MidrJep106 {
	std::uint8_t midr;
	std::uint16_t jep106;
};
constexpr MidrJep106 midr_to_jep106[] = {
	{0x41, 0x43B},	// 'A' Arm
	{0x42, 0x13F},	// 'B' Broadcom
	{0x43, 0x34C},	// 'C' Cavium
	{0x46, 0x004},	// 'F' Fujitsu
	{0x48, 0x736},	// 'H' HiSilicon
	{0x4E, 0x36B},	// 'N' NVIDIA
	{0x51, 0x070},	// 'Q' Qualcomm
	{0x53, 0x04E},	// 'S' Samsung
	{0x56, 0x369},	// 'V' Marvell
	{0x61, 0x048},	// 'a' Apple
	{0x69, 0x009},	// 'i' Intel
	{0x6D, 0x455},	// 'm' Microsoft
	{0xC0, 0xA16},	// Ampere
};

std::string hex3(unsigned v)
{
	return hex(v, 3);
}

IdCheck compare(std::string what, unsigned expected, unsigned actual, bool available, unsigned digits = 3)
{
	return IdCheck{
		.what = std::move(what),
		.expected = hex(expected, digits),
		.actual = hex(actual, digits),
		.result = !available ? CheckResult::unavailable
			  : expected == actual ? CheckResult::match
					       : CheckResult::mismatch,
	};
}

} // namespace

std::string_view jep106_name(Jep106 id) noexcept
{
	const auto* const it = std::ranges::find(jep106_table, id.code(), &Jep106Entry::code);
	return it == std::end(jep106_table) ? std::string_view{} : it->name;
}

std::string describe_jep106(Jep106 id)
{
	if (id.code() == 0)
		return "none (0)";
	const std::string where = "JEP106 " + hex3(id.code()) + ": bank " + std::to_string(id.bank()) + ", " +
				  hex(id.identity, 2);
	const std::string_view name = jep106_name(id);
	if (!id.valid())
		return where + " (not a valid JEP106 identity)";
	return name.empty() ? where + " (not in the library's table)" : std::string{name} + " (" + where + ")";
}

std::optional<Jep106> midr_implementer_jep106(std::uint8_t implementer) noexcept
{
	const auto* const it = std::ranges::find(midr_to_jep106, implementer, &MidrJep106::midr);
	if (it == std::end(midr_to_jep106))
		return std::nullopt;
	return jep106_from_iidr(it->jep106);
}

std::string_view archid_name(unsigned archid) noexcept
{
	switch (archid) {
	case 0x0A66: return "AMUv1 (FEAT_AMU_EXT32)";
	case 0x0A67: return "AMUv1 (FEAT_AMU_EXT64)";
	default: break;
	}
	if ((archid & 0xFFF) == 0xA16)
		return "PMU (Arm A-profile PMU architecture)";
	return {};
}

std::string describe_devtype(Devtype t)
{
	std::string major;
	switch (t.major) {
	case 0x0: major = "miscellaneous"; break;
	case 0x1: major = "trace sink"; break;
	case 0x2: major = "trace link"; break;
	case 0x3: major = "trace source"; break;
	case 0x4: major = "debug control"; break;
	case 0x5: major = "debug logic"; break;
	case 0x6: major = "performance monitor"; break;
	default: major = "major type " + std::to_string(t.major); break;
	}
	if (t.major == 0x6 && t.sub == 0x1)
		return major + " component within a PE";
	return major + " (sub type " + std::to_string(t.sub) + ")";
}

std::string describe_component_class(unsigned component_class)
{
	switch (component_class) {
	case 0x0: return "generic verification component";
	case 0x1: return "ROM table";
	case 0x9: return "CoreSight component";
	case 0xB: return "Peripheral Test Block";
	case 0xE: return "generic IP component";
	case 0xF: return "CoreLink, PrimeCell or system component";
	default: return "class " + hex(component_class, 1);
	}
}

FrameId decode_id_frame(const IdFrame& f) noexcept
{
	return FrameId{
		.iidr = decode_iidr(f.iidr),
		.devarch = decode_devarch(f.devarch),
		.devtype = decode_devtype(f.devtype),
		.pidr = decode_pidr(f.pidr),
		.cidr = decode_cidr(f.cidr),
	};
}

std::string_view to_string(CheckResult r) noexcept
{
	switch (r) {
	case CheckResult::match: return "match";
	case CheckResult::mismatch: return "MISMATCH";
	case CheckResult::unavailable: return "not available";
	}
	return "unknown";
}

// Reports each mismatch as read; nothing is hidden or corrected: seed 001
// notes that some SoCs' AMIIDR.ProductID does not follow the core's part
// number, and a user comparing boards wants to see that.
std::vector<IdCheck> cross_check_frame(const IdFrame& frame, std::uint64_t midr, std::string_view prefix)
{
	const std::string p{prefix};
	const FrameId id = decode_id_frame(frame);
	const Midr m = decode_midr(midr);
	const bool have_iidr = frame.iidr != 0;	// zero: not implemented (Arm ARM)
	// PIDR0-2 make the part and designer; a frame without them reads 0
	const bool have_pidr = frame.pidr[0] != 0 || frame.pidr[1] != 0 || frame.pidr[2] != 0;
	const bool have_pidr4 = have_pidr;	// PIDR4 may legitimately be 0 (bank 1)
	const bool have_devarch = id.devarch.present;

	std::vector<IdCheck> out;
	// the frame against itself (Arm ARM, "AMIIDR" / "PMIIDR": each field
	// matches the PIDR fields named here)
	out.push_back(compare(p + "IIDR.ProductID vs " + p + "PIDR1.PART_1:" + p + "PIDR0.PART_0",
			      id.iidr.product_id, id.pidr.part, have_iidr && have_pidr));
	out.push_back(compare(p + "IIDR.Implementer vs " + p + "PIDR4.DES_2:" + p + "PIDR2.DES_1:" + p +
				      "PIDR1.DES_0",
			      id.iidr.implementer, id.pidr.designer().code(), have_iidr && have_pidr4));
	out.push_back(compare(p + "IIDR.Variant vs " + p + "PIDR2.REVISION", id.iidr.variant, id.pidr.revision,
			      have_iidr && have_pidr, 1));
	out.push_back(compare(p + "IIDR.Revision vs " + p + "PIDR3.REVAND", id.iidr.revision, id.pidr.revand,
			      have_iidr && have_pidr, 1));
	if (have_pidr)
		out.push_back(IdCheck{.what = p + "PIDR2.JEDEC (a JEP106 code is used)",
				      .expected = "1",
				      .actual = id.pidr.jedec ? "1" : "0",
				      .result = id.pidr.jedec ? CheckResult::match : CheckResult::mismatch});
	if (have_devarch && have_iidr)
		out.push_back(compare(p + "DEVARCH.ARCHITECT vs Arm Limited (the architecture's owner)",
				      jep106_arm.code(), jep106_from_architect(id.devarch.architect).code(), true));

	// against the CPU (MIDR_EL1). IIDR first; PIDR when there is no IIDR.
	const bool have_any = have_iidr || have_pidr;
	const unsigned imp = have_iidr ? id.iidr.implementer : id.pidr.designer().code();
	const unsigned part = have_iidr ? id.iidr.product_id : id.pidr.part;
	const unsigned variant = have_iidr ? id.iidr.variant : id.pidr.revision;
	const unsigned revision = have_iidr ? id.iidr.revision : id.pidr.revand;
	const std::string src = have_iidr ? p + "IIDR" : p + "PIDR";
	const std::optional<Jep106> midr_jep = midr_implementer_jep106(m.implementer);
	if (midr_jep)
		out.push_back(compare("MIDR_EL1.Implementer " + hex(m.implementer, 2) + " as JEP106 vs " + src +
					      " implementer",
				      midr_jep->code(), imp, have_any));
	else
		out.push_back(IdCheck{.what = "MIDR_EL1.Implementer " + hex(m.implementer, 2) + " as JEP106 vs " +
					      src + " implementer",
				      .expected = "(no JEP106 code known for " + hex(m.implementer, 2) + ")",
				      .actual = hex3(imp),
				      .result = CheckResult::unavailable});
	out.push_back(compare("MIDR_EL1.PartNum vs " + src + " part", m.part, part, have_any));
	out.push_back(compare("MIDR_EL1.Variant vs " + src + " variant", m.variant, variant, have_any, 1));
	out.push_back(compare("MIDR_EL1.Revision vs " + src + " revision", m.revision, revision, have_any, 1));
	return out;
}

std::string cross_check_summary(std::span<const IdCheck> checks)
{
	const auto n = [&](CheckResult r) {
		return static_cast<std::size_t>(std::ranges::count(checks, r, &IdCheck::result));
	};
	const std::size_t done = n(CheckResult::match) + n(CheckResult::mismatch);
	if (done == 0)
		return "no identification registers to compare";
	if (n(CheckResult::mismatch) == 0)
		return "consistent (" + std::to_string(done) + " checks)";
	return "MISMATCH: " + std::to_string(n(CheckResult::mismatch)) + " of " + std::to_string(done) + " checks";
}

} // namespace amupmu
