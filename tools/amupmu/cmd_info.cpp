// SPDX-License-Identifier: GPL-2.0
//
// amupmu info: what the driver found, as text or JSON.
#include "cli.hpp"

#include <amupmu/device.hpp>
#include <amupmu/format.hpp>
#include <amupmu/platform.hpp>
#include <amupmu/report/info_format.hpp>

#include <iostream>

namespace amupmu::cli {

namespace {

constexpr std::string_view usage = R"(Usage: amupmu info [--json] [-v|--verbose] [--device PATH]

Show what the amupmu driver found: its ABI version and features, who owns
the PMU, the register backend, the exception level the kernel runs at
(EL2 with VHE, or EL1), the interrupt controller (GICv3 or GICv2, from
/proc/interrupts), the counter sample times read, and for each possible CPU
its identification (MIDR_EL1), PMUv3 version and counters (free ones when
amupmu owns the PMU), implemented common events, SPE and AMU.

Options:
  --json          print a JSON document instead of text
  -v, --verbose   also print raw registers and the implemented events
  --device PATH   device node (default /dev/amupmu)
  -h, --help      show this help
)";

int run(Args args)
{
	bool json = false;
	FormatOptions options;
	std::string_view path = default_device_path;

	for (std::size_t i = 0; i < args.size(); ++i) {
		const std::string_view arg = args[i];
		if (arg == "--json")
			json = true;
		else if (arg == "-v" || arg == "--verbose")
			options.verbose = true;
		else if (const auto value = option_value(args, i, "--device"))
			path = *value;
		else
			throw UsageError{"unknown argument '" + std::string{arg} + "'"};
	}

	const Info info = Device::open(path).info();
	options.gic = read_gic_version();
	std::cout << (json ? format_info_json(info, options) : format_info_text(info, options));
	return exit_ok;
}

} // namespace

const Command info_command{
	.name = "info",
	.summary = "show the driver ABI, PMU ownership, kernel EL, GIC and each CPU's PMU, SPE and AMU",
	.usage = usage,
	.run = run,
};

} // namespace amupmu::cli
