// SPDX-License-Identifier: GPL-2.0
#include "child.hpp"

#include <amupmu/affinity.hpp>
#include <amupmu/error.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cerrno>
#include <chrono>
#include <optional>
#include <csignal>
#include <fstream>
#include <iostream>

#include <fcntl.h>
#include <poll.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
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

// the signals whose dispositions a Child changes, and restores
constexpr std::array<int, 5> handled{SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD};

// the command SIGTERM and SIGHUP go to; 0 before and after it runs
volatile sig_atomic_t forward_to = 0;

void pass_on(int sig)
{
	const int saved = errno;
	const pid_t pid = forward_to;
	if (pid > 0) {
		::kill(pid, sig);
	} else {
		// the command has ended: the signal does what it did before
		::signal(sig, SIG_DFL);
		::raise(sig);
	}
	errno = saved;
}

void close_fd(int& fd) noexcept
{
	if (fd >= 0)
		::close(fd);
	fd = -1;
}

int pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

} // namespace

struct Child::SavedSignals {
	std::array<struct sigaction, handled.size()> actions{};
	sigset_t mask{};
};

Child::Child(const std::vector<std::string>& argv, bool trace)
	: trace_{trace}, name_{argv.at(0)}, saved_{std::make_unique<SavedSignals>()}
{
	int go[2], err[2];
	if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go) != 0)
		throw_error("socketpair", errno);
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

	// Held back until the dispositions are set and the pid is known: the
	// handled signals, and SIGCHLD for as long as the child is ours (a
	// signalfd needs it blocked; without one it is harmless).
	sigset_t block;
	::sigemptyset(&block);
	for (const int sig : handled)
		::sigaddset(&block, sig);
	::sigprocmask(SIG_BLOCK, &block, &saved_->mask);
	for (std::size_t i = 0; i < handled.size(); i++)
		::sigaction(handled[i], nullptr, &saved_->actions[i]);
	struct sigaction act {};
	::sigemptyset(&act.sa_mask);
	act.sa_handler = SIG_IGN;
	::sigaction(SIGINT, &act, nullptr);
	::sigaction(SIGQUIT, &act, nullptr);
	act.sa_handler = pass_on;
	act.sa_flags = SA_RESTART;
	for (std::size_t i = 0; i < handled.size(); i++) {
		const int sig = handled[i];
		if ((sig == SIGTERM || sig == SIGHUP) && saved_->actions[i].sa_handler != SIG_IGN)
			::sigaction(sig, &act, nullptr);
	}
	// an inherited SIG_IGN would reap the child for us: waitpid() needs it
	act.sa_handler = SIG_DFL;
	act.sa_flags = 0;
	::sigaction(SIGCHLD, &act, nullptr);

	pid_ = ::fork();
	if (pid_ < 0) {
		const int e = errno;
		for (const int fd : {go[0], go[1], err[0], err[1]})
			::close(fd);
		restore_signals();
		throw_error("fork", e);
	}
	if (pid_ == 0) {
		// child: async-signal-safe calls only; the command gets the
		// dispositions and the mask the tool was started with
		for (std::size_t i = 0; i < handled.size(); i++)
			::sigaction(handled[i], &saved_->actions[i], nullptr);
		sigset_t mask = saved_->mask;
		::sigdelset(&mask, SIGCHLD);	// a caller waiting through a signalfd of its own
		::sigprocmask(SIG_SETMASK, &mask, nullptr);
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
	forward_to = pid_;

	// what wakes the waits: a pidfd is readable once the child has exited;
	// ptrace stops raise SIGCHLD only
	if (!trace_)
		event_fd_ = pidfd_open(pid_);
	if (event_fd_ < 0) {
		sigset_t chld;
		::sigemptyset(&chld);
		::sigaddset(&chld, SIGCHLD);
		event_fd_ = ::signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
		sigchld_fd_ = true;
		if (event_fd_ < 0) {
			const int e = errno;
			close_fd(go_fd_);	// the child's read() fails: it exits 127
			close_fd(err_fd_);
			int st;
			while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
			}
			done_ = true;
			restore_signals();
			throw_error("signalfd", e);
		}
	} else {
		::fcntl(event_fd_, F_SETFD, FD_CLOEXEC);
	}
	// the handled signals may come now (SIGCHLD stays blocked for the signalfd)
	sigset_t mask = saved_->mask;
	::sigaddset(&mask, SIGCHLD);
	::sigprocmask(SIG_SETMASK, &mask, nullptr);
}

