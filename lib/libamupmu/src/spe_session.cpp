// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/bits.hpp>
#include <amupmu/error.hpp>
#include <amupmu/spe.hpp>
#include <amupmu/spe_session.hpp>

#include "cpumask.hpp"
#include "poll.hpp"

#include <linux/amupmu.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>

#include <sys/ioctl.h>
#include <unistd.h>

namespace amupmu {

static_assert(sizeof(amupmu_spe_config) == AMUPMU_SPE_CONFIG_SIZE_VER0);
static_assert(sizeof(amupmu_spe_ctl) == AMUPMU_SPE_CTL_SIZE_VER0);
static_assert(sizeof(amupmu_spe_read) == AMUPMU_SPE_READ_SIZE_VER0);
static_assert(sizeof(amupmu_spe_cpu) == AMUPMU_SPE_CPU_SIZE_VER0);
static_assert(sizeof(amupmu_spe_buf_header) == spe_buf_header_size);
static_assert(spe_buf_pages_max == AMUPMU_SPE_BUF_PAGES_MAX);
// SpeCpuStatus is read in place: the same layout as struct amupmu_spe_cpu
static_assert(sizeof(SpeCpuStatus) == sizeof(amupmu_spe_cpu));
static_assert(offsetof(SpeCpuStatus, cpu) == offsetof(amupmu_spe_cpu, cpu) &&
	      offsetof(SpeCpuStatus, state) == offsetof(amupmu_spe_cpu, state) &&
	      offsetof(SpeCpuStatus, bytes) == offsetof(amupmu_spe_cpu, bytes) &&
	      offsetof(SpeCpuStatus, records) == offsetof(amupmu_spe_cpu, records) &&
	      offsetof(SpeCpuStatus, lost_bytes) == offsetof(amupmu_spe_cpu, lost_bytes) &&
	      offsetof(SpeCpuStatus, truncations) == offsetof(amupmu_spe_cpu, truncations) &&
	      offsetof(SpeCpuStatus, collisions) == offsetof(amupmu_spe_cpu, collisions) &&
	      offsetof(SpeCpuStatus, faults) == offsetof(amupmu_spe_cpu, faults) &&
	      offsetof(SpeCpuStatus, last_pmbsr) == offsetof(amupmu_spe_cpu, last_pmbsr) &&
	      offsetof(SpeCpuStatus, events) == offsetof(amupmu_spe_cpu, events));
static_assert(spe_state::enabled == AMUPMU_SPE_ENABLED && spe_state::offline == AMUPMU_SPE_OFFLINE &&
	      spe_state::fault == AMUPMU_SPE_FAULT && spe_state::discarding == AMUPMU_SPE_DISCARDING);
// the type bits are PMSFCR_EL1's from bit 16 (TYPE) and bit 48 (TYPEm)
static_assert(std::uint64_t{spe_op::branch} << 16 == AMUPMU_SPE_PMSFCR_B &&
	      std::uint64_t{spe_op::load} << 16 == AMUPMU_SPE_PMSFCR_LD &&
	      std::uint64_t{spe_op::store} << 16 == AMUPMU_SPE_PMSFCR_ST &&
	      std::uint64_t{spe_op::fp} << 16 == AMUPMU_SPE_PMSFCR_FP &&
	      std::uint64_t{spe_op::simd} << 16 == AMUPMU_SPE_PMSFCR_SIMD);
static_assert(std::uint64_t{spe_op::branch} << 48 == AMUPMU_SPE_PMSFCR_BM &&
	      std::uint64_t{spe_op::simd} << 48 == AMUPMU_SPE_PMSFCR_SIMDM);
static_assert(static_cast<std::uint32_t>(SpeClock::physical) == AMUPMU_SPE_PCT_PHYSICAL &&
	      static_cast<std::uint32_t>(SpeClock::guest_physical) == AMUPMU_SPE_PCT_GUEST_PHYSICAL);

namespace {

[[noreturn]] void bad_config(const std::string& what)
{
	throw InvalidArgument{"SPE configuration: " + what, EINVAL};
}

constexpr std::uint32_t flag_if(bool set, std::uint32_t flag) noexcept
{
	return set ? flag : 0;
}

std::string lower(std::string_view s)
{
	std::string out{s};
	for (char& ch : out)
		ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
	return out;
}

// Linux perf's names (tools/perf/util/arm-spe-decoder) for the bits the
// decoder names otherwise.
struct EventAlias {
	std::string_view name;
	unsigned bit;
};
constexpr std::array<EventAlias, 6> event_aliases{{
	{"tlb-refill", 5},
	{"llc-refill", 9},
	{"l2d-refill", 20},
	{"hitm", 21},
	{"lfb", 22},
	{"snooped", 23},
}};

constexpr unsigned event_bits = 64;

// The bit a name stands for, or event_bits when none.
unsigned event_bit(std::string_view name)
{
	const std::string n = lower(name);
	for (unsigned b = 0; b < event_bits; ++b) {
		const std::string_view known = spe::event_name(b);
		if (!known.empty() && lower(known) == n)
			return b;
	}
	for (const EventAlias& a : event_aliases)
		if (a.name == n)
			return a.bit;
	return event_bits;
}

std::string known_event_names()
{
	std::string s;
	for (unsigned b = 0; b < event_bits; ++b) {
		const std::string_view known = spe::event_name(b);
		if (known.empty() || known.starts_with("IMPDEF"))
			continue;
		s += s.empty() ? "" : ", ";
		s += lower(known);
	}
	return s + ", impdef-12 to impdef-15";
}

struct TypeName {
	std::string_view name;
	std::uint32_t bit;
};
constexpr std::array<TypeName, 9> type_names{{
	{"ld", spe_op::load},
	{"load", spe_op::load},
	{"st", spe_op::store},
	{"store", spe_op::store},
	{"br", spe_op::branch},
	{"b", spe_op::branch},
	{"branch", spe_op::branch},
	{"fp", spe_op::fp},
	{"simd", spe_op::simd},
}};

// Calls f(item) for each item of a comma-separated list; an empty item
// is refused, naming what the list is.
template <typename F>
void for_each_item(std::string_view list, std::string_view what, F&& f)
{
	while (true) {
		const std::size_t comma = list.find(',');
		const std::string_view item = list.substr(0, comma);
		if (item.empty())
			bad_config("empty name in the " + std::string{what} + " list");
		f(item);
		if (comma == std::string_view::npos)
			return;
		list.remove_prefix(comma + 1);
	}
}

} // namespace

// ---------------------------------------------------------------- configuration

SpeRecordedConfig spe_driver_config(const SpeConfig& c)
{
	SpeRecordedConfig r;
	if (!c.user && !c.kernel)
		bad_config("profile user space, the kernel or both");
	r.enables = flag_if(c.user, AMUPMU_SPE_EN_USER) | flag_if(c.kernel, AMUPMU_SPE_EN_KERNEL) |
		    flag_if(c.context, AMUPMU_SPE_EN_CX) | flag_if(c.physical_address, AMUPMU_SPE_EN_PA) |
		    flag_if(c.timestamps, AMUPMU_SPE_EN_TS);
	const auto pct = static_cast<std::uint32_t>(c.clock);
	if (pct != AMUPMU_SPE_PCT_VIRTUAL && pct != AMUPMU_SPE_PCT_PHYSICAL && pct != AMUPMU_SPE_PCT_GUEST_PHYSICAL)
		bad_config("timestamp clock " + std::to_string(pct));
	if (pct != AMUPMU_SPE_PCT_VIRTUAL && !c.timestamps)
		bad_config("a timestamp clock without timestamps");
	r.pct = pct;
	if (c.buf_pages < 2 || c.buf_pages > spe_buf_pages_max || !std::has_single_bit(c.buf_pages))
		bad_config("buffer of " + std::to_string(c.buf_pages) + " pages (a power of two from 2 to " +
			   std::to_string(spe_buf_pages_max) + ")");
	r.buf_pages = c.buf_pages;

	const std::uint32_t types = c.types_any | c.types_all | c.types_none;
	if ((types & ~spe_op::all) != 0)
		bad_config("operation type bits " + hex(types & ~spe_op::all, 2));
	if ((c.types_none & (c.types_any | c.types_all)) != 0)
		bad_config("an operation type both asked for and excluded");
	if ((c.events & c.excluded_events) != 0)
		bad_config("events both required and excluded: " + format_spe_events(c.events & c.excluded_events));
	if (c.min_latency > 0xFFFF)
		bad_config("min_latency " + std::to_string(c.min_latency) + " (at most 65535)");

	if (c.use_defaults) {
		if (types != 0 || c.events != 0 || c.excluded_events != 0 || c.min_latency != 0 || c.jitter ||
		    (c.interval != 0 && c.interval != spe_default_interval))
			bad_config("the arm_spe defaults exclude a filter, an interval or jitter of its own");
		r.flags = AMUPMU_SPE_CFG_DEFAULTS;
		return r;
	}
	if (c.interval == 0 || c.interval % 256 != 0)
		bad_config("interval " + std::to_string(c.interval) + " (a multiple of 256 operations)");
	r.interval = c.interval;
	r.flags = flag_if(c.jitter, AMUPMU_SPE_CFG_JITTER);
	r.min_latency = c.min_latency;
	// TYPE: any or all; TYPEm: all or none (PMSFCR_EL1, FEAT_SPE_EFT)
	const std::uint64_t type_bits = c.types_any | c.types_all;
	const std::uint64_t mask_bits = c.types_all | c.types_none;
	r.pmsfcr = type_bits << 16 | mask_bits << 48 | (types != 0 ? AMUPMU_SPE_PMSFCR_FT : 0) |
		   (c.events != 0 ? AMUPMU_SPE_PMSFCR_FE : 0) | (c.excluded_events != 0 ? AMUPMU_SPE_PMSFCR_FNE : 0) |
		   (c.min_latency != 0 ? AMUPMU_SPE_PMSFCR_FL : 0);
	r.pmsevfr = c.events;
	r.pmsnevfr = c.excluded_events;
	return r;
}

std::uint64_t parse_spe_events(std::string_view list)
{
	std::uint64_t mask = 0;
	for_each_item(list, "event", [&](std::string_view name) {
		const unsigned b = event_bit(name);
		if (b >= event_bits)
			bad_config("unknown SPE event '" + std::string{name} + "' (" + known_event_names() + ")");
		mask |= std::uint64_t{1} << b;
	});
	return mask;
}

std::string format_spe_events(std::uint64_t mask)
{
	std::string s;
	for (unsigned b = 0; b < event_bits; ++b) {
		if (((mask >> b) & 1) == 0)
			continue;
		s += s.empty() ? "" : ",";
		const std::string_view known = spe::event_name(b);
		s += known.empty() ? "bit" + std::to_string(b) : lower(known);
	}
	return s;
}

void parse_spe_types(std::string_view list, SpeConfig& c)
{
	std::uint32_t any = 0, all = 0, none = 0;
	for_each_item(list, "operation type", [&](std::string_view item) {
		std::uint32_t* dest = &any;
		if (item.starts_with('+') || item.starts_with('-')) {
			dest = item.starts_with('+') ? &all : &none;
			item.remove_prefix(1);
		}
		const std::string n = lower(item);
		const auto it = std::ranges::find(type_names, n, &TypeName::name);
		if (it == type_names.end())
			bad_config("unknown operation type '" + std::string{item} + "' (ld, st, br, fp, simd)");
		if (((any | all | none) & it->bit) != 0)
			bad_config("operation type '" + std::string{item} + "' listed twice");
		*dest |= it->bit;
	});
	c.types_any = any;
	c.types_all = all;
	c.types_none = none;
}

std::string format_spe_state(std::uint32_t state)
{
	static constexpr std::array<std::pair<std::uint32_t, std::string_view>, 4> names{{
		{spe_state::enabled, "enabled"},
		{spe_state::offline, "offline"},
		{spe_state::fault, "fault"},
		{spe_state::discarding, "discarding"},
	}};
	std::string s;
	for (const auto& [bit, name] : names) {
		if ((state & bit) == 0)
			continue;
		s += s.empty() ? "" : ",";
		s += name;
	}
	const std::uint32_t unknown = state & ~(spe_state::enabled | spe_state::offline | spe_state::fault |
						spe_state::discarding);
	if (unknown != 0)
		s += (s.empty() ? "" : ",") + hex(unknown, 2);
	return s.empty() ? "-" : s;
}

// ---------------------------------------------------------------- buffers

namespace {

amupmu_spe_buf_header* spe_header(unsigned char* base)
{
	return reinterpret_cast<amupmu_spe_buf_header*>(base);
}

template <typename T>
T load_relaxed(T& field)
{
	return std::atomic_ref<T>{field}.load(std::memory_order_relaxed);
}

} // namespace

SpeBuffer SpeBuffer::map(int fd, unsigned cpu, std::uint32_t buf_pages)
{
	const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
	return SpeBuffer{MmapRegion::map(fd, (std::size_t{1} + buf_pages) * page, AMUPMU_SPE_MMAP_OFFSET(cpu),
					 "mmap of CPU " + std::to_string(cpu) + "'s SPE buffer")};
}

SpeBuffer SpeBuffer::view(void* base, std::size_t len)
{
	return SpeBuffer{MmapRegion::view(base, len)};
}

SpeBuffer::SpeBuffer(MmapRegion region) : region_{std::move(region)}
{
	const std::size_t len = region_.size();
	if (len < spe_buf_header_size)
		throw InvalidArgument{"SPE buffer: mapping smaller than its header", EINVAL};
	amupmu_spe_buf_header* h = spe_header(region_.data());
	const std::uint32_t version = load_relaxed(h->version);
	const std::uint32_t hsize = load_relaxed(h->header_size);
	const std::uint64_t off = load_relaxed(h->data_offset);
	const std::uint64_t size = load_relaxed(h->data_size);
	if (version != AMUPMU_SPE_BUF_VERSION || hsize < spe_buf_header_size || off < hsize || off % 8 != 0 ||
	    !std::has_single_bit(size) || off > len || size > len - off)
		throw InvalidArgument{"SPE buffer: header (version " + std::to_string(version) + ", header_size " +
					      std::to_string(hsize) + ", data at " + std::to_string(off) + " size " +
					      std::to_string(size) + ") does not fit the " + std::to_string(len) +
					      "-byte mapping",
				      EINVAL};
	data_ = reinterpret_cast<const std::byte*>(region_.data() + off);
	ring_ = detail::RingCursor{&h->data_head, &h->data_tail, size};
}

void SpeBuffer::overrun(std::uint64_t head, std::uint64_t tail) const
{
	ring_.throw_overrun("SPE buffer of CPU " + std::to_string(cpu()), head, tail);
}

std::uint64_t SpeBuffer::lost_bytes() const noexcept
{
	return load_relaxed(spe_header(region_.data())->lost_bytes);
}

std::uint64_t SpeBuffer::records() const noexcept
{
	return load_relaxed(spe_header(region_.data())->records);
}

std::uint32_t SpeBuffer::flags() const noexcept
{
	return load_relaxed(spe_header(region_.data())->flags);
}

std::uint64_t SpeBuffer::timer_freq() const noexcept
{
	return load_relaxed(spe_header(region_.data())->timer_freq);
}

unsigned SpeBuffer::cpu() const noexcept
{
	return load_relaxed(spe_header(region_.data())->cpu);
}

bool SpeBuffer::wait(int fd, int timeout_ms)
{
	return detail::poll_in(fd, timeout_ms, "poll of the SPE session");
}

// ---------------------------------------------------------------- session

void throw_spe_config_error(int err, SpeOwner owner)
{
	const std::string op = "AMUPMU_SPE_CONFIG";
	switch (err) {
	case ENXIO:
		throw OwnedByKernel{op, err, "SPE owned by the kernel's arm_spe_pmu"};
	case ENODEV:
		throw_error(op + (owner == SpeOwner::unclaimed
					  ? " (no SPE device claimed: amupmu spe claim)"
					  : " (no SPE device claimed: amupmu spe claim; or a CPU of the set is not possible)"),
			    err);
	case EBUSY:
		throw_error(op + " (another session profiles a CPU of the set)", err);
	case EACCES:
	case EPERM:
		throw_error(op + " (the kernel, physical addresses, CONTEXTIDR or a physical clock need CAP_PERFMON)",
			    err);
	case EOPNOTSUPP:
		throw_error(op + " (a CPU of the set lacks SPE or a filter asked for)", err);
	default:
		throw_error(op, err);
	}
}

SpeSession SpeSession::open(const SpeConfig& config, std::string_view path)
{
	return SpeSession{Device::open(path), config};
}

SpeSession SpeSession::create(Device device, const SpeConfig& config)
{
	return SpeSession{std::move(device), config};
}

SpeSession::SpeSession(Device device, const SpeConfig& config)
	: device_{std::move(device)}, driver_config_{spe_driver_config(config)}
{
	if (config.cpus.empty())
		bad_config("empty CPU set");
	for (const unsigned cpu : config.cpus)
		if (cpu >= AMUPMU_SPE_READ_CPUS_MAX)
			bad_config("CPU " + std::to_string(cpu));
	detail::CpuMask set = detail::cpu_mask(config.cpus);
	const std::vector<std::uint64_t>& mask = set.words;
	cpus_ = std::move(set.cpus);

	const SpeRecordedConfig& r = driver_config_;
	amupmu_spe_config cfg{};
	cfg.size = sizeof(cfg);
	cfg.flags = r.flags;
	cfg.enables = r.enables;
	cfg.pct = r.pct;
	cfg.pmsfcr = r.pmsfcr;
	cfg.pmsevfr = r.pmsevfr;
	cfg.pmsnevfr = r.pmsnevfr;
	cfg.min_latency = r.min_latency;
	cfg.interval = r.interval;
	cfg.buf_pages = r.buf_pages;
	cfg.watermark = config.watermark;
	cfg.cpus_len = static_cast<std::uint32_t>(mask.size() * sizeof(std::uint64_t));
	cfg.cpus_uptr = reinterpret_cast<std::uintptr_t>(mask.data());
	if (::ioctl(device_.fd(), AMUPMU_SPE_CONFIG, &cfg) == 0)
		return;
	const int err = errno;
	SpeOwner owner = SpeOwner::none;
	if (err == ENODEV) {
		// a refused request writes nothing back: INFO says whether a
		// claim is what is missing
		try {
			owner = device_.info().spe_owner;
		} catch (const Error&) {
		}
	}
	throw_spe_config_error(err, owner);
}

void SpeSession::ctl(std::uint32_t op, std::string_view name) const
{
	amupmu_spe_ctl c{.size = sizeof(c), .flags = 0, .op = op, .__reserved = 0};
	if (::ioctl(device_.fd(), AMUPMU_SPE_CTL, &c) != 0)
		throw_error("AMUPMU_SPE_CTL " + std::string{name}, errno);
}

void SpeSession::enable() const { ctl(AMUPMU_SPE_CTL_ENABLE, "ENABLE"); }
void SpeSession::disable() const { ctl(AMUPMU_SPE_CTL_DISABLE, "DISABLE"); }
void SpeSession::release() const { ctl(AMUPMU_SPE_CTL_RELEASE, "RELEASE"); }

std::size_t SpeSession::read(std::span<SpeCpuStatus> out) const
{
	if (out.size() < cpus_.size())
		throw InvalidArgument{"AMUPMU_SPE_READ: room for " + std::to_string(out.size()) + " of " +
					      std::to_string(cpus_.size()) + " CPUs",
				      EINVAL};
	amupmu_spe_read rd{};
	rd.size = sizeof(rd);
	rd.nr_cpus = static_cast<std::uint32_t>(std::min<std::size_t>(out.size(), AMUPMU_SPE_READ_CPUS_MAX));
	rd.entry_size = sizeof(amupmu_spe_cpu);
	rd.cpus_uptr = reinterpret_cast<std::uintptr_t>(out.data());
	if (::ioctl(device_.fd(), AMUPMU_SPE_READ, &rd) != 0)
		throw_error("AMUPMU_SPE_READ", errno);
	if (rd.nr_cpus > out.size())
		throw Error{"AMUPMU_SPE_READ: " + std::to_string(rd.nr_cpus) + " entries", EBADMSG};
	return rd.nr_cpus;
}

std::vector<SpeCpuStatus> SpeSession::read() const
{
	std::vector<SpeCpuStatus> out(cpus_.size());
	out.resize(read(out));
	return out;
}

SpeBuffer SpeSession::map(unsigned cpu) const
{
	if (!std::ranges::binary_search(cpus_, cpu))
		throw InvalidArgument{"SPE buffer: CPU " + std::to_string(cpu) + " is not in the session's set", EINVAL};
	return SpeBuffer::map(device_.fd(), cpu, driver_config_.buf_pages);
}

} // namespace amupmu
