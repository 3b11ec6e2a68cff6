// SPDX-License-Identifier: GPL-2.0
//
// SPE sessions without the driver [host][spe]: SpeConfig's conversion to
// the driver's values (golden, against the UAPI constants), the event and
// type lists, and SpeBuffer over a buffer in memory whose producer the test
// plays as include/uapi/linux/amupmu.h describes it (header page, data
// area, monotonic head and tail, PAD at the end of the data area before a
// wrap): empty, wrap, overrun, a throwing callback, bad headers.
#include <amupmu/error.hpp>
#include <amupmu/spe.hpp>
#include <amupmu/spe_session.hpp>

#include <linux/amupmu.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <functional>
#include <typeindex>
#include <stdexcept>
#include <vector>

#include <unistd.h>

using namespace amupmu;

namespace {

// ---------------------------------------------------------------- fake buffer

constexpr std::size_t page = 4096;

struct FakeBuffer {
	explicit FakeBuffer(std::size_t data_size) : mem((page + data_size) / 8)
	{
		hdr()->version = AMUPMU_SPE_BUF_VERSION;
		hdr()->header_size = sizeof(amupmu_spe_buf_header);
		hdr()->data_offset = page;
		hdr()->data_size = data_size;
		hdr()->cpu = 3;
		hdr()->timer_freq = 62500000;
	}
	amupmu_spe_buf_header* hdr() { return reinterpret_cast<amupmu_spe_buf_header*>(mem.data()); }
	unsigned char* data() { return reinterpret_cast<unsigned char*>(mem.data()) + page; }
	void* base() { return mem.data(); }
	std::size_t len() { return mem.size() * 8; }

	// one 16-byte record: PC address packet (9 bytes), a 2-byte total
	// latency counter, 4 PADs, END; the PC's low byte is n
	static std::vector<unsigned char> record(unsigned char n)
	{
		return {0xb0, n, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,	// PC el0
			0x98, 0x0c, 0x00,					// total latency 12
			0x00, 0x00, 0x00,					// PAD
			0x01};							// END
	}

	// as the driver publishes: records at head; PAD to the end of the
	// data area when a record would cross it
	void publish(const std::vector<unsigned char>& rec)
	{
		const std::uint64_t ds = hdr()->data_size;
		std::uint64_t off = hdr()->data_head & (ds - 1);
		if (off + rec.size() > ds) {
			std::memset(data() + off, 0, ds - off);
			hdr()->data_head += ds - off;
			off = 0;
		}
		std::memcpy(data() + off, rec.data(), rec.size());
		hdr()->data_head += rec.size();
		hdr()->records++;
	}

	std::vector<std::uint64_t> mem;
};

struct Collected {
	std::vector<std::size_t> spans;
	std::vector<std::byte> bytes;
	void operator()(std::span<const std::byte> s)
	{
		spans.push_back(s.size());
		bytes.insert(bytes.end(), s.begin(), s.end());
	}
};

std::uint64_t decoded_records(std::span<const std::byte> bytes, std::vector<std::uint64_t>* pcs = nullptr)
{
	spe::RecordReader reader{bytes};
	std::uint64_t n = 0;
	for (const spe::Record& r : reader) {
		REQUIRE(r.complete());
		if (pcs)
			pcs->push_back(r.pc()->address);
		++n;
	}
	CHECK(reader.stats().truncated == 0);
	return n;
}

} // namespace

// ---------------------------------------------------------------- configuration

TEST_CASE("spe_driver_config: the defaults", "[host][spe][config]")
{
	const SpeRecordedConfig r = spe_driver_config(SpeConfig{});
	CHECK(r.flags == 0);
	CHECK(r.enables == AMUPMU_SPE_EN_USER);
	CHECK(r.pct == AMUPMU_SPE_PCT_VIRTUAL);
	CHECK(r.pmsfcr == 0);
	CHECK(r.pmsevfr == 0);
	CHECK(r.pmsnevfr == 0);
	CHECK(r.min_latency == 0);
	CHECK(r.interval == 4096);
	CHECK(r.buf_pages == 64);
}

