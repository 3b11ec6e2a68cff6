// SPDX-License-Identifier: LGPL-2.1-or-later
//
// SPE sample record decoder. Encodings: Arm ARM (DDI 0487), "The
// Statistical Profiling Extension sample record specification".
#include <amupmu/spe.hpp>

#include <bit>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace amupmu::spe {

namespace {

// ---------------------------------------------------------------- headers
//
// "Packet headers": a short header is one byte; bits [5:4] of a header with
// a payload are sz, the payload being 1 << sz bytes. The extended header
// 0b001000xx carries index[4:3] of the Address or Counter packet whose short
// header follows in the next byte.
//
//   0b00000000  Padding              0b00000001  End
//   0b01110001  Timestamp (sz 0b11)  0b01sz0010  Events
//   0b01sz0011  Data Source          0b011001ii  Context (sz 0b10)
//   0b010010cc  Operation Type (sz 0b00)
//   0b10110iii  Address (sz 0b11)    0b10011iii  Counter (sz 0b01)
//   0b001000ii  extended header, then an Address or Counter header, or
//               0b00000000: Alignment
//
// Linux's decoder matches the same masks (SPE_HEADER0_MASK1/2/3).

constexpr HeaderInfo classify(unsigned h) noexcept
{
	const auto sz = static_cast<std::uint8_t>(1u << ((h >> 4) & 3));
	if (h == 0x00)
		return {PacketKind::pad, 0, false};
	if (h == 0x01)
		return {PacketKind::end, 0, false};
	if (h == 0x71)
		return {PacketKind::timestamp, 8, false};
	if ((h & 0xCF) == 0x42)
		return {PacketKind::events, sz, false};
	if ((h & 0xCF) == 0x43)
		return {PacketKind::data_source, sz, false};
	if ((h & 0xFC) == 0x64)
		return {PacketKind::context, 4, false};
	if ((h & 0xFC) == 0x48)
		return {PacketKind::op_type, 1, false};
	if ((h & 0xFC) == 0x20)
		return {PacketKind::unknown, 0, true};
	if ((h & 0xF8) == 0xB0)
		return {PacketKind::address, 8, false};
	if ((h & 0xF8) == 0x98)
		return {PacketKind::counter, 2, false};
	return {PacketKind::unknown, 0, false};
}

constexpr std::array<HeaderInfo, 256> make_table() noexcept
{
	std::array<HeaderInfo, 256> t{};
	for (unsigned h = 0; h < 256; ++h)
		t[h] = classify(h);
	return t;
}

constexpr std::array<HeaderInfo, 256> header_table = make_table();

// The sizes the masks imply, checked once here.
static_assert(header_table[0x71].payload_size == 8);
static_assert(header_table[0x42].payload_size == 1 && header_table[0x52].payload_size == 2 &&
	      header_table[0x62].payload_size == 4 && header_table[0x72].payload_size == 8);
static_assert(header_table[0xB0].payload_size == 8 && header_table[0x98].payload_size == 2);
static_assert(header_table[0x64].payload_size == 4 && header_table[0x48].payload_size == 1);

// Little-endian payload of n (1, 2, 4, 8) bytes at p, with avail bytes
// readable from p: one 8-byte load when there is room.
inline std::uint64_t load_le(const unsigned char* p, unsigned n, std::size_t avail) noexcept
{
	std::uint64_t v = 0;
	if (avail >= 8) {
		std::memcpy(&v, p, 8);
		if constexpr (std::endian::native == std::endian::big)
			v = __builtin_bswap64(v);
		if (n < 8)
			v &= (std::uint64_t{1} << (8 * n)) - 1;
		return v;
	}
	for (unsigned i = 0; i < n; ++i)
		v |= std::uint64_t{p[i]} << (8 * i);
	return v;
}

// decode_packet() on raw bytes, off < size.
[[gnu::always_inline]] inline void decode_at(const unsigned char* data, std::size_t size, std::size_t off,
					     Packet& p) noexcept
{
	const std::size_t avail = size - off;
	const unsigned h0 = data[off];
	const HeaderInfo hi = header_table[h0];
	p.offset = off;
	p.payload = 0;
	p.index = 0;
	unsigned hdr = 1;
	unsigned h = h0;
	PacketKind kind = hi.kind;
	std::uint8_t ps = hi.payload_size;
	if (hi.extended) [[unlikely]] {
		if (avail < 2) {
			p.kind = PacketKind::truncated;
			p.header_size = 1;
			p.payload_size = 0;
			return;
		}
		h = data[off + 1];
		hdr = 2;
		const HeaderInfo h1 = header_table[h];
		if (h == 0x00) {
			// "Alignment packet": byte 0 [1:0] as Linux reads it (the
			// records that follow are padded to 2 << aa bytes with
			// Padding packets, which the reader skips one by one).
			p.kind = PacketKind::alignment;
			p.index = static_cast<std::uint8_t>(h0 & 3);
			p.header_size = 2;
			p.payload_size = 0;
			return;
		}
		if (h1.kind != PacketKind::address && h1.kind != PacketKind::counter) {
			// One byte, as Linux's decoder steps over it: the second
			// byte may be the next packet's header (a damaged PAD
			// before a Timestamp).
			p.kind = PacketKind::unknown;
			p.header_size = 1;
			p.payload_size = 0;
			return;
		}
		kind = h1.kind;
		ps = h1.payload_size;
		p.index = static_cast<std::uint8_t>((h0 & 3) << 3);
	}
	switch (kind) {
	case PacketKind::address:
	case PacketKind::counter:
		p.index = static_cast<std::uint8_t>(p.index | (h & 7));
		break;
	case PacketKind::context:
	case PacketKind::op_type:
		p.index = static_cast<std::uint8_t>(h & 3);
		break;
	default:
		break;
	}
	p.header_size = static_cast<std::uint8_t>(hdr);
	if (hdr + ps > avail) [[unlikely]] {
		p.kind = PacketKind::truncated;
		p.payload_size = static_cast<std::uint8_t>(avail - hdr);
		return;
	}
	p.kind = kind;
	p.payload_size = ps;
	if (ps)
		p.payload = load_le(data + off + hdr, ps, avail - hdr);
}

} // namespace

