// SPDX-License-Identifier: LGPL-2.1-or-later
//
// amupmu::Counters: count events by name around a region of code, in the
// manner of perf-cpp's EventCounter, on top of Session.
//
//   +------------------------------------------------------------------+
//   | COUNTS ARE PER CPU, FOR THE WHOLE SYSTEM -- NEVER PER THREAD.     |
//   | Each counter counts everything that runs on its CPU while the     |
//   | group is enabled: every task and thread on those CPUs (the kernel |
//   | too, unless a modifier such as ":u" excludes it), not only the    |
//   | thread that called start(), and none of that thread's work while  |
//   | it runs on a CPU outside the set. This is `perf stat -a`, not     |
//   | `perf stat -- CMD`. Pin the code you measure (sched_setaffinity,  |
//   | taskset; measure_this_thread() pins the calling thread to its CPU |
//   | and counts that one) and keep other work off the CPUs counted.    |
//   +------------------------------------------------------------------+
//
//   amupmu::Counters c;                     // opens /dev/amupmu
//   c.add("cycles");
//   c.add({"instructions", "branch-misses"});
//   c.start();
//   work();
//   c.stop();
//   const amupmu::CounterResult r = c.result();
//   r["cycles"];                            // summed over the CPUs
//   r.per_cpu("cycles", 0);                 // CPU 0's count
//   r.for_each([](std::string_view name, std::uint64_t total) { ... });
//   r.metrics();                            // IPC, branch miss rate, ...
//
//   c.add("exc_undef").add_errata_companions();  // what the errata models need
//   c.set_compensation();                   // errata of the counted core
//   ... c.result().compensated("exc_undef");  // beside the raw count
//
//   { auto scope = c.measure(); work(); }  // start() now, stop() at the }
//   c.measure([&] { work(); });            // the same around a callable
//
//   // "this code": the calling thread pinned to its CPU, that CPU counted
//   c.measure_this_thread([&] { work(); });
//
// Counts are exact 64-bit totals by default: the counters are pinned (a
// group that does not fit the free counters fails with Busy at start(); in
// shared mode its counters are pinned perf counters, and perf core refuses
// what does not fit the same way), so nothing is scaled. In shared mode
// set_multiplex() lets perf core rotate the events over its counters
// instead; then each count is perf's estimate, scaled by the event's time
// enabled over its time running, and the result says so
// (CounterResult::multiplexed(), count(): scaled, running_fraction()).
// Erratum compensation (compensation.hpp) is off until set_compensation():
// then each result carries, beside every raw count an erratum of the
// counted core touches, its compensation (the erratum, the parameter in
// force and whether it was calibrated, the corrected value) as `amupmu
// stat` computes it; add_errata_companions() counts the events the models
// need beside it. Documentation/userspace-api/amupmu-tool.rst, "Counters".
#ifndef AMUPMU_COUNTERS_HPP
#define AMUPMU_COUNTERS_HPP

#include <amupmu/affinity.hpp>
#include <amupmu/compensation.hpp>
#include <amupmu/device.hpp>
#include <amupmu/error.hpp>
#include <amupmu/events.hpp>
#include <amupmu/info.hpp>
#include <amupmu/metrics.hpp>
#include <amupmu/session.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace amupmu {

/// What one start()/stop() counted: one total per event and CPU.
/// A value: copyable, immutable after construction, may be read from any
/// number of threads at once.
class CounterResult {
public:
	CounterResult() = default;
	/// A result of events (in group order) from readings whose values[i]
	/// is event i's count (what Session::read_all() gives; tests build
	/// them by hand). Throws Error (EBADMSG) when a reading holds fewer
	/// values than there are events.
	CounterResult(std::vector<EventSpec> events, std::span<const CpuReading> cpus, std::uint64_t time_enabled);
	/// The result of a multiplexed group (Scheduling::multiplex): times[k]
	/// are the event times of cpus[k]. Its totals, values and metrics are
	/// perf's estimates (scale_count()): a CPU's value scaled by its own
	/// times; a total, as perf stat's, the sum of the raw counts scaled by
	/// the sums of the times. Throws Error (EBADMSG) as the other, and
	/// when times and cpus differ in size.
	CounterResult(std::vector<EventSpec> events, std::span<const CpuReading> cpus,
		      std::span<const CpuTimes> times, std::uint64_t time_enabled);