TEST_CASE("spe_driver_config: golden values against the UAPI constants", "[host][spe][config]")
{
	SECTION("every enable, the physical clock, jitter")
	{
		SpeConfig c;
		c.kernel = c.context = c.physical_address = c.timestamps = true;
		c.clock = SpeClock::physical;
		c.jitter = true;
		c.interval = 1024;
		c.buf_pages = 1024;
		const SpeRecordedConfig r = spe_driver_config(c);
		CHECK(r.enables == (AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_KERNEL | AMUPMU_SPE_EN_CX |
				    AMUPMU_SPE_EN_PA | AMUPMU_SPE_EN_TS));
		CHECK(r.enables == 0x3b);
		CHECK(r.pct == AMUPMU_SPE_PCT_PHYSICAL);
		CHECK(r.flags == AMUPMU_SPE_CFG_JITTER);
		CHECK(r.interval == 1024);
		CHECK(r.buf_pages == 1024);
		c.clock = SpeClock::guest_physical;
		CHECK(spe_driver_config(c).pct == AMUPMU_SPE_PCT_GUEST_PHYSICAL);
	}
	SECTION("kernel only")
	{
		SpeConfig c;
		c.user = false;
		c.kernel = true;
		CHECK(spe_driver_config(c).enables == AMUPMU_SPE_EN_KERNEL);
	}
	SECTION("types: any (TYPE), all (TYPE and TYPEm), none (TYPEm)")
	{
		SpeConfig c;
		c.types_any = spe_op::load | spe_op::store;
		CHECK(spe_driver_config(c).pmsfcr == (AMUPMU_SPE_PMSFCR_FT | AMUPMU_SPE_PMSFCR_LD | AMUPMU_SPE_PMSFCR_ST));
		CHECK(spe_driver_config(c).pmsfcr == 0x60002);
		c.types_any = spe_op::load;
		c.types_all = spe_op::fp;
		c.types_none = spe_op::simd;
		CHECK(spe_driver_config(c).pmsfcr == (AMUPMU_SPE_PMSFCR_FT | AMUPMU_SPE_PMSFCR_LD | AMUPMU_SPE_PMSFCR_FP |
						      AMUPMU_SPE_PMSFCR_FPM | AMUPMU_SPE_PMSFCR_SIMDM));
		c = SpeConfig{};
		c.types_any = spe_op::branch;
		c.types_all = spe_op::store;
		CHECK(spe_driver_config(c).pmsfcr ==
		      (AMUPMU_SPE_PMSFCR_FT | AMUPMU_SPE_PMSFCR_B | AMUPMU_SPE_PMSFCR_ST | AMUPMU_SPE_PMSFCR_STM));
	}
	SECTION("events, excluded events, latency")
	{
		SpeConfig c;
		c.events = parse_spe_events("retired,l1d-refill");
		c.excluded_events = parse_spe_events("mispred");
		c.min_latency = 200;
		const SpeRecordedConfig r = spe_driver_config(c);
		CHECK(r.pmsfcr == (AMUPMU_SPE_PMSFCR_FE | AMUPMU_SPE_PMSFCR_FNE | AMUPMU_SPE_PMSFCR_FL));
		CHECK(r.pmsfcr == 0xd);
		CHECK(r.pmsevfr == 0xa);
		CHECK(r.pmsnevfr == 0x80);
		CHECK(r.min_latency == 200);
	}
	SECTION("the arm_spe defaults: DEFAULTS, interval 0")
	{
		SpeConfig c;
		c.use_defaults = true;
		c.timestamps = true;
		const SpeRecordedConfig r = spe_driver_config(c);
		CHECK(r.flags == AMUPMU_SPE_CFG_DEFAULTS);
		CHECK(r.interval == 0);
		CHECK(r.pmsfcr == 0);
		CHECK(r.enables == (AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_TS));
		c.interval = 0;
		CHECK(spe_driver_config(c).interval == 0);
	}
}

