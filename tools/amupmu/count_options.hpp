// SPDX-License-Identifier: GPL-2.0
//
// What `amupmu stat` and `amupmu amu` share: the options of a count over
// a command or every interval (CPUs, interval, format, output file, device,
// the command) and where the report goes (the -o file or stderr).
#ifndef AMUPMU_TOOL_COUNT_OPTIONS_HPP
#define AMUPMU_TOOL_COUNT_OPTIONS_HPP

#include "child.hpp"
#include "cli.hpp"
#include "file.hpp"

#include <amupmu/device.hpp>
#include <amupmu/error.hpp>

#include <cerrno>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace amupmu::cli {

struct CountOptions {
	std::string cpus;			///< -C, --cpu
	int interval_ms = 0;			///< -I (0: none)
	bool json = false;			///< --json
	std::optional<std::string> sep;		///< -x
	std::optional<std::string> output;	///< -o
	std::string device{default_device_path};
	std::vector<std::string> command;	///< empty: until Ctrl-C
};

/// In an option loop: takes args[i] (and its value, advancing i) when it
/// is one of CountOptions'; false when it is not.
inline bool count_option(Args args, std::size_t& i, CountOptions& o)
{
	if (auto v = option_value(args, i, "-C")) {
		o.cpus = std::string{*v};
	} else if (auto v = option_value(args, i, "--cpu")) {
		o.cpus = std::string{*v};
	} else if (auto v = option_value(args, i, "-I")) {
		o.interval_ms = number_arg<int>("-I", *v);
		if (o.interval_ms < 10)
			throw UsageError{"-I needs at least 10 ms"};
	} else if (args[i] == "--json") {
		o.json = true;
	} else if (auto v = option_value(args, i, "-x")) {
		o.sep = std::string{*v};
	} else if (auto v = option_value(args, i, "-o")) {
		o.output = std::string{*v};
	} else if (auto v = option_value(args, i, "--device")) {
		o.device = std::string{*v};
	} else {
		return false;
	}
	return true;
}

/// After the option loop, ended at args[i] (ended: by end_of_options()):
/// the format checked and the command taken.
inline void end_count_options(Args args, std::size_t i, bool ended, CountOptions& o)
{
	if (o.json && o.sep)
		throw UsageError{"--json and -x exclude each other"};
	if (o.sep && o.sep->empty())
		throw UsageError{"-x needs a separator"};
	if (ended && i < args.size())
		o.command = command_of(args, i);
}

/// Where the reports go: the -o file, else stderr.
class ReportOutput {
public:
	explicit ReportOutput(const std::optional<std::string>& path)
	{
		if (path)
			file_.emplace(*path);
	}
	[[nodiscard]] std::ostream& stream() { return file_ ? static_cast<std::ostream&>(*file_) : std::cerr; }
	/// The file closed, Error "write PATH" with the errno of a failed
	/// write(2); or stderr checked ("write to stderr", EIO: the stream
	/// keeps no errno).
	void close()
	{
		if (file_)
			file_->close();
		else if (!std::cerr)
			throw Error{"write to stderr", EIO};
	}

private:
	std::optional<OutputFile> file_;
};

} // namespace amupmu::cli

#endif
