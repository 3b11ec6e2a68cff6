// SPDX-License-Identifier: GPL-2.0
//
// SampleReader over a synthetic ring [host]: the producer side is played
// by the test as the UAPI header describes it (header page, data area,
// monotonic head/tail, records that wrap).
#include <amupmu/error.hpp>
#include <amupmu/sample.hpp>

#include <linux/amupmu.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

using namespace amupmu;

namespace {

constexpr std::size_t page = 4096;

struct FakeRing {
	explicit FakeRing(std::size_t data_size) : mem((page + data_size) / 8)
	{
		hdr()->version = AMUPMU_RING_VERSION;
		hdr()->header_size = sizeof(amupmu_ring_header);
		hdr()->data_offset = page;
		hdr()->data_size = data_size;
		hdr()->timer_freq = 62500000;
	}
	amupmu_ring_header* hdr() { return reinterpret_cast<amupmu_ring_header*>(mem.data()); }
	unsigned char* data() { return reinterpret_cast<unsigned char*>(mem.data()) + page; }
	void* base() { return mem.data(); }
	std::size_t len() { return mem.size() * 8; }

	// writes one record at head (wrapping), advances head
	void push(std::uint32_t cpu, std::uint64_t pc, std::vector<std::uint64_t> values, std::uint32_t size = 0,
		  std::uint8_t mode = AMUPMU_MODE_USER)
	{
		std::vector<unsigned char> rec(sizeof(amupmu_sample) + values.size() * 8);
		amupmu_sample s{};
		s.size = size ? size : static_cast<std::uint32_t>(rec.size());
		s.type = AMUPMU_SAMPLE_PMU_OVERFLOW;
		s.mode = mode;
		s.event = 1;
		s.cpu = cpu;
		s.nr_values = static_cast<std::uint32_t>(values.size());
		s.pid = 100 + cpu;
		s.tid = 200 + cpu;
		s.time = 1000 * pc;
		s.pc = pc;
		std::memcpy(rec.data(), &s, sizeof(s));
		if (!values.empty())	// memcpy from an empty vector's null data() is UB
			std::memcpy(rec.data() + sizeof(s), values.data(), values.size() * 8);
		const std::uint64_t ds = hdr()->data_size;
		for (std::size_t i = 0; i < rec.size(); ++i)
			data()[(hdr()->data_head + i) & (ds - 1)] = rec[i];
		hdr()->data_head += rec.size();
		hdr()->samples++;
	}

	std::vector<std::uint64_t> mem;
};

} // namespace

TEST_CASE("SampleReader reads records, publishes the tail", "[host][sample]")
{
	FakeRing ring{4096};
	SampleReader r = SampleReader::view(ring.base(), ring.len());
	CHECK(r.data_size() == 4096);
	CHECK(r.timer_freq() == 62500000);
	CHECK(r.consume([](const Sample&) {}) == 0);

	ring.push(0, 0x400000, {1, 2, 3});
	ring.push(1, 0x400004, {4, 5, 6});
	CHECK(r.available() == std::uint64_t{2} * (40 + 24));
	std::vector<std::uint64_t> pcs, sums;
	const std::size_t n = r.consume([&](const Sample& s) {
		pcs.push_back(s.pc);
		std::uint64_t sum = 0;
		for (const std::uint64_t v : s.values)
			sum += v;
		sums.push_back(sum);
		CHECK(s.type == sample_pmu_overflow);
		CHECK(s.pid == 100 + s.cpu);
		CHECK(s.tid == 200 + s.cpu);
		CHECK(s.event == 1);
	});
	CHECK(n == 2);
	CHECK(pcs == std::vector<std::uint64_t>{0x400000, 0x400004});
	CHECK(sums == std::vector<std::uint64_t>{6, 15});
	CHECK(ring.hdr()->data_tail == ring.hdr()->data_head);
	CHECK(r.available() == 0);
	CHECK(r.samples() == 2);
}