TEST_CASE("spe_driver_config refuses what the driver would", "[host][spe][config]")
{
	const auto refused = [](auto change, const char* why) {
		SpeConfig c;
		change(c);
		REQUIRE_THROWS_WITH(spe_driver_config(c), Catch::Contains(why));
		try {
			(void)spe_driver_config(c);
		} catch (const InvalidArgument& e) {
			CHECK(e.errnum() == EINVAL);
		}
	};
	refused([](SpeConfig& c) { c.user = false; }, "user space, the kernel or both");
	refused([](SpeConfig& c) { c.clock = SpeClock::physical; }, "clock without timestamps");
	refused([](SpeConfig& c) { c.timestamps = true; c.clock = static_cast<SpeClock>(2); }, "clock 2");
	refused([](SpeConfig& c) { c.buf_pages = 1; }, "1 pages");
	refused([](SpeConfig& c) { c.buf_pages = 3; }, "3 pages");
	refused([](SpeConfig& c) { c.buf_pages = 2048; }, "2048 pages");
	refused([](SpeConfig& c) { c.interval = 0; }, "interval 0");
	refused([](SpeConfig& c) { c.interval = 1000; }, "interval 1000");
	refused([](SpeConfig& c) { c.types_any = 0x20; }, "type bits 0x20");
	refused([](SpeConfig& c) { c.types_any = c.types_none = spe_op::load; }, "asked for and excluded");
	refused([](SpeConfig& c) { c.events = c.excluded_events = 2; }, "required and excluded: retired");
	refused([](SpeConfig& c) { c.min_latency = 65536; }, "min_latency 65536");
	refused([](SpeConfig& c) { c.use_defaults = true; c.min_latency = 10; }, "arm_spe defaults");
	refused([](SpeConfig& c) { c.use_defaults = true; c.jitter = true; }, "arm_spe defaults");
	refused([](SpeConfig& c) { c.use_defaults = true; c.interval = 1024; }, "arm_spe defaults");
	refused([](SpeConfig& c) { c.use_defaults = true; c.types_any = spe_op::load; }, "arm_spe defaults");
}

TEST_CASE("SPE event names: the decoder's and perf's", "[host][spe][config]")
{
	CHECK(parse_spe_events("retired") == 1u << 1);
	CHECK(parse_spe_events("RETIRED,L1D-Access") == 0x6);
	CHECK(parse_spe_events("l1d-refill,tlb-access,tlb-walk") == 0x38);
	CHECK(parse_spe_events("tlb-refill") == parse_spe_events("tlb-walk"));
	CHECK(parse_spe_events("llc-refill") == parse_spe_events("llc-miss"));
	CHECK(parse_spe_events("not-taken,mispred,llc-access,remote-access") == 0x5c0);
	CHECK(parse_spe_events("impdef-12") == 1u << 12);
	CHECK(parse_spe_events("l2d-refill,hitm,lfb,snooped") == 0xf00000);
	// every name the decoder prints parses back to its bit
	for (unsigned b = 0; b < 64; ++b)
		if (!spe::event_name(b).empty())
			CHECK(parse_spe_events(spe::event_name(b)) == std::uint64_t{1} << b);
	CHECK(format_spe_events(0x5c0) == "not-taken,mispred,llc-access,remote-access");
	CHECK(format_spe_events(std::uint64_t{1} << 40 | 2) == "retired,bit40");
	CHECK(format_spe_events(0).empty());
	CHECK_THROWS_WITH(parse_spe_events("retired,bogus"), Catch::Contains("unknown SPE event 'bogus'") &&
							     Catch::Contains("l1d-refill"));
	CHECK_THROWS_WITH(parse_spe_events("retired,"), Catch::Contains("empty name in the event list"));
	CHECK_THROWS_AS(parse_spe_events(""), InvalidArgument);
}

TEST_CASE("SPE operation type lists", "[host][spe][config]")
{
	SpeConfig c;
	parse_spe_types("ld,st,br", c);
	CHECK(c.types_any == (spe_op::load | spe_op::store | spe_op::branch));
	CHECK(c.types_all == 0);
	CHECK(c.types_none == 0);
	parse_spe_types("load,+FP,-simd", c);
	CHECK(c.types_any == spe_op::load);
	CHECK(c.types_all == spe_op::fp);
	CHECK(c.types_none == spe_op::simd);
	const SpeConfig before = c;
	CHECK_THROWS_WITH(parse_spe_types("ld,vector", c), Catch::Contains("unknown operation type 'vector'"));
	CHECK_THROWS_WITH(parse_spe_types("ld,+ld", c), Catch::Contains("'ld' listed twice"));
	CHECK_THROWS_WITH(parse_spe_types(",ld", c), Catch::Contains("empty name"));
	// a refused list changes nothing
	CHECK(c.types_any == before.types_any);
	CHECK(c.types_all == before.types_all);
	CHECK(c.types_none == before.types_none);
}

TEST_CASE("SPE state names", "[host][spe]")
{
	CHECK(format_spe_state(0) == "-");
	CHECK(format_spe_state(AMUPMU_SPE_ENABLED | AMUPMU_SPE_DISCARDING) == "enabled,discarding");
	CHECK(format_spe_state(AMUPMU_SPE_FAULT | 0x40) == "fault,0x40");
}

// ---------------------------------------------------------------- buffers

