// SPDX-License-Identifier: GPL-2.0
//
// Workload kernels with known behaviour, for `amupmu-workload`, `amupmu
// calibrate`, the tests and the demo.
#ifndef AMUPMU_WORKLOADS_KERNELS_HPP
#define AMUPMU_WORKLOADS_KERNELS_HPP

#include <cstddef>
#include <cstdint>

namespace amupmu::workloads {

/// n iterations of "subs; b.ne" (aarch64) / "dec; jnz" (x86-64): exactly
/// 2 * n instructions retired at EL0, n branches.
void insn_loop(std::uint64_t n) noexcept;
[[nodiscard]] constexpr std::uint64_t insn_loop_instructions(std::uint64_t n) noexcept
{
	return 2 * n;
}

/// n conditional branches; a fraction 2 * mispredict of them go a random
/// way (a predictor gets half of those wrong), the others always the same
/// way: about n * mispredict mispredictions. mispredict in [0, 0.5].
/// Returns a checksum (keeps the work alive).
std::uint64_t branchy(std::uint64_t n, double mispredict, std::uint64_t seed = 1) noexcept;

/// steps dependent loads around a random cycle of 64-byte nodes spanning
/// bytes (Sattolo's permutation): one cache line per load. Allocates the
/// buffer; returns the final index.
std::uint64_t pointer_chase(std::uint64_t steps, std::size_t bytes);

/// STREAM triad a[i] = b[i] + s * c[i] over elems doubles, reps times.
/// Returns a[0] (keeps the work alive).
double stream_triad(std::size_t elems, unsigned reps);

/// Seed 003 §4.3: memset of 64-byte chunks across bytes, reps times.
void memset_pressure(std::size_t bytes, unsigned reps);

/// Executes n permanently undefined instructions (UDF #0 on aarch64, UD2
/// on x86-64: ESR_EL1.EC == 0x00 on arm64), each caught by a SIGILL
/// handler that steps over it. Returns the number of SIGILLs the handler
/// took (n unless something else interfered).
std::uint64_t undefined_instructions(std::uint64_t n);

} // namespace amupmu::workloads

#endif
