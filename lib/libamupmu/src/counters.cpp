// SPDX-License-Identifier: LGPL-2.1-or-later
#include <amupmu/counters.hpp>
#include <amupmu/error.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <string>
#include <utility>

#include <unistd.h>

namespace amupmu {

namespace {

bool same_name(std::string_view a, std::string_view b) noexcept
{
	return a.size() == b.size() && std::ranges::equal(a, b, [](char x, char y) {
		       return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
	       });
}

bool countable_cpu(const Info& info, unsigned cpu) noexcept
{
	return cpu < info.cpus.size() && info.cpus[cpu].online() && info.cpus[cpu].has_pmu();
}

[[noreturn]] void misuse(const std::string& what)
{
	throw InvalidArgument{"Counters: " + what, EINVAL};
}

} // namespace

// ---------------------------------------------------------------- result

CounterResult::CounterResult(std::vector<EventSpec> events, std::span<const CpuReading> cpus,
			     std::uint64_t time_enabled)
	: events_{std::move(events)}, totals_(events_.size(), 0), time_enabled_{time_enabled}
{
	const std::size_t n = events_.size();
	cpus_.reserve(cpus.size());
	values_.reserve(cpus.size() * n);
	bool first = true;
	for (const CpuReading& c : cpus) {
		if (c.nr_values < n)
			throw Error{"Counters: CPU " + std::to_string(c.cpu) + " read " + std::to_string(c.nr_values) +
					    " values for " + std::to_string(n) + " events",
				    EBADMSG};
		cpus_.push_back(c.cpu);
		cpu_running_.push_back(c.time_running);
		cpu_offline_.push_back((c.state & read_state::offline) != 0);
		for (std::size_t i = 0; i < n; ++i) {
			values_.push_back(c.values[i].value);
			totals_[i] += c.values[i].value;
		}
		time_running_ = first ? c.time_running : std::min(time_running_, c.time_running);
		first = false;
	}
}

CounterResult::CounterResult(std::vector<EventSpec> events, std::span<const CpuReading> cpus,
			     std::span<const CpuTimes> times, std::uint64_t time_enabled)
	: CounterResult{std::move(events), cpus, time_enabled}
{
	if (times.size() != cpus.size())
		throw Error{"Counters: times of " + std::to_string(times.size()) + " CPUs for readings of " +
				    std::to_string(cpus.size()),
			    EBADMSG};
	const std::size_t n = events_.size();
	const std::size_t cells = cpus.size() * n;
	// values_ (the raw counts now) gets the blocks of the raw counts, the
	// times enabled and the times running; then the estimates replace
	// its first block and the totals
	values_.resize(4 * cells);
	for (std::size_t k = 0; k < cpus.size(); ++k)
		for (std::size_t i = 0; i < n; ++i) {
			const std::size_t at = k * n + i;
			values_[cells + at] = values_[at];
			values_[2 * cells + at] = times[k].events[i].enabled;
			values_[3 * cells + at] = times[k].events[i].running;
			values_[at] = scale_count(values_[at], times[k].events[i].enabled, times[k].events[i].running)
					      .value;
		}
	for (std::size_t i = 0; i < n; ++i)
		totals_[i] = aggregate(i).value;
}

bool CounterResult::multiplexed() const noexcept
{
	const std::size_t cells = cpus_.size() * events_.size();
	return cells != 0 && values_.size() == 4 * cells;
}

std::uint64_t CounterResult::mux_at(std::size_t block, std::size_t event, std::size_t cpu) const noexcept
{
	const std::size_t cells = cpus_.size() * events_.size();
	return values_[block * cells + cpu * events_.size() + event];
}

std::size_t CounterResult::index(std::string_view name) const
{
	for (std::size_t i = 0; i < events_.size(); ++i)
		if (same_name(events_[i].name, name))
			return i;
	throw InvalidArgument{"Counters: event '" + std::string{name} + "' was not counted", EINVAL};
}

std::uint64_t CounterResult::operator[](std::string_view name) const
{
	return totals_[index(name)];
}

std::uint64_t CounterResult::per_cpu(std::string_view name, unsigned cpu) const
{
	const std::size_t i = index(name);
	const auto it = std::ranges::find(cpus_, cpu);
	if (it == cpus_.end())
		throw InvalidArgument{"Counters: CPU " + std::to_string(cpu) + " was not counted", EINVAL};
	const auto at = static_cast<std::size_t>(it - cpus_.begin());
	return values_[at * events_.size() + i];
}

namespace {

void check_index(const char* what, std::size_t i, std::size_t n)
{
	if (i >= n)
		throw InvalidArgument{std::string{"Counters: "} + what + " index " + std::to_string(i) + " of " +
					      std::to_string(n),
				      EINVAL};
}

} // namespace

std::uint64_t CounterResult::total(std::size_t event) const
{
	check_index("event", event, events_.size());
	return totals_[event];
}

std::uint64_t CounterResult::value(std::size_t event, std::size_t cpu_index) const
{
	check_index("event", event, events_.size());
	check_index("CPU", cpu_index, cpus_.size());
	return values_[cpu_index * events_.size() + event];
}

ScaledCount CounterResult::count(std::size_t event) const
{
	check_index("event", event, events_.size());
	if (!multiplexed())
		return {.value = totals_[event], .raw = totals_[event], .time_enabled = time_enabled_,
			.time_running = time_running_};
	return aggregate(event);
}

ScaledCount CounterResult::aggregate(std::size_t event) const noexcept
{
	// perf stat's aggregate (perf_stat_process_counter()): the sums of
	// the raw counts and of the times, scaled
	std::uint64_t raw = 0, enabled = 0, running = 0;
	for (std::size_t c = 0; c < cpus_.size(); ++c) {
		raw += mux_at(1, event, c);
		enabled += mux_at(2, event, c);
		running += mux_at(3, event, c);
	}
	return scale_count(raw, enabled, running);
}

ScaledCount CounterResult::count(std::size_t event, std::size_t cpu_index) const
{
	check_index("event", event, events_.size());
	check_index("CPU", cpu_index, cpus_.size());
	if (!multiplexed()) {
		const std::uint64_t v = values_[cpu_index * events_.size() + event];
		return {.value = v, .raw = v, .time_enabled = time_enabled_, .time_running = cpu_running_[cpu_index]};
	}
	return scale_count(mux_at(1, event, cpu_index), mux_at(2, event, cpu_index), mux_at(3, event, cpu_index));
}

ScaledCount CounterResult::count(std::string_view name) const
{
	return count(index(name));
}

bool CounterResult::scaled() const noexcept
{
	if (!multiplexed())
		return false;
	for (std::size_t i = 0; i < events_.size(); ++i) {
		const ScaledCount c = aggregate(i);
		if (c.scaled || !c.counted)
			return true;
	}
	return false;
}

std::uint64_t CounterResult::time_running(std::size_t cpu_index) const
{
	check_index("CPU", cpu_index, cpus_.size());
	return cpu_running_[cpu_index];
}

bool CounterResult::offline(std::size_t cpu_index) const
{
	check_index("CPU", cpu_index, cpus_.size());
	return cpu_offline_[cpu_index];
}

std::optional<std::uint64_t> CounterResult::find(std::string_view name) const noexcept
{
	for (std::size_t i = 0; i < events_.size(); ++i)
		if (same_name(events_[i].name, name))
			return totals_[i];
	return std::nullopt;
}

std::vector<Metric> CounterResult::metrics() const
{
	std::vector<EventCount> counts;
	counts.reserve(events_.size());
	for (std::size_t i = 0; i < events_.size(); ++i)
		counts.push_back({.number = events_[i].number, .flags = events_[i].flags,
				  .value = static_cast<double>(totals_[i])});
	return derive_metrics(counts);
}

CounterResult& CounterResult::compensate(std::uint64_t midr, const CompensationOptions& options)
{
	compensation_.clear();
	if (errata_for(midr, ErratumUnit::pmu).empty())
		return *this;
	const std::size_t n = events_.size();
	std::vector<std::optional<Compensation>> out(n * (1 + cpus_.size()));
	std::vector<EventCount> counts(n);
	bool any = false;
	// block 0: the totals; block 1 + k: cpus_[k]'s values
	for (std::size_t block = 0; block <= cpus_.size(); ++block) {
		for (std::size_t i = 0; i < n; ++i)
			counts[i] = {.number = events_[i].number,
				     .flags = events_[i].flags,
				     .value = static_cast<double>(block == 0 ? totals_[i] : values_[(block - 1) * n + i])};
		for (std::size_t i = 0; i < n; ++i) {
			out[block * n + i] = amupmu::compensate(counts, i, midr, options);
			any = any || out[block * n + i].has_value();
		}
	}
	if (any)
		compensation_ = std::move(out);
	return *this;
}

const Compensation* CounterResult::compensation(std::size_t event) const
{
	check_index("event", event, events_.size());
	if (compensation_.empty() || !compensation_[event])
		return nullptr;
	return &*compensation_[event];
}

const Compensation* CounterResult::compensation(std::size_t event, std::size_t cpu_index) const
{
	check_index("event", event, events_.size());
	check_index("CPU", cpu_index, cpus_.size());
	const std::size_t at = (1 + cpu_index) * events_.size() + event;
	if (compensation_.empty() || !compensation_[at])
		return nullptr;
	return &*compensation_[at];
}

const Compensation* CounterResult::compensation(std::string_view name) const
{
	return compensation(index(name));
}

namespace {

double compensated_or(const Compensation* c, std::uint64_t raw) noexcept
{
	return c && c->value ? *c->value : static_cast<double>(raw);
}

} // namespace

double CounterResult::compensated(std::string_view name) const
{
	return compensated(index(name));
}

double CounterResult::compensated(std::size_t event) const
{
	return compensated_or(compensation(event), totals_[event]);
}

double CounterResult::compensated(std::size_t event, std::size_t cpu_index) const
{
	return compensated_or(compensation(event, cpu_index), values_[cpu_index * events_.size() + event]);
}

bool CounterResult::companion(std::size_t event) const
{
	check_index("event", event, events_.size());
	return event < companion_.size() && companion_[event];
}

// ---------------------------------------------------------------- counters

Counters::Counters() : Counters{Device::open()}
{
}

// device_ is initialised before info_ (declaration order)
Counters::Counters(Device device) : device_{std::move(device)}, info_{device_.info()}
{
	default_cpus();
}

Counters::Counters(Device device, Info info) : device_{std::move(device)}, info_{std::move(info)}
{
	default_cpus();
}

void Counters::default_cpus()
{
	for (const CpuInfo& c : info_.cpus)
		if (countable_cpu(info_, c.cpu)) {
			if (cpus_.empty())
				midr_ = c.midr;
			cpus_.push_back(c.cpu);
		}
}

void Counters::require_not_configured(const char* what) const
{
	if (session_)
		misuse(std::string{what} + " after start(): the group is configured");
}

Counters& Counters::set_multiplex(bool on)
{
	require_not_configured("set_multiplex()");
	if (on)
		require_multiplex(info_);
	multiplex_ = on;
	return *this;
}

Counters& Counters::set_compensation(CompensationOptions options)
{
	require_not_configured("set_compensation()");
	compensation_ = std::move(options);
	return *this;
}

std::uint64_t Counters::errata_midr() const noexcept
{
	return cpus_.empty() ? midr_ : info_.cpus[cpus_.front()].midr;
}

Counters& Counters::add_errata_companions()
{
	require_not_configured("add_errata_companions()");
	std::vector<EventSpec> add = errata_companions(events_, errata_midr());
	if (events_.size() + add.size() > max_group_events)
		misuse("more than " + std::to_string(max_group_events) + " events with the errata companions (" +
		       std::to_string(add.size()) + ")");
	companion_.resize(events_.size(), false);
	companion_.resize(events_.size() + add.size(), true);
	events_.insert(events_.end(), std::make_move_iterator(add.begin()), std::make_move_iterator(add.end()));
	return *this;
}

Counters& Counters::set_cpus(std::vector<unsigned> cpus)
{
	require_not_configured("set_cpus()");
	if (cpus.empty())
		misuse("an empty CPU set");
	std::sort(cpus.begin(), cpus.end());
	cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
	for (const unsigned c : cpus)
		if (!countable_cpu(info_, c))
			misuse("CPU " + std::to_string(c) + " is not online with a PMU");
	cpus_ = std::move(cpus);
	return *this;
}

EventSpec Counters::parse(std::string_view event, std::span<const EventSpec> also) const
{
	EventSpec spec = parse_event(event, midr_);
	check_new(spec, also);
	return spec;
}

void Counters::check_new(const EventSpec& spec, std::span<const EventSpec> also) const
{
	const auto same = [&](const EventSpec& e) { return same_name(e.name, spec.name); };
	if (std::ranges::any_of(events_, same) || std::ranges::any_of(also, same))
		misuse("event '" + spec.name + "' added twice");
	if (events_.size() + also.size() + 1 > max_group_events)
		misuse("more than " + std::to_string(max_group_events) + " events");
}

Counters& Counters::add(std::string_view event)
{
	require_not_configured("add()");
	EventSpec spec = parse(event, {});
	events_.push_back(std::move(spec));
	return *this;
}

Counters& Counters::add(std::initializer_list<std::string_view> events)
{
	require_not_configured("add()");
	std::vector<EventSpec> specs;
	specs.reserve(events.size());
	for (const std::string_view e : events)
		specs.push_back(parse(e, specs));
	events_.insert(events_.end(), std::make_move_iterator(specs.begin()), std::make_move_iterator(specs.end()));
	return *this;
}

Counters& Counters::add(EventSpec event)
{
	require_not_configured("add()");
	if (events_.size() + 1 > max_group_events)
		misuse("more than " + std::to_string(max_group_events) + " events");
	events_.push_back(std::move(event));
	return *this;
}

void Counters::configure()
{
	if (!session_) {
		if (events_.empty())
			misuse("start() without an event: add() some");
		if (cpus_.empty())
			misuse("no CPU online with a PMU");
		require_events(events_, info_, cpus_);
		require_countable(events_, info_, cpus_);
		// The session takes the descriptor it is given, also when the
		// configuration fails: give it a duplicate and keep ours for
		// another try.
		const int fd = ::dup(device_.fd());
		if (fd < 0)
			throw_error("Counters: dup of the device", errno);
		session_.emplace(Session::create(Device::adopt(fd),
						 GroupConfig{.events = group_events(events_), .cpus = cpus_},
						 multiplex_ ? Scheduling::multiplex : Scheduling::pinned));
		device_.close();
	}
}

void Counters::start()
{
	if (running_)
		misuse("start() while counting");
	configure();
	session_->reset();
	session_->enable();
	running_ = true;
}

void Counters::stop()
{
	if (!running_)
		misuse("stop() without start()");
	running_ = false;
	session_->disable();
	session_->read_all(reading_);
	result_ = result_of(reading_);
	have_result_ = true;
	stop_error_.reset();
}

CounterResult Counters::read()
{
	if (!running_)
		misuse("read() while not counting");
	session_->read_all(reading_);
	return result_of(reading_);
}

CounterResult Counters::result_of(const GroupReading& r) const
{
	CounterResult out;
	if (!r.has_times()) {
		out = CounterResult{events_, r.cpus(), r.time_enabled()};
	} else {
		std::vector<CpuTimes> times(r.cpus().size());
		for (std::size_t k = 0; k < times.size(); ++k)
			times[k] = r.times(k);
		out = CounterResult{events_, r.cpus(), times, r.time_enabled()};
	}
	if (!companion_.empty()) {
		out.companion_ = companion_;
		out.companion_.resize(events_.size(), false);
	}
	if (compensation_)
		out.compensate(errata_midr(), *compensation_);
	return out;
}

void Counters::stop_quietly() noexcept
{
	try {
		stop();
	} catch (const Error& e) {
		stop_error_.emplace(e);
		have_result_ = false;
	} catch (...) {
		// bad_alloc building the result: result() says there is none
		have_result_ = false;
	}
}

const CounterResult& Counters::result() const
{
	if (stop_error_)
		throw *stop_error_;
	if (!have_result_)
		misuse("result() before stop()");
	return result_;
}

Counters::Scope Counters::measure()
{
	start();
	return Scope{*this};
}

Counters::Scope::~Scope()
{
	if (counters_ && counters_->running())
		counters_->stop_quietly();
}

unsigned Counters::this_thread_cpu() const
{
	if (!session_)
		return current_cpu();
	if (cpus_.size() != 1)
		misuse("measure_this_thread() with a group of " + std::to_string(cpus_.size()) +
		       " CPUs: it counts one, the thread's");
	return cpus_.front();
}

Counters::PinnedScope Counters::measure_this_thread()
{
	return PinnedScope{*this, this_thread_cpu()};
}

// pin_ first: a throw below unpins (the members constructed are destroyed)
Counters::PinnedScope::PinnedScope(Counters& c, unsigned cpu) : pin_{cpu}, counters_{&c}
{
	if (c.session_) {
		c.start();
		return;
	}
	std::vector<unsigned> was = c.cpus_;
	c.set_cpus({pin_.cpu()});
	try {
		c.start();
	} catch (...) {
		if (!c.session_)	// not configured: the set it had
			c.cpus_ = std::move(was);
		throw;
	}
}

// the counters stop while the thread is still pinned; pin_ restores the
// affinity after this body
Counters::PinnedScope::~PinnedScope()
{
	if (counters_->running())
		counters_->stop_quietly();
}

} // namespace amupmu