	/// The event's total, summed over the CPUs (a multiplexed group's:
	/// perf's estimate, see count()). name is the text given to
	/// Counters::add() ("cycles", "inst_retired:u"), compared without
	/// regard to case. Throws InvalidArgument (EINVAL) naming an event
	/// that was not counted.
	[[nodiscard]] std::uint64_t operator[](std::string_view name) const;
	/// The event's count on one CPU. Throws InvalidArgument for an event
	/// not counted or a CPU not in the set.
	[[nodiscard]] std::uint64_t per_cpu(std::string_view name, unsigned cpu) const;
	/// The total, or nullopt when the event was not counted.
	[[nodiscard]] std::optional<std::uint64_t> find(std::string_view name) const noexcept;
	/// By position, without a name lookup: event i's total (i in group
	/// order), and its count on cpus()[cpu_index]. Throws InvalidArgument
	/// for an index out of range.
	[[nodiscard]] std::uint64_t total(std::size_t event) const;
	[[nodiscard]] std::uint64_t value(std::size_t event, std::size_t cpu_index) const;

	/// f(std::string_view name, std::uint64_t total) for each event, in
	/// the order they were added.
	template <typename F>
	void for_each(F&& f) const
	{
		for (std::size_t i = 0; i < events_.size(); ++i)
			f(std::string_view{events_[i].name}, totals_[i]);
	}

	/// The metrics the library derives from these totals (derive_metrics():
	/// IPC, branch miss rate, ... as `amupmu stat` prints them), for the
	/// events that were counted: from the raw totals, as amupmu stat's.
	[[nodiscard]] std::vector<Metric> metrics() const;

	/// Computes the erratum compensation (amupmu::compensate()) of every
	/// event's total and of its value on each CPU, among the counts of
	/// the same total or CPU, for a core of midr. Counters does it for
	/// each result after set_compensation(); a result built by hand gets
	/// it here. Returns *this.
	CounterResult& compensate(std::uint64_t midr, const CompensationOptions& options);
	/// Event i's compensation (in group order) of its total, or of its
	/// value on cpus()[cpu_index]: the erratum, its status, the corrected
	/// value and the parameter it rests on; nullptr when no erratum of
	/// the core touches the event or the result was not compensated.
	/// Throws InvalidArgument for an index out of range.
	[[nodiscard]] const Compensation* compensation(std::size_t event) const;
	[[nodiscard]] const Compensation* compensation(std::size_t event, std::size_t cpu_index) const;
	/// compensation() of an event by name (the first copy). Throws
	/// InvalidArgument naming an event that was not counted.
	[[nodiscard]] const Compensation* compensation(std::string_view name) const;
	/// The total compensated where the erratum's compensation applies
	/// (CompensationStatus::compensated), the raw total otherwise; by
	/// name (the first copy), by position, or on cpus()[cpu_index].
	/// Throws as compensation().
	[[nodiscard]] double compensated(std::string_view name) const;
	[[nodiscard]] double compensated(std::size_t event) const;
	[[nodiscard]] double compensated(std::size_t event, std::size_t cpu_index) const;
	/// Event i was added by Counters::add_errata_companions() for an
	/// erratum model, not asked for. Throws InvalidArgument for an index
	/// out of range.
	[[nodiscard]] bool companion(std::size_t event) const;

	/// The group multiplexed (Scheduling::multiplex): total(), value(),
	/// operator[], per_cpu(), for_each() and metrics() give perf's
	/// estimates, and count() what each rests on.
	[[nodiscard]] bool multiplexed() const noexcept;
	/// An event's total is an estimate: it ran only part of the time on
	/// a CPU (count(i).scaled), or never ran (not counted).
	[[nodiscard]] bool scaled() const noexcept;
	/// Event i's total (in group order) with what it rests on: the raw
	/// count and the times, summed over the CPUs (perf stat's aggregate:
	/// the raw sum scaled by the sums of the times), whether it is scaled
	/// or was not counted at all, its running_fraction(). A group that
	/// does not multiplex: the exact total, never scaled, with the
	/// group's time enabled and time_running() (the smallest over the
	/// CPUs). Throws InvalidArgument for an index out of range.
	[[nodiscard]] ScaledCount count(std::size_t event) const;
	/// The same of event i on cpus()[cpu_index] (its own times; a group
	/// that does not multiplex: the group's time enabled and the CPU's
	/// time running).
	[[nodiscard]] ScaledCount count(std::size_t event, std::size_t cpu_index) const;
	/// count() of an event by name (the first copy). Throws
	/// InvalidArgument naming an event that was not counted.
	[[nodiscard]] ScaledCount count(std::string_view name) const;

