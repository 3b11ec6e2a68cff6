// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/platform.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace amupmu {

namespace {

bool all_digits(std::string_view s)
{
	return !s.empty() && std::ranges::all_of(s, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// The next whitespace-separated field of line, advancing it; "" at the end.
std::string_view next_field(std::string_view& line)
{
	const std::size_t start = line.find_first_not_of(" \t");
	if (start == std::string_view::npos) {
		line = {};
		return {};
	}
	line.remove_prefix(start);
	const std::size_t end = std::min(line.find_first_of(" \t"), line.size());
	const std::string_view field = line.substr(0, end);
	line.remove_prefix(end);
	return field;
}

GicVersion chip_version(std::string_view chip)
{
	if (chip == "GICv3" || chip == "GICv4")
		return GicVersion::v3;
	if (chip == "GIC" || chip == "GICv2" || (chip.starts_with("GIC-") && all_digits(chip.substr(4))))
		return GicVersion::v2;
	return GicVersion::unknown;
}

} // namespace

std::string_view to_string(GicVersion gic) noexcept
{
	switch (gic) {
	case GicVersion::v2: return "GICv2";
	case GicVersion::v3: return "GICv3";
	case GicVersion::unknown: break;
	}
	return "unknown";
}

GicVersion gic_version_from_interrupts(std::string_view text)
{
	GicVersion found = GicVersion::unknown;
	while (!text.empty()) {
		const std::size_t nl = std::min(text.find('\n'), text.size());
		std::string_view line = text.substr(0, nl);
		text.remove_prefix(std::min(nl + 1, text.size()));
		// " 11:   1234   5678   GICv3  27 Level  arch_timer": numbered
		// interrupts only (IPIs and "Err:" have no chip)
		const std::string_view irq = next_field(line);
		if (irq.size() < 2 || irq.back() != ':' || !all_digits(irq.substr(0, irq.size() - 1)))
			continue;
		std::string_view chip = next_field(line);
		while (all_digits(chip))
			chip = next_field(line);
		const GicVersion v = chip_version(chip);
		if (v == GicVersion::v3)
			return v;
		if (v != GicVersion::unknown)
			found = v;
	}
	return found;
}

GicVersion read_gic_version(const std::string& path)
{
	std::ifstream in{path};
	if (!in)
		return GicVersion::unknown;
	std::ostringstream s;
	s << in.rdbuf();
	return gic_version_from_interrupts(s.str());
}

} // namespace amupmu
