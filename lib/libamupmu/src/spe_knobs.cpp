// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/spe_knobs.hpp>

#include "attrfile.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <system_error>
#include <utility>

namespace amupmu {

namespace fs = std::filesystem;

namespace {

// Documentation/admin-guide/amupmu.rst, "SPE filter defaults"
constexpr std::array<SpeKnob, 11> knobs{{
	{"pmsfcr_fe", "PMSFCR_EL1.FE: filter by event (0, 1)"},
	{"pmsfcr_ft", "PMSFCR_EL1.FT: filter by type (0, 1)"},
	{"pmsfcr_fl", "PMSFCR_EL1.FL: filter by latency (0, 1)"},
	{"pmsfcr_fne", "PMSFCR_EL1.FnE: filter by absent events (0, 1)"},
	{"pmsfcr_type", "PMSFCR_EL1.TYPE: B 0x1, LD 0x2, ST 0x4, FP 0x8, SIMD 0x10"},
	{"pmsfcr_type_mask", "PMSFCR_EL1.TYPEm: the same bits, a type that must (not) be"},
	{"pmsevfr", "PMSEVFR_EL1: events that must all be present (FE)"},
	{"pmsnevfr", "PMSNEVFR_EL1: events that must all be absent (FnE)"},
	{"pmslatfr_minlat", "PMSLATFR_EL1.MINLAT: cycles (FL)"},
	{"pmsirr_interval", "PMSIRR_EL1.INTERVAL: operations between samples, n * 256"},
	{"pmsirr_rnd", "PMSIRR_EL1.RND: random jitter (0, 1)"},
}};

std::string knob_names()
{
	std::string s;
	for (const SpeKnob& k : knobs) {
		s += s.empty() ? "" : ", ";
		s += k.name;
	}
	return s;
}

const SpeKnob& require_knob(std::string_view name)
{
	const SpeKnob* k = find_spe_knob(name);
	if (!k)
		throw InvalidArgument{"unknown arm_spe knob '" + std::string{name} + "' (" + knob_names() + ")", EINVAL};
	return *k;
}

// A number as the kernel's kstrtou64(s, 0) takes it: decimal, 0x hex, 0 octal.
bool is_knob_number(std::string_view v)
{
	if (v.starts_with('+'))
		v.remove_prefix(1);
	int base = 10;
	if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
		base = 16;
		v.remove_prefix(2);
	} else if (v.size() > 1 && v[0] == '0') {
		base = 8;
		v.remove_prefix(1);
	}
	std::uint64_t out = 0;
	const auto r = std::from_chars(v.data(), v.data() + v.size(), out, base);
	return !v.empty() && r.ec == std::errc{} && r.ptr == v.data() + v.size();
}

[[noreturn]] void throw_file_error(const std::string& op, const fs::path& dir, int err)
{
	if (err == EACCES || err == EPERM)
		throw PermissionDenied{op + " (the arm_spe knobs are root's)", err};
	std::error_code ec;	// the overload that throws would escape as std::filesystem_error
	if (err == ENOENT && !fs::is_directory(dir, ec))
		throw DeviceMissing{op + " (no " + dir.string() +
					    ": debugfs not mounted, amupmu not loaded, or no CPU with SPE)",
				    err};
	throw Error{op, err};
}

std::string read_value(const fs::path& dir, std::string_view name)
{
	std::string v;
	const fs::path path = dir / std::string{name};
	if (const int err = detail::read_attr(path, v))
		throw_file_error("read " + path.string(), dir, err);
	while (!v.empty() && (v.back() == '\n' || v.back() == ' '))
		v.pop_back();
	return v;
}

} // namespace

std::span<const SpeKnob> spe_knobs() noexcept
{
	return knobs;
}

const SpeKnob* find_spe_knob(std::string_view name) noexcept
{
	const auto it = std::ranges::find(knobs, name, &SpeKnob::name);
	return it == knobs.end() ? nullptr : &*it;
}

std::string read_spe_knob(const fs::path& dir, std::string_view name)
{
	return read_value(dir, require_knob(name).name);
}

std::vector<SpeKnobValue> read_spe_knobs(const fs::path& dir)
{
	std::vector<SpeKnobValue> out;
	for (const SpeKnob& k : knobs) {
		std::error_code ec;
		if (!fs::exists(dir / std::string{k.name}, ec) && fs::is_directory(dir, ec))
			continue;	// an older driver's directory
		out.push_back({std::string{k.name}, read_value(dir, k.name)});
	}
	return out;
}

