// SPDX-License-Identifier: LGPL-2.1-or-later
//
// amupmu::spe: decoder of the Statistical Profiling Extension's sample
// records, the architected packet format of the Arm ARM (DDI 0487), chapter
// "The Statistical Profiling Extension", section "The Statistical Profiling
// Extension sample record specification" (packet headers, then one
// subsection per packet type). Section names below are that chapter's.
//
// Two levels, neither allocates:
//  - decode_packet(): one packet at an offset of a buffer (kind, index,
//    payload, offset, size);
//  - RecordReader: iterates over a buffer and fills a reused Record per
//    sample record (lazily: a Record points into the buffer and reads a
//    field when asked, so it stays valid as long as the buffer). A record
//    ends at an End or a Timestamp packet. Padding is skipped (between
//    records, and inside one: hardware that lays records out in fixed
//    slots writes PAD where a record lacks a packet). A packet the
//    architecture does not define is reported with its offset
//    (Record::unknown_offsets()) and the reader skips from the byte after
//    its first to the end of that record (the next End or Timestamp
//    header). A packet cut by the end of
//    the buffer stops the reader (Stats::truncated). Nothing is read
//    outside the buffer.
//
// Where Linux's perf decoder (tools/perf/util/arm-spe-decoder/) and the
// Arm ARM differ, the Arm ARM is followed; the differences are noted where
// they matter (Documentation/userspace-api/amupmu-spe.rst lists them).
#ifndef AMUPMU_SPE_HPP
#define AMUPMU_SPE_HPP

#include <amupmu/bits.hpp>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace amupmu::spe {

// ---------------------------------------------------------------- packets

/// Packet types ("Packet headers").
enum class PacketKind : std::uint8_t {
	pad,		///< Padding: 0b00000000
	end,		///< End: 0b00000001, ends a record without a timestamp
	timestamp,	///< Timestamp: 0b01110001, 8-byte payload, ends a record
	address,	///< Address: 0b10110iii (or extended), 8-byte payload
	counter,	///< Counter: 0b10011iii (or extended), 2-byte payload
	events,		///< Events: 0b01sz0010, 1 << sz bytes
	data_source,	///< Data Source: 0b01sz0011, 1 << sz bytes
	context,	///< Context: 0b011001ii, 4-byte payload
	op_type,	///< Operation Type: 0b010010cc, 1-byte payload
	alignment,	///< Alignment: extended header 0b001000aa, then 0b00000000
	unknown,	///< a header the architecture does not define
	truncated,	///< a packet cut by the end of the buffer
};

/// "PAD", "END", "TS", "ADDR", "COUNTER", "EVENTS", "DATA-SOURCE",
/// "CONTEXT", "OP-TYPE", "ALIGN", "UNKNOWN", "TRUNCATED".
[[nodiscard]] std::string_view to_string(PacketKind kind) noexcept;

/// One decoded packet. For address and counter packets index is the full
/// 5-bit index (extended header bits [1:0] are index[4:3]); for context
/// packets [1:0] of the header; for operation type packets the class [1:0].
struct Packet {
	PacketKind kind = PacketKind::unknown;
	std::uint8_t index = 0;
	std::uint8_t header_size = 0;	///< 1 (short header) or 2 (extended)
	std::uint8_t payload_size = 0;	///< 0, 1, 2, 4 or 8 bytes
	std::size_t offset = 0;		///< of the first header byte in the buffer
	std::uint64_t payload = 0;	///< little-endian payload, zero-extended

	/// Bytes the packet occupies: header and payload. For an unknown
	/// packet, its header byte(s); for a truncated one, what the buffer
	/// still held.
	[[nodiscard]] constexpr std::size_t size() const noexcept { return std::size_t{header_size} + payload_size; }
	friend constexpr bool operator==(const Packet&, const Packet&) = default;
};

/// Decodes the packet at buf[offset] (offset < buf.size()). Never reads
/// outside buf. An unknown header yields kind unknown with size() 1, an
/// extended header whose second byte no packet defines too (that byte may
/// be the next packet's header: a decoder moves on one byte, as Linux's
/// does); a packet longer than what remains yields kind truncated.
[[nodiscard]] Packet decode_packet(std::span<const std::byte> buf, std::size_t offset) noexcept;

/// The header's packet type and sizes, without reading a payload: what
/// decode_packet() relies on (a 256-entry table over the first byte).
struct HeaderInfo {
	PacketKind kind = PacketKind::unknown;
	std::uint8_t payload_size = 0;
	bool extended = false;	///< 0b001000xx: the packet type is in the next byte
};
[[nodiscard]] HeaderInfo classify_header(std::uint8_t header) noexcept;

// ---------------------------------------------------------------- address

/// Address packet indexes ("Address packet", index field).
inline constexpr unsigned addr_pc = 0;			///< instruction virtual address (PC)
inline constexpr unsigned addr_branch_target = 1;	///< branch target virtual address
inline constexpr unsigned addr_data_va = 2;		///< data access virtual address
inline constexpr unsigned addr_data_pa = 3;		///< data access physical address
inline constexpr unsigned addr_prev_branch_target = 4;	///< previous branch target (FEAT_SPE_PBT)

/// Instruction addresses (PC, branch target, previous branch target):
/// ADDR [55:0], NSE [60] (FEAT_RME), EL [62:61], NS [63].
struct InstAddress {
	std::uint64_t address = 0;	///< [55:0], as recorded
	std::uint8_t el = 0;		///< [62:61]
	bool ns = false;		///< [63]
	bool nse = false;		///< [60]

	/// The 64-bit virtual address: [55:0] with bit 55 copied into
	/// [63:56] (a TTBR1 address has bit 55 set).
	[[nodiscard]] constexpr std::uint64_t virtual_address() const noexcept
	{
		return bit<55>(address) ? address | 0xFF00000000000000ULL : address;
	}
	friend constexpr bool operator==(const InstAddress&, const InstAddress&) = default;
};

[[nodiscard]] constexpr InstAddress decode_inst_address(std::uint64_t payload) noexcept
{
	return InstAddress{
		.address = field<55, 0>(payload),
		.el = static_cast<std::uint8_t>(field<62, 61>(payload)),
		.ns = bit<63>(payload),
		.nse = bit<60>(payload),
	};
}

