// SPDX-License-Identifier: GPL-2.0
//
// Backend: host. The SPE report (amupmu spe report): synthetic recordings
// built with the test encoder, with known PCs, latencies, data sources and
// operation types; every aggregate checked exactly, percentiles against a
// brute-force sort, user PCs symbolised through this test binary's own
// mappings, the JSON parsed, the SVG checked as XML, damaged chunks counted,
// and the text the same under a locale with other digit separators.
#include "json_check.hpp"
#include "spe_encoder.hpp"

#include <amupmu/elf.hpp>
#include <amupmu/report/spe_report.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <locale>
#include <random>
#include <sstream>
#include <vector>

#include <unistd.h>

using namespace amupmu;
using namespace amupmu::report;
using Catch::Matchers::Contains;

extern "C" [[gnu::noinline, gnu::used]] int amupmu_spe_report_marker(int x)
{
	int y = x;
	for (int i = 0; i < x; ++i)
		y = y * 7 + i;	// a body of more than a few bytes: PCs +0 and +2 fall inside
	return y;
}

extern "C" [[gnu::noinline, gnu::used]] int amupmu_spe_report_other(int x)
{
	return amupmu_spe_report_marker(x) + 1;
}

namespace {

constexpr std::uint64_t midr_neoverse_n1 = 0x413FD0C1;	// r3p1
constexpr std::uint64_t midr_unknown = 0x000F0510;	// QEMU-style: implementer 0x00
constexpr std::uint64_t kernel_pc = 0xffff800008001000ULL;
constexpr std::uint64_t el1 = 1ULL << 61;

std::uint64_t kernel_payload(std::uint64_t va)
{
	return (va & 0x00FFFFFFFFFFFFFFULL) | el1;
}

std::uint64_t fn_address(int (*f)(int))
{
	return reinterpret_cast<std::uint64_t>(f);
}

// Brute force: sort, take the element at rank ceil(n * num / den).
std::uint16_t brute_quantile(std::vector<std::uint16_t> v, std::uint64_t num, std::uint64_t den)
{
	std::sort(v.begin(), v.end());
	std::uint64_t rank = (v.size() * num + den - 1) / den;
	rank = std::max<std::uint64_t>(rank, 1);
	return v[rank - 1];
}

// The known recording of the file's comment: CPU 0 a Neoverse N1, CPU 1 of
// an implementer the data-source table does not know.
SpeRecording known_recording(std::uint32_t pid, const std::string& backend = "mock")
{
	const std::uint64_t hot = fn_address(&amupmu_spe_report_marker);
	const std::uint64_t other = fn_address(&amupmu_spe_report_other);
	SpeRecording r;
	r.command = {"./spe-test", "--x"};
	r.cpus = "0-1";
	r.backend = backend;
	r.timer_freq = 1000000;
	r.pid = 777;	// the CONTEXT packets name the test's own pid
	r.cpu_stats.push_back({.cpu = 0, .lost_bytes = 64, .truncations = 1, .collisions = 2, .midr = midr_neoverse_n1});
	r.cpu_stats.push_back({.cpu = 1, .faults = 3, .midr = midr_unknown});
	r.maps = read_proc_maps(pid);

	spe_enc::Buf a;
	for (unsigned i = 0; i < 30; ++i)	// user loads, latency 1..30, L2 then DRAM
		a.op(1, 0x00)
			.address(0, hot)
			.address(2, 0x10000 + 8 * i)
			.counter(0, static_cast<std::uint16_t>(i + 1))
			.counter(1, 2)
			.counter(2, 1)
			.events(0x0E)
			.data_source(i < 20 ? 0x8 : 0xe)
			.context(0, pid)
			.timestamp(1000 + i);
	for (unsigned i = 0; i < 10; ++i)	// kernel stores, one address, no data source
		a.op(1, 0x01).address(0, kernel_payload(kernel_pc)).address(2, 0x20000).counter(0, 100).events(0x02).end();
	spe_enc::Buf b;
	for (unsigned i = 0; i < 5; ++i)	// mispredicted conditional branches
		b.op(2, 0x01).address(0, hot + 2).counter(0, 5).events(0x82).context(0, pid).end();
	r.chunks.push_back({.cpu = 0, .data = a.bytes});
	r.chunks.push_back({.cpu = 0, .data = b.bytes});

	spe_enc::Buf c;
	for (unsigned i = 0; i < 4; ++i)	// SIMD&FP loads, data source 0x8 of an unknown encoding
		c.op(1, 0x04).address(0, other).address(2, 0x10000).counter(0, 200).data_source(0x8).context(0, pid).timestamp(
			5000 + i);
	spe_enc::Buf d;	// damaged: one good record, one with an unknown packet, one cut
	d.op(1, 0x00).counter(0, 7).end();
	d.op(1, 0x00).raw({0x02, 0x55, 0x66}).counter(0, 9).end();
	d.op(1, 0x00).counter(0, 11).raw({0x71, 0x01, 0x02, 0x03});
	r.chunks.push_back({.cpu = 1, .data = c.bytes});
	r.chunks.push_back({.cpu = 1, .data = d.bytes});
	return r;
}

std::uint32_t self_pid()
{
	return static_cast<std::uint32_t>(::getpid());
}

// A small well-formedness check of XML: declarations, comments, elements
// properly nested, attributes quoted, entities known. Empty when well formed.
std::string xml_error(std::string_view s)
{
	std::vector<std::string> stack;
	std::size_t i = 0;
	bool root_seen = false;
	const auto name_end = [&](std::size_t p) {
		while (p < s.size() && (std::isalnum(static_cast<unsigned char>(s[p])) || s[p] == '-' || s[p] == ':' ||
					s[p] == '_'))
			++p;
		return p;
	};
	while (i < s.size()) {
		if (s[i] == '&') {
			const std::size_t semi = s.find(';', i);
			if (semi == std::string_view::npos)
				return "bad entity at " + std::to_string(i);
			const std::string_view ent = s.substr(i, semi - i + 1);
			if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;" && ent != "&apos;")
				return "unknown entity " + std::string{ent};
			i = semi + 1;
			continue;
		}
		if (s[i] == '>')
			return "stray '>' at " + std::to_string(i);
		if (s[i] != '<') {
			if (stack.empty() && !std::isspace(static_cast<unsigned char>(s[i])))
				return "text outside the root at " + std::to_string(i);
			++i;
			continue;
		}
		if (s.substr(i, 2) == "<?") {
			const std::size_t e = s.find("?>", i);
			if (e == std::string_view::npos)
				return "unterminated declaration";
			i = e + 2;
			continue;
		}
		if (s.substr(i, 4) == "<!--") {
			const std::size_t e = s.find("-->", i);
			if (e == std::string_view::npos)
				return "unterminated comment";
			i = e + 3;
			continue;
		}
		const bool closing = s.substr(i, 2) == "</";
		const std::size_t n0 = i + (closing ? 2 : 1);
		const std::size_t n1 = name_end(n0);
		if (n1 == n0)
			return "no element name at " + std::to_string(i);
		const std::string name{s.substr(n0, n1 - n0)};
		std::size_t p = n1;
		// attributes: name="value" with no '<' in the value
		while (p < s.size() && s[p] != '>' && s[p] != '/') {
			if (std::isspace(static_cast<unsigned char>(s[p]))) {
				++p;
				continue;
			}
			const std::size_t a1 = name_end(p);
			if (a1 == p || a1 + 1 >= s.size() || s[a1] != '=' || s[a1 + 1] != '"')
				return "bad attribute in <" + name + "> at " + std::to_string(p);
			const std::size_t q = s.find('"', a1 + 2);
			if (q == std::string_view::npos || s.substr(a1 + 2, q - a1 - 2).find('<') != std::string_view::npos)
				return "bad attribute value in <" + name + ">";
			p = q + 1;
		}
		if (p >= s.size())
			return "unterminated tag <" + name + ">";
		if (closing) {
			if (stack.empty() || stack.back() != name)
				return "</" + name + "> does not close " + (stack.empty() ? "anything" : "<" + stack.back() + ">");
			stack.pop_back();
			i = p + 1;
		} else if (s[p] == '/') {
			if (p + 1 >= s.size() || s[p + 1] != '>')
				return "bad empty element <" + name + ">";
			if (stack.empty() && root_seen)
				return "a second root";
			root_seen = true;
			i = p + 2;
		} else {
			if (stack.empty() && root_seen)
				return "a second root";
			root_seen = true;
			stack.push_back(name);
			i = p + 1;
		}
	}
	if (!stack.empty())
		return "<" + stack.back() + "> not closed";
	return root_seen ? "" : "no root element";
}

// digits grouped with '.', decimal comma: what a German locale does
struct GermanPunct : std::numpunct<char> {
	char do_thousands_sep() const override { return '.'; }
	char do_decimal_point() const override { return ','; }
	std::string do_grouping() const override { return "\3"; }
};

} // namespace