std::string_view spe_knob_errno_meaning(int err) noexcept
{
	switch (err) {
	case EINVAL:
		return "not a number, out of the field's range (an interval not a multiple of 256 or below the "
		       "CPUs' minimum, a latency beyond their counters), an event bit no SPE version defines, or "
		       "a combination the architecture leaves CONSTRAINED UNPREDICTABLE (pmsfcr_fl 1 with "
		       "pmslatfr_minlat 0; pmsfcr_ft 1 with pmsfcr_type 0 without FEAT_SPE_EFT)";
	case EOPNOTSUPP:
		return "a CPU with SPE lacks that filter (PMSIDR_EL1 FE, FT, FL, FnE or EFT) or that event";
	case EACCES:
	case EPERM:
		return "the arm_spe knobs are root's";
	default:
		return {};
	}
}

SpeKnobRefused::SpeKnobRefused(const std::string& name, const std::string& value, int err,
			       const std::string& rollback)
	: Error{"arm_spe knob " + name + "=" + value, err,
		"arm_spe knob " + name + "=" + value + ": " + errno_text(err) +
			(spe_knob_errno_meaning(err).empty() ? "" : " -- " + std::string{spe_knob_errno_meaning(err)}) +
			rollback}
{
}

void write_spe_knobs(const fs::path& dir, std::span<const SpeKnobAssignment> assignments)
{
	for (const SpeKnobAssignment& a : assignments) {
		(void)require_knob(a.name);
		if (!is_knob_number(a.value))
			throw InvalidArgument{"arm_spe knob " + a.name + ": '" + a.value +
						      "' is not a number (decimal, 0x hex or 0 octal, up to 2^64 - 1)",
					      EINVAL};
	}
	// every file there and readable before anything is written
	for (const SpeKnobAssignment& a : assignments)
		(void)read_value(dir, a.name);
	// the values before each write, to give them back if a later one fails
	std::vector<std::pair<std::string, std::string>> written;
	for (const SpeKnobAssignment& a : assignments) {
		std::string before = read_value(dir, a.name);
		const int err = detail::write_attr(dir / a.name, a.value + "\n");
		if (err == 0) {
			written.emplace_back(a.name, std::move(before));
			continue;
		}
		std::string rollback;
		for (auto it = written.rbegin(); it != written.rend(); ++it)
			if (const int rerr = detail::write_attr(dir / it->first, it->second + "\n"))
				rollback += "; restoring " + it->first + "=" + it->second + " failed too: " + errno_text(rerr);
		if (rollback.empty() && !written.empty())
			rollback = "; the " + std::to_string(written.size()) + " knob(s) written before it are restored";
		throw SpeKnobRefused{a.name, a.value, err, rollback};
	}
}

SpeRecordedConfig resolve_spe_defaults(const fs::path& dir, const SpeRecordedConfig& given)
{
	constexpr std::uint32_t flag_defaults = 1u << 0;	// AMUPMU_SPE_CFG_DEFAULTS
	constexpr std::uint32_t flag_jitter = 1u << 1;		// AMUPMU_SPE_CFG_JITTER
	if ((given.flags & flag_defaults) == 0)
		return given;
	const std::string line = read_value(dir, "config");
	const auto bad = [&] {
		return InvalidArgument{(dir / "config").string() + ": '" + line + "' is not the defaults' registers",
				       EINVAL};
	};
	constexpr std::array<std::string_view, 5> keys{"pmsfcr", "pmsevfr", "pmsnevfr", "pmslatfr", "pmsirr"};
	std::array<std::uint64_t, keys.size()> v{};
	std::string_view rest = line;
	for (std::size_t i = 0; i < keys.size(); ++i) {
		const std::size_t sp = rest.find(' ');
		std::string_view word = rest.substr(0, sp);
		rest.remove_prefix(sp == std::string_view::npos ? rest.size() : sp + 1);
		const std::string prefix = std::string{keys[i]} + "=0x";
		if (!word.starts_with(prefix) || word.size() == prefix.size())
			throw bad();
		word.remove_prefix(prefix.size());
		const auto r = std::from_chars(word.data(), word.data() + word.size(), v[i], 16);
		if (r.ec != std::errc{} || r.ptr != word.data() + word.size())
			throw bad();
	}
	if (!rest.empty())
		throw bad();
	SpeRecordedConfig r = given;
	r.pmsfcr = v[0];
	r.pmsevfr = v[1];
	r.pmsnevfr = v[2];
	r.min_latency = static_cast<std::uint32_t>(v[3] & 0xFFFF);
	r.interval = static_cast<std::uint32_t>(v[4] & 0xFFFFFF00);
	r.flags = (given.flags & ~flag_jitter) | ((v[4] & 1) != 0 ? flag_jitter : 0);
	return r;
}

} // namespace amupmu
