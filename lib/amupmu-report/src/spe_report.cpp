// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The SPE report: aggregation of a recording (build_spe_report) and its
// renderings (text, JSON, SVG). See amupmu/spe_report.hpp.
#include <amupmu/bits.hpp>
#include <amupmu/cpu.hpp>
#include <amupmu/spe.hpp>
#include <amupmu/report/json.hpp>
#include <amupmu/report/spe_report.hpp>

#include <amupmu/text/columns.hpp>
#include <amupmu/text/escape.hpp>
#include <amupmu/text/numtext.hpp>

#include <algorithm>
#include <bit>
#include <functional>
#include <tuple>
#include <unordered_map>

namespace amupmu::report {

using text::decimal;
using text::fixed;
using text::pad_left;
using text::percent;

// ---------------------------------------------------------------- LatencyDistribution

void LatencyDistribution::add(std::uint16_t value, std::uint64_t n)
{
	if (n == 0)
		return;
	values_[value] += n;
	count_ += n;
	sum_ += std::uint64_t{value} * n;
}

void LatencyDistribution::merge(const LatencyDistribution& other)
{
	for (const auto& [v, n] : other.values_)
		values_[v] += n;
	count_ += other.count_;
	sum_ += other.sum_;
}

double LatencyDistribution::mean() const noexcept
{
	return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0;
}

std::uint16_t LatencyDistribution::min() const noexcept
{
	return values_.empty() ? 0 : values_.begin()->first;
}

std::uint16_t LatencyDistribution::max() const noexcept
{
	return values_.empty() ? 0 : values_.rbegin()->first;
}

std::uint16_t LatencyDistribution::quantile(std::uint64_t num, std::uint64_t den) const noexcept
{
	if (values_.empty() || den == 0)
		return 0;
	num = std::min(num, den);
	// rank = ceil(count * num / den), at least 1; 128-bit: no overflow
	const unsigned __int128 product = static_cast<unsigned __int128>(count_) * num;
	auto rank = static_cast<std::uint64_t>((product + den - 1) / den);
	rank = std::max<std::uint64_t>(rank, 1);
	std::uint64_t seen = 0;
	for (const auto& [v, n] : values_) {
		seen += n;
		if (seen >= rank)
			return v;
	}
	return values_.rbegin()->first;
}

std::size_t LatencyDistribution::bucket_of(std::uint16_t value) noexcept
{
	return static_cast<std::size_t>(std::bit_width(value));
}

std::uint32_t LatencyDistribution::bucket_low(std::size_t k) noexcept
{
	return k == 0 ? 0 : std::uint32_t{1} << (k - 1);
}

std::uint32_t LatencyDistribution::bucket_high(std::size_t k) noexcept
{
	return k == 0 ? 0 : (std::uint32_t{1} << k) - 1;
}

std::array<std::uint64_t, LatencyDistribution::buckets> LatencyDistribution::log2_buckets() const noexcept
{
	std::array<std::uint64_t, buckets> b{};
	for (const auto& [v, n] : values_)
		b[bucket_of(v)] += n;
	return b;
}

std::string_view to_string(SpeLatency l) noexcept
{
	switch (l) {
	case SpeLatency::total: return "total";
	case SpeLatency::issue: return "issue";
	case SpeLatency::translation: return "translation";
	}
	return "?";
}

std::string spe_backend_description(std::string_view backend)
{
	if (backend == "mock")
		return "mock SPE model (test build)";
	if (backend == "hardware")
		return "hardware SPE";
	return "unknown backend '" + std::string{backend} + "'";
}

// ---------------------------------------------------------------- aggregation

namespace {

struct PcKey {
	std::uint8_t el;
	std::uint32_t pid;
	std::uint64_t pc;
	friend bool operator==(const PcKey&, const PcKey&) = default;
};
struct PcKeyHash {
	std::size_t operator()(const PcKey& k) const noexcept
	{
		return std::hash<std::uint64_t>{}(k.pc ^ (std::uint64_t{k.pid} << 32 | k.el) * 0x9E3779B97F4A7C15ULL);
	}
};

struct PcAgg {
	std::uint64_t records = 0;
	LatencyDistribution total{};
};

// An address or line in the first pass: counts only (there may be one per
// record); the distribution and the data sources of the top ones come from
// a second pass (AddressDetail).
struct AddrAgg {
	std::uint64_t records = 0;
	std::uint64_t latency_sum = 0;
	std::uint64_t latency_count = 0;
};

struct AddressDetail {
	SpeHotAddress* hot;
	std::vector<std::pair<SpeDataSource, std::uint64_t>> sources{};