/// Data virtual address: ADDR [55:0], TAG [63:56] (the address's top
/// byte as the access used it). Linux prints the whole payload as the VA;
/// the same value is address_with_tag().
struct DataVirtAddress {
	std::uint64_t address = 0;	///< [55:0]
	std::uint8_t tag = 0;		///< [63:56]

	[[nodiscard]] constexpr std::uint64_t address_with_tag() const noexcept
	{
		return address | std::uint64_t{tag} << 56;
	}
	/// [55:0] with bit 55 copied into [63:56] (the address without its tag).
	[[nodiscard]] constexpr std::uint64_t virtual_address() const noexcept
	{
		return bit<55>(address) ? address | 0xFF00000000000000ULL : address;
	}
	friend constexpr bool operator==(const DataVirtAddress&, const DataVirtAddress&) = default;
};

[[nodiscard]] constexpr DataVirtAddress decode_data_va(std::uint64_t payload) noexcept
{
	return DataVirtAddress{
		.address = field<55, 0>(payload),
		.tag = static_cast<std::uint8_t>(field<63, 56>(payload)),
	};
}

/// Data physical address: ADDR [55:0], PAT [59:56] (the physical address
/// tag, FEAT_MTE2), CH [62] (a Checked access, FEAT_MTE2), NS [63].
struct DataPhysAddress {
	std::uint64_t address = 0;	///< [55:0]
	std::uint8_t pat = 0;		///< [59:56]
	bool ch = false;		///< [62]
	bool ns = false;		///< [63]
	friend constexpr bool operator==(const DataPhysAddress&, const DataPhysAddress&) = default;
};

[[nodiscard]] constexpr DataPhysAddress decode_data_pa(std::uint64_t payload) noexcept
{
	return DataPhysAddress{
		.address = field<55, 0>(payload),
		.pat = static_cast<std::uint8_t>(field<59, 56>(payload)),
		.ch = bit<62>(payload),
		.ns = bit<63>(payload),
	};
}

// ---------------------------------------------------------------- counter

/// Counter packet indexes ("Counter packet"). The payload is a 16-bit
/// saturating count (12 bits on CPUs with PMSIDR_EL1.CountSize 0b0010).
/// Other indexes are kept by number (Record::counter()).
inline constexpr unsigned counter_total_latency = 0;	///< cycles from dispatch to complete
inline constexpr unsigned counter_issue_latency = 1;	///< cycles from dispatch to issue
inline constexpr unsigned counter_translation_latency = 2; ///< cycles of the address translation

// ---------------------------------------------------------------- context

inline constexpr unsigned context_el1 = 0;	///< CONTEXTIDR_EL1
inline constexpr unsigned context_el2 = 1;	///< CONTEXTIDR_EL2

// ---------------------------------------------------------------- events

/// Events packet payload ("Events packet"): one bit per event. Bits [15:12]
/// are IMPLEMENTATION DEFINED (Neoverse N1 bit 12: late prefetch).
struct Events {
	std::uint64_t bits = 0;

	[[nodiscard]] constexpr bool test(unsigned n) const noexcept { return n < 64 && ((bits >> n) & 1) != 0; }
	[[nodiscard]] constexpr bool generated_exception() const noexcept { return test(0); }
	[[nodiscard]] constexpr bool retired() const noexcept { return test(1); }
	[[nodiscard]] constexpr bool l1d_access() const noexcept { return test(2); }
	[[nodiscard]] constexpr bool l1d_refill() const noexcept { return test(3); }
	[[nodiscard]] constexpr bool tlb_access() const noexcept { return test(4); }
	[[nodiscard]] constexpr bool tlb_walk() const noexcept { return test(5); }
	[[nodiscard]] constexpr bool not_taken() const noexcept { return test(6); }
	[[nodiscard]] constexpr bool mispredicted() const noexcept { return test(7); }
	[[nodiscard]] constexpr bool llc_access() const noexcept { return test(8); }
	[[nodiscard]] constexpr bool llc_miss() const noexcept { return test(9); }
	[[nodiscard]] constexpr bool remote_access() const noexcept { return test(10); }
	[[nodiscard]] constexpr bool alignment() const noexcept { return test(11); }
	[[nodiscard]] constexpr unsigned implementation_defined() const noexcept
	{
		return static_cast<unsigned>(field<15, 12>(bits));
	}
	[[nodiscard]] constexpr bool transactional() const noexcept { return test(16); }
	[[nodiscard]] constexpr bool partial_predicate() const noexcept { return test(17); }
	[[nodiscard]] constexpr bool empty_predicate() const noexcept { return test(18); }
	[[nodiscard]] constexpr bool l2d_access() const noexcept { return test(19); }
	[[nodiscard]] constexpr bool l2d_miss() const noexcept { return test(20); }
	[[nodiscard]] constexpr bool cache_data_modified() const noexcept { return test(21); }
	[[nodiscard]] constexpr bool recently_fetched() const noexcept { return test(22); }
	[[nodiscard]] constexpr bool data_snooped() const noexcept { return test(23); }
	[[nodiscard]] constexpr bool streaming_sve_mode() const noexcept { return test(24); }
	[[nodiscard]] constexpr bool smcu() const noexcept { return test(25); }
	friend constexpr bool operator==(const Events&, const Events&) = default;
};

/// Name of event bit n as this library prints it ("RETIRED", "L1D-REFILL",
/// "IMPDEF-12"); empty for a bit the architecture does not name.
[[nodiscard]] std::string_view event_name(unsigned n) noexcept;

// ---------------------------------------------------------------- operation type

/// Operation Type packet class (header [1:0]).
enum class OpClass : std::uint8_t {
	other = 0,	///< Other operation
	load_store = 1,	///< Load/store or atomic
	branch = 2,	///< Branch or exception return
	reserved = 3,
};

