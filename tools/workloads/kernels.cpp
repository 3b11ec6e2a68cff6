// SPDX-License-Identifier: GPL-2.0
#include "kernels.hpp"

#include <atomic>
#include <csignal>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include <signal.h>
#include <ucontext.h>

namespace amupmu::workloads {

void insn_loop(std::uint64_t n) noexcept
{
	if (n == 0)
		return;
#if defined(__aarch64__)
	asm volatile("1:	subs	%0, %0, #1\n"
		     "	b.ne	1b\n"
		     : "+r"(n)
		     :
		     : "cc", "memory");
#elif defined(__x86_64__)
	asm volatile("1:	dec	%0\n"
		     "	jnz	1b\n"
		     : "+r"(n)
		     :
		     : "cc", "memory");
#else
#error "insn_loop: aarch64 or x86-64"
#endif
}

std::uint64_t branchy(std::uint64_t n, double mispredict, std::uint64_t seed) noexcept
{
	if (mispredict < 0)
		mispredict = 0;
	if (mispredict > 0.5)
		mispredict = 0.5;
	// threshold on a 32-bit random value: below it the direction is random
	const auto random_below = static_cast<std::uint64_t>(2 * mispredict * 4294967296.0);
	std::uint64_t x = seed | 1;
	volatile std::uint64_t taken = 0, not_taken = 0;
	for (std::uint64_t i = 0; i < n; ++i) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		const bool random = (x & 0xFFFFFFFF) < random_below;
		const bool dir = random ? ((x >> 40) & 1) != 0 : true;
		if (dir)
			taken = taken + 1;
		else
			not_taken = not_taken + 1;
	}
	return taken * 3 + not_taken;
}

std::uint64_t pointer_chase(std::uint64_t steps, std::size_t bytes)
{
	constexpr std::size_t line = 64;
	const std::size_t nodes = bytes / line < 2 ? 2 : bytes / line;
	std::vector<std::size_t> order(nodes);
	std::iota(order.begin(), order.end(), std::size_t{0});
	std::mt19937_64 rng{12345};
	// Sattolo: one cycle through every node
	for (std::size_t i = nodes - 1; i > 0; --i) {
		std::uniform_int_distribution<std::size_t> d{0, i - 1};
		std::swap(order[i], order[d(rng)]);
	}
	struct alignas(line) Node {
		std::size_t next;
	};
	std::vector<Node> ring(nodes);
	for (std::size_t i = 0; i < nodes; ++i)
		ring[order[i]].next = order[(i + 1) % nodes];
	volatile std::size_t at = 0;
	std::size_t p = at;
	for (std::uint64_t i = 0; i < steps; ++i)
		p = ring[p].next;
	at = p;
	return at;
}

double stream_triad(std::size_t elems, unsigned reps)
{
	std::vector<double> a(elems, 0.0), b(elems, 1.0), c(elems, 2.0);
	const double s = 3.0;
	for (unsigned r = 0; r < reps; ++r) {
		for (std::size_t i = 0; i < elems; ++i)
			a[i] = b[i] + s * c[i];
		asm volatile("" : : "r"(a.data()) : "memory");
	}
	return elems ? a[0] : 0.0;
}

void memset_pressure(std::size_t bytes, unsigned reps)
{
	const std::unique_ptr<unsigned char[]> p{new unsigned char[bytes + 64]};
	for (unsigned r = 0; r < reps; ++r) {
		for (std::size_t off = 0; off + 64 <= bytes; off += 64)
			std::memset(p.get() + off + 1, static_cast<int>(r), 64);	// unaligned, as in the seed
		asm volatile("" : : "r"(p.get()) : "memory");
	}
}

namespace {

std::atomic<std::uint64_t> sigills{0};

void on_sigill(int, siginfo_t*, void* ctx)
{
	auto* uc = static_cast<ucontext_t*>(ctx);
#if defined(__aarch64__)
	uc->uc_mcontext.pc += 4;
#elif defined(__x86_64__)
	uc->uc_mcontext.gregs[REG_RIP] += 2;
#endif
	sigills.fetch_add(1, std::memory_order_relaxed);
}

} // namespace

std::uint64_t undefined_instructions(std::uint64_t n)
{
	struct sigaction sa{}, old{};
	sa.sa_sigaction = on_sigill;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGILL, &sa, &old);
	const std::uint64_t before = sigills.load();
	for (std::uint64_t i = 0; i < n; ++i) {
#if defined(__aarch64__)
		asm volatile(".inst 0x00000000" ::: "memory");	// UDF #0
#elif defined(__x86_64__)
		asm volatile("ud2" ::: "memory");
#endif
	}
	sigaction(SIGILL, &old, nullptr);
	return sigills.load() - before;
}

} // namespace amupmu::workloads
