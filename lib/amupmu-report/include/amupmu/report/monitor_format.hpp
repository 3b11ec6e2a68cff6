// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The driver's netlink events (amupmu::Monitor's records) as `amupmu
// monitor` prints them: one line of text or one JSON object each.
#ifndef AMUPMU_REPORT_MONITOR_FORMAT_HPP
#define AMUPMU_REPORT_MONITOR_FORMAT_HPP

#include <amupmu/monitor.hpp>

#include <string>

namespace amupmu::report {

/// "TIME GROUP#SEQ EVENT FIELDS..." without the newline, TIME the
/// CLOCK_MONOTONIC seconds with nine decimals:
/// "123.456789012 cpu#4 cpu-offline cpu=1 flags=0x5"; a gap or an overrun
/// as a comment line ("# gap in group ...").
[[nodiscard]] std::string format_monitor_text(const MonitorRecord& r);

/// The record as one JSON object on one line (JSON Lines), without the
/// newline: "event", "group", "seq", "time_ns" and the event's fields.
[[nodiscard]] std::string format_monitor_json(const MonitorRecord& r);

/// A THROTTLE event (Monitor::on_throttle()) as a text line
/// ("... buffer#7 throttle session=9 cpu=1 throttled=4") or a JSON object.
[[nodiscard]] std::string format_monitor_text(const ThrottleEvent& e);
[[nodiscard]] std::string format_monitor_json(const ThrottleEvent& e);

} // namespace amupmu::report

#endif