TEST_CASE("SampleReader: the mode of each sample, in perf's words", "[host][sample]")
{
	FakeRing ring{4096};
	SampleReader r = SampleReader::view(ring.base(), ring.len());
	ring.push(0, 1, {}, 0, AMUPMU_MODE_USER);
	ring.push(0, 2, {}, 0, AMUPMU_MODE_KERNEL);
	ring.push(0, 3, {}, 0, AMUPMU_MODE_HV);
	ring.push(0, 4, {}, 0, 7);	// from a newer driver
	std::vector<SampleMode> modes;
	r.consume([&](const Sample& s) { modes.push_back(s.mode); });
	CHECK(modes == std::vector<SampleMode>{SampleMode::user, SampleMode::kernel, SampleMode::hv,
					       static_cast<SampleMode>(7)});
	CHECK(to_string(SampleMode::user) == "user");
	CHECK(to_string(SampleMode::kernel) == "kernel");
	CHECK(to_string(SampleMode::hv) == "hv");
	CHECK(to_string(static_cast<SampleMode>(7)) == "unknown");
	CHECK(perf_level(SampleMode::user) == '.');
	CHECK(perf_level(SampleMode::kernel) == 'k');
	CHECK(perf_level(SampleMode::hv) == 'H');
	CHECK(parse_sample_mode("kernel") == SampleMode::kernel);
	CHECK_FALSE(parse_sample_mode("el1"));
}

TEST_CASE("sample time to CLOCK_MONOTONIC_RAW: golden numbers", "[host][sample][time]")
{
	struct Row {
		std::uint64_t time;
		std::uint64_t ns;
	};
	SECTION("62.5 MHz: 16 ns a count exactly (mult 16 << 24)")
	{
		const TimeConversion c{.clock = Clock::cntvct, .time_shift = 24, .time_mult = 268435456,
				       .time_zero = 1000000, .time_zero_ns = 5000000000};
		REQUIRE(c.valid());
		constexpr Row rows[] = {
			{1000000, 5000000000},		// time_zero itself
			{1000625, 5000010000},		// 625 counts later: 10 us
			{999375, 4999990000},		// 625 counts before: a negative delta
			{0, 4984000000},		// the counter's start, 16 ms before
			{1000001, 5000000016},
		};
		for (const Row& r : rows) {
			CAPTURE(r.time);
			CHECK(sample_time_ns(r.time, c) == r.ns);
		}
	}
	SECTION("19.2 MHz: mult 873813333 (52.083 ns a count, rounded), shift 24")
	{
		// expected: time_zero_ns + floor((time - time_zero) * mult / 2^24),
		// computed exactly (Python integers)
		const TimeConversion c{.clock = Clock::cntpct, .time_shift = 24, .time_mult = 873813333,
				       .time_zero = 5000000000000, .time_zero_ns = 100000000000000};
		constexpr Row rows[] = {
			{5000019200000, 100000999999999},	// one second of counts, mult rounded down
			{4999999987655, 99999999357031},	// 12345 counts before: negative, floored
			{6099511640121, 157266231234456},	// 2^40 + 12345 counts later
			{3900488371447, 42733769368043},	// 2^40 + 777 counts before
		};
		for (const Row& r : rows) {
			CAPTURE(r.time);
			CHECK(sample_time_ns(r.time, c) == r.ns);
		}
		// the 2^40-count delta times mult needs 70 bits: a naive 64-bit
		// (d * mult) >> shift wraps and is far off
		const std::uint64_t d = 6099511640121 - c.time_zero;
		CHECK(c.time_zero_ns + ((d * c.time_mult) >> c.time_shift) == 100091626590104);
	}
	SECTION("no conversion published")
	{
		CHECK_FALSE(TimeConversion{}.valid());
		CHECK(sample_time_ns(123, TimeConversion{}) == 0);
		CHECK_FALSE((TimeConversion{.time_shift = 64, .time_mult = 1}).valid());
		CHECK(sample_time_ns(123, TimeConversion{.time_shift = 64, .time_mult = 1}) == 0);
	}
	// a constant expression, as the header's formula is
	STATIC_REQUIRE(sample_time_ns(999375, TimeConversion{.time_shift = 24, .time_mult = 268435456,
							       .time_zero = 1000000, .time_zero_ns = 5000000000}) ==
		       4999990000);
}

TEST_CASE("SampleReader: the ring header's clock and time conversion", "[host][sample][time]")
{
	FakeRing ring{4096};
	ring.hdr()->clock = AMUPMU_CLOCK_CNTPCT;
	ring.hdr()->time_shift = 24;
	ring.hdr()->time_mult = 268435456;
	ring.hdr()->time_zero = 1000;
	ring.hdr()->time_zero_ns = 77;
	const SampleReader r = SampleReader::view(ring.base(), ring.len());
	CHECK(r.clock() == Clock::cntpct);
	const TimeConversion c = r.time_conversion();
	CHECK(c == TimeConversion{.clock = Clock::cntpct, .time_shift = 24, .time_mult = 268435456,
				  .time_zero = 1000, .time_zero_ns = 77});
	CHECK(sample_time_ns(1001, c) == 93);

	// a header from before ABI 2 ends at timer_freq: no conversion
	ring.hdr()->header_size = 64;
	CHECK(r.clock() == Clock::unknown);
	CHECK_FALSE(r.time_conversion().valid());
}

