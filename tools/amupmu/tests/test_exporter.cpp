// SPDX-License-Identifier: GPL-2.0
//
// amupmu exporter's collector (exporter.hpp): the configuration file, the
// metric families of recorded readings (the mock build's Cortex-X2 r2p1
// with AMU, a QEMU CPU without), CPUs going offline and coming back, the
// module unloaded and loaded again, erratum compensation, multiplexed
// times, the driver's buffer events (lost samples, throttles), the text
// prometheus-cpp serves of them, OpenMetrics and the negotiation of the
// format. Backend: host, recorded readings through a fake ExporterSource
// (no device, no driver).
#include "cli.hpp"
#include "exporter.hpp"
#include "exposition.hpp"

#include "fixtures.hpp"

#include <prometheus/text_serializer.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace amupmu;
using namespace amupmu::cli;
using prometheus::MetricFamily;
using prometheus::MetricType;

namespace {

/// The value of name{labels} (every label given must match), or nullopt
/// when there is no such series.
std::optional<double> value_of(const std::vector<MetricFamily>& fams, std::string_view name,
			       const std::vector<std::pair<std::string, std::string>>& labels = {})
{
	for (const MetricFamily& f : fams) {
		if (f.name != name)
			continue;
		for (const prometheus::ClientMetric& m : f.metric) {
			const bool match = std::ranges::all_of(labels, [&](const auto& want) {
				return std::ranges::any_of(m.label, [&](const prometheus::ClientMetric::Label& l) {
					return l.name == want.first && l.value == want.second;
				});
			});
			if (match)
				return f.type == MetricType::Counter ? m.counter.value : m.gauge.value;
		}
	}
	return std::nullopt;
}

const MetricFamily* family(const std::vector<MetricFamily>& fams, std::string_view name)
{
	const auto it = std::ranges::find(fams, name, &MetricFamily::name);
	return it == fams.end() ? nullptr : &*it;
}

/// CPU cpu of the mock model: group 0 counters (CPU_CYCLES, CNT_CYCLES,
/// INST_RETIRED, STALL_BACKEND_MEM) and three group 1 counters.
AmuCpuReading amu_cpu(unsigned cpu, std::uint64_t cycles, std::uint64_t inst, std::uint32_t state = 0)
{
	AmuCpuReading r;
	r.cpu = cpu;
	r.state = state;
	r.time = 1000;
	r.nr_group0 = 4;
	r.nr_group1 = 3;
	r.enabled0 = 0xF;
	r.enabled1 = 0x7;
	r.group0 = {cycles, cycles / 2, inst, cycles / 4};
	r.group1 = {11, 22, 33};
	return r;
}

AmuReading amu_reading(std::vector<AmuCpuReading> cpus)
{
	return AmuReading{.timer_freq = 62500000, .cpus = std::move(cpus)};
}

ExporterScrape mock_scrape(std::uint64_t cycles0 = 1000, std::uint32_t state1 = 0)
{
	ExporterScrape s;
	s.info = test::mock_info();
	s.amu = amu_reading({amu_cpu(0, cycles0, 2100), amu_cpu(1, 4000, 900, state1),
			     amu_cpu(2, 0, 0, amu_state::undiscovered)});
	return s;
}

std::vector<MetricFamily> families(const ExporterScrape& s, const ExporterSelf& self = {})
{
	return exporter_families(s, self, CompensationOptions{});
}

/// Hands out the readings it is given, one per scrape (the last again
/// when they run out).
class FakeSource final : public ExporterSource {
public:
	explicit FakeSource(std::deque<ExporterScrape> scrapes) : scrapes_{std::move(scrapes)} {}
	ExporterScrape read(ExporterSelf& self) override
	{
		ExporterScrape s = scrapes_.front();
		if (scrapes_.size() > 1)
			scrapes_.pop_front();
		if (s.pmu)
			++self.pmu_session_opens;
		return s;
	}

private:
	std::deque<ExporterScrape> scrapes_;
};

} // namespace

