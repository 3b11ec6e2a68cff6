// SPDX-License-Identifier: GPL-2.0
//
// The command that stat and record measure: forked, held until the
// counters run, then exec'd; its exec failure reported to the parent.
#ifndef AMUPMU_TOOL_CHILD_HPP
#define AMUPMU_TOOL_CHILD_HPP

#include "cli.hpp"

#include <amupmu/elf.hpp>
#include <amupmu/info.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

namespace amupmu::cli {

/// The command runs in its own process; while it runs the tool
///  - ignores SIGINT and SIGQUIT (the terminal sends them to the command too;
///    the tool reports once the command has ended), and gives the command
///    the dispositions the tool itself was started with, so a command
///    started under nohup or with "trap '' INT" keeps ignoring them;
///  - passes SIGTERM and SIGHUP on to the command (when the tool was not
///    started with them ignored) and goes on to report what it measured
///    once the command ends: the command is never orphaned and the output is
///    complete; after the command's end they act as they did before;
///  - waits in poll(): on a pidfd, or on a SIGCHLD signalfd when it traces
///    the command (ptrace stops) or the kernel has no pidfd_open(), never
///    waking up unless something happened or the caller's timeout expires.
/// The destructor restores the signal dispositions and mask. One Child at
/// a time (the signal handlers are per process).
/// Why Child calls its maps callback for a process of the traced command.
enum class MapsEvent {
	exec,	///< it has exec'd: its old mappings are gone
	fork,	///< a new process (fork, vfork, clone): its parent's mappings, or shared ones
	exit,	///< it (or one of its threads) is exiting, all its mappings still in place
	/// a thread other than the main one is exiting: pid is the thread's
	/// id (its name, /proc/TID/comm, is still there); no mapping changed.
	/// Called before the exit of its process.
	thread_exit,
};
/// Called with the process (thread group id) whose mappings to read now,
/// or with a thread for thread_exit.
using MapsCallback = std::function<void(pid_t pid, MapsEvent why)>;

class Child {
public:
	/// Forks; the child waits for start(). trace: the child stops with
	/// SIGTRAP right after exec (PTRACE_TRACEME) so that its mappings can
	/// be read; see wait_exec().
	Child(const std::vector<std::string>& argv, bool trace = false);
	Child(const Child&) = delete;
	Child& operator=(const Child&) = delete;
	/// Kills and reaps a child that was never waited for; restores the
	/// signal dispositions and mask.
	~Child();

	[[nodiscard]] pid_t pid() const noexcept { return pid_; }
	/// Lets the child exec. Throws Error when exec failed (errno from the
	/// child, operation "exec <name>") or the child ended before it could
	/// (killed meanwhile, e.g. by a SIGTERM passed on: ECHILD).
	void start();
	/// trace mode: waits for the post-exec stop; the caller reads
	/// /proc/pid/maps, then calls follow_execs() (or detach()).
	void wait_exec();
	/// trace mode: start() and wait_exec(); when either fails, calls
	/// on_fail() (e.g. disables the session already enabled), prints
	/// "amupmu WHO: ERROR" and returns false: the caller exits 127, as a
	/// shell does for a command it cannot run (record, spe record).
	bool start_traced(std::string_view who, const std::function<void()>& on_fail);
	void detach();
	/// trace mode: follows the command's processes and threads (the ones it
	/// forks and clones, theirs, and so on: PTRACE_O_TRACEFORK, VFORK,
	/// CLONE), stopping each at its exec (PTRACE_O_TRACEEXEC), at its start
	/// and at its exit while it still has its mappings (PTRACE_O_TRACEEXIT:
	/// the shared libraries ld.so and dlopen() mapped after the exec), and
	/// lets the child go on. Only the command itself is killed should the
	/// tool die (PTRACE_O_EXITKILL); the processes it started are detached
	/// then, as they are when the tool exits after the command's end.
	void follow_execs();
	/// Readable when the child may have changed state (its exit; in trace
	/// mode also its stops): for a poll() of the caller's that waits for
	/// other files too. Then call update().
	[[nodiscard]] int event_fd() const noexcept { return event_fd_; }
	/// Handles what happened without blocking: in trace mode calls
	/// on_maps() at each exec stop, at the start of each new process and at
	/// each exit stop of the followed processes (read /proc/pid/maps then)
	/// and passes other signals on to them. True once the command (the
	/// first process) has exited: the wait ends then, as perf record's does,
	/// whatever processes it started are still running.
	bool update(const MapsCallback& on_maps = {});
	/// update() until the exit, waiting in poll(); with timeout_ms >= 0
	/// returns false when the child did not exit in time. The status is
	/// then in status().
	bool wait_traced(int timeout_ms, const MapsCallback& on_maps);
	bool wait(int timeout_ms = -1) { return wait_traced(timeout_ms, {}); }
	/// update() until the exit, asleep in one poll() on the event fd and
	/// fd (a ring or SPE session: what names it in errors), calling
	/// on_readable() whenever fd is readable. on_readable() returns the ms
	/// to leave fd out of poll() (0: none; DrainPacer), after which it is
	/// called again whether fd is readable or not.
	void wait_with(int fd, const std::string& what, const std::function<int()>& on_readable,
		       const MapsCallback& on_maps);
	/// Shell-style status: exit code, or 128 + signal.
	[[nodiscard]] int status() const noexcept { return status_; }
	[[nodiscard]] bool exited() const noexcept { return done_; }

private:
	void reaped(int st);
	bool update_traced(const MapsCallback& on_maps);
	void stopped(pid_t tid, int st, const MapsCallback& on_maps);
	void restore_signals() noexcept;

