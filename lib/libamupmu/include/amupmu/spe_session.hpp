// SPDX-License-Identifier: LGPL-2.1-or-later
//
// SPE profiling sessions (ABI 2.2: AMUPMU_SPE_CONFIG / AMUPMU_SPE_CTL /
// AMUPMU_SPE_READ) and the consumer side of their per-CPU profiling
// buffers (the mmap at AMUPMU_SPE_MMAP_OFFSET(cpu)):
//  - SpeConfig: the configuration in typed fields, and
//    spe_driver_config(), the values the driver takes (pure);
//  - SpeSession: move-only owner of one open file of /dev/amupmu holding
//    one SPE configuration on a set of CPUs;
//  - SpeBuffer: one CPU's mapped buffer, consumed as byte spans that hold
//    whole records (the driver pads the end of the data area before it
//    wraps), with the same head/tail rules as the PMU sample ring.
// Documentation/userspace-api/amupmu-spe.rst, "Sessions and buffers".
#ifndef AMUPMU_SPE_SESSION_HPP
#define AMUPMU_SPE_SESSION_HPP

#include <amupmu/device.hpp>
#include <amupmu/mmap_region.hpp>
#include <amupmu/ring_cursor.hpp>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace amupmu {

/// The filter and enables the session was configured with (the
/// driver's struct amupmu_spe_config fields, after the defaults were
/// resolved when AMUPMU_SPE_CFG_DEFAULTS was asked).
struct SpeRecordedConfig {
	std::uint32_t flags = 0;	///< AMUPMU_SPE_CFG_*
	std::uint32_t enables = 0;	///< AMUPMU_SPE_EN_*
	std::uint32_t pct = 0;
	std::uint64_t pmsfcr = 0;
	std::uint64_t pmsevfr = 0;
	std::uint64_t pmsnevfr = 0;
	std::uint32_t min_latency = 0;
	std::uint32_t interval = 0;
	std::uint32_t buf_pages = 0;

	friend bool operator==(const SpeRecordedConfig&, const SpeRecordedConfig&) = default;
};

// ---------------------------------------------------------------- configuration

/// Operation types of the type filter: PMSFCR_EL1.TYPE (and TYPEm) bit i
/// is bit 16 + i of PMSFCR_EL1. FP and SIMD need FEAT_SPE_EFT.
namespace spe_op {
inline constexpr std::uint32_t branch = 1u << 0;	///< B
inline constexpr std::uint32_t load = 1u << 1;		///< LD
inline constexpr std::uint32_t store = 1u << 2;		///< ST
inline constexpr std::uint32_t fp = 1u << 3;		///< FP (FEAT_SPE_EFT)
inline constexpr std::uint32_t simd = 1u << 4;		///< SIMD (FEAT_SPE_EFT)
inline constexpr std::uint32_t all = 0x1F;
} // namespace spe_op

/// PMSCR_EL1.PCT: the count the TIMESTAMP packets hold.
enum class SpeClock : std::uint32_t {
	virtual_count = 0,	///< the kernel's clock at EL1
	physical = 1,		///< CAP_PERFMON
	guest_physical = 3,	///< FEAT_ECV, SPEv1p2; CAP_PERFMON
};

/// An SPE session's configuration. Defaults: user space only, every
/// operation, an interval of 4096 operations (valid on every CPU: the
/// largest minimum PMSIDR_EL1.Interval gives), 64 data pages per CPU.
struct SpeConfig {
	// enables (PMSCR_EL1)
	bool user = true;		///< profile EL0
	bool kernel = false;		///< profile the kernel (EL1, EL2 on VHE); CAP_PERFMON
	bool context = false;		///< CONTEXT packets (CX); CAP_PERFMON
	bool physical_address = false;	///< physical data addresses (PA); CAP_PERFMON
	bool timestamps = false;	///< TIMESTAMP packets (TS)
	SpeClock clock = SpeClock::virtual_count;	///< with timestamps only

	// the type filter (PMSFCR_EL1.FT, TYPE, TYPEm): spe_op bits
	std::uint32_t types_any = 0;	///< sample an operation of any of these (TYPE)
	std::uint32_t types_all = 0;	///< ... that is each of these (TYPE and TYPEm, EFT)
	std::uint32_t types_none = 0;	///< ... and none of these (TYPEm alone, EFT)