	void add_source(const SpeDataSource& s)
	{
		for (auto& [src, n] : sources)
			if (src == s) {
				++n;
				return;
			}
		sources.emplace_back(s, 1);
	}
	// the most frequent source, the lowest on a tie
	void finish() const
	{
		for (const auto& [src, n] : sources)
			if (n > hot->dominant_records || (n == hot->dominant_records && hot->dominant && src < *hot->dominant)) {
				hot->dominant = src;
				hot->dominant_records = n;
			}
	}
};

struct OpAgg {
	std::uint64_t records = 0;
	LatencyDistribution total{};
};

struct CpuAgg {
	SpeCpuReport report{};
};

// The exception level of a PC packet as perf's mode (EL2: a VHE host's
// kernel; EL3: firmware, unknown to perf).
SampleMode mode_of_el(unsigned el) noexcept
{
	switch (el) {
	case 0: return SampleMode::user;
	case 1:
	case 2: return SampleMode::kernel;
	default: return static_cast<SampleMode>(el);
	}
}

void add_end(SpeTotals& t, const spe::Record& r) noexcept
{
	++t.records;
	if (r.complete())
		++t.complete;
	switch (r.end) {
	case spe::RecordEnd::end: ++t.by_end; break;
	case spe::RecordEnd::timestamp: ++t.by_timestamp; break;
	case spe::RecordEnd::buffer_end: ++t.buffer_end; break;
	case spe::RecordEnd::truncated: ++t.truncated; break;
	case spe::RecordEnd::resync: ++t.resync; break;
	}
}

void add_summary(SpeOpSummary& s, const spe::OpType& op, const std::optional<spe::Events>& ev) noexcept
{
	using spe::OpClass;
	using spe::OpSubclass;
	namespace f = spe::op_flag;
	switch (op.cls) {
	case OpClass::load_store:
		++(op.has(f::store) ? s.stores : s.loads);
		if (op.subclass == OpSubclass::gp)
			++s.gp;
		else if (op.subclass == OpSubclass::simd_fp)
			++s.simd_fp;
		else if (op.subclass == OpSubclass::sve_sme)
			++s.sve_sme;
		s.atomics += op.has(f::atomic);
		s.exclusives += op.has(f::exclusive);
		s.acquire_release += op.has(f::acquire_release);
		break;
	case OpClass::branch:
		++s.branches;
		s.conditional += op.has(f::conditional);
		s.indirect += op.has(f::indirect);
		s.calls += op.call_return == spe::CallReturn::branch_with_link;
		s.returns += op.call_return == spe::CallReturn::return_;
		s.mispredicted += ev && ev->mispredicted();
		break;
	case OpClass::other:
		++s.other;
		s.sve_sme_other += op.subclass == OpSubclass::sve_other || op.subclass == OpSubclass::sme_other;
		break;
	case OpClass::reserved:
		break;
	}
}

// What the hottest-first order looks at: records, the total latency's sum
// and count (its mean, compared exactly as a fraction), and an address key
// that breaks ties.
struct Rank {
	std::uint64_t records, sum, count;
	std::array<std::uint64_t, 3> key;
};

template <typename T>
Rank rank_of(const T& x, std::array<std::uint64_t, 3> key)
{
	return {x.records, x.total.sum(), x.total.count(), key};
}

// Keeps the top entries of v, hottest first: by records or by mean total
// latency, then by records, then by key (ascending).
template <typename T, typename View>
void keep_top(std::vector<T>& v, SpeSort sort, std::size_t top, View view)
{
	const auto before = [&](const T& x, const T& y) {
		const Rank a = view(x), b = view(y);
		if (sort == SpeSort::latency) {
			const auto lhs = static_cast<unsigned __int128>(a.sum) * b.count;
			const auto rhs = static_cast<unsigned __int128>(b.sum) * a.count;
			if (lhs != rhs)
				return lhs > rhs;
		}
		if (a.records != b.records)
			return a.records > b.records;
		return a.key < b.key;
	};
	const std::size_t n = std::min(top, v.size());
	std::partial_sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n), v.end(), before);
	v.erase(v.begin() + static_cast<std::ptrdiff_t>(n), v.end());
}

// The top addresses of a first-pass map, without their distributions.
std::vector<SpeHotAddress> top_addresses(const std::unordered_map<std::uint64_t, AddrAgg>& m,
					 const SpeReportOptions& o)
{
	using Entry = const std::pair<const std::uint64_t, AddrAgg>*;
	std::vector<Entry> ranked;
	ranked.reserve(m.size());
	for (const auto& e : m)
		ranked.push_back(&e);
	keep_top(ranked, o.sort, o.top, [](Entry e) {
		return Rank{e->second.records, e->second.latency_sum, e->second.latency_count, {e->first, 0, 0}};
	});
	std::vector<SpeHotAddress> out;
	out.reserve(ranked.size());
	for (const Entry e : ranked)
		out.push_back({.address = e->first, .records = e->second.records});
	return out;
}

class Aggregator {
public:
	Aggregator(const SpeRecording& rec, const SpeReportOptions& o) : rec_{rec}, opts_{o}
	{
		for (const SpeRecordedCpu& c : rec.cpu_stats) {
			CpuAgg& a = cpu(c.cpu);
			a.report.midr = c.midr;
			a.report.encoding = spe_data_source_encoding(c.midr);
		}
	}

	void add_counters(const SpeRecordedCpu& c)
	{
		for (SpeTotals* t : {&report_.totals, &cpu(c.cpu).report.totals}) {
			t->lost_bytes += c.lost_bytes;
			t->truncations += c.truncations;
			t->collisions += c.collisions;
			t->faults += c.faults;
		}
	}

	void add_chunk(const SpeChunk& chunk)
	{
		CpuAgg& c = cpu(chunk.cpu);
		chunks_.push_back({&chunk, c.report.encoding});
		spe::RecordReader reader{chunk.data};
		spe::Record r;
		while (reader.next(r))
			add(r, c);
		const spe::Stats& st = reader.stats();
		for (SpeTotals* t : {&report_.totals, &c.report.totals}) {
			t->bytes += chunk.data.size();
			t->unknown_packets += st.unknown_packets;
			t->skipped_bytes += st.skipped_bytes;
			t->padding_bytes += st.padding_bytes;
		}
	}

	SpeReport finish();

private:
	CpuAgg& cpu(std::uint32_t n)
	{
		auto [it, added] = cpus_.try_emplace(n);
		if (added)
			it->second.report.cpu = n;
		return it->second;
	}

	void add(const spe::Record& r, CpuAgg& c);
	void detail_addresses();

	const SpeRecording& rec_;
	const SpeReportOptions& opts_;
	SpeReport report_{};
	std::map<std::uint32_t, CpuAgg> cpus_{};
	std::array<OpAgg, 1024> ops_{};
	std::map<SpeDataSource, SpeDataSourceRow> sources_{};
	std::unordered_map<PcKey, PcAgg, PcKeyHash> pcs_{};
	std::unordered_map<std::uint64_t, AddrAgg> addresses_{};
	std::unordered_map<std::uint64_t, AddrAgg> lines_{};
	std::vector<std::pair<const SpeChunk*, SpeDataSourceEncoding>> chunks_{};
};