TEST_CASE("SpeBuffer: empty, then records, the tail published", "[host][spe][buffer]")
{
	FakeBuffer fb{4096};
	SpeBuffer b = SpeBuffer::view(fb.base(), fb.len());
	CHECK(b.data_size() == 4096);
	CHECK(b.timer_freq() == 62500000);
	CHECK(b.cpu() == 3);
	Collected got;
	CHECK(b.consume(std::ref(got)) == 0);
	CHECK(got.spans.empty());

	for (unsigned char n = 0; n < 10; ++n)
		fb.publish(FakeBuffer::record(n));
	fb.hdr()->lost_bytes = 48;
	fb.hdr()->flags = AMUPMU_SPE_ENABLED;
	CHECK(b.available() == 160);
	CHECK(b.records() == 10);
	CHECK(b.lost_bytes() == 48);
	CHECK(b.flags() == AMUPMU_SPE_ENABLED);
	CHECK(b.consume(std::ref(got)) == 160);
	CHECK(got.spans == std::vector<std::size_t>{160});
	CHECK(fb.hdr()->data_tail == 160);
	CHECK(b.available() == 0);
	std::vector<std::uint64_t> pcs;
	CHECK(decoded_records(got.bytes, &pcs) == 10);
	CHECK(pcs.front() == 0x401000);
	CHECK(pcs.back() == 0x401009);
	CHECK(b.consume(std::ref(got)) == 0);
	CHECK(got.spans.size() == 1);
}

TEST_CASE("SpeBuffer: bytes that wrap come as two spans of whole records", "[host][spe][buffer]")
{
	FakeBuffer fb{4096};
	SpeBuffer b = SpeBuffer::view(fb.base(), fb.len());
	// a reader that kept up to 4088: the next record does not fit before
	// the end, the driver pads 8 bytes and writes it at 0
	fb.hdr()->data_head = fb.hdr()->data_tail = 4096 * 5 + 4088;
	fb.publish(FakeBuffer::record(1));
	fb.publish(FakeBuffer::record(2));
	CHECK(fb.hdr()->data_head == 4096 * 6 + 32);
	Collected got;
	CHECK(b.consume(std::ref(got)) == 8 + 32);
	CHECK(got.spans == std::vector<std::size_t>{8, 32});
	CHECK(fb.hdr()->data_tail == 4096 * 6 + 32);
	// each span decodes on its own: the padding gives no record
	std::vector<std::uint64_t> pcs;
	CHECK(decoded_records(std::span{got.bytes}.first(8)) == 0);
	CHECK(decoded_records(std::span{got.bytes}.subspan(8), &pcs) == 2);
	CHECK(pcs == std::vector<std::uint64_t>{0x401001, 0x401002});

	SECTION("a full buffer that ends exactly at the end of the data area: one span")
	{
		FakeBuffer f2{4096};
		SpeBuffer b2 = SpeBuffer::view(f2.base(), f2.len());
		for (unsigned i = 0; i < 256; ++i)
			f2.publish(FakeBuffer::record(static_cast<unsigned char>(i)));
		Collected all;
		CHECK(b2.consume(std::ref(all)) == 4096);
		CHECK(all.spans == std::vector<std::size_t>{4096});
		CHECK(decoded_records(all.bytes) == 256);
	}
}

TEST_CASE("SpeBuffer: more unread than the buffer holds is EBADMSG, the tail stays", "[host][spe][buffer]")
{
	FakeBuffer fb{4096};
	SpeBuffer b = SpeBuffer::view(fb.base(), fb.len());
	fb.hdr()->data_tail = 100;
	fb.hdr()->data_head = 100 + 4097;
	bool called = false;
	try {
		(void)b.consume([&](std::span<const std::byte>) { called = true; });
		FAIL("no error");
	} catch (const Error& e) {
		CHECK(e.errnum() == EBADMSG);
		CHECK_THAT(e.what(), Catch::Contains("CPU 3") && Catch::Contains("more than its 4096 bytes unread"));
	}
	CHECK_FALSE(called);
	CHECK(fb.hdr()->data_tail == 100);
	// a head behind the tail is the same
	fb.hdr()->data_head = 99;
	CHECK_THROWS_AS(b.consume([](std::span<const std::byte>) {}), Error);
	CHECK(fb.hdr()->data_tail == 100);
	// exactly full is fine
	fb.hdr()->data_head = 100 + 4096;
	CHECK(b.consume([](std::span<const std::byte>) {}) == 4096);
	CHECK(fb.hdr()->data_tail == 4196);
}