TEST_CASE("exporter configuration file", "[exporter]")
{
	const ExporterConfig c = parse_exporter_config(
		"# amupmu exporter\n"
		"listen = 127.0.0.1:10140\n"
		"\n"
		"events = inst_retired:u, cpu_cycles ,exc_undef   # the PMU\n"
		"multiplex = yes\n"
		"compensate = no\n"
		"netlink = off\n"
		"threads = 4\n"
		"spe = off\n"
		"device = /dev/amupmu-test\n",
		"exporter.conf");
	CHECK(c.listen == "127.0.0.1:10140");
	CHECK(c.events == std::vector<std::string>{"inst_retired:u", "cpu_cycles", "exc_undef"});
	CHECK(c.multiplex);
	CHECK_FALSE(c.compensate);
	CHECK_FALSE(c.netlink);
	CHECK(c.threads == 4);
	CHECK(c.device == "/dev/amupmu-test");
	CHECK_FALSE(c.spe);

	SECTION("SPE: on, its interval, buffer and the kernel")
	{
		const ExporterConfig d = parse_exporter_config(
			"spe = on\nspe_interval = 65536\nspe_buffer_pages = 8\nspe_kernel = yes\n", "spe.conf");
		CHECK(d.spe);
		CHECK(d.spe_interval == 65536);
		CHECK(d.spe_buffer_pages == 8);
		CHECK(d.spe_kernel);
		const SpeConfig sc = exporter_spe_config(d, {3, 1});
		CHECK(sc.user);
		CHECK(sc.kernel);
		CHECK(sc.interval == 65536);
		CHECK(sc.buf_pages == 8);
		CHECK(sc.types_any == 0);	// every operation type
		CHECK(sc.cpus == std::vector<unsigned>{3, 1});
		// the defaults: user space, one in 2^20 operations, 16 pages
		const SpeConfig def = exporter_spe_config(ExporterConfig{}, {});
		CHECK_FALSE(def.kernel);
		CHECK(def.interval == 1048576);
		CHECK(def.buf_pages == 16);
		CHECK_NOTHROW((void)spe_driver_config(def));
	}

	SECTION("defaults: every address, no PMU session")
	{
		const ExporterConfig d = parse_exporter_config("", "empty.conf");
		CHECK(d == ExporterConfig{});
		CHECK(d.listen == ":10140");
		CHECK(d.events.empty());
		CHECK(civetweb_listen(d.listen) == "10140");
	}
	SECTION("errors name the file and line")
	{
		CHECK_THROWS_WITH(parse_exporter_config("\nport 9100\n", "a.conf"),
				  "a.conf:2: not KEY = VALUE: 'port 9100'");
		CHECK_THROWS_WITH(parse_exporter_config("colour = red\n", "a.conf"),
				  Catch::StartsWith("a.conf:1: unknown key 'colour' (listen, device, events"));
		CHECK_THROWS_WITH(parse_exporter_config("multiplex = maybe\n", "a.conf"),
				  "a.conf:1: 'maybe' is not yes or no");
		CHECK_THROWS_WITH(parse_exporter_config("events = a,,b\n", "a.conf"),
				  "a.conf:1: empty name in the list");
		CHECK_THROWS_WITH(parse_exporter_config("events = a,\n", "a.conf"),
				  "a.conf:1: empty name in the list");
		CHECK_THROWS_WITH(parse_exporter_config("events =\n", "a.conf"), "a.conf:1: events has no value");
		CHECK_THROWS_WITH(parse_exporter_config("threads = 0\n", "a.conf"),
				  "a.conf:1: threads is a number from 1 to 64, not '0'");
		CHECK_THROWS_WITH(parse_exporter_config("spe_interval = 1000\n", "a.conf"),
				  Catch::StartsWith("a.conf:1: ") && Catch::Contains("256"));
		CHECK_THROWS_WITH(parse_exporter_config("spe_interval = 0\n", "a.conf"),
				  Catch::StartsWith("a.conf:1: "));
		CHECK_THROWS_WITH(parse_exporter_config("spe_interval = 1M\n", "a.conf"),
				  "a.conf:1: spe_interval is a number, not '1M'");
		CHECK_THROWS_WITH(parse_exporter_config("spe_buffer_pages = 3\n", "a.conf"),
				  Catch::StartsWith("a.conf:1: ") && Catch::Contains("power of two"));
		CHECK_THROWS_WITH(parse_exporter_config("spe_buffer_pages = 2048\n", "a.conf"),
				  Catch::StartsWith("a.conf:1: "));
		CHECK_THROWS_WITH(parse_exporter_config("spe_kernel = perhaps\n", "a.conf"),
				  "a.conf:1: 'perhaps' is not yes or no");
		CHECK_THROWS_WITH(parse_exporter_config("listen = 10140\n", "a.conf"),
				  "--listen: '10140' is not ADDR:PORT (or :PORT)");
		CHECK_THROWS_AS(parse_exporter_config("x\n", "a.conf"), UsageError);
	}
}

namespace {

// SPE records as the driver writes them: an Operation Type packet (header
// 0x48 | class, one byte), the total latency Counter packet (0x98, two
// bytes little-endian), END (0x01); padding (0x00) between them
void spe_record(std::vector<std::byte>& out, unsigned cls, std::uint8_t subclass, std::optional<std::uint16_t> lat)
{
	const auto b = [&](unsigned v) { out.push_back(static_cast<std::byte>(v)); };
	b(0x48 | cls);
	b(subclass);
	if (lat) {
		b(0x98);
		b(*lat & 0xFF);
		b(*lat >> 8);
	}
	b(0x01);
}

std::vector<std::byte> spe_records()
{
	std::vector<std::byte> v;
	spe_record(v, 1, 0x00, 10);	// load (GP), 10 cycles: le 16
	spe_record(v, 1, 0x00, 16);	// load, 16: le 16 (bounds are inclusive)
	spe_record(v, 1, 0x01, 100);	// store: le 128
	spe_record(v, 2, 0x01, 5);	// conditional branch: le 8
	spe_record(v, 0, 0x00, 20000);	// other: above every bound
	v.insert(v.end(), 7, std::byte{0});	// padding
	spe_record(v, 1, 0x00, std::nullopt);	// a load without a total latency
	spe_record(v, 0, 0x00, 0);	// other, 0 cycles: le 4
	return v;
}

} // namespace

