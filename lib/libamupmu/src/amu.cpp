// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/affinity.hpp>
#include <amupmu/amu.hpp>
#include <amupmu/decode.hpp>
#include <amupmu/error.hpp>
#include <amupmu/events.hpp>

#include <linux/amupmu.h>


#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <sys/ioctl.h>

namespace amupmu {

static_assert(sizeof(amupmu_amu_cpu) == AMUPMU_AMU_CPU_SIZE_VER0 && amu_cpu_entry_size == AMUPMU_AMU_CPU_SIZE_VER0);
static_assert(sizeof(amupmu_amu_read) == AMUPMU_AMU_READ_SIZE_VER0);
static_assert(amu_state::offline == AMUPMU_AMU_OFFLINE && amu_state::no_amu == AMUPMU_AMU_NO_AMU &&
	      amu_state::undiscovered == AMUPMU_AMU_UNDISCOVERED);
static_assert(sizeof(AmuCpuReading::group0) == sizeof(amupmu_amu_cpu::group0) &&
	      sizeof(AmuCpuReading::group1) == sizeof(amupmu_amu_cpu::group1));

namespace {

constexpr std::string_view read_op = "AMUPMU_AMU_READ";

} // namespace

// ---------------------------------------------------------------- reading

std::optional<std::uint64_t> AmuCpuReading::counter(std::uint16_t event, const CpuInfo& info) const noexcept
{
	if (state & (amu_state::no_amu | amu_state::undiscovered))
		return std::nullopt;
	const unsigned n0 = std::min<std::uint32_t>(nr_group0, amu_max_counters);
	if (const std::optional<unsigned> i = amu_counter_of(info.amevtyper0, n0, event))
		return enabled0 & (1u << *i) ? std::optional{group0[*i]} : std::nullopt;
	// group 1 reads zero below the highest EL with AMUv1p1's CG1RZ
	if (info.amu_version >= 2 && decode_amcr(info.amcr).cg1rz)
		return std::nullopt;
	const unsigned n1 = std::min<std::uint32_t>(nr_group1, amu_max_counters);
	if (const std::optional<unsigned> i = amu_counter_of(info.amevtyper1, n1, event))
		return enabled1 & (1u << *i) ? std::optional{group1[*i]} : std::nullopt;
	return std::nullopt;
}

const AmuCpuReading* AmuReading::find(unsigned cpu) const noexcept
{
	const auto it = std::ranges::find(cpus, cpu, &AmuCpuReading::cpu);
	return it == cpus.end() ? nullptr : &*it;
}

void decode_amu_read(std::span<const std::byte> raw, std::uint32_t nr_entries, std::size_t entry_size,
		     std::span<AmuCpuReading> out)
{
	if (entry_size < sizeof(amupmu_amu_cpu) || nr_entries > out.size() || raw.size() / entry_size < nr_entries)
		throw Error{std::string{read_op} + ": " + std::to_string(nr_entries) + " entries of " +
				    std::to_string(entry_size) + " bytes in " + std::to_string(raw.size()),
			    EBADMSG};
	for (std::uint32_t i = 0; i < nr_entries; ++i) {
		amupmu_amu_cpu e{};
		std::memcpy(&e, raw.data() + i * entry_size, sizeof(e));
		if (e.nr_group0 > amu_max_counters || e.nr_group1 > amu_max_counters)
			throw Error{std::string{read_op} + ": CPU " + std::to_string(e.cpu) + " reports " +
					    std::to_string(e.nr_group0) + " + " + std::to_string(e.nr_group1) +
					    " counters (at most 16 each)",
				    EBADMSG};
		AmuCpuReading& r = out[i];
		r.cpu = e.cpu;
		r.state = e.state;
		r.time = e.time;
		r.nr_group0 = e.nr_group0;
		r.nr_group1 = e.nr_group1;
		r.enabled0 = e.enabled0;
		r.enabled1 = e.enabled1;
		r.restarts = e.restarts;
		std::copy(std::begin(e.group0), std::end(e.group0), r.group0.begin());
		std::copy(std::begin(e.group1), std::end(e.group1), r.group1.begin());
	}
}

Amu Amu::open(std::vector<unsigned> cpus, std::string_view path)
{
	return Amu{Device::open(path), std::move(cpus)};
}

Amu Amu::create(Device device, std::vector<unsigned> cpus)
{
	return Amu{std::move(device), std::move(cpus)};
}

Amu::Amu(Device device, std::vector<unsigned> cpus) : device_{std::move(device)}, cpus_{std::move(cpus)}
{
	info_ = device_.info();
	if (!info_.supports(Ioctl::amu_read))
		throw Unsupported{std::string{read_op} + ": driver ABI " + std::to_string(info_.abi_major) + "." +
					  std::to_string(info_.abi_minor) + " has no AMU read (needs 2.1)",
				  EOPNOTSUPP};
	if (cpus_.empty())
		for (const CpuInfo& c : info_.cpus)
			if (c.possible())
				cpus_.push_back(c.cpu);
	// std::unique, not std::ranges::unique: clang-tidy's clang 14 cannot
	// instantiate the latter with libstdc++ 12 (a clang bug fixed in clang 15)
	std::ranges::sort(cpus_);
	cpus_.erase(std::unique(cpus_.begin(), cpus_.end()), cpus_.end());
	if (cpus_.empty())
		throw InvalidArgument{std::string{read_op} + ": empty CPU set", EINVAL};
	for (const unsigned cpu : cpus_) {
		if (cpu / 64 >= mask_.size())
			mask_.resize(cpu / 64 + 1);
		mask_[cpu / 64] |= std::uint64_t{1} << (cpu % 64);
	}
	raw_.assign(cpus_.size() * sizeof(amupmu_amu_cpu), std::byte{0});
}

void Amu::read(AmuReading& out)
{
	if (out.cpus.size() != cpus_.size())
		out.cpus.resize(cpus_.size());
	amupmu_amu_read rd{};
	rd.size = sizeof(rd);
	rd.cpus_uptr = reinterpret_cast<std::uintptr_t>(mask_.data());
	rd.cpus_len = static_cast<std::uint32_t>(mask_.size() * sizeof(std::uint64_t));
	rd.nr_cpus = static_cast<std::uint32_t>(cpus_.size());
	rd.entry_size = sizeof(amupmu_amu_cpu);
	rd.entries_uptr = reinterpret_cast<std::uintptr_t>(raw_.data());
	int ret;
	do
		ret = ::ioctl(device_.fd(), AMUPMU_AMU_READ, &rd);
	while (ret < 0 && errno == EINTR);
	if (ret < 0)
		throw_error(std::string{read_op}, errno);
	decode_amu_read(raw_, rd.nr_cpus, sizeof(amupmu_amu_cpu), out.cpus);
	out.cpus.resize(rd.nr_cpus);	// never grows: nr_cpus <= the set
	out.timer_freq = rd.timer_freq;
}

AmuReading Amu::read()
{
	AmuReading out;
	read(out);
	return out;
}

// ---------------------------------------------------------------- figures

std::string_view to_string(AmuWhy why) noexcept
{
	switch (why) {
	case AmuWhy::ok: return "ok";
	case AmuWhy::not_counted: return "not counted";
	case AmuWhy::erratum: return "erratum";
	case AmuWhy::offline: return "offline";
	case AmuWhy::no_amu: return "no AMU";
	case AmuWhy::no_cycles: return "no cycles";
	}
	return "unknown";
}

const AmuCpuDelta* AmuReport::find(unsigned cpu) const noexcept
{
	const auto it = std::ranges::find(per_cpu, cpu, &AmuCpuDelta::cpu);
	return it == per_cpu.end() ? nullptr : &*it;
}

const Erratum* amu_erratum_for(std::uint64_t midr) noexcept
{
	for (const Erratum& e : errata())
		if (e.unit == ErratumUnit::amu && applies(e, midr) == Applicability::yes)
			return &e;
	return nullptr;
}

namespace {

AmuFigure none(AmuWhy why)
{
	return AmuFigure{.value = 0, .why = why, .cpus = 0};
}

AmuFigure ratio(std::optional<std::uint64_t> num, std::optional<std::uint64_t> den, double scale = 1.0)
{
	if (!num || !den)
		return none(AmuWhy::not_counted);
	if (*den == 0)
		return none(AmuWhy::no_cycles);
	return AmuFigure{.value = static_cast<double>(*num) / static_cast<double>(*den) * scale,
			 .why = AmuWhy::ok,
			 .cpus = 1};
}

// For the summed row when no CPU contributed: the reason that matters most.
AmuWhy worst(std::span<const AmuCpuDelta> cpus, AmuFigure AmuCpuDelta::*fig)
{
	for (const AmuWhy w : {AmuWhy::erratum, AmuWhy::not_counted, AmuWhy::no_cycles, AmuWhy::offline})
		if (std::ranges::any_of(cpus, [&](const AmuCpuDelta& d) { return (d.*fig).why == w; }))
			return w;
	return AmuWhy::no_amu;
}

struct Sum {
	std::uint64_t num = 0;
	std::uint64_t den = 0;
	unsigned cpus = 0;
	void add(std::uint64_t n, std::uint64_t d)
	{
		num += n;
		den += d;
		++cpus;
	}
	AmuFigure figure(double scale, std::span<const AmuCpuDelta> all, AmuFigure AmuCpuDelta::*fig) const
	{
		if (cpus == 0)
			return none(worst(all, fig));
		if (den == 0)
			return none(AmuWhy::no_cycles);
		return {.value = static_cast<double>(num) / static_cast<double>(den) * scale, .why = AmuWhy::ok,
			.cpus = cpus};
	}
};

} // namespace

AmuReport amu_interval(const Info& info, const AmuReading& before, const AmuReading& after)
{
	AmuReport r;
	r.mock = info.mock();
	r.timer_freq = after.timer_freq;
	const double f = static_cast<double>(after.timer_freq);

	std::vector<unsigned> set;

	for (const AmuCpuReading& a : after.cpus) {
		set.push_back(a.cpu);
		AmuCpuDelta d;
		d.cpu = a.cpu;
		const AmuCpuReading* b = before.find(a.cpu);
		const CpuInfo* ci = a.cpu < info.cpus.size() ? &info.cpus[a.cpu] : nullptr;
		const std::uint32_t state = a.state | (b ? b->state : amu_state::undiscovered);
		const auto all = [&](AmuWhy why) {
			d.frequency = d.ipc = d.mem_stall = d.active = none(why);
		};
		// (no reading before: state has undiscovered, said again for
		// the reader and the static analyzer)
		if (!ci || !b || (state & (amu_state::no_amu | amu_state::undiscovered))) {
			d.state = AmuWhy::no_amu;
			all(AmuWhy::no_amu);
			r.per_cpu.push_back(std::move(d));
			continue;
		}
		d.restarts = a.restarts - b->restarts;
		d.restarted = d.restarts != 0;
		d.amu_zero = ci->amu_zero();
		if (state & amu_state::offline) {
			d.state = AmuWhy::offline;
			all(AmuWhy::offline);
			r.per_cpu.push_back(std::move(d));
			continue;
		}
		d.ticks = a.time - b->time;
		d.seconds = f > 0 ? static_cast<double>(d.ticks) / f : 0;

		// each counter through its event type, counted only when enabled in both reads
		const unsigned n0 = std::min({a.nr_group0, b->nr_group0, static_cast<std::uint32_t>(amu_max_counters)});
		const auto counter = [&](std::uint16_t event) -> std::optional<std::uint64_t> {
			const std::optional<unsigned> i = amu_counter_of(ci->amevtyper0, n0, event);
			if (!i) {
				d.not_counted.push_back({.why = AmuNotCountedWhy::no_counter, .event = event});
				return std::nullopt;
			}
			const std::uint32_t bit = 1u << *i;
			if (!(a.enabled0 & bit) || !(b->enabled0 & bit)) {
				d.not_counted.push_back({.why = AmuNotCountedWhy::not_enabled, .event = event, .counter = *i});
				return std::nullopt;
			}
			return a.group0[*i] - b->group0[*i];
		};
		d.cpu_cycles = counter(amu_ev::cpu_cycles);
		d.cnt_cycles = counter(amu_ev::cnt_cycles);
		d.inst_retired = counter(amu_ev::inst_retired);
		d.stall_backend_mem = counter(amu_ev::stall_backend_mem);

		const unsigned n1 = std::min({a.nr_group1, b->nr_group1, static_cast<std::uint32_t>(amu_max_counters)});
		// AMUv1p1 AMCR_EL0.CG1RZ: group 1 reads zero below the highest
		// implemented EL, so its deltas are 0 without meaning 0 events
		// (the bit is RES0 in AMUv1)
		const bool cg1rz = ci->amu_version >= 2 && decode_amcr(ci->amcr).cg1rz;
		if (cg1rz && n1 > 0)
			d.not_counted.push_back({.why = AmuNotCountedWhy::group1_reads_zero});
		for (unsigned i = 0; i < n1; ++i) {
			AmuAuxDelta x{.event = ci->amevtyper1[i], .delta = std::nullopt};
			if (!cg1rz && ((a.enabled1 & b->enabled1) & (1u << i)))
				x.delta = a.group1[i] - b->group1[i];
			d.aux.push_back(x);
		}

		const Erratum* e = amu_erratum_for(ci->midr);
		d.frequency = ratio(d.cpu_cycles, d.cnt_cycles, f);
		if (f <= 0 && d.frequency.ok())
			d.frequency = none(AmuWhy::no_cycles);
		d.ipc = ratio(d.inst_retired, d.cpu_cycles);
		d.mem_stall = ratio(d.stall_backend_mem, d.cpu_cycles);
		d.active = d.cnt_cycles ? ratio(d.cnt_cycles, d.ticks) : none(AmuWhy::not_counted);
		if (e) {
			d.erratum = std::string{e->id};
			// CNT_CYCLES is unreliable: no figure that divides by it
			if (d.cnt_cycles) {
				d.frequency = none(AmuWhy::erratum);
				d.active = none(AmuWhy::erratum);
			}
		}
		r.per_cpu.push_back(std::move(d));
	}

	// the summed row
	AmuCpuDelta& t = r.total;
	t.cpu = 0;
	Sum freq, ipc, stall, active;
	const auto add_opt = [](std::optional<std::uint64_t>& sum, const std::optional<std::uint64_t>& v) {
		if (v)
			sum = sum.value_or(0) + *v;
	};
	for (const AmuCpuDelta& d : r.per_cpu) {
		t.seconds = std::max(t.seconds, d.seconds);
		t.ticks = std::max(t.ticks, d.ticks);
		t.restarts += d.restarts;
		t.restarted = t.restarted || d.restarted;
		if (d.state != AmuWhy::ok)
			continue;
		add_opt(t.cpu_cycles, d.cpu_cycles);
		if (d.erratum.empty())	// an unreliable CNT_CYCLES is not summed either
			add_opt(t.cnt_cycles, d.cnt_cycles);
		add_opt(t.inst_retired, d.inst_retired);
		add_opt(t.stall_backend_mem, d.stall_backend_mem);
		if (d.frequency.ok())
			freq.add(*d.cpu_cycles, *d.cnt_cycles);
		if (d.ipc.ok())
			ipc.add(*d.inst_retired, *d.cpu_cycles);
		if (d.mem_stall.ok())
			stall.add(*d.stall_backend_mem, *d.cpu_cycles);
		if (d.active.ok())
			active.add(*d.cnt_cycles, d.ticks);
	}
	// group 1: summed by index where the CPUs agree on the event type
	for (const AmuCpuDelta& d : r.per_cpu) {
		if (d.state != AmuWhy::ok)
			continue;
		for (std::size_t i = 0; i < d.aux.size(); ++i) {
			if (i == t.aux.size())
				t.aux.push_back({.event = d.aux[i].event, .delta = d.aux[i].delta});
			else if (t.aux[i].event != d.aux[i].event || !d.aux[i].delta)
				t.aux[i].delta.reset();
			else if (t.aux[i].delta)
				*t.aux[i].delta += *d.aux[i].delta;
		}
	}
	t.frequency = freq.figure(f, r.per_cpu, &AmuCpuDelta::frequency);
	t.ipc = ipc.figure(1.0, r.per_cpu, &AmuCpuDelta::ipc);
	t.mem_stall = stall.figure(1.0, r.per_cpu, &AmuCpuDelta::mem_stall);
	t.active = active.figure(1.0, r.per_cpu, &AmuCpuDelta::active);
	if (std::ranges::all_of(r.per_cpu, [](const AmuCpuDelta& d) { return d.state != AmuWhy::ok; }))
		t.state = r.per_cpu.empty() ? AmuWhy::no_amu : r.per_cpu.front().state;

	r.cpus = format_cpu_list(set);
	return r;
}

std::optional<unsigned> amu_counter_of(std::span<const std::uint16_t> types, unsigned n,
				       std::uint16_t event) noexcept
{
	for (unsigned i = 0; i < n && i < types.size(); ++i)
		if (types[i] == event)
			return i;
	return std::nullopt;
}

} // namespace amupmu
