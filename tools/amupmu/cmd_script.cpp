// SPDX-License-Identifier: GPL-2.0
//
// amupmu script: a recording of 'amupmu record' in perf script's text.
#include "cli.hpp"
#include "file.hpp"

#include <amupmu/report/script.hpp>

#include <iostream>
#include <sstream>

namespace amupmu::cli {

using namespace amupmu::report;

namespace {

constexpr std::string_view script_usage = R"usage(Usage: amupmu script [-i FILE]

Print the samples of a recording of 'amupmu record' in time order, as
'perf script' prints those of a recording with call chains: a line
"COMM PID/TID [CPU] SECONDS: PERIOD EVENT:", the sampled PC as
"ADDRESS SYMBOL+OFFSET (FILE)" and a blank line, for the tools that read
perf script's text (FlameGraph's stackcollapse-perf.pl, speedscope,
Firefox Profiler). The driver records no call chains: each stack is the
PC alone. Times are CLOCK_MONOTONIC_RAW seconds.

Options:
  -i FILE     recording (default amupmu.rec)
  -h, --help  show this help
)usage";

// -i FILE: the recording
std::string parse(Args args)
{
	std::string input = "amupmu.rec";
	for (std::size_t i = 0; i < args.size(); ++i) {
		if (auto v = option_value(args, i, "-i"))
			input = std::string{*v};
		else
			throw UsageError{"unknown argument '" + std::string{args[i]} + "'"};
	}
	return input;
}

int script(const std::string& input)
{
	std::istringstream in{read_file(input)};
	std::cout << format_script(read_recording(in));
	return exit_ok;
}

} // namespace

const Command script_command{
	.name = "script",
	.summary = "a recording as perf script's text (FlameGraph, speedscope)",
	.usage = script_usage,
	.run = parse_then_run<parse, script>,
};

} // namespace amupmu::cli