TEST_CASE("exporter SPE latency histograms from records", "[exporter]")
{
	SpeTotals t;
	const std::vector<std::byte> bytes = spe_records();
	add_spe_records(t, 1, bytes);
	REQUIRE(t.cpus.contains(1));
	const SpeCpuTotals& c = t.cpus.at(1);
	CHECK(c.records == 7);
	CHECK(c.without_latency == 1);
	CHECK(t.skipped_bytes == 0);
	const auto& load = c.ops[static_cast<std::size_t>(SpeOpKind::load)];
	CHECK(load.count == 2);
	CHECK(load.sum == 26);
	CHECK(load.buckets[2] == 2);	// le 16
	const auto& store = c.ops[static_cast<std::size_t>(SpeOpKind::store)];
	CHECK(store.count == 1);
	CHECK(store.buckets[5] == 1);	// le 128
	const auto& branch = c.ops[static_cast<std::size_t>(SpeOpKind::branch)];
	CHECK(branch.count == 1);
	CHECK(branch.buckets[1] == 1);	// le 8
	const auto& other = c.ops[static_cast<std::size_t>(SpeOpKind::other)];
	CHECK(other.count == 2);
	CHECK(other.sum == 20000);
	CHECK(other.buckets.front() == 1);	// le 4
	CHECK(other.buckets.back() == 1);	// +Inf only
	// the same bytes in two spans (as a wrapped buffer hands them): the same counts
	SpeTotals split;
	const std::size_t half = 12;	// after the first two records (6 bytes each)
	add_spe_records(split, 1, std::span{bytes}.first(half));
	add_spe_records(split, 1, std::span{bytes}.subspan(half));
	CHECK(split == t);

	SECTION("kinds of operation")
	{
		CHECK(spe_op_kind(std::nullopt) == SpeOpKind::other);
		CHECK(spe_op_kind(spe::op_type(1, 0x00)) == SpeOpKind::load);
		CHECK(spe_op_kind(spe::op_type(1, 0x01)) == SpeOpKind::store);
		CHECK(spe_op_kind(spe::op_type(2, 0x00)) == SpeOpKind::branch);
		CHECK(spe_op_kind(spe::op_type(0, 0x02)) == SpeOpKind::other);	// FP
	}
	SECTION("as Prometheus histograms, per online CPU and operation type")
	{
		ExporterScrape s = mock_scrape();
		t.interval = 1048576;
		t.cpus[0];		// online, nothing sampled yet: zero series
		t.cpus[2] = c;		// offline: no series
		t.cpus.at(2).records = 99;
		s.spe = t;
		const auto f = families(s);
		const MetricFamily* h = family(f, "amupmu_spe_latency_cycles");
		REQUIRE(h != nullptr);
		CHECK(h->type == MetricType::Histogram);
		CHECK(h->metric.size() == 8);	// CPUs 0 and 1, four kinds each
		const auto it = std::ranges::find_if(h->metric, [](const prometheus::ClientMetric& m) {
			return m.label.size() == 2 && m.label[0].value == "1" && m.label[1].value == "load";
		});
		REQUIRE(it != h->metric.end());
		CHECK(it->label[0].name == "cpu");
		CHECK(it->label[1].name == "op");
		CHECK(it->histogram.sample_count == 2);
		CHECK(it->histogram.sample_sum == 26);
		REQUIRE(it->histogram.bucket.size() == spe_latency_bounds.size() + 1);
		CHECK(it->histogram.bucket[1].cumulative_count == 0);	// le 8
		CHECK(it->histogram.bucket[2].upper_bound == 16);
		CHECK(it->histogram.bucket[2].cumulative_count == 2);	// le 16
		CHECK(std::isinf(it->histogram.bucket.back().upper_bound));
		CHECK(it->histogram.bucket.back().cumulative_count == 2);
		CHECK(value_of(f, "amupmu_spe_records_total", {{"cpu", "1"}}) == 7);
		CHECK(value_of(f, "amupmu_spe_records_total", {{"cpu", "0"}}) == 0);
		CHECK_FALSE(value_of(f, "amupmu_spe_records_total", {{"cpu", "2"}}));
		CHECK(value_of(f, "amupmu_spe_lost_bytes_total", {{"cpu", "1"}}) == 0);
		CHECK(value_of(f, "amupmu_spe_interval_operations", {{"kernel", "no"}}) == 1048576);

		const std::string text = prometheus::TextSerializer{}.Serialize(f);
		CHECK_THAT(text, Catch::Contains("# TYPE amupmu_spe_latency_cycles histogram"));
		CHECK_THAT(text, Catch::Contains("amupmu_spe_latency_cycles_bucket{cpu=\"1\",op=\"other\",le=\"+Inf\"} 2"));
		CHECK_THAT(text, Catch::Contains("amupmu_spe_latency_cycles_count{cpu=\"1\",op=\"store\"} 1"));
		CHECK_THAT(text, Catch::Contains("amupmu_spe_latency_cycles_bucket{cpu=\"1\",op=\"load\",le=\"16\"} 2"));
		const std::string om = OpenMetricsSerializer{}.Serialize(f);
		CHECK_THAT(om, Catch::Contains("# TYPE amupmu_spe_latency_cycles histogram"));
		CHECK_THAT(om, Catch::Contains("amupmu_spe_latency_cycles_bucket{cpu=\"1\",op=\"other\",le=\"+Inf\"} 2"));
		CHECK_THAT(om, Catch::Contains("amupmu_spe_latency_cycles_sum{cpu=\"1\",op=\"other\"} 20000"));
		CHECK_THAT(om, Catch::Contains("amupmu_spe_latency_cycles_bucket{cpu=\"1\",op=\"load\",le=\"16.0\"} 2"));
	}
	SECTION("spe = off, or no CPU with SPE: no SPE series")
	{
		CHECK(family(families(mock_scrape()), "amupmu_spe_latency_cycles") == nullptr);
		ExporterScrape s = mock_scrape();
		s.spe = SpeTotals{};
		const auto f = families(s);
		CHECK(family(f, "amupmu_spe_latency_cycles") == nullptr);
		CHECK(family(f, "amupmu_spe_interval_operations") == nullptr);
	}
}

