// SPDX-License-Identifier: GPL-2.0
//
// The command that stat and record measure: forked, held until the
// counters run, then exec'd; its exec failure reported to the parent.
#ifndef AMUPMU_TOOL_CHILD_HPP
#define AMUPMU_TOOL_CHILD_HPP

#include "cli.hpp"

#include <amupmu/elf.hpp>
#include <amupmu/info.hpp>

#include <functional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace amupmu::cli {

class Child {
public:
	/// Forks; the child waits for start(). trace: the child stops with
	/// SIGTRAP right after exec (PTRACE_TRACEME) so that its mappings can
	/// be read; see wait_exec(). The command starts with SIGCHLD unblocked
	/// (a parent that waits through a signalfd blocks it).
	Child(const std::vector<std::string>& argv, bool trace = false);
	Child(const Child&) = delete;
	Child& operator=(const Child&) = delete;
	/// Kills and reaps a child that was never waited for.
	~Child();

	[[nodiscard]] pid_t pid() const noexcept { return pid_; }
	/// Lets the child exec. Throws Error when exec failed (errno from the
	/// child, operation "exec <name>").
	void start();
	/// trace mode: waits for the post-exec stop; the caller reads
	/// /proc/pid/maps, then calls follow_execs() (or detach()).
	void wait_exec();
	void detach();
	/// trace mode: stops at every later exec too (PTRACE_O_TRACEEXEC) and
	/// lets the child go on.
	void follow_execs();
	/// trace mode after follow_execs(): like wait(timeout_ms) but calls
	/// on_exec() at each exec stop (the maps have changed) and passes other
	/// signals on to the child.
	bool wait_traced(int timeout_ms, const std::function<void()>& on_exec);
	/// Waits for the exit; with timeout_ms >= 0 returns false when it did
	/// not exit in time. The status is then in status().
	bool wait(int timeout_ms = -1);
	/// Shell-style status: exit code, or 128 + signal.
	[[nodiscard]] int status() const noexcept { return status_; }
	[[nodiscard]] bool exited() const noexcept { return done_; }

private:
	pid_t pid_ = -1;
	int go_fd_ = -1;	// write end: start
	int err_fd_ = -1;	// read end: exec errno (CLOEXEC: EOF on success)
	bool trace_ = false;
	bool done_ = false;
	int status_ = 0;
	std::string name_;
};

/// Replaces pid's mappings in maps with those /proc/pid/maps lists now
/// (after an exec of the process, its maps replace the old ones).
void refresh_maps(std::vector<Mapping>& maps, std::uint32_t pid);

/// The arguments after "--" (or from the first non-option): the command.
/// Throws UsageError when empty.
std::vector<std::string> command_of(Args args, std::size_t first);

/// -C list, or the online CPUs of info. Throws UsageError on a malformed
/// list or a CPU that is not possible.
std::vector<unsigned> cpu_set(const Info& info, std::string_view list);

} // namespace amupmu::cli

#endif
