// SPDX-License-Identifier: LGPL-2.1-or-later
//
// amupmu::Amu: the Activity Monitors of a CPU set (AMUPMU_AMU_READ), and
// the figures two reads give per CPU and summed:
//   frequency     ΔCPU_CYCLES / ΔCNT_CYCLES × timer_freq (Hz, over the
//                 time the core was not in WFI/WFE)
//   ipc           ΔINST_RETIRED / ΔCPU_CYCLES
//   mem_stall     ΔSTALL_BACKEND_MEM / ΔCPU_CYCLES
//   active        ΔCNT_CYCLES / Δtime (both in system-counter ticks: the
//                 share of wall time the core was not in WFI/WFE)
// Each counter is found through the event types of AMEVTYPER0 (never by
// position). A figure is produced only from valid counts: a counter not
// enabled (AMCNTENSET0 clear in either read) or not implemented gives
// "not counted", an offline CPU in either read gives no figure for the
// interval, an AMU erratum that makes CNT_CYCLES unreliable flags the
// figures that divide by it; a change of restarts says the interval spans
// a power-down (the driver added the values back: still valid).
#ifndef AMUPMU_AMU_HPP
#define AMUPMU_AMU_HPP

#include <amupmu/device.hpp>
#include <amupmu/errata.hpp>
#include <amupmu/info.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu {

/// enum amupmu_amu_state, AmuCpuReading::state.
namespace amu_state {
inline constexpr std::uint32_t offline = 1u << 0;	///< the values it had when it went down
inline constexpr std::uint32_t no_amu = 1u << 1;	///< no AMU, or amupmu does not use it
inline constexpr std::uint32_t undiscovered = 1u << 2;	///< not online since the module was loaded
} // namespace amu_state

/// sizeof(struct amupmu_amu_cpu) of ABI 2.1 (AMUPMU_AMU_CPU_SIZE_VER0).
inline constexpr std::size_t amu_cpu_entry_size = 296;

/// One CPU's counters from one AMUPMU_AMU_READ. Fixed-size.
struct AmuCpuReading {
	unsigned cpu = 0;
	std::uint32_t state = 0;	///< amu_state::*; 0: read now, on the CPU
	std::uint64_t time = 0;		///< generic timer count of the read
	std::uint32_t nr_group0 = 0;
	std::uint32_t nr_group1 = 0;
	std::uint32_t enabled0 = 0;	///< AMCNTENSET0_EL0 at the read
	std::uint32_t enabled1 = 0;	///< AMCNTENSET1_EL0 at the read
	std::uint32_t restarts = 0;	///< counters found restarted after a power-down
	std::array<std::uint64_t, amu_max_counters> group0{};
	std::array<std::uint64_t, amu_max_counters> group1{};

	/// The count of the counter of event type event: the group 0 counter
	/// whose AMEVTYPER0 type it is (amu_ev::cpu_cycles, cnt_cycles,
	/// inst_retired, stall_backend_mem), else the group 1 counter whose
	/// AMEVTYPER1 type it is. cpu is this CPU's entry of AMUPMU_INFO
	/// (Amu::info().cpus[cpu]), which holds the types. nullopt when no
	/// counter read has the type, it was not enabled at the read
	/// (AMCNTENSET0/1_EL0), group 1 reads zero (AMCR_EL0.CG1RZ), or the
	/// CPU has no usable AMU (amu_state::no_amu, undiscovered); an offline
	/// CPU's values are those it had when it went down.
	[[nodiscard]] std::optional<std::uint64_t> counter(std::uint16_t event, const CpuInfo& cpu) const noexcept;

	friend bool operator==(const AmuCpuReading&, const AmuCpuReading&) = default;
};

/// The index of the counter whose event type (types: AMEVTYPER0 or
/// AMEVTYPER1's, of which the first n are implemented) is event; nullopt
/// when none is.
[[nodiscard]] std::optional<unsigned> amu_counter_of(std::span<const std::uint16_t> types, unsigned n,
						     std::uint16_t event) noexcept;

