// SPDX-License-Identifier: GPL-2.0
//
// amupmu spe knobs: show and set the SPE filter defaults in debugfs
// (/sys/kernel/debug/arm_spe/) by name (libamupmu spe_knobs.hpp).
#include "spe_cmds.hpp"

#include <amupmu/spe_knobs.hpp>

#include <iostream>
#include <string>
#include <vector>

namespace amupmu::cli {

namespace {

constexpr std::string_view usage = R"(Usage: amupmu spe knobs [--debugfs DIR] [NAME[=VALUE]...]

Show or set the SPE filter defaults: the files of /sys/kernel/debug/arm_spe/
that an SPE session takes with 'amupmu spe record --defaults'. Without a
NAME, prints every knob as "NAME VALUE", one per line; NAME prints that
knob; NAME=VALUE writes VALUE (decimal, 0x hex or 0 octal) to it and prints
the knob as it reads then. The driver checks every write as it checks a
session's configuration (see the admin guide, "SPE filter defaults").

Several assignments are written in the order given (the driver checks
each against the others as they are then: set pmslatfr_minlat before
pmsfcr_fl). Every NAME and VALUE is checked before anything is written;
when the driver refuses a write, the knobs written before it get their
earlier values back and the error names the knob, the value and the
errno's meaning. Assignments are written before any knob is printed.

Knobs:
  pmsfcr_fe         PMSFCR_EL1.FE: filter by event (0, 1)
  pmsfcr_ft         PMSFCR_EL1.FT: filter by type (0, 1)
  pmsfcr_fl         PMSFCR_EL1.FL: filter by latency (0, 1)
  pmsfcr_fne        PMSFCR_EL1.FnE: filter by absent events (0, 1)
  pmsfcr_type       PMSFCR_EL1.TYPE: B 0x1, LD 0x2, ST 0x4, FP 0x8, SIMD 0x10
  pmsfcr_type_mask  PMSFCR_EL1.TYPEm (the same bits)
  pmsevfr           PMSEVFR_EL1: events that must all be present (FE)
  pmsnevfr          PMSNEVFR_EL1: events that must all be absent (FnE)
  pmslatfr_minlat   PMSLATFR_EL1.MINLAT: cycles (FL)
  pmsirr_interval   PMSIRR_EL1.INTERVAL: operations between samples
  pmsirr_rnd        PMSIRR_EL1.RND: random jitter (0, 1)
The directory's config and cpuN/ files are read-only register dumps, not
knobs (cat them).

Options:
  --debugfs DIR  the knobs' directory (default /sys/kernel/debug/arm_spe)
  -h, --help     show this help

Needs root. Exit status: 0 done, 1 error (nothing written then, or the
earlier values restored), 2 no such directory (debugfs not mounted, the
amupmu module not loaded, or no CPU with SPE).
)";

struct Options {
	std::string dir{spe_knobs_dir};		///< --debugfs
	std::vector<std::string> reads;		///< NAME
	std::vector<SpeKnobAssignment> writes;	///< NAME=VALUE
};

Options parse(Args args)
{
	Options o;
	for (std::size_t i = 0; i < args.size(); ++i) {
		const std::string_view a = args[i];
		if (auto v = option_value(args, i, "--debugfs")) {
			o.dir = std::string{*v};
			continue;
		}
		if (a.starts_with("-"))
			throw UsageError{"unknown argument '" + std::string{a} + "'"};
		const std::size_t eq = a.find('=');
		const std::string name{a.substr(0, eq)};
		if (!find_spe_knob(name))
			throw UsageError{"unknown knob '" + name + "' (see 'amupmu spe knobs --help')"};
		if (eq == std::string_view::npos)
			o.reads.push_back(name);
		else
			o.writes.push_back({name, std::string{a.substr(eq + 1)}});
	}
	return o;
}

int run(const Options& o)
{
	const std::string& dir = o.dir;
	const std::vector<std::string>& reads = o.reads;
	const std::vector<SpeKnobAssignment>& writes = o.writes;
	try {
		write_spe_knobs(dir, writes);
		std::string out;
		if (reads.empty() && writes.empty()) {
			for (const SpeKnobValue& k : read_spe_knobs(dir))
				out += k.name + " " + k.value + "\n";
		}
		for (const SpeKnobAssignment& w : writes)
			out += w.name + " " + read_spe_knob(dir, w.name) + "\n";
		for (const std::string& r : reads)
			out += r + " " + read_spe_knob(dir, r) + "\n";
		std::cout << out;
	} catch (const DeviceMissing& e) {
		throw Failure{e, {}, exit_no_device, "amupmu spe knobs"};	// the message says what is missing
	} catch (const PermissionDenied& e) {
		throw Failure{e, "run as root", exit_error, "amupmu spe knobs"};
	} catch (const InvalidArgument& e) {
		throw UsageError{e.what()};
	}
	return exit_ok;
}

} // namespace

const Command spe_knobs_command{
	.name = "knobs",
	.summary = "show or set the SPE filter defaults (debugfs arm_spe knobs)",
	.usage = usage,
	.run = parse_then_run<parse, run>,
};

} // namespace amupmu::cli