HeaderInfo classify_header(std::uint8_t header) noexcept
{
	return header_table[header];
}

Packet decode_packet(std::span<const std::byte> buf, std::size_t offset) noexcept
{
	Packet p;
	if (offset >= buf.size()) {
		p.kind = PacketKind::truncated;
		p.offset = offset;
		return p;
	}
	decode_at(reinterpret_cast<const unsigned char*>(buf.data()), buf.size(), offset, p);
	return p;
}

// ---------------------------------------------------------------- records

namespace detail {

namespace {
constexpr std::array<OpType, 1024> make_op_types() noexcept
{
	std::array<OpType, 1024> t{};
	for (unsigned i = 0; i < 1024; ++i)
		t[i] = decode_op_type(i >> 8, static_cast<std::uint8_t>(i & 0xFF));
	return t;
}
} // namespace

constexpr std::array<OpType, 1024> op_types = make_op_types();

namespace {
constexpr std::array<std::optional<OpType>, 1280> make_op_type_options() noexcept
{
	std::array<std::optional<OpType>, 1280> t{};
	for (unsigned i = 0; i < 1024; ++i)
		t[i] = decode_op_type(i >> 8, static_cast<std::uint8_t>(i & 0xFF));
	return t;
}
} // namespace

constexpr std::array<std::optional<OpType>, 1280> op_type_options = make_op_type_options();

} // namespace detail