TEST_CASE("SpeBuffer: a throwing callback consumes the spans it was handed", "[host][spe][buffer]")
{
	// as SampleReader: what f was called with is never handed again
	FakeBuffer fb{4096};
	SpeBuffer b = SpeBuffer::view(fb.base(), fb.len());
	fb.hdr()->data_head = fb.hdr()->data_tail = 4080;
	fb.publish(FakeBuffer::record(7));	// 4080-4095
	fb.publish(FakeBuffer::record(8));	// 0-15 after the wrap
	unsigned calls = 0;
	const auto throw_on_first = [&](std::span<const std::byte>) {
		++calls;
		throw std::runtime_error{"callback failed"};
	};
	CHECK_THROWS_WITH(b.consume(throw_on_first), "callback failed");
	CHECK(calls == 1);
	CHECK(fb.hdr()->data_tail == 4096);	// past the first span only
	Collected got;
	CHECK(b.consume(std::ref(got)) == 16);
	CHECK(got.spans == std::vector<std::size_t>{16});
	CHECK(decoded_records(got.bytes) == 1);
	CHECK(fb.hdr()->data_tail == 4096 + 16);

	// throwing on the second span: both are consumed
	fb.publish(FakeBuffer::record(9));
	fb.hdr()->data_tail = 4080;	// replay the wrap: 4080-4095, 0-31
	calls = 0;
	const auto throw_on_second = [&](std::span<const std::byte>) {
		if (++calls == 2)
			throw std::runtime_error{"callback failed"};
	};
	CHECK_THROWS_WITH(b.consume(throw_on_second), "callback failed");
	CHECK(calls == 2);
	CHECK(fb.hdr()->data_tail == fb.hdr()->data_head);
	CHECK(b.consume(std::ref(got)) == 0);
}

TEST_CASE("SpeBuffer: after EBADMSG, resync() drops the unread bytes and counts them", "[host][spe][buffer]")
{
	FakeBuffer fb{4096};
	SpeBuffer b = SpeBuffer::view(fb.base(), fb.len());
	fb.hdr()->data_tail = 100;
	fb.hdr()->data_head = 100 + 5000;
	CHECK_THROWS_AS(b.consume([](std::span<const std::byte>) {}), Error);
	CHECK_THROWS_AS(b.consume([](std::span<const std::byte>) {}), Error);	// stays refused ...
	CHECK(b.resync() == 4096);	// ... until resync(): one data area at most
	CHECK(b.dropped_bytes() == 4096);
	CHECK(fb.hdr()->data_tail == 5100);
	CHECK(b.lost_bytes() == 0);	// the driver's count is not the reader's
	fb.publish(FakeBuffer::record(1));
	Collected got;
	CHECK(b.consume(std::ref(got)) == 16);
	CHECK(decoded_records(got.bytes) == 1);
	CHECK(b.resync() == 0);
	CHECK(b.dropped_bytes() == 4096);
}

TEST_CASE("SpeBuffer: bad headers are refused", "[host][spe][buffer]")
{
	const auto refused = [](auto change) {
		FakeBuffer fb{4096};
		change(fb);
		CHECK_THROWS_AS(SpeBuffer::view(fb.base(), fb.len()), InvalidArgument);
	};
	refused([](FakeBuffer& f) { f.hdr()->version = 2; });
	refused([](FakeBuffer& f) { f.hdr()->header_size = 64; });	// smaller than version 1's
	refused([](FakeBuffer& f) { f.hdr()->data_offset = 40; });	// inside the header
	refused([](FakeBuffer& f) { f.hdr()->data_offset = page + 4; });	// not 8-aligned
	refused([](FakeBuffer& f) { f.hdr()->data_size = 3000; });	// not a power of two
	refused([](FakeBuffer& f) { f.hdr()->data_size = 0; });
	refused([](FakeBuffer& f) { f.hdr()->data_size = 8192; });	// beyond the mapping
	refused([](FakeBuffer& f) { f.hdr()->data_offset = 2 * page; });	// data beyond the mapping
	FakeBuffer fb{4096};
	CHECK_THROWS_AS(SpeBuffer::view(fb.base(), 64), InvalidArgument);	// smaller than the header
	CHECK_NOTHROW(SpeBuffer::view(fb.base(), fb.len()));
	// a larger header of a later driver is fine
	fb.hdr()->header_size = 128;
	CHECK_NOTHROW(SpeBuffer::view(fb.base(), fb.len()));
}

