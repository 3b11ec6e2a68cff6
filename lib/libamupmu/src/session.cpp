// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/error.hpp>
#include <amupmu/sample.hpp>
#include <amupmu/session.hpp>

#include <linux/amupmu.h>

#include <cerrno>
#include <string>

#include <sys/ioctl.h>

namespace amupmu {

static_assert(max_group_events == AMUPMU_PMU_MAX_EVENTS);
static_assert(evflag::excl_el0 == AMUPMU_EV_EXCL_EL0 && evflag::excl_el1 == AMUPMU_EV_EXCL_EL1 &&
	      evflag::incl_el2 == AMUPMU_EV_INCL_EL2 && evflag::raw == AMUPMU_EV_RAW);
static_assert(read_state::enabled == AMUPMU_READ_ENABLED && read_state::offline == AMUPMU_READ_OFFLINE);
static_assert(sizeof(amupmu_pmu_config) == AMUPMU_PMU_CONFIG_SIZE_VER0);
static_assert(sizeof(amupmu_pmu_event) == AMUPMU_PMU_EVENT_SIZE_VER0);
static_assert(sizeof(amupmu_pmu_read) == AMUPMU_PMU_READ_SIZE_VER1);
static_assert(sizeof(amupmu_pmu_value) == sizeof(CounterValue));
static_assert(sizeof(amupmu_sample) == sample_header_size);
static_assert(sizeof(amupmu_ring_header) == ring_header_size);
static_assert(sample_pmu_overflow == AMUPMU_SAMPLE_PMU_OVERFLOW);

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
	: device_{std::move(device)}, cpus_{config.cpus}, nr_events_{config.events.size()},
	  ring_pages_{config.ring_pages}
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
	std::vector<std::uint64_t> mask;
	for (const unsigned cpu : config.cpus) {
		if (cpu / 64 >= mask.size())
			mask.resize(cpu / 64 + 1);
		mask[cpu / 64] |= std::uint64_t{1} << (cpu % 64);
	}

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
		if (err == EBUSY)
			op += " (" + std::to_string(cfg.counters_free) + " counters free, " +
			      std::to_string(config.events.size()) + " asked)";
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
}

SampleReader Session::sample_reader() const
{
	if (ring_pages_ == 0)
		throw InvalidArgument{"sample ring: the group has no sampling event", EINVAL};
	return SampleReader::map(device_.fd(), ring_pages_);
}

} // namespace amupmu