/// Every CPU of the set from one AMUPMU_AMU_READ, ascending.
struct AmuReading {
	std::uint64_t timer_freq = 0;	///< CNTFRQ_EL0: Hz of time and of CNT_CYCLES
	std::vector<AmuCpuReading> cpus{};

	/// The reading of cpu, or nullptr when it is not in the set.
	[[nodiscard]] const AmuCpuReading* find(unsigned cpu) const noexcept;
};

/// Decodes nr_entries entries of entry_size bytes (each a struct
/// amupmu_amu_cpu) into out[0, nr_entries). Allocates nothing. Throws
/// Error (EBADMSG) when raw is too short, entry_size is below
/// amu_cpu_entry_size, out too small, or a counter count exceeds 16.
void decode_amu_read(std::span<const std::byte> raw, std::uint32_t nr_entries, std::size_t entry_size,
		     std::span<AmuCpuReading> out);

/// Move-only owner of /dev/amupmu reading the AMU counters of a CPU set.
///
/// Thread safety: one object per thread (read() reuses the object's
/// buffer); distinct objects may be used concurrently. The const members
/// only read what open() stored.
class [[nodiscard]] Amu {
public:
	/// Opens path. cpus: ascending CPU numbers (empty: every possible
	/// CPU). Throws DeviceMissing, and Unsupported (EOPNOTSUPP) when the
	/// driver predates AMUPMU_AMU_READ (ABI 2.1).
	[[nodiscard]] static Amu open(std::vector<unsigned> cpus = {},
				      std::string_view path = default_device_path);
	/// The same on an open device, which the object then owns.
	[[nodiscard]] static Amu create(Device device, std::vector<unsigned> cpus = {});

	Amu(const Amu&) = delete;
	Amu& operator=(const Amu&) = delete;
	Amu(Amu&&) noexcept = default;
	Amu& operator=(Amu&&) noexcept = default;
	~Amu() = default;

	/// One AMUPMU_AMU_READ of every CPU of the set. Allocates only the
	/// first time out is used. Throws Unsupported (EOPNOTSUPP: no CPU has
	/// a usable AMU), PermissionDenied (EACCES: CAP_PERFMON), Unavailable
	/// (ENODEV), InvalidArgument.
	void read(AmuReading& out);
	/// read() into a new reading.
	[[nodiscard]] AmuReading read();

	/// AMUPMU_INFO at open: the event types, MIDRs and frames of the CPUs.
	[[nodiscard]] const Info& info() const noexcept { return info_; }
	/// The CPU set, ascending.
	[[nodiscard]] std::span<const unsigned> cpus() const noexcept { return cpus_; }
	/// The device's file descriptor.
	[[nodiscard]] int fd() const noexcept { return device_.fd(); }

private:
	Amu(Device device, std::vector<unsigned> cpus);

	Device device_;
	Info info_{};
	std::vector<unsigned> cpus_{};
	std::vector<std::uint64_t> mask_{};
	std::vector<std::byte> raw_{};
};

// ---------------------------------------------------------------- figures

/// Why a figure has no value (or, for flagged, why it is not trusted).
enum class AmuWhy {
	ok,
	not_counted,	///< a counter it needs is not implemented or not enabled
	erratum,	///< an erratum makes a counter it needs unreliable
	offline,	///< the CPU was offline at either read
	no_amu,		///< the CPU has no usable AMU (or was never discovered)
	no_cycles,	///< its denominator did not advance (idle all the interval)
};
/// "ok", "not counted", "erratum", "offline", "no AMU", "no cycles".
[[nodiscard]] std::string_view to_string(AmuWhy why) noexcept;

/// One derived figure: value() when why is ok.
struct AmuFigure {
	double value = 0;
	AmuWhy why = AmuWhy::no_amu;
	unsigned cpus = 0;	///< summed row: CPUs that contributed

	/// The figure has a value.
	[[nodiscard]] bool ok() const noexcept { return why == AmuWhy::ok; }
	/// The value, or nullopt when not ok().
	[[nodiscard]] std::optional<double> get() const noexcept
	{
		return ok() ? std::optional<double>{value} : std::nullopt;
	}
};

