// SPDX-License-Identifier: GPL-2.0
//
// Waiting for Ctrl-C: what `amupmu amu`, `amupmu stat` and `amupmu
// record -a` do without a command (as perf stat -a does), and what ends
// `amupmu monitor`, asleep in ppoll().
#ifndef AMUPMU_TOOL_SIGNAL_WAIT_HPP
#define AMUPMU_TOOL_SIGNAL_WAIT_HPP

#include <csignal>
#include <initializer_list>
#include <string_view>
#include <vector>

namespace amupmu::cli {

/// Catches the signals given (SIGINT and SIGTERM by default) while it
/// lives: they are blocked but while ppoll() sleeps, so that one arriving
/// between the test and the sleep still wakes it. The destructor restores
/// the dispositions and the mask. One at a time (the handler is per
/// process).
class SignalWait {
public:
	explicit SignalWait(std::initializer_list<int> signals = {SIGINT, SIGTERM});
	~SignalWait();
	SignalWait(const SignalWait&) = delete;
	SignalWait& operator=(const SignalWait&) = delete;

	/// The signal that came (it may have come before the call), or 0
	/// after timeout_ms (-1: none).
	[[nodiscard]] int wait(int timeout_ms) const;
	/// As wait(), and also ends when fd is readable (POLLIN, or an error
	/// or hangup the caller's read then reports): the signal, or 0. With
	/// what (a file no read reports the errors of: a sample ring), an
	/// error or an invalid fd throws Error "poll of WHAT" instead.
	[[nodiscard]] int wait_fd(int fd, int timeout_ms, std::string_view what = {}) const;
	/// The signal that came, 0 while none did.
	[[nodiscard]] static int caught() noexcept;

private:
	struct Saved {
		int sig;
		struct sigaction action;
	};
	std::vector<Saved> saved_{};
	sigset_t old_mask_{};
	sigset_t sleep_mask_{};
};

/// After the report of a run that a signal ended: the signal again, with
/// its default disposition, so that the caller dies of it as perf stat does
/// (builtin-stat.c's sig_atexit()) and a shell sees 128 + sig. Returns
/// only when the signal is ignored or blocked elsewhere.
void raise_default(int sig);

} // namespace amupmu::cli

#endif
