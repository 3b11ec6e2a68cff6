// SPDX-License-Identifier: GPL-2.0
//
// amupmu spe claim|release: hand the stock SPE device to amupmu ("amupmu-spe")
// and back, through sysfs (libamupmu spe_claim()/spe_release()).
#include "cli.hpp"
#include "spe_cmds.hpp"

#include <amupmu/error.hpp>
#include <amupmu/spe_device.hpp>

#include <iostream>

namespace amupmu::cli {

namespace {

constexpr std::string_view usage = R"(Usage: amupmu spe claim [DEVICE] [--sysfs DIR]
       amupmu spe release [DEVICE] [--sysfs DIR]
       amupmu spe record [OPTIONS] [-o FILE] -- COMMAND [ARGS...]
       amupmu spe report [OPTIONS] [FILE]
       amupmu spe dump [-i FILE | FILE]
       amupmu spe knobs [--debugfs DIR] [NAME[=VALUE]...]

record, report, dump and knobs: see "amupmu spe <subcommand> --help".

Hand the SPE device to amupmu, or give it back. The SPE device is the
platform device of the devicetree node compatible with
"arm,statistical-profiling-extension-v1" (or ACPI's arm,spe-v1 device),
whose per-CPU interrupt is the profiling buffer's. Its driver in the
kernel is arm_spe_pmu; amupmu's is amupmu-spe, which binds only to a
device whose driver_override names it.

  claim    write "amupmu-spe" to the device's driver_override and its name
           to /sys/bus/platform/drivers/amupmu-spe/bind. Refused while
           arm_spe_pmu holds the device (rmmod arm_spe_pmu first: amupmu
           never unloads it). The bind fails with ENODEV when no CPU its
           interrupt serves has SPE, ENXIO when the interrupt is not a PPI,
           EBUSY when amupmu holds another SPE device; driver_override is
           reset then. Claiming a device amupmu holds changes nothing.
  release  write the name to .../amupmu-spe/unbind and clear
           driver_override. Releasing a device amupmu does not hold
           changes nothing (bar a stale driver_override of amupmu-spe).

DEVICE is the device's name in /sys/bus/platform/devices (e.g. "spe");
needed only when there are several SPE devices. Both need root.

Options:
  --sysfs DIR   sysfs root (default /sys)
  -h, --help    show this help

Exit status: 0 done (or nothing to do), 1 error, 2 the amupmu module is not
loaded (no amupmu-spe driver).
)";

const Command* const subcommands[] = {&spe_record_command, &spe_report_command, &spe_dump_command,
				      &spe_knobs_command};

// claim or release (the subcommands are run_command()'s)
struct Options {
	std::string_view action;
	std::string_view device;
	std::string_view sysfs = "/sys";
};

Options parse(Args args)
{
	Options o;
	for (std::size_t i = 0; i < args.size(); ++i) {
		const std::string_view arg = args[i];
		if (const auto value = option_value(args, i, "--sysfs"))
			o.sysfs = *value;
		else if (arg.starts_with("-"))
			throw UsageError{"unknown argument '" + std::string{arg} + "'"};
		else if (o.action.empty())
			o.action = arg;
		else if (o.device.empty())
			o.device = arg;
		else
			throw UsageError{"unexpected argument '" + std::string{arg} + "'"};
	}
	if (o.action != "claim" && o.action != "release")
		throw UsageError{o.action.empty() ? std::string{"record, report, dump, knobs, claim or release?"}
						  : "unknown action '" + std::string{o.action} +
							    "' (record, report, dump, knobs, claim or release)"};
	return o;
}

int run(const Options& o)
{
	const std::string_view action = o.action, device = o.device, sysfs = o.sysfs;
	try {
		if (action == "claim") {
			const SpeClaimResult r = spe_claim(device, sysfs);
			if (r.outcome == SpeClaim::already_claimed)
				std::cout << "amupmu spe: " << r.device.name << " is amupmu's already\n";
			else
				std::cout << "amupmu spe: claimed " << r.device.name
					  << ": its buffer interrupt and SPE are amupmu's\n";
		} else {
			const SpeReleaseResult r = spe_release(device, sysfs);
			if (r.outcome == SpeRelease::not_claimed)
				std::cout << "amupmu spe: " << r.device.name << " is not claimed by amupmu (driver: "
					  << (r.device.driver.empty() ? "none" : r.device.driver)
					  << "): nothing to release\n";
			else
				std::cout << "amupmu spe: released " << r.device.name << "\n";
		}
	} catch (const PermissionDenied& e) {
		throw Failure{e, action == "claim" ? "claiming needs root" : "releasing needs root"};
	}
	return exit_ok;
}

} // namespace

const Command spe_command{
	.name = "spe",
	.summary = "SPE profiling: record, report, dump, knobs; claim or release the SPE device",
	.usage = usage,
	.run = parse_then_run<parse, run>,
	.subcommands = subcommands,
};

} // namespace amupmu::cli
