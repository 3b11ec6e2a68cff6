// SPDX-License-Identifier: LGPL-2.1-or-later
//
// What AMUPMU_INFO reports: the driver's ABI, features and owners, and
// each CPU's registers (struct amupmu_info and struct amupmu_cpu_info of
// include/uapi/linux/amupmu.h, as C++ value types), with their names.
// Functions not marked noexcept throw only std::bad_alloc.
#ifndef AMUPMU_INFO_HPP
#define AMUPMU_INFO_HPP

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu {

/// The ABI this library speaks (AMUPMU_ABI_MAJOR / AMUPMU_ABI_MINOR).
inline constexpr std::uint32_t abi_major = 2;
inline constexpr std::uint32_t abi_minor = 5;

/// The device node the constructors open by default.
inline constexpr std::string_view default_device_path = "/dev/amupmu";

/// The ioctl number of the first command (Ioctl::info).
inline constexpr unsigned command_base = 0x80;
/// The commands: ioctl number command_base + value, bit value of
/// Info::supported_ioctls.
enum class Ioctl : unsigned {
	info = 0,
	pmu_config = 1,
	pmu_ctl = 2,
	pmu_read = 3,
	amu_read = 4,
	spe_config = 5,
	spe_ctl = 6,
	spe_read = 7,
};

/// Info::features bits (enum amupmu_features).
enum class Feature : std::uint64_t {
	pmu = 1u << 0,
	pmu_exclusive = 1u << 1,
	amu = 1u << 2,
	spe = 1u << 3,
	mock = 1u << 4,
	/// shared mode: the kernel's arm_pmu owns the PMU and PMU sessions
	/// count and sample through the kernel's perf core (ABI 2.3)
	pmu_shared = 1u << 5,
};

/// Who owns the PMUv3 registers (enum amupmu_pmu_owner). A newer driver may
/// report a value not listed here.
enum class PmuOwner : std::uint32_t {
	none = 0,
	kernel = 1,
	amupmu = 2,
};

/// How PMU sessions count (Info::pmu_mode()).
enum class PmuMode : std::uint32_t {
	none = 0,	///< no CPU implements PMUv3
	exclusive = 1,	///< amupmu owns the PMU (devicetree node "amupmu,pmuv3")
	/// arm_pmu owns the PMU, amupmu counts through perf core (module
	/// parameter pmu_shared=Y): perf core places the counters
	shared = 2,
	/// the kernel owns the PMU and shared mode is off (pmu_shared=N, no
	/// arm_pmu registered with perf core, or a driver before ABI 2.3): PMU
	/// sessions are refused with ENXIO (OwnedByKernel)
	refused = 3,
};

/// Who owns SPE (enum amupmu_spe_owner). A newer driver may report a value
/// not listed here.
enum class SpeOwner : std::uint32_t {
	none = 0,	///< no CPU has SPE that EL1 may program
	kernel = 1,	///< the kernel's arm_spe_pmu holds the SPE device
	amupmu = 2,	///< amupmu holds it (or the test build's mock model is the SPE)
	unclaimed = 3,	///< CPUs have SPE, no driver holds the device
};

/// Which generic-timer count a sample's time holds (enum amupmu_clock). A
/// newer driver may report a value not listed here; 0: the driver did not
/// say.
enum class Clock : std::uint32_t {
	unknown = 0,
	cntvct = 1,	///< CNTVCT_EL0, the virtual count (the kernel at EL1)
	cntpct = 2,	///< CNTPCT_EL0, the physical count (a VHE host kernel)
};

/// Bit of CpuInfo::pmu_counters_free that stands for the cycle counter.
inline constexpr std::uint32_t cycle_counter_bit = 31;

/// CpuInfo::flags bits (enum amupmu_cpu_flags).
enum class CpuFlag : std::uint32_t {
	possible = 1u << 0,
	online = 1u << 1,
	discovered = 1u << 2,
	pmu = 1u << 3,
	pmceid_ext = 1u << 4,
	pmmir = 1u << 5,
	amu = 1u << 6,
	spe = 1u << 7,
	mock = 1u << 8,
	amu_off = 1u << 9,	///< AMU implemented but not used (amu=0, no CONFIG_ARM64_AMU_EXTN)
	amu_zero = 1u << 10,	///< core and constant cycle counters read zero at discovery
	amu_frame = 1u << 11,	///< CpuInfo::amu_frame is valid
	pmu_frame = 1u << 12,	///< CpuInfo::pmu_frame is valid
};

/// The AMU's counter groups have at most 16 counters each (AMUPMU_AMU_MAX_COUNTERS).
inline constexpr std::size_t amu_max_counters = 16;

/// Identification registers of a memory-mapped AMU or PMU frame (struct
/// amupmu_id_frame); 0 where the frame does not implement one. Decoded by
/// decode_id_frame() (cpu.hpp).
struct IdFrame {
	std::uint32_t iidr = 0;		///< AMIIDR / PMIIDR (0xE08)
	std::uint32_t devarch = 0;	///< AMDEVARCH / PMDEVARCH (0xFBC)
	std::uint32_t devid = 0;	///< AMDEVID / PMDEVID (0xFC8)
	std::uint32_t devtype = 0;	///< AMDEVTYPE / PMDEVTYPE (0xFCC)
	std::array<std::uint32_t, 5> pidr{};	///< [0..3] from 0xFE0-0xFEC, [4] from 0xFD0
	std::array<std::uint32_t, 4> cidr{};	///< 0xFF0-0xFFC

	friend bool operator==(const IdFrame&, const IdFrame&) = default;
};

/// One CPU as the driver read it on that CPU. Register fields are zero
/// unless discovered().
struct CpuInfo {
	std::uint32_t cpu = 0;
	std::uint32_t flags = 0;
	std::uint64_t midr = 0;
	std::uint64_t revidr = 0;
	std::uint64_t id_aa64dfr0 = 0;
	std::uint64_t id_aa64pfr0 = 0;
	std::uint64_t pmcr = 0;
	std::uint64_t pmceid0 = 0;
	std::uint64_t pmceid1 = 0;
	std::uint64_t pmmir = 0;
	std::uint64_t amcfgr = 0;
	std::uint64_t amcgcr = 0;
	std::uint64_t pmsidr = 0;
	std::uint32_t pmu_version = 0;
	std::uint32_t pmu_num_counters = 0;
	std::uint32_t amu_version = 0;
	std::uint32_t spe_version = 0;
	/// Counters no session holds now: bit n event counter n, bit 31 the
	/// cycle counter. 0 unless amupmu owns the PMU.
	std::uint32_t pmu_counters_free = 0;

	// Valid with has_amu(); zero from a driver before ABI 2.1.
	std::uint64_t amcr = 0;			///< AMCR_EL0
	std::uint32_t amcntenset0 = 0;		///< group 0 counters enabled at discovery
	std::uint32_t amcntenset1 = 0;		///< group 1 counters enabled at discovery
	/// AMEVTYPER0<n>_EL0.evtCount, AMCGCR_EL0.CG0NC of them
	std::array<std::uint16_t, amu_max_counters> amevtyper0{};
	/// AMEVTYPER1<n>_EL0.evtCount, AMCGCR_EL0.CG1NC of them
	std::array<std::uint16_t, amu_max_counters> amevtyper1{};
	IdFrame amu_frame{};	///< with has_amu_frame()
	IdFrame pmu_frame{};	///< with has_pmu_frame()

	/// Free counters, the cycle counter included.
	[[nodiscard]] constexpr unsigned counters_free() const noexcept
	{
		return static_cast<unsigned>(std::popcount(pmu_counters_free));
	}
	[[nodiscard]] constexpr bool cycle_counter_free() const noexcept
	{
		return ((pmu_counters_free >> cycle_counter_bit) & 1) != 0;
	}

	[[nodiscard]] constexpr bool has(CpuFlag f) const noexcept
	{
		return (flags & static_cast<std::uint32_t>(f)) != 0;
	}
	[[nodiscard]] constexpr bool possible() const noexcept { return has(CpuFlag::possible); }
	[[nodiscard]] constexpr bool online() const noexcept { return has(CpuFlag::online); }
	[[nodiscard]] constexpr bool discovered() const noexcept { return has(CpuFlag::discovered); }
	[[nodiscard]] constexpr bool has_pmu() const noexcept { return has(CpuFlag::pmu); }
	[[nodiscard]] constexpr bool pmceid_ext() const noexcept { return has(CpuFlag::pmceid_ext); }
	[[nodiscard]] constexpr bool has_pmmir() const noexcept { return has(CpuFlag::pmmir); }
	[[nodiscard]] constexpr bool has_amu() const noexcept { return has(CpuFlag::amu); }
	[[nodiscard]] constexpr bool has_spe() const noexcept { return has(CpuFlag::spe); }
	[[nodiscard]] constexpr bool mock() const noexcept { return has(CpuFlag::mock); }
	[[nodiscard]] constexpr bool amu_off() const noexcept { return has(CpuFlag::amu_off); }
	[[nodiscard]] constexpr bool amu_zero() const noexcept { return has(CpuFlag::amu_zero); }
	[[nodiscard]] constexpr bool has_amu_frame() const noexcept { return has(CpuFlag::amu_frame); }
	[[nodiscard]] constexpr bool has_pmu_frame() const noexcept { return has(CpuFlag::pmu_frame); }
	/// The AMU is implemented and amupmu reads it.
	[[nodiscard]] constexpr bool amu_usable() const noexcept { return has_amu() && !amu_off(); }

	friend bool operator==(const CpuInfo&, const CpuInfo&) = default;
};

/// The AMUPMU_INFO handshake: driver ABI, features, and one entry per
/// possible CPU number (cpus[i].cpu == i).
struct Info {
	std::uint32_t abi_major = 0;
	std::uint32_t abi_minor = 0;
	std::uint64_t features = 0;
	std::uint64_t supported_ioctls = 0;
	PmuOwner pmu_owner = PmuOwner::none;
	std::vector<CpuInfo> cpus;
	/// The exception level the kernel runs at: 2 on a VHE host (the kernel
	/// is the hypervisor), 1 otherwise; 0 when the driver did not say.
	std::uint32_t kernel_el = 0;
	/// The counter Sample::time reads.
	Clock clock = Clock::unknown;
	/// Who owns SPE (none from a driver before ABI 2.2).
	SpeOwner spe_owner = SpeOwner::none;

	[[nodiscard]] constexpr bool has(Feature f) const noexcept
	{
		return (features & static_cast<std::uint64_t>(f)) != 0;
	}
	[[nodiscard]] constexpr bool has_pmu() const noexcept { return has(Feature::pmu); }
	[[nodiscard]] constexpr bool pmu_exclusive() const noexcept { return has(Feature::pmu_exclusive); }
	[[nodiscard]] constexpr bool has_amu() const noexcept { return has(Feature::amu); }
	[[nodiscard]] constexpr bool has_spe() const noexcept { return has(Feature::spe); }
	[[nodiscard]] constexpr bool mock() const noexcept { return has(Feature::mock); }
	/// PMU sessions count through the kernel's perf core.
	[[nodiscard]] constexpr bool pmu_shared() const noexcept { return has(Feature::pmu_shared); }
	/// Whether and how PMU sessions count here.
	[[nodiscard]] constexpr PmuMode pmu_mode() const noexcept
	{
		if (pmu_exclusive())
			return PmuMode::exclusive;
		if (pmu_shared())
			return PmuMode::shared;
		if (pmu_owner == PmuOwner::kernel)
			return PmuMode::refused;
		return PmuMode::none;
	}
	/// The kernel runs at EL2 with VHE.
	[[nodiscard]] constexpr bool vhe() const noexcept { return kernel_el == 2; }
	[[nodiscard]] constexpr bool supports(Ioctl c) const noexcept
	{
		return ((supported_ioctls >> static_cast<unsigned>(c)) & 1) != 0;
	}

	friend bool operator==(const Info&, const Info&) = default;
};

/// A counter mask (CpuInfo::pmu_counters_free) as a list: "0-5, cycle",
/// "cycle", "none".
[[nodiscard]] std::string counter_mask_list(std::uint32_t mask);

/// Names as in sysfs "features": "pmu pmu_exclusive amu spe mock
/// pmu_shared"; unknown bits are named "bit<n>".
[[nodiscard]] std::vector<std::string> feature_names(std::uint64_t features);
/// feature_names() joined by single spaces (the sysfs "features" line).
[[nodiscard]] std::string feature_string(std::uint64_t features);

/// Command names of the set bits ("AMUPMU_INFO"; unknown: "cmd 0x81").
[[nodiscard]] std::vector<std::string> ioctl_names(std::uint64_t supported_ioctls);

/// "none" | "kernel" | "amupmu" (as in sysfs pmu_owner), "unknown" otherwise.
[[nodiscard]] std::string_view to_string(PmuOwner owner) noexcept;
/// What the ownership means for users of amupmu, one sentence.
[[nodiscard]] std::string_view describe(PmuOwner owner) noexcept;

/// "none" | "exclusive" | "shared" | "refused", "unknown" otherwise.
[[nodiscard]] std::string_view to_string(PmuMode mode) noexcept;
/// Why info's PMU mode is in force, one phrase without the mode's name:
/// "devicetree node amupmu,pmuv3", "no CPU implements PMUv3", ...
[[nodiscard]] std::string pmu_mode_reason(const Info& info);
/// to_string(info.pmu_mode()) + ": " + pmu_mode_reason(info), as `amupmu
/// info` prints it.
[[nodiscard]] std::string pmu_mode_text(const Info& info);

/// "none" | "kernel" | "amupmu" | "unclaimed", "unknown" otherwise.
[[nodiscard]] std::string_view to_string(SpeOwner owner) noexcept;
/// What the SPE ownership means for users of amupmu, one sentence.
[[nodiscard]] std::string_view describe(SpeOwner owner) noexcept;

/// "EL2 (VHE)", "EL1", or "unknown" (0 or another value).
[[nodiscard]] std::string_view kernel_el_name(std::uint32_t kernel_el) noexcept;

/// "CNTVCT_EL0", "CNTPCT_EL0", or "unknown".
[[nodiscard]] std::string_view to_string(Clock clock) noexcept;
/// "virtual count", "physical count (EL2 timer of a VHE host)", or
/// "not reported".
[[nodiscard]] std::string_view describe(Clock clock) noexcept;

/// "mock" when the AMU/SPE registers come from the mock model, else
/// "hardware" (as in sysfs backend).
[[nodiscard]] std::string_view backend_name(const Info& info) noexcept;
/// What the numbers come from, e.g. "QEMU PMU + hardware ID registers".
[[nodiscard]] std::string backend_description(const Info& info);

} // namespace amupmu

#endif