void Aggregator::add(const spe::Record& r, CpuAgg& c)
{
	SpeReport& rep = report_;
	add_end(rep.totals, r);
	add_end(c.report.totals, r);

	const std::optional<std::uint16_t> lat[3] = {r.total_latency(), r.issue_latency(), r.translation_latency()};
	for (std::size_t i = 0; i < 3; ++i)
		if (lat[i])
			rep.latency[i].add(*lat[i]);
	const auto add_total = [&](LatencyDistribution& d) {
		if (lat[0])
			d.add(*lat[0]);
	};
	add_total(c.report.total);

	const std::optional<spe::Events> ev = r.events();
	if (ev) {
		++rep.records_with_events;
		for (std::uint64_t bits = ev->bits; bits; bits &= bits - 1)
			++rep.events[static_cast<std::size_t>(std::countr_zero(bits))];
	}

	if (const auto op = r.op()) {
		OpAgg& o = ops_[static_cast<std::size_t>(op->cls) << 8 | op->raw];
		++o.records;
		add_total(o.total);
		add_summary(rep.op_summary, *op, ev);
	} else {
		++rep.op_summary.no_op_type;
	}

	std::optional<SpeDataSource> src;
	if (const auto ds = r.data_source()) {
		src = SpeDataSource{c.report.encoding, *ds};
		SpeDataSourceRow& row = sources_[*src];
		row.source = *src;
		++row.records;
		add_total(row.total);
	}

	if (const auto pc = r.pc()) {
		const SampleMode mode = mode_of_el(pc->el);
		std::uint32_t pid = 0;
		if (mode == SampleMode::user)
			pid = r.context_el1().value_or(r.context_el2().value_or(rec_.pid));
		PcAgg& p = pcs_[PcKey{pc->el, pid, pc->virtual_address()}];
		++p.records;
		add_total(p.total);
	}

	if (const auto va = r.data_va()) {
		++rep.records_with_data_va;
		const std::uint64_t a = va->virtual_address();
		for (AddrAgg* agg : {&addresses_[a], &lines_[a & ~std::uint64_t{63}]}) {
			++agg->records;
			if (lat[0]) {
				agg->latency_sum += *lat[0];
				++agg->latency_count;
			}
		}
	}
}

// The second pass: the latency distribution and data sources of the top
// addresses and lines only.
void Aggregator::detail_addresses()
{
	std::unordered_map<std::uint64_t, AddressDetail> addresses, lines;
	for (SpeHotAddress& h : report_.addresses)
		addresses.try_emplace(h.address, AddressDetail{&h});
	for (SpeHotAddress& h : report_.lines)
		lines.try_emplace(h.address, AddressDetail{&h});
	if (addresses.empty())
		return;
	for (const auto& [chunk, encoding] : chunks_) {
		spe::RecordReader reader{chunk->data};
		spe::Record r;
		while (reader.next(r)) {
			const auto va = r.data_va();
			if (!va)
				continue;
			const std::uint64_t a = va->virtual_address();
			for (auto [map, key] : {std::pair{&addresses, a}, std::pair{&lines, a & ~std::uint64_t{63}}}) {
				const auto it = map->find(key);
				if (it == map->end())
					continue;
				if (const auto lat = r.total_latency())
					it->second.hot->total.add(*lat);
				if (const auto ds = r.data_source())
					it->second.add_source({encoding, *ds});
			}
		}
	}
	for (const auto* map : {&addresses, &lines})
		for (const auto& [key, d] : *map)
			d.finish();
}

SpeReport Aggregator::finish()
{
	SpeReport& rep = report_;
	rep.command = rec_.command;
	rep.cpus = rec_.cpus;
	rep.backend = rec_.backend;
	rep.pid = rec_.pid;
	rep.timer_freq = rec_.timer_freq;
	for (auto& [n, c] : cpus_)
		rep.cpu.push_back(std::move(c.report));

	for (std::size_t i = 0; i < ops_.size(); ++i) {
		OpAgg& o = ops_[i];
		if (!o.records)
			continue;
		spe::Packet p{.kind = spe::PacketKind::op_type, .index = static_cast<std::uint8_t>(i >> 8),
			      .payload_size = 1, .payload = i & 0xFF};
		rep.ops.push_back({.cls = p.index, .payload = static_cast<std::uint8_t>(i & 0xFF),
				   .label = spe::describe(p), .records = o.records, .total = std::move(o.total)});
	}
	// every type is listed: the order is by records whatever options.sort says
	keep_top(rep.ops, SpeSort::count, rep.ops.size(),
		 [](const SpeOpRow& o) { return rank_of(o, {o.cls, o.payload, 0}); });

	for (auto& [src, row] : sources_)
		rep.data_sources.push_back(std::move(row));
	keep_top(rep.data_sources, SpeSort::count, rep.data_sources.size(), [](const SpeDataSourceRow& d) {
		return rank_of(d, {static_cast<std::uint64_t>(d.source.encoding), d.source.code, 0});
	});

	Symbolizer sym;
	for (const Mapping& m : rec_.maps)
		sym.add(m);
	std::map<std::tuple<char, std::string, std::string>, SpeHotSymbol> symbols;
	rep.pcs.reserve(pcs_.size());
	for (auto& [key, p] : pcs_) {
		SpeHotPc h{.mode = mode_of_el(key.el), .el = key.el, .pid = key.pid, .pc = key.pc};
		h.where = sym.resolve(key.pid, key.pc, h.mode);
		h.records = p.records;
		h.total = std::move(p.total);
		std::string name = h.where.symbol;
		if (const std::size_t plus = name.rfind('+'); plus != std::string::npos)
			name.resize(plus);
		if (name.empty())
			name = "[unknown]";
		const char level = perf_level(h.mode);
		auto [it, added] = symbols.try_emplace({level, name, h.where.dso});
		SpeHotSymbol& s = it->second;
		if (added) {
			s.level = level;
			s.symbol = name;
			s.dso = h.where.dso;
			s.lowest_pc = h.pc;
		}
		s.lowest_pc = std::min(s.lowest_pc, h.pc);
		s.records += h.records;
		s.total.merge(h.total);
		rep.pcs.push_back(std::move(h));
	}
	rep.distinct_pcs = rep.pcs.size();
	keep_top(rep.pcs, opts_.sort, opts_.top, [](const SpeHotPc& h) { return rank_of(h, {h.pc, h.pid, h.el}); });
	for (auto& [key, s] : symbols)
		rep.symbols.push_back(std::move(s));
	rep.distinct_symbols = rep.symbols.size();
	keep_top(rep.symbols, opts_.sort, opts_.top, [](const SpeHotSymbol& s) {
		return rank_of(s, {s.lowest_pc, static_cast<std::uint64_t>(s.level), 0});
	});

	rep.distinct_addresses = addresses_.size();
	rep.addresses = top_addresses(addresses_, opts_);
	rep.distinct_lines = lines_.size();
	rep.lines = top_addresses(lines_, opts_);
	detail_addresses();
	return std::move(report_);
}

