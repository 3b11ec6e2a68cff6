// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/affinity.hpp>
#include <amupmu/bits.hpp>
#include <amupmu/cpu.hpp>
#include <amupmu/info.hpp>

#include <algorithm>
#include <array>

namespace amupmu {

namespace {

// Bit n of features; the names of sysfs "features".
constexpr std::array<std::string_view, 6> feature_bits = {
	"pmu", "pmu_exclusive", "amu", "spe", "mock", "pmu_shared",
};

// Bit n of supported_ioctls: command command_base + n.
constexpr std::array<std::string_view, 8> command_names = {
	"AMUPMU_INFO", "AMUPMU_PMU_CONFIG", "AMUPMU_PMU_CTL", "AMUPMU_PMU_READ", "AMUPMU_AMU_READ",
	"AMUPMU_SPE_CONFIG", "AMUPMU_SPE_CTL", "AMUPMU_SPE_READ",
};

template <std::size_t N, typename Unknown>
std::vector<std::string> bit_names(std::uint64_t mask, const std::array<std::string_view, N>& names,
				   Unknown unknown)
{
	std::vector<std::string> out;
	for (unsigned n = 0; n < 64; ++n)
		if ((mask >> n) & 1)
			out.push_back(n < N ? std::string{names[n]} : unknown(n));
	return out;
}

} // namespace

std::string counter_mask_list(std::uint32_t mask)
{
	std::vector<unsigned> events;
	for (unsigned n = 0; n < cycle_counter_bit; ++n)
		if ((mask >> n) & 1)
			events.push_back(n);
	std::string s = format_cpu_list(events);
	if ((mask >> cycle_counter_bit) & 1)
		s += (s.empty() ? "" : ", ") + std::string{"cycle"};
	return s.empty() ? "none" : s;
}

std::vector<std::string> feature_names(std::uint64_t features)
{
	return bit_names(features, feature_bits,
			 [](unsigned n) { return "bit" + std::to_string(n); });
}

std::string feature_string(std::uint64_t features)
{
	std::string s;
	for (const std::string& name : feature_names(features))
		s += (s.empty() ? "" : " ") + name;
	return s;
}

std::vector<std::string> ioctl_names(std::uint64_t supported_ioctls)
{
	return bit_names(supported_ioctls, command_names,
			 [](unsigned n) { return "cmd " + hex(command_base + n, 2); });
}

std::string_view to_string(PmuOwner owner) noexcept
{
	switch (owner) {
	case PmuOwner::none: return "none";
	case PmuOwner::kernel: return "kernel";
	case PmuOwner::amupmu: return "amupmu";
	}
	return "unknown";
}

std::string_view describe(PmuOwner owner) noexcept
{
	switch (owner) {
	case PmuOwner::none:
		return "no CPU implements PMUv3";
	case PmuOwner::kernel:
		return "arm_pmu/perf owns the PMU; amupmu counts through perf core (shared mode), or refuses "
		       "PMU requests with ENXIO when shared mode is off (pmu_shared=N, or no arm_pmu registered "
		       "with perf core)";
	case PmuOwner::amupmu:
		return "the devicetree node \"amupmu,pmuv3\" gave amupmu the PMU registers "
		       "and the overflow interrupt";
	}
	return "owner value unknown to this libamupmu version";
}

std::string_view to_string(PmuMode mode) noexcept
{
	switch (mode) {
	case PmuMode::none: return "none";
	case PmuMode::exclusive: return "exclusive";
	case PmuMode::shared: return "shared";
	case PmuMode::refused: return "refused";
	}
	return "unknown";
}

std::string pmu_mode_reason(const Info& info)
{
	switch (info.pmu_mode()) {
	case PmuMode::none:
		return "no CPU implements PMUv3";
	case PmuMode::exclusive:
		return "devicetree node amupmu,pmuv3";
	case PmuMode::shared:
		return "arm_pmu owns the PMU, amupmu counts through perf core (pmu_shared=Y)";
	case PmuMode::refused:
		// abi_major 0: the driver did not say (the netlink dumps)
		if (info.abi_major == abi_major && info.abi_minor < 3)
			return "arm_pmu owns the PMU and this driver (ABI " + std::to_string(info.abi_major) + "." +
			       std::to_string(info.abi_minor) + ") has no shared mode";
		return "the kernel owns the PMU and shared mode is off (pmu_shared=N, or no arm_pmu "
		       "registered with perf core)";
	}
	return "mode unknown to this libamupmu version";
}

std::string pmu_mode_text(const Info& info)
{
	return std::string{to_string(info.pmu_mode())} + ": " + pmu_mode_reason(info);
}

std::string_view to_string(SpeOwner owner) noexcept
{
	switch (owner) {
	case SpeOwner::none: return "none";
	case SpeOwner::kernel: return "kernel";
	case SpeOwner::amupmu: return "amupmu";
	case SpeOwner::unclaimed: return "unclaimed";
	}
	return "unknown";
}

std::string_view describe(SpeOwner owner) noexcept
{
	switch (owner) {
	case SpeOwner::none:
		return "no CPU has SPE that the kernel may program";
	case SpeOwner::kernel:
		return "the kernel's arm_spe_pmu holds the SPE device; amupmu SPE requests are "
		       "refused with ENXIO";
	case SpeOwner::amupmu:
		return "amupmu holds the SPE device (or the test build's mock model is the SPE)";
	case SpeOwner::unclaimed:
		return "no driver holds the SPE device: \"amupmu spe claim\" hands it to amupmu";
	}
	return "owner value unknown to this libamupmu version";
}

std::string_view kernel_el_name(std::uint32_t kernel_el) noexcept
{
	switch (kernel_el) {
	case 1: return "EL1";
	case 2: return "EL2 (VHE)";
	default: return "unknown";
	}
}

std::string_view to_string(Clock clock) noexcept
{
	switch (clock) {
	case Clock::cntvct: return "CNTVCT_EL0";
	case Clock::cntpct: return "CNTPCT_EL0";
	case Clock::unknown: break;
	}
	return "unknown";
}

std::string_view describe(Clock clock) noexcept
{
	switch (clock) {
	case Clock::cntvct: return "virtual count";
	case Clock::cntpct: return "physical count (EL2 timer of a VHE host)";
	case Clock::unknown: break;
	}
	return "not reported";
}

std::string_view backend_name(const Info& info) noexcept
{
	return info.mock() ? "mock" : "hardware";
}

std::string backend_description(const Info& info)
{
	const auto pmu_cpu = [](const CpuInfo& c) { return c.discovered() && c.has_pmu(); };
	const auto emulated = [&](const CpuInfo& c) {
		return pmu_cpu(c) && decode_midr(c.midr).implementer == 0x00;
	};
	std::string s;
	if (std::ranges::any_of(info.cpus, emulated))
		s = "QEMU PMU";
	else if (std::ranges::any_of(info.cpus, pmu_cpu))
		s = "hardware PMU";
	else
		s = "no PMU";
	s += " + hardware ID registers";
	if (info.mock())
		s += " + mock AMU/SPE register model";
	return s;
}

} // namespace amupmu
