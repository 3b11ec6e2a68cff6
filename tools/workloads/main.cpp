// SPDX-License-Identifier: GPL-2.0
//
// amupmu-workload: workloads with known behaviour.
//
//   amupmu-workload loop N            2*N instructions (subs; b.ne)
//   amupmu-workload branchy N RATE    N branches, about N*RATE mispredicted
//   amupmu-workload chase STEPS KIB   pointer chase over KIB KiB
//   amupmu-workload triad ELEMS REPS  STREAM triad
//   amupmu-workload memset KIB REPS   seed 003's memset pressure
//   amupmu-workload undef N           N undefined instructions (SIGILL)
//
// Each prints one line to stderr saying what it did, e.g.
// "loop: 1000 iterations, 2000 instructions".
#include "kernels.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace {

using namespace amupmu::workloads;

int usage()
{
	std::fputs("Usage: amupmu-workload loop N | branchy N RATE | chase STEPS KIB | triad ELEMS REPS |\n"
		   "                       memset KIB REPS | undef N\n",
		   stderr);
	return 2;
}

bool number(const char* s, std::uint64_t& out)
{
	const std::string_view v{s};
	const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
	return r.ec == std::errc{} && r.ptr == v.data() + v.size();
}

bool fraction(const char* s, double& out)
{
	char* end = nullptr;
	out = std::strtod(s, &end);
	return end && *end == '\0' && end != s && out >= 0 && out <= 0.5;
}

} // namespace

int main(int argc, char** argv)
{
	if (argc < 3)
		return usage();
	const std::string_view what = argv[1];
	std::uint64_t a = 0, b = 0;
	double rate = 0;
	if (!number(argv[2], a))
		return usage();
	if (what == "loop" && argc == 3) {
		insn_loop(a);
		std::fprintf(stderr, "loop: %llu iterations, %llu instructions\n", static_cast<unsigned long long>(a),
			     static_cast<unsigned long long>(insn_loop_instructions(a)));
	} else if (what == "branchy" && argc == 4 && fraction(argv[3], rate)) {
		const auto sum = branchy(a, rate);
		std::fprintf(stderr, "branchy: %llu branches, about %.0f mispredicted (checksum %llu)\n",
			     static_cast<unsigned long long>(a), static_cast<double>(a) * rate,
			     static_cast<unsigned long long>(sum));
	} else if (what == "chase" && argc == 4 && number(argv[3], b)) {
		const auto end = pointer_chase(a, static_cast<std::size_t>(b) * 1024);
		std::fprintf(stderr, "chase: %llu loads over %llu KiB (end %llu)\n", static_cast<unsigned long long>(a),
			     static_cast<unsigned long long>(b), static_cast<unsigned long long>(end));
	} else if (what == "triad" && argc == 4 && number(argv[3], b)) {
		const double x = stream_triad(static_cast<std::size_t>(a), static_cast<unsigned>(b));
		std::fprintf(stderr, "triad: %llu elements x %llu (a[0] = %g)\n", static_cast<unsigned long long>(a),
			     static_cast<unsigned long long>(b), x);
	} else if (what == "memset" && argc == 4 && number(argv[3], b)) {
		memset_pressure(static_cast<std::size_t>(a) * 1024, static_cast<unsigned>(b));
		std::fprintf(stderr, "memset: %llu KiB x %llu\n", static_cast<unsigned long long>(a),
			     static_cast<unsigned long long>(b));
	} else if (what == "undef" && argc == 3) {
		const auto caught = undefined_instructions(a);
		std::fprintf(stderr, "undef: %llu undefined instructions, %llu SIGILL caught\n",
			     static_cast<unsigned long long>(a), static_cast<unsigned long long>(caught));
		return caught == a ? 0 : 1;
	} else {
		return usage();
	}
	return 0;
}