namespace {

using detail::FieldMap;

// The field of each short header with a payload that does not end a record
// (detail::FieldMap), or no_field for the headers the careful path takes:
// Padding, End, Timestamp, the extended header and the undefined ones.
constexpr std::uint8_t no_field = 0xFF;

constexpr std::array<std::uint8_t, 256> make_fields() noexcept
{
	std::array<std::uint8_t, 256> t{};
	for (unsigned h = 0; h < 256; ++h) {
		unsigned f = no_field;
		switch (header_table[h].kind) {
		case PacketKind::address: f = FieldMap::address + (h & 7); break;
		case PacketKind::counter: f = FieldMap::counter + (h & 7); break;
		case PacketKind::context: f = FieldMap::context + (h & 3); break;
		case PacketKind::events: f = FieldMap::events; break;
		case PacketKind::data_source: f = FieldMap::data_source; break;
		case PacketKind::op_type: f = FieldMap::op + (h & 3); break;
		default: break;
		}
		t[h] = static_cast<std::uint8_t>(f);
	}
	return t;
}

constexpr std::array<std::uint8_t, 256> field_table = make_fields();

// What the slow path's loop over short headers needs of a header, by table.
struct FastEntry {
	std::uint64_t mask;	///< of the payload's bytes in an 8-byte load
	std::uint32_t bit;	///< presence bit of the field in FieldMap::present
	std::uint8_t field;	///< or no_field
};

constexpr std::array<FastEntry, 256> make_fast() noexcept
{
	std::array<FastEntry, 256> t{};
	for (unsigned h = 0; h < 256; ++h) {
		const unsigned f = field_table[h];
		const unsigned n = header_table[h].payload_size;
		t[h] = FastEntry{
			.mask = n >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * n)) - 1,
			.bit = f == no_field ? 0 : std::uint32_t{1} << f,
			.field = static_cast<std::uint8_t>(f),
		};
	}
	return t;
}

constexpr std::array<FastEntry, 256> fast_table = make_fast();

// The fast paths take the payload size from the header's sz [5:4]: every
// header with a field must agree with the table.
constexpr bool fields_agree() noexcept
{
	for (unsigned h = 0; h < 256; ++h)
		if (field_table[h] != no_field &&
		    (header_table[h].extended || header_table[h].payload_size != 1u << ((h >> 4) & 3)))
			return false;
	return true;
}
static_assert(fields_agree());

// Bytes of a packet with a one-byte header, from the header alone; 0 for the
// extended header and the undefined ones.
constexpr std::array<std::uint8_t, 256> make_lengths() noexcept
{
	std::array<std::uint8_t, 256> t{};
	for (unsigned h = 0; h < 256; ++h) {
		const HeaderInfo hi = header_table[h];
		t[h] = hi.extended || hi.kind == PacketKind::unknown ? 0 : static_cast<std::uint8_t>(1 + hi.payload_size);
	}
	return t;
}

constexpr std::array<std::uint8_t, 256> length_table = make_lengths();

} // namespace

// Remembers the layout of a record just decoded, when it has one: short
// headers and PAD bytes (inside it: fixed slots, padding before the
// Timestamp), ended by End or Timestamp, within the match window.
void RecordReader::learn(const Record& r) noexcept
{
	if (!r.complete() || r.size > Layout::window || r.packets < 2)
		return;
	const auto* data = reinterpret_cast<const unsigned char*>(buf_.data()) + r.offset;
	Layout lay;
	std::array<unsigned char, Layout::window> pattern{}, care{};
	lay.map = FieldMap{};	// offsets 0: every absent field reads the record's first bytes
	std::size_t off = 0;
	unsigned n = 0, pad = 0;
	while (off < r.size) {
		const unsigned h = data[off];
		if (h == 0x00) {	// PAD: 0 at its offset, cared for
			care[off] = 0xFF;
			++off;
			++pad;
			continue;
		}
		const unsigned len = length_table[h];
		if (len == 0)
			return;
		unsigned f = field_table[h];
		if (h == 0x71)
			f = FieldMap::timestamp;
		else if (h == 0x01)
			f = FieldMap::count;	// no payload
		if (f == no_field)
			return;
		pattern[off] = static_cast<unsigned char>(h);
		care[off] = 0xFF;
		if (f < FieldMap::count) {
			// the record's base is its second byte: the offset of the
			// payload from it is the header's from the first
			lay.map.off[f] = static_cast<std::uint8_t>(off);
			lay.map.present |= std::uint32_t{1} << f;
			const unsigned sz = (h >> 4) & 3;
			if (f == FieldMap::events)
				lay.map.sizes = static_cast<std::uint8_t>((lay.map.sizes & ~3u) | sz);
			else if (f == FieldMap::data_source)
				lay.map.sizes = static_cast<std::uint8_t>((lay.map.sizes & ~12u) | sz << 2);
		}
		off += len;
		++n;
	}
	if (off != r.size || n != r.packets)
		return;
	// the bytes in memory order, as the reader loads the record's window
	std::memcpy(lay.pattern.data(), pattern.data(), Layout::window);
	std::memcpy(lay.care.data(), care.data(), Layout::window);
	lay.packets = static_cast<std::uint8_t>(n);
	lay.size = static_cast<std::uint8_t>(r.size);
	lay.end = r.end;
	lay.pad = static_cast<std::uint8_t>(pad);
	// as next() finds it: bytes 0-1; after an 8-byte address 9-10, or
	// 18-20 (a record too short for its key has no layout: next() would
	// key it by the bytes after it)
	const auto at = [&](std::size_t i) { return i < r.size ? std::uint64_t{data[i]} : 0; };
	const bool after_address = (data[0] & 0xF8) == 0xB0;
	const bool op_at9 = (at(9) & 0xFC) == 0x48;
	if (after_address && r.size < (op_at9 ? 11u : 21u))
		return;
	const unsigned set = detail::layout_set(at(0) | at(1) << 8, at(9) | at(10) << 8,
						at(18) << 8 | at(19) << 16 | at(20) << 24);
	layout_[set * layout_ways + victim_[set]] = lay;
	victim_[set] = static_cast<std::uint8_t>((victim_[set] + 1) % layout_ways);
}

