// SPDX-License-Identifier: GPL-2.0
//
// amupmu list: the events of the CPUs present, as perf list.
#include "cli.hpp"
#include "doctor.hpp"

#include <amupmu/device.hpp>
#include <amupmu/error.hpp>
#include <amupmu/report/list.hpp>

#include <cerrno>
#include <charconv>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace amupmu::cli {

using namespace amupmu::report;

namespace {

constexpr std::string_view usage = R"(Usage: amupmu list [--json] [--midr LIST] [--root DIR] [--device PATH] [PATTERN]

List the events the CPUs of this system can count, as perf list does,
grouped: the architected common events (the Arm ARM's names, alike on
every core), each core type's own events (its IMPLEMENTATION DEFINED
ones, by the names of libpfm4's table for its MIDR_EL1), the AMU's, SPE's
record events, and the metrics (amupmu stat -M; the top-down levels of
amupmu stat --topdown, with their formulas and where they come from).
Each event shows its encoding (event=0x.., as amupmu stat -e takes it
raw: r<hex>) and description; on a heterogeneous system (big.LITTLE) each
core type's events name their CPUs. Events a CPU does not implement, by
its PMCEID0/1 registers, and metrics whose events a CPU lacks, say so.

Where libpfm4 has no table for a core (libpfm4 4.13 has the Cortex-A53,
A57, Neoverse N1, N2, V1, V2, A64FX, ThunderX2, X-Gene and Kunpeng
tables; not the Cortex-A72, A76, A55, ...), or the libpfm4 linked in has
no arm64 tables (an x86-64 build), a header line says so: that core counts
by the architected names and raw codes only.

The CPUs, their MIDR and PMCEID come from the driver (AMUPMU_INFO of
the device, else /sys/class/misc/amupmu); without amupmu from the
kernel's /sys/devices/system/cpu/cpuN/regs/identification/midr_el1 (then
which events each CPU implements is not known).

Options:
  PATTERN        list only the names that match: a glob with * ? [...]
                 (any case), else a part of the name (cache, stall_slot)
  --json         one JSON object: the core types ("cpus"), the events
                 (name, group, encoding, event, description, cpus,
                 not_implemented, missing) and the notes
  --midr LIST    list the events of these cores instead of this system's:
                 comma-separated MIDR_EL1 values (0x410fd0c0: Neoverse N1),
                 one CPU each, numbered from 0; no device is opened
  --root DIR     read the sysfs files under DIR instead of / (a copy of
                 another machine's /sys, a test's tree); the device is not
                 opened
  --device PATH  device node (default /dev/amupmu)
  -h, --help     show this help
)";

struct Options {
	bool json = false;
	std::vector<std::uint64_t> midrs;	///< --midr
	std::optional<std::string> root;	///< --root
	std::string device{default_device_path};
	std::string pattern;
};

std::vector<std::uint64_t> parse_midrs(std::string_view list)
{
	std::vector<std::uint64_t> out;
	for (std::size_t pos = 0; pos <= list.size();) {
		const std::size_t comma = std::min(list.find(',', pos), list.size());
		std::string_view v = list.substr(pos, comma - pos);
		const bool hex = v.starts_with("0x") || v.starts_with("0X");
		if (hex)
			v.remove_prefix(2);
		std::uint64_t midr = 0;
		const auto r = std::from_chars(v.data(), v.data() + v.size(), midr, hex ? 16 : 10);
		if (v.empty() || r.ec != std::errc{} || r.ptr != v.data() + v.size() || midr > 0xFFFFFFFF)
			throw UsageError{"--midr: '" + std::string{list.substr(pos, comma - pos)} +
					 "' is not a MIDR_EL1 value (0x410fd0c0)"};
		out.push_back(midr);
		pos = comma + 1;
	}
	return out;
}

Options parse(Args args)
{
	Options o;
	for (std::size_t i = 0; i < args.size(); ++i) {
		const std::string_view arg = args[i];
		if (arg == "--json")
			o.json = true;
		else if (const auto v = option_value(args, i, "--midr"))
			o.midrs = parse_midrs(*v);
		else if (const auto v = option_value(args, i, "--root"))
			o.root = std::string{*v};
		else if (const auto v = option_value(args, i, "--device"))
			o.device = std::string{*v};
		else if (arg.starts_with("-") && arg.size() > 1)
			throw UsageError{"unknown argument '" + std::string{arg} + "'"};
		else if (!o.pattern.empty())
			throw UsageError{"one PATTERN at a time ('" + std::string{arg} + "')"};
		else
			o.pattern = std::string{arg};
	}
	if (!o.midrs.empty() && o.root)
		throw UsageError{"--midr and --root exclude each other"};
	return o;
}

// CPUs numbered from 0, each discovered with only its MIDR
Info info_of_midrs(const std::map<unsigned, std::uint64_t>& midrs)
{
	Info info;
	for (const auto& [cpu, midr] : midrs) {
		if (cpu >= info.cpus.size())
			info.cpus.resize(cpu + 1);
		CpuInfo& c = info.cpus[cpu];
		c.cpu = cpu;
		c.midr = midr;
		c.flags = static_cast<std::uint32_t>(CpuFlag::possible) | static_cast<std::uint32_t>(CpuFlag::online) |
			  static_cast<std::uint32_t>(CpuFlag::discovered);
	}
	return info;
}

int run(const Options& o)
{
	Info info;
	bool pmceid = false;
	std::string source;
	if (!o.midrs.empty()) {
		std::map<unsigned, std::uint64_t> m;
		for (std::size_t i = 0; i < o.midrs.size(); ++i)
			m[static_cast<unsigned>(i)] = o.midrs[i];
		info = info_of_midrs(m);
		source = "--midr";
	} else {
		std::optional<Info> found;
		if (!o.root) {
			try {
				if (auto dev = Device::try_open(o.device)) {
					found = dev->info();
					source = "AMUPMU_INFO of " + o.device;
				}
			} catch (const Error& e) {
				if (e.errnum() != EACCES && e.errnum() != EPERM)
					throw;	// not amupmu's device: say so
			}
		}
		const std::filesystem::path root = o.root.value_or("/");
		if (!found) {
			found = info_from_sysfs(root);
			if (found)
				source = (root / "sys/class/misc/amupmu").string();
		}
		if (found) {
			info = std::move(*found);
			pmceid = true;
		} else {
			const std::map<unsigned, std::uint64_t> midrs = kernel_midrs(root);
			if (midrs.empty())
				throw Failure{Error{"amupmu list: no CPU identification (no amupmu device or sysfs, no " +
							    (root / "sys/devices/system/cpu/cpuN/regs/identification/midr_el1")
								    .string() +
							    ")",
						    ENOENT},
					      "name the cores with --midr (amupmu list --midr 0x410fd0c0)"};
			info = info_of_midrs(midrs);
			source = (root / "sys/devices/system/cpu").string() + " (amupmu not loaded)";
		}
	}
	const EventListing listing = build_event_listing(info, pmceid, source, o.pattern);
	std::cout << (o.json ? format_list_json(listing) : format_list_text(listing));
	if (!o.pattern.empty() && listing.entries.empty()) {
		std::cerr << "amupmu list: nothing matches '" << o.pattern << "'\n";
		return exit_error;
	}
	return exit_ok;
}

} // namespace

const Command list_command{
	.name = "list",
	.summary = "list the events of the CPUs present by group, as perf list (libpfm4 names per core)",
	.usage = usage,
	.run = parse_then_run<parse, run>,
};

} // namespace amupmu::cli
