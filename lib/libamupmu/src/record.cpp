// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/error.hpp>
#include <amupmu/events.hpp>
#include <amupmu/format.hpp>
#include <amupmu/record.hpp>

#include "textfile.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <istream>
#include <map>
#include <ostream>
#include <sstream>
#include <tuple>

namespace amupmu {

namespace {

constexpr std::string_view magic = "amupmu-record 2";
constexpr std::string_view magic_v1 = "amupmu-record 1";

[[noreturn]] void bad(unsigned line, const std::string& why)
{
	throw InvalidArgument{"recording line " + std::to_string(line) + ": " + why, EINVAL};
}

std::string escape(std::string_view s)
{
	return detail::escape_word(s);
}

std::string unescape(std::string_view s)
{
	auto out = detail::unescape_word(s);
	if (!out)
		throw InvalidArgument{"recording: bad %-escape in '" + std::string{s} + "'", EINVAL};
	return std::move(*out);
}

std::string percent(std::uint64_t n, std::uint64_t total)
{
	char buf[16];
	std::snprintf(buf, sizeof(buf), "%6.2f%%", total ? 100.0 * static_cast<double>(n) / static_cast<double>(total) : 0.0);
	return buf;
}

// "12.345678901"
std::string seconds_text(std::uint64_t ns)
{
	char buf[32];
	std::snprintf(buf, sizeof(buf), "%llu.%09llu", static_cast<unsigned long long>(ns / 1000000000),
		      static_cast<unsigned long long>(ns % 1000000000));
	return buf;
}

// A mode as the file spells it: its word, or its number when it has none.
std::string mode_text(SampleMode m)
{
	const std::string_view name = to_string(m);
	return name == "unknown" ? std::to_string(static_cast<unsigned>(m)) : std::string{name};
}

Clock clock_of(std::string_view name)
{
	for (const Clock c : {Clock::cntvct, Clock::cntpct})
		if (name == to_string(c))
			return c;
	return Clock::unknown;
}

} // namespace

RecordedSample to_recorded(const Sample& s) noexcept
{
	return {.cpu = s.cpu, .pid = s.pid, .tid = s.tid, .mode = s.mode, .time = s.time, .pc = s.pc};
}

void write_recording(std::ostream& out, const Recording& r)
{
	out << magic << "\n";
	out << "command";
	for (const std::string& a : r.command)
		out << " " << escape(a);
	out << "\n";
	out << "event " << escape(r.event) << " " << hex(r.number, 4) << " " << r.period << "\n";
	out << "modifiers " << escape(r.modifiers) << "\n";
	out << "cpus " << escape(r.cpus) << "\n";
	out << "timer_freq " << r.timer_freq << "\n";
	if (r.time.valid())
		out << "clock " << to_string(r.time.clock) << " " << r.time.time_shift << " " << r.time.time_mult << " "
		    << r.time.time_zero << " " << r.time.time_zero_ns << "\n";
	out << "lost " << r.lost << "\n";
	out << "skid " << r.skid << "\n";
	for (const Mapping& m : r.maps)
		out << "map " << m.pid << " " << hex(m.start, 1) << " " << hex(m.end, 1) << " " << hex(m.offset, 1)
		    << " " << escape(m.path) << "\n";
	for (const RecordedSample& s : r.samples)
		out << "s " << s.cpu << " " << s.pid << " " << s.tid << " " << mode_text(s.mode) << " " << s.time << " "
		    << hex(s.pc, 1) << "\n";
}

Recording read_recording(std::istream& in)
{
	Recording r;
	std::string line;
	unsigned n = 0;
	if (!std::getline(in, line) || (line != magic && line != magic_v1))
		bad(1, "not an amupmu recording (expected '" + std::string{magic} + "')");
	const bool v1 = line == magic_v1;
	n = 1;
	while (std::getline(in, line)) {
		++n;
		std::istringstream ls{line};
		std::string tag;
		ls >> tag;
		const auto need = [&](bool ok) {
			if (!ok || ls.fail())
				bad(n, "malformed '" + tag + "' line");
		};
		if (tag == "command") {
			std::string a;
			while (ls >> a)
				r.command.push_back(unescape(a));
		} else if (tag == "event") {
			std::string name, code;
			ls >> name >> code >> r.period;
			need(code.starts_with("0x"));
			r.event = unescape(name);
			r.number = static_cast<std::uint16_t>(std::stoul(code, nullptr, 16));
		} else if (tag == "modifiers") {
			std::string m;
			ls >> m;
			need(!m.empty());
			r.modifiers = unescape(m);
			try {
				if (!r.modifiers.empty())
					r.modifiers = canonical_modifiers(r.modifiers);
			} catch (const InvalidArgument& e) {
				bad(n, e.operation());
			}
		} else if (tag == "clock") {
			std::string name;
			ls >> name >> r.time.time_shift >> r.time.time_mult >> r.time.time_zero >> r.time.time_zero_ns;
			need(r.time.valid());
			r.time.clock = clock_of(name);
		} else if (tag == "skid") {
			ls >> r.skid;
			need(true);
		} else if (tag == "cpus") {
			std::string c;
			ls >> c;
			r.cpus = unescape(c);
		} else if (tag == "timer_freq") {
			ls >> r.timer_freq;
			need(true);
		} else if (tag == "lost") {
			ls >> r.lost;
			need(true);
		} else if (tag == "map") {
			Mapping m;
			std::string start, end, off, path;
			ls >> m.pid >> start >> end >> off >> path;
			need(!path.empty());
			m.start = std::stoull(start, nullptr, 16);
			m.end = std::stoull(end, nullptr, 16);
			m.offset = std::stoull(off, nullptr, 16);
			m.path = unescape(path);
			r.maps.push_back(std::move(m));
		} else if (tag == "s") {
			RecordedSample s;
			std::string mode, pc;
			ls >> s.cpu >> s.pid >> s.tid >> mode >> s.time >> pc;
			need(pc.starts_with("0x"));
			unsigned number = 0;
			const auto [end, ec] = std::from_chars(mode.data(), mode.data() + mode.size(), number);
			const bool numeric = ec == std::errc{} && end == mode.data() + mode.size();
			if (v1) {	// an exception level: EL1 and EL2 were the kernel's
				need(numeric && number <= 3);
				s.mode = number == 0 ? SampleMode::user : SampleMode::kernel;
			} else if (const auto m = parse_sample_mode(mode)) {
				s.mode = *m;
			} else {
				need(numeric && number <= 255);
				s.mode = static_cast<SampleMode>(number);
			}
			s.pc = std::stoull(pc, nullptr, 16);
			r.samples.push_back(s);
		} else if (!tag.empty()) {
			bad(n, "unknown record '" + tag + "'");
		}
	}
	return r;
}

std::string format_report(const Recording& r, const ReportOptions& options)
{
	Symbolizer sym;
	for (const Mapping& m : r.maps)
		sym.add(m);

	struct Hot {
		std::uint64_t count = 0;
		Resolved where;
	};
	// (mode, pid, pc); kernel and hypervisor samples are not told apart by pid or pc
	using PcKey = std::tuple<std::uint8_t, std::uint32_t, std::uint64_t>;
	std::map<PcKey, Hot> by_pc;
	std::map<std::tuple<char, std::string, std::string>, std::uint64_t> by_symbol;	// (level, symbol, dso)
	std::map<std::uint8_t, std::uint64_t> by_mode;
	std::uint64_t first_time = UINT64_MAX, last_time = 0;
	for (const RecordedSample& s : r.samples) {
		const bool user = s.mode == SampleMode::user;
		auto& h = by_pc[{static_cast<std::uint8_t>(s.mode), user ? s.pid : 0, user ? s.pc : 0}];
		if (h.count++ == 0)
			h.where = sym.resolve(s.pid, s.pc, s.mode);
		++by_mode[static_cast<std::uint8_t>(s.mode)];
		first_time = std::min(first_time, s.time);
		last_time = std::max(last_time, s.time);
	}
	for (const auto& [key, h] : by_pc) {
		std::string name = h.where.symbol;
		if (const std::size_t plus = name.rfind('+'); plus != std::string::npos)
			name.resize(plus);
		const char level = perf_level(static_cast<SampleMode>(std::get<0>(key)));
		by_symbol[{level, name.empty() ? "[unknown]" : name, h.where.dso}] += h.count;
	}

	const std::uint64_t total = r.samples.size();
	std::string cmd;
	for (const std::string& a : r.command)
		cmd += (cmd.empty() ? "" : " ") + a;
	std::ostringstream out;
	out << "# amupmu report: " << total << " samples of " << r.event << " (" << hex(r.number, 4) << ") every "
	    << r.period << " events, CPUs " << r.cpus << ", " << r.lost << " lost, " << r.skid
	    << " dropped as kernel skid\n";
	if (!r.modifiers.empty()) {
		std::string excluded;
		try {
			for (const std::string_view e : exclusion_names(parse_modifiers(r.modifiers)))
				excluded += (excluded.empty() ? "" : ", ") + std::string{e};
		} catch (const InvalidArgument&) {
			excluded = "?";
		}
		out << "# modifiers: " << r.modifiers << " (exclude " << (excluded.empty() ? "nothing" : excluded)
		    << ")\n";
	}
	if (total) {
		std::string modes;
		for (const auto& [m, c] : by_mode)
			modes += (modes.empty() ? "" : ", ") + mode_text(static_cast<SampleMode>(m)) + " " +
				 std::to_string(c);
		out << "# modes: " << modes << "\n";
		if (r.time.valid()) {
			const std::uint64_t t0 = sample_time_ns(first_time, r.time);
			const std::uint64_t t1 = sample_time_ns(last_time, r.time);
			out << "# time: " << seconds_text(t0) << " s to " << seconds_text(t1)
			    << " s CLOCK_MONOTONIC_RAW (" << seconds_text(t1 - t0) << " s, " << to_string(r.time.clock)
			    << ")\n";
		}
	}
	out << "# command: " << cmd << "\n\n";

	std::vector<std::pair<std::string, std::uint64_t>> syms;
	syms.reserve(by_symbol.size());
	for (const auto& [k, c] : by_symbol)
		syms.push_back({"[" + std::string(1, std::get<0>(k)) + "] " + std::get<1>(k) + "  " + std::get<2>(k), c});
	std::ranges::stable_sort(syms, std::greater{}, &std::pair<std::string, std::uint64_t>::second);
	out << "# hottest symbols\n#  overhead  samples  symbol  dso\n";
	for (std::size_t i = 0; i < syms.size() && i < options.top; ++i)
		out << "   " << percent(syms[i].second, total) << "  " << std::to_string(syms[i].second) << "  "
		    << syms[i].first << "\n";

	std::vector<std::pair<PcKey, Hot>> pcs(by_pc.begin(), by_pc.end());
	std::ranges::stable_sort(pcs, std::greater{}, [](const auto& p) { return p.second.count; });
	out << "\n# hottest PCs\n#  overhead  samples  pc  symbol  dso\n";
	for (std::size_t i = 0; i < pcs.size() && i < options.top; ++i) {
		const auto& [key, h] = pcs[i];
		const auto mode = static_cast<SampleMode>(std::get<0>(key));
		out << "   " << percent(h.count, total) << "  " << h.count << "  "
		    << (mode == SampleMode::user ? hex(std::get<2>(key), 1) : std::string{"-"}) << "  ["
		    << perf_level(mode) << "] " << (h.where.symbol.empty() ? "[unknown]" : h.where.symbol) << "  "
		    << h.where.dso << "\n";
	}
	return out.str();
}

} // namespace amupmu
