// SPDX-License-Identifier: GPL-2.0
//
// A small SPE packet encoder for the tests and the benchmark: builds
// buffers in the architected format (Arm ARM, "The Statistical Profiling
// Extension sample record specification"). Golden tests assert hand-written
// bytes too; this only spares writing every record by hand.
#ifndef AMUPMU_TESTS_SPE_ENCODER_HPP
#define AMUPMU_TESTS_SPE_ENCODER_HPP

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

namespace spe_enc {

/// The packets of one record of the hardware layouts below (Buf::slot64(),
/// Buf::variable()); an absent one is nullopt.
struct Fields {
	std::uint64_t pc = 0;				///< Address 0 (its top byte: NS, EL)
	std::optional<std::uint32_t> context;		///< Context 0 (CONTEXTIDR_EL1)
	unsigned op_class = 0;				///< Operation Type class
	std::uint8_t op = 0;				///< and payload
	std::uint16_t events = 0;			///< Events, 2 bytes
	std::uint16_t total = 0;			///< Counter 0, total latency
	std::uint16_t issue = 0;			///< Counter 1, issue latency
	std::optional<std::uint64_t> target;		///< Address 1, branch target (VA's place)
	std::optional<std::uint64_t> va;		///< Address 2
	std::optional<std::uint16_t> xlat;		///< Counter 2, translation latency
	std::optional<std::uint64_t> pa;		///< Address 3
	std::optional<std::uint16_t> data_source;	///< Data Source, 2 bytes
	std::uint64_t ts = 0;				///< Timestamp, ends the record

	/// The packets of a typical operation of kind k % kinds: 0 load, 1
	/// SIMD&FP load, 2 store, 3 branch (taken or not, sometimes
	/// mispredicted), 4 other (SIMD), 5 atomic (exclusive store,
	/// acquire/release), at pc (NS=1, EL0), payloads drawn from rng.
	static constexpr unsigned kinds = 6;
	template <typename Rng>
	static Fields typical(unsigned k, std::uint64_t pc, Rng& rng, std::uint64_t ts)
	{
		Fields f;
		f.pc = pc | 0x8000000000000000ULL;
		f.context = static_cast<std::uint32_t>(1000 + rng() % 64);
		f.total = static_cast<std::uint16_t>(4 + rng() % 60);
		f.issue = static_cast<std::uint16_t>(rng() % 8);
		f.ts = ts;
		const std::uint64_t va = 0xffff00000000ULL + (rng() % (1u << 24)) * 8;
		switch (k % kinds) {
		case 0:
		case 1:
		case 5:
			f.op_class = 1;
			f.op = k % kinds == 0 ? 0x00 : k % kinds == 1 ? 0x04 : 0x1b;
			f.events = static_cast<std::uint16_t>(0x0016 | (rng() % 4 == 0 ? 0x0008 : 0));
			f.va = va;
			f.xlat = static_cast<std::uint16_t>(rng() % 4);
			f.pa = (va & 0xFFFFFFFFFFULL) | 0x8000000000000000ULL;
			if (k % kinds != 5)
				f.data_source = static_cast<std::uint16_t>(rng() % 16);
			break;
		case 2:
			f.op_class = 1;
			f.op = 0x01;
			f.events = 0x0016;
			f.va = va;
			f.xlat = static_cast<std::uint16_t>(rng() % 4);
			f.pa = (va & 0xFFFFFFFFFFULL) | 0x8000000000000000ULL;
			break;
		case 3:
			f.op_class = 2;
			f.op = static_cast<std::uint8_t>(rng() % 2);	// COND
			f.events = static_cast<std::uint16_t>(0x0002 | (rng() % 2 ? 0x40 : 0) | (rng() % 8 == 0 ? 0x80 : 0));
			f.target = pc + 64 * (rng() % 16);
			break;
		default:
			f.op_class = 0;
			f.op = 0x04;	// ASE
			f.events = 0x0002;
			break;
		}
		return f;
	}
};

struct Buf {
	std::vector<std::byte> bytes;

	Buf& raw(std::initializer_list<unsigned> list)
	{
		for (unsigned b : list)
			bytes.push_back(static_cast<std::byte>(b));
		return *this;
	}
	Buf& le(std::uint64_t v, unsigned n)
	{
		for (unsigned i = 0; i < n; ++i)
			bytes.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
		return *this;
	}
	static unsigned sz(unsigned n) { return n == 1 ? 0 : n == 2 ? 1 : n == 4 ? 2 : 3; }