TEST_CASE("SPE report: latency percentiles are exact (against a brute-force sort)", "[host][spe][report]")
{
	std::mt19937_64 rng{42};
	for (const std::size_t n : {1u, 2u, 3u, 10u, 999u, 1000u, 1001u, 4097u}) {
		std::vector<std::uint16_t> v;
		LatencyDistribution d;
		for (std::size_t i = 0; i < n; ++i) {
			// mostly small, a long tail: values repeat
			const auto x = static_cast<std::uint16_t>(rng() % 4 == 0 ? rng() % 65536 : rng() % 64);
			v.push_back(x);
			d.add(x);
		}
		INFO("n " << n);
		REQUIRE(d.count() == n);
		for (const auto& [num, den] : {std::pair{50u, 100u}, {90u, 100u}, {99u, 100u}, {999u, 1000u}, {1u, 1u},
					       {1u, 3u}, {0u, 1u}})
			CHECK(d.quantile(num, den) == brute_quantile(v, num, den));
		CHECK(d.p50() == brute_quantile(v, 1, 2));
		CHECK(d.p999() == brute_quantile(v, 999, 1000));
		CHECK(d.max() == *std::max_element(v.begin(), v.end()));
		CHECK(d.min() == *std::min_element(v.begin(), v.end()));
		std::uint64_t sum = 0;
		std::array<std::uint64_t, LatencyDistribution::buckets> buckets{};
		for (const std::uint16_t x : v) {
			sum += x;
			std::size_t k = 0;
			while (k < 16 && x > LatencyDistribution::bucket_high(k))
				++k;
			++buckets[k];
		}
		CHECK(d.sum() == sum);
		CHECK(d.mean() == Approx(static_cast<double>(sum) / static_cast<double>(n)));
		CHECK(d.log2_buckets() == buckets);
	}
	SECTION("buckets")
	{
		CHECK(LatencyDistribution::bucket_of(0) == 0);
		CHECK(LatencyDistribution::bucket_of(1) == 1);
		CHECK(LatencyDistribution::bucket_of(2) == 2);
		CHECK(LatencyDistribution::bucket_of(3) == 2);
		CHECK(LatencyDistribution::bucket_of(65535) == 16);
		CHECK(LatencyDistribution::bucket_low(16) == 32768);
		CHECK(LatencyDistribution::bucket_high(16) == 65535);
	}
	SECTION("p99.9 of 1000 values 1..1000 is 999, p99 990, p50 500")
	{
		LatencyDistribution d;
		for (std::uint16_t i = 1; i <= 1000; ++i)
			d.add(i);
		CHECK(d.p50() == 500);
		CHECK(d.p90() == 900);
		CHECK(d.p99() == 990);
		CHECK(d.p999() == 999);
		CHECK(d.max() == 1000);
	}
	SECTION("empty and merged")
	{
		LatencyDistribution d, e;
		CHECK(d.p90() == 0);
		CHECK(d.mean() == 0.0);
		d.add(5, 3);
		e.add(1);
		e.add(9, 0);	// nothing
		d.merge(e);
		CHECK(d.count() == 4);
		CHECK(d.sum() == 16);
		CHECK(d.values() == std::map<std::uint16_t, std::uint64_t>{{1, 1}, {5, 3}});
	}
}

