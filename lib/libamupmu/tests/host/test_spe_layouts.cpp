// SPDX-License-Identifier: GPL-2.0
//
// SPE records as hardware lays them out [host]: Neoverse N1-class fixed
// 64-byte slots with PAD bytes inside each record, HiSilicon-class and
// KVM-guest records of variable length with PAD before the TIMESTAMP, and
// the packed records of the mock model. Streams are built by
// spe_encoder.hpp from the architected packet encodings (Arm ARM, "The
// Statistical Profiling Extension sample record specification"), not from
// a third-party file. The reader's fast path (a layout met before) must
// give every record and every Stats count exactly as its slow path does:
// on whole streams, streams cut at their end or starting inside a record,
// and mutated ones (fixed seeds).
#include "spe_encoder.hpp"
#include "spe_reference.hpp"

#include <amupmu/spe.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <vector>

using namespace amupmu::spe;
using spe_ref::fast_slow_differ;

namespace {

enum class Shape { packed, slot64, variable };

const char* name(Shape s)
{
	return s == Shape::packed ? "packed" : s == Shape::slot64 ? "slot64" : "variable";
}

// A stream of n records of one shape, the fields of each and where each
// begins.
struct Stream {
	std::vector<std::byte> bytes;
	std::vector<std::size_t> starts;
	std::vector<spe_enc::Fields> fields;
};

Stream make_stream(Shape shape, std::size_t n, std::uint64_t seed)
{
	std::mt19937_64 rng{seed};
	spe_enc::Buf b;
	Stream s;
	std::uint64_t ts = 5000;
	for (std::size_t i = 0; i < n; ++i) {
		const std::uint64_t pc = 0x400000 + (rng() % 4096) * 4;
		spe_enc::Fields f = spe_enc::Fields::typical(static_cast<unsigned>(rng() % spe_enc::Fields::kinds), pc, rng,
							     ts += 1 + rng() % 200);
		if (shape == Shape::packed)
			b.pad(rng() % 4 ? 0 : static_cast<unsigned>(rng() % 4));
		s.starts.push_back(b.bytes.size());
		switch (shape) {
		case Shape::packed:	// the mock model's order: PC, operation, the rest
			b.address(0, f.pc).op(f.op_class, f.op).events(f.events, 2).counter(0, f.total).counter(1, f.issue);
			if (f.target)
				b.address(1, *f.target);
			if (f.va)
				b.address(2, *f.va);
			if (f.xlat)
				b.counter(2, *f.xlat);
			if (f.pa)
				b.address(3, *f.pa);
			if (f.data_source)
				b.data_source(*f.data_source, 2);
			b.context(0, *f.context).timestamp(f.ts);
			break;
		case Shape::slot64:
			b.slot64(f);
			break;
		case Shape::variable:	// no CONTEXT; no PA or DATA SOURCE in the layout
			f.context.reset();
			f.pa.reset();
			f.data_source.reset();
			b.variable(f);
			break;
		}
		s.fields.push_back(f);
	}
	s.bytes = b.bytes;
	return s;
}

// Whether r holds exactly f's packets.
bool holds(const Record& r, const spe_enc::Fields& f)
{
	const auto op = r.op();
	return r.complete() && r.end == RecordEnd::timestamp && r.address(0) == f.pc &&
	       r.context_el1() == f.context && op && static_cast<unsigned>(op->cls) == f.op_class && op->raw == f.op &&
	       r.events() == Events{f.events} && r.total_latency() == f.total && r.issue_latency() == f.issue &&
	       r.address(1) == f.target && r.address(2) == f.va && r.translation_latency() == f.xlat &&
	       r.address(3) == f.pa && r.data_source() == f.data_source && r.timestamp() == f.ts &&
	       r.address_mask() == (1u | (f.target ? 2u : 0) | (f.va ? 4u : 0) | (f.pa ? 8u : 0)) &&
	       r.counter_mask() == (3u | (f.xlat ? 4u : 0));
}

// Packets of f's record, padding excluded.
unsigned packets_of(const spe_enc::Fields& f)
{
	return 6 + (f.context ? 1 : 0) + (f.target || f.va ? 1 : 0) + (f.xlat ? 1 : 0) + (f.pa ? 1 : 0) +
	       (f.data_source ? 1 : 0);
}

} // namespace