/// Subclass decoded from the payload byte.
enum class OpSubclass : std::uint8_t {
	// class other
	other,		///< [7:3] 0b00000: COND [0], FP [1], ASE (SIMD) [2]
	sve_other,	///< [7]=0 [3]=1 [0]=0: EVL [6:4], PRED [2], FP [1]
	sme_other,	///< [7]=1 [3]=1 [0]=0: ETS [6:4,2], FP [1]
	// class load_store (ST [0]: store, else load)
	gp,		///< [7:1] 0b0000000: general-purpose registers
	simd_fp,	///< [7:1] 0b0000010: SIMD&FP registers
	extended,	///< [7:5]=0 [1]=1: AT [2], EXCL [3], AR [4]
	unspecified,	///< [7:1] 0b0001000: unspecified registers
	mte_tag,	///< [7:1] 0b0001010: allocation tags (MTE)
	memcpy,		///< [7:1] 0b0010000: CPY* (FEAT_MOPS)
	memset,		///< 0b00100101: SET* (FEAT_MOPS), always a store
	nv_sysreg,	///< [7:1] 0b0011000: system register in memory (FEAT_NV2)
	gcs,		///< [7:3]=0b01000 [1]=0: Guarded Control Stack, COMM [2]
	sve_sme,	///< [3]=1 [1]=0: SVE or SME registers: SG [7], EVL [6:4], PRED [2]
	// class branch
	branch,		///< COND [0], IND [1], GCS [2], CR [4:3]
	reserved,	///< an encoding the architecture reserves
};

/// Branch call/return hint of a branch (FEAT_SPE_CRR, CR [4:3]).
enum class CallReturn : std::uint8_t {
	none = 0,		///< not reported
	branch_with_link = 1,	///< BL/BLR (a call)
	return_ = 2,		///< RET (a procedure return)
	other = 3,		///< neither: a branch that is not a call or a return
};

/// Flags of an operation (OpType::flags), meaningful per subclass.
namespace op_flag {
inline constexpr std::uint16_t store = 1u << 0;		///< load_store: ST
inline constexpr std::uint16_t atomic = 1u << 1;	///< extended: AT
inline constexpr std::uint16_t exclusive = 1u << 2;	///< extended: EXCL
inline constexpr std::uint16_t acquire_release = 1u << 3; ///< extended: AR
inline constexpr std::uint16_t conditional = 1u << 4;	///< branch: COND; other: conditional select
inline constexpr std::uint16_t indirect = 1u << 5;	///< branch: IND
inline constexpr std::uint16_t gcs = 1u << 6;		///< branch: GCS (a GCS-checked return or call)
inline constexpr std::uint16_t fp = 1u << 7;		///< other, SVE/SME other: FP
inline constexpr std::uint16_t simd = 1u << 8;		///< other: ASE (Advanced SIMD)
inline constexpr std::uint16_t predicated = 1u << 9;	///< SVE: PRED
inline constexpr std::uint16_t gather_scatter = 1u << 10; ///< sve_sme: SG
inline constexpr std::uint16_t gcs_common = 1u << 11;	///< gcs load/store: COMM [2]
} // namespace op_flag

/// Decoded Operation Type packet ("Operation Type packet").
struct OpType {
	OpClass cls = OpClass::other;
	OpSubclass subclass = OpSubclass::other;
	std::uint16_t flags = 0;
	std::uint8_t raw = 0;		///< the payload byte
	CallReturn call_return = CallReturn::none;

	[[nodiscard]] constexpr bool has(std::uint16_t flag) const noexcept { return (flags & flag) != 0; }
	// & rather than &&: no branch on the operation's class
	[[nodiscard]] constexpr bool is_load() const noexcept
	{
		return (cls == OpClass::load_store) & !has(op_flag::store);
	}
	[[nodiscard]] constexpr bool is_store() const noexcept
	{
		return (cls == OpClass::load_store) & has(op_flag::store);
	}
	/// SVE effective vector length in bits, 32 << EVL [6:4] (sve_other,
	/// sve_sme); 0 otherwise.
	[[nodiscard]] constexpr unsigned sve_vector_bits() const noexcept
	{
		return subclass == OpSubclass::sve_other || subclass == OpSubclass::sve_sme
			       ? 32u << field<6, 4>(raw)
			       : 0;
	}
	/// SME effective tile size in bits, 128 << ETS ([6:4] << 1 | [2])
	/// (sme_other); 0 otherwise.
	[[nodiscard]] constexpr unsigned long long sme_tile_bits() const noexcept
	{
		return subclass == OpSubclass::sme_other
			       ? 128ULL << (field<6, 4>(raw) << 1 | field<2, 2>(raw))
			       : 0;
	}
	friend constexpr bool operator==(const OpType&, const OpType&) = default;
};

[[nodiscard]] constexpr OpType decode_op_type(unsigned cls, std::uint8_t p) noexcept
{
	OpType op;
	op.cls = static_cast<OpClass>(cls & 3);
	op.raw = p;
	std::uint16_t f = 0;
	switch (op.cls) {
	case OpClass::other:
		if (field<7, 3>(p) == 0) {
			op.subclass = OpSubclass::other;
			if (bit<0>(p)) f |= op_flag::conditional;
			if (bit<1>(p)) f |= op_flag::fp;
			if (bit<2>(p)) f |= op_flag::simd;
		} else if ((p & 0x89) == 0x08) {
			op.subclass = OpSubclass::sve_other;
			if (bit<1>(p)) f |= op_flag::fp;
			if (bit<2>(p)) f |= op_flag::predicated;
		} else if ((p & 0x89) == 0x88) {
			op.subclass = OpSubclass::sme_other;
			if (bit<1>(p)) f |= op_flag::fp;
		} else {
			op.subclass = OpSubclass::reserved;
		}
		break;
	case OpClass::load_store:
		if (bit<0>(p)) f |= op_flag::store;
		if ((p & 0xE2) == 0x02) {
			op.subclass = OpSubclass::extended;
			if (bit<2>(p)) f |= op_flag::atomic;
			if (bit<3>(p)) f |= op_flag::exclusive;
			if (bit<4>(p)) f |= op_flag::acquire_release;
		} else if ((p & 0x0A) == 0x08) {
			op.subclass = OpSubclass::sve_sme;
			if (bit<2>(p)) f |= op_flag::predicated;
			if (bit<7>(p)) f |= op_flag::gather_scatter;
		} else if ((p & 0xFA) == 0x40) {
			op.subclass = OpSubclass::gcs;
			if (bit<2>(p)) f |= op_flag::gcs_common;
		} else if (p == 0x25) {
			op.subclass = OpSubclass::memset;
		} else {
			switch (p & 0xFE) {
			case 0x00: op.subclass = OpSubclass::gp; break;
			case 0x04: op.subclass = OpSubclass::simd_fp; break;
			case 0x10: op.subclass = OpSubclass::unspecified; break;
			case 0x14: op.subclass = OpSubclass::mte_tag; break;
			case 0x20: op.subclass = OpSubclass::memcpy; break;
			case 0x30: op.subclass = OpSubclass::nv_sysreg; break;
			default: op.subclass = OpSubclass::reserved; break;
			}
		}
		break;
	case OpClass::branch:
		op.subclass = OpSubclass::branch;
		if (bit<0>(p)) f |= op_flag::conditional;
		if (bit<1>(p)) f |= op_flag::indirect;
		if (bit<2>(p)) f |= op_flag::gcs;
		op.call_return = static_cast<CallReturn>(field<4, 3>(p));
		break;
	case OpClass::reserved:
		op.subclass = OpSubclass::reserved;
		break;
	}
	op.flags = f;
	return op;
}