SpeReport aggregate(const SpeRecording& rec, const SpeReportOptions& o, std::optional<std::uint32_t> only)
{
	Aggregator agg{rec, o};
	for (const SpeRecordedCpu& c : rec.cpu_stats)
		if (!only || c.cpu == *only)
			agg.add_counters(c);
	for (const SpeChunk& chunk : rec.chunks)
		if (!only || chunk.cpu == *only)
			agg.add_chunk(chunk);
	SpeReport r = agg.finish();
	if (only) {
		r.only_cpu = only;
		std::erase_if(r.cpu, [&](const SpeCpuReport& c) { return c.cpu != *only; });
	}
	return r;
}

} // namespace

SpeReport build_spe_report(const SpeRecording& recording, const SpeReportOptions& options)
{
	SpeReport r = aggregate(recording, options, std::nullopt);
	if (options.per_cpu)
		for (const SpeCpuReport& c : r.cpu)
			if (c.totals.bytes)
				r.per_cpu.push_back(aggregate(recording, options, c.cpu));
	return r;
}

// ---------------------------------------------------------------- text

namespace {

std::string mean_text(const LatencyDistribution& d)
{
	return d.empty() ? std::string{"-"} : fixed(d.mean(), 1);
}

std::string p90_text(const LatencyDistribution& d)
{
	return d.empty() ? std::string{"-"} : decimal(d.p90());
}

// A bar of width cells for n of max: Unicode eighth blocks, or '#'.
std::string bar(std::uint64_t n, std::uint64_t max, unsigned width, bool ascii)
{
	if (!n || !max)
		return {};
	const auto scaled = static_cast<std::uint64_t>(
		(static_cast<unsigned __int128>(n) * width * 8 + max - 1) / max);	// eighths, rounded up
	std::string s;
	if (ascii) {
		s.assign(static_cast<std::size_t>((scaled + 7) / 8), '#');
		return s;
	}
	static constexpr std::string_view eighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
	for (std::uint64_t i = 0; i < scaled / 8; ++i)
		s += "█";
	s += eighths[scaled % 8];
	return s;
}

std::string bucket_label(std::size_t k)
{
	const std::uint32_t lo = LatencyDistribution::bucket_low(k), hi = LatencyDistribution::bucket_high(k);
	return lo == hi ? decimal(lo) : decimal(lo) + "-" + decimal(hi);
}

std::string percentiles_line(const LatencyDistribution& d)
{
	return "p50 " + decimal(d.p50()) + "  p90 " + decimal(d.p90()) + "  p99 " + decimal(d.p99()) + "  p99.9 " +
	       decimal(d.p999()) + "  max " + decimal(d.max()) + "  mean " + fixed(d.mean(), 2);
}

std::string_view latency_meaning(SpeLatency l)
{
	switch (l) {
	case SpeLatency::total: return "cycles from dispatch to completion";
	case SpeLatency::issue: return "cycles from dispatch to issue";
	case SpeLatency::translation: return "cycles of the address translation";
	}
	return "";
}

std::string cpu_label(const SpeCpuReport& c)
{
	return c.midr ? describe_midr(c.midr) : std::string{"MIDR not recorded"};
}

class TextReport {
public:
	TextReport(const SpeReport& r, const SpeReportOptions& o) : r_{r}, o_{o} {}

	std::string render()
	{
		header();
		cpus();
		latency();
		ops();
		sources();
		events();
		symbols();
		pcs();
		addresses("hottest data addresses", r_.addresses, r_.distinct_addresses);
		addresses("hottest 64-byte cache lines", r_.lines, r_.distinct_lines);
		for (const SpeReport& c : r_.per_cpu) {
			out_ += "\n";
			out_ += std::string(72, '=') + "\n";
			out_ += TextReport{c, o_}.render();
		}
		return std::move(out_);
	}

private:
	void line(const std::string& s) { out_ += s + "\n"; }

	void header()
	{
		const SpeTotals& t = r_.totals;
		std::string cmd;
		for (const std::string& a : r_.command)
			cmd += (cmd.empty() ? "" : " ") + a;
		line("# amupmu spe report: " + decimal(t.records) + " records" +
		     (r_.only_cpu ? " of CPU " + decimal(*r_.only_cpu) : " from CPUs " + r_.cpus) +
		     ", backend: " + spe_backend_description(r_.backend));
		line("# command: " + (cmd.empty() ? std::string{"(none)"} : cmd) +
		     (r_.pid ? " (pid " + decimal(r_.pid) + ")" : std::string{}));
		line("# records: " + decimal(t.complete) + " complete, " + decimal(t.incomplete()) + " incomplete (ended by: " +
		     decimal(t.by_end) + " END, " + decimal(t.by_timestamp) + " TIMESTAMP, " + decimal(t.buffer_end) +
		     " buffer end, " + decimal(t.truncated) + " truncated packet, " + decimal(t.resync) +
		     " resync after an unknown packet)");
		line("# decoded: " + decimal(t.bytes) + " bytes, " + decimal(t.unknown_packets) + " unknown packets, " +
		     decimal(t.skipped_bytes) + " bytes skipped, " + decimal(t.padding_bytes) + " bytes of padding");
		line("# lost: " + decimal(t.lost_bytes) + " bytes, " + decimal(t.truncations) + " truncations, " +
		     decimal(t.collisions) + " collisions, " + decimal(t.faults) + " faults");
		if (r_.backend == "mock")
			line("# NOTE: the records come from the mock SPE model of a test build, not from hardware");
	}