	/// Events packet bits a record must all have (PMSEVFR_EL1, FE).
	std::uint64_t events = 0;
	/// Events packet bits a record must not have (PMSNEVFR_EL1, FnE).
	std::uint64_t excluded_events = 0;
	/// Smallest total latency in cycles (PMSLATFR_EL1.MINLAT, FL); 0: no
	/// latency filter.
	std::uint32_t min_latency = 0;
	/// Operations between samples (PMSIRR_EL1.INTERVAL), a multiple of
	/// 256 at least the CPUs' minimum.
	std::uint32_t interval = 4096;
	bool jitter = false;		///< PMSIRR_EL1.RND
	/// Take the filter, interval and jitter from the arm_spe debugfs knobs
	/// (AMUPMU_SPE_CFG_DEFAULTS); the fields above must then be left at
	/// their defaults (interval included).
	bool use_defaults = false;

	std::uint32_t buf_pages = 64;	///< data pages per CPU: a power of two, 2-1024
	std::uint32_t watermark = 0;	///< bytes unread that wake poll(); 0: half the buffer
	std::vector<unsigned> cpus{};	///< the CPU set (any order; duplicates ignored)
};

/// AMUPMU_SPE_BUF_PAGES_MAX.
inline constexpr std::uint32_t spe_buf_pages_max = 1024;
/// The default SpeConfig::interval.
inline constexpr std::uint32_t spe_default_interval = 4096;

/// The values of struct amupmu_spe_config that c stands for (flags,
/// enables, pct, pmsfcr, pmsevfr, pmsnevfr, min_latency, interval,
/// buf_pages), without the CPU set and the watermark. Pure: checks what
/// can be checked without the CPUs (the driver checks the rest) and throws
/// InvalidArgument naming the field: neither user nor kernel; a clock
/// other than the virtual count without timestamps; a type bit outside
/// spe_op::all or in types_none and another set; events in both event
/// sets; min_latency above 65535; interval 0 or not a multiple of 256;
/// buf_pages not a power of two in [2, spe_buf_pages_max]; use_defaults
/// with a filter, jitter or an interval other than the default (0 goes to
/// the driver then) set.
[[nodiscard]] SpeRecordedConfig spe_driver_config(const SpeConfig& c);

/// The Events packet bits a comma-separated list names. Names are the
/// decoder's (spe::event_name(), any case: "retired", "l1d-refill",
/// "tlb-walk", "llc-miss", "impdef-12", ...) and Linux perf's for the same
/// bits ("tlb-refill", "llc-refill", "l2d-refill", "hitm", "lfb",
/// "snooped"). Throws InvalidArgument naming an unknown or empty name.
[[nodiscard]] std::uint64_t parse_spe_events(std::string_view list);
/// The names of mask's bits, lower case, comma-separated ("retired,l1d-refill");
/// a bit without a name as "bitN".
[[nodiscard]] std::string format_spe_events(std::uint64_t mask);

/// The type filter a comma-separated list names: "ld" (or "load"), "st"
/// ("store"), "br" ("b", "branch"), "fp", "simd"; a plain name goes to
/// types_any, "+name" to types_all (must be), "-name" to types_none (must
/// not be). Sets c's three type fields. Throws InvalidArgument naming an
/// unknown name or a type listed twice.
void parse_spe_types(std::string_view list, SpeConfig& c);

// ---------------------------------------------------------------- buffers

/// Bits of SpeCpuStatus::state and SpeBuffer::flags() (enum amupmu_spe_state).
namespace spe_state {
inline constexpr std::uint32_t enabled = 1u << 0;
inline constexpr std::uint32_t offline = 1u << 1;
inline constexpr std::uint32_t fault = 1u << 2;		///< profiling stopped: see last_pmbsr
inline constexpr std::uint32_t discarding = 1u << 3;	///< buffer full: records are lost
} // namespace spe_state

/// "enabled,offline,fault,discarding" for the bits set ("-" for none).
[[nodiscard]] std::string format_spe_state(std::uint32_t state);

/// One CPU's entry of AMUPMU_SPE_READ (struct amupmu_spe_cpu, same layout).
struct SpeCpuStatus {
	std::uint32_t cpu = 0;
	std::uint32_t state = 0;	///< spe_state bits
	std::uint64_t bytes = 0;	///< record bytes published into the buffer
	std::uint64_t records = 0;	///< records among them
	std::uint64_t lost_bytes = 0;	///< written into the discard area (buffer full)
	std::uint64_t truncations = 0;	///< PMBSR_EL1.DL events: a partial record lost
	std::uint64_t collisions = 0;	///< PMBSR_EL1.COLL events
	std::uint64_t faults = 0;	///< buffer faults and unknown syndromes
	std::uint64_t last_pmbsr = 0;	///< PMBSR_EL1 of the last fault
	std::uint64_t events = 0;	///< buffer management events taken

	friend bool operator==(const SpeCpuStatus&, const SpeCpuStatus&) = default;
};

/// sizeof(struct amupmu_spe_buf_header) of buffer version 1.
inline constexpr std::size_t spe_buf_header_size = 72;