bool RecordReader::next_slow(Record& r) noexcept
{
	if (done_)
		return false;
	const auto* data = reinterpret_cast<const unsigned char*>(buf_.data());
	const std::size_t size = buf_.size();
	std::size_t pos = pos_;

	r.clear();	// the values kept in r

	// Padding between records
	while (pos < size && data[pos] == 0x00)
		++pos;
	stats_.padding_bytes += pos - pos_;
	if (pos >= size) {
		pos_ = pos;
		done_ = true;
		return false;
	}
	r.offset = pos;
	unsigned packets = 0;
	Packet p;
	const std::size_t end9 = size >= 9 ? size - 8 : 0;	// pos < end9: 9 bytes readable

	for (;;) {
		// Short headers with a payload while 9 bytes are readable (the
		// longest such packet): one 8-byte load, the payload masked to
		// 1 << sz bytes, kept in r.
		std::uint32_t present = r.map_.present;	// in a register
		while (pos < end9) {
			const unsigned h = data[pos];
			const FastEntry& e = fast_table[h];
			if (e.field == no_field)
				break;
			r.own_[e.field] = detail::load_le64(data + pos + 1) & e.mask;
			present |= e.bit;
			// the length from sz [5:4] rather than from the table: one
			// load fewer on the chain from one header to the next
			pos += 1 + (std::size_t{1} << ((h >> 4) & 3));
			++packets;
		}
		r.map_.present = present;
		// End and Timestamp, the usual ends of a record
		if (pos < end9) {
			if (data[pos] == 0x01) {
				++packets;
				pos += 1;
				r.end = RecordEnd::end;
				goto done;
			}
			if (data[pos] == 0x71) {
				r.set(Record::slot_timestamp, detail::load_le64(data + pos + 1));
				++packets;
				pos += 9;
				r.end = RecordEnd::timestamp;
				goto done;
			}
		}
		if (pos >= size) {
			r.end = RecordEnd::buffer_end;
			break;
		}
		// Careful path: one packet of any kind, bounds checked.
		if (data[pos] == 0x00) {	// Padding inside a record
			++pos;
			++stats_.padding_bytes;
			continue;
		}
		decode_at(data, size, pos, p);
		switch (p.kind) {
		case PacketKind::end:
			++packets;
			pos += 1;
			r.end = RecordEnd::end;
			goto done;
		case PacketKind::timestamp:
			++packets;
			pos += p.size();
			r.set(Record::slot_timestamp, p.payload);
			r.end = RecordEnd::timestamp;
			goto done;
		case PacketKind::address:
			r.set(Record::slot_address + p.index, p.payload);
			break;
		case PacketKind::counter:
			r.set(Record::slot_counter + p.index, p.payload);
			break;
		case PacketKind::events:
			r.set(Record::slot_events, p.payload);
			break;
		case PacketKind::data_source:
			r.set(Record::slot_data_source, p.payload);
			break;
		case PacketKind::context:
			r.set(Record::slot_context + p.index, p.payload);
			break;
		case PacketKind::op_type:
			r.set(Record::slot_op + p.index, p.payload);
			break;
		case PacketKind::pad:	// not reached: handled above
		case PacketKind::alignment:
			stats_.padding_bytes += p.size();
			pos += p.size();
			continue;
		case PacketKind::unknown: {
			if (r.unknown_count < Record::max_unknown)
				r.unknown[r.unknown_count] = pos;
			++r.unknown_count;
			++stats_.unknown_packets;
			// Its length is unknown: skip to the end of this record,
			// the next End or Timestamp header.
			std::size_t j = pos + p.size();
			const std::size_t from = j;
			r.end = RecordEnd::resync;
			while (j < size && data[j] != 0x01 && !(data[j] == 0x71 && size - j >= 9))
				++j;
			stats_.skipped_bytes += j - from;
			if (j < size) {
				decode_at(data, size, j, p);
				++packets;
				if (p.kind == PacketKind::timestamp)
					r.set(Record::slot_timestamp, p.payload);
				j += p.size();
			}
			pos = j;
			goto done;
		}
		case PacketKind::truncated:
			++stats_.truncated;
			r.end = RecordEnd::truncated;
			pos = size;
			done_ = true;
			goto done;
		}
		++packets;
		pos += p.size();
	}
done:
	pos_ = pos;
	r.size = pos - r.offset;
	r.packets = static_cast<std::uint16_t>(packets > 0xFFFF ? 0xFFFF : packets);
	stats_.packets += packets;
	++stats_.records;
	learn(r);
	return true;
}