	void cpus()
	{
		line("\n# per CPU");
		line("#  cpu   records  incomplete  unknown  lost-bytes  trunc  coll  faults  lat-p50  lat-p90  lat-p99  "
		     "cpu (data-source encoding)");
		for (const SpeCpuReport& c : r_.cpu) {
			const SpeTotals& t = c.totals;
			line("  " + pad_left(decimal(c.cpu), 4) + pad_left(decimal(t.records), 10) +
			     pad_left(decimal(t.incomplete()), 12) + pad_left(decimal(t.unknown_packets), 9) +
			     pad_left(decimal(t.lost_bytes), 12) + pad_left(decimal(t.truncations), 7) +
			     pad_left(decimal(t.collisions), 6) + pad_left(decimal(t.faults), 8) +
			     pad_left(decimal(c.total.p50()), 9) + pad_left(decimal(c.total.p90()), 9) +
			     pad_left(decimal(c.total.p99()), 9) + "  " + cpu_label(c) + " (" +
			     std::string{to_string(c.encoding)} + ")");
		}
	}

	void latency()
	{
		for (const SpeLatency l : spe_latencies) {
			const LatencyDistribution& d = r_.latency[static_cast<std::size_t>(l)];
			line("\n# " + std::string{to_string(l)} + " latency (" + std::string{latency_meaning(l)} + "): " +
			     decimal(d.count()) + " records");
			if (d.empty())
				continue;
			line("#   " + percentiles_line(d));
			const auto b = d.log2_buckets();
			const std::size_t first = LatencyDistribution::bucket_of(d.min());
			const std::size_t last = LatencyDistribution::bucket_of(d.max());
			const std::uint64_t top = *std::max_element(b.begin(), b.end());
			line("#        cycles     records    share");
			for (std::size_t k = first; k <= last; ++k)
				line("  " + pad_left(bucket_label(k), 12) + pad_left(decimal(b[k]), 12) + pad_left(percent(b[k], d.count()), 9) +
				     "  " + bar(b[k], top, 40, o_.ascii));
		}
	}

	void ops()
	{
		const SpeOpSummary& s = r_.op_summary;
		line("\n# operation types");
		line("#   loads " + decimal(s.loads) + " (GP " + decimal(s.gp) + ", SIMD&FP " + decimal(s.simd_fp) + ", SVE/SME " +
		     decimal(s.sve_sme) + " of loads and stores), stores " + decimal(s.stores) + ", atomics " + decimal(s.atomics) +
		     ", exclusives " + decimal(s.exclusives) + ", acquire/release " + decimal(s.acquire_release));
		line("#   branches " + decimal(s.branches) + " (conditional " + decimal(s.conditional) + ", indirect " +
		     decimal(s.indirect) + ", calls " + decimal(s.calls) + ", returns " + decimal(s.returns) + ", mispredicted " +
		     decimal(s.mispredicted) + "), other " + decimal(s.other) + " (SVE/SME " + decimal(s.sve_sme_other) +
		     "), no operation type " + decimal(s.no_op_type));
		line("#     share     records  mean-lat  p90-lat  type");
		for (const SpeOpRow& o : r_.ops)
			line("  " + pad_left(percent(o.records, r_.totals.records), 8) + pad_left(decimal(o.records), 12) +
			     pad_left(mean_text(o.total), 10) + pad_left(p90_text(o.total), 9) + "  " + o.label);
	}

	void sources()
	{
		std::uint64_t with = 0;
		for (const SpeDataSourceRow& d : r_.data_sources)
			with += d.records;
		line("\n# data sources (" + decimal(with) +
		     " records with a Data Source packet; names from Linux perf's tables, by each CPU's MIDR)");
		for (const SpeCpuReport& c : r_.cpu)
			if (c.encoding == SpeDataSourceEncoding::unknown && c.totals.records)
				line("#   CPU " + decimal(c.cpu) + ": " + cpu_label(c) +
				     ": encoding not known, raw codes only");
		line("#     share     records  mean-lat  p90-lat  source");
		for (const SpeDataSourceRow& d : r_.data_sources)
			line("  " + pad_left(percent(d.records, with), 8) + pad_left(decimal(d.records), 12) +
			     pad_left(mean_text(d.total), 10) + pad_left(p90_text(d.total), 9) + "  " + d.source.label() +
			     (d.source.encoding == SpeDataSourceEncoding::unknown ? std::string{}
										   : " [" + std::string{to_string(d.source.encoding)} + "]"));
	}

	void events()
	{
		line("\n# events (" + decimal(r_.records_with_events) + " records with an Events packet)");
		line("#     share     records  event");
		std::vector<std::size_t> bits;
		for (std::size_t i = 0; i < r_.events.size(); ++i)
			if (r_.events[i])
				bits.push_back(i);
		std::ranges::stable_sort(bits, std::greater{}, [&](std::size_t i) { return r_.events[i]; });
		for (const std::size_t i : bits) {
			const std::string_view name = spe::event_name(static_cast<unsigned>(i));
			line("  " + pad_left(percent(r_.events[i], r_.records_with_events), 8) + pad_left(decimal(r_.events[i]), 12) + "  " +
			     (name.empty() ? "E" + decimal(i) : std::string{name}));
		}
	}

	void symbols()
	{
		line("\n# hottest symbols (" + decimal(r_.symbols.size()) + " of " + decimal(r_.distinct_symbols) + ")");
		line("#  overhead     records  mean-lat  p90-lat  symbol  dso");
		for (const SpeHotSymbol& s : r_.symbols)
			line("  " + pad_left(percent(s.records, r_.totals.records), 8) + pad_left(decimal(s.records), 12) +
			     pad_left(mean_text(s.total), 10) + pad_left(p90_text(s.total), 9) + "  [" + std::string(1, s.level) +
			     "] " + s.symbol + "  " + s.dso);
	}