	/// The events, in group order.
	[[nodiscard]] std::span<const EventSpec> events() const noexcept { return events_; }
	/// The CPUs counted, ascending.
	[[nodiscard]] std::span<const unsigned> cpus() const noexcept { return cpus_; }
	/// ns the group was enabled, from start() to stop() (start() resets
	/// the times with the counts).
	[[nodiscard]] std::uint64_t time_enabled() const noexcept { return time_enabled_; }
	/// ns the group counted, the smallest over the CPUs (less than
	/// time_enabled() when a CPU was offline for part of the run).
	[[nodiscard]] std::uint64_t time_running() const noexcept { return time_running_; }
	/// ns the group counted on cpus()[cpu_index]; whether that CPU was
	/// offline when it was read (its counts stopped when it went down and
	/// are kept). Throw InvalidArgument for an index out of range.
	[[nodiscard]] std::uint64_t time_running(std::size_t cpu_index) const;
	[[nodiscard]] bool offline(std::size_t cpu_index) const;
	/// Nothing counted (a default-constructed result).
	[[nodiscard]] bool empty() const noexcept { return events_.empty(); }

private:
	[[nodiscard]] std::size_t index(std::string_view name) const;
	/// A multiplexed group's raw count, time enabled or time running of
	/// event on cpus_[cpu]: block 1, 2 or 3 of values_.
	[[nodiscard]] std::uint64_t mux_at(std::size_t block, std::size_t event, std::size_t cpu) const noexcept;
	/// A multiplexed group's event total, as perf stat aggregates it.
	[[nodiscard]] ScaledCount aggregate(std::size_t event) const noexcept;

	friend class Counters;

	std::vector<EventSpec> events_{};
	std::vector<unsigned> cpus_{};
	std::vector<std::uint64_t> totals_{};		///< per event
	/// [cpu index * events + event]; a multiplexed group's has three more
	/// blocks of the same shape after it: the raw counts, the times
	/// enabled, the times running
	std::vector<std::uint64_t> values_{};
	std::vector<std::uint64_t> cpu_running_{};	///< per CPU index
	std::vector<bool> cpu_offline_{};		///< per CPU index
	std::uint64_t time_enabled_ = 0;
	std::uint64_t time_running_ = 0;
	/// compensate(): [block * events + event], block 0 the totals', block
	/// 1 + k cpus_[k]'s; empty when nothing was compensated
	std::vector<std::optional<Compensation>> compensation_{};
	std::vector<bool> companion_{};			///< per event; empty: none
};

/// Events counted by name on a set of CPUs (default: every online CPU with
/// a PMU). Add events, then start() and stop() as often as needed; each
/// start() resets the counts. The group is configured in the driver at the
/// first start(): events can no longer be added after it.
///
/// Thread safety: one object per thread; distinct objects may be used
/// concurrently (each holds its own session). Remember the box above:
/// the object belongs to a thread, the counts do not.
class [[nodiscard]] Counters {
public:
	/// Opens default_device_path and reads its AMUPMU_INFO. Throws as
	/// Device::open() and Device::info().
	Counters();
	/// Counts through device (which it takes); reads its AMUPMU_INFO.
	explicit Counters(Device device);
	/// Counts through device, with info already read from it. Names
	/// resolve with the MIDR of the first online CPU with a PMU (its
	/// core's IMPLEMENTATION DEFINED events); the default set is every
	/// online CPU with a PMU.
	Counters(Device device, Info info);

	Counters(const Counters&) = delete;
	Counters& operator=(const Counters&) = delete;
	Counters(Counters&&) noexcept = default;
	Counters& operator=(Counters&&) noexcept = default;
	/// Closing the session frees the counters (counting or not). A
	/// Scope or PinnedScope must not outlive the object, nor see it moved.
	~Counters() = default;

	/// Counts on these CPUs instead (any order; duplicates ignored).
	/// Throws InvalidArgument after the first start(), for an empty set,
	/// or for a CPU info does not list as online with a PMU; the set is
	/// unchanged then.
	Counters& set_cpus(std::vector<unsigned> cpus);

	/// Lets the events multiplex (Scheduling::multiplex; shared mode,
	/// ABI 2.3): perf core rotates them over its counters instead of
	/// refusing a group that does not fit, and the results are perf's
	/// estimates (CounterResult::multiplexed(), count()). false: pinned
	/// again, the default. Throws InvalidArgument after the first start(),
	/// Unsupported when the driver cannot multiplex (require_multiplex():
	/// a driver before ABI 2.3, exclusive mode); nothing changes then.
	Counters& set_multiplex(bool on = true);
	/// set_multiplex() is in force.
	[[nodiscard]] bool multiplex() const noexcept { return multiplex_; }

