// SPDX-License-Identifier: GPL-2.0
//
// amupmu exporter's collector: what one scrape reads from the driver
// (AMUPMU_INFO, one AMUPMU_AMU_READ, one AMUPMU_PMU_READ with READ_ALL of
// the exporter's own counting session, the netlink family's status and
// session dumps) and the Prometheus metric families made of it. The
// families are a pure function of what was read (exporter_families()), so
// that the host tests feed it recorded readings; ExporterSource is where
// the readings come from (DriverSource: the driver; a fake in the tests).
//
// Series per CPU stop while the CPU is offline or the module is not loaded
// and resume with it: the AMU counters are monotonic across hotplug and
// power-down (the driver adds the lost values back), the session's PMU
// totals are kept while a CPU is offline. A counter that goes down (the
// module was loaded again, the session was opened again) is a counter
// reset, which Prometheus's rate() handles as one.
#ifndef AMUPMU_TOOL_EXPORTER_HPP
#define AMUPMU_TOOL_EXPORTER_HPP

#include <amupmu/amu.hpp>
#include <amupmu/compensation.hpp>
#include <amupmu/events.hpp>
#include <amupmu/info.hpp>
#include <amupmu/monitor.hpp>
#include <amupmu/session.hpp>

#include "exporter_spe.hpp"

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace amupmu::cli {

/// The exporter's port: not in the 9100-9999 block of Prometheus's
/// default port allocations, which is full (Documentation/admin-guide/
/// amupmu-exporter.rst says which port and why).
inline constexpr unsigned default_exporter_port = 10140;
/// Where the exporter listens by default: every address, that port.
inline constexpr std::string_view default_exporter_listen = ":10140";
/// The SPE session's interval: one sample per 2^20 operations (a CPU
/// retiring 4e9 operations a second gives about 3800 records a second).
inline constexpr std::uint32_t default_exporter_spe_interval = 1U << 20;

/// The configuration file (--config) and the command line.
struct ExporterConfig {
	/// ADDR:PORT, [ADDR6]:PORT or :PORT (every address)
	std::string listen{default_exporter_listen};
	std::string device{default_device_path};
	/// PMU events counted system-wide on every CPU (names as amupmu stat
	/// -e takes them); none: no PMU session (the AMU and the driver only)
	std::vector<std::string> events{};
	/// shared mode: let perf core rotate the events (Scheduling::multiplex)
	bool multiplex = false;
	/// the erratum-compensated value beside the raw one where one applies
	bool compensate = true;
	/// the netlink family's status and session dumps (driver health)
	bool netlink = true;
	/// HTTP worker threads (civetweb's num_threads)
	unsigned threads = 2;
	/// SPE latency histograms: a session of the exporter's on every online
	/// CPU with SPE (exporter_spe.hpp)
	bool spe = false;
	/// operations between SPE samples (a multiple of 256)
	std::uint32_t spe_interval = default_exporter_spe_interval;
	/// the kernel's operations too (user space only by default)
	bool spe_kernel = false;
	/// each CPU's SPE buffer, pages (a power of 2, 2 to 1024)
	std::uint32_t spe_buffer_pages = 16;

	friend bool operator==(const ExporterConfig&, const ExporterConfig&) = default;
};

/// Parses a configuration file's text: "KEY = VALUE" lines ('#' starts a
/// comment; blank lines are skipped), keys listen, device, events (a
/// comma-separated list), multiplex, compensate, netlink (yes or no),
/// threads (1 to 64), spe, spe_kernel (yes or no), spe_interval,
/// spe_buffer_pages (as SpeConfig checks them). Starts from base. Throws
/// UsageError naming file and line.
[[nodiscard]] ExporterConfig parse_exporter_config(std::string_view text, std::string_view file,
						   ExporterConfig base = {});

/// The SPE session of a configuration on cpus: user space (and the
/// kernel with spe_kernel), every operation type, spe_interval,
/// spe_buffer_pages.
[[nodiscard]] SpeConfig exporter_spe_config(const ExporterConfig& config, std::vector<unsigned> cpus);

/// civetweb's listening_ports for a --listen value (":10140" ->
/// "10140", "127.0.0.1:10140" as it is, "[::1]:10140" as it is; port 0:
/// one the system picks). Throws UsageError for a malformed value or a
/// port above 65535.
[[nodiscard]] std::string civetweb_listen(std::string_view listen);

/// The exporter's own PMU session, as one AMUPMU_PMU_READ_ALL read it.
struct PmuScrape {
	std::vector<EventSpec> events{};	///< the group's events, in order
	std::vector<CpuReading> cpus{};		///< GroupReading::cpus()
	std::vector<CpuTimes> times{};		///< one per CPU when the group multiplexes, else empty
};

/// The driver's buffer events (the netlink family's buffer group, which
/// the exporter subscribes to) summed per CPU over every session, since
/// the exporter subscribed (a counter reset when the module is loaded
/// again). RING_LOST and THROTTLE report a session's count on a CPU when
/// it reaches 1, 2, 4, 8, ...: the sums are lower bounds, at least half
/// the true count and exact whenever no session is between two powers of
/// 2; the first loss or throttle of a session shows at once.
struct BufferTotals {
	std::map<unsigned, std::uint64_t> samples_lost{};	///< by CPU: PMU ring records dropped
	std::map<unsigned, std::uint64_t> throttles{};		///< by CPU: sample interrupts throttled
	/// by CPU and kind (full, fault, collision): SPE buffer events
	std::map<std::pair<unsigned, std::string>, std::uint64_t> spe_events{};
	/// events the group's sequence numbers say the subscription missed
	std::uint64_t missed = 0;

	friend bool operator==(const BufferTotals&, const BufferTotals&) = default;
};

/// Sums the buffer group's events into BufferTotals: RING_LOST and
/// THROTTLE carry a session's count so far on a CPU, so each adds what it
/// grew by since the last one of its session and CPU (a count below the
/// last one is a new session with a reused id: the module was loaded
/// again). A session's last counts are forgotten once two session dumps
/// in a row no longer list it.
class BufferCounter {
public:
	void add(const MonitorRecord& record);
	void add(const ThrottleEvent& event);
	/// The sessions of this scrape's SESSION_GET dump.
	void sessions(const std::vector<MonitorSession>& live);
	[[nodiscard]] const BufferTotals& totals() const noexcept { return totals_; }
	/// Session and CPU pairs whose last counts are kept.
	[[nodiscard]] std::size_t tracked() const noexcept { return last_.size(); }

private:
	struct Last {
		std::uint64_t lost = 0;
		std::uint64_t throttled = 0;
		unsigned absent = 0;	///< session dumps in a row without the session
	};
	static void grow(std::uint64_t& last, std::uint64_t now, std::uint64_t& total);

	std::map<std::pair<std::uint64_t, unsigned>, Last> last_{};
	BufferTotals totals_{};
};

/// One CPU's totals over every session since the module was loaded, from
/// the netlink family's CPU_GET (ABI 2.5, CAP_PERFMON): exact, where the
/// buffer events' sums are lower bounds.
struct DriverCpuTotals {
	std::uint64_t samples_lost = 0;
	std::uint64_t throttles = 0;
	friend bool operator==(const DriverCpuTotals&, const DriverCpuTotals&) = default;
};

/// Everything one scrape read: the input of exporter_families().
struct ExporterScrape {
	/// AMUPMU_INFO; nullopt when the device did not answer (not loaded)
	std::optional<Info> info{};
	/// AMUPMU_AMU_READ of every possible CPU; nullopt without AMU
	std::optional<AmuReading> amu{};
	/// nullopt without PMU events, or when the session could not be read
	std::optional<PmuScrape> pmu{};
	/// the netlink family's STATUS_GET and SESSION_GET dump
	std::optional<MonitorStatus> status{};
	std::optional<std::vector<MonitorSession>> sessions{};
	/// the buffer group's events; nullopt while not subscribed
	std::optional<BufferTotals> buffer{};
	/// CPU_GET's totals by CPU; nullopt from a module older than ABI 2.5
	/// (or without CAP_PERFMON): the lost samples and throttles are then
	/// the buffer events' sums
	std::optional<std::map<unsigned, DriverCpuTotals>> cpu_totals{};
	/// the SPE latency histograms; nullopt with spe = off
	std::optional<SpeTotals> spe{};
	/// what failed in this scrape, by source (device, amu, pmu, netlink, spe)
	std::vector<std::string> errors{};
};

/// What the exporter counts about itself.
struct ExporterSelf {
	std::uint64_t scrapes = 0;
	/// scrape errors by source: device, amu, pmu, netlink, spe
	std::map<std::string, std::uint64_t, std::less<>> errors{
		{"amu", 0}, {"device", 0}, {"netlink", 0}, {"pmu", 0}, {"spe", 0}};
	/// PMU sessions opened (again after a failure, or for CPUs that came)
	std::uint64_t pmu_session_opens = 0;
};

/// The metric families of one scrape (the names, types and labels of
/// Documentation/admin-guide/amupmu-exporter.rst). compensation: how the
/// erratum-compensated values are made (enabled false: none).
[[nodiscard]] std::vector<prometheus::MetricFamily> exporter_families(const ExporterScrape& scrape,
								    const ExporterSelf& self,
								    const CompensationOptions& compensation);

/// Where a scrape's readings come from.
class ExporterSource {
public:
	ExporterSource() = default;
	ExporterSource(const ExporterSource&) = delete;
	ExporterSource& operator=(const ExporterSource&) = delete;
	ExporterSource(ExporterSource&&) = delete;
	ExporterSource& operator=(ExporterSource&&) = delete;
	virtual ~ExporterSource() = default;
	/// One scrape's readings; failures are in ExporterScrape::errors,
	/// not thrown (a scrape always answers). self: the source counts
	/// its session opens there.
	[[nodiscard]] virtual ExporterScrape read(ExporterSelf& self) = 0;
};

/// The driver: the device opened for each scrape (so that a running
/// exporter does not keep the module loaded while it counts no PMU
/// events), the PMU session and the SPE session held from the first
/// scrape that can open them (they keep the module loaded, as any open
/// session does), the netlink family asked each scrape.
class DriverSource final : public ExporterSource {
public:
	explicit DriverSource(ExporterConfig config);
	~DriverSource() override;
	DriverSource(const DriverSource&) = delete;
	DriverSource& operator=(const DriverSource&) = delete;
	DriverSource(DriverSource&&) = delete;
	DriverSource& operator=(DriverSource&&) = delete;
	[[nodiscard]] ExporterScrape read(ExporterSelf& self) override;

private:
	void read_pmu(const Info& info, ExporterScrape& out, ExporterSelf& self);
	void note(std::string_view source, const std::string& message);

	void read_netlink(ExporterScrape& out);
	void read_spe(const Info& info, ExporterScrape& out);

	ExporterConfig config_;
	std::optional<Session> session_{};
	/// subscribed to the buffer group; replaced when the family's id
	/// changes (the module was loaded again)
	std::optional<Monitor> buffer_monitor_{};
	BufferCounter buffer_{};
	std::vector<EventSpec> events_{};
	std::vector<unsigned> session_cpus_{};	///< CPUs online when the session was opened
	GroupReading reading_{};
	std::map<std::string, std::string, std::less<>> last_message_{};
	/// the SPE histograms, which spe_'s thread adds to under spe_mutex_
	SpeTotals spe_totals_{};
	std::mutex spe_mutex_{};
	std::unique_ptr<SpeSampler> spe_{};	///< last: destroyed first
};

/// The prometheus::Collectable the Exposer serves: one source read per
/// scrape (concurrent scrapes take turns), the families of it, the scrape's
/// duration and the errors so far.
class ExporterCollector final : public prometheus::Collectable {
public:
	ExporterCollector(std::unique_ptr<ExporterSource> source, CompensationOptions compensation);
	[[nodiscard]] std::vector<prometheus::MetricFamily> Collect() const override;

private:
	mutable std::mutex mutex_;
	std::unique_ptr<ExporterSource> source_;
	CompensationOptions compensation_;
	mutable ExporterSelf self_{};
};

} // namespace amupmu::cli

#endif