	Buf& pad(unsigned n = 1)
	{
		bytes.insert(bytes.end(), n, std::byte{0});
		return *this;
	}
	Buf& end() { return raw({0x01}); }
	Buf& timestamp(std::uint64_t t) { return raw({0x71}).le(t, 8); }
	/// short header up to index 7, extended header above
	Buf& address(unsigned index, std::uint64_t payload)
	{
		if (index > 7)
			raw({0x20u | (index >> 3)});
		return raw({0xB0u | (index & 7)}).le(payload, 8);
	}
	Buf& counter(unsigned index, std::uint16_t value)
	{
		if (index > 7)
			raw({0x20u | (index >> 3)});
		return raw({0x98u | (index & 7)}).le(value, 2);
	}
	Buf& events(std::uint64_t bits, unsigned n = 2) { return raw({0x42u | sz(n) << 4}).le(bits, n); }
	Buf& data_source(std::uint64_t v, unsigned n = 2) { return raw({0x43u | sz(n) << 4}).le(v, n); }
	Buf& context(unsigned index, std::uint32_t id) { return raw({0x64u | (index & 3)}).le(id, 4); }
	Buf& op(unsigned cls, std::uint8_t payload) { return raw({0x48u | (cls & 3)}).le(payload, 1); }

	/// A typical load record: op, PC, VA, PA, latencies, events, data
	/// source, context, ended by a timestamp.
	Buf& load_record(std::uint64_t pc, std::uint64_t va, std::uint64_t ts)
	{
		op(1, 0x00);
		address(0, pc | 0xA000000000000000ULL);	// NS, EL1
		address(2, va);
		address(3, (va & 0xFFFFFFFFFFULL) | 0x8000000000000000ULL);
		counter(2, 3);
		counter(0, 27);
		counter(1, 4);
		events(0x0016, 2);
		data_source(0, 2);
		context(0, 1234);
		return timestamp(ts);
	}
	/// A typical branch record ended by End.
	Buf& branch_record(std::uint64_t pc, std::uint64_t target)
	{
		op(2, 0x01);
		address(0, pc);
		address(1, target);
		counter(0, 9);
		counter(1, 1);
		events(0x0042, 1);
		return end();
	}

	/// Padding up to byte `at` of the record that began at `start`.
	Buf& pad_to(std::size_t start, std::size_t at)
	{
		return pad(static_cast<unsigned>(start + at - bytes.size()));
	}

	/// A record in a fixed 64-byte slot, as Neoverse N1-class CPUs write
	/// them (Ampere Altra, Graviton 2): each packet at its offset in the
	/// slot, PAD bytes where the record lacks a packet. PC at 0, CONTEXT
	/// 14, Operation Type 19, EVENTS 21, issue and total latency 24 and
	/// 27, VA or branch target 30, translation latency 39, PA 42, DATA
	/// SOURCE 51, TIMESTAMP 55.
	Buf& slot64(const Fields& f)
	{
		const std::size_t s = bytes.size();
		address(0, f.pc).pad_to(s, 14);
		if (f.context)
			context(0, *f.context);
		pad_to(s, 19).op(f.op_class, f.op).events(f.events, 2).counter(1, f.issue).counter(0, f.total);
		if (f.target)
			address(1, *f.target);
		else if (f.va)
			address(2, *f.va);
		pad_to(s, 39);
		if (f.xlat)
			counter(2, *f.xlat);
		pad_to(s, 42);
		if (f.pa)
			address(3, *f.pa);
		pad_to(s, 51);
		if (f.data_source)
			data_source(*f.data_source, 2);
		return pad_to(s, 55).timestamp(f.ts);
	}

	/// A record of variable length, as HiSilicon-class CPUs and KVM guests
	/// write them: PC, total and issue latency and EVENTS before the
	/// Operation Type, then the branch target or VA and the translation
	/// latency when the operation has them, the CONTEXT when there is one,
	/// then 1-4 PAD bytes that make the record a multiple of 4 bytes with
	/// its TIMESTAMP (32 to 44 bytes without a CONTEXT). The layout has no
	/// PA or DATA SOURCE: f's are not written.
	Buf& variable(const Fields& f)
	{
		const std::size_t s = bytes.size();
		address(0, f.pc).counter(0, f.total).counter(1, f.issue).events(f.events, 2).op(f.op_class, f.op);
		if (f.target)
			address(1, *f.target);
		else if (f.va)
			address(2, *f.va);
		if (f.xlat)
			counter(2, *f.xlat);
		if (f.context)
			context(0, *f.context);
		pad(1);
		while ((bytes.size() - s + 9) % 4 != 0)
			pad(1);
		return timestamp(f.ts);
	}

	[[nodiscard]] std::span<const std::byte> span() const { return bytes; }
};

} // namespace spe_enc

#endif