	/// Compensates every result of stop() and read() for the PMU errata of
	/// the core of the first CPU of the set (as amupmu stat: a set of
	/// mixed cores is compensated as that one), with options
	/// (CounterResult::compensation(), compensated(), beside the raw
	/// counts). Throws InvalidArgument after the first start().
	Counters& set_compensation(CompensationOptions options = {});
	/// The options of set_compensation(); nullptr when it is off.
	[[nodiscard]] const CompensationOptions* compensation() const noexcept
	{
		return compensation_ ? &*compensation_ : nullptr;
	}
	/// Adds the events the errata models of the core of the first CPU of
	/// the set need beside the events added so far (errata_companions():
	/// STALL_BACKEND_MEM for IMP_STALL_BACKEND_MCQ's model, EXC_TAKEN and
	/// EXC_RETURN for EXC_UNDEF's cross-check, each with the modifiers of
	/// the event it serves), marked as companions
	/// (CounterResult::companion()); none on a core without such an
	/// erratum. Throws InvalidArgument after the first start() or beyond
	/// max_group_events; nothing is added then.
	Counters& add_errata_companions();
	/// Event i (in the order added) was added by add_errata_companions().
	[[nodiscard]] bool companion(std::size_t event) const noexcept
	{
		return event < companion_.size() && companion_[event];
	}

	/// Adds an event by name: the catalogue's ("inst_retired",
	/// "l1d_cache_refill"), perf's aliases ("cycles", "instructions",
	/// "branch-misses"), raw "r<hex>", each with perf's modifiers
	/// (":u", ":k", ...). Throws UnknownEvent (with the closest names),
	/// InvalidArgument for an event added twice, more than
	/// max_group_events, or an add() after the first start(); nothing is
	/// added then.
	Counters& add(std::string_view event);
	/// add() of each, all or none: when one throws, none is added.
	Counters& add(std::initializer_list<std::string_view> events);
	/// Adds an event parsed already (parse_event(), parse_event_list():
	/// perf's groups and modifiers resolved), under its name. Unlike
	/// add(std::string_view) it may repeat an event, as perf stat -e a,a
	/// does: each copy has a counter of its own (the way to occupy
	/// counters); name lookups of the result find the first copy, the
	/// positional ones (total(i), value(i, cpu)) each. Throws
	/// InvalidArgument beyond max_group_events or after the first start().
	Counters& add(EventSpec event);

	/// Configures the group in the driver now, as the first start() does,
	/// so that what it refuses (Unsupported, Busy, ...) is known before the
	/// measured work begins; nothing counts until start(). Does nothing
	/// when configured already. Throws as start().
	void configure();

	/// Resets and enables the group (configuring it in the driver the
	/// first time: require_events() and require_countable() against
	/// info, then Session::create() on a duplicate of the device's
	/// descriptor, so that a failed try keeps the device). Throws InvalidArgument when no
	/// event was added or the group is counting already, Unsupported for
	/// an event a CPU cannot count, Busy when too few counters are free,
	/// and the other errors of Session::create(); the object is left
	/// stopped (and may be given another try).
	void start();
	/// Disables the group and reads every CPU's totals into result().
	/// Throws InvalidArgument when not counting, and the errors of
	/// Session::read_all() (the group is disabled then all the same).
	void stop();
	/// The counts since start() while the group keeps counting (a -I
	/// interval's reading); every CPU in one read. Throws InvalidArgument
	/// when not counting, and the errors of Session::read_all().
	[[nodiscard]] CounterResult read();
	/// Counting: between start() and stop().
	[[nodiscard]] bool running() const noexcept { return running_; }

	/// The totals of the last stop(). Throws InvalidArgument before the
	/// first stop(), or when the last Scope could not stop (its error).
	[[nodiscard]] const CounterResult& result() const;

	/// start() now, stop() when it goes out of scope. A destructor must
	/// not throw: a stop() that fails there makes result() throw instead.
	class [[nodiscard]] Scope {
	public:
		Scope(const Scope&) = delete;
		Scope& operator=(const Scope&) = delete;
		Scope(Scope&& other) noexcept : counters_{std::exchange(other.counters_, nullptr)} {}
		Scope& operator=(Scope&&) = delete;
		~Scope();

	private:
		friend class Counters;
		explicit Scope(Counters& c) : counters_{&c} {}
		Counters* counters_;
	};
	/// start(); the Scope stop()s.
	[[nodiscard]] Scope measure();

