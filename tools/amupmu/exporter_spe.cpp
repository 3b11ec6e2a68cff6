// SPDX-License-Identifier: GPL-2.0
#include "exporter_spe.hpp"

#include <amupmu/error.hpp>


#include <algorithm>
#include <chrono>
#include <exception>
#include <iterator>
#include <utility>

namespace amupmu::cli {

void SpeLatencyHistogram::add(std::uint32_t cycles) noexcept
{
	const auto it = std::ranges::lower_bound(spe_latency_bounds, cycles);
	++buckets[static_cast<std::size_t>(std::distance(spe_latency_bounds.begin(), it))];
	++count;
	sum += cycles;
}

SpeOpKind spe_op_kind(const std::optional<spe::OpType>& op) noexcept
{
	if (!op)
		return SpeOpKind::other;
	if (op->is_load())
		return SpeOpKind::load;
	if (op->is_store())
		return SpeOpKind::store;
	return op->cls == spe::OpClass::branch ? SpeOpKind::branch : SpeOpKind::other;
}

void add_spe_records(SpeTotals& t, unsigned cpu, std::span<const std::byte> bytes)
{
	SpeCpuTotals& c = t.cpus[cpu];
	spe::RecordReader reader{bytes};
	spe::Record r;
	while (reader.next(r)) {
		++c.records;
		const std::optional<std::uint16_t> lat = r.total_latency();
		if (!lat) {
			++c.without_latency;
			continue;
		}
		c.ops[static_cast<std::size_t>(spe_op_kind(r.op()))].add(*lat);
	}
	t.skipped_bytes += reader.stats().skipped_bytes;
}

// ---------------------------------------------------------------- the session

SpeSampler::SpeSampler(const SpeConfig& config, std::string_view device, SpeTotals& totals, std::mutex& mutex)
	: session_{SpeSession::open(config, device)}, totals_{totals}, mutex_{mutex}
{
	for (const unsigned cpu : session_.cpus())
		buffers_.push_back(session_.map(cpu));
	for (const SpeCpuStatus& s : session_.read())
		last_[s.cpu] = s;	// a new session's: zero
	{
		const std::lock_guard lock{mutex_};
		totals_.interval = session_.driver_config().interval;
		totals_.kernel = config.kernel;
		for (const unsigned cpu : session_.cpus())
			(void)totals_.cpus[cpu];	// its series from the first scrape on
	}
	session_.enable();
	thread_ = std::jthread{[this](const std::stop_token& stop) { run(stop); }};
}

SpeSampler::~SpeSampler()
{
	thread_.request_stop();
	if (thread_.joinable())
		thread_.join();
	try {
		session_.disable();
		const std::lock_guard lock{mutex_};
		(void)drain_locked();
	} catch (const std::exception&) {
		// the session closes anyway; what it held is lost with it
	}
}

std::string SpeSampler::drain_locked()
{
	for (SpeBuffer& b : buffers_) {
		const unsigned cpu = b.cpu();
		try {
			drained_ += b.consume([&](std::span<const std::byte> s) { add_spe_records(totals_, cpu, s); });
		} catch (const Error&) {
			// more than the buffer unread: the header is not what the
			// driver wrote; what is there cannot be trusted
			totals_.skipped_bytes += b.resync();
		}
	}
	std::string why = failed_;
	for (const SpeCpuStatus& s : session_.read()) {
		SpeCpuStatus& last = last_[s.cpu];
		SpeCpuTotals& c = totals_.cpus[s.cpu];
		c.lost_bytes += s.lost_bytes - last.lost_bytes;
		last = s;
		if ((s.state & spe_state::fault) != 0 && why.empty())
			why = "a fault stopped profiling on CPU " + std::to_string(s.cpu) + " (PMBSR_EL1 " +
			      std::to_string(s.last_pmbsr) + ")";
	}
	return why;
}

void SpeSampler::run(const std::stop_token& stop)
{
	using namespace std::chrono_literals;
	std::unique_lock lock{mutex_, std::defer_lock};
	try {
		while (!stop.stop_requested()) {
			// the driver wakes the file at a buffer's watermark (half of
			// it); a second at most, to see the stop
			const bool ready = SpeBuffer::wait(session_.fd(), 1000);
			lock.lock();
			const std::uint64_t before = drained_;
			(void)drain_locked();
			// readable but nothing to read: the device gone (EPOLLHUP)
			// until the next scrape configures again; no spinning
			// meanwhile
			if (ready && drained_ == before)
				(void)idle_.wait_for(lock, stop, 1s, [] { return false; });
			lock.unlock();
		}
	} catch (const std::exception& e) {
		if (!lock.owns_lock())
			lock.lock();
		failed_ = std::string{"the drain thread stopped: "} + e.what();
	}
}

} // namespace amupmu::cli
