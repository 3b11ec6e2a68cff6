// SPDX-License-Identifier: GPL-2.0
//
// amupmu monitor: the driver's netlink events as they arrive, one line
// each (amupmu::Monitor).
#include "cli.hpp"
#include "signal_wait.hpp"

#include <amupmu/bits.hpp>
#include <amupmu/error.hpp>
#include <amupmu/monitor.hpp>
#include <amupmu/report/json.hpp>

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
records, SPE buffer full/fault/collision (group buffer). Every event has
its group's sequence number: a line says when some were lost (a gap), and
when the socket's receive buffer overflowed (an overrun). Ends on Ctrl-C
(SIGINT) or SIGTERM, with status 0.

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

std::string seconds(std::uint64_t ns)
{
	std::string frac = std::to_string(ns % 1000000000);
	frac.insert(0, 9 - frac.size(), '0');
	return std::to_string(ns / 1000000000) + "." + frac;
}

// One record as text, without the newline.
class TextLine {
public:
	std::string operator()(const CpuEvent& e) const
	{
		std::string s = head(e, e.online ? "cpu-online" : "cpu-offline") + " cpu=" + std::to_string(e.cpu) +
				" flags=" + hex(e.flags, 1);
		if (e.online)
			s += " midr=" + hex(e.midr, 8) + " pmu_version=" + std::to_string(e.pmu_version) +
			     " pmu_counters=" + std::to_string(e.pmu_counters) +
			     " amu_version=" + std::to_string(e.amu_version) +
			     " spe_version=" + std::to_string(e.spe_version);
		return s;
	}
	std::string operator()(const OwnerEvent& e) const
	{
		const std::string owner = e.unit == MonitorUnit::pmu
						  ? std::string{to_string(static_cast<PmuOwner>(e.owner))}
						  : std::string{to_string(static_cast<SpeOwner>(e.owner))};
		return head(e, "owner-change") + " unit=" + unit(e.unit) + " owner=" + owner;
	}
	std::string operator()(const SessionEvent& e) const
	{
		return head(e, e.start ? "session-start" : "session-end") + " session=" + std::to_string(e.session_id) +
		       " kind=" + to_string(e.kind) + " pid=" + std::to_string(e.pid);
	}
	std::string operator()(const KnobEvent& e) const
	{
		return head(e, "knob-change") + " knob=" + e.knob + " old=" + std::to_string(e.old_value) +
		       " new=" + std::to_string(e.new_value) + " pid=" + std::to_string(e.pid);
	}
	std::string operator()(const RingLostEvent& e) const
	{
		return head(e, "ring-lost") + " session=" + std::to_string(e.session_id) + " cpu=" + std::to_string(e.cpu) +
		       " lost=" + std::to_string(e.lost);
	}
	std::string operator()(const SpeBufferEvent& e) const
	{
		return head(e, "spe-buffer") + " session=" + std::to_string(e.session_id) + " cpu=" + std::to_string(e.cpu) +
		       " what=" + to_string(e.what) + " pmbsr=" + hex(e.pmbsr);
	}
	std::string operator()(const Gap& g) const
	{
		return "# gap in group " + to_string(g.group) + ": expected seq " + std::to_string(g.expected) + ", got " +
		       std::to_string(g.got) + " (" + std::to_string(g.missed()) + " events lost)";
	}
	std::string operator()(const Overrun&) const
	{
		return "# overrun: the socket's receive buffer overflowed (ENOBUFS), events lost";
	}

	static std::string unit(MonitorUnit u)
	{
		return u == MonitorUnit::pmu ? "pmu" : u == MonitorUnit::spe ? "spe" : std::to_string(static_cast<unsigned>(u));
	}

private:
	template <typename E>
	static std::string head(const E& e, std::string_view name)
	{
		return seconds(e.time_ns) + " " + to_string(E::group) + "#" + std::to_string(e.seq) + " " + std::string{name};
	}
};