// ---------------------------------------------------------------- names

std::string_view to_string(PacketKind kind) noexcept
{
	switch (kind) {
	case PacketKind::pad: return "PAD";
	case PacketKind::end: return "END";
	case PacketKind::timestamp: return "TS";
	case PacketKind::address: return "ADDR";
	case PacketKind::counter: return "COUNTER";
	case PacketKind::events: return "EVENTS";
	case PacketKind::data_source: return "DATA-SOURCE";
	case PacketKind::context: return "CONTEXT";
	case PacketKind::op_type: return "OP-TYPE";
	case PacketKind::alignment: return "ALIGN";
	case PacketKind::unknown: return "UNKNOWN";
	case PacketKind::truncated: return "TRUNCATED";
	}
	return "UNKNOWN";
}

std::string_view to_string(OpClass cls) noexcept
{
	switch (cls) {
	case OpClass::other: return "OTHER";
	case OpClass::load_store: return "LD/ST";
	case OpClass::branch: return "BRANCH";
	case OpClass::reserved: return "RESERVED";
	}
	return "RESERVED";
}

std::string_view to_string(OpSubclass sub) noexcept
{
	switch (sub) {
	case OpSubclass::other: return "OTHER";
	case OpSubclass::sve_other: return "SVE-OTHER";
	case OpSubclass::sme_other: return "SME-OTHER";
	case OpSubclass::gp: return "GP-REG";
	case OpSubclass::simd_fp: return "SIMD-FP";
	case OpSubclass::extended: return "EXTENDED";
	case OpSubclass::unspecified: return "UNSPEC-REG";
	case OpSubclass::mte_tag: return "MTE-TAG";
	case OpSubclass::memcpy: return "MEMCPY";
	case OpSubclass::memset: return "MEMSET";
	case OpSubclass::nv_sysreg: return "NV-SYSREG";
	case OpSubclass::gcs: return "GCS";
	case OpSubclass::sve_sme: return "SVE-SME-REG";
	case OpSubclass::branch: return "BRANCH";
	case OpSubclass::reserved: return "RESERVED";
	}
	return "RESERVED";
}

