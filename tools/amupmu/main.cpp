// SPDX-License-Identifier: GPL-2.0
//
// amupmu: command-line front end of libamupmu.
//
//   amupmu <command> [options]      see "amupmu --help"
//
// Exit status: 0 success, 1 error (usage errors included), 2 the device node
// is missing (the amupmu module is not loaded).
#include "cli.hpp"

#include <amupmu/device.hpp>
#include <amupmu/error.hpp>
#include <amupmu/info.hpp>
#include <amupmu/version.hpp>

#include <amupmu/text/columns.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace amupmu::cli;

// Subcommands, in "amupmu --help" order.
const Command* const commands[] = {
	&info_command, &doctor_command, &list_command, &stat_command, &amu_command, &record_command, &report_command, &script_command,
	&calibrate_command,
	&spe_command,
	&monitor_command,
	&exporter_command,
};

const Command* find_command(std::string_view name)
{
	const auto* const it = std::ranges::find(commands, name, &Command::name);
	return it == std::end(commands) ? nullptr : *it;
}

void print_help(std::ostream& out)
{
	out << "Usage: amupmu <command> [options]\n"
	       "       amupmu help [<command>]\n"
	       "       amupmu --help | --version\n"
	       "\n"
	       "Arm AMU / PMUv3 / SPE tool for the amupmu driver ("
	    << amupmu::default_device_path
	    << ").\n"
	       "\n"
	       "Commands:\n";
	for (const Command* c : commands) {
		out << "  " << amupmu::text::pad_right(std::string{c->name} + "  ", 12) << c->summary << "\n";
	}
	out << "\n"
	       "Run 'amupmu <command> --help' for the options of a command,\n"
	       "'amupmu help <command>' for its manual page.\n"
	       "\n"
	       "Exit status: 0 success, 1 error (usage errors included),\n"
	       "2 the device node is missing (the amupmu module is not loaded).\n";
}

void print_version()
{
	std::cout << "amupmu " << amupmu::version_string << " (libamupmu ABI " << amupmu::abi_major
		  << "." << amupmu::abi_minor << ")\n";
}

bool is_help(std::string_view arg)
{
	return arg == "-h" || arg == "--help";
}

int usage_error(std::string_view context, const std::string& message)
{
	std::cerr << context << ": " << message << "\nTry '" << context << " --help'.\n";
	return exit_error;
}

// The PMU mode in force now, for a hint after a PMU error; nullopt when
// the driver cannot say.
std::optional<amupmu::PmuMode> pmu_mode_now()
{
	try {
		if (auto dev = amupmu::Device::try_open(amupmu::default_device_path))
			return dev->info().pmu_mode();
	} catch (const amupmu::Error&) {
	}
	return std::nullopt;
}

// What the user can do about ENXIO (OwnedByKernel) or EBUSY of a PMU
// command, by the mode in force.
std::string pmu_hint(const amupmu::Error& e, bool busy)
{
	const std::optional<amupmu::PmuMode> mode =
		e.operation().starts_with("AMUPMU_PMU") ? pmu_mode_now() : std::nullopt;
	if (busy)
		return mode == amupmu::PmuMode::shared
			       ? "perf core has no counter for it now (pinned perf events or other amupmu sessions "
				 "hold them)"
			       : "counters in use by another session now (see the free counters in 'amupmu info')";
	if (mode == amupmu::PmuMode::refused)
		return "shared mode counts on this board: echo Y >/sys/module/amupmu/parameters/pmu_shared (or "
		       "boot with a devicetree that gives amupmu the PMU: dts/amupmu-virt.dtso; see 'amupmu info')";
	if (mode == amupmu::PmuMode::shared)
		return "see 'amupmu info'";
	return "it stays the kernel's while this boots; boot with a devicetree that gives amupmu the PMU "
	       "(dts/amupmu-virt.dtso; see 'amupmu info')";
}