TEST_CASE("exporter --listen values as civetweb takes them", "[exporter]")
{
	CHECK(civetweb_listen(":10140") == "10140");
	CHECK(civetweb_listen("127.0.0.1:9") == "127.0.0.1:9");
	CHECK(civetweb_listen("[::1]:10140") == "[::1]:10140");
	CHECK(civetweb_listen("127.0.0.1:0") == "127.0.0.1:0");	// the system picks the port
	CHECK_THROWS_WITH(civetweb_listen(":65536"), "--listen: port '65536' is not a number from 0 to 65535");
	CHECK_THROWS_WITH(civetweb_listen("127.0.0.1:"), "--listen: port '' is not a number from 0 to 65535");
	CHECK_THROWS_WITH(civetweb_listen(":x1"), "--listen: port 'x1' is not a number from 0 to 65535");
	CHECK_THROWS_WITH(civetweb_listen("::1:10140"), "--listen: '::1' is not an address (IPv6: [ADDR]:PORT)");
	CHECK_THROWS_WITH(civetweb_listen("[]:10140"), "--listen: '[]' is not an address (IPv6: [ADDR]:PORT)");
}

TEST_CASE("exporter AMU counters per CPU, info and driver metrics", "[exporter]")
{
	const auto f = families(mock_scrape());
	CHECK(value_of(f, "amupmu_up") == 1);
	// group 0 by event type, as counters, per online CPU
	CHECK(value_of(f, "amupmu_amu_core_cycles_total", {{"cpu", "0"}}) == 1000);
	CHECK(value_of(f, "amupmu_amu_constant_cycles_total", {{"cpu", "0"}}) == 500);
	CHECK(value_of(f, "amupmu_amu_instructions_retired_total", {{"cpu", "0"}}) == 2100);
	CHECK(value_of(f, "amupmu_amu_memory_stall_cycles_total", {{"cpu", "0"}}) == 250);
	CHECK(value_of(f, "amupmu_amu_instructions_retired_total", {{"cpu", "1"}}) == 900);
	CHECK(family(f, "amupmu_amu_core_cycles_total")->type == MetricType::Counter);
	// group 1 by AMEVTYPER1
	CHECK(value_of(f, "amupmu_amu_auxiliary_events_total", {{"cpu", "1"}, {"event", "0x0302"}}) == 22);
	CHECK(value_of(f, "amupmu_amu_timer_frequency_hertz") == 62500000);
	// the undiscovered CPU 2 has no AMU series, but it is possible and offline
	CHECK_FALSE(value_of(f, "amupmu_amu_core_cycles_total", {{"cpu", "2"}}));
	CHECK(value_of(f, "amupmu_cpu_online", {{"cpu", "2"}}) == 0);
	CHECK(value_of(f, "amupmu_cpu_online", {{"cpu", "0"}}) == 1);
	// info: MIDR, AMU version and the Cortex-X2 r2p1 errata
	CHECK(value_of(f, "amupmu_cpu_info",
		       {{"cpu", "0"},
			{"midr", "0x412fd481"},
			{"implementer", "0x41"},
			{"part", "0xd48"},
			{"revision", "r2p1"},
			{"amu_version", "2"},
			{"pmu_version", "6"},
			{"errata", "AMUPMU-X2-EXC_UNDEF,AMUPMU-X2-MCQ"}}) == 1);
	CHECK(value_of(f, "amupmu_driver_info", {{"backend", "mock"}, {"abi_version", "2.5"}}) == 1);
	// no PMU events configured, no netlink read: no such series
	CHECK_FALSE(family(f, "amupmu_pmu_events_total"));
	CHECK_FALSE(family(f, "amupmu_sessions"));
	CHECK(value_of(f, "amupmu_exporter_scrape_errors_total", {{"source", "pmu"}}) == 0);

	SECTION("a counter not enabled has no series")
	{
		ExporterScrape s = mock_scrape();
		s.amu->cpus[0].enabled0 = 0xB;	// INST_RETIRED (counter 2) off
		const auto g = families(s);
		CHECK_FALSE(value_of(g, "amupmu_amu_instructions_retired_total", {{"cpu", "0"}}));
		CHECK(value_of(g, "amupmu_amu_core_cycles_total", {{"cpu", "0"}}) == 1000);
	}
	SECTION("a CPU without AMU (QEMU's) has info but no AMU series")
	{
		ExporterScrape s;
		s.info = test::qemu_info();
		s.amu = amu_reading({amu_cpu(0, 5, 5, amu_state::no_amu)});
		const auto g = families(s);
		CHECK_FALSE(family(g, "amupmu_amu_core_cycles_total"));
		CHECK_FALSE(family(g, "amupmu_amu_timer_frequency_hertz"));
		CHECK(value_of(g, "amupmu_cpu_info", {{"cpu", "0"}, {"amu_version", "0"}, {"errata", ""}}) == 1);
	}
}

