// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The monitor's records as text and JSON lines. See monitor_format.hpp.
#include <amupmu/bits.hpp>
#include <amupmu/error.hpp>
#include <amupmu/report/json.hpp>
#include <amupmu/report/monitor_format.hpp>

#include <amupmu/text/numtext.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace amupmu::report {

namespace {

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
	std::string operator()(const ThrottleEvent& e) const
	{
		return head(e, "throttle") + " session=" + std::to_string(e.session_id) + " cpu=" + std::to_string(e.cpu) +
		       " throttled=" + std::to_string(e.throttled);
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
		return text::seconds(e.time_ns) + " " + to_string(E::group) + "#" + std::to_string(e.seq) + " " + std::string{name};
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
	std::string operator()(const ThrottleEvent& e) const
	{
		JsonWriter w{0};
		head(w, e, "throttle").member("session", e.session_id).member("cpu", e.cpu).member("throttled", e.throttled);
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

} // namespace

std::string format_monitor_text(const MonitorRecord& r)
{
	return std::visit(TextLine{}, r);
}

std::string format_monitor_json(const MonitorRecord& r)
{
	return std::visit(JsonLine{}, r);
}

std::string format_monitor_text(const ThrottleEvent& e)
{
	return TextLine{}(e);
}

std::string format_monitor_json(const ThrottleEvent& e)
{
	return JsonLine{}(e);
}

} // namespace amupmu::report
