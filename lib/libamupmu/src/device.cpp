// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/device.hpp>
#include <amupmu/error.hpp>

#include <linux/amupmu.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace amupmu {

// The C++ mirror of the UAPI must agree with the kernel header.
static_assert(abi_major == AMUPMU_ABI_MAJOR && abi_minor == AMUPMU_ABI_MINOR);
static_assert(command_base == AMUPMU_CMD_BASE);
static_assert(static_cast<unsigned>(Ioctl::pmu_config) == AMUPMU_CMD_PMU_CONFIG - AMUPMU_CMD_BASE);
static_assert(static_cast<unsigned>(Ioctl::pmu_ctl) == AMUPMU_CMD_PMU_CTL - AMUPMU_CMD_BASE);
static_assert(static_cast<unsigned>(Ioctl::pmu_read) == AMUPMU_CMD_PMU_READ - AMUPMU_CMD_BASE);
static_assert(sizeof(amupmu_info) == AMUPMU_INFO_SIZE_VER2);
static_assert(static_cast<unsigned>(Ioctl::spe_config) == AMUPMU_CMD_SPE_CONFIG - AMUPMU_CMD_BASE);
static_assert(static_cast<unsigned>(Ioctl::spe_ctl) == AMUPMU_CMD_SPE_CTL - AMUPMU_CMD_BASE);
static_assert(static_cast<unsigned>(Ioctl::spe_read) == AMUPMU_CMD_SPE_READ - AMUPMU_CMD_BASE);
static_assert(static_cast<std::uint32_t>(SpeOwner::none) == AMUPMU_SPE_OWNER_NONE);
static_assert(static_cast<std::uint32_t>(SpeOwner::kernel) == AMUPMU_SPE_OWNER_KERNEL);
static_assert(static_cast<std::uint32_t>(SpeOwner::amupmu) == AMUPMU_SPE_OWNER_AMUPMU);
static_assert(static_cast<std::uint32_t>(SpeOwner::unclaimed) == AMUPMU_SPE_OWNER_UNCLAIMED);
static_assert(static_cast<unsigned>(Ioctl::amu_read) == AMUPMU_CMD_AMU_READ - AMUPMU_CMD_BASE);
// cpu_entry_size is sizeof: the kernel zero-fills what an older driver
// does not know (an ABI 2.0 driver leaves the AMU fields and frames 0)
static_assert(sizeof(amupmu_cpu_info) == AMUPMU_CPU_INFO_SIZE_VER2);
static_assert(sizeof(amupmu_cpu_info) % 8 == 0 && sizeof(amupmu_cpu_info) <= AMUPMU_CPU_ENTRY_SIZE_MAX);
static_assert(amu_max_counters == AMUPMU_AMU_MAX_COUNTERS);
static_assert(sizeof(amupmu_id_frame) == 56);	// 14 __u32
static_assert(sizeof(IdFrame::pidr) == sizeof(amupmu_id_frame::pidr) &&
	      sizeof(IdFrame::cidr) == sizeof(amupmu_id_frame::cidr));
static_assert(sizeof(CpuInfo::amevtyper0) == sizeof(amupmu_cpu_info::amevtyper0) &&
	      sizeof(CpuInfo::amevtyper1) == sizeof(amupmu_cpu_info::amevtyper1));
static_assert(static_cast<std::uint32_t>(Clock::cntvct) == AMUPMU_CLOCK_CNTVCT);
static_assert(static_cast<std::uint32_t>(Clock::cntpct) == AMUPMU_CLOCK_CNTPCT);
static_assert(static_cast<std::uint64_t>(Feature::pmu) == AMUPMU_FEAT_PMU);
static_assert(static_cast<std::uint64_t>(Feature::pmu_exclusive) == AMUPMU_FEAT_PMU_EXCLUSIVE);
static_assert(static_cast<std::uint64_t>(Feature::amu) == AMUPMU_FEAT_AMU);
static_assert(static_cast<std::uint64_t>(Feature::spe) == AMUPMU_FEAT_SPE);
static_assert(static_cast<std::uint64_t>(Feature::pmu_shared) == AMUPMU_FEAT_PMU_SHARED);
static_assert(static_cast<std::uint64_t>(Feature::mock) == AMUPMU_FEAT_MOCK);
static_assert(static_cast<std::uint32_t>(PmuOwner::none) == AMUPMU_PMU_OWNER_NONE);
static_assert(static_cast<std::uint32_t>(PmuOwner::kernel) == AMUPMU_PMU_OWNER_KERNEL);
static_assert(static_cast<std::uint32_t>(PmuOwner::amupmu) == AMUPMU_PMU_OWNER_AMUPMU);
static_assert(static_cast<std::uint32_t>(CpuFlag::possible) == AMUPMU_CPU_POSSIBLE);
static_assert(static_cast<std::uint32_t>(CpuFlag::online) == AMUPMU_CPU_ONLINE);
static_assert(static_cast<std::uint32_t>(CpuFlag::discovered) == AMUPMU_CPU_DISCOVERED);
static_assert(static_cast<std::uint32_t>(CpuFlag::pmu) == AMUPMU_CPU_PMU);
static_assert(static_cast<std::uint32_t>(CpuFlag::pmceid_ext) == AMUPMU_CPU_PMCEID_EXT);
static_assert(static_cast<std::uint32_t>(CpuFlag::pmmir) == AMUPMU_CPU_PMMIR);
static_assert(static_cast<std::uint32_t>(CpuFlag::amu) == AMUPMU_CPU_AMU);
static_assert(static_cast<std::uint32_t>(CpuFlag::spe) == AMUPMU_CPU_SPE);
static_assert(static_cast<std::uint32_t>(CpuFlag::mock) == AMUPMU_CPU_MOCK);
static_assert(static_cast<std::uint32_t>(CpuFlag::amu_off) == AMUPMU_CPU_AMU_OFF);
static_assert(static_cast<std::uint32_t>(CpuFlag::amu_zero) == AMUPMU_CPU_AMU_ZERO);
static_assert(static_cast<std::uint32_t>(CpuFlag::amu_frame) == AMUPMU_CPU_AMU_FRAME);
static_assert(static_cast<std::uint32_t>(CpuFlag::pmu_frame) == AMUPMU_CPU_PMU_FRAME);

