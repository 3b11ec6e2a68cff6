// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/error.hpp>
#include <amupmu/format.hpp>
#include <amupmu/record.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <istream>
#include <map>
#include <ostream>
#include <sstream>

namespace amupmu {

namespace {

constexpr std::string_view magic = "amupmu-record 1";

[[noreturn]] void bad(unsigned line, const std::string& why)
{
	throw InvalidArgument{"recording line " + std::to_string(line) + ": " + why, EINVAL};
}

// A path or argument with no spaces or newlines in the file: %XX-escape them.
std::string escape(std::string_view s)
{
	std::string out;
	for (const char c : s) {
		if (c == '%' || c == ' ' || c == '\n' || c == '\t' || c == '\r') {
			char buf[4];
			std::snprintf(buf, sizeof(buf), "%%%02X", static_cast<unsigned char>(c));
			out += buf;
		} else {
			out += c;
		}
	}
	return out.empty() ? "%" : out;	// "%" alone: the empty string
}

std::string unescape(std::string_view s)
{
	if (s == "%")
		return {};
	std::string out;
	for (std::size_t i = 0; i < s.size(); ++i) {
		if (s[i] == '%' && i + 2 < s.size()) {
			out += static_cast<char>(std::stoi(std::string{s.substr(i + 1, 2)}, nullptr, 16));
			i += 2;
		} else {
			out += s[i];
		}
	}
	return out;
}

std::string percent(std::uint64_t n, std::uint64_t total)
{
	char buf[16];
	std::snprintf(buf, sizeof(buf), "%6.2f%%", total ? 100.0 * static_cast<double>(n) / static_cast<double>(total) : 0.0);
	return buf;
}

} // namespace

RecordedSample to_recorded(const Sample& s) noexcept
{
	return {.cpu = s.cpu, .pid = s.pid, .tid = s.tid, .el = s.el, .time = s.time, .pc = s.pc};
}

void write_recording(std::ostream& out, const Recording& r)
{
	out << magic << "\n";
	out << "command";
	for (const std::string& a : r.command)
		out << " " << escape(a);
	out << "\n";
	out << "event " << escape(r.event) << " " << hex(r.number, 4) << " " << r.period << "\n";
	out << "cpus " << escape(r.cpus) << "\n";
	out << "timer_freq " << r.timer_freq << "\n";
	out << "lost " << r.lost << "\n";
	for (const Mapping& m : r.maps)
		out << "map " << m.pid << " " << hex(m.start, 1) << " " << hex(m.end, 1) << " " << hex(m.offset, 1)
		    << " " << escape(m.path) << "\n";
	for (const RecordedSample& s : r.samples)
		out << "s " << s.cpu << " " << s.pid << " " << s.tid << " " << unsigned{s.el} << " " << s.time << " "
		    << hex(s.pc, 1) << "\n";
}

Recording read_recording(std::istream& in)
{
	Recording r;
	std::string line;
	unsigned n = 0;
	if (!std::getline(in, line) || line != magic)
		bad(1, "not an amupmu recording (expected '" + std::string{magic} + "')");
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
			unsigned el = 0;
			std::string pc;
			ls >> s.cpu >> s.pid >> s.tid >> el >> s.time >> pc;
			need(pc.starts_with("0x") && el <= 3);
			s.el = static_cast<std::uint8_t>(el);
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
	std::map<std::pair<std::uint32_t, std::uint64_t>, Hot> by_pc;	// (pid, pc)
	std::map<std::pair<std::string, std::string>, std::uint64_t> by_symbol;
	for (const RecordedSample& s : r.samples) {
		auto& h = by_pc[{s.el ? 0 : s.pid, s.el ? 0 : s.pc}];
		if (h.count++ == 0)
			h.where = sym.resolve(s.pid, s.pc, s.el);
	}
	for (const auto& [key, h] : by_pc) {
		std::string name = h.where.symbol;
		if (const std::size_t plus = name.rfind('+'); plus != std::string::npos)
			name.resize(plus);
		by_symbol[{name.empty() ? "[unknown]" : name, h.where.dso}] += h.count;
	}

	const std::uint64_t total = r.samples.size();
	std::string cmd;
	for (const std::string& a : r.command)
		cmd += (cmd.empty() ? "" : " ") + a;
	std::ostringstream out;
	out << "# amupmu report: " << total << " samples of " << r.event << " (" << hex(r.number, 4) << ") every "
	    << r.period << " events, CPUs " << r.cpus << ", " << r.lost << " lost\n";
	out << "# command: " << cmd << "\n\n";

	std::vector<std::pair<std::string, std::uint64_t>> syms;
	syms.reserve(by_symbol.size());
	for (const auto& [k, c] : by_symbol)
		syms.push_back({k.first + "  " + k.second, c});
	std::ranges::stable_sort(syms, std::greater{}, &std::pair<std::string, std::uint64_t>::second);
	out << "# hottest symbols\n#  overhead  samples  symbol  dso\n";
	for (std::size_t i = 0; i < syms.size() && i < options.top; ++i)
		out << "   " << percent(syms[i].second, total) << "  " << std::to_string(syms[i].second) << "  "
		    << syms[i].first << "\n";

	std::vector<std::pair<std::pair<std::uint32_t, std::uint64_t>, Hot>> pcs(by_pc.begin(), by_pc.end());
	std::ranges::stable_sort(pcs, std::greater{}, [](const auto& p) { return p.second.count; });
	out << "\n# hottest PCs\n#  overhead  samples  pc  symbol  dso\n";
	for (std::size_t i = 0; i < pcs.size() && i < options.top; ++i) {
		const auto& [key, h] = pcs[i];
		out << "   " << percent(h.count, total) << "  " << h.count << "  "
		    << (h.where.dso == "[kernel]" ? std::string{"-"} : hex(key.second, 1)) << "  "
		    << (h.where.symbol.empty() ? "[unknown]" : h.where.symbol) << "  " << h.where.dso << "\n";
	}
	return out.str();
}

} // namespace amupmu
