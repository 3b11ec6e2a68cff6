// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/affinity.hpp>
#include <amupmu/bits.hpp>
#include <amupmu/cpu.hpp>
#include <amupmu/decode.hpp>
#include <amupmu/errata.hpp>
#include <amupmu/events.hpp>
#include <amupmu/info.hpp>
#include <amupmu/version.hpp>
#include <amupmu/report/info_format.hpp>
#include <amupmu/report/json.hpp>

#include <amupmu/text/columns.hpp>

#include <algorithm>
#include <cstdio>

namespace amupmu::report {

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

std::string amu_off_text()
{
	return "not used (AMU_OFF: module parameter amu=0, or a kernel without CONFIG_ARM64_AMU_EXTN); "
	       "no AMU register is read";
}

std::string mask_list(std::uint32_t mask, unsigned n)
{
	std::vector<unsigned> bits;
	for (unsigned i = 0; i < n && i < 32; ++i)
		if ((mask >> i) & 1)
			bits.push_back(i);
	return hex(mask, 0) + " (" + (bits.empty() ? std::string{"none"} : format_cpu_list(bits)) + ")";
}

// "0 CPU_CYCLES, 1 CNT_CYCLES (not enabled), ..."
std::string amu_types(std::span<const std::uint16_t> types, unsigned n, std::uint32_t enabled)
{
	std::string s;
	for (unsigned i = 0; i < n && i < types.size(); ++i) {
		const std::string_view name = amu_event_name(types[i]);
		s += (s.empty() ? "" : ", ") + std::to_string(i) + " " +
		     (name.empty() ? hex(types[i], 4) : std::string{name} + " (" + hex(types[i], 4) + ")");
		if (!((enabled >> i) & 1))
			s += " not enabled";
	}
	return s.empty() ? "none" : s;
}

std::string frame_text(const IdFrame& f, std::string_view prefix)
{
	const FrameId id = decode_id_frame(f);
	const std::string p{prefix};
	std::string s = p + "IIDR " + hex(f.iidr, 8) + ": " + describe_jep106(jep106_from_iidr(id.iidr.implementer)) +
			" part " + hex(id.iidr.product_id, 3) + " r" + std::to_string(id.iidr.variant) + "p" +
			std::to_string(id.iidr.revision);
	return s;
}

std::string devarch_text(const IdFrame& f)
{
	const Devarch d = decode_devarch(f.devarch);
	if (!d.present)
		return hex(f.devarch, 8) + " (PRESENT clear: not implemented)";
	const std::string_view arch = archid_name(d.archid);
	return hex(f.devarch, 8) + ": architect " + describe_jep106(jep106_from_architect(d.architect)) +
	       ", ARCHID " + hex(d.archid, 4) + (arch.empty() ? "" : " " + std::string{arch}) + " (ARCHVER " +
	       std::to_string(d.archver) + ", ARCHPART " + hex(d.archpart, 3) + "), REVISION " +
	       std::to_string(d.revision);
}

std::string pidr_text(const IdFrame& f)
{
	const Pidr p = decode_pidr(f.pidr);
	const Cidr c = decode_cidr(f.cidr);
	return "part " + hex(p.part, 3) + ", designer " + describe_jep106(p.designer()) + (p.jedec ? "" : " [JEDEC 0]") +
	       ", REVISION " + std::to_string(p.revision) + ", REVAND " + std::to_string(p.revand) + ", CMOD " +
	       std::to_string(p.cmod) + ", SIZE " + std::to_string(p.size) + "; " +
	       describe_component_class(c.component_class) + (c.preamble_ok ? "" : " [bad CIDR preamble]") +
	       "; DEVTYPE " + describe_devtype(decode_devtype(f.devtype)) + ", DEVID " + hex(f.devid, 8);
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
		const std::string head = std::string(indent, ' ') + std::string{label} + ": ";
		line(text::pad_right(head, value_column) + std::string{value});
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
		r.row("events", opt.from_netlink ? std::string{"unknown (not in the netlink dump)"} : events_summary(c, events),
		      in);
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

	if (c.has_amu() && c.amu_off()) {
		r.row("amu", std::string{amu_version_name(c.amu_version)} + ", " + amu_off_text(), in);
	} else if (c.has_amu()) {
		const AmuConfig amu = decode_amu(c.amcfgr, c.amcgcr);
		const Amcr amcr = decode_amcr(c.amcr);
		r.row("amu", amu_summary(c), in);
		r.row("amu control", std::string{"AMCR_EL0 "} + hex(c.amcr, 0) + ": HDBG " + (amcr.hdbg ? "1" : "0") +
					     ", CG1RZ " + (amcr.cg1rz ? "1 (group 1 reads zero below the highest EL)" : "0"),
		      in);
		r.row("amu group 0", amu_types(c.amevtyper0, amu.group0_counters, c.amcntenset0), in);
		r.row("amu enabled", "group 0 " + mask_list(c.amcntenset0, amu.group0_counters) + ", group 1 " +
					     mask_list(c.amcntenset1, amu.group1_counters),
		      in);
		if (amu.group1_counters)
			r.row("amu group 1", amu_types(c.amevtyper1, amu.group1_counters, c.amcntenset1), in);
		if (c.amu_zero())
			r.row("amu zero", "AMU_ZERO: CPU_CYCLES and CNT_CYCLES read zero at discovery (firmware left "
					  "them disabled or reset)",
			      in);
		for (const ErratumMatch& m : errata_for(c.midr, ErratumUnit::amu))
			r.row("amu erratum", std::string{m.erratum->id} + " (" + std::string{to_string(m.applicability)} +
						     "): " + std::string{m.erratum->summary},
			      in);
		if (opt.verbose) {
			r.row("amcfgr_el0", hex(c.amcfgr), in);
			r.row("amcgcr_el0", hex(c.amcgcr), in);
		}
	} else {
		r.row("amu", "not implemented", in);
	}
	const auto frame = [&](bool have, const IdFrame& f, std::string_view unit, std::string_view prefix) {
		const std::string u{unit};
		if (!have) {
			if (opt.verbose)
				r.row(u + " frame", "none (no amupmu,cpu-frames node)", in);
			return;
		}
		const std::vector<IdCheck> checks = cross_check_frame(f, c.midr, prefix);
		r.row(u + " frame", frame_text(f, prefix), in);
		r.more(std::string{prefix} + "DEVARCH " + devarch_text(f));
		r.more(std::string{prefix} + "PIDR " + pidr_text(f));
		r.row(u + " ids", cross_check_summary(checks), in);
		for (const IdCheck& k : checks)
			if (opt.verbose || k.result == CheckResult::mismatch)
				r.more(std::string{to_string(k.result)} + ": " + k.what + ": " + k.expected + " vs " +
				       k.actual);
	};
	frame(c.has_amu_frame(), c.amu_frame, "amu", "AM");
	frame(c.has_pmu_frame(), c.pmu_frame, "pmu", "PM");
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
	const Amcr amcr = decode_amcr(c.amcr);
	w.begin_object()
		.member("version", c.amu_version)
		.member("name", amu_version_name(c.amu_version))
		.member("off", c.amu_off())
		.member("zero", c.amu_zero())
		.member("amcfgr", hex(c.amcfgr))
		.member("amcgcr", hex(c.amcgcr))
		.member("amcr", hex(c.amcr))
		.member("groups", amu.groups)
		.member("counters", amu.counters)
		.member("counter_bits", amu.counter_bits)
		.member("group0_counters", amu.group0_counters)
		.member("group1_counters", amu.group1_counters)
		.member("hdbg", amu.hdbg)
		.member("amcr_hdbg", amcr.hdbg)
		.member("amcr_cg1rz", amcr.cg1rz)
		.member("enabled0", hex(c.amcntenset0, 0))
		.member("enabled1", hex(c.amcntenset1, 0));
	const auto group = [&](std::string_view key, std::span<const std::uint16_t> types, unsigned n,
			       std::uint32_t enabled) {
		w.key(key).begin_array();
		for (unsigned i = 0; i < n && i < types.size(); ++i) {
			w.begin_object().member("counter", i).member("event", hex(types[i], 4)).key("name");
			if (const std::string_view name = amu_event_name(types[i]); name.empty())
				w.null();
			else
				w.value(name);
			w.member("enabled", ((enabled >> i) & 1) != 0).end_object();
		}
		w.end_array();
	};
	group("group0", c.amevtyper0, c.amu_off() ? 0 : amu.group0_counters, c.amcntenset0);
	group("group1", c.amevtyper1, c.amu_off() ? 0 : amu.group1_counters, c.amcntenset1);
	w.key("errata").begin_array();
	for (const ErratumMatch& m : errata_for(c.midr, ErratumUnit::amu))
		w.begin_object()
			.member("id", m.erratum->id)
			.member("applicability", to_string(m.applicability))
			.member("summary", m.erratum->summary)
			.end_object();
	w.end_array();
	w.end_object();
}

void json_frame(JsonWriter& w, std::string_view key, bool have, const IdFrame& f, std::uint64_t midr,
		std::string_view prefix)
{
	w.key(key);
	if (!have) {
		w.null();
		return;
	}
	const FrameId id = decode_id_frame(f);
	w.begin_object()
		.member("iidr", hex(f.iidr, 8))
		.member("devarch", hex(f.devarch, 8))
		.member("devid", hex(f.devid, 8))
		.member("devtype", hex(f.devtype, 8));
	w.key("pidr").begin_array();
	for (const std::uint32_t v : f.pidr)
		w.value(hex(v, 8));
	w.end_array();
	w.key("cidr").begin_array();
	for (const std::uint32_t v : f.cidr)
		w.value(hex(v, 8));
	w.end_array();
	w.key("decoded").begin_object()
		.member("implementer", hex(id.iidr.implementer, 3))
		.member("implementer_name", describe_jep106(jep106_from_iidr(id.iidr.implementer)))
		.member("product_id", hex(id.iidr.product_id, 3))
		.member("variant", id.iidr.variant)
		.member("revision", id.iidr.revision)
		.member("architect", describe_jep106(jep106_from_architect(id.devarch.architect)))
		.member("devarch_present", id.devarch.present)
		.member("archid", hex(id.devarch.archid, 4))
		.member("archid_name", archid_name(id.devarch.archid))
		.member("arch_revision", id.devarch.revision)
		.member("part", hex(id.pidr.part, 3))
		.member("designer", describe_jep106(id.pidr.designer()))
		.member("pidr_revision", id.pidr.revision)
		.member("revand", id.pidr.revand)
		.member("cmod", id.pidr.cmod)
		.member("size", id.pidr.size)
		.member("jedec", id.pidr.jedec)
		.member("component_class", describe_component_class(id.cidr.component_class))
		.member("cidr_preamble_ok", id.cidr.preamble_ok)
		.member("devtype_text", describe_devtype(id.devtype))
		.end_object();
	const std::vector<IdCheck> checks = cross_check_frame(f, midr, prefix);
	w.member("cross_check", cross_check_summary(checks));
	w.key("checks").begin_array();
	for (const IdCheck& k : checks)
		w.begin_object()
			.member("what", k.what)
			.member("expected", k.expected)
			.member("actual", k.actual)
			.member("result", to_string(k.result))
			.end_object();
	w.end_array();
	w.end_object();
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
		json_frame(w, "amu_frame", c.has_amu_frame(), c.amu_frame, c.midr, "AM");
		json_frame(w, "pmu_frame", c.has_pmu_frame(), c.pmu_frame, c.midr, "PM");
	}
	w.end_object();
}

} // namespace