namespace detail {
/// decode_op_type() of every class (index [9:8]) and payload byte ([7:0]),
/// computed at compile time.
extern const std::array<OpType, 1024> op_types;
/// The same as optionals, then 256 entries without a value (index 4 << 8
/// | any byte): what Record::op() returns, copied in one piece without a
/// branch.
extern const std::array<std::optional<OpType>, 1280> op_type_options;
} // namespace detail

/// decode_op_type() by table lookup.
[[nodiscard]] inline const OpType& op_type(unsigned cls, std::uint8_t payload) noexcept
{
	return detail::op_types[(cls & 3) << 8 | payload];
}

/// "OTHER", "LD/ST", "BRANCH", "RESERVED".
[[nodiscard]] std::string_view to_string(OpClass cls) noexcept;
/// "OTHER", "SVE-OTHER", "SME-OTHER", "GP-REG", "SIMD-FP", "EXTENDED",
/// "UNSPEC-REG", "MTE-TAG", "MEMCPY", "MEMSET", "NV-SYSREG", "GCS",
/// "SVE-SME-REG", "BRANCH", "RESERVED".
[[nodiscard]] std::string_view to_string(OpSubclass sub) noexcept;

// ---------------------------------------------------------------- records

/// How a record ended.
enum class RecordEnd : std::uint8_t {
	end,		///< an End packet
	timestamp,	///< a Timestamp packet
	buffer_end,	///< the buffer ended between packets without End/Timestamp
	truncated,	///< a packet was cut by the end of the buffer
	resync,		///< after an unknown packet, the reader skipped to the next End/Timestamp
};

namespace detail {
/// Two 64-bit lanes (GCC and Clang vector extension: SSE2, NEON).
using u64x2 = std::uint64_t __attribute__((vector_size(16)));

[[gnu::always_inline]] inline std::uint64_t load_le64(const unsigned char* p) noexcept
{
	std::uint64_t v;
	__builtin_memcpy(&v, p, 8);
	if constexpr (std::endian::native == std::endian::big)
		v = __builtin_bswap64(v);
	return v;
}

/// The set of a record's layout (of 1 << set_bits), from two or three bytes
/// of the record folded by shifts: the bytes of its Operation Type packet
/// where the layouts hardware writes put it, so that the records of one
/// layout share a set and records of different kinds do not. first: the
/// record's bytes 0-7 (little-endian), at9: its bytes 9-16, at17: its
/// bytes 17-24.
///  - A record that begins with an Operation Type (or any packet but an
///    8-byte address) is keyed by bytes 0-1: the first header and its
///    payload's first byte.
///  - A record that begins with an 8-byte address packet (header
///    0xB0-0xB7: the PC, where hardware and the mock model put it) and
///    whose byte 9 is an Operation Type header (the packed records of the
///    mock model) is keyed by bytes 9-10, the operation type and its
///    subclass. Keyed by the PC's low byte instead, five kinds of records
///    spread over every set and evicted each other (0.05 of memcpy).
///  - Other records that begin with an address are keyed by bytes 18-20:
///    in Neoverse N1-class 64-byte slots (byte 9 PAD, CONTEXT at 14) the
///    top byte of the context (0 for a pid) and the Operation Type at 19;
///    in HiSilicon-class and KVM-guest records (latencies and EVENTS after
///    the PC, byte 9 a Counter or Events header) the Operation Type at 18
///    and the header after it (the branch target, the VA or PAD). Keyed by
///    bytes 9-10, the slots' records all shared set 0, and the variable
///    ones spread over every set by a latency's low byte (0.034-0.066 of
///    memcpy). These three bytes are folded by Fibonacci hashing (the
///    top bits of their product with 2^32 / phi): the shifts' fold of
///    the two-byte keys drops the bit of a store in the third byte. The
///    two-byte keys keep that fold: programs built against an earlier
///    header find the layouts this library learns.
/// Any key is exact (a layout matches a record only by its bytes): the
/// key decides only how often the fast path finds a layout. The words
/// come from loads at the reader's position, not from a load that waits
/// for the first header (which made the chain from one record to the
/// next a third longer).
[[gnu::always_inline]] inline unsigned layout_set(std::uint64_t first, std::uint64_t at9, std::uint64_t at17) noexcept
{
	constexpr unsigned set_bits = 5;
	const bool after_address = (first & 0xF8) == 0xB0;
	const bool op_at9 = (at9 & 0xFC) == 0x48;
	const auto key16 = static_cast<std::uint32_t>((after_address ? at9 : first) & 0xFFFF);
	const auto key24 = static_cast<std::uint32_t>(at17 >> 8 & 0xFFFFFF);
	const unsigned fold16 = (key16 ^ key16 >> 5 ^ key16 >> 11) & ((1u << set_bits) - 1);
	const unsigned fold24 = (key24 * 0x9E3779B1u) >> (32 - set_bits);
	return after_address && !op_at9 ? fold24 : fold16;
}

/// Where a record's fields are (Record's storage; one 32-byte copy from a
/// reader's layout per record). Fields: address 0-7, counter 0-7, context
/// 0-3, events, data source, operation type 0-3 (by class), timestamp.
struct FieldMap {
	static constexpr unsigned address = 0;		///< + index (0-7)
	static constexpr unsigned counter = 8;		///< + index (0-7)
	static constexpr unsigned context = 16;		///< + index (0-3)
	static constexpr unsigned events = 20;
	static constexpr unsigned data_source = 21;
	static constexpr unsigned op = 22;		///< + class (0-3)
	static constexpr unsigned timestamp = 26;
	static constexpr unsigned count = 27;

