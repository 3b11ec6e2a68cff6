// SPDX-License-Identifier: GPL-2.0
//
// amupmu doctor: why amupmu counts nothing, or why SPE or the AMU is
// missing, checked on the running system (doctor.hpp).
#include "cli.hpp"
#include "doctor.hpp"

#include <amupmu/device.hpp>
#include <amupmu/error.hpp>
#include <amupmu/report/doctor_format.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

namespace amupmu::cli {

using namespace amupmu::report;

namespace {

constexpr std::string_view usage = R"(Usage: amupmu doctor [--json] [--device PATH]

Check, in order, what amupmu needs on this system and say per unit and
per CPU what works, what does not, why, and the command that fixes it
where one exists:

  module      amupmu loaded; else whether an amupmu.ko is built for the
              running kernel (modprobe), or DKMS and the headers to build it
              (Secure Boot: the DKMS key enrolled)
  device      the device node opens (devtmpfs, a container's /dev, the
              udev rule, its group); the driver's ABI against this amupmu's
  privileges  CAP_PERFMON (or CAP_SYS_ADMIN) in the initial user
              namespace, which every amupmu session needs;
              kernel.perf_event_paranoid and what perf allows at it
  pmu         the PMU mode in force, arm_pmu's perf PMUs, the core types
              (big.LITTLE), each CPU's PMUv3 and counters, offline and
              not present CPUs
  amu         the Activity Monitors per CPU: not used (amu=N), left
              disabled by firmware, the mock model of a test build
  spe         SPE on the CPUs, its platform device (held by arm_spe_pmu,
              unclaimed), KPTI (which refuses SPE; maybe on for KASLR),
              CAP_PERFMON

Each check is ok, warn, fail or skip (nothing to check), with a line that
says why and, where one exists, a "fix:" line.

Options:
  --json          print one JSON object instead of text: "root",
                  "kernel", "counting", "counts" and "checks" (unit,
                  check, cpu, device for one SPE device, status, why,
                  fix)
  --device PATH   device node (default /dev/amupmu); only amupmu's
                  character device is opened
  -h, --help      show this help

Exit status: 0 when everything counting needs works (no check of module,
device, privileges or pmu failed), 1 otherwise.
)";

struct Options {
	bool json = false;
	std::string device;	///< "" is the root's dev/amupmu
};

Options parse(Args args)
{
	Options o;
	for (std::size_t i = 0; i < args.size(); ++i) {
		const std::string_view arg = args[i];
		if (arg == "--json")
			o.json = true;
		else if (const auto value = option_value(args, i, "--device"))
			o.device = *value;
		else
			throw UsageError{"unknown argument '" + std::string{arg} + "'"};
	}
	return o;
}

int run(const Options& o)
{
	DoctorInput in;
	// tests give a fake sysfs and procfs tree (doctor.hpp); not when
	// amupmu runs with file capabilities (setcap) or set-ID
	if (const char* root = ::secure_getenv(doctor_root_variable); root && *root)
		in.root = root;
	in.device_path = o.device.empty() ? (in.root / "dev/amupmu").string() : o.device;
	if (const int refused = doctor_device_refused(in.root, in.device_path, &in.device_error)) {
		in.device_errno = refused;
	} else {
		try {
			if (std::optional<Device> dev = Device::try_open(in.device_path, &in.device_errno))
				in.info = dev->info();
		} catch (const Error& e) {
			in.device_errno = e.errnum();
			in.device_error = e.what();
		}
	}
	const std::vector<DoctorCheck> checks = doctor_checks(in);
	const DoctorContext context{in.root.string(), doctor_kernel_release(in.root)};
	std::cout << (o.json ? format_doctor_json(checks, context) : format_doctor_text(checks, context));
	return doctor_counting_works(checks) ? exit_ok : exit_error;
}

} // namespace

const Command doctor_command{
	.name = "doctor",
	.summary = "check the module, device, privileges, PMU, AMU and SPE: what works, why not, the fix",
	.usage = usage,
	.run = parse_then_run<parse, run>,
};

} // namespace amupmu::cli