namespace {

constexpr std::string_view info_op = "AMUPMU_INFO";

IdFrame to_id_frame(const amupmu_id_frame& f) noexcept
{
	IdFrame out{.iidr = f.iidr, .devarch = f.devarch, .devid = f.devid, .devtype = f.devtype};
	std::copy(std::begin(f.pidr), std::end(f.pidr), out.pidr.begin());
	std::copy(std::begin(f.cidr), std::end(f.cidr), out.cidr.begin());
	return out;
}

CpuInfo to_cpu_info(const amupmu_cpu_info& c) noexcept
{
	CpuInfo out{
		.cpu = c.cpu,
		.flags = c.flags,
		.midr = c.midr,
		.revidr = c.revidr,
		.id_aa64dfr0 = c.id_aa64dfr0,
		.id_aa64pfr0 = c.id_aa64pfr0,
		.pmcr = c.pmcr,
		.pmceid0 = c.pmceid0,
		.pmceid1 = c.pmceid1,
		.pmmir = c.pmmir,
		.amcfgr = c.amcfgr,
		.amcgcr = c.amcgcr,
		.pmsidr = c.pmsidr,
		.pmu_version = c.pmu_version,
		.pmu_num_counters = c.pmu_num_counters,
		.amu_version = c.amu_version,
		.spe_version = c.spe_version,
		.pmu_counters_free = c.pmu_counters_free,
		.amcr = c.amcr,
		.amcntenset0 = c.amcntenset0,
		.amcntenset1 = c.amcntenset1,
		.amevtyper0 = {},
		.amevtyper1 = {},
		.amu_frame = to_id_frame(c.amu_frame),
		.pmu_frame = to_id_frame(c.pmu_frame),
	};
	std::copy(std::begin(c.amevtyper0), std::end(c.amevtyper0), out.amevtyper0.begin());
	std::copy(std::begin(c.amevtyper1), std::end(c.amevtyper1), out.amevtyper1.begin());
	return out;
}

// One AMUPMU_INFO call; nr_cpus entries are written to cpus.
amupmu_info query_info(int fd, std::vector<amupmu_cpu_info>& cpus)
{
	amupmu_info req{};
	req.size = sizeof(req);
	req.nr_cpus = static_cast<std::uint32_t>(cpus.size());
	if (!cpus.empty()) {
		req.cpu_entry_size = sizeof(amupmu_cpu_info);
		req.cpus_uptr = reinterpret_cast<std::uintptr_t>(cpus.data());
	}
	int ret;
	do
		ret = ::ioctl(fd, AMUPMU_INFO, &req);
	while (ret < 0 && errno == EINTR);
	if (ret < 0)
		throw_error(std::string{info_op}, errno);
	if (req.abi_major != abi_major)
		throw AbiMismatch{std::string{info_op}, req.abi_major, req.abi_minor};
	return req;
}

} // namespace

Device Device::open(std::string_view path)
{
	int err = 0;
	if (auto dev = try_open(path, &err))
		return std::move(*dev);
	throw_error(std::string{path}, err, ErrorContext::open);
}

std::optional<Device> Device::try_open(std::string_view path, int* err)
{
	const std::string p{path};
	const int fd = ::open(p.c_str(), O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		if (err)
			*err = errno;
		return std::nullopt;
	}
	return Device{fd};
}

Device::Device(Device&& other) noexcept : fd_{std::exchange(other.fd_, -1)} {}

Device& Device::operator=(Device&& other) noexcept
{
	if (this != &other) {
		close();
		fd_ = std::exchange(other.fd_, -1);
	}
	return *this;
}

Device::~Device()
{
	close();
}

int Device::release() noexcept
{
	return std::exchange(fd_, -1);
}

void Device::close() noexcept
{
	if (fd_ >= 0)
		::close(std::exchange(fd_, -1));
}

Info Device::info() const
{
	std::vector<amupmu_cpu_info> raw;
	amupmu_info req = query_info(fd_, raw);
	if (req.nr_cpus != 0) {
		raw.resize(req.nr_cpus);
		req = query_info(fd_, raw);
		raw.resize(std::min<std::size_t>(raw.size(), req.nr_cpus));
	}

	Info info{
		.abi_major = req.abi_major,
		.abi_minor = req.abi_minor,
		.features = req.features,
		.supported_ioctls = req.supported_ioctls,
		.pmu_owner = static_cast<PmuOwner>(req.pmu_owner),
		.cpus = {},
		.kernel_el = req.kernel_el,
		.clock = static_cast<Clock>(req.clock),
		.spe_owner = static_cast<SpeOwner>(req.spe_owner),
	};
	info.cpus.reserve(raw.size());
	for (const amupmu_cpu_info& c : raw)
		info.cpus.push_back(to_cpu_info(c));
	return info;
}

} // namespace amupmu