	/// Offset of each field's payload from the record's base; an absent
	/// field's offset is valid to read too (8 bytes), its value unused.
	std::array<std::uint8_t, count> off{};
	/// sz of the Events [1:0] and the Data Source [3:2] packet: the
	/// payload is 1 << sz bytes of the 8 read.
	std::uint8_t sizes = 0x0F;
	std::uint32_t present = 0;	///< bit f: field f
};
static_assert(sizeof(FieldMap) == 32);

/// The map of values kept in a Record: field f at 8 f, whole 8 bytes.
constexpr FieldMap own_field_map() noexcept
{
	FieldMap m;
	for (unsigned f = 0; f < FieldMap::count; ++f)
		m.off[f] = static_cast<std::uint8_t>(8 * f);
	m.sizes = 0x0F;
	m.present = 0;
	return m;
}

/// Keeps v computed before a branch that tests its presence: a value the
/// compiler would otherwise compute in that branch only (sinking its load
/// there) makes the caller's test a branch, not a conditional move.
template <typename T>
[[gnu::always_inline]] inline void opaque(T& v) noexcept
{
	asm volatile("" : "+r"(v));
}

/// The low 1 << sz bytes of v.
[[gnu::always_inline]] constexpr std::uint64_t keep_bytes(std::uint64_t v, unsigned sz) noexcept
{
	return v & ~std::uint64_t{0} >> (64 - (8u << (sz & 3)));
}
} // namespace detail

class RecordReader;

/// One sample record. Values are valid when their accessor returns a
/// value.
///
/// Lazy and zero copy: a record of a layout the reader met before (see
/// RecordReader::Layout) is a pointer to its bytes in the buffer and the
/// offsets of its fields; each accessor reads its packet's payload there
/// (one load and a mask), so a caller pays only for the fields it reads.
/// Other records (the reader's slow path, and set()) keep their values in
/// the Record itself. A Record therefore stays valid as long as the
/// buffer it was read from (not the reader); copying it copies its
/// values or its pointer. No allocation.
struct Record {
	/// Unknown packets listed per record; more are counted, not listed.
	static constexpr std::size_t max_unknown = 4;

	/// Numbers of the fields for has(), get() and set().
	static constexpr unsigned slot_address = 0;	///< + index (0-31)
	static constexpr unsigned slot_counter = 32;	///< + index (0-31)
	static constexpr unsigned slot_context = 64;	///< + index (0-3)
	static constexpr unsigned slot_events = 68;
	static constexpr unsigned slot_data_source = 69;
	static constexpr unsigned slot_op = 70;		///< + class (0-3)
	static constexpr unsigned slot_timestamp = 74;
	static constexpr unsigned slot_count = 75;

	std::size_t offset = 0;		///< of the first non-padding byte
	std::size_t size = 0;		///< bytes from offset to the record's end
	RecordEnd end = RecordEnd::end;
	std::uint16_t packets = 0;	///< packets decoded, padding excluded
	std::uint16_t unknown_count = 0;
	std::array<std::size_t, max_unknown> unknown{};	///< offsets

	Record() noexcept : base_(own_bytes()) {}
	Record(const Record& o) noexcept : base_(own_bytes()) { *this = o; }
	Record& operator=(const Record& o) noexcept
	{
		if (this == &o)
			return *this;
		offset = o.offset;
		size = o.size;
		end = o.end;
		packets = o.packets;
		unknown_count = o.unknown_count;
		unknown = o.unknown;
		map_ = o.map_;
		high_mask_ = o.high_mask_;
		own_ = o.own_;
		high_ = o.high_;
		// values kept in o: kept in this one
		base_ = o.base_ == o.own_bytes() ? own_bytes() : o.base_;
		return *this;
	}
	~Record() = default;

	/// Whether the field of that slot (slot_address + index, ...) is present.
	[[nodiscard]] bool has(unsigned slot) const noexcept
	{
		const int f = field_of(slot);
		if (f >= 0)
			return present(static_cast<unsigned>(f));
		return slot < slot_context && !in_buffer() && ((high_mask_ >> slot) & 1) != 0;
	}
	/// The payload of that slot's packet (zero-extended), if present.
	[[nodiscard]] std::optional<std::uint64_t> get(unsigned slot) const noexcept
	{
		const int f = field_of(slot);
		if (f < 0)
			return has(slot) ? std::optional<std::uint64_t>{high_[slot]} : std::nullopt;
		const auto u = static_cast<unsigned>(f);
		std::uint64_t v = raw(u) & payload_keep(u);
		if (u == detail::FieldMap::events || u == detail::FieldMap::data_source)	// sized by their headers
			v = detail::keep_bytes(v, u == detail::FieldMap::events ? map_.sizes : map_.sizes >> 2);
		if (!present(u))
			return std::nullopt;
		return v;
	}
	/// Sets a field (for decoders and tests): the record's values are then
	/// kept in the Record.
	void set(unsigned slot, std::uint64_t value) noexcept
	{
		if (slot >= slot_count)
			return;
		own();
		const int f = field_of(slot);
		if (f < 0) {
			if (slot < slot_context) {	// always: the other slots have a field
				high_[slot] = value;
				high_mask_ |= std::uint64_t{1} << slot;
			}
			return;
		}
		own_[static_cast<unsigned>(f)] = value & payload_keep(static_cast<unsigned>(f));
		map_.present |= std::uint32_t{1} << f;
	}