std::string_view event_name(unsigned n) noexcept
{
	// "Events packet": bit positions of the architected events.
	static constexpr std::array<std::string_view, 26> names = {
		"EXCEPTION-GEN",	// 0 generated exception
		"RETIRED",		// 1 architecturally retired
		"L1D-ACCESS",		// 2 level 1 data cache access
		"L1D-REFILL",		// 3 level 1 data cache refill
		"TLB-ACCESS",		// 4
		"TLB-WALK",		// 5 (Linux prints TLB-REFILL)
		"NOT-TAKEN",		// 6 conditional instruction failed its condition
		"MISPRED",		// 7 mispredicted branch
		"LLC-ACCESS",		// 8 last level cache access
		"LLC-MISS",		// 9 (Linux prints LLC-REFILL)
		"REMOTE-ACCESS",	// 10 another socket/chip
		"ALIGNMENT",		// 11 unaligned access
		"IMPDEF-12",		// 12-15 IMPLEMENTATION DEFINED
		"IMPDEF-13",
		"IMPDEF-14",
		"IMPDEF-15",
		"TXN",			// 16 transactional state (FEAT_TME)
		"SVE-PARTIAL-PRED",	// 17 partial predicate
		"SVE-EMPTY-PRED",	// 18 empty predicate
		"L2D-ACCESS",		// 19
		"L2D-MISS",		// 20
		"CACHE-DATA-MODIFIED",	// 21 (Linux: HITM)
		"RECENTLY-FETCHED",	// 22 (Linux: LFB)
		"DATA-SNOOPED",		// 23 (Linux: SNOOPED)
		"STREAMING-SVE",	// 24 in Streaming SVE mode
		"SMCU",			// 25 executed by an SME compute unit
	};
	return n < names.size() ? names[n] : std::string_view{};
}

// ---------------------------------------------------------------- text

namespace {

template <typename... Args>
void append(std::string& s, const char* fmt, Args... args)
{
	char tmp[96];
	const int n = std::snprintf(tmp, sizeof(tmp), fmt, args...);	// NOLINT(cppcoreguidelines-pro-type-vararg)
	if (n > 0)
		s.append(tmp, static_cast<std::size_t>(n) < sizeof(tmp) ? static_cast<std::size_t>(n) : sizeof(tmp) - 1);
}

void describe_op(std::string& s, unsigned cls, std::uint8_t raw)
{
	const OpType op = decode_op_type(cls, raw);
	auto flag = [&](std::uint16_t f, const char* name) {
		if (op.has(f)) {
			s += ' ';
			s += name;
		}
	};
	switch (op.subclass) {
	case OpSubclass::other:
		s += "OTHER";
		flag(op_flag::simd, "ASE");
		flag(op_flag::fp, "FP");
		s += op.has(op_flag::conditional) ? " COND-SELECT" : " INSN-OTHER";
		return;
	case OpSubclass::sve_other:
		append(s, "SVE-OTHER EVLEN %u", op.sve_vector_bits());
		flag(op_flag::fp, "FP");
		flag(op_flag::predicated, "PRED");
		return;
	case OpSubclass::sme_other:
		append(s, "SME-OTHER ETS %llu", op.sme_tile_bits());
		flag(op_flag::fp, "FP");
		return;
	case OpSubclass::branch:
		s += 'B';
		flag(op_flag::conditional, "COND");
		flag(op_flag::indirect, "IND");
		flag(op_flag::gcs, "GCS");
		switch (op.call_return) {
		case CallReturn::none: break;
		case CallReturn::branch_with_link: s += " CR-BL"; break;
		case CallReturn::return_: s += " CR-RET"; break;
		case CallReturn::other: s += " CR-NON-BL-RET"; break;
		}
		return;
	case OpSubclass::reserved:
		append(s, "OP-TYPE class %u 0x%02x", cls & 3, unsigned{raw});
		return;
	default:
		break;
	}
	// load/store subclasses
	s += op.has(op_flag::store) ? "ST " : "LD ";
	s += to_string(op.subclass);
	if (op.subclass == OpSubclass::extended) {
		flag(op_flag::atomic, "AT");
		flag(op_flag::exclusive, "EXCL");
		flag(op_flag::acquire_release, "AR");
	} else if (op.subclass == OpSubclass::sve_sme) {
		append(s, " EVLEN %u", op.sve_vector_bits());
		flag(op_flag::predicated, "PRED");
		flag(op_flag::gather_scatter, "SG");
	} else if (op.subclass == OpSubclass::gcs) {
		flag(op_flag::gcs_common, "COMM");
	}
}

} // namespace

