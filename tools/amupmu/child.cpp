// SPDX-License-Identifier: GPL-2.0
#include "child.hpp"

#include <amupmu/cpu.hpp>
#include <amupmu/error.hpp>

#include <cerrno>
#include <csignal>
#include <ctime>

#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

namespace amupmu::cli {

namespace {

int decode_status(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 255;
}

} // namespace

Child::Child(const std::vector<std::string>& argv, bool trace) : trace_{trace}, name_{argv.at(0)}
{
	int go[2], err[2];
	if (::pipe2(go, O_CLOEXEC) != 0)
		throw_error("pipe", errno);
	if (::pipe2(err, O_CLOEXEC) != 0) {
		const int e = errno;
		::close(go[0]);
		::close(go[1]);
		throw_error("pipe", e);
	}
	std::vector<char*> args;
	args.reserve(argv.size() + 1);
	for (const std::string& a : argv)
		args.push_back(const_cast<char*>(a.c_str()));
	args.push_back(nullptr);

	pid_ = ::fork();
	if (pid_ < 0) {
		const int e = errno;
		for (const int fd : {go[0], go[1], err[0], err[1]})
			::close(fd);
		throw_error("fork", e);
	}
	if (pid_ == 0) {
		// child: async-signal-safe calls only; the parent ignores SIGINT and
		// SIGQUIT while it waits, the command must not inherit that
		::signal(SIGINT, SIG_DFL);
		::signal(SIGQUIT, SIG_DFL);
		sigset_t chld;
		::sigemptyset(&chld);
		::sigaddset(&chld, SIGCHLD);
		::sigprocmask(SIG_UNBLOCK, &chld, nullptr);
		::close(go[1]);
		::close(err[0]);
		char c;
		if (::read(go[0], &c, 1) != 1)
			::_exit(127);
		if (trace && ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) {
			const int e = errno;
			(void)!::write(err[1], &e, sizeof(e));
			::_exit(127);
		}
		::execvp(args[0], args.data());
		const int e = errno;
		(void)!::write(err[1], &e, sizeof(e));
		::_exit(127);
	}
	::close(go[0]);
	::close(err[1]);
	go_fd_ = go[1];
	err_fd_ = err[0];
}

Child::~Child()
{
	if (go_fd_ >= 0)
		::close(go_fd_);
	if (err_fd_ >= 0)
		::close(err_fd_);
	if (pid_ > 0 && !done_) {
		::kill(pid_, SIGKILL);
		int st;
		while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
		}
	}
}

void Child::start()
{
	const char c = 'g';
	if (::write(go_fd_, &c, 1) != 1)
		throw_error("start " + name_, errno);
	::close(go_fd_);
	go_fd_ = -1;
	int e = 0;
	ssize_t n;
	while ((n = ::read(err_fd_, &e, sizeof(e))) < 0 && errno == EINTR) {
	}
	::close(err_fd_);
	err_fd_ = -1;
	if (n == sizeof(e)) {
		wait();
		throw Error{"exec " + name_, e};
	}
}

void Child::wait_exec()
{
	int st = 0;
	while (::waitpid(pid_, &st, 0) < 0)
		if (errno != EINTR)
			throw_error("waitpid", errno);
	if (!WIFSTOPPED(st)) {
		done_ = true;
		status_ = decode_status(st);
		throw Error{name_ + " ended before it could be traced", ECHILD};
	}
}

void Child::detach()
{
	if (::ptrace(PTRACE_DETACH, pid_, nullptr, nullptr) != 0)
		throw_error("PTRACE_DETACH", errno);
}

void Child::follow_execs()
{
	if (::ptrace(PTRACE_SETOPTIONS, pid_, nullptr, PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL) != 0)
		throw_error("PTRACE_SETOPTIONS", errno);
	if (::ptrace(PTRACE_CONT, pid_, nullptr, nullptr) != 0)
		throw_error("PTRACE_CONT", errno);
}

bool Child::wait_traced(int timeout_ms, const std::function<void()>& on_exec)
{
	if (done_)
		return true;
	timespec t0{};
	::clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!done_) {
		int st = 0;
		const pid_t r = ::waitpid(pid_, &st, WNOHANG);
		if (r < 0 && errno != EINTR)
			throw_error("waitpid", errno);
		if (r == pid_ && WIFSTOPPED(st)) {
			long sig = 0;
			if ((st >> 8) == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
				on_exec();
			else if (WSTOPSIG(st) != SIGTRAP)
				sig = WSTOPSIG(st);
			// NOLINTNEXTLINE(performance-no-int-to-ptr): ptrace(2) takes the signal to deliver in its void* data argument
			if (::ptrace(PTRACE_CONT, pid_, nullptr, reinterpret_cast<void*>(sig)) != 0 && errno != ESRCH)
				throw_error("PTRACE_CONT", errno);
			continue;
		}
		if (r == pid_) {
			done_ = true;
			status_ = decode_status(st);
			break;
		}
		timespec now{};
		::clock_gettime(CLOCK_MONOTONIC, &now);
		const long ms = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms >= timeout_ms)
			return false;
		const timespec nap{0, 1000000};	// 1 ms
		::nanosleep(&nap, nullptr);
	}
	return true;
}

bool Child::wait(int timeout_ms)
{
	if (timeout_ms >= 0)
		return wait_traced(timeout_ms, [] {});	// an untraced child never stops for us
	while (!done_) {
		int st = 0;
		const pid_t r = ::waitpid(pid_, &st, 0);
		if (r == pid_) {
			done_ = true;
			status_ = decode_status(st);
		} else if (r < 0 && errno != EINTR) {
			throw_error("waitpid", errno);
		}
	}
	return true;
}

void refresh_maps(std::vector<Mapping>& maps, std::uint32_t pid)
{
	std::erase_if(maps, [&](const Mapping& m) { return m.pid == pid; });
	for (Mapping& m : read_proc_maps(pid))
		maps.push_back(std::move(m));
}

std::vector<std::string> command_of(Args args, std::size_t first)
{
	std::vector<std::string> cmd(args.begin() + static_cast<std::ptrdiff_t>(first), args.end());
	if (cmd.empty())
		throw UsageError{"no command to run (amupmu <stat|record> [options] -- COMMAND [ARGS])"};
	return cmd;
}

std::vector<unsigned> cpu_set(const Info& info, std::string_view list)
{
	std::vector<unsigned> cpus;
	if (list.empty()) {
		for (const CpuInfo& c : info.cpus)
			if (c.online())
				cpus.push_back(c.cpu);
		return cpus;
	}
	const auto parsed = parse_cpu_list(list);
	if (!parsed || parsed->empty())
		throw UsageError{"bad CPU list '" + std::string{list} + "' (e.g. 0-3,6)"};
	for (const unsigned c : *parsed)
		if (c >= info.cpus.size() || !info.cpus[c].possible())
			throw UsageError{"CPU " + std::to_string(c) + " does not exist (possible: 0-" +
					 std::to_string(info.cpus.size() - 1) + ")"};
	return *parsed;
}

} // namespace amupmu::cli