	/// Whether the values are read from the buffer (a record of a layout
	/// the reader met before) rather than kept in the Record.
	[[nodiscard]] bool in_buffer() const noexcept { return base_ != own_bytes(); }

	/// Ended by End or Timestamp with no unknown packet in it.
	[[nodiscard]] constexpr bool complete() const noexcept
	{
		return (end == RecordEnd::end || end == RecordEnd::timestamp) && unknown_count == 0;
	}

	/// Bit i: an Address packet of index i.
	[[nodiscard]] std::uint32_t address_mask() const noexcept
	{
		return (map_.present & 0xFF) | (in_buffer() ? 0 : static_cast<std::uint32_t>(high_mask_ & 0xFFFFFF00));
	}
	/// Bit i: a Counter packet of index i.
	[[nodiscard]] std::uint32_t counter_mask() const noexcept
	{
		return (map_.present >> 8 & 0xFF) |
		       (in_buffer() ? 0 : static_cast<std::uint32_t>(high_mask_ >> 32 & 0xFFFFFF00));
	}

	/// The raw payload of the Address packet of that index.
	[[nodiscard]] std::optional<std::uint64_t> address(unsigned index) const noexcept
	{
		return index < 32 ? get(slot_address + index) : std::nullopt;
	}
	[[nodiscard]] std::optional<InstAddress> pc() const noexcept { return inst(addr_pc); }
	[[nodiscard]] std::optional<InstAddress> branch_target() const noexcept
	{
		return inst(addr_branch_target);
	}
	[[nodiscard]] std::optional<InstAddress> prev_branch_target() const noexcept
	{
		return inst(addr_prev_branch_target);
	}
	// The accessors load the payload before they test its presence bit
	// (an absent field's offset is readable too): the caller's test of
	// the optional can then become a conditional move, not a branch.
	[[nodiscard]] std::optional<DataVirtAddress> data_va() const noexcept
	{
		DataVirtAddress a = decode_data_va(raw(detail::FieldMap::address + addr_data_va));
		detail::opaque(a.address);
		detail::opaque(a.tag);
		if (!present(detail::FieldMap::address + addr_data_va))
			return std::nullopt;
		return a;
	}
	[[nodiscard]] std::optional<DataPhysAddress> data_pa() const noexcept
	{
		std::uint64_t v = raw(detail::FieldMap::address + addr_data_pa);
		detail::opaque(v);
		if (!present(detail::FieldMap::address + addr_data_pa))
			return std::nullopt;
		return decode_data_pa(v);
	}

	[[nodiscard]] std::optional<std::uint16_t> counter(unsigned index) const noexcept
	{
		if (index >= 32)
			return std::nullopt;
		if (index >= 8) {
			if (!has(slot_counter + index))
				return std::nullopt;
			return static_cast<std::uint16_t>(high_[slot_counter + index]);
		}
		auto v = static_cast<std::uint16_t>(raw(detail::FieldMap::counter + index));
		detail::opaque(v);
		if (!present(detail::FieldMap::counter + index))
			return std::nullopt;
		return v;
	}
	[[nodiscard]] std::optional<std::uint16_t> total_latency() const noexcept
	{
		return counter(counter_total_latency);
	}
	[[nodiscard]] std::optional<std::uint16_t> issue_latency() const noexcept
	{
		return counter(counter_issue_latency);
	}
	[[nodiscard]] std::optional<std::uint16_t> translation_latency() const noexcept
	{
		return counter(counter_translation_latency);
	}

	[[nodiscard]] std::optional<Events> events() const noexcept
	{
		std::uint64_t v = detail::keep_bytes(raw(detail::FieldMap::events), map_.sizes);
		detail::opaque(v);
		if (!present(detail::FieldMap::events))
			return std::nullopt;
		return Events{v};
	}
	/// The Data Source payload (its meaning is IMPLEMENTATION DEFINED).
	[[nodiscard]] std::optional<std::uint64_t> data_source() const noexcept
	{
		std::uint64_t v = detail::keep_bytes(raw(detail::FieldMap::data_source), map_.sizes >> 2);
		detail::opaque(v);
		if (!present(detail::FieldMap::data_source))
			return std::nullopt;
		return v;
	}
	[[nodiscard]] std::optional<std::uint32_t> context(unsigned index) const noexcept
	{
		if (index >= 4 || !present(detail::FieldMap::context + index))
			return std::nullopt;
		return static_cast<std::uint32_t>(raw(detail::FieldMap::context + index));
	}
	[[nodiscard]] std::optional<std::uint32_t> context_el1() const noexcept
	{
		return context(spe::context_el1);
	}
	[[nodiscard]] std::optional<std::uint32_t> context_el2() const noexcept
	{
		return context(spe::context_el2);
	}
	/// The Operation Type packet (the lowest class if a record had several).
	[[nodiscard]] std::optional<OpType> op() const noexcept
	{
		// the lowest class present, 4 for none (bits above the classes'
		// do not matter: bit 4 is set)
		const auto cls = static_cast<unsigned>(
			std::countr_zero(map_.present >> detail::FieldMap::op | 0x10u));
		const unsigned payload = base_[map_.off[detail::FieldMap::op + (cls & 3)]];
		return detail::op_type_options[cls << 8 | payload];
	}
	[[nodiscard]] std::optional<std::uint64_t> timestamp() const noexcept
	{
		std::uint64_t v = raw(detail::FieldMap::timestamp);
		detail::opaque(v);
		if (!present(detail::FieldMap::timestamp))
			return std::nullopt;
		return v;
	}
	/// Offsets of the unknown packets listed (at most max_unknown).
	[[nodiscard]] std::span<const std::size_t> unknown_offsets() const noexcept
	{
		return {unknown.data(), unknown_count < max_unknown ? unknown_count : max_unknown};
	}

	/// Forget every field (what the slow path of the reader does before
	/// each record): the values are then kept in the Record.
	void clear() noexcept
	{
		base_ = own_bytes();
		map_ = own_map;
		high_mask_ = 0;
		packets = unknown_count = 0;
		end = RecordEnd::end;
	}

private:
	friend class RecordReader;