TEST_CASE("SPE hardware layouts: every record decoded, through the fast path after its layout's first",
	  "[host][spe][record][layout]")
{
	for (const Shape shape : {Shape::packed, Shape::slot64, Shape::variable}) {
		INFO("layout " << name(shape));
		const Stream s = make_stream(shape, 600, 0x5107 + static_cast<unsigned>(shape));
		RecordReader rd{s.bytes};
		Record r;
		std::size_t n = 0, in_buffer = 0, sizes_min = 1000, sizes_max = 0;
		std::uint64_t inner_pad = 0;
		bool all = true;
		while (rd.next(r)) {
			REQUIRE(n < s.fields.size());
			if (!holds(r, s.fields[n]) || r.offset != s.starts[n] || r.packets != packets_of(s.fields[n])) {
				FAIL_CHECK("record " << n << " at " << r.offset << " unlike what was written at "
						     << s.starts[n] << " (in the buffer: " << r.in_buffer() << ")");
				all = false;
			}
			in_buffer += r.in_buffer();
			sizes_min = std::min(sizes_min, r.size);
			sizes_max = std::max(sizes_max, r.size);
			// the record's bytes that are no packet's: PAD
			std::size_t packet_bytes = 0;
			for (std::size_t off = r.offset; off < r.offset + r.size;) {
				const Packet p = decode_packet(s.bytes, off);
				if (p.kind != PacketKind::pad)
					packet_bytes += p.size();
				off += p.size();
			}
			inner_pad += r.size - packet_bytes;
			++n;
		}
		CHECK(all);
		CHECK(n == s.fields.size());
		CHECK(rd.stats().records == n);
		CHECK(rd.stats().unknown_packets == 0);
		CHECK(rd.stats().truncated == 0);
		INFO(in_buffer << " of " << n << " records through a layout; sizes " << sizes_min << "-" << sizes_max
				<< ", " << inner_pad << " PAD bytes inside records");
		// the first record of each layout, and those within the fast
		// path's reach of the buffer's end (79 bytes), take the slow path
		CHECK(in_buffer >= n - 20);
		switch (shape) {
		case Shape::packed:
			CHECK(inner_pad == 0);
			break;
		case Shape::slot64:
			CHECK(sizes_min == 64);
			CHECK(sizes_max == 64);
			CHECK(inner_pad > 5 * n);	// 5 bytes or more of each slot
			CHECK(rd.stats().padding_bytes == inner_pad);
			break;
		case Shape::variable:
			CHECK(sizes_min == 32);
			CHECK(sizes_max == 44);
			CHECK(inner_pad >= n);
			CHECK(rd.stats().padding_bytes == inner_pad);
			break;
		}
		const char* err = fast_slow_differ(s.bytes);
		CHECK(err == nullptr);
		CHECK(spe_ref::check_buffer(s.bytes, false) == nullptr);
	}
}

