// SPDX-License-Identifier: GPL-2.0
#include "exporter_spe.hpp"

#include <amupmu/error.hpp>


#include <poll.h>

#include <algorithm>
#include <cerrno>
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
		const std::lock_guard lock{mutex_};
		session_.disable();	// publishes the last records
		drain_buffers_locked();
		(void)add_status_locked();
	} catch (const std::exception&) {
		// the session closes anyway; what it held is lost with it
	}
}

void SpeSampler::drain_buffers_locked()
{
	for (SpeBuffer& b : buffers_) {
		const unsigned cpu = b.cpu();
		try {
			(void)b.consume([&](std::span<const std::byte> s) { add_spe_records(totals_, cpu, s); });
		} catch (const Error&) {
			// more than the buffer unread: the header is not what the
			// driver wrote; what is there cannot be trusted
			totals_.skipped_bytes += b.resync();
		}
	}
}

std::string SpeSampler::add_status_locked()
{
	std::string why;
	for (const SpeCpuStatus& s : session_.read()) {
		SpeCpuStatus& last = last_[s.cpu];
		totals_.cpus[s.cpu].lost_bytes += s.lost_bytes - last.lost_bytes;
		last = s;
		if ((s.state & spe_state::fault) != 0 && why.empty())
			why = "a fault stopped profiling on CPU " + std::to_string(s.cpu) + " (PMBSR_EL1 " +
			      std::to_string(s.last_pmbsr) + ")";
	}
	return why;
}

std::string SpeSampler::flush_locked()
{
	if (!failed_.empty())
		return failed_;
	// the driver publishes a CPU's records at its buffer events and when
	// profiling stops: stopped for the drain, so that the scrape has
	// every record written before it
	session_.disable();
	drain_buffers_locked();
	std::string why = add_status_locked();
	if (why.empty())
		session_.enable();
	return why;
}

void SpeSampler::run(const std::stop_token& stop)
{
	try {
		while (!stop.stop_requested()) {
			// the driver wakes the file when a buffer holds its
			// watermark (half of it); a second at most, to see the stop
			pollfd p{.fd = session_.fd(), .events = POLLIN, .revents = 0};
			const int r = ::poll(&p, 1, 1000);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				throw_error("poll of the SPE session", errno);
			const std::lock_guard lock{mutex_};
			if ((p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) {
				// the SPE device is gone: configured again by a scrape
				failed_ = "the SPE session's device is gone (POLLHUP)";
				return;
			}
			if (r > 0)
				drain_buffers_locked();
		}
	} catch (const std::exception& e) {
		const std::lock_guard lock{mutex_};
		failed_ = std::string{"the drain thread stopped: "} + e.what();
	}
}

} // namespace amupmu::cli