std::string format_info_text(const Info& info, const FormatOptions& options)
{
	TextReport r;
	const std::string features = feature_string(info.features);
	const bool nl = options.from_netlink;
	const std::string unknown = "unknown (not in the netlink dump)";
	r.line("amupmu driver ABI " + (nl ? std::string{"unknown"} : abi_string(info.abi_major, info.abi_minor)) +
	       " (libamupmu " + std::string{version_string} + ", ABI " + abi_string(abi_major, abi_minor) + ")");
	r.row("features", features.empty() ? "(none)" : features);
	r.row("ioctls", nl ? unknown : join(ioctl_names(info.supported_ioctls), " "));
	r.row("pmu owner", std::string{to_string(info.pmu_owner)} + " (" + std::string{describe(info.pmu_owner)} + ")");
	r.row("pmu mode", pmu_mode_text(info));
	r.row("spe owner", std::string{to_string(info.spe_owner)} + " (" + std::string{describe(info.spe_owner)} + ")");
	r.row("kernel", nl ? unknown : kernel_el_name(info.kernel_el));
	if (options.gic)
		r.row("gic", to_string(*options.gic));
	r.row("sample clock",
	      nl ? unknown : std::string{to_string(info.clock)} + " (" + std::string{describe(info.clock)} + ")");
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
	w.member("source", options.from_netlink ? "netlink" : "device");
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
		.member("pmu_mode", to_string(info.pmu_mode()))
		.member("pmu_mode_reason", pmu_mode_reason(info))
		.member("spe_owner", to_string(info.spe_owner))
		.member("spe_owner_description", describe(info.spe_owner))
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

} // namespace amupmu::report
