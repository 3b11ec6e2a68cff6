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
#include <span>
#include <vector>

namespace spe_enc {

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

	[[nodiscard]] std::span<const std::byte> span() const { return bytes; }
};

} // namespace spe_enc

#endif
