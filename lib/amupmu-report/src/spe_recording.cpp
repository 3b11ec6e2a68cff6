// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/error.hpp>
#include <amupmu/report/spe_recording.hpp>

#include <amupmu/text/escape.hpp>

#include <cerrno>
#include <charconv>
#include <istream>
#include <ostream>
#include <string_view>

namespace amupmu::report {

namespace {

constexpr std::string_view magic = "amupmu-spe-record 1";
/// A data chunk is one drain of one buffer: at most the largest buffer.
constexpr std::uint64_t max_chunk = std::uint64_t{1} << 32;

[[noreturn]] void bad(unsigned line, const std::string& why)
{
	throw InvalidArgument{"SPE recording line " + std::to_string(line) + ": " + why, EINVAL};
}

std::string num(std::uint64_t v, int base = 10)
{
	char buf[24];
	char* p = buf;
	if (base == 16) {
		*p++ = '0';
		*p++ = 'x';
	}
	const auto [end, ec] = std::to_chars(p, buf + sizeof(buf), v, base);
	(void)ec;
	return {buf, end};
}

/// The words of a line, read left to right.
class Words {
public:
	Words(std::string_view line, unsigned n) : rest_(line), n_(n) {}

	/// The next word; "" at the end of the line.
	std::string_view word()
	{
		while (!rest_.empty() && rest_.front() == ' ')
			rest_.remove_prefix(1);
		const std::size_t sp = rest_.find(' ');
		const std::string_view w = rest_.substr(0, sp);
		rest_.remove_prefix(sp == std::string_view::npos ? rest_.size() : sp);
		return w;
	}

	/// The next word as a number (0x prefix: hex); the line is refused
	/// when it is missing or not a number in range.
	template <typename T>
	T number(std::string_view what)
	{
		std::string_view w = word();
		int base = 10;
		if (w.starts_with("0x")) {
			w.remove_prefix(2);
			base = 16;
		}
		T v{};
		const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v, base);
		if (w.empty() || ec != std::errc{} || end != w.data() + w.size())
			bad(n_, "bad " + std::string{what});
		return v;
	}

	/// "key=value" with the key expected.
	template <typename T>
	T keyed(std::string_view key)
	{
		std::string_view w = word();
		if (!w.starts_with(key) || w.size() <= key.size() || w[key.size()] != '=')
			bad(n_, "expected " + std::string{key} + "=");
		Words v{w.substr(key.size() + 1), n_};
		return v.number<T>(key);
	}

	std::string text(std::string_view what)
	{
		const std::string_view w = word();
		auto s = text::unescape_word(w);
		if (w.empty() || !s)
			bad(n_, "bad " + std::string{what});
		return std::move(*s);
	}

	void done()
	{
		if (!word().empty())
			bad(n_, "trailing words");
	}

private:
	std::string_view rest_;
	unsigned n_;
};

} // namespace

void write_spe_recording(std::ostream& out, const SpeRecording& r)
{
	out << magic << "\n";
	out << "command";
	for (const std::string& a : r.command)
		out << " " << text::escape_word(a);
	out << "\n";
	out << "cpus " << text::escape_word(r.cpus) << "\n";
	out << "backend " << text::escape_word(r.backend) << "\n";
	out << "timer_freq " << num(r.timer_freq) << "\n";
	out << "pid " << num(r.pid) << "\n";
	const SpeRecordedConfig& c = r.config;
	out << "config flags=" << num(c.flags, 16) << " enables=" << num(c.enables, 16) << " pct=" << num(c.pct)
	    << " pmsfcr=" << num(c.pmsfcr, 16) << " pmsevfr=" << num(c.pmsevfr, 16) << " pmsnevfr="
	    << num(c.pmsnevfr, 16) << " min_latency=" << num(c.min_latency) << " interval=" << num(c.interval)
	    << " buf_pages=" << num(c.buf_pages) << "\n";
	for (const SpeRecordedCpu& s : r.cpu_stats)
		out << "cpu " << num(s.cpu) << " state=" << num(s.state, 16) << " bytes=" << num(s.bytes)
		    << " records=" << num(s.records) << " lost_bytes=" << num(s.lost_bytes)
		    << " truncations=" << num(s.truncations) << " collisions=" << num(s.collisions)
		    << " faults=" << num(s.faults) << " last_pmbsr=" << num(s.last_pmbsr, 16)
		    << " events=" << num(s.events) << " midr=" << num(s.midr, 16) << "\n";
	for (const Mapping& m : r.maps)
		out << "map " << num(m.pid) << " " << num(m.start, 16) << " " << num(m.end, 16) << " "
		    << num(m.offset, 16) << " " << text::escape_word(m.path) << "\n";
	for (const SpeChunk& ch : r.chunks) {
		out << "data " << num(ch.cpu) << " " << num(ch.data.size()) << "\n";
		out.write(reinterpret_cast<const char*>(ch.data.data()), static_cast<std::streamsize>(ch.data.size()));
		out << "\n";
	}
	out << "end\n";
}

