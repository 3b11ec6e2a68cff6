// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/cpu.hpp>
#include <amupmu/decode.hpp>
#include <amupmu/format.hpp>
#include <amupmu/json.hpp>
#include <amupmu/version.hpp>

#include <algorithm>
#include <cstdio>

namespace amupmu {

std::string hex(std::uint64_t value, unsigned digits)
{
	char buf[24];
	std::snprintf(buf, sizeof(buf), "0x%0*llx", static_cast<int>(digits),
		      static_cast<unsigned long long>(value));
	return buf;
}

namespace {

std::string join(const std::vector<std::string>& items, std::string_view sep)
{
	std::string s;
	for (const std::string& item : items)
		s += (s.empty() ? "" : std::string{sep}) + item;
	return s;
}

std::string abi_string(std::uint32_t major, std::uint32_t minor)
{
	return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<unsigned> cpus_where(const Info& info, bool (CpuInfo::*pred)() const noexcept)
{
	std::vector<unsigned> out;
	for (const CpuInfo& c : info.cpus)
		if ((c.*pred)())
			out.push_back(c.cpu);
	return out;
}

std::string count_and_list(const std::vector<unsigned>& cpus, std::string_view what)
{
	std::string s = std::to_string(cpus.size()) + " " + std::string{what};
	if (!cpus.empty())
		s += " (" + format_cpu_list(cpus) + ")";
	return s;
}

std::string pmu_summary(const CpuInfo& c)
{
	std::string s{pmu_version_name(c.pmu_version)};
	if (c.has_pmu())
		s += ", " + std::to_string(c.pmu_num_counters) + " event counters + cycle counter";
	return s;
}

std::string events_summary(const CpuInfo& c, const std::vector<std::uint16_t>& events)
{
	const auto ext = static_cast<std::size_t>(
		std::ranges::count_if(events, [](std::uint16_t e) { return e >= ext_event_base; }));
	std::string s = std::to_string(events.size()) + " common events implemented (" +
			std::to_string(events.size() - ext) + " in 0x00-0x3f";
	if (c.pmceid_ext())
		s += ", " + std::to_string(ext) + " in 0x4000-0x403f)";
	else
		s += "; 0x4000-0x403f not reported before PMUv3p1)";
	return s;
}

std::string event_label(std::uint16_t event)
{
	const std::string_view name = event_name(event);
	return hex(event, 4) + " " + (name.empty() ? std::string{"(unnamed)"} : std::string{name});
}

// The SPE capabilities as short words, in PMSIDR bit order.
std::vector<std::string> spe_filters(const SpeId& id)
{
	std::vector<std::string> out;
	if (id.filter_event)
		out.emplace_back("event");
	if (id.filter_type)
		out.emplace_back("type");
	if (id.filter_latency)
		out.emplace_back("latency");
	if (id.filter_not_event)
		out.emplace_back("not-event");
	return out;
}

std::vector<std::string> spe_options(const SpeId& id)
{
	std::vector<std::string> out;
	if (id.arch_inst)
		out.emplace_back("arch-inst");
	if (id.lds)
		out.emplace_back("data-source");
	if (id.ernd)
		out.emplace_back("random-interval");
	if (id.pbt)
		out.emplace_back("prev-branch-target");
	return out;
}

std::string spe_sampling(const SpeId& id)
{
	return "min interval " + std::to_string(id.min_interval()) + ", max record " +
	       std::to_string(id.max_record_bytes()) + " bytes, " + std::to_string(id.count_bits()) +
	       "-bit counters, record format " + std::to_string(id.format);
}

std::string amu_summary(const CpuInfo& c)
{
	const AmuConfig amu = decode_amu(c.amcfgr, c.amcgcr);
	return std::string{amu_version_name(c.amu_version)} + ", " + std::to_string(amu.groups) +
	       " counter groups (" + std::to_string(amu.group0_counters) + " architected + " +
	       std::to_string(amu.group1_counters) + " auxiliary counters), " +
	       std::to_string(amu.counter_bits) + "-bit";
}

std::string free_summary(const CpuInfo& c)
{
	return std::to_string(c.counters_free()) + " of " + std::to_string(c.pmu_num_counters + 1) + " (" +
	       counter_mask_list(c.pmu_counters_free) + ")";
}

std::string cpu_state(const CpuInfo& c)
{
	if (!c.possible())
		return "not possible";
	std::string s = c.online() ? "online" : "offline";
	s += c.discovered() ? ", discovered" : ", not discovered (no register data)";
	if (c.mock())
		s += ", mock AMU/SPE registers";
	return s;
}

// ---------------------------------------------------------------- text

class TextReport {
public:
	void line(std::string_view s) { (out_ += s) += '\n'; }
	void row(std::string_view label, std::string_view value, unsigned indent = 0)
	{
		std::string head(indent, ' ');
		head += label;
		head += ':';
		head.resize(std::max<std::size_t>(head.size() + 1, value_column), ' ');
		line(head + std::string{value});
	}
	/// A continuation line aligned with the values of row().
	void more(std::string_view value) { line(std::string(value_column, ' ') + std::string{value}); }
	[[nodiscard]] std::string take() { return std::move(out_); }

	/// Values start here, at every indent level.
	static constexpr unsigned value_column = 16;

private:
	std::string out_;
};

void text_cpu(TextReport& r, const Info& info, const CpuInfo& c, const FormatOptions& opt)
{
	constexpr unsigned in = 2;
	r.line("");
	r.line("cpu" + std::to_string(c.cpu) + ": " + cpu_state(c));
	if (!c.discovered())
		return;

	const Midr midr = decode_midr(c.midr);
	const std::string_view imp = implementer_name(midr.implementer);
	r.row("cpu", describe_midr(c.midr), in);
	r.row("implementer", hex(midr.implementer, 2) + " (" + (imp.empty() ? "unknown" : std::string{imp}) + ")", in);
	r.row("midr_el1", hex(c.midr), in);
	if (opt.verbose) {
		r.row("revidr_el1", hex(c.revidr), in);
		r.row("id_aa64dfr0", hex(c.id_aa64dfr0), in);
		r.row("id_aa64pfr0", hex(c.id_aa64pfr0), in);
	}

	r.row("pmu", pmu_summary(c), in);
	if (c.has_pmu() && info.pmu_owner == PmuOwner::amupmu)
		r.row("pmu free", free_summary(c), in);
	if (c.has_pmu()) {
		const std::vector<std::uint16_t> events = implemented_events(c);
		if (opt.verbose) {
			r.row("pmcr_el0", hex(c.pmcr), in);
			r.row("pmceid0_el0", hex(c.pmceid0), in);
			r.row("pmceid1_el0", hex(c.pmceid1), in);
		}
		r.row("events", events_summary(c, events), in);
		if (opt.verbose)
			for (const std::uint16_t e : events)
				r.more(event_label(e));
		if (c.has_pmmir()) {
			const unsigned slots = pmmir_slots(c.pmmir);
			r.row("pmmir slots", slots ? std::to_string(slots) : "0 (not reported)", in);
		}
	}

	if (c.has_spe()) {
		const SpeId id = decode_pmsidr(c.pmsidr);
		const std::vector<std::string> filters = spe_filters(id);
		const std::vector<std::string> options = spe_options(id);
		r.row("spe", std::string{spe_version_name(c.spe_version)} + " (pmsidr_el1 " + hex(c.pmsidr) + ")", in);
		r.row("spe sampling", spe_sampling(id), in);
		r.row("spe filters", filters.empty() ? "none" : join(filters, ", "), in);
		r.row("spe options", options.empty() ? "none" : join(options, ", "), in);
	} else {
		r.row("spe", "not implemented", in);
	}

	if (c.has_amu()) {
		r.row("amu", amu_summary(c), in);
		if (opt.verbose) {
			r.row("amcfgr_el0", hex(c.amcfgr), in);
			r.row("amcgcr_el0", hex(c.amcgcr), in);
		}
	} else {
		r.row("amu", "not implemented", in);
	}
}

// ---------------------------------------------------------------- JSON

void json_strings(JsonWriter& w, std::string_view name, const std::vector<std::string>& items)
{
	w.key(name).begin_array();
	for (const std::string& s : items)
		w.value(s);
	w.end_array();
}

void json_pmu(JsonWriter& w, const Info& info, const CpuInfo& c)
{
	w.key("pmu");
	if (!c.has_pmu()) {
		w.null();
		return;
	}
	w.begin_object()
		.member("version", c.pmu_version)
		.member("name", pmu_version_name(c.pmu_version))
		.member("counters", c.pmu_num_counters)
		.member("pmcr", hex(c.pmcr))
		.member("pmceid0", hex(c.pmceid0))
		.member("pmceid1", hex(c.pmceid1))
		.member("pmceid_ext", c.pmceid_ext());
	// only amupmu's own counters are free or not
	if (info.pmu_owner == PmuOwner::amupmu)
		w.member("counters_free_mask", hex(c.pmu_counters_free, 8)).member("counters_free", c.counters_free());
	else
		w.key("counters_free_mask").null().key("counters_free").null();
	w.key("events").begin_array();
	for (const std::uint16_t e : implemented_events(c)) {
		w.begin_object().member("number", e).key("name");
		if (const std::string_view name = event_name(e); name.empty())
			w.null();
		else
			w.value(name);
		w.end_object();
	}
	w.end_array();
	w.key("pmmir");
	if (c.has_pmmir())
		w.begin_object().member("raw", hex(c.pmmir)).member("slots", pmmir_slots(c.pmmir)).end_object();
	else
		w.null();
	w.end_object();
}

void json_spe(JsonWriter& w, const CpuInfo& c)
{
	w.key("spe");
	if (!c.has_spe()) {
		w.null();
		return;
	}
	const SpeId id = decode_pmsidr(c.pmsidr);
	w.begin_object()
		.member("version", c.spe_version)
		.member("name", spe_version_name(c.spe_version))
		.member("pmsidr", hex(c.pmsidr))
		.member("min_interval", id.min_interval())
		.member("max_record_bytes", id.max_record_bytes())
		.member("count_bits", id.count_bits())
		.member("format", id.format);
	json_strings(w, "filters", spe_filters(id));
	json_strings(w, "options", spe_options(id));
	w.end_object();
}

void json_amu(JsonWriter& w, const CpuInfo& c)
{
	w.key("amu");
	if (!c.has_amu()) {
		w.null();
		return;
	}
	const AmuConfig amu = decode_amu(c.amcfgr, c.amcgcr);
	w.begin_object()
		.member("version", c.amu_version)
		.member("name", amu_version_name(c.amu_version))
		.member("amcfgr", hex(c.amcfgr))
		.member("amcgcr", hex(c.amcgcr))
		.member("groups", amu.groups)
		.member("counters", amu.counters)
		.member("counter_bits", amu.counter_bits)
		.member("group0_counters", amu.group0_counters)
		.member("group1_counters", amu.group1_counters)
		.member("hdbg", amu.hdbg)
		.end_object();
}

void json_cpu(JsonWriter& w, const Info& info, const CpuInfo& c)
{
	w.begin_object()
		.member("cpu", c.cpu)
		.member("flags", hex(c.flags, 0))
		.member("possible", c.possible())
		.member("online", c.online())
		.member("discovered", c.discovered())
		.member("mock", c.mock());
	if (c.discovered()) {
		const Midr midr = decode_midr(c.midr);
		const auto name_or_null = [&](std::string_view key, std::string_view name) {
			w.key(key);
			if (name.empty())
				w.null();
			else
				w.value(name);
		};
		w.member("description", describe_midr(c.midr))
			.member("midr", hex(c.midr))
			.member("revidr", hex(c.revidr))
			.member("id_aa64dfr0", hex(c.id_aa64dfr0))
			.member("id_aa64pfr0", hex(c.id_aa64pfr0))
			.member("implementer", midr.implementer);
		name_or_null("implementer_name", implementer_name(midr.implementer));
		w.member("variant", midr.variant)
			.member("architecture", midr.architecture)
			.member("part", midr.part);
		name_or_null("part_name", part_name(midr.implementer, midr.part));
		w.member("revision", midr.revision).member("rev", revision_string(midr));
		json_pmu(w, info, c);
		json_spe(w, c);
		json_amu(w, c);
	}
	w.end_object();
}

} // namespace

std::string counter_mask_list(std::uint32_t mask)
{
	std::vector<unsigned> events;
	for (unsigned n = 0; n < cycle_counter_bit; ++n)
		if ((mask >> n) & 1)
			events.push_back(n);
	std::string s = format_cpu_list(events);
	if ((mask >> cycle_counter_bit) & 1)
		s += (s.empty() ? "" : ", ") + std::string{"cycle"};
	return s.empty() ? "none" : s;
}

std::string format_info_text(const Info& info, const FormatOptions& options)
{
	TextReport r;
	const std::string features = feature_string(info.features);
	r.line("amupmu driver ABI " + abi_string(info.abi_major, info.abi_minor) + " (libamupmu " +
	       std::string{version_string} + ", ABI " + abi_string(abi_major, abi_minor) + ")");
	r.row("features", features.empty() ? "(none)" : features);
	r.row("ioctls", join(ioctl_names(info.supported_ioctls), " "));
	r.row("pmu owner", std::string{to_string(info.pmu_owner)} + " (" + std::string{describe(info.pmu_owner)} + ")");
	r.row("kernel", kernel_el_name(info.kernel_el));
	if (options.gic)
		r.row("gic", to_string(*options.gic));
	r.row("sample clock", std::string{to_string(info.clock)} + " (" + std::string{describe(info.clock)} + ")");
	r.row("backend", std::string{backend_name(info)} + " (" + backend_description(info) + ")");
	r.row("cpus", count_and_list(cpus_where(info, &CpuInfo::possible), "possible") + ", " +
			      count_and_list(cpus_where(info, &CpuInfo::online), "online") + ", " +
			      count_and_list(cpus_where(info, &CpuInfo::discovered), "discovered"));
	for (const CpuInfo& c : info.cpus)
		text_cpu(r, info, c, options);
	return r.take();
}

std::string format_info_json(const Info& info, const FormatOptions& options)
{
	JsonWriter w;
	w.begin_object();
	w.key("driver").begin_object()
		.member("abi_major", info.abi_major)
		.member("abi_minor", info.abi_minor)
		.end_object();
	w.key("library").begin_object()
		.member("version", version_string)
		.member("abi_major", abi_major)
		.member("abi_minor", abi_minor)
		.end_object();
	w.member("features_mask", hex(info.features, 0));
	json_strings(w, "features", feature_names(info.features));
	w.member("supported_ioctls_mask", hex(info.supported_ioctls, 0));
	json_strings(w, "supported_ioctls", ioctl_names(info.supported_ioctls));
	w.member("pmu_owner", to_string(info.pmu_owner))
		.member("pmu_owner_description", describe(info.pmu_owner))
		.member("backend", backend_name(info))
		.member("backend_description", backend_description(info))
		.member("kernel_el", info.kernel_el)
		.member("kernel", kernel_el_name(info.kernel_el))
		.member("clock", to_string(info.clock))
		.member("clock_description", describe(info.clock));
	if (options.gic)
		w.member("gic", to_string(*options.gic));
	w.key("cpus").begin_array();
	for (const CpuInfo& c : info.cpus)
		json_cpu(w, info, c);
	w.end_array();
	w.end_object();
	return w.str() + "\n";
}

} // namespace amupmu
