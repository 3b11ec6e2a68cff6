// SPDX-License-Identifier: GPL-2.0
//
// The tool's SignalWait (signal_wait.hpp): what ends `amupmu stat`,
// `amupmu amu` and `amupmu record -a` without a command. Backend: host (signals to the test
// process itself; on the aarch64 build under qemu-aarch64-static).
#include "signal_wait.hpp"

#include <amupmu/error.hpp>

#include <catch2/catch.hpp>

#include <cerrno>

#include <chrono>
#include <csignal>
#include <thread>

#include <unistd.h>

using amupmu::cli::SignalWait;

namespace {

sighandler_t disposition(int sig)
{
	struct sigaction act {};
	::sigaction(sig, nullptr, &act);
	return act.sa_handler;
}

bool blocked(int sig)
{
	sigset_t set;
	::sigprocmask(SIG_BLOCK, nullptr, &set);
	return ::sigismember(&set, sig) == 1;
}

} // namespace

TEST_CASE("SignalWait: SIGINT or SIGTERM ends the wait, a timeout does not", "[host][tool][signal]")
{
	// (Catch2 has handlers of its own for both)
	const sighandler_t int_before = disposition(SIGINT);
	REQUIRE_FALSE(blocked(SIGINT));
	for (const int sig : {SIGINT, SIGTERM}) {
		INFO("signal " << sig);
		const sighandler_t before = disposition(sig);
		{
			const SignalWait w;
			CHECK(w.wait(20) == 0);	// nothing came
			CHECK(SignalWait::caught() == 0);
			// from another thread while asleep in ppoll()
			std::thread t{[sig] {
				std::this_thread::sleep_for(std::chrono::milliseconds(50));
				::kill(::getpid(), sig);
			}};
			const auto t0 = std::chrono::steady_clock::now();
			CHECK(w.wait(10000) == sig);
			t.join();
			CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
			// it stays caught; a later wait returns at once
			CHECK(w.wait(-1) == sig);
		}
		// the dispositions and the mask as they were
		CHECK(disposition(sig) == before);
		CHECK_FALSE(blocked(sig));
	}
	// a signal before the wait is not lost: it is blocked until ppoll()
	const SignalWait w{SIGTERM};
	CHECK(blocked(SIGTERM));
	::kill(::getpid(), SIGTERM);
	CHECK(w.wait(1000) == SIGTERM);
	// only the signals asked for
	CHECK(disposition(SIGINT) == int_before);
}

// wait_fd(): what `amupmu monitor` sleeps in, the netlink socket and the
// signals at once
TEST_CASE("SignalWait: wait_fd ends on a readable fd or a signal", "[host][tool][signal]")
{
	int p[2];
	REQUIRE(::pipe(p) == 0);
	{
		const SignalWait w;
		CHECK(w.wait_fd(p[0], 20) == 0);	// timeout: nothing to read
		std::thread t{[&] {
			std::this_thread::sleep_for(std::chrono::milliseconds(50));
			CHECK(::write(p[1], "x", 1) == 1);
		}};
		const auto t0 = std::chrono::steady_clock::now();
		CHECK(w.wait_fd(p[0], 10000) == 0);	// readable
		t.join();
		CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
		char c = 0;
		CHECK(::read(p[0], &c, 1) == 1);
		std::thread k{[] {
			std::this_thread::sleep_for(std::chrono::milliseconds(50));
			::kill(::getpid(), SIGTERM);
		}};
		CHECK(w.wait_fd(p[0], -1) == SIGTERM);
		k.join();
	}
	::close(p[0]);
	::close(p[1]);
}

TEST_CASE("SignalWait: wait_fd names the file of a poll error when given its name", "[host][tool][signal]")
{
	int p[2];
	REQUIRE(::pipe(p) == 0);
	::close(p[1]);
	::close(p[0]);	// p[0] is no open fd now: POLLNVAL
	const SignalWait w{SIGTERM, SIGHUP};
	CHECK(w.wait_fd(p[0], 20) == 0);	// without a name: the caller's read reports it
	try {
		(void)w.wait_fd(p[0], 20, "the sample ring");
		FAIL("no error");
	} catch (const amupmu::Error& e) {
		CHECK(e.errnum() == EBADF);
		CHECK(e.operation() == "poll of the sample ring");
	}
	CHECK(SignalWait::caught() == 0);
}
