// SPDX-License-Identifier: MIT-0
//
// exc_undef: count undefined-instruction exceptions (the EXC_UNDEF event)
// with the library's erratum compensation.
//
// Some cores miscount some events. The library knows those errata
// (amupmu/errata.hpp) and corrects the counts they touch
// (amupmu/compensation.hpp): after Counters::set_compensation() each
// result carries, beside the raw count, the corrected one, the erratum it
// rests on and where the model's parameter comes from (this board's
// calibration, which `amupmu calibrate` measures, or the erratum's
// default); add_errata_companions() counts beside it the events the
// model needs (EXC_TAKEN and EXC_RETURN, for a cross-check). On a
// Cortex-X2 up to r2p1, EXC_UNDEF misses about a sixth of the exceptions
// with ESR_ELx.EC 0x00 (AMUPMU-X2-EXC_UNDEF). On a core no erratum
// touches, nothing is compensated and the program says so.
//
// The workload takes real undefined-instruction exceptions: it executes
// UDF #0 (EC 0x00) N times, and a SIGILL handler steps over each. So the
// truth is known, N; the program prints how far the raw and the
// compensated counts are from it. (A program that knows how many EC 0x00
// exceptions it caused may give the model that count instead:
// CompensationOptions::exc_undef_ec0. Here the truth is kept aside to
// judge the compensation.)
//
// Counts are per CPU: the thread is pinned to one CPU and that CPU is
// counted (Counters::measure_this_thread()), at every exception level, so
// another task's undefined instructions there would count too.
//
//   amupmu-example-exc_undef [N [CPU]]
//     default: 10000 undefined instructions, on the CPU the program starts on
#include <amupmu/affinity.hpp>
#include <amupmu/compensation.hpp>
#include <amupmu/counters.hpp>
#include <amupmu/cpu.hpp>
#include <amupmu/errata.hpp>
#include <amupmu/error.hpp>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <signal.h>
#include <ucontext.h>

namespace {

// While it lives, a SIGILL handler steps over the undefined instruction
// that raised it and counts it; the previous handler again at the end.
class StepOverUndefined {
public:
	StepOverUndefined()
	{
		struct sigaction sa {};
		sa.sa_sigaction = step_over;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		if (::sigaction(SIGILL, &sa, &previous_) != 0)
			amupmu::throw_error("sigaction", errno);
	}
	~StepOverUndefined() { ::sigaction(SIGILL, &previous_, nullptr); }
	StepOverUndefined(const StepOverUndefined&) = delete;
	StepOverUndefined& operator=(const StepOverUndefined&) = delete;

	// SIGILLs caught so far, by any StepOverUndefined
	[[nodiscard]] static std::uint64_t caught() noexcept { return caught_.load(); }

private:
	static void step_over(int, siginfo_t*, void* context)
	{
		auto* uc = static_cast<ucontext_t*>(context);
#if defined(__aarch64__)
		uc->uc_mcontext.pc += 4;	// UDF #0: 4 bytes
#elif defined(__x86_64__)
		uc->uc_mcontext.gregs[REG_RIP] += 2;	// UD2: 2 bytes
#endif
		caught_.fetch_add(1, std::memory_order_relaxed);
	}

	static inline std::atomic<std::uint64_t> caught_{0};
	struct sigaction previous_ {};
};

// The code measured: n undefined instructions, each an exception taken
// to the kernel (EC 0x00 on arm64), a SIGILL and a return.
void undefined_instructions(std::uint64_t n)
{
	for (std::uint64_t i = 0; i < n; ++i) {
#if defined(__aarch64__)
		asm volatile("udf	#0" ::: "memory");
#elif defined(__x86_64__)
		asm volatile("ud2" ::: "memory");	// the host build's
#else
#error "exc_undef: an undefined instruction of this architecture"
#endif
	}
}

using ull = unsigned long long;

// "-17.4 %": how far a count is from the truth
std::string off_by(double count, std::uint64_t truth)
{
	char buf[32];
	const auto t = static_cast<double>(truth);
	std::snprintf(buf, sizeof(buf), "%+.1f %%", t > 0 ? 100.0 * (count - t) / t : 0.0);
	return buf;
}

// What the library did with the count, and on what grounds.
void print_compensation(const amupmu::Compensation& c, std::uint64_t truth, std::uint64_t midr,
			const amupmu::CompensationOptions& options)
{
	const amupmu::Erratum& e = *c.erratum;
	std::printf("erratum      %s (%s %s): %s\n", std::string{e.id}.c_str(), std::string{e.core}.c_str(),
		    amupmu::affected_range(e).c_str(), std::string{e.summary}.c_str());
	std::printf("provenance   %s\n", std::string{e.provenance}.c_str());
	if (c.status == amupmu::CompensationStatus::verify) {
		// a revision after the affected range: the erratum may be
		// fixed there, nobody knows; the raw count is what there is
		std::printf("not compensated: %s is after the affected %s (verify)\n",
			    amupmu::describe_midr(midr).c_str(), amupmu::affected_range(e).c_str());
		return;
	}
	if (c.status != amupmu::CompensationStatus::compensated) {
		std::printf("not compensated: %s\n", std::string{amupmu::to_string(c.status)}.c_str());
		return;
	}
	std::printf("compensated  %-12.0f %s\n", *c.value, off_by(*c.value, truth).c_str());
	// the parameter: this board's calibration (same MIDR) or the default
	const std::string from = c.parameter.calibrated ? "calibrated on this board, " + amupmu::default_calibration_path()
				 : options.calibration ? "the erratum's default (the calibration has none for this core)"
						       : "the erratum's default (no calibration: amupmu calibrate)";
	std::printf("parameter    %s %.4g, %s\n", std::string{e.parameter}.c_str(), c.parameter.value, from.c_str());
	const std::string name{e.parameter};
	if (e.model == amupmu::ErratumModel::undercount_ec0 && c.exc_undef_ec0)
		std::printf("model        raw + %.0f EC 0x00 x (1 - 1/%s)\n", *c.exc_undef_ec0, name.c_str());
	else if (e.model == amupmu::ErratumModel::undercount_ec0)
		std::printf("model        raw x %s (every counted exception taken as EC 0x00)\n", name.c_str());
	if (c.cross_check)	// against EXC_TAKEN and EXC_RETURN, the companions
		std::printf("cross-check  %s: %s\n", c.cross_check->consistent ? "ok" : "FAILED",
			    c.cross_check->note.c_str());
}

} // namespace