/// Why a counter an interval's figures need was not counted on a CPU.
enum class AmuNotCountedWhy : std::uint8_t {
	no_counter,		///< no group 0 counter has the event type (AMEVTYPER0)
	not_enabled,		///< the counter is not enabled (AMCNTENSET0_EL0) in either read
	group1_reads_zero,	///< AMCR_EL0.CG1RZ (AMUv1p1): group 1 reads zero below the highest EL
};

/// A counter not counted on a CPU, and why.
struct AmuNotCounted {
	AmuNotCountedWhy why = AmuNotCountedWhy::no_counter;
	std::uint16_t event = 0;	///< the architected event (group1_reads_zero: 0, every group 1 counter)
	unsigned counter = 0;		///< not_enabled: the group 0 counter's index

	friend bool operator==(const AmuNotCounted&, const AmuNotCounted&) = default;
};

/// One auxiliary (group 1) counter's delta on one CPU.
struct AmuAuxDelta {
	std::uint16_t event = 0;		///< AMEVTYPER1<n>.evtCount
	std::optional<std::uint64_t> delta{};	///< nullopt: not enabled
};

/// One CPU over the interval between two reads.
struct AmuCpuDelta {
	unsigned cpu = 0;
	AmuWhy state = AmuWhy::ok;	///< ok, offline or no_amu
	bool restarted = false;		///< restarts changed: spans a power-down
	std::uint32_t restarts = 0;	///< power-downs in the interval
	double seconds = 0;		///< Δtime / timer_freq
	std::uint64_t ticks = 0;	///< Δtime
	/// Deltas of the architected counters (nullopt: not counted).
	std::optional<std::uint64_t> cpu_cycles{}, cnt_cycles{}, inst_retired{}, stall_backend_mem{};
	std::vector<AmuAuxDelta> aux{};
	AmuFigure frequency{};		///< Hz
	AmuFigure ipc{};
	AmuFigure mem_stall{};		///< share, 0..1
	AmuFigure active{};		///< share, 0..1
	std::string erratum{};		///< id of the AMU erratum that applies
	/// The counters not counted (CPU_CYCLES, CNT_CYCLES, INST_RETIRED,
	/// STALL_BACKEND_MEM, then group 1), each with why.
	std::vector<AmuNotCounted> not_counted{};
	/// CpuFlag::amu_zero: the cycle counters read zero at discovery
	/// (firmware left them disabled or reset).
	bool amu_zero = false;
};

/// The interval: per CPU and summed. What limits a figure is in each
/// CPU's row (state, restarted, erratum, not_counted, amu_zero).
struct AmuReport {
	std::string cpus{};			///< "0-3"
	bool mock = false;			///< the mock AMU model's figures (a test build), not hardware's
	std::uint64_t timer_freq = 0;
	std::vector<AmuCpuDelta> per_cpu{};
	/// Summed row: frequency = ΣΔCPU_CYCLES / ΣΔCNT_CYCLES × f, ipc and
	/// mem_stall over ΣΔCPU_CYCLES, active = ΣΔCNT_CYCLES / ΣΔtime, each over
	/// the CPUs whose figure is ok (AmuFigure::cpus of them).
	AmuCpuDelta total{};

	/// The row of cpu, or nullptr when it is not in the set.
	[[nodiscard]] const AmuCpuDelta* find(unsigned cpu) const noexcept;
};

/// The AMU errata (ErratumUnit::amu) that apply to midr: figures that
/// divide by CNT_CYCLES are flagged on such a CPU. nullptr when none.
[[nodiscard]] const Erratum* amu_erratum_for(std::uint64_t midr) noexcept;

/// The interval between two reads of the same CPU set. info supplies the
/// event types (AMEVTYPER0/1), the MIDR (errata) and the backend. Pure:
/// the host tests feed it recorded reads.
[[nodiscard]] AmuReport amu_interval(const Info& info, const AmuReading& before, const AmuReading& after);

} // namespace amupmu

#endif