TEST_CASE("SPE hardware layouts: a record cut by the buffer's end, a buffer starting inside a record",
	  "[host][spe][record][layout]")
{
	for (const Shape shape : {Shape::packed, Shape::slot64, Shape::variable}) {
		INFO("layout " << name(shape));
		const Stream s = make_stream(shape, 40, 0xc07 + static_cast<unsigned>(shape));
		// where each record ends, as the whole stream reads
		std::vector<std::size_t> ends;
		{
			RecordReader rd{s.bytes};
			Record r;
			while (rd.next(r))
				ends.push_back(r.offset + r.size);
			REQUIRE(ends.size() == s.starts.size());
		}
		// cut at every byte of the last two records and the padding
		// before them: the records before the cut whole, the one it cuts
		// ended by the buffer's end (a packet cut, or between packets),
		// and counted
		for (std::size_t cut = ends[ends.size() - 3] + 1; cut < s.bytes.size(); ++cut) {
			INFO("cut at " << cut);
			const std::vector<std::byte> v(s.bytes.begin(), s.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
			CHECK(fast_slow_differ(v) == nullptr);
			CHECK(spe_ref::check_buffer(v, false) == nullptr);
			std::size_t whole = 0;
			while (whole < ends.size() && ends[whole] <= cut)
				++whole;
			const bool partial = whole < ends.size() && s.starts[whole] < cut;
			RecordReader rd{v};
			Record r;
			std::size_t n = 0;
			while (rd.next(r)) {
				if (n < whole) {
					CHECK(holds(r, s.fields[n]));
				} else {
					CHECK_FALSE(r.complete());
					CHECK((r.end == RecordEnd::truncated || r.end == RecordEnd::buffer_end));
					CHECK(r.offset == s.starts[n]);
					CHECK(r.offset + r.size == cut);
				}
				++n;
			}
			CHECK(n == whole + (partial ? 1 : 0));
		}
		// starting at every byte of the first record: every record from
		// the third on decodes whole, at its place
		{
			for (std::size_t from = 1; from < s.starts[1]; ++from) {
				INFO("from " << from);
				const std::vector<std::byte> v(s.bytes.begin() + static_cast<std::ptrdiff_t>(from), s.bytes.end());
				CHECK(fast_slow_differ(v) == nullptr);
				CHECK(spe_ref::check_buffer(v, false) == nullptr);
				RecordReader rd{v};
				Record r;
				std::size_t k = 3;
				while (rd.next(r)) {
					if (r.offset + from < s.starts[3])
						continue;
					if (!holds(r, s.fields[k]) || r.offset + from != s.starts[k]) {
						FAIL_CHECK("record " << k << " not recovered");
						break;
					}
					++k;
				}
				CHECK(k == s.starts.size());
			}
		}
	}
}

TEST_CASE("SPE hardware layouts: fast and slow paths agree on mutated streams", "[host][spe][record][layout][fuzz]")
{
	// byte flips, random bytes, defined headers and PAD written over
	// bytes, cuts and a damaged start, on each layout; the reader (fast
	// path wherever a layout matches) against the slow path alone, records
	// and Stats
	static constexpr unsigned headers[] = {0x00, 0x01, 0x71, 0x42, 0x52, 0x43, 0x53, 0x64, 0x48, 0x49,
					       0x4a, 0x20, 0x21, 0x23, 0xb0, 0xb1, 0xb2, 0xb3, 0x98, 0x99, 0x9a, 0x02};
	for (const Shape shape : {Shape::packed, Shape::slot64, Shape::variable}) {
		INFO("layout " << name(shape));
		const Stream base = make_stream(shape, 24, 0xf00d + static_cast<unsigned>(shape));
		std::mt19937_64 rng{0xd1ff + static_cast<unsigned>(shape)};
		std::size_t fast = 0;
		constexpr int iterations = 1500;
		for (int i = 0; i < iterations; ++i) {
			std::vector<std::byte> v = base.bytes;
			const int mutations = 1 + static_cast<int>(rng() % 6);
			for (int m = 0; m < mutations && !v.empty(); ++m) {
				const std::size_t at = rng() % v.size();
				switch (rng() % 7) {
				case 0: v[at] ^= static_cast<std::byte>(1u << (rng() % 8)); break;
				case 1: v[at] = static_cast<std::byte>(rng() & 0xFF); break;
				case 2: v[at] = static_cast<std::byte>(headers[rng() % std::size(headers)]); break;
				case 3: v[at] = std::byte{0}; break;
				case 4: v.resize(at + 1); break;
				case 5: v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(rng() % 64 % v.size())); break;
				default: break;	// unchanged
				}
			}
			const char* err = fast_slow_differ(v, &fast);
			if (err)
				FAIL("layout " << name(shape) << ", mutated stream " << i << ": " << err);
			err = spe_ref::check_buffer(v, false);
			if (err)
				FAIL("layout " << name(shape) << ", mutated stream " << i << ": " << err);
		}
		INFO(fast << " records through a layout");
		CHECK(fast > static_cast<std::size_t>(iterations) * 4);
	}
}

