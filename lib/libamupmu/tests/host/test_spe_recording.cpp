// SPDX-License-Identifier: LGPL-2.1-or-later
// Backend: host. The SPE recording file: round trip, binary data with
// newlines and NULs, escaped words, and every malformed form refused with
// the line named.
#include <amupmu/error.hpp>
#include <amupmu/report/spe_recording.hpp>

#include <catch2/catch.hpp>

#include <sstream>

using namespace amupmu;
using namespace amupmu::report;
using Catch::Matchers::Contains;

namespace {

SpeRecording sample_recording()
{
	SpeRecording r;
	r.command = {"./work load", "-n", "", "100%"};
	r.cpus = "0-1";
	r.backend = "mock";
	r.timer_freq = 62500000;
	r.pid = 4242;
	r.config = {.flags = 2, .enables = 0x21, .pct = 0, .pmsfcr = 0x20002, .pmsevfr = 0x2,
		    .pmsnevfr = 0, .min_latency = 0, .interval = 1024, .buf_pages = 16};
	r.cpu_stats.push_back({.cpu = 0, .state = 1, .bytes = 128, .records = 2, .lost_bytes = 64,
			       .truncations = 1, .collisions = 2, .faults = 0, .last_pmbsr = 0x4000000,
			       .events = 3, .midr = 0x410fd480});
	r.cpu_stats.push_back({.cpu = 1});
	r.maps.push_back({.pid = 4242, .start = 0x400000, .end = 0x401000, .offset = 0, .path = "/tmp/a b"});
	SpeChunk c0{.cpu = 0};
	for (unsigned i = 0; i < 300; ++i)
		c0.data.push_back(static_cast<std::byte>(i * 7));	// newlines, NULs, 0xff
	r.chunks.push_back(c0);
	r.chunks.push_back({.cpu = 1, .data = {}});
	r.chunks.push_back({.cpu = 0, .data = {std::byte{'\n'}, std::byte{'\n'}}});
	return r;
}

std::string written(const SpeRecording& r)
{
	std::ostringstream out;
	write_spe_recording(out, r);
	return out.str();
}

SpeRecording parsed(const std::string& text)
{
	std::istringstream in{text};
	return read_spe_recording(in);
}

} // namespace

TEST_CASE("SPE recording: write then read gives the same recording", "[host][spe][recording]")
{
	const SpeRecording r = sample_recording();
	const std::string text = written(r);
	CHECK(text.starts_with("amupmu-spe-record 1\n"));
	CHECK(text.ends_with("\nend\n"));
	CHECK(parsed(text) == r);
	CHECK(parsed(written(SpeRecording{})) == SpeRecording{});
}

TEST_CASE("SPE recording: malformed files are refused with the line", "[host][spe][recording]")
{
	const std::string good = written(sample_recording());
	CHECK_THROWS_WITH(parsed("amupmu-record 2\n"), Contains("line 1"));
	CHECK_THROWS_AS(parsed(""), InvalidArgument);

	// cut anywhere before "end": refused (a data chunk cut short, or no "end")
	for (std::size_t cut : {good.size() - 2, good.size() - 5, good.size() / 2, std::size_t{40}})
		CHECK_THROWS_AS(parsed(good.substr(0, cut)), InvalidArgument);

	const auto replaced = [&](std::string_view from, std::string_view to) {
		std::string s = good;
		const auto at = s.find(from);
		REQUIRE(at != std::string::npos);
		s.replace(at, from.size(), to);
		return s;
	};
	CHECK_THROWS_WITH(parsed(replaced("timer_freq 62500000", "timer_freq 6x")), Contains("line 5"));
	CHECK_THROWS_WITH(parsed(replaced("timer_freq 62500000", "timer_freq")), Contains("timer_freq"));
	CHECK_THROWS_WITH(parsed(replaced("pid 4242", "pid 99999999999")), Contains("bad pid"));
	CHECK_THROWS_WITH(parsed(replaced("interval=1024", "interval=-1")), Contains("interval"));
	CHECK_THROWS_WITH(parsed(replaced("enables=0x21", "enable=0x21")), Contains("enables="));
	CHECK_THROWS_WITH(parsed(replaced("backend mock", "backend mock extra")), Contains("trailing"));
	CHECK_THROWS_WITH(parsed(replaced("/tmp/a%20b", "/tmp/a%2")), Contains("path"));
	CHECK_THROWS_WITH(parsed(replaced("data 0 300\n", "data 0 301\n")), Contains("cut short"));
	CHECK_THROWS_WITH(parsed(replaced("data 0 300\n", "data 0 99999999999\n")), Contains("bytes"));
	CHECK_THROWS_WITH(parsed(replaced("\nend\n", "\nbogus\n")), Contains("unknown record 'bogus'"));
}
