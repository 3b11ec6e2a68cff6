// SPDX-License-Identifier: GPL-2.0
//
// amupmu spe report: the report of an SPE recording (libamupmu
// build_spe_report()) as text, JSON, and the latency histograms as SVG.
#include "file.hpp"
#include "spe_cmds.hpp"

#include <amupmu/error.hpp>
#include <amupmu/report/spe_recording.hpp>
#include <amupmu/report/spe_report.hpp>

#include <cerrno>
#include <sstream>
#include <iostream>

namespace amupmu::cli {

using namespace amupmu::report;

namespace {

constexpr std::string_view usage = R"(Usage: amupmu spe report [-i FILE | FILE] [--top N] [--sort count|latency]
                         [--per-cpu] [--json] [--svg SVGFILE] [--ascii]

Summarise a recording of 'amupmu spe record': every record of every CPU's
data decoded, then
  - totals: records, complete or not (how each ended), unknown packets,
    bytes skipped, and what the buffers lost (bytes, truncations,
    collisions, faults), overall and per CPU;
  - latency histograms (total, issue, translation; log2 buckets) with
    exact percentiles p50, p90, p99, p99.9, the maximum and the mean;
  - the operation-type mix (loads/stores by register class, atomics,
    exclusives, acquire/release, SVE/SME, branches by kind, other);
  - data sources: raw codes, named where the CPU's MIDR has a known
    encoding (Linux perf's table); otherwise raw codes only, said so;
  - how many records had each event (L1D refill, TLB walk, mispredict...);
  - the hottest symbols and PCs ([.] user, [k] kernel, from the PC's
    exception level; user PCs symbolised from the recorded mappings and
    the CONTEXT packet's pid, else the command's), data addresses and
    64-byte cache lines, with the mean and p90 total latency and the
    dominant data source.
The header names the backend: records of the mock SPE model (a test
build of the module) are never presented as hardware data.

Options:
  -i FILE          recording (default amupmu-spe.data); or FILE alone
  --top N          entries per "hottest" table (default 10)
  --sort KEY       order of the hottest tables: count (most records, the
                   default) or latency (highest mean total latency)
  --per-cpu        a whole report per CPU after the overall one
  --json           one JSON document instead of the text
  --svg SVGFILE    also write the latency histograms as an SVG image
  --ascii          '#' bars instead of Unicode blocks
  -h, --help       show this help
)";

SpeSort sort_arg(std::string_view v)
{
	if (v == "count")
		return SpeSort::count;
	if (v == "latency")
		return SpeSort::latency;
	throw UsageError{"--sort needs count or latency, not '" + std::string{v} + "'"};
}

struct Options {
	std::string input;
	std::string svg;	///< --svg
	bool json = false;
	SpeReportOptions opts;
};

Options parse(Args args)
{
	Options o;
	std::string& input = o.input;
	SpeReportOptions& opts = o.opts;
	for (std::size_t i = 0; i < args.size(); ++i) {
		const std::string_view a = args[i];
		if (auto v = option_value(args, i, "-i")) {
			if (!input.empty())
				throw UsageError{"more than one recording"};
			input = std::string{*v};
		} else if (auto v = option_value(args, i, "--top")) {
			opts.top = number_arg<std::size_t>("--top", *v);
		} else if (auto v = option_value(args, i, "--sort")) {
			opts.sort = sort_arg(*v);
		} else if (auto v = option_value(args, i, "--svg")) {
			o.svg = std::string{*v};
			if (o.svg.empty())
				throw UsageError{"--svg needs a file name"};
		} else if (a == "--per-cpu") {
			opts.per_cpu = true;
		} else if (a == "--json") {
			o.json = true;
		} else if (a == "--ascii") {
			opts.ascii = true;
		} else if (a.starts_with("-") && a != "-") {
			throw UsageError{"unknown argument '" + std::string{a} + "'"};
		} else if (input.empty()) {
			input = std::string{a};
		} else {
			throw UsageError{"more than one recording ('" + input + "', '" + std::string{a} + "')"};
		}
	}
	if (opts.top == 0)
		throw UsageError{"--top needs at least 1"};
	if (input.empty())
		input = "amupmu-spe.data";
	return o;
}

int run(const Options& o)
{
	std::istringstream in{read_file(o.input)};
	SpeRecording rec;
	try {
		rec = read_spe_recording(in);
	} catch (const InvalidArgument& e) {
		throw InvalidArgument{o.input + ": " + e.operation(), e.errnum()};
	}
	const SpeReport report = build_spe_report(rec, o.opts);
	if (!o.svg.empty())
		write_file(o.svg, format_spe_report_svg(report));
	std::cout << (o.json ? format_spe_report_json(report) : format_spe_report_text(report, o.opts));
	return exit_ok;
}

} // namespace

const Command spe_report_command{
	.name = "report",
	.summary = "latency histograms, operation mix, data sources and hottest code/data of a recording",
	.usage = usage,
	.run = parse_then_run<parse, run>,
};

} // namespace amupmu::cli