TEST_CASE("SampleReader reassembles records that wrap around the end", "[host][sample]")
{
	FakeRing ring{512};
	SampleReader r = SampleReader::view(ring.base(), ring.len());
	std::uint64_t expect_pc = 0, seen = 0;
	// 72-byte records in a 512-byte ring: every 8-byte offset, many wraps
	for (std::uint64_t i = 1; i <= 200; ++i) {
		ring.push(0, i, {i, i * 2, i * 3, i * 4});
		if (i % 3 == 0 || i == 200) {
			r.consume([&](const Sample& s) {
				++expect_pc;
				REQUIRE(s.pc == expect_pc);
				REQUIRE(s.values.size() == 4);
				REQUIRE(s.values[3] == expect_pc * 4);
				++seen;
			});
		}
	}
	CHECK(seen == 200);
	CHECK(ring.hdr()->data_tail == std::uint64_t{200} * 72);
}

TEST_CASE("SampleReader refuses malformed rings and records", "[host][sample]")
{
	FakeRing bad_version{4096};
	bad_version.hdr()->version = 99;
	CHECK_THROWS_AS(SampleReader::view(bad_version.base(), bad_version.len()), InvalidArgument);
	FakeRing not_pow2{4096};
	not_pow2.hdr()->data_size = 3000;
	CHECK_THROWS_AS(SampleReader::view(not_pow2.base(), not_pow2.len()), InvalidArgument);
	FakeRing too_big{4096};
	too_big.hdr()->data_size = 8192;
	CHECK_THROWS_AS(SampleReader::view(too_big.base(), too_big.len()), InvalidArgument);

	FakeRing ring{4096};
	SampleReader r = SampleReader::view(ring.base(), ring.len());
	ring.push(0, 1, {1});
	ring.push(0, 2, {1}, 12);	// size not a multiple of 8
	std::size_t got = 0;
	try {
		r.consume([&](const Sample&) { ++got; });
		FAIL("no exception");
	} catch (const Error& e) {
		CHECK(e.errnum() == EBADMSG);
	}
	CHECK(got == 1);
	// the tail stops before the bad record
	CHECK(ring.hdr()->data_tail == 48);
}

TEST_CASE("SampleReader refuses a data area smaller than the largest record", "[host][sample]")
{
	// A 296-byte record wrapping in a 64-byte area would be copied from
	// past its end: such a ring (which the driver never makes) is refused.
	for (const std::size_t small : {std::size_t{8}, std::size_t{64}, std::size_t{256}}) {
		FakeRing ring{4096};
		ring.hdr()->data_size = small;
		CAPTURE(small);
		CHECK_THROWS_MATCHES(SampleReader::view(ring.base(), ring.len()), InvalidArgument,
				     Catch::Matchers::Message("sample ring: data size " + std::to_string(small) +
							      " smaller than the largest record (296 bytes): "
							      "Invalid argument (EINVAL)"));
	}
	FakeRing ring{512};	// the first power of two that holds sample_max_size
	CHECK(SampleReader::view(ring.base(), ring.len()).data_size() == 512);
}

TEST_CASE("SampleReader: more unread than the data area is EBADMSG; nothing moves", "[host][sample]")
{
	FakeRing ring{4096};
	SampleReader r = SampleReader::view(ring.base(), ring.len());
	// 90 records of 48 bytes (4320) into 4096: the writer ran past the
	// reader, over the first records
	for (std::uint64_t i = 0; i < 90; ++i)
		ring.push(0, i, {i});
	REQUIRE(ring.hdr()->data_head == std::uint64_t{90} * 48);
	bool called = false;
	try {
		(void)r.consume([&](const Sample&) { called = true; });
		FAIL("no error");
	} catch (const Error& e) {
		CHECK(e.errnum() == EBADMSG);
		CHECK(std::string{e.what()} ==
		      "sample ring: head 4320 tail 0: more than its 4096 bytes unread: Bad message (EBADMSG)");
	}
	CHECK_FALSE(called);
	CHECK(ring.hdr()->data_tail == 0);
	CHECK(ring.hdr()->data_head == 4320);
	CHECK(r.dropped_bytes() == 0);

	// a head behind the tail is the same
	ring.hdr()->data_tail = 4328;
	CHECK_THROWS_AS(r.consume([&](const Sample&) { called = true; }), Error);
	CHECK_FALSE(called);
	CHECK(ring.hdr()->data_tail == 4328);

	// exactly full is fine
	FakeRing full{4096};
	SampleReader f = SampleReader::view(full.base(), full.len());
	for (std::uint64_t i = 0; i < 64; ++i)
		full.push(0, i, {i, i, i});	// 64 bytes each
	CHECK(f.consume([](const Sample&) {}) == 64);
	CHECK(full.hdr()->data_tail == 4096);
}