void Child::restore_signals() noexcept
{
	forward_to = 0;
	// SIGCHLD first blocked, then its old disposition, then the old mask:
	// a pending SIGCHLD meets the disposition it was meant for
	for (std::size_t i = 0; i < handled.size(); i++)
		::sigaction(handled[i], &saved_->actions[i], nullptr);
	::sigprocmask(SIG_SETMASK, &saved_->mask, nullptr);
}

Child::~Child()
{
	close_fd(go_fd_);
	close_fd(err_fd_);
	if (pid_ > 0 && !done_) {
		::kill(pid_, SIGKILL);
		int st;
		while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
		}
	}
	close_fd(event_fd_);
	restore_signals();
}

void Child::reaped(int st)
{
	done_ = true;
	status_ = decode_status(st);
	forward_to = 0;
}

void Child::start()
{
	const char c = 'g';
	// MSG_NOSIGNAL: a child already gone is an error here, not a SIGPIPE
	const ssize_t sent = ::send(go_fd_, &c, 1, MSG_NOSIGNAL);
	const int send_errno = errno;
	close_fd(go_fd_);
	if (sent != 1) {
		close_fd(err_fd_);
		if (send_errno != EPIPE && send_errno != ECONNRESET)
			throw_error("start " + name_, send_errno);
		wait();
		throw Error{name_ + " ended before it was started (status " + std::to_string(status_) + ")", ECHILD};
	}
	int e = 0;
	ssize_t n;
	while ((n = ::read(err_fd_, &e, sizeof(e))) < 0 && errno == EINTR) {
	}
	close_fd(err_fd_);
	if (n == sizeof(e)) {
		wait();
		throw Error{"exec " + name_, e};
	}
}

bool Child::start_traced(std::string_view who, const std::function<void()>& on_fail)
{
	try {
		start();
		wait_exec();
		return true;
	} catch (const Error& e) {
		on_fail();
		std::cerr << "amupmu " << who << ": " << e.what() << "\n";
		return false;
	}
}

void Child::wait_exec()
{
	int st = 0;
	while (::waitpid(pid_, &st, 0) < 0)
		if (errno != EINTR)
			throw_error("waitpid", errno);
	if (!WIFSTOPPED(st)) {
		reaped(st);
		throw Error{name_ + " ended before it could be traced", ECHILD};
	}
	tracees_.insert_or_assign(pid_, false);
}

void Child::detach()
{
	if (::ptrace(PTRACE_DETACH, pid_, nullptr, nullptr) != 0)
		throw_error("PTRACE_DETACH", errno);
}

namespace {

// the options of every followed thread; the command's own add EXITKILL
constexpr long follow_options = PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_TRACEFORK |
				PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE;

} // namespace

void Child::follow_execs()
{
	const long options = follow_options | PTRACE_O_EXITKILL;
	if (::ptrace(PTRACE_SETOPTIONS, pid_, nullptr, options) != 0)
		throw_error("PTRACE_SETOPTIONS", errno);
	if (::ptrace(PTRACE_CONT, pid_, nullptr, nullptr) != 0)
		throw_error("PTRACE_CONT", errno);
}