int main(int argc, char** argv)
try {
	const std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 10000;
	if (n == 0) {
		std::fprintf(stderr, "usage: %s [N [CPU]] (N above 0)\n", argv[0]);
		return 2;
	}

	amupmu::Counters counters;	// opens /dev/amupmu
	const unsigned cpu = argc > 2 ? static_cast<unsigned>(std::strtoul(argv[2], nullptr, 0)) : amupmu::current_cpu();
	// the CPU first: the errata, the companions and the compensation
	// are those of the core of the first CPU of the set
	counters.set_cpus({cpu});
	counters.add("exc_undef").add_errata_companions();
	const std::uint64_t midr = counters.info().cpus.at(cpu).midr;
	// this board's calibration when `amupmu calibrate` stored one
	// ($AMUPMU_CALIBRATION, /var/lib/amupmu/calibration; none: nullopt),
	// read only on a core with errata, as amupmu stat does: a damaged
	// file is an error only where it would be used
	amupmu::CompensationOptions options{};
	if (!amupmu::errata_for(midr).empty())
		options.calibration = amupmu::load_calibration(amupmu::default_calibration_path());
	counters.set_compensation(options);
	counters.configure();	// the driver's refusals now, before the workload

	const StepOverUndefined handler;
	const std::uint64_t before = StepOverUndefined::caught();
	// pinned to the group's CPU and counted there for the call
	const amupmu::CounterResult& r = counters.measure_this_thread([&] { undefined_instructions(n); });
	const std::uint64_t caught = StepOverUndefined::caught() - before;

	std::printf("CPU %u: %s (MIDR 0x%08llx)\n", cpu, amupmu::describe_midr(midr).c_str(), ull{midr});
	std::printf("%llu undefined instructions, %llu SIGILL caught, in %.3f ms\n", ull{n}, ull{caught},
		    static_cast<double>(r.time_enabled()) / 1e6);
	const std::uint64_t raw = r["exc_undef"];
	std::printf("exc_undef    %-12llu %s\n", ull{raw}, off_by(static_cast<double>(raw), caught).c_str());
	if (raw == 0 && caught > 0)	// 0x81 is optional, and PMCEID does not say
		std::printf("the PMU counted none of the %llu: it does not count EXC_UNDEF\n", ull{caught});
	if (const amupmu::Compensation* c = r.compensation("exc_undef"))
		print_compensation(*c, caught, midr, options);
	else	// nothing to correct, nothing corrected
		std::printf("no erratum of this core touches exc_undef: the raw count stands\n");
	for (std::size_t i = 0; i < r.events().size(); ++i)
		if (r.companion(i))	// added by add_errata_companions()
			std::printf("%-12s %-12llu (companion)\n", r.events()[i].name.c_str(), ull{r.total(i)});
	return 0;
} catch (const amupmu::Error& e) {
	// e.what(): the operation and the errno, e.g.
	// "/dev/amupmu: No such file or directory (ENOENT) ..."
	std::fprintf(stderr, "exc_undef: %s\n", e.what());
	return 1;
} catch (const std::exception& e) {	// what else may escape: std::bad_alloc, ...
	std::fprintf(stderr, "exc_undef: %s\n", e.what());
	return 1;
}