TEST_CASE("SPE report: every aggregate of a known recording", "[host][spe][report]")
{
	const std::uint32_t pid = self_pid();
	const SpeRecording rec = known_recording(pid);
	const std::uint64_t hot = fn_address(&amupmu_spe_report_marker);
	const std::uint64_t other = fn_address(&amupmu_spe_report_other);
	const SpeReport r = build_spe_report(rec, {.top = 10});

	SECTION("totals")
	{
		const SpeTotals& t = r.totals;
		CHECK(t.records == 30 + 10 + 5 + 4 + 3);
		CHECK(t.complete == 50);
		CHECK(t.incomplete() == 2);
		CHECK(t.by_timestamp == 34);
		CHECK(t.by_end == 16);
		CHECK(t.resync == 1);
		CHECK(t.truncated == 1);
		CHECK(t.buffer_end == 0);
		CHECK(t.unknown_packets == 1);
		CHECK(t.skipped_bytes == 2 + 3);	// the unknown packet's two bytes and the counter after it
		CHECK(t.lost_bytes == 64);
		CHECK(t.truncations == 1);
		CHECK(t.collisions == 2);
		CHECK(t.faults == 3);
		std::uint64_t bytes = 0;
		for (const SpeChunk& c : rec.chunks)
			bytes += c.data.size();
		CHECK(t.bytes == bytes);
	}
	SECTION("per CPU")
	{
		REQUIRE(r.cpu.size() == 2);
		CHECK(r.cpu[0].cpu == 0);
		CHECK(r.cpu[0].encoding == SpeDataSourceEncoding::common);
		CHECK(r.cpu[0].totals.records == 45);
		CHECK(r.cpu[0].totals.complete == 45);
		CHECK(r.cpu[0].totals.lost_bytes == 64);
		CHECK(r.cpu[0].totals.faults == 0);
		CHECK(r.cpu[0].total.count() == 45);
		CHECK(r.cpu[1].cpu == 1);
		CHECK(r.cpu[1].encoding == SpeDataSourceEncoding::unknown);
		CHECK(r.cpu[1].totals.records == 7);
		CHECK(r.cpu[1].totals.incomplete() == 2);
		CHECK(r.cpu[1].totals.unknown_packets == 1);
		CHECK(r.cpu[1].totals.faults == 3);
		CHECK(r.cpu[1].total.values() == std::map<std::uint16_t, std::uint64_t>{{7, 1}, {11, 1}, {200, 4}});
	}
	SECTION("latency distributions")
	{
		std::vector<std::uint16_t> total;
		for (std::uint16_t i = 1; i <= 30; ++i)
			total.push_back(i);
		total.insert(total.end(), 10, 100);
		total.insert(total.end(), 5, 5);
		total.insert(total.end(), 4, 200);
		total.push_back(7);
		total.push_back(11);	// the cut record's counter came before the cut; the resync one's after the unknown
		const LatencyDistribution& d = r.latency[0];
		CHECK(d.count() == total.size());
		for (const auto& [num, den] : {std::pair{50u, 100u}, {90u, 100u}, {99u, 100u}, {999u, 1000u}})
			CHECK(d.quantile(num, den) == brute_quantile(total, num, den));
		CHECK(d.p50() == 19);	// rank 26: 1..19, the five 5s, the 7 and the 11 are <= 19
		CHECK(d.p90() == 100);
		CHECK(d.p99() == 200);
		CHECK(d.sum() == 465 + 1000 + 25 + 800 + 7 + 11);
		CHECK(d.max() == 200);
		CHECK(r.latency[1].values() == std::map<std::uint16_t, std::uint64_t>{{2, 30}});
		CHECK(r.latency[2].values() == std::map<std::uint16_t, std::uint64_t>{{1, 30}});
	}
	SECTION("operation types")
	{
		REQUIRE(r.ops.size() == 4);
		CHECK(r.ops[0].label == "LD GP-REG");
		CHECK(r.ops[0].records == 33);
		CHECK(r.ops[1].label == "ST GP-REG");
		CHECK(r.ops[1].records == 10);
		CHECK(r.ops[1].total.mean() == 100.0);
		CHECK(r.ops[2].label == "B COND");
		CHECK(r.ops[2].records == 5);
		CHECK(r.ops[3].label == "LD SIMD-FP");
		CHECK(r.ops[3].records == 4);
		const SpeOpSummary want{.loads = 37, .stores = 10, .gp = 43, .simd_fp = 4, .branches = 5,
					.conditional = 5, .mispredicted = 5};
		CHECK(r.op_summary == want);
	}
	SECTION("data sources: named on the Neoverse N1, raw on the unknown CPU")
	{
		REQUIRE(r.data_sources.size() == 3);
		CHECK(r.data_sources[0].source == SpeDataSource{SpeDataSourceEncoding::common, 0x8});
		CHECK(r.data_sources[0].records == 20);
		CHECK(r.data_sources[0].total.mean() == 10.5);
		CHECK(r.data_sources[1].source == SpeDataSource{SpeDataSourceEncoding::common, 0xe});
		CHECK(r.data_sources[1].records == 10);
		CHECK(r.data_sources[2].source == SpeDataSource{SpeDataSourceEncoding::unknown, 0x8});
		CHECK(r.data_sources[2].records == 4);
	}
	SECTION("events")
	{
		CHECK(r.records_with_events == 45);
		std::array<std::uint64_t, 64> want{};
		want[1] = 45;
		want[2] = 30;
		want[3] = 30;
		want[7] = 5;
		CHECK(r.events == want);
	}
	SECTION("hottest symbols and PCs, symbolised from this process's mappings")
	{
		REQUIRE(r.symbols.size() == 3);
		CHECK(r.distinct_symbols == 3);
		CHECK(r.symbols[0].symbol == "amupmu_spe_report_marker");
		CHECK(r.symbols[0].level == '.');
		CHECK(r.symbols[0].records == 35);
		CHECK(r.symbols[0].total.mean() == Approx((465.0 + 25.0) / 35.0));
		CHECK(r.symbols[1].symbol == "[unknown]");
		CHECK(r.symbols[1].dso == "[kernel]");
		CHECK(r.symbols[1].level == 'k');
		CHECK(r.symbols[1].records == 10);
		CHECK(r.symbols[2].symbol == "amupmu_spe_report_other");
		CHECK(r.symbols[2].records == 4);

		REQUIRE(r.pcs.size() == 4);
		CHECK(r.distinct_pcs == 4);
		CHECK(r.pcs[0].pc == hot);
		CHECK(r.pcs[0].pid == pid);
		CHECK(r.pcs[0].mode == SampleMode::user);
		CHECK(r.pcs[0].where.symbol == "amupmu_spe_report_marker+0x0");
		CHECK(r.pcs[0].records == 30);
		CHECK(r.pcs[0].total.p90() == 27);
		CHECK(r.pcs[0].total.mean() == 15.5);
		CHECK(r.pcs[1].pc == kernel_pc);
		CHECK(r.pcs[1].el == 1);
		CHECK(r.pcs[1].pid == 0);
		CHECK(r.pcs[1].where.dso == "[kernel]");
		CHECK(r.pcs[2].pc == hot + 2);
		CHECK(r.pcs[2].where.symbol == "amupmu_spe_report_marker+0x2");
		CHECK(r.pcs[3].pc == other);
	}
	SECTION("sorted by latency")
	{
		const SpeReport l = build_spe_report(rec, {.top = 2, .sort = SpeSort::latency});
		REQUIRE(l.pcs.size() == 2);
		CHECK(l.distinct_pcs == 4);
		CHECK(l.pcs[0].pc == other);
		CHECK(l.pcs[1].pc == kernel_pc);
		REQUIRE(l.symbols.size() == 2);
		CHECK(l.symbols[0].symbol == "amupmu_spe_report_other");
		CHECK(l.addresses[0].address == 0x10000);	// mean (1 + 4 * 200) / 5
		CHECK(l.ops.size() == 4);			// every type, in count order
		CHECK(l.ops[0].label == "LD GP-REG");
	}
	SECTION("hottest data addresses and cache lines")
	{
		CHECK(r.records_with_data_va == 30 + 10 + 4);
		CHECK(r.distinct_addresses == 30 + 1);
		REQUIRE(r.addresses.size() == 10);
		CHECK(r.addresses[0].address == 0x20000);
		CHECK(r.addresses[0].records == 10);
		CHECK_FALSE(r.addresses[0].dominant);
		CHECK(r.addresses[1].address == 0x10000);
		CHECK(r.addresses[1].records == 5);
		CHECK(r.addresses[1].dominant == SpeDataSource{SpeDataSourceEncoding::unknown, 0x8});
		CHECK(r.addresses[1].dominant_records == 4);
		CHECK(r.addresses[2].address == 0x10008);	// ties by address

		CHECK(r.distinct_lines == 5);
		REQUIRE(r.lines.size() == 5);
		const std::uint64_t want_line[] = {0x10000, 0x20000, 0x10040, 0x10080, 0x100c0};
		const std::uint64_t want_records[] = {12, 10, 8, 8, 6};
		for (std::size_t i = 0; i < 5; ++i) {
			CHECK(r.lines[i].address == want_line[i]);
			CHECK(r.lines[i].records == want_records[i]);
		}
		CHECK(r.lines[0].dominant == SpeDataSource{SpeDataSourceEncoding::common, 0x8});
		CHECK(r.lines[0].dominant_records == 8);
		// 4 L2 and 4 DRAM: the lower code wins the tie
		CHECK(r.lines[3].dominant == SpeDataSource{SpeDataSourceEncoding::common, 0x8});
		CHECK(r.lines[4].dominant == SpeDataSource{SpeDataSourceEncoding::common, 0xe});
		CHECK(r.lines[0].total.mean() == Approx((36.0 + 800.0) / 12.0));
	}
	SECTION("per-CPU reports")
	{
		const SpeReport p = build_spe_report(rec, {.per_cpu = true});
		REQUIRE(p.per_cpu.size() == 2);
		CHECK(p.per_cpu[0].only_cpu == 0u);
		CHECK(p.per_cpu[0].totals.records == 45);
		CHECK(p.per_cpu[0].totals.lost_bytes == 64);
		CHECK(p.per_cpu[0].cpu.size() == 1);
		CHECK(p.per_cpu[1].totals.records == 7);
		CHECK(p.per_cpu[1].totals.faults == 3);
		CHECK(p.per_cpu[1].pcs.size() == 1);
		const std::string text = format_spe_report_text(p, {.per_cpu = true});
		CHECK_THAT(text, Contains("# amupmu spe report: 7 records of CPU 1, backend: mock SPE model (test build)"));
	}
}