bool Child::update(const MapsCallback& on_maps)
{
	// the signalfd emptied first: a SIGCHLD after it makes it readable
	// again for the next poll(), whatever waitpid() below saw
	if (sigchld_fd_) {
		signalfd_siginfo si{};
		while (::read(event_fd_, &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si))) {
		}
	}
	if (!tracees_.empty())
		return update_traced(on_maps);
	while (!done_) {
		int st = 0;
		const pid_t r = ::waitpid(pid_, &st, WNOHANG);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			throw_error("waitpid", errno);
		if (r == 0)
			return false;
		if (WIFSTOPPED(st)) {	// a traced child before wait_exec(): passed on
			const long sig = WSTOPSIG(st) == SIGTRAP ? 0 : WSTOPSIG(st);
			// NOLINTNEXTLINE(performance-no-int-to-ptr): ptrace(2) takes the signal to deliver in its void* data argument
			if (::ptrace(PTRACE_CONT, pid_, nullptr, reinterpret_cast<void*>(sig)) != 0 && errno != ESRCH)
				throw_error("PTRACE_CONT", errno);
			continue;
		}
		reaped(st);
	}
	return true;
}

// Every followed thread asked in turn (__WALL: clones too), until one round
// finds nothing: a new thread is asked in the same round as its parent's
// fork or clone stop.
bool Child::update_traced(const MapsCallback& on_maps)
{
	for (bool more = true; more && !done_;) {
		more = false;
		for (auto it = tracees_.begin(); it != tracees_.end() && !done_;) {
			const pid_t tid = it->first;
			int st = 0;
			const pid_t r = ::waitpid(tid, &st, WNOHANG | __WALL);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0 && errno != ECHILD)
				throw_error("waitpid", errno);
			if (r == 0) {
				++it;
				continue;
			}
			more = true;
			if (r > 0 && WIFSTOPPED(st)) {
				stopped(tid, st, on_maps);	// may add threads: it stays valid
				++it;
				continue;
			}
			// exited, killed, or gone (ECHILD: a thread of a process
			// another thread of which exec'd)
			if (tid == pid_)
				reaped(r > 0 ? st : 0);
			it = tracees_.erase(it);
		}
	}
	return done_;
}

void Child::stopped(pid_t tid, int st, const MapsCallback& on_maps)
{
	const int event = st >> 16;
	const int stopsig = WSTOPSIG(st);
	long sig = 0;
	unsigned long msg = 0;
	switch (event) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		// the new thread, stopped or about to stop with SIGSTOP
		if (::ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &msg) == 0 && msg > 0)
			tracees_.try_emplace(static_cast<pid_t>(msg), true);
		break;
	case PTRACE_EVENT_EXEC:
		// tid is the process now; the thread that exec'd (when another
		// than its leader) is gone
		if (::ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &msg) == 0 && static_cast<pid_t>(msg) != tid)
			tracees_.erase(static_cast<pid_t>(msg));
		if (on_maps)
			on_maps(tid, MapsEvent::exec);
		break;
	case PTRACE_EVENT_EXIT:
		if (on_maps) {
			const pid_t tgid = tgid_of(tid);
			if (tgid != tid)
				on_maps(tid, MapsEvent::thread_exit);
			on_maps(tgid, MapsEvent::exit);
		}
		break;
	case 0:
		if (auto t = tracees_.find(tid); t != tracees_.end() && t->second && stopsig == SIGSTOP) {
			// a new thread's first stop: its options without EXITKILL
			// (detached, not killed, when the tool ends first)
			t->second = false;
			if (::ptrace(PTRACE_SETOPTIONS, tid, nullptr, follow_options) != 0 && errno != ESRCH)
				throw_error("PTRACE_SETOPTIONS", errno);
			if (on_maps && tgid_of(tid) == tid)
				on_maps(tid, MapsEvent::fork);
			break;
		}
		if (stopsig == SIGTRAP)
			break;
		// a signal for the thread, passed on; a group-stop (no siginfo)
		// is not a signal: the thread goes on
		if (siginfo_t si{}; ::ptrace(PTRACE_GETSIGINFO, tid, nullptr, &si) == 0)
			sig = stopsig;
		break;
	default: break;
	}
	// NOLINTNEXTLINE(performance-no-int-to-ptr): ptrace(2) takes the signal to deliver in its void* data argument
	if (::ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void*>(sig)) != 0 && errno != ESRCH)
		throw_error("PTRACE_CONT", errno);
}