	/// Field f's 8 bytes at its offset: valid for an absent field too.
	[[nodiscard]] std::uint64_t raw(unsigned f) const noexcept
	{
		return detail::load_le64(base_ + map_.off[f]);
	}
	[[nodiscard]] bool present(unsigned f) const noexcept { return ((map_.present >> f) & 1) != 0; }
	[[nodiscard]] const unsigned char* own_bytes() const noexcept
	{
		return reinterpret_cast<const unsigned char*>(own_.data());
	}
	/// The FieldMap slot of a slot number, -1 for addresses and counters
	/// 8-31 (kept in high_) and numbers past slot_count.
	[[nodiscard]] static constexpr int field_of(unsigned slot) noexcept
	{
		if (slot < slot_counter)
			return slot < 8 ? static_cast<int>(detail::FieldMap::address + slot) : -1;
		if (slot < slot_context)
			return slot - slot_counter < 8 ? static_cast<int>(detail::FieldMap::counter + slot - slot_counter) : -1;
		if (slot < slot_count)
			return static_cast<int>(detail::FieldMap::context + slot - slot_context);
		return -1;
	}
	/// The payload bytes of field f's packet (of an 8-byte load), for the
	/// fields of a fixed size (all 8 for events and data source).
	[[nodiscard]] static constexpr std::uint64_t payload_keep(unsigned f) noexcept
	{
		if (f < detail::FieldMap::counter)
			return ~std::uint64_t{0};
		if (f < detail::FieldMap::context)
			return 0xFFFF;
		if (f < detail::FieldMap::events)
			return 0xFFFFFFFF;
		if (f >= detail::FieldMap::op && f < detail::FieldMap::timestamp)
			return 0xFF;
		return ~std::uint64_t{0};
	}
	/// Keeps the values in own_ (what set() writes into).
	void own() noexcept
	{
		if (base_ == own_bytes())
			return;
		std::array<std::uint64_t, detail::FieldMap::count> v{};
		for (unsigned f = 0; f < detail::FieldMap::count; ++f)
			v[f] = get(f < detail::FieldMap::counter	 ? slot_address + f
				   : f < detail::FieldMap::context ? slot_counter + f - detail::FieldMap::counter
								   : slot_context + f - detail::FieldMap::context)
				       .value_or(0);
		own_ = v;
		const std::uint32_t present = map_.present;
		map_ = own_map;
		map_.present = present;
		high_mask_ = 0;	// a layout's record has none
		base_ = own_bytes();
	}

	/// The map of values kept in own_.
	static constexpr detail::FieldMap own_map = detail::own_field_map();

	const unsigned char* base_;	///< the payloads: in the buffer or own_
	detail::FieldMap map_ = own_map;
	/// bit i: slot i (addresses and counters 8-31), kept values only (a
	/// layout has none)
	std::uint64_t high_mask_ = 0;
	std::array<std::uint64_t, detail::FieldMap::count> own_{};
	std::array<std::uint64_t, slot_context> high_{};

	[[nodiscard]] std::optional<InstAddress> inst(unsigned index) const noexcept
	{
		InstAddress a = decode_inst_address(raw(detail::FieldMap::address + index));
		detail::opaque(a.address);
		if (!present(detail::FieldMap::address + index))
			return std::nullopt;
		return a;
	}
};

/// Counts over everything a reader has read.
struct Stats {
	std::uint64_t records = 0;
	std::uint64_t packets = 0;		///< padding excluded
	std::uint64_t padding_bytes = 0;	///< Padding and Alignment packets
	std::uint64_t unknown_packets = 0;
	std::uint64_t skipped_bytes = 0;	///< skipped after unknown packets
	std::uint64_t truncated = 0;		///< packets cut by the buffer's end (0 or 1)
	friend constexpr bool operator==(const Stats&, const Stats&) = default;
};

/// Zero-copy reader of the records in a buffer (the profiling buffer, or
/// any copy of it). Does not own the buffer.
class RecordReader {
public:
	explicit RecordReader(std::span<const std::byte> buf) noexcept : buf_(buf) {}

	/// Fills r with the next record; false at the end of the buffer (and
	/// after a truncated packet). Trailing padding yields no record.
	/// Inline: the fast path (see Layout); the rest is next_slow().
	bool next(Record& r) noexcept;

	[[nodiscard]] const Stats& stats() const noexcept { return stats_; }
	/// Offset of the next byte to read.
	[[nodiscard]] std::size_t position() const noexcept { return pos_; }
	[[nodiscard]] bool done() const noexcept { return done_ || pos_ >= buf_.size(); }

	/// Input iteration over the records; the iterator owns one Record,
	/// which every increment refills.
	class iterator {
	public:
		using value_type = Record;
		using difference_type = std::ptrdiff_t;
		using reference = const Record&;
		using pointer = const Record*;
		using iterator_category = std::input_iterator_tag;

		iterator() = default;
		explicit iterator(RecordReader* reader) : reader_(reader) { ++*this; }
		reference operator*() const noexcept { return rec_; }
		pointer operator->() const noexcept { return &rec_; }
		iterator& operator++() noexcept
		{
			if (reader_ && !reader_->next(rec_))
				reader_ = nullptr;
			return *this;
		}
		void operator++(int) noexcept { ++*this; }
		friend bool operator==(const iterator& it, std::default_sentinel_t) noexcept
		{
			return it.reader_ == nullptr;
		}

	private:
		RecordReader* reader_ = nullptr;
		Record rec_{};
	};

	[[nodiscard]] iterator begin() { return iterator{this}; }
	[[nodiscard]] std::default_sentinel_t end() const noexcept { return {}; }