TEST_CASE("SpeBuffer: moves hand the buffer over", "[host][spe][buffer]")
{
	FakeBuffer fb{4096};
	SpeBuffer a = SpeBuffer::view(fb.base(), fb.len());
	fb.publish(FakeBuffer::record(1));
	SpeBuffer b = std::move(a);
	CHECK(b.available() == 16);
	SpeBuffer c = SpeBuffer::view(fb.base(), fb.len());
	c = std::move(b);
	CHECK(c.consume([](std::span<const std::byte>) {}) == 16);
	CHECK(fb.hdr()->data_tail == 16);
}

TEST_CASE("SpeBuffer::wait: poll on a pipe", "[host][spe][buffer]")
{
	int p[2];
	REQUIRE(::pipe(p) == 0);
	CHECK_FALSE(SpeBuffer::wait(p[0], 0));
	REQUIRE(::write(p[1], "x", 1) == 1);
	CHECK(SpeBuffer::wait(p[0], 0));
	::close(p[0]);
	::close(p[1]);
	CHECK_THROWS_AS(SpeBuffer::wait(p[0], 0), Error);
}

// ---------------------------------------------------------------- errors

TEST_CASE("AMUPMU_SPE_CONFIG's errno: the library's types with SPE's reasons", "[host][spe][error]")
{
	const auto thrown = [](int err, SpeOwner owner) -> std::pair<std::type_index, std::string> {
		try {
			throw_spe_config_error(err, owner);
		} catch (const Error& e) {
			CHECK(e.errnum() == err);
			return {typeid(e), e.what()};
		}
		return {typeid(void), ""};
	};
	auto [t, what] = thrown(ENXIO, SpeOwner::kernel);
	CHECK(t == typeid(OwnedByKernel));
	CHECK(what == "AMUPMU_SPE_CONFIG: SPE owned by the kernel's arm_spe_pmu (ENXIO)");
	std::tie(t, what) = thrown(ENODEV, SpeOwner::unclaimed);
	CHECK(t == typeid(Unavailable));
	CHECK(what == "AMUPMU_SPE_CONFIG (no SPE device claimed: amupmu spe claim): No such device (ENODEV)");
	std::tie(t, what) = thrown(ENODEV, SpeOwner::amupmu);
	CHECK(t == typeid(Unavailable));
	CHECK_THAT(what, Catch::Contains("or a CPU of the set is not possible"));
	std::tie(t, what) = thrown(EBUSY, SpeOwner::amupmu);
	CHECK(t == typeid(Busy));
	CHECK_THAT(what, Catch::Contains("another session profiles a CPU of the set") && Catch::Contains("(EBUSY)"));
	std::tie(t, what) = thrown(EACCES, SpeOwner::amupmu);
	CHECK(t == typeid(PermissionDenied));
	CHECK_THAT(what, Catch::Contains("CAP_PERFMON"));
	CHECK(thrown(EPERM, SpeOwner::amupmu).first == typeid(PermissionDenied));
	std::tie(t, what) = thrown(EOPNOTSUPP, SpeOwner::none);
	CHECK(t == typeid(Unsupported));
	CHECK_THAT(what, Catch::Contains("lacks SPE or a filter"));
	CHECK(thrown(EINVAL, SpeOwner::amupmu).first == typeid(InvalidArgument));
	CHECK(thrown(ENOMEM, SpeOwner::amupmu).first == typeid(Error));
}

TEST_CASE("SpeSession on a file that is not amupmu's: the config is checked first, then the ioctl fails",
	  "[host][spe][error]")
{
	SpeConfig c;
	c.cpus = {0};
	c.interval = 100;
	CHECK_THROWS_WITH(SpeSession::open(c, "/dev/null"), Catch::Contains("interval 100"));
	c.interval = 4096;
	c.cpus.clear();
	CHECK_THROWS_WITH(SpeSession::open(c, "/dev/null"), Catch::Contains("empty CPU set"));
	c.cpus = {1, 0, 1};
	try {
		SpeSession s = SpeSession::open(c, "/dev/null");
		FAIL("AMUPMU_SPE_CONFIG on /dev/null");
	} catch (const Error& e) {
		// ENOTTY from Linux; ENOSYS from qemu-user, which does not forward unknown ioctls
		CHECK((e.errnum() == ENOTTY || e.errnum() == ENOSYS));
		CHECK_THAT(e.what(), Catch::StartsWith("AMUPMU_SPE_CONFIG"));
	}
	CHECK_THROWS_AS(SpeSession::open(c, "/nonexistent/amupmu"), DeviceMissing);
}
