// SPDX-License-Identifier: GPL-2.0
#include "cli.hpp"

namespace amupmu::cli {

std::optional<std::string_view> option_value(Args args, std::size_t& i, std::string_view name)
{
	const std::string_view arg = args[i];
	if (arg == name) {
		if (i + 1 >= args.size())
			throw UsageError{"option '" + std::string{name} + "' needs a value"};
		return args[++i];
	}
	if (arg.size() > name.size() && arg.starts_with(name) && arg[name.size()] == '=')
		return arg.substr(name.size() + 1);
	// short options also take their value glued on, as in perf: -x, -C0 -I100
	if (name.size() == 2 && name[0] == '-' && name[1] != '-' && arg.size() > 2 && arg.starts_with(name))
		return arg.substr(2);
	return std::nullopt;
}

} // namespace amupmu::cli
