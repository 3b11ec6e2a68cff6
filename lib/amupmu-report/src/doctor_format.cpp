// SPDX-License-Identifier: LGPL-2.1-or-later
//
// amupmu doctor's checks as text and JSON. See doctor_format.hpp.
#include <amupmu/report/doctor_format.hpp>
#include <amupmu/report/json.hpp>

#include <amupmu/text/columns.hpp>

#include <algorithm>
#include <array>
#include <cstddef>

namespace amupmu::report {

namespace {

constexpr std::array statuses{DoctorStatus::ok, DoctorStatus::warn, DoctorStatus::fail, DoctorStatus::skip};

bool needed_for_counting(std::string_view unit) noexcept
{
	return unit == "module" || unit == "device" || unit == "privileges" || unit == "pmu";
}

std::size_t count(std::span<const DoctorCheck> checks, DoctorStatus status)
{
	return static_cast<std::size_t>(std::ranges::count(checks, status, &DoctorCheck::status));
}

// "cpu3" for a per-CPU check, else the check's name
std::string label(const DoctorCheck& c)
{
	return c.cpu ? "cpu" + std::to_string(*c.cpu) : c.name;
}

} // namespace

std::string_view to_string(DoctorStatus status) noexcept
{
	switch (status) {
	case DoctorStatus::ok:
		return "ok";
	case DoctorStatus::warn:
		return "warn";
	case DoctorStatus::fail:
		return "fail";
	case DoctorStatus::skip:
		return "skip";
	}
	return "unknown";
}

bool doctor_counting_works(std::span<const DoctorCheck> checks) noexcept
{
	return std::ranges::none_of(checks, [](const DoctorCheck& c) {
		return c.status == DoctorStatus::fail && needed_for_counting(c.unit);
	});
}

std::string format_doctor_text(std::span<const DoctorCheck> checks, const DoctorContext& context)
{
	std::string out = "amupmu doctor: kernel " + (context.kernel.empty() ? std::string{"unknown"} : context.kernel);
	if (context.root != "/")
		out += " (root " + context.root + ")";
	out += "\n";
	for (const std::string_view unit : doctor_units) {
		bool first = true;
		for (const DoctorCheck& c : checks) {
			if (c.unit != unit)
				continue;
			if (first)
				out += std::string{unit} + "\n";
			first = false;
			out += "  " + text::pad_right(std::string{to_string(c.status)}, 6) + label(c) + ": " + c.why + "\n";
			if (!c.fix.empty())
				out += "        fix: " + c.fix + "\n";
		}
	}
	out += doctor_counting_works(checks) ? "counting works" : "counting does not work";
	out += " (";
	for (const DoctorStatus s : statuses)
		out += (s == statuses.front() ? "" : ", ") + std::to_string(count(checks, s)) + " " +
		       std::string{to_string(s)};
	return out + ")\n";
}

std::string format_doctor_json(std::span<const DoctorCheck> checks, const DoctorContext& context)
{
	JsonWriter j;
	j.begin_object().member("root", context.root).member("kernel", context.kernel);
	j.member("counting", doctor_counting_works(checks));
	j.key("counts").begin_object();
	for (const DoctorStatus s : statuses)
		j.member(to_string(s), count(checks, s));
	j.end_object();
	j.key("checks").begin_array();
	for (const DoctorCheck& c : checks) {
		j.begin_object().member("unit", c.unit).member("check", c.name);
		if (c.cpu)
			j.member("cpu", *c.cpu);
		else
			j.key("cpu").null();
		if (!c.device.empty())
			j.member("device", c.device);
		j.member("status", to_string(c.status)).member("why", c.why);
		if (c.fix.empty())
			j.key("fix").null();
		else
			j.member("fix", c.fix);
		j.end_object();
	}
	j.end_array().end_object();
	return j.str() + "\n";
}

} // namespace amupmu::report
