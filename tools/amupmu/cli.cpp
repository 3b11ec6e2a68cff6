// SPDX-License-Identifier: GPL-2.0
#include "cli.hpp"

#include <algorithm>
#include <iostream>

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

int run_command(const Command& command, Args args)
{
	if (!args.empty())
		for (const Command* sub : command.subcommands)
			if (args.front() == sub->name)
				return run_command(*sub, args.subspan(1));
	const auto own = std::ranges::find(args, std::string_view{"--"});
	if (std::any_of(args.begin(), own, [](std::string_view a) { return a == "-h" || a == "--help"; })) {
		std::cout << command.usage;
		return exit_ok;
	}
	return command.run(args);
}

} // namespace amupmu::cli
