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
static_assert(sizeof(amupmu_pmu_config) == AMUPMU_PMU_CONFIG_SIZE_VER0);
static_assert(sizeof(amupmu_pmu_event) == AMUPMU_PMU_EVENT_SIZE_VER0);
static_assert(sizeof(amupmu_pmu_read) == AMUPMU_PMU_READ_SIZE_VER2);
static_assert(sizeof(amupmu_pmu_value) == sizeof(CounterValue));
static_assert(sizeof(amupmu_pmu_read_cpu) + sizeof(amupmu_pmu_value) == read_all_entry_size(1));
static_assert(offsetof(amupmu_pmu_read_cpu, values) == read_all_entry_size(0));
static_assert(sizeof(amupmu_sample) == sample_header_size);
static_assert(sizeof(amupmu_ring_header) == ring_header_size);
static_assert(sample_pmu_overflow == AMUPMU_SAMPLE_PMU_OVERFLOW);

namespace {

// The fewest free counters on a CPU of cpus, from AMUPMU_INFO; nullopt when
// the driver cannot say.
std::optional<unsigned> fewest_free(const Device& device, std::span<const unsigned> cpus)
{
	try {
		const Info info = device.info();
		unsigned fewest = std::numeric_limits<unsigned>::max();
		for (const unsigned cpu : cpus)
			if (cpu < info.cpus.size())
				fewest = std::min(fewest, info.cpus[cpu].counters_free());
		if (fewest != std::numeric_limits<unsigned>::max())
			return fewest;
	} catch (const Error&) {
	}
	return std::nullopt;
}

} // namespace

void decode_read_all(std::span<const std::byte> raw, std::uint32_t nr_entries, std::uint32_t room,
		     std::uint32_t nr_values, std::uint64_t time_enabled, std::span<CpuReading> out)
{
	const std::size_t stride = read_all_entry_size(room);
	if (nr_values > room || nr_values > max_group_events || nr_entries > out.size() ||
	    raw.size() / stride < nr_entries)
		throw Error{"AMUPMU_PMU_READ_ALL: " + std::to_string(nr_entries) + " entries of " +
				    std::to_string(nr_values) + "/" + std::to_string(room) + " values in " +
				    std::to_string(raw.size()) + " bytes",
			    EBADMSG};
	for (std::uint32_t i = 0; i < nr_entries; ++i) {
		const std::byte* entry = raw.data() + i * stride;
		amupmu_pmu_read_cpu head{};
		std::memcpy(&head, entry, sizeof(head));
		CpuReading& r = out[i];
		r.cpu = head.cpu;
		r.nr_values = nr_values;
		r.time_enabled = time_enabled;
		r.time_running = head.time_running;
		r.state = head.state;
		r.samples = head.samples;
		r.lost = head.lost;
		r.skid = head.skid;
		if (nr_values != 0)
			std::memcpy(r.values.data(), entry + offsetof(amupmu_pmu_read_cpu, values),
				    nr_values * sizeof(amupmu_pmu_value));
	}
}

const CpuReading* GroupReading::find(unsigned cpu) const noexcept
{
	const auto entries = cpus();
	const auto it = std::ranges::find(entries, cpu, &CpuReading::cpu);
	return it == entries.end() ? nullptr : &*it;
}

std::vector<GroupEvent> group_events(std::span<const EventSpec> events)
{
	std::vector<GroupEvent> out;
	for (const EventSpec& e : events)
		out.push_back({.number = e.number, .flags = e.flags});
	return out;
}

Session Session::open(const GroupConfig& config, std::string_view path)
{
	return Session{Device::open(path), config};
}

Session Session::create(Device device, const GroupConfig& config)
{
	return Session{std::move(device), config};
}

Session::Session(Device device, const GroupConfig& config)
	: device_{std::move(device)}, nr_events_{config.events.size()}, ring_pages_{config.ring_pages}
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

	amupmu_pmu_config cfg{};
	cfg.size = sizeof(cfg);
	cfg.nr_events = static_cast<std::uint32_t>(config.events.size());
	cfg.event_size = sizeof(amupmu_pmu_event);
	cfg.events_uptr = reinterpret_cast<std::uintptr_t>(evs);
	cfg.cpus_uptr = reinterpret_cast<std::uintptr_t>(mask.data());
	cfg.cpus_len = static_cast<std::uint32_t>(mask.size() * sizeof(std::uint64_t));
	cfg.ring_pages = config.ring_pages;
	if (::ioctl(device_.fd(), AMUPMU_PMU_CONFIG, &cfg) != 0) {
		const int err = errno;
		std::string op = "AMUPMU_PMU_CONFIG";
		// a refused request writes nothing back: the free counters come
		// from AMUPMU_INFO (they may have changed since, barring a race)
		if (err == EBUSY) {
			if (const auto free = fewest_free(device_, cpus_))
				op += " (" + std::to_string(*free) + " counters free, " +
				      std::to_string(config.events.size()) + " asked)";
		}
		throw_error(op, err);
	}
	for (std::size_t i = 0; i < nr_events_; ++i)
		counters_[i] = cfg.counters[i];
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

void Session::read(unsigned cpu, CpuReading& out) const
{
	amupmu_pmu_read rd{};
	rd.size = sizeof(rd);
	rd.cpu = cpu;
	rd.nr_values = static_cast<std::uint32_t>(out.values.size());
	rd.values_uptr = reinterpret_cast<std::uintptr_t>(out.values.data());
	if (::ioctl(device_.fd(), AMUPMU_PMU_READ, &rd) != 0)
		throw_error("AMUPMU_PMU_READ", errno);
	out.cpu = cpu;
	out.nr_values = rd.nr_values;
	out.time_enabled = rd.time_enabled;
	out.time_running = rd.time_running;
	out.state = rd.state;
	out.samples = rd.samples;
	out.lost = rd.lost;
	out.skid = rd.skid;
}

void Session::read_all(GroupReading& out) const
{
	const auto room = static_cast<std::uint32_t>(nr_events_);
	const std::size_t bytes = cpus_.size() * read_all_entry_size(room);
	if (out.raw_.size() != bytes)
		out.raw_.assign(bytes, std::byte{0});
	if (out.cpus_.size() != cpus_.size())
		out.cpus_.resize(cpus_.size());
	amupmu_pmu_read rd{};
	rd.size = sizeof(rd);
	rd.flags = AMUPMU_PMU_READ_ALL;
	rd.nr_values = room;
	rd.values_uptr = reinterpret_cast<std::uintptr_t>(out.raw_.data());
	rd.nr_cpus = static_cast<std::uint32_t>(cpus_.size());
	if (::ioctl(device_.fd(), AMUPMU_PMU_READ, &rd) != 0)
		throw_error("AMUPMU_PMU_READ_ALL", errno);
	decode_read_all(out.raw_, rd.nr_cpus, room, rd.nr_values, rd.time_enabled, out.cpus_);
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
