// SPDX-License-Identifier: GPL-2.0
//
// amupmu info: what the driver found, as text or JSON.
#include "cli.hpp"

#include <amupmu/device.hpp>
#include <amupmu/error.hpp>
#include <amupmu/monitor.hpp>
#include <amupmu/platform.hpp>
#include <amupmu/report/info_format.hpp>

#include <cerrno>
#include <iostream>
#include <optional>
#include <string>

namespace amupmu::cli {

using namespace amupmu::report;

namespace {

constexpr std::string_view usage = R"(Usage: amupmu info [--json] [-v|--verbose] [--device PATH]

Show what the amupmu driver found: its ABI version and features, who owns
the PMU and the PMU mode in force and why (exclusive: the devicetree node
amupmu,pmuv3 gave amupmu the PMU; shared: arm_pmu owns it and amupmu
counts through perf core, module parameter pmu_shared=Y; refused: the
kernel owns it and pmu_shared=N or no arm_pmu is registered with perf core;
none), the register backend, the exception level the kernel runs at
(EL2 with VHE, or EL1), the interrupt controller (GICv3 or GICv2, from
/proc/interrupts), the counter sample times read, and for each possible CPU
its identification (MIDR_EL1), PMUv3 version and counters (free ones when
amupmu owns the PMU), implemented common events, SPE and AMU.

When the device node cannot be opened (missing: ENOENT, or not readable:
EACCES), the features, owners and per-CPU summary come from the driver's
generic netlink family instead (its status and CPU dumps), and the output
says so; the ABI version, the ioctls, the kernel's exception level, the
sample clock and the raw registers are then unknown.

Options:
  --json          print a JSON document instead of text
  -v, --verbose   also print raw registers and the implemented events
  --device PATH   device node (default /dev/amupmu)
  -h, --help      show this help
)";

// Info from the netlink dumps; nullopt when the family cannot be reached
// (the module is not loaded, or netlink is not there: qemu-user).
std::optional<Info> info_from_netlink()
{
	try {
		Monitor m;
		const MonitorStatus status = m.status();
		return info_from_monitor(status, m.cpus());
	} catch (const Error&) {
		return std::nullopt;
	}
}

struct Options {
	bool json = false;
	FormatOptions format;
	std::string_view path = default_device_path;
};

Options parse(Args args)
{
	Options o;
	for (std::size_t i = 0; i < args.size(); ++i) {
		const std::string_view arg = args[i];
		if (arg == "--json")
			o.json = true;
		else if (arg == "-v" || arg == "--verbose")
			o.format.verbose = true;
		else if (const auto value = option_value(args, i, "--device"))
			o.path = *value;
		else
			throw UsageError{"unknown argument '" + std::string{arg} + "'"};
	}
	return o;
}

int run(const Options& o)
{
	FormatOptions options = o.format;
	std::string note;
	const Info info = [&] {
		try {
			return Device::open(o.path).info();
		} catch (const Error& e) {
			if (e.errnum() != ENOENT && e.errnum() != EACCES && e.errnum() != EPERM)
				throw;
			// the netlink family, when the module is there; otherwise
			// the device's own error, as without the fallback
			std::optional<Info> nl = info_from_netlink();
			if (!nl)
				throw;
			options.from_netlink = true;
			note = std::string{"# "} + e.what() +
			       ": from the netlink family \"amupmu\" instead (status and CPU dumps; ABI version, "
			       "ioctls, kernel EL, clock and raw registers unknown)\n";
			return *nl;
		}
	}();
	options.gic = read_gic_version();
	if (o.json) {
		std::cerr << note;	// the document stays the same JSON
		std::cout << format_info_json(info, options);
	} else {
		std::cout << note << format_info_text(info, options);
	}
	return exit_ok;
}

} // namespace

const Command info_command{
	.name = "info",
	.summary = "show the driver ABI, PMU ownership, kernel EL, GIC and each CPU's PMU, SPE and AMU",
	.usage = usage,
	.run = parse_then_run<parse, run>,
};

} // namespace amupmu::cli