int ms_until(std::chrono::steady_clock::time_point t)
{
	const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t - std::chrono::steady_clock::now());
	return ns.count() <= 0 ? 0 : static_cast<int>((ns.count() + 999999) / 1000000);
}

void Child::wait_with(int fd, const std::string& what, const std::function<int()>& on_readable,
		      const MapsCallback& on_maps)
{
	std::array<pollfd, 2> fds{{{.fd = fd, .events = POLLIN, .revents = 0},
				   {.fd = event_fd_, .events = POLLIN, .revents = 0}}};
	// fd left out of poll() (a negative fd is ignored) until then
	std::optional<std::chrono::steady_clock::time_point> hold;
	while (!update(on_maps)) {
		fds[0].fd = hold ? -1 : fd;
		if (::poll(fds.data(), fds.size(), hold ? ms_until(*hold) : -1) < 0 && errno != EINTR)
			throw_error("poll", errno);
		if (fds[0].revents & (POLLERR | POLLNVAL))
			throw Error{"poll of " + what, (fds[0].revents & POLLNVAL) ? EBADF : EINVAL};
		if (hold ? std::chrono::steady_clock::now() >= *hold : (fds[0].revents & POLLIN) != 0) {
			const int ms = on_readable();
			hold.reset();
			if (ms > 0)
				hold = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
		}
	}
}

bool Child::wait_traced(int timeout_ms, const MapsCallback& on_maps)
{
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
	while (!update(on_maps)) {
		int left = -1;
		if (timeout_ms >= 0) {
			left = ms_until(deadline);
			if (left == 0)
				return false;
		}
		pollfd p{.fd = event_fd_, .events = POLLIN, .revents = 0};
		if (::poll(&p, 1, left) < 0 && errno != EINTR)
			throw_error("poll", errno);
	}
	return true;
}

void refresh_maps(std::vector<Mapping>& maps, std::uint32_t pid)
{
	std::erase_if(maps, [&](const Mapping& m) { return m.pid == pid; });
	for (Mapping& m : read_proc_maps(pid))
		maps.push_back(std::move(m));
}

void update_maps(std::vector<Mapping>& maps, pid_t pid, MapsEvent why)
{
	const auto p = static_cast<std::uint32_t>(pid);
	if (why == MapsEvent::thread_exit)
		return;	// a thread: its process's mappings are read at its exit stop
	if (why == MapsEvent::exec) {
		refresh_maps(maps, p);
		return;
	}
	for (Mapping& m : read_proc_maps(p))
		if (std::ranges::find(maps, m) == maps.end())
			maps.push_back(std::move(m));
}

void MapsCoverage::see(std::uint32_t pid, std::optional<std::uint64_t> user_pc)
{
	bool& uncovered = pids_[pid];
	if (!user_pc || uncovered)
		return;
	const auto in = [&](const Mapping& m) { return m.pid == pid && m.start <= *user_pc && *user_pc < m.end; };
	if (last_ != nullptr && in(*last_))
		return;
	const auto m = std::ranges::find_if(maps_, in);
	if (m == maps_.end())
		uncovered = true;
	else
		last_ = &*m;
}

pid_t tgid_of(pid_t tid)
{
	std::ifstream status{"/proc/" + std::to_string(tid) + "/status"};
	for (std::string line; std::getline(status, line);) {
		if (!line.starts_with("Tgid:"))
			continue;
		std::string_view v{line};
		v.remove_prefix(5);
		while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
			v.remove_prefix(1);
		pid_t tgid = 0;
		const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), tgid);
		return ec == std::errc{} && tgid > 0 ? tgid : tid;
	}
	return tid;
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