TEST_CASE("SPE report: text", "[host][spe][report]")
{
	const SpeRecording rec = known_recording(self_pid());
	const SpeReport r = build_spe_report(rec);
	const std::string text = format_spe_report_text(r);
	INFO(text);
	CHECK_THAT(text, Contains("# amupmu spe report: 52 records from CPUs 0-1, backend: mock SPE model (test build)\n"));
	CHECK_THAT(text, Contains("# NOTE: the records come from the mock SPE model"));
	CHECK_THAT(text, Contains("# records: 50 complete, 2 incomplete (ended by: 16 END, 34 TIMESTAMP, 0 buffer end, "
				  "1 truncated packet, 1 resync after an unknown packet)\n"));
	CHECK_THAT(text, Contains("# lost: 64 bytes, 1 truncations, 2 collisions, 3 faults\n"));
	CHECK_THAT(text, Contains("# total latency (cycles from dispatch to completion): 51 records\n"
				  "#   p50 19  p90 100  p99 200  p99.9 200  max 200  mean 45.25\n"));
	CHECK_THAT(text, Contains("\n           4-7          10   19.61%  "));
	CHECK_THAT(text, Contains("█"));
	CHECK_THAT(text, Contains("   63.46%          33      15.1       27  LD GP-REG\n"));
	CHECK_THAT(text, Contains("   58.82%          20      10.5       18  L2 (0x8) [arm-common]\n"));
	CHECK_THAT(text, Contains("\n    11.76%           4     200.0      200  0x8\n"));
	CHECK_THAT(text, Contains("\n# data sources (34 records with a Data Source packet; names from Linux perf's tables"));
	CHECK_THAT(text, Contains("#   CPU 1: implementer 0x00 part 0x051 r0p0: encoding not known, raw codes only\n"));
	CHECK_THAT(text, Contains("  100.00%          45  RETIRED\n"));
	CHECK_THAT(text, Contains("   11.11%           5  MISPRED\n"));
	CHECK_THAT(text, Contains("   67.31%          35      14.0       27  [.] amupmu_spe_report_marker  "));
	CHECK_THAT(text, Contains("   19.23%          10     100.0      100  [k] [unknown]  [kernel]\n"));
	CHECK_THAT(text, Contains("  0xffff800008001000  el1  [k] [unknown]  [kernel]\n"));
	CHECK_THAT(text, Contains("   27.27%          12      69.7      200  0x0000000000010000  L2 (0x8) 66.67%\n"));

	SECTION("hardware is named so, and ASCII bars")
	{
		const std::string hw = format_spe_report_text(build_spe_report(known_recording(self_pid(), "hardware")),
							     {.ascii = true});
		CHECK_THAT(hw, Contains("backend: hardware SPE\n"));
		CHECK_THAT(hw, !Contains("mock"));
		CHECK_THAT(hw, !Contains("█"));
		CHECK_THAT(hw, Contains("  ########################################\n"));
	}
	SECTION("the same text whatever the global locale")
	{
		const std::locale old = std::locale::global(std::locale(std::locale::classic(), new GermanPunct));
		std::ostringstream probe;
		probe << 1234567 << ' ' << 1.5;
		const std::string localized = probe.str();
		const std::string again = format_spe_report_text(build_spe_report(rec));
		const std::string json = format_spe_report_json(build_spe_report(rec));
		std::locale::global(old);
		CHECK(localized == "1.234.567 1,5");	// the locale is in effect
		CHECK(again == text);
		CHECK(json == format_spe_report_json(r));
	}
}

