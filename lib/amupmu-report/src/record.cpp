// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/bits.hpp>
#include <amupmu/error.hpp>
#include <amupmu/events.hpp>
#include <amupmu/report/record.hpp>

#include <amupmu/text/columns.hpp>
#include <amupmu/text/numtext.hpp>
#include <amupmu/text/escape.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <istream>
#include <limits>
#include <map>
#include <ostream>
#include <sstream>
#include <tuple>

namespace amupmu::report {

namespace {

constexpr std::string_view magic = "amupmu-record 3";
constexpr std::string_view magic_v2 = "amupmu-record 2";
constexpr std::string_view magic_v1 = "amupmu-record 1";

[[noreturn]] void bad(unsigned line, const std::string& why)
{
	throw InvalidArgument{"recording line " + std::to_string(line) + ": " + why, EINVAL};
}

// The words of a line, split at spaces and tabs (the file escapes them).
std::vector<std::string_view> words(std::string_view line)
{
	std::vector<std::string_view> out;
	while (!line.empty()) {
		const std::size_t start = line.find_first_not_of(" \t\r");
		if (start == std::string_view::npos)
			break;
		line.remove_prefix(start);
		const std::size_t end = std::min(line.find_first_of(" \t\r"), line.size());
		out.push_back(line.substr(0, end));
		line.remove_prefix(end);
	}
	return out;
}

std::string escape(std::string_view s)
{
	return text::escape_word(s);
}

std::string unescape(unsigned line, std::string_view s)
{
	auto out = text::unescape_word(s);
	if (!out)
		bad(line, "bad %-escape in '" + std::string{s} + "'");
	return std::move(*out);
}

// A number of a recording's line into out: decimal, or 0x<hex> when
// is_hex; InvalidArgument naming the line when it is not one or does not
// fit in T.
template <typename T>
void read_number(unsigned line, const std::string& tag, std::string_view field, std::string_view s, T& out,
		 bool is_hex)
{
	if (is_hex && !s.starts_with("0x"))
		bad(line, "malformed '" + tag + "' line: " + std::string{field} + " '" + std::string{s} +
				  "' is not 0x<hex>");
	const std::string_view digits = is_hex ? s.substr(2) : s;
	std::uint64_t v = 0;
	const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, is_hex ? 16 : 10);
	const bool too_wide = ec == std::errc::result_out_of_range;
	if (!too_wide && (ec != std::errc{} || end != digits.data() + digits.size() || digits.empty()))
		bad(line, "malformed '" + tag + "' line: " + std::string{field} + " '" + std::string{s} +
				  "' is not a number");
	if (too_wide || v > std::numeric_limits<T>::max())
		bad(line, std::string{field} + " " + std::string{s} + " does not fit in " +
				  std::to_string(std::numeric_limits<T>::digits) + " bits");
	out = static_cast<T>(v);
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
	return {.cpu = s.cpu, .pid = s.pid, .tid = s.tid, .mode = s.mode, .time = s.time, .pc = s.pc, .event = s.event};
}

std::vector<RecordedEvent> Recording::events() const
{
	std::vector<RecordedEvent> all{{.event = event, .number = number, .period = period, .modifiers = modifiers}};
	all.insert(all.end(), more_events.begin(), more_events.end());
	return all;
}

std::string format_record_summary(const Recording& r, std::string_view output)
{
	std::uint64_t by_mode[3] = {};
	for (const RecordedSample& s : r.samples)
		if (static_cast<unsigned>(s.mode) < 3)
			++by_mode[static_cast<unsigned>(s.mode)];
	std::string names;
	for (const RecordedEvent& e : r.events())
		names += (names.empty() ? "" : ",") + e.event;
	std::string out = "amupmu record: " + text::decimal(r.samples.size()) + " samples of " + names;
	out += " every " + text::decimal(r.period);
	if (!r.more_events.empty())
		out += " (first event)";
	out += " (user " + text::decimal(by_mode[0]);
	out += ", kernel " + text::decimal(by_mode[1]);
	out += ", hv " + text::decimal(by_mode[2]);
	out += "; " + text::decimal(r.lost) + " lost, ";
	out += text::decimal(r.skid) + " dropped as kernel skid), ";
	out += text::decimal(r.maps.size()) + " mappings -> " + std::string{output} + "\n";
	return out;
}

std::string Recording::comm(std::uint32_t pid, std::uint32_t tid) const
{
	if (pid == 0)
		return "swapper";
	for (const std::uint32_t id : {tid, pid})
		if (const auto it = comms.find(id); it != comms.end())
			return it->second;
	return ":" + text::decimal(tid);
}

void write_recording(std::ostream& out, const Recording& r)
{
	// built as a string: out's locale would group the digits
	using text::decimal;
	const bool v3 = !r.more_events.empty() || r.frequency || !r.comms.empty() || !r.kernel_symbols.empty() ||
			std::ranges::any_of(r.samples, [](const RecordedSample& x) { return x.event != 0; });
	std::string t{v3 ? magic : magic_v2};
	t += "\ncommand";
	for (const std::string& a : r.command)
		t += " " + escape(a);
	t += "\n";
	for (const RecordedEvent& e : r.events()) {
		t += "event " + escape(e.event) + " " + hex(e.number, 4) + " " + decimal(e.period) + "\n";
		t += "modifiers " + escape(e.modifiers) + "\n";
	}
	if (r.frequency)
		t += "frequency " + decimal(r.frequency) + "\n";
	t += "cpus " + escape(r.cpus) + "\n";
	t += "timer_freq " + decimal(r.timer_freq) + "\n";
	if (r.time.valid())
		t += "clock " + std::string{to_string(r.time.clock)} + " " + decimal(r.time.time_shift) + " " +
		     decimal(r.time.time_mult) + " " + decimal(r.time.time_zero) + " " + decimal(r.time.time_zero_ns) +
		     "\n";
	t += "lost " + decimal(r.lost) + "\n";
	t += "skid " + decimal(r.skid) + "\n";
	for (const auto& [pid, name] : r.comms)
		t += "comm " + decimal(pid) + " " + escape(name) + "\n";
	for (const ElfSymbol& k : r.kernel_symbols)
		t += "ksym " + hex(k.address, 1) + " " + decimal(k.size) + " " + escape(k.name) + "\n";
	out << t;
	for (const Mapping& m : r.maps)
		out << "map " + decimal(m.pid) + " " + hex(m.start, 1) + " " + hex(m.end, 1) + " " + hex(m.offset, 1) +
			       " " + escape(m.path) + "\n";
	for (const RecordedSample& s : r.samples)
		out << "s " + decimal(s.cpu) + " " + decimal(s.pid) + " " + decimal(s.tid) + " " + mode_text(s.mode) +
			       " " + decimal(s.time) + " " + hex(s.pc, 1) + (v3 ? " " + decimal(s.event) : "") + "\n";
}

Recording read_recording(std::istream& in)
{
	Recording r;
	std::string line;
	if (!std::getline(in, line) || (line != magic && line != magic_v2 && line != magic_v1))
		bad(1, "not an amupmu recording (expected '" + std::string{magic} + "')");
	const bool v1 = line == magic_v1;
	const bool v3 = line == magic;
	unsigned n = 1;
	unsigned events = 0;	// event lines so far
	// the modifiers line after an event line is that event's
	std::string* last_modifiers = &r.modifiers;
	while (std::getline(in, line)) {
		++n;
		const std::vector<std::string_view> w = words(line);
		if (w.empty())
			continue;
		const std::string tag{w[0]};
		// exactly count words after the tag
		const auto need = [&](std::size_t count) {
			if (w.size() != count + 1)
				bad(n, "malformed '" + tag + "' line (" + std::to_string(count) + " fields expected)");
		};
		const auto num = [&](std::string_view field, std::string_view s, auto& out, bool is_hex = false) {
			read_number(n, tag, field, s, out, is_hex);
		};
		if (tag == "command") {
			for (std::size_t i = 1; i < w.size(); ++i)
				r.command.push_back(unescape(n, w[i]));
		} else if (tag == "event") {
			need(3);
			if (events > 0 && !v3)
				bad(n, "a second 'event' line (one event before format 3)");
			if (events == 256)
				bad(n, "more than 256 events");
			RecordedEvent e;
			e.event = unescape(n, w[1]);
			num("event code", w[2], e.number, true);
			num("period", w[3], e.period);
			if (events++ == 0) {
				r.event = std::move(e.event);
				r.number = e.number;
				r.period = e.period;
			} else {
				r.more_events.push_back(std::move(e));
				last_modifiers = &r.more_events.back().modifiers;
			}
		} else if (tag == "modifiers") {
			need(1);
			std::string& mods = *last_modifiers;
			mods = unescape(n, w[1]);
			try {
				if (!mods.empty())
					mods = canonical_modifiers(mods);
			} catch (const InvalidArgument& e) {
				bad(n, e.operation());
			}
		} else if (tag == "frequency" && v3) {
			need(1);
			num("frequency", w[1], r.frequency);
		} else if (tag == "comm" && v3) {
			need(2);
			std::uint32_t pid = 0;
			num("pid", w[1], pid);
			r.comms[pid] = unescape(n, w[2]);
		} else if (tag == "ksym" && v3) {
			need(3);
			ElfSymbol k;
			num("address", w[1], k.address, true);
			num("size", w[2], k.size);
			k.name = unescape(n, w[3]);
			r.kernel_symbols.push_back(std::move(k));
		} else if (tag == "clock") {
			need(5);
			num("time_shift", w[2], r.time.time_shift);
			num("time_mult", w[3], r.time.time_mult);
			num("time_zero", w[4], r.time.time_zero);
			num("time_zero_ns", w[5], r.time.time_zero_ns);
			if (!r.time.valid())
				bad(n, "malformed 'clock' line: no conversion (time_mult 0 or time_shift above 63)");
			r.time.clock = clock_of(w[1]);
		} else if (tag == "skid") {
			need(1);
			num("skid", w[1], r.skid);
		} else if (tag == "cpus") {
			need(1);
			r.cpus = unescape(n, w[1]);
		} else if (tag == "timer_freq") {
			need(1);
			num("timer_freq", w[1], r.timer_freq);
		} else if (tag == "lost") {
			need(1);
			num("lost", w[1], r.lost);
		} else if (tag == "map") {
			need(5);
			Mapping m;
			num("pid", w[1], m.pid);
			num("start", w[2], m.start, true);
			num("end", w[3], m.end, true);
			num("offset", w[4], m.offset, true);
			m.path = unescape(n, w[5]);
			r.maps.push_back(std::move(m));
		} else if (tag == "s") {
			need(v3 ? 7 : 6);
			RecordedSample s;
			num("cpu", w[1], s.cpu);
			num("pid", w[2], s.pid);
			num("tid", w[3], s.tid);
			const auto number = text::parse<unsigned>(w[4]);
			if (v1) {	// an exception level: EL1 and EL2 were the kernel's
				if (!number || *number > 3)
					bad(n, "malformed 's' line: exception level '" + std::string{w[4]} + "'");
				s.mode = *number == 0 ? SampleMode::user : SampleMode::kernel;
			} else if (const auto m = parse_sample_mode(w[4])) {
				s.mode = *m;
			} else {
				if (!number || *number > 255)
					bad(n, "malformed 's' line: mode '" + std::string{w[4]} + "'");
				s.mode = static_cast<SampleMode>(*number);
			}
			num("time", w[5], s.time);
			num("pc", w[6], s.pc, true);
			if (v3) {
				num("event", w[7], s.event);
				if (s.event >= std::max(events, 1u))
					bad(n, "sample of event " + std::string{w[7]} + ", of " +
						       std::to_string(std::max(events, 1u)) + " events");
			}
			r.samples.push_back(s);
		} else {
			bad(n, "unknown record '" + tag + "'");
		}
	}
	return r;
}

std::vector<std::string> parse_sort_keys(std::string_view list)
{
	std::vector<std::string> keys;
	for (std::string_view rest = list; !list.empty();) {
		const std::size_t comma = rest.find(',');
		std::string key{rest.substr(0, comma)};
		if (key == "symbol")
			key = "sym";
		if (key != "sym" && key != "dso" && key != "comm" && key != "pid" && key != "srcline")
			throw InvalidArgument{"--sort: unknown key '" + key + "' (sym, dso, comm, pid, srcline)", EINVAL};
		if (std::ranges::find(keys, key) != keys.end())
			throw InvalidArgument{"--sort: key '" + key + "' listed twice", EINVAL};
		keys.push_back(std::move(key));
		if (comma == std::string_view::npos)
			break;
		rest.remove_prefix(comma + 1);
	}
	if (keys.empty())
		throw InvalidArgument{"--sort needs a key (sym, dso, comm, pid, srcline)", EINVAL};
	return keys;
}

std::string format_report(const Recording& r, const ReportOptions& options)
{
	Symbolizer sym;
	for (const Mapping& m : r.maps)
		sym.add(m);
	sym.set_kernel_symbols(r.kernel_symbols);
	// kernel PCs apart only when they can be named
	const bool kernel_pcs = !r.kernel_symbols.empty();

	struct Hot {
		std::uint64_t count = 0;
		Resolved where;
	};
	// (mode, pid, tid, pc); hypervisor samples (and kernel ones without
	// kernel symbols) are not told apart by pc
	using PcKey = std::tuple<std::uint8_t, std::uint32_t, std::uint32_t, std::uint64_t>;
	std::map<PcKey, Hot> by_pc;
	std::map<std::uint8_t, std::uint64_t> by_mode;
	std::uint64_t first_time = UINT64_MAX, last_time = 0;
	for (const RecordedSample& s : r.samples) {
		const bool by_address = s.mode == SampleMode::user || (s.mode == SampleMode::kernel && kernel_pcs);
		auto& h = by_pc[{static_cast<std::uint8_t>(s.mode), s.pid, s.tid, by_address ? s.pc : 0}];
		if (h.count++ == 0)
			h.where = sym.resolve(s.pid, s.pc, s.mode);
		++by_mode[static_cast<std::uint8_t>(s.mode)];
		first_time = std::min(first_time, s.time);
		last_time = std::max(last_time, s.time);
	}
	// perf report's default order: command, then the symbol and its file
	const std::vector<std::string> keys =
		options.sort.empty() ? std::vector<std::string>{"comm", "sym", "dso"} : options.sort;
	std::map<std::vector<std::string>, std::uint64_t> by_key;
	for (const auto& [key, h] : by_pc) {
		std::string name = h.where.symbol;
		if (const std::size_t plus = name.rfind('+'); plus != std::string::npos)
			name.resize(plus);
		const char level = perf_level(static_cast<SampleMode>(std::get<0>(key)));
		std::vector<std::string> columns;
		for (const std::string& k : keys) {
			if (k == "sym")
				columns.push_back("[" + std::string(1, level) + "] " + (name.empty() ? "[unknown]" : name));
			else if (k == "dso")
				columns.push_back(h.where.dso);
			else if (k == "comm")
				columns.push_back(r.comm(std::get<1>(key), std::get<2>(key)));
			else if (k == "srcline")
				columns.push_back(srcline(h.where).empty() ? "[unknown]" : srcline(h.where));
			else
				columns.push_back(text::decimal(std::get<1>(key)));
		}
		by_key[columns] += h.count;
	}

	const std::uint64_t total = r.samples.size();
	const auto shown = [&](std::uint64_t count) {
		return total && static_cast<double>(count) * 100.0 >= options.percent_limit * static_cast<double>(total);
	};
	std::string cmd;
	for (const std::string& a : r.command)
		cmd += (cmd.empty() ? "" : " ") + a;
	std::ostringstream out;
	std::string events = r.event + " (" + hex(r.number, 4) + ") every " + text::decimal(r.period) + " events";
	for (const RecordedEvent& e : r.more_events)
		events += ", " + e.event + " (" + hex(e.number, 4) + ") every " + text::decimal(e.period) + " events";
	out << "# amupmu report: " << text::decimal(total) << " samples of " << events << ", CPUs " << r.cpus << ", "
	    << text::decimal(r.lost) << " lost, " << text::decimal(r.skid) << " dropped as kernel skid\n";
	if (r.frequency)
		out << "# -F " << text::decimal(r.frequency) << ": periods from the events' rates when recording\n";
	if (!r.more_events.empty()) {
		std::vector<std::uint64_t> per_event(1 + r.more_events.size());
		for (const RecordedSample& s : r.samples)
			++per_event[std::min<std::size_t>(s.event, per_event.size() - 1)];
		const std::vector<RecordedEvent> all = r.events();
		std::string list;
		for (std::size_t e = 0; e < all.size(); ++e)
			list += (list.empty() ? "" : ", ") + all[e].event + " " + text::decimal(per_event[e]);
		out << "# samples per event: " << list << "\n";
	}
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
			out << "# time: " << text::seconds(t0) << " s to " << text::seconds(t1)
			    << " s CLOCK_MONOTONIC_RAW (" << text::seconds(t1 - t0) << " s, " << to_string(r.time.clock)
			    << ")\n";
		}
	}
	if (options.percent_limit > 0)
		out << "# lines below " << text::fixed(options.percent_limit, 2) << "% left out\n";
	out << "# command: " << cmd << "\n\n";

	std::vector<std::pair<std::string, std::uint64_t>> rows;
	rows.reserve(by_key.size());
	for (const auto& [columns, c] : by_key) {
		std::string line;
		for (const std::string& col : columns)
			line += (line.empty() ? "" : "  ") + col;
		rows.push_back({line, c});
	}
	std::ranges::stable_sort(rows, std::greater{}, &std::pair<std::string, std::uint64_t>::second);
	std::string header;
	for (const std::string& k : keys)
		header += "  " + std::string{k == "sym" ? "symbol" : k == "comm" ? "command" : k};
	out << "# hottest symbols\n#  overhead  samples" << header << "\n";
	for (std::size_t i = 0; i < rows.size() && i < options.top && shown(rows[i].second); ++i)
		out << "   " << text::pad_left(text::percent(rows[i].second, total), 7) << "  "
		    << text::decimal(rows[i].second) << "  " << rows[i].first << "\n";

	// the PCs of every thread of a process together
	std::map<std::tuple<std::uint8_t, std::uint32_t, std::uint64_t>, Hot> by_process_pc;
	for (const auto& [key, h] : by_pc) {
		Hot& to = by_process_pc[{std::get<0>(key), std::get<1>(key), std::get<3>(key)}];
		if (to.count == 0)
			to.where = h.where;
		to.count += h.count;
	}
	std::vector<std::pair<std::tuple<std::uint8_t, std::uint32_t, std::uint64_t>, Hot>> pcs(by_process_pc.begin(),
												 by_process_pc.end());
	std::ranges::stable_sort(pcs, std::greater{}, [](const auto& p) { return p.second.count; });
	const bool lines = std::ranges::any_of(pcs, [](const auto& p) { return p.second.where.line != 0; });
	out << "\n# hottest PCs\n#  overhead  samples  pc  symbol  dso" << (lines ? "  srcline" : "") << "\n";
	for (std::size_t i = 0; i < pcs.size() && i < options.top && shown(pcs[i].second.count); ++i) {
		const auto& [key, h] = pcs[i];
		const auto mode = static_cast<SampleMode>(std::get<0>(key));
		const bool address = mode == SampleMode::user || (mode == SampleMode::kernel && kernel_pcs);
		out << "   " << text::pad_left(text::percent(h.count, total), 7) << "  " << text::decimal(h.count) << "  "
		    << (address ? hex(std::get<2>(key), 1) : std::string{"-"}) << "  [" << perf_level(mode) << "] "
		    << (h.where.symbol.empty() ? "[unknown]" : h.where.symbol) << "  " << h.where.dso
		    << (h.where.line ? "  " + srcline(h.where) : "") << "\n";
	}
	return out.str();
}

} // namespace amupmu::report