TEST_CASE("exporter series stop while a CPU is offline and resume", "[exporter]")
{
	// CPU 1 offline: the driver reports the values it had; no series
	const auto off = families(mock_scrape(2000, amu_state::offline));
	CHECK_FALSE(value_of(off, "amupmu_amu_core_cycles_total", {{"cpu", "1"}}));
	CHECK(value_of(off, "amupmu_amu_core_cycles_total", {{"cpu", "0"}}) == 2000);
	ExporterScrape s = mock_scrape(2000, amu_state::offline);
	s.info->cpus[1].flags &= ~static_cast<std::uint32_t>(CpuFlag::online);
	CHECK(value_of(families(s), "amupmu_cpu_online", {{"cpu", "1"}}) == 0);
	// back: the same counter, monotonic (the driver added the values back)
	const auto on = families(mock_scrape(3000));
	CHECK(value_of(on, "amupmu_amu_core_cycles_total", {{"cpu", "1"}}) == 4000);
}

TEST_CASE("exporter PMU events: raw, times, erratum-compensated", "[exporter]")
{
	ExporterScrape s = mock_scrape();
	PmuScrape p;
	p.events = {parse_event("inst_retired:u", 0x412FD481), parse_event("exc_undef", 0x412FD481)};
	CpuReading r0;
	r0.cpu = 0;
	r0.nr_values = 2;
	r0.values[0].value = 40000000;
	r0.values[1].value = 830;
	r0.time_enabled = 2000000000;
	r0.time_running = 2000000000;
	r0.state = read_state::enabled | read_state::shared;
	CpuReading r1 = r0;
	r1.cpu = 1;
	r1.state |= read_state::offline;
	p.cpus = {r0, r1};
	s.pmu = p;
	const auto f = families(s);
	CHECK(value_of(f, "amupmu_pmu_events_total", {{"cpu", "0"}, {"event", "inst_retired:u"}}) == 40000000);
	CHECK(value_of(f, "amupmu_pmu_enabled_seconds_total", {{"cpu", "0"}, {"event", "exc_undef"}}) ==
	      Approx(2.0));
	CHECK(value_of(f, "amupmu_pmu_running_seconds_total", {{"cpu", "0"}, {"event", "exc_undef"}}) ==
	      Approx(2.0));
	// Cortex-X2 r2p1: EXC_UNDEF undercounts, factor 1.21 (the erratum's default)
	CHECK(value_of(f, "amupmu_pmu_events_compensated_total",
		       {{"cpu", "0"}, {"event", "exc_undef"}, {"erratum", "AMUPMU-X2-EXC_UNDEF"}}) ==
	      Approx(830 * 1.21));
	CHECK_FALSE(value_of(f, "amupmu_pmu_events_compensated_total", {{"event", "inst_retired:u"}}));
	CHECK(value_of(f, "amupmu_pmu_evicted", {{"cpu", "0"}}) == 0);
	// the offline CPU: no series until it is back
	CHECK_FALSE(value_of(f, "amupmu_pmu_events_total", {{"cpu", "1"}}));

	SECTION("compensation off: the raw counts only")
	{
		const auto g = exporter_families(s, {}, CompensationOptions{.enabled = false});
		CHECK_FALSE(family(g, "amupmu_pmu_events_compensated_total"));
		CHECK(value_of(g, "amupmu_pmu_events_total", {{"cpu", "0"}, {"event", "exc_undef"}}) == 830);
	}
	SECTION("a multiplexed group: each event's own times")
	{
		CpuTimes t0;
		t0.events[0] = {.enabled = 3000000000, .running = 1000000000};
		t0.events[1] = {.enabled = 3000000000, .running = 2000000000};
		s.pmu->times = {t0, CpuTimes{}};
		const auto g = families(s);
		CHECK(value_of(g, "amupmu_pmu_running_seconds_total", {{"cpu", "0"}, {"event", "inst_retired:u"}}) ==
		      Approx(1.0));
		CHECK(value_of(g, "amupmu_pmu_enabled_seconds_total", {{"cpu", "0"}, {"event", "exc_undef"}}) ==
		      Approx(3.0));
	}
	SECTION("evicted in shared mode")
	{
		s.pmu->cpus[0].state |= read_state::evicted;
		CHECK(value_of(families(s), "amupmu_pmu_evicted", {{"cpu", "0"}}) == 1);
	}
}