TEST_CASE("SPE report: JSON parses and carries the figures", "[host][spe][report]")
{
	const SpeReport r = build_spe_report(known_recording(self_pid()), {.per_cpu = true});
	const std::string json = format_spe_report_json(r);
	INFO(json.substr(0, 2000));
	CHECK(test::JsonChecker{json}.error().empty());
	for (const char* key : {"\"backend\": \"mock\"", "\"backend_description\": \"mock SPE model (test build)\"",
				"\"records\": 52", "\"p99_9\": 200", "\"mean\": 45.254901960784316", "\"log2_buckets\"", "\"values\"",
				"\"label\": \"LD GP-REG\"", "\"name\": \"L2\"", "\"name\": null", "\"hot_symbols\"",
				"\"symbol\": \"amupmu_spe_report_marker\"", "\"hot_cache_lines\"", "\"hot_data_addresses\"",
				"\"address\": \"0x0000000000010000\"", "\"data_source_encoding\": \"arm-common\"",
				"\"per_cpu_reports\"", "\"mispredicted\": 5", "\"name\": \"L1D-REFILL\""})
		CHECK_THAT(json, Contains(key));
}

TEST_CASE("SPE report: SVG is well-formed XML with the three histograms", "[host][spe][report]")
{
	SpeRecording rec = known_recording(self_pid());
	rec.command = {"a<b", "c&d", "\"q\"", std::string{"bad\xff utf8"}};
	const std::string svg = format_spe_report_svg(build_spe_report(rec));
	INFO(svg.substr(0, 3000));
	CHECK(xml_error(svg).empty());
	CHECK(svg.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\""));
	CHECK_THAT(svg, Contains("latency histograms (mock SPE model (test build))"));
	CHECK_THAT(svg, Contains("total latency: cycles from dispatch to completion"));
	CHECK_THAT(svg, Contains("issue latency"));
	CHECK_THAT(svg, Contains("translation latency"));
	CHECK_THAT(svg, Contains(">p99.9 200<"));
	CHECK_THAT(svg, Contains("a&lt;b c&amp;d &quot;q&quot; bad\xEF\xBF\xBD utf8"));
	CHECK_THAT(svg, Contains("<rect"));

	SECTION("the checker finds faults")
	{
		CHECK_FALSE(xml_error("<a><b></a></b>").empty());
		CHECK_FALSE(xml_error("<a x=\"1></a>").empty());
		CHECK_FALSE(xml_error("<a>&nbsp;</a>").empty());
		CHECK_FALSE(xml_error("<a/><b/>").empty());
		CHECK(xml_error("<?xml version=\"1.0\"?>\n<a x=\"1\"><b/>t&amp;</a>\n").empty());
	}
	SECTION("xmllint agrees, where installed")
	{
		if (std::system("xmllint --version >/dev/null 2>&1") != 0) {
			WARN("xmllint not installed: the structural check above stands alone");
			return;
		}
		char path[] = "/tmp/amupmu-spe-report-XXXXXX";
		const int fd = ::mkstemp(path);
		REQUIRE(fd >= 0);
		::close(fd);
		std::ofstream{path} << svg;
		CHECK(std::system(("xmllint --noout " + std::string{path}).c_str()) == 0);
		::unlink(path);
	}
	SECTION("no records: the charts say so")
	{
		SpeRecording empty;
		empty.backend = "hardware";
		const std::string e = format_spe_report_svg(build_spe_report(empty));
		CHECK(xml_error(e).empty());
		CHECK_THAT(e, Contains("no record has this counter"));
		CHECK_THAT(e, Contains("(hardware SPE)"));
	}
}

