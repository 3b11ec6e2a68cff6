// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/affinity.hpp>
#include <amupmu/error.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <string>

#include <sched.h>

namespace amupmu {

namespace {

// A dynamically sized cpu_set_t (CPU_ALLOC): room for n CPUs.
class CpuSet {
public:
	explicit CpuSet(std::size_t n) : n_{n}, set_{CPU_ALLOC(n)}
	{
		if (!set_)
			throw_error("CPU_ALLOC", ENOMEM);
		CPU_ZERO_S(size(), set_);
	}
	CpuSet(const CpuSet&) = delete;
	CpuSet& operator=(const CpuSet&) = delete;
	~CpuSet() { CPU_FREE(set_); }

	[[nodiscard]] std::size_t size() const noexcept { return CPU_ALLOC_SIZE(n_); }
	[[nodiscard]] std::size_t cpus() const noexcept { return n_; }
	[[nodiscard]] cpu_set_t* get() const noexcept { return set_; }

private:
	std::size_t n_;
	cpu_set_t* set_;
};

} // namespace

unsigned current_cpu()
{
	const int cpu = ::sched_getcpu();
	if (cpu < 0)
		throw_error("sched_getcpu", errno);
	return static_cast<unsigned>(cpu);
}

std::vector<unsigned> thread_affinity()
{
	// the kernel's mask may be larger than a cpu_set_t: EINVAL until the
	// buffer holds it
	for (std::size_t n = 1024;; n *= 2) {
		const CpuSet set{n};
		if (::sched_getaffinity(0, set.size(), set.get()) != 0) {
			if (errno == EINVAL && n < (std::size_t{1} << 20))
				continue;
			throw_error("sched_getaffinity", errno);
		}
		std::vector<unsigned> out;
		for (std::size_t c = 0; c < set.cpus(); ++c)
			if (CPU_ISSET_S(c, set.size(), set.get()))
				out.push_back(static_cast<unsigned>(c));
		return out;
	}
}

void set_thread_affinity(const std::vector<unsigned>& cpus)
{
	if (cpus.empty())
		throw InvalidArgument{"sched_setaffinity: an empty CPU set", EINVAL};
	unsigned top = 0;
	for (const unsigned c : cpus)
		top = std::max(top, c);
	const CpuSet set{std::size_t{top} + 1};
	for (const unsigned c : cpus)
		CPU_SET_S(c, set.size(), set.get());
	if (::sched_setaffinity(0, set.size(), set.get()) != 0) {
		const int err = errno;
		std::string what = "sched_setaffinity to CPU";
		what += cpus.size() == 1 ? " " : "s ";
		for (std::size_t i = 0; i < cpus.size(); ++i)
			what += (i ? "," : "") + std::to_string(cpus[i]);
		throw_error(what, err);
	}
}

ThreadPin::ThreadPin() : previous_{thread_affinity()}, cpu_{current_cpu()}
{
	set_thread_affinity({cpu_});
}

ThreadPin::ThreadPin(unsigned cpu) : previous_{thread_affinity()}, cpu_{cpu}
{
	set_thread_affinity({cpu_});
}

ThreadPin::~ThreadPin()
{
	try {
		set_thread_affinity(previous_);
	} catch (...) {	// NOLINT(bugprone-empty-catch): a destructor does not throw
	}
}

std::optional<std::vector<unsigned>> parse_cpu_list(std::string_view list)
{
	while (!list.empty() && (list.back() == '\n' || list.back() == ' '))
		list.remove_suffix(1);

	// Far above any NR_CPUS; bounds the work a hostile "0-4294967295" causes.
	constexpr unsigned cpu_limit = 1u << 16;
	std::vector<unsigned> cpus;
	const auto number = [&](std::string_view& s, unsigned& out) {
		const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
		if (ec != std::errc{} || end == s.data())
			return false;
		s.remove_prefix(static_cast<std::size_t>(end - s.data()));
		return true;
	};
	while (!list.empty()) {
		unsigned first = 0;
		unsigned last = 0;
		if (!number(list, first))
			return std::nullopt;
		last = first;
		if (!list.empty() && list.front() == '-') {
			list.remove_prefix(1);
			if (!number(list, last) || last < first)
				return std::nullopt;
		}
		if (last >= cpu_limit)
			return std::nullopt;
		for (unsigned cpu = first; cpu <= last; ++cpu)
			cpus.push_back(cpu);
		if (!list.empty()) {
			if (list.front() != ',' || list.size() == 1)
				return std::nullopt;
			list.remove_prefix(1);
		}
	}
	std::ranges::sort(cpus);
	cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
	return cpus;
}

std::string format_cpu_list(std::span<const unsigned> cpus)
{
	std::string s;
	for (std::size_t i = 0; i < cpus.size();) {
		std::size_t j = i;
		while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
			++j;
		if (!s.empty())
			s += ',';
		s += std::to_string(cpus[i]);
		if (j > i)
			s += "-" + std::to_string(cpus[j]);
		i = j + 1;
	}
	return s;
}

} // namespace amupmu