	void pcs()
	{
		line("\n# hottest PCs (" + decimal(r_.pcs.size()) + " of " + decimal(r_.distinct_pcs) + ")");
		line("#  overhead     records  mean-lat  p90-lat  pc  el  symbol  dso  [srcline]");
		for (const SpeHotPc& p : r_.pcs)
			line("  " + pad_left(percent(p.records, r_.totals.records), 8) + pad_left(decimal(p.records), 12) +
			     pad_left(mean_text(p.total), 10) + pad_left(p90_text(p.total), 9) + "  " + hex(p.pc, 1) + "  el" +
			     decimal(p.el) + "  [" + std::string(1, perf_level(p.mode)) + "] " +
			     (p.where.symbol.empty() ? std::string{"[unknown]"} : p.where.symbol) + "  " + p.where.dso +
			     (p.where.line != 0 ? "  " + srcline(p.where) : std::string{}));
	}

	void addresses(std::string_view title, const std::vector<SpeHotAddress>& v, std::size_t distinct)
	{
		line("\n# " + std::string{title} + " (" + decimal(v.size()) + " of " + decimal(distinct) + "; " +
		     decimal(r_.records_with_data_va) + " records with a data address)");
		line("#     share     records  mean-lat  p90-lat  address  dominant source");
		for (const SpeHotAddress& a : v)
			line("  " + pad_left(percent(a.records, r_.records_with_data_va), 8) + pad_left(decimal(a.records), 12) +
			     pad_left(mean_text(a.total), 10) + pad_left(p90_text(a.total), 9) + "  " + hex(a.address, 16) + "  " +
			     (a.dominant ? a.dominant->label() + " " + percent(a.dominant_records, a.records) : "-"));
	}

	const SpeReport& r_;
	const SpeReportOptions& o_;
	std::string out_{};
};

} // namespace

std::string format_spe_report_text(const SpeReport& report, const SpeReportOptions& options)
{
	return TextReport{report, options}.render();
}

// ---------------------------------------------------------------- JSON

