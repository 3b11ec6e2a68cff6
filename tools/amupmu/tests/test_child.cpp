// SPDX-License-Identifier: GPL-2.0
//
// The tool's Child (child.hpp): which signals reach the command, SIGTERM
// passed on, a command gone before its start, the waits. Backend: host
// (real processes: sh, sleep, true; on the aarch64 build under
// qemu-aarch64-static).
#include "child.hpp"

#include <amupmu/error.hpp>

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <poll.h>
#include <unistd.h>

using amupmu::cli::Child;
using amupmu::cli::ms_until;

namespace {

// the test process's disposition of sig, set for one scope
class Disposition {
public:
	Disposition(int sig, sighandler_t handler) : sig_{sig}, old_{::signal(sig, handler)} {}
	~Disposition() { ::signal(sig_, old_); }
	Disposition(const Disposition&) = delete;
	Disposition& operator=(const Disposition&) = delete;

private:
	int sig_;
	sighandler_t old_;
};

sighandler_t disposition(int sig)
{
	struct sigaction act {};
	::sigaction(sig, nullptr, &act);
	return act.sa_handler;
}

// the command signals itself; exit 3 when it lived through it
int self_signal_status(const char* sig)
{
	Child c{{"sh", "-c", std::string{"kill -"} + sig + " $$; exit 3"}};
	c.start();
	REQUIRE(c.wait(20000));
	return c.status();
}

char proc_state(pid_t pid)
{
	std::ifstream stat{"/proc/" + std::to_string(pid) + "/stat"};
	std::string line;
	std::getline(stat, line);
	const auto paren = line.rfind(')');
	return paren == std::string::npos || paren + 2 >= line.size() ? '?' : line[paren + 2];
}

} // namespace

TEST_CASE("Child: the command gets the SIGINT/SIGQUIT dispositions the tool was started with", "[child][host]")
{
	SECTION("default: Ctrl-C ends the command, although the tool ignores it while it waits")
	{
		const Disposition dfl_int{SIGINT, SIG_DFL}, dfl_quit{SIGQUIT, SIG_DFL};
		CHECK(self_signal_status("INT") == 128 + SIGINT);
		CHECK(self_signal_status("QUIT") == 128 + SIGQUIT);
		CHECK(disposition(SIGINT) == SIG_DFL);	// restored after the command
	}
	SECTION("ignored (nohup, trap '' INT): the command keeps ignoring them")
	{
		const Disposition ign_int{SIGINT, SIG_IGN}, ign_quit{SIGQUIT, SIG_IGN};
		CHECK(self_signal_status("INT") == 3);
		CHECK(self_signal_status("QUIT") == 3);
		CHECK(disposition(SIGINT) == SIG_IGN);
	}
}

TEST_CASE("Child: SIGTERM and SIGHUP to the tool go to the command, which is not orphaned", "[child][host]")
{
	const Disposition dfl_term{SIGTERM, SIG_DFL}, dfl_hup{SIGHUP, SIG_DFL};
	for (const int sig : {SIGTERM, SIGHUP}) {
		INFO("signal " << sig);
		{
			Child c{{"sleep", "30"}};
			c.start();
			CHECK(disposition(sig) != SIG_DFL);	// passed on while the command runs
			REQUIRE(::kill(::getpid(), sig) == 0);	// the tool goes on: the command ends
			REQUIRE(c.wait(20000));
			CHECK(c.status() == 128 + sig);
		}
		CHECK(disposition(sig) == SIG_DFL);
	}
	SECTION("a tool started with SIGTERM ignored passes that on instead")
	{
		const Disposition ign_term{SIGTERM, SIG_IGN};
		Child c{{"sh", "-c", "kill -TERM $$; exit 3"}};
		c.start();
		REQUIRE(c.wait(20000));
		CHECK(c.status() == 3);
		CHECK(disposition(SIGTERM) == SIG_IGN);
	}
}

TEST_CASE("Child: a command gone before its start is an error, not a SIGPIPE", "[child][host]")
{
	const Disposition dfl_pipe{SIGPIPE, SIG_DFL};	// as the tool runs: SIGPIPE would end it
	Child c{{"true"}};
	REQUIRE(::kill(c.pid(), SIGKILL) == 0);
	// a zombie: its end of the start channel is closed
	for (int i = 0; i < 2000 && proc_state(c.pid()) != 'Z'; i++)
		::usleep(1000);
	REQUIRE(proc_state(c.pid()) == 'Z');
	try {
		c.start();
		FAIL("start() of a killed command succeeded");
	} catch (const amupmu::Error& e) {
		CHECK(e.errnum() == ECHILD);
		CHECK_THAT(e.what(), Catch::Contains("ended before it was started"));
	}
	CHECK(c.exited());
	CHECK(c.status() == 128 + SIGKILL);
}