SpeRecording read_spe_recording(std::istream& in)
{
	SpeRecording r;
	std::string line;
	if (!std::getline(in, line) || line != magic)
		bad(1, "not an amupmu SPE recording (expected '" + std::string{magic} + "')");
	unsigned n = 1;
	bool ended = false;
	while (!ended && std::getline(in, line)) {
		++n;
		Words w{line, n};
		const std::string_view tag = w.word();
		if (tag == "command") {
			for (std::string_view a = w.word(); !a.empty(); a = w.word()) {
				auto s = text::unescape_word(a);
				if (!s)
					bad(n, "bad argument");
				r.command.push_back(std::move(*s));
			}
		} else if (tag == "cpus") {
			r.cpus = w.text("cpus");
		} else if (tag == "backend") {
			r.backend = w.text("backend");
		} else if (tag == "timer_freq") {
			r.timer_freq = w.number<std::uint64_t>("timer_freq");
		} else if (tag == "pid") {
			r.pid = w.number<std::uint32_t>("pid");
		} else if (tag == "config") {
			SpeRecordedConfig& c = r.config;
			c.flags = w.keyed<std::uint32_t>("flags");
			c.enables = w.keyed<std::uint32_t>("enables");
			c.pct = w.keyed<std::uint32_t>("pct");
			c.pmsfcr = w.keyed<std::uint64_t>("pmsfcr");
			c.pmsevfr = w.keyed<std::uint64_t>("pmsevfr");
			c.pmsnevfr = w.keyed<std::uint64_t>("pmsnevfr");
			c.min_latency = w.keyed<std::uint32_t>("min_latency");
			c.interval = w.keyed<std::uint32_t>("interval");
			c.buf_pages = w.keyed<std::uint32_t>("buf_pages");
		} else if (tag == "cpu") {
			SpeRecordedCpu s;
			s.cpu = w.number<std::uint32_t>("cpu");
			s.state = w.keyed<std::uint32_t>("state");
			s.bytes = w.keyed<std::uint64_t>("bytes");
			s.records = w.keyed<std::uint64_t>("records");
			s.lost_bytes = w.keyed<std::uint64_t>("lost_bytes");
			s.truncations = w.keyed<std::uint64_t>("truncations");
			s.collisions = w.keyed<std::uint64_t>("collisions");
			s.faults = w.keyed<std::uint64_t>("faults");
			s.last_pmbsr = w.keyed<std::uint64_t>("last_pmbsr");
			s.events = w.keyed<std::uint64_t>("events");
			s.midr = w.keyed<std::uint64_t>("midr");
			r.cpu_stats.push_back(s);
		} else if (tag == "map") {
			Mapping m;
			m.pid = w.number<std::uint32_t>("pid");
			m.start = w.number<std::uint64_t>("start");
			m.end = w.number<std::uint64_t>("end");
			m.offset = w.number<std::uint64_t>("offset");
			m.path = w.text("path");
			r.maps.push_back(std::move(m));
		} else if (tag == "data") {
			SpeChunk ch;
			ch.cpu = w.number<std::uint32_t>("cpu");
			const auto size = w.number<std::uint64_t>("size");
			w.done();
			if (size > max_chunk)
				bad(n, "data chunk of " + num(size) + " bytes");
			ch.data.resize(static_cast<std::size_t>(size));
			in.read(reinterpret_cast<char*>(ch.data.data()), static_cast<std::streamsize>(size));
			if (static_cast<std::uint64_t>(in.gcount()) != size || in.get() != '\n')
				bad(n, "data chunk cut short (" + num(size) + " bytes expected)");
			r.chunks.push_back(std::move(ch));
			continue;
		} else if (tag == "end") {
			ended = true;
		} else {
			bad(n, "unknown record '" + std::string{tag} + "'");
		}
		w.done();
	}
	if (!ended)
		bad(n, "the recording ends without its 'end' line (cut short?)");
	return r;
}

} // namespace amupmu::report