TEST_CASE("exporter driver health from the netlink dumps", "[exporter]")
{
	ExporterScrape s = mock_scrape();
	s.status = MonitorStatus{.features = 0x1F,
				 .nr_cpus = 3,
				 .pmu_owner = PmuOwner::amupmu,
				 .spe_owner = SpeOwner::amupmu,
				 .generation = 9,
				 .events_dropped = 3,
				 .events_undelivered = 5,
				 .subscribers = 2};
	MonitorSession pmu, spe;
	spe.kind = SessionKind::spe;
	s.sessions = std::vector<MonitorSession>{pmu, pmu, spe};
	const auto f = families(s);
	CHECK(value_of(f, "amupmu_netlink_events_dropped_total") == 3);
	CHECK(value_of(f, "amupmu_netlink_events_undelivered_total") == 5);
	CHECK(value_of(f, "amupmu_netlink_subscribers") == 2);
	CHECK(value_of(f, "amupmu_sessions", {{"kind", "pmu"}}) == 2);
	CHECK(value_of(f, "amupmu_sessions", {{"kind", "spe"}}) == 1);
}

TEST_CASE("exporter lost samples and throttles from the buffer group's events", "[exporter]")
{
	BufferCounter b;
	const auto lost = [](std::uint64_t id, std::uint32_t cpu, std::uint64_t n) {
		return MonitorRecord{RingLostEvent{.seq = 0, .time_ns = 0, .session_id = id, .cpu = cpu, .lost = n}};
	};
	const auto throttle = [](std::uint64_t id, std::uint32_t cpu, std::uint64_t n) {
		return ThrottleEvent{.seq = 0, .time_ns = 0, .session_id = id, .cpu = cpu, .throttled = n};
	};
	// session 4 on CPU 0: 1, 2, 4, 8 records lost; session 5 on CPU 0 and 1
	for (const std::uint64_t n : {1, 2, 4, 8})
		b.add(lost(4, 0, n));
	b.add(lost(5, 0, 1));
	b.add(lost(5, 1, 2));
	b.add(throttle(5, 1, 1));
	b.add(throttle(5, 1, 2));
	b.add(MonitorRecord{SpeBufferEvent{.seq = 0, .time_ns = 0, .session_id = 6, .cpu = 1,
					   .what = SpeBufferEventKind::collision, .pmbsr = 0}});
	b.add(MonitorRecord{Gap{.group = MonitorGroup::buffer, .expected = 3, .got = 6}});
	CHECK(b.totals().samples_lost == std::map<unsigned, std::uint64_t>{{0, 9}, {1, 2}});
	CHECK(b.totals().throttles == std::map<unsigned, std::uint64_t>{{1, 2}});
	CHECK(b.totals().missed == 3);
	CHECK(b.tracked() == 3);

	SECTION("an ended session is forgotten after two dumps without it, its counts stay")
	{
		MonitorSession five;
		five.id = 5;
		b.sessions({five});
		CHECK(b.tracked() == 3);
		// a late event of session 4 still adds only what it grew by
		b.add(lost(4, 0, 16));
		CHECK(b.totals().samples_lost.at(0) == 17);
		b.sessions({five});
		b.sessions({five});
		CHECK(b.tracked() == 2);
		b.sessions({});
		b.sessions({});
		CHECK(b.tracked() == 0);
		CHECK(b.totals().samples_lost.at(0) == 17);
	}
	SECTION("a count below the last one is a new session under a reused id")
	{
		b.add(lost(4, 0, 1));
		CHECK(b.totals().samples_lost.at(0) == 10);
	}

	ExporterScrape s = mock_scrape();
	s.buffer = b.totals();
	const auto f = families(s);
	CHECK(value_of(f, "amupmu_pmu_samples_lost_total", {{"cpu", "1"}}) == 2);
	CHECK(family(f, "amupmu_pmu_samples_lost_total")->type == MetricType::Counter);
	CHECK(value_of(f, "amupmu_pmu_sample_throttles_total", {{"cpu", "1"}}) == 2);
	// online CPUs from 0, the offline one without counts absent
	CHECK(value_of(f, "amupmu_pmu_sample_throttles_total", {{"cpu", "0"}}) == 0);
	CHECK_FALSE(value_of(f, "amupmu_pmu_samples_lost_total", {{"cpu", "2"}}));
	CHECK(value_of(f, "amupmu_spe_buffer_events_total", {{"cpu", "1"}, {"event", "collision"}}) == 1);
	CHECK(value_of(f, "amupmu_spe_buffer_events_total", {{"cpu", "0"}, {"event", "full"}}) == 0);
	CHECK(value_of(f, "amupmu_exporter_events_missed_total") == 3);
	// not subscribed: no series
	CHECK_FALSE(value_of(families(mock_scrape()), "amupmu_pmu_samples_lost_total", {{"cpu", "0"}}));

	SECTION("the driver's exact totals (CPU_GET, ABI 2.5) before the events' sums")
	{
		ExporterScrape e = mock_scrape();
		e.buffer = b.totals();
		// CPU 2 is offline with counts: its series stays
		e.cpu_totals = std::map<unsigned, DriverCpuTotals>{
			{0, {.samples_lost = 191, .throttles = 55}}, {1, {}}, {2, {.samples_lost = 3, .throttles = 0}}};
		const auto g = families(e);
		CHECK(value_of(g, "amupmu_pmu_samples_lost_total", {{"cpu", "0"}}) == 191);
		CHECK(value_of(g, "amupmu_pmu_sample_throttles_total", {{"cpu", "0"}}) == 55);
		CHECK(value_of(g, "amupmu_pmu_samples_lost_total", {{"cpu", "1"}}) == 0);
		CHECK(value_of(g, "amupmu_pmu_samples_lost_total", {{"cpu", "2"}}) == 3);
		CHECK_THAT(family(g, "amupmu_pmu_samples_lost_total")->help, Catch::Contains("CPU_GET"));
		// the SPE buffer events and the missed ones still from the subscription
		CHECK(value_of(g, "amupmu_spe_buffer_events_total", {{"cpu", "1"}, {"event", "collision"}}) == 1);
		CHECK(value_of(g, "amupmu_exporter_events_missed_total") == 3);
		// without the subscription: the totals, no buffer event series
		e.buffer.reset();
		const auto h = families(e);
		CHECK(value_of(h, "amupmu_pmu_sample_throttles_total", {{"cpu", "0"}}) == 55);
		CHECK_FALSE(value_of(h, "amupmu_exporter_events_missed_total"));
		CHECK_FALSE(value_of(h, "amupmu_spe_buffer_events_total", {{"cpu", "1"}, {"event", "collision"}}));
	}
}

