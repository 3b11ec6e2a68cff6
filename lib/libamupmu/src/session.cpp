// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/error.hpp>
#include <amupmu/sample.hpp>
#include <amupmu/session.hpp>

#include "cpumask.hpp"

#include <linux/amupmu.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include <sys/ioctl.h>

namespace amupmu {

static_assert(max_group_events == AMUPMU_PMU_MAX_EVENTS);
static_assert(evflag::excl_user == AMUPMU_EV_EXCL_USER && evflag::excl_kernel == AMUPMU_EV_EXCL_KERNEL &&
	      evflag::excl_hv == AMUPMU_EV_EXCL_HV && evflag::excl_host == AMUPMU_EV_EXCL_HOST &&
	      evflag::excl_guest == AMUPMU_EV_EXCL_GUEST && evflag::raw == AMUPMU_EV_RAW);
static_assert(read_state::enabled == AMUPMU_READ_ENABLED && read_state::offline == AMUPMU_READ_OFFLINE);
static_assert(read_state::shared == AMUPMU_READ_SHARED && read_state::evicted == AMUPMU_READ_EVICTED);
static_assert(counter_perf == AMUPMU_COUNTER_PERF);
static_assert(sizeof(amupmu_pmu_config) == AMUPMU_PMU_CONFIG_SIZE_VER0);
static_assert(sizeof(amupmu_pmu_event) == AMUPMU_PMU_EVENT_SIZE_VER0);
static_assert(sizeof(amupmu_pmu_read) == AMUPMU_PMU_READ_SIZE_VER3);
static_assert(sizeof(amupmu_pmu_value) == sizeof(CounterValue));
static_assert(sizeof(amupmu_pmu_read_cpu) + sizeof(amupmu_pmu_value) == read_all_entry_size(1));
static_assert(offsetof(amupmu_pmu_read_cpu, values) == read_all_entry_size(0));
static_assert(sizeof(amupmu_pmu_read_cpu) + sizeof(amupmu_pmu_value_times) == read_all_times_entry_size(1));
static_assert(sizeof(EventTimes) == 2 * sizeof(std::uint64_t));
static_assert(sizeof(amupmu_sample) == sample_header_size);
static_assert(sizeof(amupmu_ring_header) == ring_header_size);
static_assert(sample_pmu_overflow == AMUPMU_SAMPLE_PMU_OVERFLOW);

namespace {

// AMUPMU_INFO for an error message; nullopt when the driver cannot say.
std::optional<Info> info_of(const Device& device)
{
	try {
		return device.info();
	} catch (const Error&) {
	}
	return std::nullopt;
}

// The fewest free counters on a CPU of cpus, from info; nullopt when info
// does not say.
std::optional<unsigned> fewest_free(const Info& info, std::span<const unsigned> cpus)
{
	unsigned fewest = std::numeric_limits<unsigned>::max();
	for (const unsigned cpu : cpus)
		if (cpu < info.cpus.size())
			fewest = std::min(fewest, info.cpus[cpu].counters_free());
	if (fewest != std::numeric_limits<unsigned>::max())
		return fewest;
	return std::nullopt;
}

} // namespace

ScaledCount scale_count(std::uint64_t raw, std::uint64_t enabled, std::uint64_t running) noexcept
{
	ScaledCount c{.value = raw, .raw = raw, .time_enabled = enabled, .time_running = running};
	if (running == 0) {
		// perf: scaled -1, "<not counted>"
		c.value = 0;
		c.counted = false;
	} else if (running < enabled) {
		const unsigned __int128 v = static_cast<unsigned __int128>(raw) * enabled / running;
		c.value = v > std::numeric_limits<std::uint64_t>::max() ? std::numeric_limits<std::uint64_t>::max()
									 : static_cast<std::uint64_t>(v);
		c.scaled = true;
	}
	return c;
}

namespace {

// One READ_TIMES value array of nr_values entries at from: the values into
// values, the times into times (nullptr: not kept).
void decode_value_times(const std::byte* from, std::uint32_t nr_values, std::span<CounterValue> values,
			CpuTimes* times)
{
	for (std::uint32_t e = 0; e < nr_values; ++e) {
		amupmu_pmu_value_times v{};
		std::memcpy(&v, from + e * sizeof(v), sizeof(v));
		values[e] = {.value = v.value, .overflows = v.overflows};
		if (times)
			times->events[e] = {.enabled = v.time_enabled, .running = v.time_running};
	}
}

// The header of a READ_ALL entry into r.
void decode_entry_head(const std::byte* entry, std::uint32_t nr_values, std::uint64_t time_enabled, CpuReading& r)
{
	amupmu_pmu_read_cpu head{};
	std::memcpy(&head, entry, sizeof(head));
	r.cpu = head.cpu;
	r.nr_values = nr_values;
	r.time_enabled = time_enabled;
	r.time_running = head.time_running;
	r.state = head.state;
	r.samples = head.samples;
	r.lost = head.lost;
	r.skid = head.skid;
}

[[noreturn]] void bad_read_all(const char* op, std::uint32_t nr_entries, std::uint32_t nr_values,
			       std::uint32_t room, std::size_t bytes)
{
	throw Error{std::string{op} + ": " + std::to_string(nr_entries) + " entries of " + std::to_string(nr_values) +
			    "/" + std::to_string(room) + " values in " + std::to_string(bytes) + " bytes",
		    EBADMSG};
}

} // namespace

void decode_read_all(std::span<const std::byte> raw, std::uint32_t nr_entries, std::uint32_t room,
		     std::uint32_t nr_values, std::uint64_t time_enabled, std::span<CpuReading> out)
{
	const std::size_t stride = read_all_entry_size(room);
	if (nr_values > room || nr_values > max_group_events || nr_entries > out.size() ||
	    raw.size() / stride < nr_entries)
		bad_read_all("AMUPMU_PMU_READ_ALL", nr_entries, nr_values, room, raw.size());
	for (std::uint32_t i = 0; i < nr_entries; ++i) {
		const std::byte* entry = raw.data() + i * stride;
		CpuReading& r = out[i];
		decode_entry_head(entry, nr_values, time_enabled, r);
		if (nr_values != 0)
			std::memcpy(r.values.data(), entry + offsetof(amupmu_pmu_read_cpu, values),
				    nr_values * sizeof(amupmu_pmu_value));
	}
}

void decode_read_all_times(std::span<const std::byte> raw, std::uint32_t nr_entries, std::uint32_t room,
			   std::uint32_t nr_values, std::uint64_t time_enabled, std::span<CpuReading> out,
			   std::span<CpuTimes> times)
{
	const std::size_t stride = read_all_times_entry_size(room);
	if (nr_values > room || nr_values > max_group_events || nr_entries > out.size() ||
	    raw.size() / stride < nr_entries || (!times.empty() && nr_entries > times.size()))
		bad_read_all("AMUPMU_PMU_READ_ALL with times", nr_entries, nr_values, room, raw.size());
	for (std::uint32_t i = 0; i < nr_entries; ++i) {
		const std::byte* entry = raw.data() + i * stride;
		decode_entry_head(entry, nr_values, time_enabled, out[i]);
		decode_value_times(entry + offsetof(amupmu_pmu_read_cpu, values), nr_values, out[i].values,
				   times.empty() ? nullptr : &times[i]);
	}
}

void decode_read_times(std::span<const std::byte> raw, std::uint32_t nr_values, CpuReading& out, CpuTimes& times)
{
	if (nr_values > max_group_events || raw.size() / sizeof(amupmu_pmu_value_times) < nr_values)
		throw Error{"AMUPMU_PMU_READ with times: " + std::to_string(nr_values) + " values in " +
				    std::to_string(raw.size()) + " bytes",
			    EBADMSG};
	decode_value_times(raw.data(), nr_values, out.values, &times);
	out.nr_values = nr_values;
}

const CpuReading* GroupReading::find(unsigned cpu) const noexcept
{
	const auto entries = cpus();
	const auto it = std::ranges::find(entries, cpu, &CpuReading::cpu);
	return it == entries.end() ? nullptr : &*it;
}

CpuTimes GroupReading::times(std::size_t cpu_index) const
{
	if (!has_times_)
		throw InvalidArgument{"GroupReading::times(): the read has no times (the group does not multiplex)",
				      EINVAL};
	if (cpu_index >= nr_cpus_)
		throw InvalidArgument{"GroupReading::times(" + std::to_string(cpu_index) + "): " +
					      std::to_string(nr_cpus_) + " CPUs read",
				      EINVAL};
	// raw_ holds an entry of equal stride per CPU of the set
	const std::size_t stride = raw_.size() / cpus_.size();
	const CpuReading& r = cpus_[cpu_index];
	CpuTimes out;
	std::array<CounterValue, max_group_events> values;
	decode_value_times(raw_.data() + cpu_index * stride + offsetof(amupmu_pmu_read_cpu, values), r.nr_values,
			   values, &out);
	return out;
}

std::vector<GroupEvent> group_events(std::span<const EventSpec> events)
{
	std::vector<GroupEvent> out;
	for (const EventSpec& e : events)
		out.push_back({.number = e.number, .flags = e.flags});
	return out;
}

void require_multiplex(const Info& info)
{
	const std::string op = "AMUPMU_PMU_CONFIG_MULTIPLEX";
	if (info.abi_major == abi_major && info.abi_minor < 3)
		throw Unsupported{op + ": this driver (ABI " + std::to_string(info.abi_major) + "." +
					  std::to_string(info.abi_minor) + ") cannot multiplex: the flag is ABI 2.3's",
				  EOPNOTSUPP};
	if (info.pmu_mode() == PmuMode::exclusive)
		throw Unsupported{op + ": amupmu owns the PMU (exclusive mode): its counters are pinned, never "
				       "multiplexed; shared mode (arm_pmu owns the PMU) multiplexes",
				  EOPNOTSUPP};
}

void throw_pmu_config_error(int err, std::size_t nr_events, std::span<const unsigned> cpus, const Info* info)
{
	std::string op = "AMUPMU_PMU_CONFIG";
	const bool shared = info && info->pmu_mode() == PmuMode::shared;
	if (err == EBUSY && shared) {
		// perf core places the counters: none is amupmu's to call free
		op += " (perf core could not schedule " + std::to_string(nr_events) + " pinned counters)";
	} else if (err == EBUSY && info) {
		if (const auto free = fewest_free(*info, cpus))
			op += " (" + std::to_string(*free) + " counters free, " + std::to_string(nr_events) +
			      " asked)";
	}
	if (err == ENXIO && shared)
		throw OwnedByKernel{op, err, "no perf PMU serves a CPU of the set (shared mode)"};
	// a driver before shared mode; else OwnedByKernel's own text (shared
	// mode is off)
	if (err == ENXIO && info && info->pmu_mode() == PmuMode::refused && info->abi_major == abi_major &&
	    info->abi_minor < 3)
		throw OwnedByKernel{op, err, "PMU owned by the kernel's arm_pmu; " + pmu_mode_reason(*info)};
	throw_error(op, err);
}

Session Session::open(const GroupConfig& config, std::string_view path)
{
	return Session{Device::open(path), config, Scheduling::pinned};
}

Session Session::create(Device device, const GroupConfig& config)
{
	return Session{std::move(device), config, Scheduling::pinned};
}

Session Session::open(const GroupConfig& config, Scheduling scheduling, std::string_view path)
{
	return Session{Device::open(path), config, scheduling};
}

Session Session::create(Device device, const GroupConfig& config, Scheduling scheduling)
{
	return Session{std::move(device), config, scheduling};
}

Session::Session(Device device, const GroupConfig& config) : Session{std::move(device), config, Scheduling::pinned}
{
}

Session::Session(Device device, const GroupConfig& config, Scheduling scheduling)
	: device_{std::move(device)}, nr_events_{config.events.size()}, ring_pages_{config.ring_pages},
	  multiplex_{scheduling == Scheduling::multiplex}
{
	if (config.events.empty() || config.events.size() > max_group_events)
		throw InvalidArgument{"AMUPMU_PMU_CONFIG: " + std::to_string(config.events.size()) +
				      " events (1.." + std::to_string(max_group_events) + ")", EINVAL};
	if (config.cpus.empty())
		throw InvalidArgument{"AMUPMU_PMU_CONFIG: empty CPU set", EINVAL};

	amupmu_pmu_event evs[AMUPMU_PMU_MAX_EVENTS] = {};
	for (std::size_t i = 0; i < config.events.size(); ++i)
		evs[i] = {.event = config.events[i].number, .flags = config.events[i].flags,
			  .sample_period = config.events[i].sample_period};
	detail::CpuMask set = detail::cpu_mask(config.cpus);
	const std::vector<std::uint64_t>& mask = set.words;
	cpus_ = std::move(set.cpus);

	// a driver before ABI 2.3 would call the flag EINVAL, exclusive mode
	// EOPNOTSUPP: say why instead
	if (multiplex_)
		require_multiplex(device_.info());

	amupmu_pmu_config cfg{};
	cfg.size = sizeof(cfg);
	cfg.flags = multiplex_ ? AMUPMU_PMU_CONFIG_MULTIPLEX : 0;
	cfg.nr_events = static_cast<std::uint32_t>(config.events.size());
	cfg.event_size = sizeof(amupmu_pmu_event);
	cfg.events_uptr = reinterpret_cast<std::uintptr_t>(evs);
	cfg.cpus_uptr = reinterpret_cast<std::uintptr_t>(mask.data());
	cfg.cpus_len = static_cast<std::uint32_t>(mask.size() * sizeof(std::uint64_t));
	cfg.ring_pages = config.ring_pages;
	if (::ioctl(device_.fd(), AMUPMU_PMU_CONFIG, &cfg) != 0) {
		const int err = errno;
		// a refused request writes nothing back: what the driver says
		// now comes from AMUPMU_INFO (it may have changed since, barring
		// a race)
		// (a multiplexed group is not refused for want of counters: its
		// EBUSY says nothing about them)
		const bool ask = err == ENXIO || (err == EBUSY && !multiplex_);
		const std::optional<Info> info = ask ? info_of(device_) : std::nullopt;
		throw_pmu_config_error(err, config.events.size(), cpus_, info ? &*info : nullptr);
	}
	for (std::size_t i = 0; i < nr_events_; ++i)
		counters_[i] = cfg.counters[i];
}

std::optional<unsigned> Session::counter(std::size_t event) const
{
	if (event >= nr_events_)
		throw InvalidArgument{"Session::counter(" + std::to_string(event) + "): the group has " +
					      std::to_string(nr_events_) + " events",
				      EINVAL};
	if (counters_[event] == counter_perf)
		return std::nullopt;
	return counters_[event];
}

void Session::ctl(std::uint32_t op, std::string_view name) const
{
	amupmu_pmu_ctl c{.size = sizeof(c), .flags = 0, .op = op, .__reserved = 0};
	if (::ioctl(device_.fd(), AMUPMU_PMU_CTL, &c) != 0)
		throw_error("AMUPMU_PMU_CTL " + std::string{name}, errno);
}

void Session::enable() const { ctl(AMUPMU_PMU_CTL_ENABLE, "ENABLE"); }
void Session::disable() const { ctl(AMUPMU_PMU_CTL_DISABLE, "DISABLE"); }
void Session::reset() const { ctl(AMUPMU_PMU_CTL_RESET, "RESET"); }

namespace {

// A one-CPU READ's header fields into @out (the values are the caller's).
void fill_header(const amupmu_pmu_read& rd, unsigned cpu, CpuReading& out) noexcept
{
	out.cpu = cpu;
	out.time_enabled = rd.time_enabled;
	out.time_running = rd.time_running;
	out.state = rd.state;
	out.samples = rd.samples;
	out.lost = rd.lost;
	out.skid = rd.skid;
}

}	// namespace

void Session::read(unsigned cpu, CpuReading& out) const
{
	if (multiplex_)
		throw InvalidArgument{"AMUPMU_PMU_READ: a multiplexed group's counts mean nothing without their "
				      "times: read(cpu, reading, times)",
				      EINVAL};
	amupmu_pmu_read rd{};
	rd.size = sizeof(rd);
	rd.cpu = cpu;
	rd.nr_values = static_cast<std::uint32_t>(out.values.size());
	rd.values_uptr = reinterpret_cast<std::uintptr_t>(out.values.data());
	if (::ioctl(device_.fd(), AMUPMU_PMU_READ, &rd) != 0)
		throw_error("AMUPMU_PMU_READ", errno);
	out.nr_values = rd.nr_values;
	fill_header(rd, cpu, out);
}

void Session::read(unsigned cpu, CpuReading& out, CpuTimes& times) const
{
	std::array<amupmu_pmu_value_times, max_group_events> raw{};
	amupmu_pmu_read rd{};
	rd.size = sizeof(rd);
	rd.flags = AMUPMU_PMU_READ_TIMES;
	rd.cpu = cpu;
	rd.nr_values = static_cast<std::uint32_t>(raw.size());
	rd.values_uptr = reinterpret_cast<std::uintptr_t>(raw.data());
	if (::ioctl(device_.fd(), AMUPMU_PMU_READ, &rd) != 0)
		throw_error("AMUPMU_PMU_READ with AMUPMU_PMU_READ_TIMES", errno);
	decode_read_times(std::as_bytes(std::span{raw}), rd.nr_values, out, times);
	fill_header(rd, cpu, out);
}

void Session::read_all(GroupReading& out) const
{
	const auto room = static_cast<std::uint32_t>(nr_events_);
	const std::size_t bytes =
		cpus_.size() * (multiplex_ ? read_all_times_entry_size(room) : read_all_entry_size(room));
	if (out.raw_.size() != bytes) {
		// another layout: the entries decoded before are gone
		out.raw_.assign(bytes, std::byte{0});
		out.nr_cpus_ = 0;
		out.has_times_ = false;
	}
	if (out.cpus_.size() != cpus_.size())
		out.cpus_.resize(cpus_.size());
	amupmu_pmu_read rd{};
	rd.size = sizeof(rd);
	rd.flags = AMUPMU_PMU_READ_ALL | (multiplex_ ? AMUPMU_PMU_READ_TIMES : 0);
	rd.nr_values = room;
	rd.values_uptr = reinterpret_cast<std::uintptr_t>(out.raw_.data());
	rd.nr_cpus = static_cast<std::uint32_t>(cpus_.size());
	if (::ioctl(device_.fd(), AMUPMU_PMU_READ, &rd) != 0)
		throw_error(multiplex_ ? "AMUPMU_PMU_READ_ALL with AMUPMU_PMU_READ_TIMES" : "AMUPMU_PMU_READ_ALL",
			    errno);
	if (multiplex_)
		decode_read_all_times(out.raw_, rd.nr_cpus, room, rd.nr_values, rd.time_enabled, out.cpus_, {});
	else
		decode_read_all(out.raw_, rd.nr_cpus, room, rd.nr_values, rd.time_enabled, out.cpus_);
	out.has_times_ = multiplex_;
	out.nr_cpus_ = rd.nr_cpus;
	out.time_enabled_ = rd.time_enabled;
	out.state_ = rd.state;
}

GroupReading Session::read_all() const
{
	GroupReading out;
	read_all(out);
	return out;
}

SampleReader Session::sample_reader() const
{
	if (ring_pages_ == 0)
		throw InvalidArgument{"sample ring: the group has no sampling event", EINVAL};
	return SampleReader::map(device_.fd(), ring_pages_);
}

} // namespace amupmu