// amupmu help CMD: the command's manual page, as perf help CMD shows
// perf-CMD(1) (man, its pager and MANPATH as the user set them); the
// command's --help text when there is no man command or man-db has no
// such page (exit 16: a build that was not installed). Otherwise man's
// own status, or 128 + the signal that ended it. While man runs, SIGINT
// and SIGQUIT are its own (system()'s rule: a Ctrl-C in the pager is not
// the tool's), as they were when amupmu started (ignored stays ignored).
int show_manual(const Command& c)
{
	constexpr int man_no_page = 16;	// man-db's "No manual entry"
	const std::string page = "amupmu-" + std::string{c.name};
	std::cout.flush();
	char arg0[] = "man";
	std::string arg1 = page;
	char* const argv[] = {arg0, arg1.data(), nullptr};
	struct sigaction ignore {}, old_int {}, old_quit {};
	ignore.sa_handler = SIG_IGN;
	::sigemptyset(&ignore.sa_mask);
	::sigaction(SIGINT, &ignore, &old_int);
	::sigaction(SIGQUIT, &ignore, &old_quit);
	sigset_t defaults;
	::sigemptyset(&defaults);
	if (old_int.sa_handler != SIG_IGN)
		::sigaddset(&defaults, SIGINT);
	if (old_quit.sa_handler != SIG_IGN)
		::sigaddset(&defaults, SIGQUIT);
	posix_spawnattr_t attr;
	::posix_spawnattr_init(&attr);
	::posix_spawnattr_setsigdefault(&attr, &defaults);
	::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
	pid_t pid = 0;
	int status = -1;
	const int err = ::posix_spawnp(&pid, "man", nullptr, &attr, argv, environ);
	::posix_spawnattr_destroy(&attr);
	if (err == 0)
		while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
		}
	::sigaction(SIGINT, &old_int, nullptr);
	::sigaction(SIGQUIT, &old_quit, nullptr);
	if (err == 0 && status != -1 && WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	if (err == 0 && status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != man_no_page)
		return WEXITSTATUS(status);
	// man-db said "No manual entry" itself; a missing man is ours to say
	std::cerr << "amupmu help: " << (err != 0 ? "no man command" : "no page " + page + "(1) installed")
		  << "; 'amupmu " << c.name << " --help':\n";
	std::cout << c.usage;
	return exit_ok;
}

int report(const Failure& f)
{
	std::cerr << f.what() << "\n";
	return f.status();
}

// The command, its failures reported with their hints: the command's own
// (Failure), else the one the error's type calls for.
int run(const Command& command, Args args)
{
	try {
		return run_command(command, args);
	} catch (const UsageError& e) {
		return usage_error("amupmu " + std::string{command.name}, e.what());
	} catch (const Failure& f) {
		return report(f);
	} catch (const amupmu::DeviceMissing& e) {
		return report(Failure{e, "is the amupmu module loaded?", exit_no_device});
	} catch (const amupmu::OwnedByKernel& e) {
		return report(Failure{e, pmu_hint(e, false)});
	} catch (const amupmu::Busy& e) {
		return report(Failure{e, pmu_hint(e, true)});
	} catch (const std::exception& e) {
		return report(Failure{e, {}});
	}
}

int dispatch(Args args)
{
	if (args.empty()) {
		print_help(std::cerr);
		return exit_error;
	}
	const std::string_view first = args.front();
	if (first == "help" && args.size() > 1) {
		const Command* c = find_command(args[1]);
		if (!c)
			return usage_error("amupmu", "unknown command '" + std::string{args[1]} + "'");
		if (args.size() > 2)
			return usage_error("amupmu help", "one command at a time");
		return show_manual(*c);
	}
	if (is_help(first) || first == "help") {
		print_help(std::cout);
		return exit_ok;
	}
	if (first == "--version") {
		print_version();
		return exit_ok;
	}
	if (const Command* c = find_command(first))
		return run(*c, args.subspan(1));
	return usage_error("amupmu", "unknown command '" + std::string{first} + "'");
}

} // namespace

int main(int argc, char** argv)
{
	const std::vector<std::string_view> args(argv + std::min(argc, 1), argv + argc);
	const int status = dispatch(args);
	if (!std::cout.flush()) {
		std::cerr << "amupmu: cannot write the output\n";
		return exit_error;
	}
	return status;
}
