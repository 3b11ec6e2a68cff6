// SPDX-License-Identifier: GPL-2.0
//
// The SPE record reader's reference for the tests: the reader's rules one
// packet at a time with decode_packet() and nothing else, record and field
// comparisons, the invariants every buffer must keep, and every record of
// a buffer through the reader's slow path alone (what the fast path must
// agree with, records and Stats).
#ifndef AMUPMU_TESTS_SPE_REFERENCE_HPP
#define AMUPMU_TESTS_SPE_REFERENCE_HPP

#include <amupmu/spe.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace spe_ref {

using namespace amupmu::spe;

// The reader's rules, one packet at a time with decode_packet() and nothing
// else: what RecordReader's fast paths (short headers in a loop, records of
// a layout met before) must agree with.
inline bool reference_next(const std::vector<std::byte>& v, std::size_t& pos, bool& done, Record& r)
{
	const std::size_t size = v.size();
	auto byte = [&](std::size_t i) { return std::to_integer<unsigned>(v[i]); };
	if (done)
		return false;
	while (pos < size && byte(pos) == 0)
		++pos;
	if (pos >= size) {
		done = true;
		return false;
	}
	r.clear();
	r.offset = pos;
	unsigned packets = 0;
	for (;;) {
		if (pos >= size) {
			r.end = RecordEnd::buffer_end;
			break;
		}
		if (byte(pos) == 0) {
			++pos;
			continue;
		}
		const Packet p = decode_packet(v, pos);
		bool ends = false;
		switch (p.kind) {
		case PacketKind::end: r.end = RecordEnd::end; ends = true; break;
		case PacketKind::timestamp: r.set(Record::slot_timestamp, p.payload); r.end = RecordEnd::timestamp; ends = true; break;
		case PacketKind::address: r.set(Record::slot_address + p.index, p.payload); break;
		case PacketKind::counter: r.set(Record::slot_counter + p.index, p.payload); break;
		case PacketKind::events: r.set(Record::slot_events, p.payload); break;
		case PacketKind::data_source: r.set(Record::slot_data_source, p.payload); break;
		case PacketKind::context: r.set(Record::slot_context + p.index, p.payload); break;
		case PacketKind::op_type: r.set(Record::slot_op + p.index, p.payload); break;
		case PacketKind::pad:
		case PacketKind::alignment: pos += p.size(); continue;
		case PacketKind::unknown: {
			r.unknown[0] = pos;
			r.unknown_count = 1;
			std::size_t j = pos + p.size();
			while (j < size && byte(j) != 0x01 && !(byte(j) == 0x71 && size - j >= 9))
				++j;
			if (j < size) {
				const Packet q = decode_packet(v, j);
				++packets;
				if (q.kind == PacketKind::timestamp)
					r.set(Record::slot_timestamp, q.payload);
				j += q.size();
			}
			pos = j;
			r.end = RecordEnd::resync;
			r.size = pos - r.offset;
			r.packets = static_cast<std::uint16_t>(packets);
			return true;
		}
		case PacketKind::truncated:
			r.end = RecordEnd::truncated;
			pos = size;
			done = true;
			r.size = pos - r.offset;
			r.packets = static_cast<std::uint16_t>(packets);
			return true;
		}
		++packets;
		pos += p.size();
		if (ends)
			break;
	}
	r.size = pos - r.offset;
	r.packets = static_cast<std::uint16_t>(packets);
	return true;
}

// Every accessor of the two records gives the same answer.
inline bool same_fields(const Record& a, const Record& b)
{
	bool same = a.pc() == b.pc() && a.branch_target() == b.branch_target() &&
		    a.prev_branch_target() == b.prev_branch_target() && a.data_va() == b.data_va() &&
		    a.data_pa() == b.data_pa() && a.total_latency() == b.total_latency() &&
		    a.issue_latency() == b.issue_latency() && a.translation_latency() == b.translation_latency() &&
		    a.events() == b.events() && a.data_source() == b.data_source() &&
		    a.context_el1() == b.context_el1() && a.context_el2() == b.context_el2() && a.op() == b.op() &&
		    a.timestamp() == b.timestamp() && a.complete() == b.complete() &&
		    std::ranges::equal(a.unknown_offsets(), b.unknown_offsets());
	for (unsigned i = 0; i < 34; ++i)
		same = same && a.address(i) == b.address(i) && a.counter(i) == b.counter(i);
	for (unsigned i = 0; i < 5; ++i)
		same = same && a.context(i) == b.context(i);
	return same;
}