TEST_CASE("exporter collector across a module reload, in prometheus-cpp's text", "[exporter]")
{
	// loaded, unloaded (nothing answers: no info), loaded again (the
	// counters start lower: a counter reset, not a wrap)
	ExporterScrape unloaded;
	ExporterScrape failed = mock_scrape(10);
	failed.amu.reset();
	failed.errors = {"amu"};
	const ExporterCollector c{std::make_unique<FakeSource>(
					  std::deque<ExporterScrape>{mock_scrape(5000), unloaded, failed, mock_scrape(10)}),
				  CompensationOptions{}};
	const prometheus::TextSerializer text;

	auto f = c.Collect();
	CHECK(value_of(f, "amupmu_up") == 1);
	CHECK(value_of(f, "amupmu_amu_core_cycles_total", {{"cpu", "0"}}) == 5000);
	REQUIRE(family(f, "amupmu_exporter_scrape_duration_seconds"));
	CHECK(*value_of(f, "amupmu_exporter_scrape_duration_seconds") >= 0);
	const std::string t = text.Serialize(f);
	CHECK_THAT(t, Catch::Contains("# TYPE amupmu_amu_core_cycles_total counter\n"
				      "amupmu_amu_core_cycles_total{cpu=\"0\"} 5000\n"));
	CHECK_THAT(t, Catch::Contains("amupmu_up 1\n"));

	f = c.Collect();
	CHECK(value_of(f, "amupmu_up") == 0);
	CHECK_FALSE(family(f, "amupmu_amu_core_cycles_total"));
	CHECK_FALSE(family(f, "amupmu_cpu_info"));
	CHECK(value_of(f, "amupmu_exporter_scrape_errors_total", {{"source", "device"}}) == 0);

	f = c.Collect();
	CHECK(value_of(f, "amupmu_up") == 1);
	CHECK_FALSE(family(f, "amupmu_amu_core_cycles_total"));
	CHECK(value_of(f, "amupmu_exporter_scrape_errors_total", {{"source", "amu"}}) == 1);

	f = c.Collect();
	CHECK(value_of(f, "amupmu_amu_core_cycles_total", {{"cpu", "0"}}) == 10);
	CHECK(value_of(f, "amupmu_exporter_scrape_errors_total", {{"source", "amu"}}) == 1);
	// every family prometheus-cpp serves has a valid name and one type line
	for (const MetricFamily& fam : f) {
		CHECK_THAT(fam.name, Catch::Matches("amupmu_[a-z0-9_]+"));
		CHECK_FALSE(fam.help.empty());
	}
}

TEST_CASE("exporter format negotiation by the Accept header", "[exporter]")
{
	// Prometheus 2.42's scrape Accept header: OpenMetrics first
	CHECK(negotiate_exposition("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
				   "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1") ==
	      Exposition::openmetrics);
	// no header, curl's */*, the text format asked for: the text format
	CHECK(negotiate_exposition("") == Exposition::text);
	CHECK(negotiate_exposition("*/*") == Exposition::text);
	CHECK(negotiate_exposition("text/plain; version=0.0.4") == Exposition::text);
	// OpenMetrics alone, any case, spaces; a tie goes to the text format
	CHECK(negotiate_exposition("Application/OpenMetrics-Text ; Version=\"1.0.0\"") == Exposition::openmetrics);
	CHECK(negotiate_exposition("application/openmetrics-text, text/plain") == Exposition::text);
	CHECK(negotiate_exposition("text/plain;q=0.2, application/openmetrics-text;q=0.3") == Exposition::openmetrics);
	// refused: q=0, a version this serializer does not write, a malformed q
	CHECK(negotiate_exposition("application/openmetrics-text;q=0") == Exposition::text);
	CHECK(negotiate_exposition("application/openmetrics-text;version=2.0.0") == Exposition::text);
	CHECK(negotiate_exposition("application/openmetrics-text;q=high") == Exposition::text);
	CHECK(content_type(Exposition::openmetrics) == "application/openmetrics-text; version=1.0.0; charset=utf-8");
	CHECK(content_type(Exposition::text) == "text/plain; version=0.0.4; charset=utf-8");
}