	pid_t pid_ = -1;
	int go_fd_ = -1;	// our end of a socketpair: start (MSG_NOSIGNAL)
	int err_fd_ = -1;	// read end: exec errno (CLOEXEC: EOF on success)
	int event_fd_ = -1;	// pidfd, or SIGCHLD signalfd
	bool sigchld_fd_ = false;	// event_fd_ is the signalfd
	bool trace_ = false;
	bool done_ = false;
	int status_ = 0;
	std::string name_;
	// trace mode: the followed threads; true until a new one's first stop
	// (the SIGSTOP every auto-attached tracee starts with)
	std::map<pid_t, bool> tracees_;
	struct SavedSignals;
	std::unique_ptr<SavedSignals> saved_;
};

/// Milliseconds from now until t, rounded up (0 once it has passed): a
/// poll() timeout for a deadline.
int ms_until(std::chrono::steady_clock::time_point t);

/// Replaces pid's mappings in maps with those /proc/pid/maps lists now
/// (after an exec of the process, its maps replace the old ones).
void refresh_maps(std::vector<Mapping>& maps, std::uint32_t pid);
/// The maps callback of a recording: refresh_maps() after an exec, else
/// the mappings /proc/pid/maps lists now added to those pid had (a library
/// dlclose()d before the exit keeps naming the samples taken in it).
void update_maps(std::vector<Mapping>& maps, pid_t pid, MapsEvent why);
/// The processes a drain's samples came from, and for each whether one of
/// its user PCs falls outside the mappings known for it (record -a reads
/// them again then: the drain that first saw it came between its fork and
/// its exec, or it dlopen()ed a library since). Holds maps by reference.
class MapsCoverage {
public:
	explicit MapsCoverage(const std::vector<Mapping>& maps) : maps_{maps} {}
	/// a sample of pid, user_pc its PC when taken at EL0
	void see(std::uint32_t pid, std::optional<std::uint64_t> user_pc);
	/// pid -> true when a user PC of it was outside its mappings
	[[nodiscard]] const std::map<std::uint32_t, bool>& pids() const { return pids_; }

private:
	const std::vector<Mapping>& maps_;
	std::map<std::uint32_t, bool> pids_;
	const Mapping* last_ = nullptr;	///< where the last PC was (most are in the same one)
};
/// The thread group (process) of thread tid, from /proc/tid/status; tid
/// itself when unreadable.
[[nodiscard]] pid_t tgid_of(pid_t tid);

/// The arguments after "--" (or from the first non-option): the command.
/// Throws UsageError when empty.
std::vector<std::string> command_of(Args args, std::size_t first);

/// -C list, or the online CPUs of info. Throws UsageError on a malformed
/// list or a CPU that is not possible.
std::vector<unsigned> cpu_set(const Info& info, std::string_view list);

} // namespace amupmu::cli

#endif