TEST_CASE("SPE report: damaged and random data are counted, never crash", "[host][spe][report]")
{
	std::mt19937_64 rng{7};
	SpeRecording rec;
	rec.backend = "mock";
	spe_enc::Buf good;
	for (unsigned i = 0; i < 50; ++i)
		good.load_record(0x400000 + 4 * (i % 7), 0x7f0000 + 64 * (i % 5), i);
	for (unsigned round = 0; round < 200; ++round) {
		std::vector<std::byte> v = good.bytes;
		const unsigned flips = 1 + static_cast<unsigned>(rng() % 16);
		for (unsigned f = 0; f < flips; ++f)
			v[rng() % v.size()] = static_cast<std::byte>(rng());
		v.resize(rng() % (v.size() + 1));
		rec.chunks.push_back({.cpu = static_cast<std::uint32_t>(round % 3), .data = std::move(v)});
	}
	std::vector<std::byte> noise(4096);
	for (std::byte& b : noise)
		b = static_cast<std::byte>(rng());
	rec.chunks.push_back({.cpu = 5, .data = noise});
	const SpeReport r = build_spe_report(rec, {.per_cpu = true});
	CHECK(r.totals.records > 0);
	CHECK(r.totals.unknown_packets > 0);
	CHECK(r.totals.incomplete() > 0);
	CHECK(r.totals.complete + r.totals.incomplete() == r.totals.records);
	CHECK(r.totals.by_end + r.totals.by_timestamp + r.totals.buffer_end + r.totals.truncated + r.totals.resync ==
	      r.totals.records);
	std::uint64_t per_cpu = 0;
	for (const SpeCpuReport& c : r.cpu)
		per_cpu += c.totals.records;
	CHECK(per_cpu == r.totals.records);
	CHECK(r.per_cpu.size() == 4);
	CHECK(test::JsonChecker{format_spe_report_json(r)}.error().empty());
	CHECK(xml_error(format_spe_report_svg(r)).empty());
	CHECK_FALSE(format_spe_report_text(r).empty());
}