TEST_CASE("Child: waits end at the exit or the timeout, and the event fd wakes a poll()", "[child][host]")
{
	SECTION("timeout first, then the exit")
	{
		Child c{{"sleep", "1"}};
		c.start();
		const auto t0 = std::chrono::steady_clock::now();
		CHECK_FALSE(c.wait(100));
		CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(100));
		CHECK_FALSE(c.exited());
		CHECK(c.wait(20000));
		CHECK(c.status() == 0);
	}
	SECTION("the exit status, shell style")
	{
		Child c{{"sh", "-c", "exit 7"}};
		c.start();
		CHECK(c.wait());
		CHECK(c.status() == 7);
	}
	SECTION("event_fd(): readable once the command has ended")
	{
		Child c{{"true"}};
		c.start();
		pollfd p{.fd = c.event_fd(), .events = POLLIN, .revents = 0};
		bool done = false;
		for (int i = 0; i < 100 && !done; i++) {
			REQUIRE(::poll(&p, 1, 200) >= 0);
			done = c.update();
		}
		CHECK(done);
		CHECK(c.status() == 0);
	}
	SECTION("exec failure")
	{
		Child c{{"/nonexistent/amupmu-test-command"}};
		try {
			c.start();
			FAIL("start() of a missing command succeeded");
		} catch (const amupmu::Error& e) {
			CHECK(e.errnum() == ENOENT);
		}
	}
}

TEST_CASE("ms_until: a deadline as a poll() timeout, rounded up", "[child][host]")
{
	using clock = std::chrono::steady_clock;
	CHECK(ms_until(clock::now() - std::chrono::seconds(1)) == 0);
	// the time left, in ms rounded up, lies between what was left after
	// the call and before it (however long the call took: qemu-user on a
	// loaded host took over 1.5 ms once)
	const auto ceil_ms = [](clock::duration d) {
		return d <= clock::duration::zero() ? 0 : static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(d).count());
	};
	const clock::time_point deadline = clock::now() + std::chrono::microseconds(1500);
	const clock::time_point before = clock::now();
	const int ms = ms_until(deadline);
	const clock::time_point after = clock::now();
	CHECK(ms >= ceil_ms(deadline - after));
	CHECK(ms <= ceil_ms(deadline - before));
	// an hour ahead: the whole hour, no overflow
	const clock::time_point far = clock::now() + std::chrono::hours(1);
	const int far_ms = ms_until(far);
	CHECK(far_ms <= 3600 * 1000);
	CHECK(far_ms >= 3600 * 1000 - 60 * 1000);
}

TEST_CASE("Child: a traced command stops at its exec and its exit, where its mappings are read", "[child][host]")
{
	Child c{{"sh", "-c", "exit 5"}, true};
	try {
		c.start();
	} catch (const amupmu::Error& e) {
		// qemu-aarch64-static has no ptrace(2): the command cannot be traced
		if (e.errnum() != ENOSYS && e.errnum() != EPERM)
			throw;
		WARN("SKIP: ptrace(PTRACE_TRACEME): " << e.what());
		return;
	}
	c.wait_exec();
	c.follow_execs();
	int maps_read = 0;
	std::string libc;
	REQUIRE(c.wait_traced(20000, [&](pid_t pid, amupmu::cli::MapsEvent why) {
		CHECK(pid == c.pid());
		CHECK(why == amupmu::cli::MapsEvent::exit);
		++maps_read;
		std::ifstream maps{"/proc/" + std::to_string(c.pid()) + "/maps"};
		for (std::string line; std::getline(maps, line);)
			if (line.find("libc") != std::string::npos)
				libc = line;
	}));
	CHECK(c.status() == 5);
	CHECK(maps_read == 1);	// the exit stop (sh execs nothing)
	// sh is dynamically linked: at its exit libc is mapped, which it was not
	// right after the exec
	INFO("libc mapping at the exit stop: " << libc);
	CHECK_FALSE(libc.empty());
}