namespace {

// The counters of a struct as JSON members, by a table of names and members.
template <typename T>
using Fields = std::initializer_list<std::pair<std::string_view, std::uint64_t T::*>>;

template <typename T>
void json_fields(JsonWriter& w, const T& x, Fields<T> fields)
{
	for (const auto& [name, member] : fields)
		w.member(name, x.*member);
}

void json_totals(JsonWriter& w, const SpeTotals& t)
{
	w.begin_object();
	json_fields(w, t, {{"bytes", &SpeTotals::bytes}, {"records", &SpeTotals::records},
			   {"complete", &SpeTotals::complete}});
	w.member("incomplete", t.incomplete()).key("ended_by").begin_object();
	json_fields(w, t, {{"end", &SpeTotals::by_end}, {"timestamp", &SpeTotals::by_timestamp},
			   {"buffer_end", &SpeTotals::buffer_end}, {"truncated", &SpeTotals::truncated},
			   {"resync", &SpeTotals::resync}});
	w.end_object();
	json_fields(w, t, {{"unknown_packets", &SpeTotals::unknown_packets}, {"skipped_bytes", &SpeTotals::skipped_bytes},
			   {"padding_bytes", &SpeTotals::padding_bytes}, {"lost_bytes", &SpeTotals::lost_bytes},
			   {"truncations", &SpeTotals::truncations}, {"collisions", &SpeTotals::collisions},
			   {"faults", &SpeTotals::faults}});
	w.end_object();
}

// records, mean and the percentiles; with buckets, the log2 buckets and
// the exact values too
void json_latency(JsonWriter& w, const LatencyDistribution& d, bool buckets)
{
	w.begin_object().member("records", d.count());
	if (!d.empty()) {
		w.member("min", d.min())
			.member("max", d.max())
			.member("mean", d.mean())
			.member("p50", d.p50())
			.member("p90", d.p90())
			.member("p99", d.p99())
			.member("p99_9", d.p999());
	}
	if (buckets) {
		w.key("log2_buckets").begin_array();
		const auto b = d.log2_buckets();
		for (std::size_t k = 0; k < b.size(); ++k)
			if (b[k])
				w.begin_object()
					.member("low", LatencyDistribution::bucket_low(k))
					.member("high", LatencyDistribution::bucket_high(k))
					.member("records", b[k])
					.end_object();
		w.end_array();
		w.key("values").begin_array();
		for (const auto& [v, n] : d.values())
			w.begin_array().value(v).value(n).end_array();
		w.end_array();
	}
	w.end_object();
}

void json_source(JsonWriter& w, const SpeDataSource& s)
{
	w.begin_object().member("code", s.code).member("encoding", to_string(s.encoding)).key("name");
	const std::string_view name = spe_data_source_name(s.encoding, s.code);
	if (name.empty())
		w.null();
	else
		w.value(name);
	w.end_object();
}

void json_report(JsonWriter& w, const SpeReport& r)
{
	w.begin_object();
	w.member("backend", r.backend).member("backend_description", spe_backend_description(r.backend));
	w.key("command").begin_array();
	for (const std::string& a : r.command)
		w.value(a);
	w.end_array();
	w.member("cpus", r.cpus).member("pid", r.pid).member("timer_freq", r.timer_freq);
	if (r.only_cpu)
		w.member("cpu", *r.only_cpu);
	w.key("totals");
	json_totals(w, r.totals);

	w.key("per_cpu").begin_array();
	for (const SpeCpuReport& c : r.cpu) {
		w.begin_object()
			.member("cpu", c.cpu)
			.member("midr", hex(c.midr, 8))
			.member("cpu_name", c.midr ? describe_midr(c.midr) : std::string{})
			.member("data_source_encoding", to_string(c.encoding));
		w.key("totals");
		json_totals(w, c.totals);
		w.key("total_latency");
		json_latency(w, c.total, false);
		w.end_object();
	}
	w.end_array();

	w.key("latency").begin_object();
	for (const SpeLatency l : spe_latencies) {
		w.key(to_string(l));
		json_latency(w, r.latency[static_cast<std::size_t>(l)], true);
	}
	w.end_object();

	using S = SpeOpSummary;
	w.key("op_summary").begin_object();
	json_fields(w, r.op_summary,
		    {{"loads", &S::loads}, {"stores", &S::stores}, {"gp", &S::gp}, {"simd_fp", &S::simd_fp},
		     {"sve_sme", &S::sve_sme}, {"atomics", &S::atomics}, {"exclusives", &S::exclusives},
		     {"acquire_release", &S::acquire_release}, {"sve_sme_other", &S::sve_sme_other},
		     {"branches", &S::branches}, {"conditional", &S::conditional}, {"indirect", &S::indirect},
		     {"calls", &S::calls}, {"returns", &S::returns}, {"mispredicted", &S::mispredicted},
		     {"other", &S::other}, {"no_op_type", &S::no_op_type}});
	w.end_object();
	w.key("op_types").begin_array();
	for (const SpeOpRow& o : r.ops) {
		w.begin_object().member("class", o.cls).member("payload", o.payload).member("label", o.label);
		w.member("records", o.records).key("total_latency");
		json_latency(w, o.total, false);
		w.end_object();
	}
	w.end_array();

	w.key("data_sources").begin_array();
	for (const SpeDataSourceRow& d : r.data_sources) {
		w.begin_object().key("source");
		json_source(w, d.source);
		w.member("records", d.records).key("total_latency");
		json_latency(w, d.total, false);
		w.end_object();
	}
	w.end_array();

	w.member("records_with_events", r.records_with_events).key("events").begin_array();
	for (std::size_t i = 0; i < r.events.size(); ++i)
		if (r.events[i])
			w.begin_object()
				.member("bit", i)
				.member("name", spe::event_name(static_cast<unsigned>(i)))
				.member("records", r.events[i])
				.end_object();
	w.end_array();

	w.member("distinct_symbols", r.distinct_symbols).key("hot_symbols").begin_array();
	for (const SpeHotSymbol& h : r.symbols) {
		w.begin_object()
			.member("level", std::string(1, h.level))
			.member("symbol", h.symbol)
			.member("dso", h.dso)
			.member("records", h.records)
			.key("total_latency");
		json_latency(w, h.total, false);
		w.end_object();
	}
	w.end_array();

	w.member("distinct_pcs", r.distinct_pcs).key("hot_pcs").begin_array();
	for (const SpeHotPc& h : r.pcs) {
		w.begin_object()
			.member("pc", hex(h.pc, 16))
			.member("el", h.el)
			.member("mode", to_string(h.mode))
			.member("pid", h.pid)
			.member("symbol", h.where.symbol)
			.member("dso", h.where.dso);
		if (h.where.line != 0)
			w.member("file", h.where.file).member("line", h.where.line);
		w.member("records", h.records)
			.key("total_latency");
		json_latency(w, h.total, false);
		w.end_object();
	}
	w.end_array();

	w.member("records_with_data_va", r.records_with_data_va);
	for (const auto& [key, distinct, list] :
	     {std::tuple{"hot_data_addresses", r.distinct_addresses, &r.addresses},
	      std::tuple{"hot_cache_lines", r.distinct_lines, &r.lines}}) {
		w.member(std::string{"distinct_"} + (list == &r.lines ? "lines" : "addresses"), distinct);
		w.key(key).begin_array();
		for (const SpeHotAddress& a : *list) {
			w.begin_object().member("address", hex(a.address, 16)).member("records", a.records);
			w.key("total_latency");
			json_latency(w, a.total, false);
			w.key("dominant_source");
			if (a.dominant)
				json_source(w, *a.dominant);
			else
				w.null();
			w.member("dominant_records", a.dominant_records).end_object();
		}
		w.end_array();
	}

	if (!r.per_cpu.empty()) {
		w.key("per_cpu_reports").begin_array();
		for (const SpeReport& c : r.per_cpu)
			json_report(w, c);
		w.end_array();
	}
	w.end_object();
}

} // namespace

std::string format_spe_report_json(const SpeReport& report)
{
	JsonWriter w;
	json_report(w, report);
	return w.str() + "\n";
}

// ---------------------------------------------------------------- SVG