std::string describe(const Packet& p)
{
	std::string s;
	const auto pl = static_cast<unsigned long long>(p.payload);
	switch (p.kind) {
	case PacketKind::pad: return "PAD";
	case PacketKind::end: return "END";
	case PacketKind::timestamp:
		append(s, "TS %llu", pl);
		return s;
	case PacketKind::address:
		switch (p.index) {
		case addr_pc:
		case addr_branch_target:
		case addr_prev_branch_target: {
			static constexpr const char* names[] = {"PC", "TGT", "", "", "PBT"};
			const InstAddress a = decode_inst_address(p.payload);
			append(s, "%s 0x%llx el%u ns=%d", names[p.index], static_cast<unsigned long long>(a.address),
			       unsigned{a.el}, a.ns ? 1 : 0);
			if (a.nse)
				s += " nse=1";
			return s;
		}
		case addr_data_va: {
			const DataVirtAddress a = decode_data_va(p.payload);
			append(s, "VA 0x%llx", static_cast<unsigned long long>(a.address_with_tag()));
			return s;
		}
		case addr_data_pa: {
			const DataPhysAddress a = decode_data_pa(p.payload);
			append(s, "PA 0x%llx ns=%d ch=%d pat=%x", static_cast<unsigned long long>(a.address),
			       a.ns ? 1 : 0, a.ch ? 1 : 0, unsigned{a.pat});
			return s;
		}
		default:
			append(s, "ADDR[%u] 0x%llx", unsigned{p.index}, pl);
			return s;
		}
	case PacketKind::counter:
		switch (p.index) {
		case counter_total_latency: append(s, "LAT %llu TOT", pl); return s;
		case counter_issue_latency: append(s, "LAT %llu ISSUE", pl); return s;
		case counter_translation_latency: append(s, "LAT %llu XLAT", pl); return s;
		default: append(s, "COUNTER[%u] %llu", unsigned{p.index}, pl); return s;
		}
	case PacketKind::events: {
		s = "EV";
		for (unsigned i = 0; i < 8u * p.payload_size; ++i) {
			if (!((p.payload >> i) & 1))
				continue;
			const std::string_view n = event_name(i);
			if (n.empty()) {
				append(s, " E%u", i);
			} else {
				s += ' ';
				s += n;
			}
		}
		return s;
	}
	case PacketKind::data_source:
		append(s, "DATA-SOURCE %llu", pl);
		return s;
	case PacketKind::context:
		if (p.index <= 1)
			append(s, "CONTEXT 0x%llx el%u", pl, p.index + 1u);
		else
			append(s, "CONTEXT 0x%llx index %u", pl, unsigned{p.index});
		return s;
	case PacketKind::op_type:
		describe_op(s, p.index, static_cast<std::uint8_t>(p.payload));
		return s;
	case PacketKind::alignment:
		append(s, "ALIGN %u", 2u << p.index);
		return s;
	case PacketKind::unknown:
		return "UNKNOWN";
	case PacketKind::truncated:
		return "TRUNCATED";
	}
	return "UNKNOWN";
}

std::string format_packet(std::span<const std::byte> buf, const Packet& p)
{
	std::string s;
	append(s, "%08zx: ", p.offset);
	const std::size_t n = p.size();
	std::size_t shown = 0;
	for (std::size_t i = 0; i < n && p.offset + i < buf.size(); ++i, ++shown)
		append(s, " %02x", static_cast<unsigned>(std::to_integer<unsigned char>(buf[p.offset + i])));
	for (; shown < 10; ++shown)
		s += "   ";
	s += "  ";
	s += describe(p);
	return s;
}

} // namespace amupmu::spe
