// SPDX-License-Identifier: GPL-2.0
//
// The amupmu command's subcommand interface. A subcommand is one Command
// object (in its own cmd_*.cpp) listed in main.cpp's table, or in the
// subcommands of another ("amupmu spe record"). Every one has the same
// shape: its options parsed from the arguments, then run with them, its
// results turned into text by the report component (amupmu::report's
// format_*()).
#ifndef AMUPMU_TOOL_CLI_HPP
#define AMUPMU_TOOL_CLI_HPP

#include <charconv>
#include <exception>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace amupmu::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_error = 1;	///< any error, usage errors included
inline constexpr int exit_no_device = 2;	///< the device node is missing

/// The arguments after the subcommand name.
using Args = std::span<const std::string_view>;

struct Command {
	std::string_view name;
	std::string_view summary;	///< one line for "amupmu --help"
	std::string_view usage;		///< "amupmu <name> --help"
	/// Runs the command; returns the exit code. Throws UsageError for bad
	/// arguments, Failure and amupmu::Error for failures (main() reports
	/// them). Every command's is parse_then_run<parse, run>.
	int (*run)(Args args);
	/// Its own subcommands: the first argument naming one runs it with
	/// the arguments after the name (run_command()).
	std::span<const Command* const> subcommands{};
};

/// The shape of every command: parse(Args) -> Options reads the arguments
/// (UsageError for bad ones, before anything is opened or run), then
/// run(const Options&) -> exit status does the work and prints what the
/// report component makes of its results.
template <auto parse, auto run>
int parse_then_run(Args args)
{
	return run(parse(args));
}

/// What a command does with its arguments: a subcommand's name first runs
/// that subcommand; otherwise -h or --help before "--" (nothing after it
/// is amupmu's) prints the usage; otherwise command.run(). Errors
/// propagate (main() reports them).
int run_command(const Command& command, Args args);

/// Bad command line; main() prints it with a hint to --help.
class UsageError : public std::runtime_error {
	using std::runtime_error::runtime_error;
};

/// A failure with what the user can do about it: main() prints
/// "WHO: WHAT -- HINT" ("WHO: WHAT" without a hint) and exits with status.
/// The one way a command adds a hint to an error; main() gives those that
/// come without one the hint their type calls for (the module not loaded,
/// the PMU's mode) the same way.
class Failure : public std::runtime_error {
public:
	Failure(const std::exception& cause, std::string_view hint, int status = exit_error,
		std::string_view who = "amupmu")
		: std::runtime_error{std::string{who} + ": " + cause.what() +
				     (hint.empty() ? std::string{} : " -- " + std::string{hint})},
		  status_{status}
	{
	}
	[[nodiscard]] int status() const noexcept { return status_; }

private:
	int status_;
};

/// If args[i] is "NAME VALUE" (advancing i) or "NAME=VALUE", the value; a
/// short option ("-x") also takes it glued on ("-x,").
std::optional<std::string_view> option_value(Args args, std::size_t& i, std::string_view name);

/// In an option loop: args[i] ends the options ("--", skipped, or the
/// first argument that is not an option); i then indexes the command.
inline bool end_of_options(Args args, std::size_t& i)
{
	if (args[i] == "--") {
		++i;
		return true;
	}
	return !args[i].starts_with("-");
}

/// The number an option's value spells; UsageError naming the option
/// otherwise.
template <typename T>
T number_arg(std::string_view opt, std::string_view v)
{
	T out{};
	const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
	if (r.ec != std::errc{} || r.ptr != v.data() + v.size())
		throw UsageError{"option '" + std::string{opt} + "' needs a number, not '" + std::string{v} + "'"};
	return out;
}

extern const Command info_command;
extern const Command amu_command;
extern const Command stat_command;
extern const Command list_command;
extern const Command record_command;
extern const Command report_command;
extern const Command script_command;
extern const Command calibrate_command;
extern const Command spe_command;
extern const Command monitor_command;
extern const Command doctor_command;
extern const Command exporter_command;

} // namespace amupmu::cli

#endif