// Writes the CLI test's recording (tools/amupmu/tests/spe-report.data):
//   AMUPMU_SPE_FIXTURE=path amupmu_host_tests "[generate]"
TEST_CASE("SPE report: write the CLI test's recording", "[.][generate]")
{
	const char* path = std::getenv("AMUPMU_SPE_FIXTURE");
	REQUIRE(path);
	SpeRecording r;
	r.command = {"./spe-demo", "--loads"};
	r.cpus = "0-1";
	r.backend = "mock";
	r.timer_freq = 62500000;
	r.pid = 4242;
	r.config = {.flags = 0, .enables = 0, .pct = 0, .pmsfcr = 0, .pmsevfr = 0, .pmsnevfr = 0,
		    .min_latency = 0, .interval = 1024, .buf_pages = 16};
	r.cpu_stats.push_back({.cpu = 0, .bytes = 0, .records = 0, .lost_bytes = 128, .truncations = 1,
			       .midr = midr_neoverse_n1});
	r.cpu_stats.push_back({.cpu = 1, .midr = midr_unknown});
	r.maps.push_back({.pid = 4242, .start = 0x400000, .end = 0x401000, .offset = 0, .path = "/nonexistent/spe-demo"});
	spe_enc::Buf a, b;
	for (unsigned i = 0; i < 12; ++i)
		a.op(1, 0x00)
			.address(0, 0x400100 + 4 * (i % 3))
			.address(2, 0x7fff0000 + 16 * i)
			.counter(0, static_cast<std::uint16_t>(3 * i + 2))
			.counter(1, 1)
			.counter(2, static_cast<std::uint16_t>(i % 2))
			.events(i % 4 == 0 ? 0x0E : 0x06)
			.data_source(i % 4 == 0 ? 0xe : 0x0)
			.context(0, 4242)
			.timestamp(100 + i);
	for (unsigned i = 0; i < 3; ++i)
		a.op(2, 0x12).address(0, kernel_payload(kernel_pc + 8ULL * i)).counter(0, 4).events(0x82).end();
	b.op(1, 0x04).address(0, 0x400200).address(2, 0x7fff0000).counter(0, 300).data_source(0x8).context(0, 4242).end();
	b.op(1, 0x00).raw({0x02, 0x00}).end();
	r.chunks.push_back({.cpu = 0, .data = a.bytes});
	r.chunks.push_back({.cpu = 1, .data = b.bytes});
	std::ofstream out{path, std::ios::binary};
	write_spe_recording(out, r);
	REQUIRE(out);
}