TEST_CASE("SPE undefined header: the reader moves on one byte and recovers every later record",
	  "[host][spe][record][layout]")
{
	// the PAD before a record's TIMESTAMP damaged into an extended header
	// (0b001000xx): with the TIMESTAMP's header as its second byte, which
	// no extended header takes, the packet is undefined and one byte long;
	// the reader then finds the TIMESTAMP at the next byte. Stepping over
	// two bytes would skip that header and swallow the next record too.
	const Stream s = make_stream(Shape::variable, 12, 0xbad);
	for (unsigned ext = 0x20; ext <= 0x23; ++ext) {
		for (std::size_t k : {std::size_t{0}, std::size_t{4}, std::size_t{10}}) {
			INFO("record " << k << ", PAD before its TIMESTAMP made 0x" << std::hex << ext);
			std::vector<std::byte> v = s.bytes;
			const std::size_t ts = (k + 1 < s.starts.size() ? s.starts[k + 1] : v.size()) - 9;
			REQUIRE(v[ts] == std::byte{0x71});
			REQUIRE(v[ts - 1] == std::byte{0x00});
			v[ts - 1] = static_cast<std::byte>(ext);
			const Packet p = decode_packet(v, ts - 1);
			CHECK(p.kind == PacketKind::unknown);
			CHECK(p.size() == 1);
			RecordReader rd{v};
			Record r;
			std::size_t n = 0;
			while (rd.next(r)) {
				REQUIRE(n < s.fields.size());
				if (n == k) {
					CHECK(r.end == RecordEnd::resync);
					CHECK(r.unknown_offsets().size() == 1);
					CHECK(r.unknown_offsets()[0] == ts - 1);
					CHECK(r.timestamp() == s.fields[k].ts);	// its TIMESTAMP ended it
					CHECK(r.offset + r.size == ts + 9);
					CHECK(r.pc() == decode_inst_address(s.fields[k].pc));
				} else {
					CHECK(holds(r, s.fields[n]));
					CHECK(r.offset == s.starts[n]);
				}
				++n;
			}
			CHECK(n == s.fields.size());
			CHECK(rd.stats().unknown_packets == 1);
			CHECK(rd.stats().skipped_bytes == 0);
			CHECK(fast_slow_differ(v) == nullptr);
			CHECK(spe_ref::check_buffer(v, false) == nullptr);
		}
	}
	// the same in a 64-byte slot: the PAD at 54 before the TIMESTAMP at
	// 55 (a store has no DATA SOURCE there)
	const Stream slots = make_stream(Shape::slot64, 12, 0xbad);
	std::size_t damaged = 0;
	for (std::size_t k = 0; k < slots.fields.size(); ++k) {
		std::vector<std::byte> v = slots.bytes;
		if (v[slots.starts[k] + 54] != std::byte{0})
			continue;
		v[slots.starts[k] + 54] = std::byte{0x21};
		RecordReader rd{v};
		Record r;
		std::size_t n = 0;
		while (rd.next(r)) {
			INFO("slot " << k << ", record " << n);
			CHECK((n == k ? r.end == RecordEnd::resync && r.timestamp() == slots.fields[k].ts
				      : holds(r, slots.fields[n])));
			++n;
		}
		CHECK(n == slots.fields.size());
		CHECK(fast_slow_differ(v) == nullptr);
		++damaged;
	}
	CHECK(damaged > 3);
}