// One record as a JSON object on one line.
class JsonLine {
public:
	std::string operator()(const CpuEvent& e) const
	{
		JsonWriter w{0};
		head(w, e, e.online ? "cpu-online" : "cpu-offline").member("cpu", e.cpu).member("flags", e.flags);
		if (e.online)
			w.member("midr", hex(e.midr, 8))
				.member("pmu_version", e.pmu_version)
				.member("pmu_counters", e.pmu_counters)
				.member("amu_version", e.amu_version)
				.member("spe_version", e.spe_version);
		return done(w);
	}
	std::string operator()(const OwnerEvent& e) const
	{
		JsonWriter w{0};
		const std::string owner = e.unit == MonitorUnit::pmu
						  ? std::string{to_string(static_cast<PmuOwner>(e.owner))}
						  : std::string{to_string(static_cast<SpeOwner>(e.owner))};
		head(w, e, "owner-change").member("unit", TextLine::unit(e.unit)).member("owner", owner);
		return done(w);
	}
	std::string operator()(const SessionEvent& e) const
	{
		JsonWriter w{0};
		head(w, e, e.start ? "session-start" : "session-end")
			.member("session", e.session_id)
			.member("kind", to_string(e.kind))
			.member("pid", e.pid);
		return done(w);
	}
	std::string operator()(const KnobEvent& e) const
	{
		JsonWriter w{0};
		head(w, e, "knob-change")
			.member("knob", e.knob)
			.member("old", e.old_value)
			.member("new", e.new_value)
			.member("pid", e.pid);
		return done(w);
	}
	std::string operator()(const RingLostEvent& e) const
	{
		JsonWriter w{0};
		head(w, e, "ring-lost").member("session", e.session_id).member("cpu", e.cpu).member("lost", e.lost);
		return done(w);
	}
	std::string operator()(const SpeBufferEvent& e) const
	{
		JsonWriter w{0};
		head(w, e, "spe-buffer")
			.member("session", e.session_id)
			.member("cpu", e.cpu)
			.member("what", to_string(e.what))
			.member("pmbsr", hex(e.pmbsr));
		return done(w);
	}
	std::string operator()(const Gap& g) const
	{
		JsonWriter w{0};
		w.begin_object()
			.member("event", "gap")
			.member("group", to_string(g.group))
			.member("expected", g.expected)
			.member("got", g.got)
			.member("missed", g.missed());
		return done(w);
	}
	std::string operator()(const Overrun&) const
	{
		JsonWriter w{0};
		w.begin_object().member("event", "overrun");
		return done(w);
	}

private:
	template <typename E>
	static JsonWriter& head(JsonWriter& w, const E& e, std::string_view name)
	{
		return w.begin_object()
			.member("event", name)
			.member("group", to_string(E::group))
			.member("seq", e.seq)
			.member("time_ns", e.time_ns);
	}
	static std::string done(JsonWriter& w)
	{
		w.end_object();
		return w.str();
	}
};

int run(Args args)
{
	bool json = false;
	MonitorGroups groups = group_bit(MonitorGroup::cpu);
	std::uint64_t count = 0;	// 0: until a signal

	for (std::size_t i = 0; i < args.size(); ++i) {
		const std::string_view arg = args[i];
		if (arg == "--json") {
			json = true;
		} else if (const auto v = option_value(args, i, "--groups")) {
			groups = parse_groups(*v);
		} else if (const auto c = option_value(args, i, "--count")) {
			count = number_arg<std::uint64_t>("--count", *c);
			if (count == 0)
				throw UsageError{"--count needs at least 1"};
		} else {
			throw UsageError{"unknown argument '" + std::string{arg} + "'"};
		}
	}

	const SignalWait signals;
	Monitor monitor;
	monitor.subscribe(groups);
	std::string names;
	for (const MonitorGroup g : {MonitorGroup::cpu, MonitorGroup::session, MonitorGroup::buffer})
		if (groups & group_bit(g))
			names += (names.empty() ? "" : ",") + to_string(g);
	std::cerr << "amupmu monitor: groups " << names << " (netlink family amupmu version "
		  << monitor.family_version() << "); Ctrl-C ends\n";

	std::uint64_t events = 0;
	int sig = 0;
	while (!count || events < count) {
		std::optional<MonitorRecord> r = monitor.next_event(std::chrono::milliseconds{0});
		if (!r) {
			sig = signals.wait_fd(monitor.fd(), -1);
			if (sig)
				break;
			continue;
		}
		std::cout << (json ? std::visit(JsonLine{}, *r) : std::visit(TextLine{}, *r)) << std::endl;
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
	.run = run,
};

} // namespace amupmu::cli
