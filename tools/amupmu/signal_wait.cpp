// SPDX-License-Identifier: GPL-2.0
#include "signal_wait.hpp"

#include "child.hpp"

#include <amupmu/error.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <string>

#include <poll.h>

namespace amupmu::cli {

namespace {

volatile std::sig_atomic_t caught_signal = 0;

extern "C" void on_signal(int sig)
{
	caught_signal = sig;
}

} // namespace

SignalWait::SignalWait(std::initializer_list<int> signals)
{
	caught_signal = 0;
	sigset_t block;
	::sigemptyset(&block);
	for (const int sig : signals) {
		struct sigaction act {};
		::sigemptyset(&act.sa_mask);
		act.sa_handler = on_signal;
		Saved s{sig, {}};
		::sigaction(sig, &act, &s.action);
		saved_.push_back(s);
		::sigaddset(&block, sig);
	}
	::sigprocmask(SIG_BLOCK, &block, &old_mask_);
	sleep_mask_ = old_mask_;
	for (const int sig : signals)
		::sigdelset(&sleep_mask_, sig);
}

SignalWait::~SignalWait()
{
	::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
	for (const Saved& s : saved_)
		::sigaction(s.sig, &s.action, nullptr);
}

int SignalWait::wait(int timeout_ms) const
{
	return wait_fd(-1, timeout_ms);	// ppoll() ignores a negative fd
}

int SignalWait::wait_fd(int fd, int timeout_ms, std::string_view what) const
{
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
	while (!caught_signal) {
		timespec ts{};
		if (timeout_ms >= 0) {
			const int left = ms_until(deadline);
			if (left == 0)
				return 0;
			ts = {.tv_sec = left / 1000, .tv_nsec = static_cast<long>(left % 1000) * 1000000};
		}
		pollfd p{fd, POLLIN, 0};
		const int r = ::ppoll(&p, 1, timeout_ms >= 0 ? &ts : nullptr, &sleep_mask_);
		if (r < 0 && errno != EINTR)
			throw_error("ppoll", errno);
		if (r > 0 && !what.empty() && (p.revents & (POLLERR | POLLNVAL)))
			throw Error{"poll of " + std::string{what}, (p.revents & POLLNVAL) ? EBADF : EINVAL};
		if (r > 0)
			return caught_signal;
	}
	return caught_signal;
}

int SignalWait::caught() noexcept
{
	return caught_signal;
}

void raise_default(int sig)
{
	::signal(sig, SIG_DFL);
	sigset_t set;
	::sigemptyset(&set);
	::sigaddset(&set, sig);
	::sigprocmask(SIG_UNBLOCK, &set, nullptr);
	::raise(sig);
}

} // namespace amupmu::cli
