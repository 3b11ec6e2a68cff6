// SPDX-License-Identifier: GPL-2.0
#include "exporter.hpp"

#include "cli.hpp"
#include "exposition.hpp"

#include <amupmu/cpu.hpp>
#include <amupmu/device.hpp>
#include <amupmu/errata.hpp>
#include <amupmu/error.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <limits>
#include <utility>
#include <variant>

namespace amupmu::cli {

namespace {

// ---------------------------------------------------------------- config

bool yes_no(std::string_view v, const std::string& where)
{
	if (v == "yes" || v == "true" || v == "on" || v == "1")
		return true;
	if (v == "no" || v == "false" || v == "off" || v == "0")
		return false;
	throw UsageError{where + ": '" + std::string{v} + "' is not yes or no"};
}

std::vector<std::string> split_list(std::string_view v, const std::string& where)
{
	std::vector<std::string> out;
	while (!v.empty()) {
		const auto comma = v.find(',');
		const std::string_view item = trim(v.substr(0, comma));
		if (item.empty())
			throw UsageError{where + ": empty name in the list"};
		out.emplace_back(item);
		if (comma == std::string_view::npos)
			break;
		v.remove_prefix(comma + 1);
		if (trim(v).empty())
			throw UsageError{where + ": empty name in the list"};
	}
	return out;
}

// ---------------------------------------------------------------- families

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

std::string hex(std::uint64_t v, int digits)
{
	char buf[32];
	std::snprintf(buf, sizeof buf, "0x%0*llx", digits, static_cast<unsigned long long>(v));
	return buf;
}

constexpr MetricType counter = MetricType::Counter;
constexpr MetricType gauge = MetricType::Gauge;

/// Families in the order they are first added, each built up metric by metric.
class Families {
public:
	MetricFamily& family(std::string_view name, MetricType type, std::string_view help)
	{
		for (MetricFamily& f : out_)
			if (f.name == name)
				return f;
		out_.push_back(MetricFamily{.name = std::string{name}, .help = std::string{help}, .type = type, .metric = {}});
		return out_.back();
	}
	/// One sample of a counter or a gauge (the value where its type keeps it).
	void add(MetricType type, std::string_view name, std::string_view help,
		 std::vector<ClientMetric::Label> labels, double value)
	{
		ClientMetric m;
		m.label = std::move(labels);
		(type == MetricType::Counter ? m.counter.value : m.gauge.value) = value;
		family(name, type, help).metric.push_back(std::move(m));
	}
	[[nodiscard]] std::vector<MetricFamily> take() { return std::move(out_); }

private:
	std::vector<MetricFamily> out_;
};

ClientMetric::Label cpu_label(unsigned cpu)
{
	return {"cpu", std::to_string(cpu)};
}

std::string errata_ids(std::uint64_t midr)
{
	std::string ids;
	for (const ErratumMatch& m : errata_for(midr)) {
		if (!ids.empty())
			ids += ',';
		ids += m.erratum->id;
		if (m.applicability == Applicability::verify)
			ids += ":verify";
	}
	return ids;
}

void driver_families(const Info& info, Families& f)
{
	f.add(gauge, "amupmu_driver_info", "The amupmu driver: ABI, features, PMU mode, owners, backend (always 1)",
	      {{"abi_version", std::to_string(info.abi_major) + "." + std::to_string(info.abi_minor)},
	       {"features", feature_string(info.features)},
	       {"pmu_mode", std::string{to_string(info.pmu_mode())}},
	       {"spe_owner", std::string{to_string(info.spe_owner)}},
	       {"backend", std::string{backend_name(info)}}},
	      1);
	for (const CpuInfo& c : info.cpus) {
		if (!c.possible())
			continue;
		f.add(gauge, "amupmu_cpu_online", "1 while the CPU is online, 0 while it is offline (possible CPUs)",
		      {cpu_label(c.cpu)}, c.online() ? 1 : 0);
	}
	for (const CpuInfo& c : info.cpus) {
		if (!c.discovered())
			continue;
		const Midr m = decode_midr(c.midr);
		f.add(gauge, "amupmu_cpu_info",
		      "A CPU as the driver discovered it: MIDR_EL1 and its fields, AMU and PMU versions, the "
		      "errata of the CPU that amupmu knows (always 1)",
		      {cpu_label(c.cpu),
		       {"midr", hex(c.midr, 8)},
		       {"implementer", hex(m.implementer, 2)},
		       {"part", hex(m.part, 3)},
		       {"revision", revision_string(m)},
		       {"amu_version", std::to_string(c.amu_usable() ? c.amu_version : 0)},
		       {"pmu_version", std::to_string(c.pmu_version)},
		       {"errata", errata_ids(c.midr)}},
		      1);
	}
}

struct AmuCounterName {
	std::uint16_t event;
	std::string_view name;
	std::string_view help;
};
constexpr AmuCounterName amu_counters[] = {
	{amu_ev::cpu_cycles, "amupmu_amu_core_cycles_total",
	 "AMU CPU_CYCLES: core cycles, not counted in WFI/WFE (group 0)"},
	{amu_ev::cnt_cycles, "amupmu_amu_constant_cycles_total",
	 "AMU CNT_CYCLES: cycles at the system counter's frequency (amupmu_amu_timer_frequency_hertz), not "
	 "counted in WFI/WFE (group 0)"},
	{amu_ev::inst_retired, "amupmu_amu_instructions_retired_total", "AMU INST_RETIRED: instructions retired (group 0)"},
	{amu_ev::stall_backend_mem, "amupmu_amu_memory_stall_cycles_total",
	 "AMU STALL_BACKEND_MEM: cycles stalled on the memory system (group 0)"},
};

void amu_families(const Info& info, const AmuReading& amu, Families& f)
{
	bool any = false;
	for (const AmuCpuReading& r : amu.cpus) {
		// offline (the values it had), no AMU, never online: no series
		if (r.state != 0 || r.cpu >= info.cpus.size())
			continue;
		const CpuInfo& c = info.cpus[r.cpu];
		for (const AmuCounterName& n : amu_counters)
			if (const auto v = r.counter(n.event, c))
				f.add(counter, n.name, n.help, {cpu_label(r.cpu)}, static_cast<double>(*v));
		for (unsigned i = 0; i < r.nr_group1 && i < amu_max_counters; ++i) {
			const std::uint16_t type = c.amevtyper1[i];
			const auto v = r.counter(type, c);
			if (!v)
				continue;
			f.add(counter, "amupmu_amu_auxiliary_events_total",
			      "AMU group 1 (auxiliary, IMPLEMENTATION DEFINED) counters by event type (AMEVTYPER1)",
			      {cpu_label(r.cpu), {"event", hex(type, 4)}}, static_cast<double>(*v));
		}
		f.add(counter, "amupmu_amu_power_downs_total",
		      "Power-downs after which the driver found the AMU counters restarted and added their values "
		      "back",
		      {cpu_label(r.cpu)}, r.restarts);
		any = true;
	}
	if (any)
		f.add(gauge, "amupmu_amu_timer_frequency_hertz",
		      "CNTFRQ_EL0: the rate of amupmu_amu_constant_cycles_total while a CPU is not in WFI/WFE", {},
		      static_cast<double>(amu.timer_freq));
}

constexpr double ns = 1e-9;

void pmu_families(const Info& info, const PmuScrape& pmu, const CompensationOptions& comp, Families& f)
{
	std::vector<EventCount> counts(pmu.events.size());
	for (std::size_t k = 0; k < pmu.cpus.size(); ++k) {
		const CpuReading& r = pmu.cpus[k];
		if (r.offline())
			continue;
		const std::size_t n = std::min<std::size_t>(r.nr_values, pmu.events.size());
		for (std::size_t i = 0; i < n; ++i) {
			counts[i] = EventCount{.number = pmu.events[i].number,
					       .flags = pmu.events[i].flags,
					       .value = static_cast<double>(r.values[i].value)};
		}
		const std::uint64_t midr = r.cpu < info.cpus.size() ? info.cpus[r.cpu].midr : 0;
		for (std::size_t i = 0; i < n; ++i) {
			std::vector<ClientMetric::Label> labels{cpu_label(r.cpu), {"event", pmu.events[i].name}};
			f.add(counter, "amupmu_pmu_events_total",
			      "PMU events counted on the CPU by the exporter's session, as the counter counted them (raw)",
			      labels, static_cast<double>(r.values[i].value));
			const bool times = k < pmu.times.size();
			const std::uint64_t enabled = times ? pmu.times[k].events[i].enabled : r.time_enabled;
			const std::uint64_t running = times ? pmu.times[k].events[i].running : r.time_running;
			f.add(counter, "amupmu_pmu_enabled_seconds_total", "Time the event was enabled on the CPU", labels,
			      static_cast<double>(enabled) * ns);
			f.add(counter, "amupmu_pmu_running_seconds_total",
			      "Time the event was on a counter on the CPU (below enabled: multiplexed)", labels,
			      static_cast<double>(running) * ns);
			if (!comp.enabled)
				continue;
			const std::optional<Compensation> c = compensate({counts.data(), n}, i, midr, comp);
			if (!c || c->status != CompensationStatus::compensated || !c->value)
				continue;
			labels.push_back({"erratum", std::string{c->erratum->id}});
			f.add(counter, "amupmu_pmu_events_compensated_total",
			      "The erratum-compensated count of an event an erratum of the CPU touches (beside "
			      "amupmu_pmu_events_total)",
			      std::move(labels), *c->value);
		}
		f.add(gauge, "amupmu_pmu_evicted",
		      "Shared mode: 1 when perf core took a pinned counter of the session away on the CPU (its "
		      "counts are short)",
		      {cpu_label(r.cpu)}, r.evicted() ? 1 : 0);
	}
}

void buffer_families(const Info& info, const std::optional<BufferTotals>& buffer,
		     const std::optional<std::map<unsigned, DriverCpuTotals>>& exact, Families& f)
{
	const auto at = [](const auto& map, const auto& key) {
		const auto it = map.find(key);
		return it == map.end() ? 0.0 : static_cast<double>(it->second);
	};
	static const BufferTotals none{};
	const BufferTotals& b = buffer ? *buffer : none;
	// the driver's exact totals, else the buffer events' sums
	std::map<unsigned, DriverCpuTotals> totals;
	if (exact) {
		totals = *exact;
	} else {
		for (const auto& [cpu, n] : b.samples_lost)
			totals[cpu].samples_lost = n;
		for (const auto& [cpu, n] : b.throttles)
			totals[cpu].throttles = n;
	}
	// every online CPU from 0 (increase() sees the first loss), and any
	// CPU that has counts (offline now)
	for (const CpuInfo& c : info.cpus) {
		const auto it = totals.find(c.cpu);
		const DriverCpuTotals t = it == totals.end() ? DriverCpuTotals{} : it->second;
		if (!c.online() && t == DriverCpuTotals{})
			continue;
		f.add(counter, "amupmu_pmu_samples_lost_total",
		      exact ? "PMU sample records the CPU's part of a session's ring dropped because it was full, over "
			      "every session since the module was loaded (the driver's CPU_GET total)"
			    : "PMU sample records the CPU's part of a session's ring dropped because it was full, summed "
			      "over every session since the exporter subscribed (RING_LOST events: a lower bound)",
		      {cpu_label(c.cpu)}, static_cast<double>(t.samples_lost));
		f.add(counter, "amupmu_pmu_sample_throttles_total",
		      exact ? "Times a session's sample interrupts on the CPU were throttled until the next tick, over "
			      "every session since the module was loaded (the driver's CPU_GET total)"
			    : "Times a session's sample interrupts on the CPU were throttled until the next tick, summed "
			      "over every session since the exporter subscribed (THROTTLE events: a lower bound)",
		      {cpu_label(c.cpu)}, static_cast<double>(t.throttles));
	}
	if (!buffer)
		return;
	for (const CpuInfo& c : info.cpus) {
		if (!c.online() || !c.has_spe())
			continue;
		for (const char* kind : {"full", "fault", "collision"})
			f.add(counter, "amupmu_spe_buffer_events_total",
			      "SPE buffer management events on the CPU by kind: the buffer filled, a fault stopped "
			      "profiling, records lost to a collision (SPE_BUFFER events)",
			      {cpu_label(c.cpu), {"event", kind}}, at(b.spe_events, std::pair{c.cpu, std::string{kind}}));
	}
	f.add(counter, "amupmu_exporter_events_missed_total",
	      "Buffer events the exporter's subscription missed (sequence gaps: a full socket buffer or the "
	      "driver's full queue); the sums catch up with the next event of the session and CPU",
	      {}, static_cast<double>(b.missed));
}

void spe_families(const Info& info, const SpeTotals& t, Families& f)
{
	if (t.interval != 0)
		f.add(gauge, "amupmu_spe_interval_operations",
		      "Operations between two samples of the exporter's SPE session (PMSIRR_EL1.INTERVAL): a "
		      "histogram's count times it estimates the operations of its type",
		      {{"kernel", t.kernel ? "yes" : "no"}}, t.interval);
	for (const auto& [cpu, c] : t.cpus) {
		if (cpu >= info.cpus.size() || !info.cpus[cpu].online())
			continue;
		for (std::size_t k = 0; k < spe_op_kinds.size(); ++k) {
			const SpeLatencyHistogram& h = c.ops[k];
			ClientMetric m;
			m.label = {cpu_label(cpu), {"op", std::string{spe_op_kinds[k]}}};
			m.histogram.sample_count = h.count;
			m.histogram.sample_sum = static_cast<double>(h.sum);
			std::uint64_t below = 0;
			for (std::size_t i = 0; i < h.buckets.size(); ++i) {
				below += h.buckets[i];
				m.histogram.bucket.push_back(
					{.cumulative_count = below,
					 .upper_bound = i < spe_latency_bounds.size()
								? spe_latency_bounds[i]
								: std::numeric_limits<double>::infinity()});
			}
			f.family("amupmu_spe_latency_cycles", MetricType::Histogram,
				 "Total latency of the operations SPE sampled on the CPU (cycles from dispatch to "
				 "completion), by operation type: load, store, branch, other")
				.metric.push_back(std::move(m));
		}
		f.add(counter, "amupmu_spe_records_total",
		      "SPE records of the exporter's session decoded on the CPU (those without a total latency "
		      "are in no histogram)",
		      {cpu_label(cpu)}, static_cast<double>(c.records));
		f.add(counter, "amupmu_spe_lost_bytes_total",
		      "Bytes of SPE records the exporter's session lost on the CPU (its buffer full: the driver's "
		      "discard area); 64 bytes a record on most CPUs",
		      {cpu_label(cpu)}, static_cast<double>(c.lost_bytes));
	}
}

void health_families(const ExporterScrape& s, Families& f)
{
	if (s.status) {
		f.add(counter, "amupmu_netlink_events_dropped_total", "Netlink events lost to the kernel's full queue", {},
		      static_cast<double>(s.status->events_dropped));
		f.add(counter, "amupmu_netlink_events_undelivered_total",
		      "Netlink event messages a subscriber's full socket buffer refused", {},
		      static_cast<double>(s.status->events_undelivered));
		f.add(gauge, "amupmu_netlink_subscribers", "Sockets subscribed to the amupmu netlink family's events", {},
		      s.status->subscribers);
	}
	if (s.sessions) {
		double pmu = 0, spe = 0;
		for (const MonitorSession& m : *s.sessions)
			(m.kind == SessionKind::spe ? spe : pmu) += 1;
		f.add(gauge, "amupmu_sessions", "Open amupmu sessions by kind (the exporter's own PMU session included)",
		      {{"kind", "pmu"}}, pmu);
		f.add(gauge, "amupmu_sessions", "", {{"kind", "spe"}}, spe);
	}
}

} // namespace

// ---------------------------------------------------------------- config

ExporterConfig parse_exporter_config(std::string_view text, std::string_view file, ExporterConfig base)
{
	ExporterConfig c = std::move(base);
	unsigned line_no = 0;
	while (!text.empty()) {
		const auto nl = text.find('\n');
		std::string_view line = text.substr(0, nl);
		text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
		++line_no;
		if (const auto hash = line.find('#'); hash != std::string_view::npos)
			line = line.substr(0, hash);
		line = trim(line);
		if (line.empty())
			continue;
		const std::string where = std::string{file} + ":" + std::to_string(line_no);
		const auto eq = line.find('=');
		if (eq == std::string_view::npos)
			throw UsageError{where + ": not KEY = VALUE: '" + std::string{line} + "'"};
		const std::string_view key = trim(line.substr(0, eq));
		const std::string_view value = trim(line.substr(eq + 1));
		if (value.empty())
			throw UsageError{where + ": " + std::string{key} + " has no value"};
		if (key == "listen") {
			(void)civetweb_listen(value);
			c.listen = value;
		} else if (key == "device") {
			c.device = value;
		} else if (key == "events") {
			c.events = split_list(value, where);
		} else if (key == "multiplex") {
			c.multiplex = yes_no(value, where);
		} else if (key == "compensate") {
			c.compensate = yes_no(value, where);
		} else if (key == "netlink") {
			c.netlink = yes_no(value, where);
		} else if (key == "threads") {
			unsigned n = 0;
			const auto r = std::from_chars(value.data(), value.data() + value.size(), n);
			if (r.ec != std::errc{} || r.ptr != value.data() + value.size() || n < 1 || n > 64)
				throw UsageError{where + ": threads is a number from 1 to 64, not '" + std::string{value} + "'"};
			c.threads = n;
		} else if (key == "spe") {
			c.spe = yes_no(value, where);
		} else if (key == "spe_kernel") {
			c.spe_kernel = yes_no(value, where);
		} else if (key == "spe_interval" || key == "spe_buffer_pages") {
			std::uint32_t n = 0;
			const auto r = std::from_chars(value.data(), value.data() + value.size(), n);
			if (r.ec != std::errc{} || r.ptr != value.data() + value.size())
				throw UsageError{where + ": " + std::string{key} + " is a number, not '" + std::string{value} +
						 "'"};
			ExporterConfig t = c;
			(key == "spe_interval" ? t.spe_interval : t.spe_buffer_pages) = n;
			try {
				(void)spe_driver_config(exporter_spe_config(t, {}));
			} catch (const InvalidArgument& e) {
				throw UsageError{where + ": " + e.what()};
			}
			c = std::move(t);
		} else {
			throw UsageError{where + ": unknown key '" + std::string{key} +
					 "' (listen, device, events, multiplex, compensate, netlink, threads, spe, "
					 "spe_interval, spe_kernel, spe_buffer_pages)"};
		}
	}
	return c;
}

SpeConfig exporter_spe_config(const ExporterConfig& config, std::vector<unsigned> cpus)
{
	SpeConfig c;
	c.user = true;
	c.kernel = config.spe_kernel;
	c.interval = config.spe_interval;
	c.buf_pages = config.spe_buffer_pages;
	c.cpus = std::move(cpus);
	return c;
}

std::string civetweb_listen(std::string_view listen)
{
	const auto colon = listen.rfind(':');
	if (colon == std::string_view::npos)
		throw UsageError{"--listen: '" + std::string{listen} + "' is not ADDR:PORT (or :PORT)"};
	const std::string_view addr = listen.substr(0, colon);
	const std::string_view port = listen.substr(colon + 1);
	unsigned p = 0;
	const auto r = std::from_chars(port.data(), port.data() + port.size(), p);
	if (port.empty() || r.ec != std::errc{} || r.ptr != port.data() + port.size() || p > 65535)
		throw UsageError{"--listen: port '" + std::string{port} + "' is not a number from 0 to 65535"};
	if (addr.empty())
		return std::string{port};
	if (addr.front() == '[' ? addr.back() != ']' || addr.size() < 3 : addr.find(':') != std::string_view::npos)
		throw UsageError{"--listen: '" + std::string{addr} + "' is not an address (IPv6: [ADDR]:PORT)"};
	return std::string{listen};
}

// ---------------------------------------------------------------- families

std::vector<MetricFamily> exporter_families(const ExporterScrape& s, const ExporterSelf& self,
					    const CompensationOptions& compensation)
{
	Families f;
	f.add(gauge, "amupmu_up", "1 when the amupmu device answered AMUPMU_INFO in this scrape, else 0", {},
	      s.info ? 1 : 0);
	if (s.info) {
		driver_families(*s.info, f);
		if (s.amu)
			amu_families(*s.info, *s.amu, f);
		if (s.pmu)
			pmu_families(*s.info, *s.pmu, compensation, f);
		if (s.buffer || s.cpu_totals)
			buffer_families(*s.info, s.buffer, s.cpu_totals, f);
		if (s.spe)
			spe_families(*s.info, *s.spe, f);
	}
	health_families(s, f);
	for (const auto& [source, n] : self.errors)
		f.add(counter, "amupmu_exporter_scrape_errors_total",
		      "Scrapes in which reading a source failed (device, amu, pmu, netlink)", {{"source", source}},
		      static_cast<double>(n));
	f.add(counter, "amupmu_exporter_pmu_session_opens_total",
	      "PMU sessions the exporter opened (again after a failure, or for a CPU that came online)", {},
	      static_cast<double>(self.pmu_session_opens));
	return f.take();
}

// ---------------------------------------------------------------- buffer events

void BufferCounter::grow(std::uint64_t& last, std::uint64_t now, std::uint64_t& total)
{
	// below the last count: a new session under a reused id (the module
	// was loaded again), all of it is new
	total += now >= last ? now - last : now;
	last = now;
}

void BufferCounter::add(const MonitorRecord& record)
{
	if (const auto* lost = std::get_if<RingLostEvent>(&record)) {
		Last& l = last_[{lost->session_id, lost->cpu}];
		l.absent = 0;
		grow(l.lost, lost->lost, totals_.samples_lost[lost->cpu]);
	} else if (const auto* spe = std::get_if<SpeBufferEvent>(&record)) {
		++totals_.spe_events[{spe->cpu, to_string(spe->what)}];
	} else if (const auto* gap = std::get_if<Gap>(&record)) {
		totals_.missed += gap->missed();
	}
}

void BufferCounter::add(const ThrottleEvent& event)
{
	Last& l = last_[{event.session_id, event.cpu}];
	l.absent = 0;
	grow(l.throttled, event.throttled, totals_.throttles[event.cpu]);
}

void BufferCounter::sessions(const std::vector<MonitorSession>& live)
{
	for (auto it = last_.begin(); it != last_.end();) {
		const bool listed =
			std::ranges::any_of(live, [&](const MonitorSession& m) { return m.id == it->first.first; });
		it->second.absent = listed ? 0 : it->second.absent + 1;
		// twice: an event queued as the session ended may come after
		// the dump that no longer lists it
		it = it->second.absent >= 2 ? last_.erase(it) : std::next(it);
	}
}

// ---------------------------------------------------------------- the driver

DriverSource::DriverSource(ExporterConfig config) : config_{std::move(config)} {}

DriverSource::~DriverSource() = default;

void DriverSource::note(std::string_view source, const std::string& message)
{
	// each failure once until it changes: a scrape every 15 s must not
	// fill the journal with the same line
	auto it = last_message_.find(source);
	if (it != last_message_.end() && it->second == message)
		return;
	last_message_[std::string{source}] = message;
	std::cerr << "amupmu exporter: " << source << ": " << message << std::endl;
}

void DriverSource::read_pmu(const Info& info, ExporterScrape& out, ExporterSelf& self)
{
	std::vector<unsigned> online;
	for (const CpuInfo& c : info.cpus)
		if (c.online() && c.has_pmu())
			online.push_back(c.cpu);
	// a CPU that was not online when the session was configured (the
	// driver refuses a group on a CPU it never discovered): configure
	// again, for every CPU online now (a counter reset, which rate() takes)
	if (session_ && !std::ranges::includes(session_cpus_, online))
		session_.reset();
	try {
		if (!session_) {
			const auto first = std::ranges::find_if(info.cpus, [](const CpuInfo& c) { return c.discovered(); });
			const std::uint64_t midr = first == info.cpus.end() ? 0 : first->midr;
			std::vector<EventSpec> events;
			for (const std::string& name : config_.events)
				events.push_back(parse_event(name, midr));
			if (config_.compensate)
				for (EventSpec& e : errata_companions(events, midr))
					events.push_back(std::move(e));
			if (online.empty())
				return;
			const GroupConfig group{.events = group_events(events), .cpus = online, .ring_pages = 0};
			Session s = Session::open(group, config_.multiplex ? Scheduling::multiplex : Scheduling::pinned,
						  config_.device);
			s.enable();
			session_.emplace(std::move(s));
			events_ = std::move(events);
			session_cpus_ = std::move(online);
			++self.pmu_session_opens;
		}
		session_->read_all(reading_);
		PmuScrape p{.events = events_, .cpus = {}, .times = {}};
		p.cpus.assign(reading_.cpus().begin(), reading_.cpus().end());
		if (reading_.has_times())
			for (std::size_t i = 0; i < p.cpus.size(); ++i)
				p.times.push_back(reading_.times(i));
		out.pmu = std::move(p);
		last_message_.erase("pmu");
	} catch (const std::exception& e) {
		session_.reset();
		out.errors.emplace_back("pmu");
		note("pmu", e.what());
	}
}

ExporterScrape DriverSource::read(ExporterSelf& self)
{
	ExporterScrape out;
	int err = 0;
	// opened for this scrape only: the exporter does not keep the module
	// loaded for the AMU (its PMU session does)
	std::optional<Device> dev = Device::try_open(config_.device, &err);
	if (!dev) {
		// not loaded (ENOENT, ENODEV, ENXIO): no series but amupmu_up 0
		if (err != ENOENT && err != ENODEV && err != ENXIO) {
			out.errors.emplace_back("device");
			note("device", config_.device + ": " + std::error_code{err, std::generic_category()}.message());
		}
		return out;
	}
	try {
		Amu amu = Amu::create(std::move(*dev));
		out.info = amu.info();
		if (out.info->has_amu()) {
			try {
				out.amu = amu.read();
				last_message_.erase("amu");
			} catch (const Unsupported&) {
				// no CPU has a usable AMU now
			} catch (const Error& e) {
				out.errors.emplace_back("amu");
				note("amu", e.what());
			}
		}
		last_message_.erase("device");
	} catch (const Error& e) {
		out.errors.emplace_back("device");
		note("device", e.what());
		return out;
	}
	if (!config_.events.empty())
		read_pmu(*out.info, out, self);
	if (config_.spe)
		read_spe(*out.info, out);
	if (config_.netlink)
		read_netlink(out);
	return out;
}

void DriverSource::read_spe(const Info& info, ExporterScrape& out)
{
	std::vector<unsigned> online;
	for (const CpuInfo& c : info.cpus)
		if (c.online() && c.has_spe())
			online.push_back(c.cpu);
	// a CPU that came online since the session was configured: configure
	// again, for every CPU with SPE online now (the counts go on)
	if (spe_ && !std::ranges::includes(spe_->cpus(), online))
		spe_.reset();
	try {
		if (!spe_ && !online.empty())
			spe_ = std::make_unique<SpeSampler>(exporter_spe_config(config_, std::move(online)), config_.device,
							    spe_totals_, spe_mutex_);
		std::string stopped;
		{
			const std::lock_guard lock{spe_mutex_};
			if (spe_)
				stopped = spe_->flush_locked();
			out.spe = spe_totals_;
		}
		if (!stopped.empty()) {
			// configured again at the next scrape (after a fault, the
			// way profiling starts again)
			spe_.reset();
			out.errors.emplace_back("spe");
			note("spe", stopped);
			return;
		}
		if (!spe_)
			note("spe", "no online CPU has SPE: no SPE histograms");
		else
			last_message_.erase("spe");
	} catch (const std::exception& e) {
		spe_.reset();
		out.errors.emplace_back("spe");
		note("spe", e.what());
	}
}

void DriverSource::read_netlink(ExporterScrape& out)
{
	std::optional<Monitor> m;
	try {
		m.emplace();
	} catch (const std::exception& e) {
		buffer_monitor_.reset();
		out.errors.emplace_back("netlink");
		note("netlink", e.what());
		return;
	}
	// the buffer group's events (CAP_PERFMON) come to a socket kept across
	// scrapes; a new family id (the module was loaded again since the
	// last scrape): subscribed anew, the sums start afresh (a counter
	// reset). Without it the status and session dumps are served still.
	try {
		if (!buffer_monitor_ || buffer_monitor_->family_id() != m->family_id()) {
			buffer_monitor_.reset();
			buffer_ = {};
			Monitor sub;
			sub.on_throttle([this](const ThrottleEvent& t) { buffer_.add(t); });
			sub.subscribe(group_bit(MonitorGroup::buffer));
			buffer_monitor_.emplace(std::move(sub));
		}
		// before the session dump: the events of a session that ended
		// are in the socket by then
		buffer_monitor_->read_events([this](const MonitorRecord& r) { buffer_.add(r); });
		last_message_.erase("buffer events");
	} catch (const std::exception& e) {
		buffer_monitor_.reset();
		out.errors.emplace_back("netlink");
		note("buffer events", e.what());
	}
	try {
		out.status = m->status();
		out.sessions = m->sessions();
		// the exact totals where the driver gives them (ABI 2.5 and
		// CAP_PERFMON: every CPU's reply has them, or none does)
		std::map<unsigned, DriverCpuTotals> exact;
		for (const MonitorCpuTotals& c : m->cpus_totals()) {
			if (!c.lost_total || !c.throttled_total) {
				exact.clear();
				break;
			}
			exact[c.info.cpu] = {.samples_lost = *c.lost_total, .throttles = *c.throttled_total};
		}
		if (!exact.empty())
			out.cpu_totals = std::move(exact);
		if (buffer_monitor_) {
			buffer_.sessions(*out.sessions);
			out.buffer = buffer_.totals();
		}
		last_message_.erase("netlink");
	} catch (const std::exception& e) {
		out.errors.emplace_back("netlink");
		note("netlink", e.what());
	}
}

// ---------------------------------------------------------------- Collectable

ExporterCollector::ExporterCollector(std::unique_ptr<ExporterSource> source, CompensationOptions compensation)
	: source_{std::move(source)}, compensation_{std::move(compensation)}
{
}

std::vector<MetricFamily> ExporterCollector::Collect() const
{
	const std::lock_guard lock{mutex_};
	const auto t0 = std::chrono::steady_clock::now();
	ExporterScrape s = source_->read(self_);
	++self_.scrapes;
	// a scrape counts once per source, however many of its reads failed
	std::sort(s.errors.begin(), s.errors.end());
	s.errors.erase(std::unique(s.errors.begin(), s.errors.end()), s.errors.end());
	for (const std::string& e : s.errors)
		++self_.errors[e];
	std::vector<MetricFamily> out = exporter_families(s, self_, compensation_);
	const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
	MetricFamily d{.name = "amupmu_exporter_scrape_duration_seconds",
		       .help = "Time this scrape took to read the driver and build the metrics",
		       .type = prometheus::MetricType::Gauge,
		       .metric = {}};
	d.metric.emplace_back().gauge.value = took.count();
	out.push_back(std::move(d));
	return out;
}

} // namespace amupmu::cli