TEST_CASE("SampleReader: a throwing callback consumes the records it was called with", "[host][sample]")
{
	FakeRing ring{4096};
	SampleReader r = SampleReader::view(ring.base(), ring.len());
	for (std::uint64_t pc = 1; pc <= 4; ++pc)
		ring.push(0, pc, {});	// 40 bytes each
	std::vector<std::uint64_t> pcs;
	const auto throw_on_2 = [&](const Sample& s) {
		pcs.push_back(s.pc);
		if (s.pc == 2)
			throw std::runtime_error{"callback failed"};
	};
	CHECK_THROWS_WITH(r.consume(throw_on_2), "callback failed");
	CHECK(pcs == std::vector<std::uint64_t>{1, 2});
	CHECK(ring.hdr()->data_tail == 80);	// past record 2
	// the next consume() starts after the record f threw on
	pcs.clear();
	CHECK(r.consume([&](const Sample& s) { pcs.push_back(s.pc); }) == 2);
	CHECK(pcs == std::vector<std::uint64_t>{3, 4});
	CHECK(ring.hdr()->data_tail == 160);
}

TEST_CASE("SampleReader: after EBADMSG, resync() drops the rest and counts it", "[host][sample]")
{
	FakeRing ring{4096};
	SampleReader r = SampleReader::view(ring.base(), ring.len());
	ring.push(0, 1, {});		// 0-39
	ring.push(0, 2, {7}, 44);	// 40-87, size not a multiple of 8
	ring.push(0, 3, {});		// 88-127
	std::vector<std::uint64_t> pcs;
	const auto collect = [&](const Sample& s) { pcs.push_back(s.pc); };
	CHECK_THROWS_WITH(r.consume(collect),
			  "sample ring: record at 40: size 44: Bad message (EBADMSG)");
	CHECK(pcs == std::vector<std::uint64_t>{1});
	CHECK(ring.hdr()->data_tail == 40);
	// defined: the same record stops the next consume() again ...
	CHECK_THROWS_AS(r.consume(collect), Error);
	CHECK(ring.hdr()->data_tail == 40);
	CHECK(pcs.size() == 1);
	// ... until resync() drops it and what follows it
	CHECK(r.resync() == 88);
	CHECK(r.dropped_bytes() == 88);
	CHECK(ring.hdr()->data_tail == 128);
	CHECK(r.lost() == 0);	// the driver's count is not the reader's
	ring.push(0, 4, {});
	CHECK(r.consume(collect) == 1);
	CHECK(pcs == std::vector<std::uint64_t>{1, 4});
	CHECK(r.resync() == 0);
	CHECK(r.dropped_bytes() == 88);

	// a corrupt head: one data area dropped
	ring.hdr()->data_head += 100000;
	CHECK_THROWS_AS(r.consume(collect), Error);
	CHECK(r.resync() == 4096);
	CHECK(r.dropped_bytes() == 88 + 4096);
	CHECK(r.available() == 0);
}

TEST_CASE("SampleReader is move-only and owns nothing in view mode", "[host][sample]")
{
	STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<SampleReader>);
	STATIC_REQUIRE(std::is_nothrow_move_constructible_v<SampleReader>);
	FakeRing ring{4096};
	SampleReader a = SampleReader::view(ring.base(), ring.len());
	SampleReader b = std::move(a);
	ring.push(0, 7, {});
	CHECK(b.consume([](const Sample& s) { CHECK(s.values.empty()); }) == 1);
}

TEST_CASE("SampleReader::map of a file that has no ring", "[host][sample]")
{
	// /dev/null cannot be mapped shared with a header: a typed error
	const int fd = ::open("/dev/zero", O_RDWR);
	REQUIRE(fd >= 0);
	// zero page: version 0
	CHECK_THROWS_AS(SampleReader::map(fd, 1), InvalidArgument);
	::close(fd);
}