/// One CPU's profiling buffer: the header page, then data_size bytes.
/// Move-only; owns the mapping when made by map() or SpeSession::map().
///
/// Consuming: the driver publishes data_head (monotonic byte count) with
/// release semantics; the reader reads it with acquire, hands the bytes
/// from data_tail to data_head to the callback and stores data_tail with
/// release, which gives the room back to the driver. Records never wrap:
/// before it wraps the driver pads the end of the data area with PAD
/// packets, so each span holds whole records (and padding).
///
/// Thread safety: one buffer per CPU, consumed by one thread at a time
/// (it stores the tail); distinct buffers may be consumed concurrently.
/// The const members only read the header and may run while another
/// thread consumes.
class [[nodiscard]] SpeBuffer {
public:
	/// mmap()s cpu's buffer of the session open at fd (1 + buf_pages
	/// pages at AMUPMU_SPE_MMAP_OFFSET(cpu), read-write). Throws the
	/// errno's Error ("mmap of CPU n's SPE buffer"), InvalidArgument when
	/// the header does not describe a buffer inside the mapping.
	[[nodiscard]] static SpeBuffer map(int fd, unsigned cpu, std::uint32_t buf_pages);
	/// A buffer laid out at base (header, data at data_offset) that it does
	/// not own (tests, copies). Checks the header as map() does.
	[[nodiscard]] static SpeBuffer view(void* base, std::size_t len);

	SpeBuffer(const SpeBuffer&) = delete;
	SpeBuffer& operator=(const SpeBuffer&) = delete;
	SpeBuffer(SpeBuffer&& other) noexcept = default;
	SpeBuffer& operator=(SpeBuffer&& other) noexcept = default;
	~SpeBuffer() = default;

	/// Calls f(std::span<const std::byte>) with the unread bytes: one
	/// span, or two when they run past the end of the data area (the end
	/// of the data area, then its start). Then stores the tail at the head
	/// it read and returns the bytes consumed (0: nothing; f not called).
	/// Throws Error (EBADMSG) without moving the tail when head - tail
	/// exceeds data_size (a corrupt header, or a writer that overran the
	/// reader); resync() is the way on. As SampleReader::consume(), a
	/// span f was called with is consumed whatever f does: when f throws,
	/// the tail is stored past that span (and the one before it) and the
	/// exception propagates; the next consume() starts after it.
	template <typename F>
	std::uint64_t consume(F&& f)
	{
		const std::uint64_t head = ring_.head();
		const std::uint64_t tail = ring_.tail();
		const std::uint64_t len = head - tail;
		if (len == 0)
			return 0;
		if (ring_.overrun(head, tail))
			overrun(head, tail);
		const std::uint64_t size = ring_.size();
		const std::uint64_t off = tail & (size - 1);
		const std::uint64_t first = len < size - off ? len : size - off;
		std::uint64_t handed = first;
		try {
			f(std::span<const std::byte>{data_ + off, static_cast<std::size_t>(first)});
			if (first < len) {
				handed = len;
				f(std::span<const std::byte>{data_, static_cast<std::size_t>(len - first)});
			}
		} catch (...) {
			ring_.release(tail + handed);
			throw;
		}
		ring_.release(head);
		return len;
	}

	/// Drops what is unread: stores the tail at the head it reads now and
	/// returns the bytes dropped (at most data_size), which add to
	/// dropped_bytes() (lost_bytes() is the driver's count). The way on
	/// after consume() threw EBADMSG.
	std::uint64_t resync() noexcept { return ring_.resync(); }
	/// Bytes resync() dropped in this buffer object's life.
	[[nodiscard]] std::uint64_t dropped_bytes() const noexcept { return ring_.dropped_bytes(); }

	/// Bytes between tail and head (the head read with acquire).
	[[nodiscard]] std::uint64_t available() const noexcept { return ring_.available(); }
	/// The header's counters: bytes written into the discard area, records
	/// published, spe_state bits, CNTFRQ_EL0 (Hz of TIMESTAMP packets).
	[[nodiscard]] std::uint64_t lost_bytes() const noexcept;
	[[nodiscard]] std::uint64_t records() const noexcept;
	[[nodiscard]] std::uint32_t flags() const noexcept;
	[[nodiscard]] std::uint64_t timer_freq() const noexcept;
	[[nodiscard]] unsigned cpu() const noexcept;
	[[nodiscard]] std::uint64_t data_size() const noexcept { return ring_.size(); }
	/// data_head and data_tail as they are now.
	[[nodiscard]] std::uint64_t head() const noexcept { return ring_.head(); }
	[[nodiscard]] std::uint64_t tail() const noexcept { return ring_.tail(); }

