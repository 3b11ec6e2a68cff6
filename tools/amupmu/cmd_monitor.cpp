// SPDX-License-Identifier: GPL-2.0
//
// amupmu monitor: the driver's netlink events as they arrive, one line
// each (amupmu::Monitor).
#include "cli.hpp"
#include "signal_wait.hpp"

#include <amupmu/bits.hpp>
#include <amupmu/error.hpp>
#include <amupmu/monitor.hpp>
#include <amupmu/report/monitor_format.hpp>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>
#include <variant>

namespace amupmu::cli {

using namespace amupmu::report;

namespace {

constexpr std::string_view usage = R"(Usage: amupmu monitor [--json] [--groups LIST] [--count N]

Print the amupmu driver's events as they arrive, one line each, from its
generic netlink family (no need to open /dev/amupmu): CPUs going offline
and online, PMU and SPE ownership changes (group cpu); sessions starting
and ending, SPE debugfs knob changes (group session); sample rings losing
records, sample interrupts throttled, SPE buffer full/fault/collision
(group buffer). Every event has its group's sequence number: a line says
when some were lost (a gap), and when the socket's receive buffer
overflowed (an overrun). Ends on Ctrl-C (SIGINT) or SIGTERM, with status 0.

Options:
  --json          JSON Lines: one object per line
  --groups LIST   groups, comma-separated: cpu, session, buffer (default
                  cpu; session and buffer need CAP_PERFMON)
  --count N       exit after N events (gaps and overruns not counted)
  -h, --help      show this help

Text lines: TIME GROUP#SEQ EVENT FIELDS..., TIME the CLOCK_MONOTONIC
seconds when it happened, e.g.
  123.456789012 cpu#4 cpu-offline cpu=1 flags=0x5
)";

MonitorGroups parse_groups(std::string_view list)
{
	MonitorGroups groups = 0;
	while (!list.empty()) {
		const auto comma = list.find(',');
		const std::string_view name = list.substr(0, comma);
		const auto g = monitor_group_from_name(name);
		if (!g)
			throw UsageError{"unknown group '" + std::string{name} + "' (cpu, session, buffer)"};
		if (groups & group_bit(*g))
			throw UsageError{"group '" + std::string{name} + "' listed twice"};
		groups |= group_bit(*g);
		list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
		if (comma != std::string_view::npos && list.empty())
			throw UsageError{"--groups: empty group name"};
	}
	if (!groups)
		throw UsageError{"--groups needs at least one group"};
	return groups;
}

struct Options {
	bool json = false;
	MonitorGroups groups = group_bit(MonitorGroup::cpu);
	std::uint64_t count = 0;	///< 0: until a signal
};

Options parse(Args args)
{
	Options o;
	for (std::size_t i = 0; i < args.size(); ++i) {
		const std::string_view arg = args[i];
		if (arg == "--json") {
			o.json = true;
		} else if (const auto v = option_value(args, i, "--groups")) {
			o.groups = parse_groups(*v);
		} else if (const auto c = option_value(args, i, "--count")) {
			o.count = number_arg<std::uint64_t>("--count", *c);
			if (o.count == 0)
				throw UsageError{"--count needs at least 1"};
		} else {
			throw UsageError{"unknown argument '" + std::string{arg} + "'"};
		}
	}
	return o;
}

int run(const Options& o)
{
	const SignalWait signals;
	Monitor monitor;
	monitor.subscribe(o.groups);
	std::string names;
	for (const MonitorGroup g : {MonitorGroup::cpu, MonitorGroup::session, MonitorGroup::buffer})
		if (o.groups & group_bit(g))
			names += (names.empty() ? "" : ",") + to_string(g);
	std::cerr << "amupmu monitor: groups " << names << " (netlink family amupmu version "
		  << monitor.family_version() << "); Ctrl-C ends\n";

	std::uint64_t events = 0;
	// in order with the records, as next_event() hands them over
	monitor.on_throttle([&](const ThrottleEvent& t) {
		if (o.count && events >= o.count)
			return;
		std::cout << (o.json ? format_monitor_json(t) : format_monitor_text(t)) << std::endl;
		++events;
	});
	int sig = 0;
	while (!o.count || events < o.count) {
		std::optional<MonitorRecord> r = monitor.next_event(std::chrono::milliseconds{0});
		if (!r) {
			sig = signals.wait_fd(monitor.fd(), -1);
			if (sig)
				break;
			continue;
		}
		std::cout << (o.json ? format_monitor_json(*r) : format_monitor_text(*r)) << std::endl;
		if (!std::holds_alternative<Gap>(*r) && !std::holds_alternative<Overrun>(*r))
			++events;
	}
	const Monitor::Stats st = monitor.stats();
	std::cerr << "amupmu monitor: " << events << " events, " << st.gaps << " gaps (" << st.missed
		  << " events lost), " << st.overruns << " overruns" << (sig ? ", ended by a signal" : "") << "\n";
	return exit_ok;
}

} // namespace

const Command monitor_command{
	.name = "monitor",
	.summary = "print the driver's netlink events as they arrive (hotplug, owners, sessions, lost samples)",
	.usage = usage,
	.run = parse_then_run<parse, run>,
};

} // namespace amupmu::cli