inline bool same_record(const Record& a, const Record& b)
{
	if (a.offset != b.offset || a.size != b.size || a.end != b.end || a.packets != b.packets ||
	    a.unknown_count != b.unknown_count || a.address_mask() != b.address_mask() ||
	    a.counter_mask() != b.counter_mask())
		return false;
	if (a.unknown_count && a.unknown[0] != b.unknown[0])
		return false;
	for (unsigned i = 0; i < Record::slot_count; ++i)
		if (a.has(i) != b.has(i) || a.get(i) != b.get(i))
			return false;
	return same_fields(a, b);
}

// Reads every record of v (an exact-size heap buffer: ASan sees a read
// past its end) and checks the reader's invariants; returns what failed
// (plain checks: Catch2 assertions per record would dominate the time).
inline const char* check_buffer(const std::vector<std::byte>& v, bool text)
{
	RecordReader rd{v};
	Record r;
	Record ref;
	std::size_t ref_pos = 0;
	bool ref_done = false;
	std::size_t last_end = 0;
	std::size_t n = 0;
	while (rd.next(r)) {
		if (!reference_next(v, ref_pos, ref_done, ref))
			return "a record the reference does not see";
		if (!same_record(r, ref))
			return "a record unlike the reference's";
		if (r.offset < last_end || r.size < 1 || r.offset + r.size > v.size())
			return "record outside the buffer";
		if (rd.position() != r.offset + r.size)
			return "position";
		last_end = r.offset + r.size;
		if (r.unknown_count > 1)
			return "unknown count";
		// every accessor
		if (r.pc() && r.pc()->el > 3)
			return "el";
		(void)r.data_va();
		(void)r.data_pa();
		(void)r.op();
		(void)r.events();
		if (++n > v.size())
			return "more records than bytes";
	}
	if (rd.next(r))
		return "a record after the end";
	if (reference_next(v, ref_pos, ref_done, ref))
		return "the reference sees one more record";
	if (rd.stats().truncated > 1)
		return "truncated";
	for (std::size_t off = 0; off < v.size();) {
		const Packet p = decode_packet(v, off);
		if (p.size() < 1 || off + p.size() > v.size())
			return "packet outside the buffer";
		if (text && format_packet(v, p).empty())
			return "text";
		off += p.size();
	}
	return nullptr;
}

/// Every record of v through the reader's slow path alone: a new reader (no
/// layout learned) at each record's position, its offsets made the
/// buffer's, its Stats added up (with those of the last call, which reads
/// the trailing padding).
struct SlowRead {
	std::vector<Record> records;
	Stats stats;
};
inline SlowRead slow_read(std::span<const std::byte> v)
{
	SlowRead out;
	std::size_t pos = 0;
	const auto rd = std::make_unique<RecordReader>(std::span<const std::byte>{});
	for (;;) {
		*rd = RecordReader{v.subspan(pos)};
		Record r;
		const bool more = rd->next(r);
		const Stats& s = rd->stats();
		out.stats.records += s.records;
		out.stats.packets += s.packets;
		out.stats.padding_bytes += s.padding_bytes;
		out.stats.unknown_packets += s.unknown_packets;
		out.stats.skipped_bytes += s.skipped_bytes;
		out.stats.truncated += s.truncated;
		if (!more)
			return out;
		r.offset += pos;
		for (std::size_t i = 0; i < std::min<std::size_t>(r.unknown_count, Record::max_unknown); ++i)
			r.unknown[i] += pos;
		pos += rd->position();
		out.records.push_back(r);
		if (rd->done())
			pos = v.size();
	}
}

/// What differs between v read by one reader (the fast path wherever a
/// layout matches) and v read by the slow path alone (slow_read()): records
/// and Stats; nullptr when nothing does.
inline const char* fast_slow_differ(std::span<const std::byte> v, std::size_t* fast_records = nullptr)
{
	const SlowRead slow = slow_read(v);
	const auto rd = std::make_unique<RecordReader>(v);
	Record r;
	std::size_t n = 0, in_buffer = 0;
	while (rd->next(r)) {
		if (n >= slow.records.size())
			return "a record the slow path does not see";
		if (!same_record(r, slow.records[n]))
			return "a record unlike the slow path's";
		in_buffer += r.in_buffer();
		++n;
	}
	if (n != slow.records.size())
		return "a record the slow path sees and the reader does not";
	if (!(rd->stats() == slow.stats))
		return "Stats unlike the slow path's";
	if (fast_records)
		*fast_records += in_buffer;
	return nullptr;
}

} // namespace spe_ref

#endif