	/// poll() on a session's fd for POLLIN (a buffer holds its watermark),
	/// up to timeout_ms (-1: forever). True when readable, false on
	/// timeout. Throws Error on a poll failure.
	static bool wait(int fd, int timeout_ms);

private:
	explicit SpeBuffer(MmapRegion region);
	/// Throws Error (EBADMSG): more than data_size unread.
	[[noreturn]] void overrun(std::uint64_t head, std::uint64_t tail) const;

	MmapRegion region_;
	const std::byte* data_ = nullptr;
	detail::RingCursor ring_{};
};

// ---------------------------------------------------------------- session

/// Throws what an errno of AMUPMU_SPE_CONFIG means, with SPE's reason in
/// the operation: ENXIO OwnedByKernel ("SPE owned by the kernel's
/// arm_spe_pmu"), ENODEV Unavailable ("no SPE device claimed: amupmu spe
/// claim", and "or a CPU of the set is not possible" unless owner says the
/// device is unclaimed), EBUSY Busy, EACCES/EPERM PermissionDenied,
/// EOPNOTSUPP Unsupported, EINVAL InvalidArgument, others Error.
[[noreturn]] void throw_spe_config_error(int err, SpeOwner owner = SpeOwner::none);

/// Move-only owner of an open /dev/amupmu holding one SPE configuration.
/// Closing it (destruction) stops profiling and frees the buffers once
/// their last mapping is gone.
///
/// Thread safety: one object per thread; distinct objects may be used
/// concurrently. The const members may also be called from several
/// threads at once (each is one ioctl on the file, which the driver
/// serializes, and writes only the caller's own output); moving or
/// destroying the object needs it to itself.
class [[nodiscard]] SpeSession {
public:
	/// Opens path and configures SPE (the session starts disabled). Throws
	/// DeviceMissing when the node is absent, InvalidArgument (the checks
	/// of spe_driver_config() and the driver's), OwnedByKernel (ENXIO:
	/// the kernel's arm_spe_pmu holds SPE), Unavailable (ENODEV: no SPE
	/// device claimed by amupmu serves a CPU of the set -- "amupmu spe
	/// claim" -- or a CPU that is not possible), Unsupported (EOPNOTSUPP:
	/// a CPU without SPE or without a filter asked for), PermissionDenied
	/// (EACCES: kernel, PA, CX or a physical clock without CAP_PERFMON),
	/// Busy (EBUSY: another session profiles a CPU of the set).
	[[nodiscard]] static SpeSession open(const SpeConfig& config,
					     std::string_view path = default_device_path);
	/// Configures SPE on an open device, which the session then owns.
	[[nodiscard]] static SpeSession create(Device device, const SpeConfig& config);

	SpeSession(const SpeSession&) = delete;
	SpeSession& operator=(const SpeSession&) = delete;
	SpeSession(SpeSession&&) noexcept = default;
	SpeSession& operator=(SpeSession&&) noexcept = default;
	~SpeSession() = default;

	/// Starts profiling on every CPU of the set. Throws as throw_error().
	void enable() const;
	/// Stops profiling; the buffers and their data stay (and the records
	/// written so far are published).
	void disable() const;
	/// Stops and frees the configuration: later commands fail with
	/// Unavailable (ENODEV). Mappings keep their buffers alive.
	void release() const;

	/// AMUPMU_SPE_READ: every CPU of the set, ascending, into out (at
	/// least cpus().size() entries); returns the entries written. No
	/// allocation.
	std::size_t read(std::span<SpeCpuStatus> out) const;
	/// read() into a new vector.
	[[nodiscard]] std::vector<SpeCpuStatus> read() const;

	/// Maps cpu's buffer (cpu must be in the set).
	[[nodiscard]] SpeBuffer map(unsigned cpu) const;

	/// The CPU set, ascending, without duplicates.
	[[nodiscard]] std::span<const unsigned> cpus() const noexcept { return cpus_; }
	/// What the driver was given (the defaults' values are the driver's).
	[[nodiscard]] const SpeRecordedConfig& driver_config() const noexcept { return driver_config_; }
	/// Each CPU's buffer, in pages.
	[[nodiscard]] std::uint32_t buf_pages() const noexcept { return driver_config_.buf_pages; }
	/// For poll(): POLLIN when a buffer holds its watermark.
	[[nodiscard]] int fd() const noexcept { return device_.fd(); }

private:
	SpeSession(Device device, const SpeConfig& config);
	void ctl(std::uint32_t op, std::string_view name) const;

	Device device_;
	std::vector<unsigned> cpus_{};
	SpeRecordedConfig driver_config_{};
};

} // namespace amupmu

#endif