TEST_CASE("Child: a traced command's forks are followed, their mappings read at start, exec and exit", "[child][host]")
{
	using amupmu::cli::MapsEvent;
	// sh forks a child that execs sh (dynamic: libc mapped at its exit),
	// which forks one more that execs /bin/true (dash runs its builtin true without a fork); the first sh waits for both
	Child c{{"sh", "-c", "sh -c '/bin/true; exit 3'; exit $(($? + 2))"}, true};
	try {
		c.start();
	} catch (const amupmu::Error& e) {
		if (e.errnum() != ENOSYS && e.errnum() != EPERM)	// qemu-user: no ptrace(2)
			throw;
		WARN("SKIP: ptrace(PTRACE_TRACEME): " << e.what());
		return;
	}
	c.wait_exec();
	c.follow_execs();
	struct Call {
		pid_t pid;
		MapsEvent why;
		bool libc;
	};
	std::vector<Call> calls;
	REQUIRE(c.wait_traced(20000, [&](pid_t pid, MapsEvent why) {
		bool libc = false;
		std::ifstream maps{"/proc/" + std::to_string(pid) + "/maps"};
		for (std::string line; std::getline(maps, line);)
			libc = libc || line.find("libc") != std::string::npos;
		calls.push_back({pid, why, libc});
	}));
	CHECK(c.status() == 5);
	std::string seen;
	for (const Call& k : calls)
		seen += std::to_string(k.pid) + ":" + std::to_string(static_cast<int>(k.why)) + (k.libc ? "+libc " : " ");
	INFO("calls (pid:0 exec, 1 fork, 2 exit): " << seen);
	// per process other than the command: start, exec, exit in that order
	std::map<pid_t, std::vector<MapsEvent>> by_pid;
	for (const Call& k : calls)
		by_pid[k.pid].push_back(k.why);
	REQUIRE(by_pid.size() == 3);
	CHECK(by_pid[c.pid()] == std::vector<MapsEvent>{MapsEvent::exit});
	for (const auto& [pid, whys] : by_pid)
		if (pid != c.pid())
			CHECK(whys == std::vector<MapsEvent>{MapsEvent::fork, MapsEvent::exec, MapsEvent::exit});
	// every exit stop saw libc (sh and true are dynamically linked)
	for (const Call& k : calls)
		if (k.why == MapsEvent::exit)
			CHECK(k.libc);
}

TEST_CASE("tgid_of: a thread's process", "[child][host]")
{
	CHECK(amupmu::cli::tgid_of(::getpid()) == ::getpid());
	CHECK(amupmu::cli::tgid_of(0x7ffffff0) == 0x7ffffff0);	// no such thread: itself
}

TEST_CASE("MapsCoverage: the processes of a drain, and which had a user PC outside their mappings", "[child][host]")
{
	WARN("host test: MapsCoverage (the tool's logic over a mappings list, no process)");
	using amupmu::Mapping;
	const std::vector<Mapping> maps{{.pid = 10, .start = 0x1000, .end = 0x2000, .offset = 0, .path = "/bin/a"},
					{.pid = 10, .start = 0x8000, .end = 0x9000, .offset = 0, .path = "/lib/b"},
					{.pid = 20, .start = 0x400000, .end = 0x401000, .offset = 0, .path = "/bin/c"}};
	amupmu::cli::MapsCoverage cov{maps};
	cov.see(10, 0x1000);
	cov.see(10, 0x8fff);
	cov.see(10, std::nullopt);		// a kernel sample: no PC to place
	cov.see(20, 0x1000);			// pid 10's range, not pid 20's: the fork-before-exec case
	cov.see(30, std::nullopt);		// known only from kernel samples
	cov.see(20, 0x400000);
	cov.see(10, 0x1fff);
	CHECK(cov.pids() == std::map<std::uint32_t, bool>{{10, false}, {20, true}, {30, false}});
	cov.see(10, 0x2000);			// one past the end
	CHECK(cov.pids().at(10));
}

#ifdef AMUPMU_TEST_DYN_WORKLOAD
TEST_CASE("Child: a traced command's thread is named at its exit stop (thread_exit), before its process's exit",
	  "[child][host]")
{
	using amupmu::cli::MapsEvent;
	// amupmu-workload-dyn: a thread that names itself dyn-thread, and a
	// forked child
	Child c{{AMUPMU_TEST_DYN_WORKLOAD, "20"}, true};
	try {
		c.start();
	} catch (const amupmu::Error& e) {
		// a native arm64 build run under qemu-user (an arm64 chroot on
		// another host) has no ptrace(2) either
		if (e.errnum() != ENOSYS && e.errnum() != EPERM)
			throw;
		WARN("SKIP: ptrace(PTRACE_TRACEME): " << e.what());
		return;
	}
	c.wait_exec();
	c.follow_execs();
	std::vector<std::string> thread_names;
	bool process_exit_after = false;
	REQUIRE(c.wait_traced(20000, [&](pid_t pid, MapsEvent why) {
		if (why == MapsEvent::thread_exit) {
			CHECK(pid != c.pid());
			std::ifstream comm{"/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/comm"};
			std::string name;
			std::getline(comm, name);
			thread_names.push_back(name);
		} else if (why == MapsEvent::exit && pid == c.pid() && !thread_names.empty()) {
			process_exit_after = true;
		}
	}));
	CHECK(c.status() == 0);
	CHECK(thread_names == std::vector<std::string>{"dyn-thread"});
	CHECK(process_exit_after);
}
#endif