TEST_CASE("exporter OpenMetrics serialization", "[exporter]")
{
	using prometheus::ClientMetric;
	std::vector<MetricFamily> f = families(mock_scrape());
	MetricFamily s{.name = "exposer_request_latencies", .help = "µs \"quoted\"\\", .type = MetricType::Summary, .metric = {}};
	ClientMetric& sm = s.metric.emplace_back();
	sm.summary.sample_count = 3;
	sm.summary.sample_sum = 1.5;
	sm.summary.quantile = {{.quantile = 0.5, .value = 0.25}};
	f.push_back(s);
	MetricFamily h{.name = "amupmu_spe_latency_cycles", .help = "", .type = MetricType::Histogram, .metric = {}};
	ClientMetric& hm = h.metric.emplace_back();
	hm.label = {{"op", "load\nstore"}};
	hm.histogram.sample_count = 4;
	hm.histogram.sample_sum = 100;
	hm.histogram.bucket = {{.cumulative_count = 1, .upper_bound = 8},
			       {.cumulative_count = 4, .upper_bound = std::numeric_limits<double>::infinity()}};
	hm.timestamp_ms = 1500;
	f.push_back(h);
	MetricFamily u{.name = "odd", .help = "x", .type = MetricType::Untyped, .metric = {}};
	u.metric.emplace_back().untyped.value = std::numeric_limits<double>::quiet_NaN();
	f.push_back(u);

	const std::string t = OpenMetricsSerializer{}.Serialize(f);
	// a counter's family without _total, its samples with it
	CHECK_THAT(t, Catch::Contains("# TYPE amupmu_amu_core_cycles counter\n"
				      "# HELP amupmu_amu_core_cycles AMU CPU_CYCLES: core cycles, not counted in WFI/WFE "
				      "(group 0)\n"
				      "amupmu_amu_core_cycles_total{cpu=\"0\"} 1000\n"
				      "amupmu_amu_core_cycles_total{cpu=\"1\"} 4000\n"));
	CHECK_THAT(t, Catch::Contains("# TYPE amupmu_up gauge\n"));
	CHECK_THAT(t, Catch::Contains("\namupmu_up 1\n"));
	CHECK_THAT(t, Catch::Contains("amupmu_amu_timer_frequency_hertz 62500000\n"));
	CHECK_THAT(t, Catch::Contains("# HELP exposer_request_latencies µs \\\"quoted\\\"\\\\\n"
				      "exposer_request_latencies{quantile=\"0.5\"} 0.25\n"
				      "exposer_request_latencies_sum 1.5\n"
				      "exposer_request_latencies_count 3\n"));
	CHECK_THAT(t, Catch::Contains("# TYPE amupmu_spe_latency_cycles histogram\n"
				      "amupmu_spe_latency_cycles_bucket{op=\"load\\nstore\",le=\"8.0\"} 1 1.5\n"
				      "amupmu_spe_latency_cycles_bucket{op=\"load\\nstore\",le=\"+Inf\"} 4 1.5\n"
				      "amupmu_spe_latency_cycles_sum{op=\"load\\nstore\"} 100 1.5\n"
				      "amupmu_spe_latency_cycles_count{op=\"load\\nstore\"} 4 1.5\n"));
	CHECK_THAT(t, Catch::Contains("# TYPE odd unknown\n# HELP odd x\nodd NaN\n"));
	CHECK_THAT(t, Catch::EndsWith("\n# EOF\n"));
	// every family once, a TYPE line before its samples
	for (const MetricFamily& fam : f) {
		std::string base = fam.name;
		if (fam.type == MetricType::Counter)
			base.resize(base.size() - 6);
		CHECK_THAT(t, Catch::Contains("# TYPE " + base + " "));
	}
}

TEST_CASE("exporter scrape errors count once per scrape and source", "[exporter]")
{
	ExporterScrape s = mock_scrape();
	// the buffer subscription and the dumps both failed in one scrape
	s.errors = {"netlink", "amu", "netlink"};
	const ExporterCollector c{std::make_unique<FakeSource>(std::deque<ExporterScrape>{s}), CompensationOptions{}};
	(void)c.Collect();
	const auto f = c.Collect();
	CHECK(value_of(f, "amupmu_exporter_scrape_errors_total", {{"source", "netlink"}}) == 2);
	CHECK(value_of(f, "amupmu_exporter_scrape_errors_total", {{"source", "amu"}}) == 2);
	CHECK(value_of(f, "amupmu_exporter_scrape_errors_total", {{"source", "pmu"}}) == 0);
}