namespace {

std::string xml_escape(std::string_view s)
{
	std::string out;
	for (std::size_t i = 0; i < s.size();) {
		const char c = s[i];
		const std::size_t len = text::utf8_length(s, i);
		if (len == 0) {
			out += "\xEF\xBF\xBD";	// U+FFFD: not UTF-8
			++i;
			continue;
		}
		i += len;
		switch (c) {
		case '&': out += "&amp;"; break;
		case '<': out += "&lt;"; break;
		case '>': out += "&gt;"; break;
		case '"': out += "&quot;"; break;
		case '\'': out += "&apos;"; break;
		default:
			if (len > 1)
				out.append(s.substr(i - len, len));
			else if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n')
				out += '?';	// not allowed in XML 1.0
			else
				out += c;
		}
	}
	return out;
}

std::string px(double v)
{
	return fixed(v, 1);
}

struct SvgText {
	double x, y;
	std::string_view anchor;	// start, middle, end
	std::string text;
	std::string extra{};		// further attributes
};

void svg_text(std::string& out, const SvgText& t)
{
	out += "<text x=\"" + px(t.x) + "\" y=\"" + px(t.y) + "\" text-anchor=\"" + std::string{t.anchor} + "\"" +
	       t.extra + ">" + xml_escape(t.text) + "</text>\n";
}

void svg_line(std::string& out, double x1, double y1, double x2, double y2, std::string_view style)
{
	out += "<line x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" + px(x2) + "\" y2=\"" + px(y2) + "\" " +
	       std::string{style} + "/>\n";
}

constexpr double svg_width = 820, chart_height = 300, title_height = 70;
constexpr double margin_left = 80, margin_right = 30, plot_top = 56, plot_height = 170;

void svg_chart(std::string& out, const LatencyDistribution& d, SpeLatency l, double y0)
{
	const double x0 = margin_left, width = svg_width - margin_left - margin_right;
	const double base = y0 + plot_top + plot_height;
	svg_text(out, {x0, y0 + 20, "start",
		       std::string{to_string(l)} + " latency: " + std::string{latency_meaning(l)},
		       " font-size=\"15\" font-weight=\"bold\""});
	if (d.empty()) {
		svg_text(out, {x0, y0 + 40, "start", "no record has this counter", " font-size=\"12\""});
		return;
	}
	svg_text(out, {x0, y0 + 38, "start", decimal(d.count()) + " records  " + percentiles_line(d),
		       " font-size=\"12\""});

	const auto b = d.log2_buckets();
	const std::size_t first = LatencyDistribution::bucket_of(d.min());
	const std::size_t last = LatencyDistribution::bucket_of(d.max());
	const std::size_t n = last - first + 1;
	const double bw = width / static_cast<double>(n);
	// y axis: ticks every 1, 2 or 5 times a power of ten, at most 5 above 0
	const std::uint64_t tallest = *std::max_element(b.begin(), b.end());
	std::uint64_t step = 1;
	for (std::uint64_t p = 1; step * 5 < tallest; p *= 10)
		for (const std::uint64_t m : {1, 2, 5, 10})
			if ((step = m * p) * 5 >= tallest)
				break;
	const std::uint64_t top = (tallest + step - 1) / step * step;
	for (std::uint64_t v = 0; v <= top; v += step) {
		const double y = base - plot_height * static_cast<double>(v) / static_cast<double>(top);
		svg_line(out, x0, y, x0 + width, y, "stroke=\"#ddd\" stroke-width=\"1\"");
		svg_text(out, {x0 - 6, y + 4, "end", decimal(v), " font-size=\"11\""});
	}
	svg_text(out, {x0 - 58, base - plot_height / 2, "middle", "records",
		       " font-size=\"12\" transform=\"rotate(-90 " + px(x0 - 58) + " " + px(base - plot_height / 2) + ")\""});

	for (std::size_t k = first; k <= last; ++k) {
		const double x = x0 + bw * static_cast<double>(k - first);
		const double h = plot_height * static_cast<double>(b[k]) / static_cast<double>(top);
		out += "<rect x=\"" + px(x + 1) + "\" y=\"" + px(base - h) + "\" width=\"" + px(bw - 2) + "\" height=\"" +
		       px(h) + "\" fill=\"#4a7ab5\"><title>" + xml_escape(bucket_label(k)) + " cycles: " + decimal(b[k]) +
		       " records</title></rect>\n";
		const double lx = x + bw / 2, ly = base + 14;
		svg_text(out, {lx, ly, "end", bucket_label(k),
			       " font-size=\"10\" transform=\"rotate(-35 " + px(lx) + " " + px(ly) + ")\""});
	}
	svg_line(out, x0, base, x0 + width, base, "stroke=\"#000\" stroke-width=\"1\"");
	svg_line(out, x0, base, x0, base - plot_height, "stroke=\"#000\" stroke-width=\"1\"");
	svg_text(out, {x0 + width / 2, base + 62, "middle", "cycles (log2 buckets)", " font-size=\"12\""});

	// percentiles: a dashed line where the value lies in its bucket
	struct Mark {
		std::string_view name;
		std::uint16_t value;
		std::string_view colour;
	};
	const Mark marks[] = {{"p50", d.p50(), "#2a9d3a"},
			      {"p90", d.p90(), "#d08a00"},
			      {"p99", d.p99(), "#d03a2a"},
			      {"p99.9", d.p999(), "#8a2ab0"}};
	for (std::size_t i = 0; i < std::size(marks); ++i) {
		const Mark& m = marks[i];
		const std::size_t k = LatencyDistribution::bucket_of(m.value);
		const double lo = LatencyDistribution::bucket_low(k), hi = LatencyDistribution::bucket_high(k);
		const double frac = (m.value - lo + 0.5) / (hi - lo + 1);
		const double x = x0 + bw * (static_cast<double>(k - first) + frac);
		svg_line(out, x, base, x, base - plot_height - 4,
			 "stroke=\"" + std::string{m.colour} + "\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"");
		svg_text(out, {x + 3, y0 + plot_top - 4 + 10.0 * static_cast<double>(i), "start",
			       std::string{m.name} + " " + decimal(m.value),
			       " font-size=\"10\" fill=\"" + std::string{m.colour} + "\""});
	}
}

} // namespace

std::string format_spe_report_svg(const SpeReport& report)
{
	const double height = title_height + chart_height * static_cast<double>(spe_latencies.size());
	std::string cmd;
	for (const std::string& a : report.command)
		cmd += (cmd.empty() ? "" : " ") + a;
	std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
	out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + px(svg_width) + "\" height=\"" +
	       px(height) + "\" viewBox=\"0 0 " + px(svg_width) + " " + px(height) +
	       "\" font-family=\"sans-serif\">\n";
	const std::string title = "amupmu spe report: latency histograms (" + spe_backend_description(report.backend) + ")";
	out += "<title>" + xml_escape(title) + "</title>\n";
	out += "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
	svg_text(out, {svg_width / 2, 26, "middle", title, " font-size=\"18\" font-weight=\"bold\""});
	svg_text(out, {svg_width / 2, 48, "middle",
		       decimal(report.totals.records) + " records, CPUs " + report.cpus + ", command: " +
			       (cmd.empty() ? std::string{"(none)"} : cmd),
		       " font-size=\"12\""});
	for (std::size_t i = 0; i < spe_latencies.size(); ++i)
		svg_chart(out, report.latency[i], spe_latencies[i], title_height + chart_height * static_cast<double>(i));
	out += "</svg>\n";
	return out;
}

} // namespace amupmu::report