	/// The layout of a record the reader met: its packets' headers and
	/// offsets, and the PAD bytes inside it. A record whose headers and
	/// PAD bytes match a known layout at every offset is that layout's
	/// record (the lengths follow from the headers), its fields at the
	/// layout's offsets: next() finds the layout and copies its FieldMap
	/// into the Record, nothing else; the accessors read the payloads. The
	/// match is one masked compare of the record's first window bytes:
	/// pattern holds the headers (and 0 for each PAD) at their offsets,
	/// care 0xFF there and 0 elsewhere (as 64-bit words of those bytes in
	/// memory order).
	struct alignas(64) Layout {
		static constexpr std::size_t window = 64;	///< bytes; longer records take the loop
		static constexpr std::size_t words = window / 8;
		std::array<std::uint64_t, words> pattern{1};	///< never matches while empty
		std::array<std::uint64_t, words> care{};
		/// Offsets from the byte after the record's first (header
		/// offsets), absent fields at 0.
		detail::FieldMap map{};
		std::uint8_t packets = 0;	///< 0: empty
		std::uint8_t size = 0;		///< bytes
		RecordEnd end = RecordEnd::end;
		std::uint8_t pad = 0;		///< PAD bytes inside the record
	};
	/// Known layouts: sets of ways, a set chosen by the first bytes.
	static constexpr std::size_t layout_sets = 32;	///< 1 << detail::layout_set()'s bits
	static constexpr std::size_t layout_ways = 2;
	/// Bytes the fast path may read from a record's start: up to 7 bytes
	/// of padding, the window, and the 8-byte payload load of a packet
	/// that ends at the window's end.
	static constexpr std::size_t fast_avail = 7 + Layout::window + 8;
	/// Bytes the fast path prefetches ahead of a record.
	static constexpr std::size_t prefetch_ahead = 1024;

private:
	bool next_slow(Record& r) noexcept;
	void learn(const Record& r) noexcept;

	std::span<const std::byte> buf_;
	std::size_t pos_ = 0;
	bool done_ = false;
	Stats stats_{};
	std::array<Layout, layout_sets * layout_ways> layout_{};
	std::array<std::uint8_t, layout_sets> victim_{};
};

[[gnu::always_inline]] inline bool RecordReader::next(Record& r) noexcept
{
	const auto* data = reinterpret_cast<const unsigned char*>(buf_.data());
	const std::size_t size = buf_.size();
	const std::size_t pos = pos_;
	// Fast path: at most 7 padding bytes (from the first non-zero byte of
	// one 8-byte load), then a record of a known layout (PAD inside it
	// too): the ways of its set in turn, each one masked compare of the
	// window, and the layout's FieldMap copied. The chain from one record
	// to the next (this record's set, its layout's size) takes the set's
	// bytes from 8-byte loads at fixed distances from pos by a shift, not
	// from a load that waits for the padding; and the padding count is
	// taken only after a branch on the first byte, so that where records
	// follow each other without padding (hardware's fixed slots and
	// variable records) the predicted branch keeps the count off the
	// chain.
	if (size - pos >= fast_avail) [[likely]] {
		const std::uint64_t w = detail::load_le64(data + pos);
		const std::uint64_t w9 = detail::load_le64(data + pos + 9);
		const std::uint64_t w17 = detail::load_le64(data + pos + 17);
		// the buffer from memory ahead of the reader: the hardware's
		// prefetchers stop at each 4 KiB page
		__builtin_prefetch(data + (size - pos > prefetch_ahead ? pos + prefetch_ahead : size - 1));
		if (w != 0) [[likely]] {
			// bits of padding: 8 × its bytes; none is the usual case,
			// where the branch (predicted) keeps the count off the
			// chain from one record to the next
			unsigned skip8 = 0;
			if ((w & 0xFF) == 0) [[unlikely]]
				skip8 = static_cast<unsigned>(std::countr_zero(w)) & 56;
			const unsigned char* rec = data + pos + skip8 / 8;
			// the record's bytes (wrong for more than 4 bytes of
			// padding in the keys of bytes 18-20, 6 in those of bytes
			// 9-10 and 7 in those of bytes 0-1: the set then misses)
			const unsigned set = detail::layout_set(w >> skip8, w9 >> skip8, w17 >> skip8);
			// the ways in turn: a branch the predictor learns, so that the
			// next record's position does not wait for the compares
			const Layout* lp = &layout_[set * layout_ways];
			const Layout* found = nullptr;
#pragma GCC unroll 4
			for (unsigned way = 0; way < layout_ways; ++way, ++lp) {
				detail::u64x2 diff{};
#pragma GCC unroll 4
				for (std::size_t k = 0; k < Layout::words; k += 2) {
					detail::u64x2 v, care, pattern;	// in memory order
					__builtin_memcpy(&v, rec + 8 * k, sizeof v);
					__builtin_memcpy(&care, &lp->care[k], sizeof care);
					__builtin_memcpy(&pattern, &lp->pattern[k], sizeof pattern);
					diff |= (v & care) ^ pattern;
				}
				if ((diff[0] | diff[1]) == 0) {
					found = lp;
					break;
				}
			}
			if (found) [[likely]] {
				const Layout& lay = *found;
				r.base_ = rec + 1;
				r.map_ = lay.map;
				r.offset = pos + skip8 / 8;
				r.size = lay.size;
				r.end = lay.end;
				r.packets = lay.packets;
				r.unknown_count = 0;
				pos_ = pos + skip8 / 8 + lay.size;
				stats_.padding_bytes += skip8 / 8 + lay.pad;
				stats_.packets += lay.packets;
				++stats_.records;
				return true;
			}
		}
	}
	return next_slow(r);
}

// ---------------------------------------------------------------- text

/// The packet's meaning in one line without its bytes, e.g.
/// "PC 0xffff800008123456 el1 ns=1", "LAT 12 TOT", "EV RETIRED L1D-ACCESS",
/// "LD GP-REG", "B COND IND CR-RET", "TS 39395093558", "UNKNOWN 0x07".
[[nodiscard]] std::string describe(const Packet& p);

/// One line as "amupmu spe dump" prints it: offset, the packet's bytes in
/// hex, then describe(), e.g.
/// "00000019:  b0 00 c4 15 08 00 00 ff ff  PC 0xff00000815c400 el1 ns=1".
/// p must have been decoded from buf. No trailing newline.
[[nodiscard]] std::string format_packet(std::span<const std::byte> buf, const Packet& p);

} // namespace amupmu::spe

#endif