	/// Counts "this code": pins the calling thread to a CPU (ThreadPin),
	/// counts that CPU alone and start()s; the end of the scope stop()s
	/// (as Scope) and gives the thread back its affinity. Other work on
	/// that CPU is counted too (the box above); nothing is lost to a
	/// migration. Not copyable or movable; destroy it on its thread.
	class [[nodiscard]] PinnedScope {
	public:
		PinnedScope(const PinnedScope&) = delete;
		PinnedScope& operator=(const PinnedScope&) = delete;
		~PinnedScope();
		/// The CPU the thread is pinned to and counted on.
		[[nodiscard]] unsigned cpu() const noexcept { return pin_.cpu(); }

	private:
		friend class Counters;
		PinnedScope(Counters& c, unsigned cpu);
		ThreadPin pin_;
		Counters* counters_;
	};
	/// The PinnedScope of the CPU the thread runs on: before the first
	/// start() the set becomes that CPU (set_cpus({cpu})); once configured,
	/// the group's CPU, where the thread moves. Throws InvalidArgument
	/// when that CPU is not online with a PMU or the group counts several
	/// CPUs, and as ThreadPin and start(); the thread's affinity and the
	/// CPU set are as they were then (unless the group was configured
	/// before start() failed: then it counts the thread's CPU).
	[[nodiscard]] PinnedScope measure_this_thread();
	/// measure_this_thread(), f(), stop(), and the result; as
	/// measure(f) when f throws. The thread's affinity is restored.
	template <typename F>
	const CounterResult& measure_this_thread(F&& f)
	{
		const PinnedScope scope = measure_this_thread();
		return run_counted(std::forward<F>(f));
	}
	/// start(), f(), stop(), and the result. When f throws, the counters
	/// are stopped (result() holds the partial counts) and the exception
	/// propagates.
	template <typename F>
	const CounterResult& measure(F&& f)
	{
		start();
		return run_counted(std::forward<F>(f));
	}

	/// The events, in the order added (their parsed form).
	[[nodiscard]] std::span<const EventSpec> events() const noexcept { return events_; }
	/// The CPU set, ascending.
	[[nodiscard]] std::span<const unsigned> cpus() const noexcept { return cpus_; }
	/// AMUPMU_INFO the names and CPUs were resolved with.
	[[nodiscard]] const Info& info() const noexcept { return info_; }
	/// The session once start() configured it (for what Counters does not
	/// wrap: sample_reader(), read() of one CPU), else nullptr.
	[[nodiscard]] const Session* session() const noexcept { return session_ ? &*session_ : nullptr; }
	/// Every CPU's entry of the last stop() or read() as the driver gave
	/// it, with what CounterResult does not keep: each CPU's state
	/// (CpuReading::evicted() in shared mode: counts short), samples and
	/// overflows. Empty before the first of them.
	[[nodiscard]] const GroupReading& reading() const noexcept { return reading_; }

private:
	void default_cpus();
	[[nodiscard]] EventSpec parse(std::string_view event, std::span<const EventSpec> also) const;
	void check_new(const EventSpec& spec, std::span<const EventSpec> also) const;
	void require_not_configured(const char* what) const;
	/// The result of a read of the group (with each CPU's times when it
	/// multiplexes).
	[[nodiscard]] CounterResult result_of(const GroupReading& reading) const;
	/// stop() for a destructor or an exception path: records its error
	/// for result() instead of throwing.
	void stop_quietly() noexcept;
	/// f() while counting, then stop() and the result; when f throws,
	/// stop_quietly() (the partial counts kept) and the exception.
	template <typename F>
	const CounterResult& run_counted(F&& f)
	{
		try {
			std::forward<F>(f)();
		} catch (...) {
			stop_quietly();
			throw;
		}
		stop();
		return result();
	}
	/// The MIDR errata are looked up with: the first CPU of the set's.
	[[nodiscard]] std::uint64_t errata_midr() const noexcept;
	/// measure_this_thread()'s CPU: the thread's before the group is
	/// configured, then the group's only one.
	[[nodiscard]] unsigned this_thread_cpu() const;

	Device device_;
	Info info_{};
	std::uint64_t midr_ = 0;
	std::vector<unsigned> cpus_{};
	std::vector<EventSpec> events_{};
	std::optional<Session> session_{};
	GroupReading reading_{};
	CounterResult result_{};
	bool have_result_ = false;
	bool running_ = false;
	/// set_multiplex()
	bool multiplex_ = false;
	std::optional<Error> stop_error_{};
	std::optional<CompensationOptions> compensation_{};
	std::vector<bool> companion_{};	///< per event added so far; shorter: false
};

} // namespace amupmu

#endif
