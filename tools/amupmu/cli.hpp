// SPDX-License-Identifier: GPL-2.0
//
// The amupmu command's subcommand interface. A subcommand is one Command
// object (in its own cmd_*.cpp) listed in main.cpp's table.
#ifndef AMUPMU_TOOL_CLI_HPP
#define AMUPMU_TOOL_CLI_HPP

#include <charconv>
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
	/// arguments and amupmu::Error for failures (main() reports both).
	int (*run)(Args args);
	/// run() prints the help of --help itself (subcommands with their own)
	bool own_help = false;
};

/// Bad command line; main() prints it with a hint to --help.
class UsageError : public std::runtime_error {
	using std::runtime_error::runtime_error;
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

/// printf's "%.*f" and "%.*g", whatever the locale says (std::to_chars):
/// the decimal point is '.'.
inline std::string fixed_text(double v, int decimals)
{
	char buf[352];	// DBL_MAX's 309 digits and the decimals
	const auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed, decimals);
	return r.ec == std::errc{} ? std::string{buf, r.ptr} : std::string{"?"};
}
inline std::string general_text(double v, int precision)
{
	char buf[64];
	const auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general, precision);
	return r.ec == std::errc{} ? std::string{buf, r.ptr} : std::string{"?"};
}
/// s right-aligned in width columns, as printf's "%*s".
inline std::string pad_left(std::string s, std::size_t width)
{
	if (s.size() < width)
		s.insert(0, width - s.size(), ' ');
	return s;
}

extern const Command info_command;
extern const Command amu_command;
extern const Command stat_command;
extern const Command record_command;
extern const Command report_command;
extern const Command script_command;
extern const Command calibrate_command;
extern const Command spe_command;
extern const Command monitor_command;

} // namespace amupmu::cli

#endif
