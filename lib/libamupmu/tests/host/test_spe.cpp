// SPDX-License-Identifier: GPL-2.0
//
// SPE packet and record decoder [host]. Golden bytes are written by hand
// from the Arm ARM's encodings ("The Statistical Profiling Extension sample
// record specification"); one record is a dump from real hardware (the
// example of Linux commit ffd3d18c20b8, "perf tools: Add ARM Statistical
// Profiling Extensions (SPE) support"). The fuzz test runs under ASan and
// UBSan in make host-asan-test.
#include "spe_encoder.hpp"
#include "spe_reference.hpp"

#include <amupmu/spe.hpp>
#include <amupmu/spe_data_source.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using namespace amupmu::spe;

namespace {

std::vector<std::byte> bytes(std::initializer_list<unsigned> list)
{
	std::vector<std::byte> v;
	for (unsigned b : list)
		v.push_back(static_cast<std::byte>(b));
	return v;
}

Packet one(std::initializer_list<unsigned> list)
{
	const auto v = bytes(list);
	return decode_packet(v, 0);
}

// The real record: op, VA, PA, LAT XLAT, EV, PC, LAT TOT, TS.
const std::vector<std::byte> n1_record = bytes({
	0x49, 0x00,						// LD
	0xb2, 0xc0, 0x3b, 0x29, 0x0f, 0x00, 0x00, 0xff, 0xff,	// VA 0xffff00000f293bc0
	0xb3, 0xc0, 0xeb, 0x24, 0xfb, 0x00, 0x00, 0x00, 0x80,	// PA 0xfb24ebc0 ns=1
	0x9a, 0x00, 0x00,					// LAT 0 XLAT
	0x42, 0x16,						// EV RETIRED L1D-ACCESS TLB-ACCESS
	0xb0, 0x00, 0xc4, 0x15, 0x08, 0x00, 0x00, 0xff, 0xff,	// PC 0xff00000815c400
	0x98, 0x00, 0x00,					// LAT 0 TOT
	0x71, 0x36, 0x6c, 0x21, 0x2c, 0x09, 0x00, 0x00, 0x00,	// TS 39395093558
});

} // namespace

// ---------------------------------------------------------------- headers

TEST_CASE("SPE headers: every first byte classified as the Arm ARM encodes it", "[host][spe]")
{
	// The defined headers, written out: 0x00 Padding, 0x01 End, 0x71
	// Timestamp, 0b01sz0010 Events, 0b01sz0011 Data Source, 0b011001ii
	// Context, 0b010010cc Operation Type, 0b001000ii extended header,
	// 0b10110iii Address, 0b10011iii Counter.
	const std::set<unsigned> defined = {
		0x00, 0x01, 0x71,
		0x42, 0x52, 0x62, 0x72,
		0x43, 0x53, 0x63, 0x73,
		0x64, 0x65, 0x66, 0x67,
		0x48, 0x49, 0x4a, 0x4b,
		0x20, 0x21, 0x22, 0x23,
		0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7,
		0x98, 0x99, 0x9a, 0x9b, 0x9c, 0x9d, 0x9e, 0x9f,
	};
	for (unsigned h = 0; h < 256; ++h) {
		INFO("header 0x" << std::hex << h);
		const HeaderInfo hi = classify_header(static_cast<std::uint8_t>(h));
		const bool known = hi.kind != PacketKind::unknown || hi.extended;
		CHECK(known == (defined.count(h) == 1));
		CHECK(hi.extended == (h >= 0x20 && h <= 0x23));
	}
	CHECK(classify_header(0x62).payload_size == 4);
	CHECK(classify_header(0x73).payload_size == 8);
	CHECK(classify_header(0x53).payload_size == 2);
}

TEST_CASE("SPE Padding, End, Timestamp", "[host][spe]")
{
	CHECK(one({0x00}) == Packet{.kind = PacketKind::pad, .header_size = 1});
	CHECK(one({0x01}) == Packet{.kind = PacketKind::end, .header_size = 1});
	const Packet ts = one({0x71, 0x36, 0x6c, 0x21, 0x2c, 0x09, 0x00, 0x00, 0x00});
	CHECK(ts.kind == PacketKind::timestamp);
	CHECK(ts.payload == 39395093558ULL);
	CHECK(ts.size() == 9);
	CHECK(one({0x71, 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01}).payload == 0x0123456789abcdefULL);
}

TEST_CASE("SPE Address packet: index, EL, NS, NSE, tags", "[host][spe]")
{
	SECTION("PC, short header 0b10110000")
	{
		// kernel PC at EL1, Non-secure: NS [63]=1, EL [62:61]=0b01
		const Packet p = one({0xb0, 0x56, 0x34, 0x12, 0x08, 0x00, 0x80, 0xff, 0xa0});
		CHECK(p.kind == PacketKind::address);
		CHECK(p.index == addr_pc);
		CHECK(p.size() == 9);
		CHECK(p.payload == 0xa0ff800008123456ULL);
		const InstAddress a = decode_inst_address(p.payload);
		CHECK(a == InstAddress{.address = 0xff800008123456ULL, .el = 1, .ns = true, .nse = false});
		CHECK(a.virtual_address() == 0xffff800008123456ULL);
		CHECK(describe(p) == "PC 0xff800008123456 el1 ns=1");
	}
	SECTION("user PC at EL0, Secure")
	{
		const Packet p = one({0xb0, 0x78, 0x56, 0x34, 0x12, 0xff, 0xff, 0x00, 0x00});
		const InstAddress a = decode_inst_address(p.payload);
		CHECK(a == InstAddress{.address = 0xffff12345678ULL, .el = 0, .ns = false, .nse = false});
		CHECK(a.virtual_address() == 0xffff12345678ULL);
	}
	SECTION("EL2 with NSE [60] (Realm/Root with FEAT_RME)")
	{
		// top byte NS=1 EL=0b10 NSE=1: 0b1101_0000
		const InstAddress a = decode_inst_address(one({0xb0, 0, 0x10, 0, 0, 0, 0, 0, 0xd0}).payload);
		CHECK(a == InstAddress{.address = 0x1000, .el = 2, .ns = true, .nse = true});
	}
	SECTION("branch target 0b10110001, previous branch target 0b10110100")
	{
		CHECK(one({0xb1, 0, 0, 0, 0, 0, 0, 0, 0x60}).index == addr_branch_target);
		const Packet pbt = one({0xb4, 0x40, 0, 0, 0, 0, 0, 0, 0xe0});
		CHECK(pbt.index == addr_prev_branch_target);
		CHECK(decode_inst_address(pbt.payload) == InstAddress{.address = 0x40, .el = 3, .ns = true});
		CHECK(describe(pbt) == "PBT 0x40 el3 ns=1");
	}
	SECTION("data virtual address 0b10110010: TAG [63:56]")
	{
		const Packet p = one({0xb2, 0xef, 0xbe, 0xad, 0xde, 0x00, 0x00, 0x00, 0xf2});
		CHECK(p.index == addr_data_va);
		const DataVirtAddress a = decode_data_va(p.payload);
		CHECK(a.address == 0xdeadbeef);
		CHECK(a.tag == 0xf2);
		CHECK(a.address_with_tag() == 0xf2000000deadbeefULL);
		CHECK(describe(p) == "VA 0xf2000000deadbeef");
	}
	SECTION("data physical address 0b10110011: NS [63], CH [62], PAT [59:56]")
	{
		const Packet p = one({0xb3, 0xc0, 0xeb, 0x24, 0xfb, 0x00, 0x00, 0x00, 0xca});
		CHECK(p.index == addr_data_pa);
		CHECK(decode_data_pa(p.payload) == DataPhysAddress{.address = 0xfb24ebc0, .pat = 0xa, .ch = true, .ns = true});
		CHECK(describe(p) == "PA 0xfb24ebc0 ns=1 ch=1 pat=a");
	}
	SECTION("extended header 0b001000ii: index[4:3] = ii")
	{
		const Packet p = one({0x21, 0xb2, 1, 0, 0, 0, 0, 0, 0, 0});
		CHECK(p.kind == PacketKind::address);
		CHECK(p.index == 10);	// 0b01 << 3 | 0b010
		CHECK(p.header_size == 2);
		CHECK(p.size() == 10);
		CHECK(p.payload == 1);
		CHECK(one({0x23, 0xb7, 0, 0, 0, 0, 0, 0, 0, 0}).index == 31);
		CHECK(one({0x20, 0xb0, 0, 0, 0, 0, 0, 0, 0, 0}).index == 0);
		CHECK(describe(one({0x21, 0xb2, 1, 0, 0, 0, 0, 0, 0, 0})) == "ADDR[10] 0x1");
	}
}

TEST_CASE("SPE Counter packet: total, issue, translation latency, other indexes", "[host][spe]")
{
	const Packet tot = one({0x98, 0x0c, 0x00});
	CHECK(tot == Packet{.kind = PacketKind::counter, .index = 0, .header_size = 1, .payload_size = 2, .payload = 12});
	CHECK(describe(tot) == "LAT 12 TOT");
	const Packet issue = one({0x99, 0x34, 0x12});
	CHECK(issue.index == counter_issue_latency);
	CHECK(issue.payload == 0x1234);
	CHECK(describe(issue) == "LAT 4660 ISSUE");
	const Packet xlat = one({0x9a, 0xff, 0xff});
	CHECK(xlat.index == counter_translation_latency);
	CHECK(xlat.payload == 0xffff);
	CHECK(describe(xlat) == "LAT 65535 XLAT");
	CHECK(one({0x9b, 1, 0}).index == 3);
	const Packet ext = one({0x22, 0x9f, 7, 0});
	CHECK(ext.kind == PacketKind::counter);
	CHECK(ext.index == 23);	// 0b10 << 3 | 0b111
	CHECK(ext.size() == 4);
	CHECK(describe(ext) == "COUNTER[23] 7");
}

TEST_CASE("SPE Events packet: sizes and every architected bit", "[host][spe]")
{
	const Packet e1 = one({0x42, 0x16});
	CHECK(e1.kind == PacketKind::events);
	CHECK(e1.payload_size == 1);
	CHECK(e1.payload == 0x16);
	CHECK(describe(e1) == "EV RETIRED L1D-ACCESS TLB-ACCESS");
	CHECK(one({0x52, 0x00, 0x01}).payload == 0x100);
	CHECK(one({0x62, 0x00, 0x00, 0x00, 0x02}).payload == 0x02000000);
	CHECK(one({0x72, 0, 0, 0, 0, 0, 0, 0, 0x80}).payload == 0x8000000000000000ULL);
	CHECK(one({0x72, 0, 0, 0, 0, 0, 0, 0, 0x80}).size() == 9);

	struct Bit {
		unsigned n;
		bool (Events::*get)() const noexcept;
	};
	const Bit bits[] = {
		{0, &Events::generated_exception}, {1, &Events::retired}, {2, &Events::l1d_access},
		{3, &Events::l1d_refill}, {4, &Events::tlb_access}, {5, &Events::tlb_walk},
		{6, &Events::not_taken}, {7, &Events::mispredicted}, {8, &Events::llc_access},
		{9, &Events::llc_miss}, {10, &Events::remote_access}, {11, &Events::alignment},
		{16, &Events::transactional}, {17, &Events::partial_predicate}, {18, &Events::empty_predicate},
		{19, &Events::l2d_access}, {20, &Events::l2d_miss}, {21, &Events::cache_data_modified},
		{22, &Events::recently_fetched}, {23, &Events::data_snooped}, {24, &Events::streaming_sve_mode},
		{25, &Events::smcu},
	};
	for (const Bit& b : bits) {
		INFO("bit " << b.n);
		const Events ev{std::uint64_t{1} << b.n};
		CHECK((ev.*b.get)());
		CHECK_FALSE(event_name(b.n).empty());
		for (const Bit& o : bits)
			if (o.n != b.n)
				CHECK_FALSE((ev.*o.get)());
	}
	CHECK(Events{0xF000}.implementation_defined() == 0xF);
	CHECK(Events{0x1000}.implementation_defined() == 1);
	CHECK(event_name(12) == "IMPDEF-12");
	CHECK(event_name(26).empty());
	CHECK(describe(one({0x62, 0x00, 0x00, 0x00, 0x07})) == "EV STREAMING-SVE SMCU E26");
	CHECK(describe(one({0x52, 0x80, 0x0f})) ==
	      "EV MISPRED LLC-ACCESS LLC-MISS REMOTE-ACCESS ALIGNMENT");
}

TEST_CASE("SPE Data Source and Context packets", "[host][spe]")
{
	const Packet ds = one({0x43, 0x00});
	CHECK(ds.kind == PacketKind::data_source);
	CHECK(ds.payload_size == 1);
	CHECK(describe(ds) == "DATA-SOURCE 0");
	CHECK(one({0x53, 0x0b, 0x00}).payload == 11);
	CHECK(one({0x63, 1, 2, 3, 4}).payload == 0x04030201);
	CHECK(one({0x73, 1, 0, 0, 0, 0, 0, 0, 0}).payload_size == 8);

	const Packet el1 = one({0x64, 0x78, 0x56, 0x34, 0x12});
	CHECK(el1 == Packet{.kind = PacketKind::context, .index = context_el1, .header_size = 1, .payload_size = 4,
			    .payload = 0x12345678});
	CHECK(describe(el1) == "CONTEXT 0x12345678 el1");
	const Packet el2 = one({0x65, 0x2a, 0, 0, 0});
	CHECK(el2.index == context_el2);
	CHECK(describe(el2) == "CONTEXT 0x2a el2");
}

TEST_CASE("SPE Operation Type: class other", "[host][spe]")
{
	CHECK(one({0x48, 0x00}) == Packet{.kind = PacketKind::op_type, .index = 0, .header_size = 1, .payload_size = 1});
	const auto op = [](std::uint8_t p) { return decode_op_type(0, p); };
	CHECK(op(0x00).subclass == OpSubclass::other);
	CHECK(op(0x00).flags == 0);
	CHECK(op(0x01).flags == op_flag::conditional);
	CHECK(op(0x02).flags == op_flag::fp);
	CHECK(op(0x04).flags == op_flag::simd);
	CHECK(describe(one({0x48, 0x07})) == "OTHER ASE FP COND-SELECT");
	CHECK(describe(one({0x48, 0x00})) == "OTHER INSN-OTHER");
	// SVE other: [7]=0 [3]=1 [0]=0, EVL [6:4], PRED [2], FP [1]
	CHECK(op(0x08).subclass == OpSubclass::sve_other);
	CHECK(op(0x08).sve_vector_bits() == 32);
	CHECK(op(0x38).sve_vector_bits() == 256);
	CHECK(op(0x0e).flags == (op_flag::fp | op_flag::predicated));
	CHECK(describe(one({0x48, 0x4e})) == "SVE-OTHER EVLEN 512 FP PRED");
	// SME other: [7]=1 [3]=1 [0]=0, ETS [6:4,2], FP [1]
	CHECK(op(0x88).subclass == OpSubclass::sme_other);
	CHECK(op(0x88).sme_tile_bits() == 128);
	CHECK(op(0x8c).sme_tile_bits() == 256);
	CHECK(op(0x98).sme_tile_bits() == 512);
	CHECK(op(0x8a).flags == op_flag::fp);
	CHECK(describe(one({0x48, 0x9e})) == "SME-OTHER ETS 1024 FP");
	CHECK(op(0x10).subclass == OpSubclass::reserved);
	CHECK(op(0x09).subclass == OpSubclass::reserved);
}

TEST_CASE("SPE Operation Type: loads, stores, atomics", "[host][spe]")
{
	const auto op = [](std::uint8_t p) { return decode_op_type(1, p); };
	CHECK(one({0x49, 0x00}).index == 1);
	CHECK(op(0x00).subclass == OpSubclass::gp);
	CHECK(op(0x00).is_load());
	CHECK(op(0x01).is_store());
	CHECK(op(0x04).subclass == OpSubclass::simd_fp);
	CHECK(op(0x05).is_store());
	// extended: [7:5]=0 [1]=1, AT [2], EXCL [3], AR [4]
	CHECK(op(0x02).subclass == OpSubclass::extended);
	CHECK(op(0x02).flags == 0);
	CHECK(op(0x06).flags == op_flag::atomic);
	CHECK(op(0x0a).flags == op_flag::exclusive);
	CHECK(op(0x12).flags == op_flag::acquire_release);
	CHECK(op(0x1f).flags == (op_flag::store | op_flag::atomic | op_flag::exclusive | op_flag::acquire_release));
	CHECK(describe(one({0x49, 0x1b})) == "ST EXTENDED EXCL AR");
	CHECK(describe(one({0x49, 0x07})) == "ST EXTENDED AT");
	CHECK(op(0x10).subclass == OpSubclass::unspecified);
	CHECK(op(0x14).subclass == OpSubclass::mte_tag);
	CHECK(op(0x15).is_store());
	CHECK(op(0x20).subclass == OpSubclass::memcpy);
	CHECK(op(0x21).subclass == OpSubclass::memcpy);
	CHECK(op(0x25).subclass == OpSubclass::memset);
	CHECK(op(0x25).is_store());
	CHECK(op(0x24).subclass == OpSubclass::reserved);
	CHECK(op(0x30).subclass == OpSubclass::nv_sysreg);
	// SVE/SME registers: [3]=1 [1]=0, SG [7], EVL [6:4], PRED [2]
	CHECK(op(0x08).subclass == OpSubclass::sve_sme);
	CHECK(op(0x08).sve_vector_bits() == 32);
	CHECK(op(0x39).sve_vector_bits() == 256);
	CHECK(op(0x39).is_store());
	CHECK(op(0x8c).flags == (op_flag::gather_scatter | op_flag::predicated));
	CHECK(describe(one({0x49, 0xad})) == "ST SVE-SME-REG EVLEN 128 PRED SG");
	// GCS: [7:3]=0b01000 [1]=0, COMM [2]
	CHECK(op(0x40).subclass == OpSubclass::gcs);
	CHECK(op(0x41).is_store());
	CHECK(op(0x45).flags == (op_flag::store | op_flag::gcs_common));
	CHECK(describe(one({0x49, 0x45})) == "ST GCS COMM");
	CHECK(describe(one({0x49, 0x00})) == "LD GP-REG");
	CHECK(describe(one({0x49, 0x80})) == "OP-TYPE class 1 0x80");
}

TEST_CASE("SPE Operation Type: branches", "[host][spe]")
{
	const auto op = [](std::uint8_t p) { return decode_op_type(2, p); };
	CHECK(op(0x00).subclass == OpSubclass::branch);
	CHECK(op(0x00).flags == 0);
	CHECK(op(0x01).flags == op_flag::conditional);
	CHECK(op(0x02).flags == op_flag::indirect);
	CHECK(op(0x04).flags == op_flag::gcs);
	CHECK(op(0x08).call_return == CallReturn::branch_with_link);
	CHECK(op(0x10).call_return == CallReturn::return_);
	CHECK(op(0x18).call_return == CallReturn::other);
	CHECK(describe(one({0x4a, 0x0a})) == "B IND CR-BL");	// BLR
	CHECK(describe(one({0x4a, 0x16})) == "B IND GCS CR-RET");
	CHECK(describe(one({0x4a, 0x01})) == "B COND");
	CHECK(decode_op_type(3, 0).cls == OpClass::reserved);
	CHECK(describe(one({0x4b, 0x00})) == "OP-TYPE class 3 0x00");
}

TEST_CASE("SPE Alignment and unknown packets", "[host][spe]")
{
	const Packet al = one({0x20, 0x00});
	CHECK(al.kind == PacketKind::alignment);
	CHECK(al.size() == 2);
	CHECK(describe(al) == "ALIGN 2");
	CHECK(describe(one({0x23, 0x00})) == "ALIGN 16");
	for (unsigned h : {0x02u, 0x10u, 0x24u, 0x41u, 0x80u, 0xa0u, 0xb8u, 0xffu}) {
		INFO("header " << h);
		const Packet p = one({h, 0, 0, 0, 0, 0, 0, 0, 0});
		CHECK(p.kind == PacketKind::unknown);
		CHECK(p.size() == 1);
	}
	// an extended header whose second byte no packet defines: one byte,
	// the next decoded as a header (as Linux's decoder steps)
	for (unsigned second : {0x42u, 0x71u, 0x01u, 0x48u, 0x02u, 0xffu}) {
		INFO("0x20 then " << second);
		const Packet bad_ext = one({0x20, second, 0, 0, 0, 0, 0, 0, 0, 0});
		CHECK(bad_ext.kind == PacketKind::unknown);
		CHECK(bad_ext.size() == 1);
	}
}

TEST_CASE("SPE truncated packets never read past the buffer", "[host][spe]")
{
	CHECK(one({0x71, 1, 2, 3}).kind == PacketKind::truncated);
	CHECK(one({0x71, 1, 2, 3}).size() == 4);
	CHECK(one({0xb0}).kind == PacketKind::truncated);
	CHECK(one({0x20}).kind == PacketKind::truncated);
	CHECK(one({0x21, 0xb0, 0, 0}).kind == PacketKind::truncated);
	CHECK(one({0x21, 0xb0, 0, 0}).size() == 4);
	CHECK(one({0x62, 1, 2, 3}).kind == PacketKind::truncated);
	const auto v = bytes({0x01});
	CHECK(decode_packet(v, 1).kind == PacketKind::truncated);
}

// ---------------------------------------------------------------- records

TEST_CASE("SPE record from real hardware", "[host][spe][record]")
{
	RecordReader rd{n1_record};
	Record r;
	REQUIRE(rd.next(r));
	CHECK(r.complete());
	CHECK(r.end == RecordEnd::timestamp);
	CHECK(r.offset == 0);
	CHECK(r.size == n1_record.size());
	CHECK(r.packets == 8);
	REQUIRE(r.op());
	CHECK(r.op()->subclass == OpSubclass::gp);
	CHECK(r.op()->is_load());
	CHECK(r.data_va()->address_with_tag() == 0xffff00000f293bc0ULL);
	CHECK(r.data_va()->virtual_address() == 0xffff00000f293bc0ULL);
	CHECK(*r.data_pa() == DataPhysAddress{.address = 0xfb24ebc0, .pat = 0, .ch = false, .ns = true});
	CHECK(r.translation_latency() == 0);
	CHECK(r.total_latency() == 0);
	CHECK_FALSE(r.issue_latency());
	CHECK(r.events()->retired());
	CHECK(r.events()->l1d_access());
	CHECK(r.events()->tlb_access());
	CHECK_FALSE(r.events()->l1d_refill());
	// the early hardware wrote 0xff in the PC's top byte: as the Arm ARM
	// reads it, NS=1 EL=3 NSE=1
	CHECK(*r.pc() == InstAddress{.address = 0xff00000815c400ULL, .el = 3, .ns = true, .nse = true});
	CHECK(r.pc()->virtual_address() == 0xffff00000815c400ULL);
	CHECK(r.timestamp() == 39395093558ULL);
	CHECK_FALSE(r.branch_target());
	CHECK_FALSE(r.context_el1());
	CHECK_FALSE(r.data_source());
	CHECK_FALSE(rd.next(r));
	CHECK(rd.stats() == Stats{.records = 1, .packets = 8});

	// one line per packet
	std::vector<std::string> lines;
	for (std::size_t off = 0; off < n1_record.size();) {
		const Packet p = decode_packet(n1_record, off);
		lines.push_back(format_packet(n1_record, p));
		off += p.size();
	}
	REQUIRE(lines.size() == 8);
	CHECK(lines[0] == "00000000:  49 00                          LD GP-REG");
	CHECK(lines[1] == "00000002:  b2 c0 3b 29 0f 00 00 ff ff     VA 0xffff00000f293bc0");
	CHECK(lines[2] == "0000000b:  b3 c0 eb 24 fb 00 00 00 80     PA 0xfb24ebc0 ns=1 ch=0 pat=0");
	CHECK(lines[3] == "00000014:  9a 00 00                       LAT 0 XLAT");
	CHECK(lines[4] == "00000017:  42 16                          EV RETIRED L1D-ACCESS TLB-ACCESS");
	CHECK(lines[5] == "00000019:  b0 00 c4 15 08 00 00 ff ff     PC 0xff00000815c400 el3 ns=1 nse=1");
	CHECK(lines[6] == "00000022:  98 00 00                       LAT 0 TOT");
	CHECK(lines[7] == "00000025:  71 36 6c 21 2c 09 00 00 00     TS 39395093558");
}

TEST_CASE("SPE records: End, padding, iteration", "[host][spe][record]")
{
	spe_enc::Buf b;
	b.pad(3).branch_record(0x400000, 0x400100).pad(5).load_record(0x400010, 0xffff0000aa00ULL, 1000).pad(64);
	b.raw({0x20, 0x00}).context(1, 77).end();
	RecordReader rd{b.span()};
	Record r;
	REQUIRE(rd.next(r));
	CHECK(r.offset == 3);
	CHECK(r.end == RecordEnd::end);
	CHECK(r.op()->subclass == OpSubclass::branch);
	CHECK(r.op()->has(op_flag::conditional));
	CHECK(r.pc()->address == 0x400000);
	CHECK(r.branch_target()->address == 0x400100);
	CHECK(r.total_latency() == 9);
	CHECK(r.events()->not_taken());
	CHECK_FALSE(r.timestamp());
	REQUIRE(rd.next(r));
	CHECK(r.end == RecordEnd::timestamp);
	CHECK(r.pc()->el == 1);
	CHECK(r.pc()->ns);
	CHECK(r.data_va()->address == 0xffff0000aa00ULL);
	CHECK(r.issue_latency() == 4);
	CHECK(r.context_el1() == 1234u);
	CHECK(r.data_source() == 0u);
	CHECK(r.timestamp() == 1000u);
	CHECK_FALSE(r.op()->has(op_flag::conditional));
	REQUIRE(rd.next(r));
	CHECK(r.context_el2() == 77u);
	CHECK_FALSE(r.context_el1());
	CHECK_FALSE(r.pc());
	CHECK_FALSE(rd.next(r));
	CHECK(rd.stats().records == 3);
	CHECK(rd.stats().padding_bytes == 3 + 5 + 64 + 2);
	CHECK(rd.stats().unknown_packets == 0);

	RecordReader again{b.span()};
	std::size_t n = 0;
	for (const Record& rec : again) {
		CHECK(rec.complete());
		++n;
	}
	CHECK(n == 3);
}

TEST_CASE("SPE unknown packet: listed with its offset, the record skipped to its end", "[host][spe][record]")
{
	spe_enc::Buf b;
	b.op(1, 0x01).raw({0x02, 0x55, 0x66}).address(0, 0x1234).end();	// unknown 0x02 at offset 2
	b.branch_record(0x500000, 0x500040);
	RecordReader rd{b.span()};
	Record r;
	REQUIRE(rd.next(r));
	CHECK_FALSE(r.complete());
	CHECK(r.end == RecordEnd::resync);
	REQUIRE(r.unknown_offsets().size() == 1);
	CHECK(r.unknown_offsets()[0] == 2);
	CHECK(r.op()->is_store());	// decoded before the unknown packet
	CHECK_FALSE(r.pc());		// skipped
	REQUIRE(rd.next(r));
	CHECK(r.complete());
	CHECK(r.pc()->address == 0x500000);
	CHECK_FALSE(rd.next(r));
	CHECK(rd.stats().unknown_packets == 1);
	CHECK(rd.stats().skipped_bytes == 2 + 9);

	SECTION("resync on a Timestamp")
	{
		spe_enc::Buf t;
		t.raw({0xff}).counter(0, 5).timestamp(42).branch_record(1, 2);
		RecordReader rt{t.span()};
		REQUIRE(rt.next(r));
		CHECK(r.end == RecordEnd::resync);
		CHECK(r.timestamp() == 42u);
		CHECK(r.size == 1 + 3 + 9);
		REQUIRE(rt.next(r));
		CHECK(r.complete());
	}
	SECTION("no End after it: skipped to the buffer's end")
	{
		spe_enc::Buf t;
		t.raw({0x20, 0x77, 0x10, 0x10});
		RecordReader rt{t.span()};
		REQUIRE(rt.next(r));
		CHECK(r.unknown_offsets()[0] == 0);
		CHECK(r.size == 4);
		CHECK_FALSE(rt.next(r));
	}
}

TEST_CASE("SPE truncated record at the buffer's end stops cleanly", "[host][spe][record]")
{
	spe_enc::Buf b;
	b.branch_record(0x400000, 0x400100).op(1, 0).address(0, 0x1234);
	const std::size_t whole = b.bytes.size();
	for (std::size_t cut = whole - 9 + 1; cut < whole; ++cut) {
		INFO("cut " << cut);
		std::vector<std::byte> v(b.bytes.begin(), b.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
		RecordReader rd{v};
		Record r;
		REQUIRE(rd.next(r));
		CHECK(r.complete());
		REQUIRE(rd.next(r));
		CHECK(r.end == RecordEnd::truncated);
		CHECK(r.op());
		CHECK_FALSE(r.pc());
		CHECK(r.offset + r.size == cut);
		CHECK_FALSE(rd.next(r));
		CHECK_FALSE(rd.next(r));
		CHECK(rd.stats().truncated == 1);
	}
	// between packets, without End: the record ends with the buffer
	std::vector<std::byte> v(b.bytes.begin(), b.bytes.begin() + static_cast<std::ptrdiff_t>(whole - 9));
	RecordReader rd{v};
	Record r;
	REQUIRE(rd.next(r));
	REQUIRE(rd.next(r));
	CHECK(r.end == RecordEnd::buffer_end);
	CHECK(rd.stats().truncated == 0);
	CHECK_FALSE(rd.next(r));

	RecordReader empty{std::span<const std::byte>{}};
	CHECK_FALSE(empty.next(r));
	const auto pads = bytes({0, 0, 0});
	RecordReader only_pad{pads};
	CHECK_FALSE(only_pad.next(r));
	CHECK(only_pad.stats().padding_bytes == 3);
}

// ---------------------------------------------------------------- fuzz

using spe_ref::check_buffer;
using spe_ref::same_fields;

TEST_CASE("SPE fuzz: random and mutated buffers never crash, loop or overread", "[host][spe][fuzz]")
{
	std::mt19937_64 rng{0x5be5eed};
	const auto t0 = std::chrono::steady_clock::now();
	std::size_t buffers = 0;

	// random bytes, and random bytes drawn from the defined headers
	static constexpr unsigned headers[] = {0x00, 0x01, 0x71, 0x42, 0x52, 0x62, 0x72, 0x43, 0x63,
					       0x64, 0x65, 0x48, 0x49, 0x4a, 0x4b, 0x20, 0x23, 0xb0,
					       0xb3, 0xb4, 0x98, 0x9a, 0x9f, 0x02};
	for (int i = 0; i < 10000; ++i) {
		std::vector<std::byte> v(rng() % 300);
		const bool header_biased = i % 2;
		for (auto& b : v)
			b = static_cast<std::byte>(header_biased && rng() % 3 == 0
							   ? headers[rng() % std::size(headers)]
							   : rng() & 0xFF);
		const char* err = check_buffer(v, i % 8 == 0);
		if (err)
			FAIL("random buffer " << i << ": " << err);
		++buffers;
	}

	// valid buffers, then mutated: flipped bits, random bytes, cut short
	spe_enc::Buf base;
	for (int i = 0; i < 8; ++i) {
		base.load_record(0x400000 + 4 * i, 0xffff0000 + 64 * i, 1000 + i);
		base.pad(i % 3).branch_record(0x400100 + i, 0x400200);
	}
	for (int i = 0; i < 8000; ++i) {
		std::vector<std::byte> v = base.bytes;
		const int mutations = 1 + static_cast<int>(rng() % 8);
		for (int m = 0; m < mutations; ++m) {
			const std::size_t at = rng() % v.size();
			switch (rng() % 4) {
			case 0: v[at] ^= static_cast<std::byte>(1u << (rng() % 8)); break;
			case 1: v[at] = static_cast<std::byte>(rng() & 0xFF); break;
			case 2: v[at] = static_cast<std::byte>(headers[rng() % std::size(headers)]); break;
			default: v.resize(at + 1); break;
			}
		}
		const char* err = check_buffer(v, i % 8 == 0);
		if (err)
			FAIL("mutated buffer " << i << ": " << err);
		++buffers;
	}
	const auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	INFO(buffers << " buffers in " << secs << " s");
	CHECK(buffers == 18000);
}

namespace {

// A random record of short headers (addresses and counters 0-7, or up to 31
// with extended headers when wide), in a random order, ended by End or a
// Timestamp, its payloads drawn again at every call: records of one layout.
struct RandomLayout {
	struct Item {
		unsigned kind;	// 0 op, 1 address, 2 counter, 3 events, 4 data source, 5 context
		unsigned index;
		unsigned bytes;	// events and data source
	};
	std::vector<Item> items;
	bool timestamp = false;
	int op_first = -1;	// the payload of an Operation Type packet first, as a sort of record has

	RandomLayout(std::mt19937_64& rng, bool wide)
	{
		if (rng() % 4 != 0)
			op_first = static_cast<int>(rng() & 0xFF);
		const std::size_t n = 1 + rng() % 7;
		items.reserve(n);
		for (std::size_t i = 0; i < n; ++i) {
			Item it{static_cast<unsigned>(rng() % 6), 0, 1u << (rng() % 4)};
			switch (it.kind) {
			case 0: it.index = rng() % 4; break;
			case 1:
			case 2: it.index = static_cast<unsigned>(rng() % (wide ? 32 : 8)); break;
			case 5: it.index = rng() % 4; break;
			default: break;
			}
			items.push_back(it);
		}
		timestamp = rng() % 2;
	}
	void emit(spe_enc::Buf& b, std::mt19937_64& rng) const
	{
		if (op_first >= 0)
			b.op(static_cast<unsigned>(op_first) & 3, static_cast<std::uint8_t>(op_first));
		for (const Item& it : items) {
			switch (it.kind) {
			case 0: b.op(it.index, static_cast<std::uint8_t>(rng())); break;
			case 1: b.address(it.index, rng()); break;
			case 2: b.counter(it.index, static_cast<std::uint16_t>(rng())); break;
			case 3: b.events(rng(), it.bytes); break;
			case 4: b.data_source(rng(), it.bytes); break;
			default: b.context(it.index, static_cast<std::uint32_t>(rng())); break;
			}
		}
		if (timestamp)
			b.timestamp(rng());
		else
			b.end();
	}
};

} // namespace

TEST_CASE("SPE records of a known layout read from the buffer and records kept in the Record agree, field by field",
	  "[host][spe][record][fuzz]")
{
	// Each layout's first record takes the slow path (its values kept in
	// the Record), the next ones the layout (read from the buffer): every
	// accessor of both must equal the packet-at-a-time reference's.
	std::mt19937_64 rng{0x1a2b};
	std::size_t in_buffer = 0, kept = 0;
	for (int round = 0; round < 300; ++round) {
		std::vector<RandomLayout> layouts;
		layouts.reserve(6);
		for (int i = 0; i < 6; ++i)
			layouts.emplace_back(rng, round % 4 == 0);
		spe_enc::Buf b;
		for (int i = 0; i < 200; ++i) {
			layouts[rng() % layouts.size()].emit(b, rng);
			b.pad(rng() % 3 ? 0 : static_cast<unsigned>(rng() % 10));
		}
		const std::vector<std::byte> v = b.bytes;	// exact size: ASan sees an overread
		const char* err = check_buffer(v, false);
		if (err)
			FAIL("round " << round << ": " << err);
		RecordReader rd{v};
		Record r;
		while (rd.next(r))
			++(r.in_buffer() ? in_buffer : kept);
	}
	INFO(in_buffer << " records read from the buffer, " << kept << " kept in the Record");
	CHECK(in_buffer > 10000);
	CHECK(kept > 1000);
}

TEST_CASE("SPE Record copies and set(): a record stays valid without its reader", "[host][spe][record]")
{
	spe_enc::Buf b;
	for (int i = 0; i < 4; ++i)
		b.load_record(0x400000 + 4 * i, 0xffff0000 + 64 * i, 1000 + i);
	b.pad(80);	// room for the fast path's window after the last record
	const std::vector<std::byte> v = b.bytes;

	Record first, last;
	{
		RecordReader rd{v};
		Record r;
		REQUIRE(rd.next(r));
		CHECK_FALSE(r.in_buffer());	// the first of its layout: the slow path
		first = r;
		while (rd.next(r)) {
			CHECK(r.in_buffer());
			last = r;
		}
	}	// the reader and r gone: the copies read the buffer, or their own values
	CHECK(first.pc()->address == 0x400000);
	CHECK(first.data_va()->address == 0xffff0000);
	CHECK(first.timestamp() == 1000u);
	CHECK(last.in_buffer());
	CHECK(last.pc()->address == 0x40000c);
	CHECK(last.data_va()->address == 0xffff00c0);
	CHECK(last.total_latency() == 27);
	CHECK(last.events()->bits == 0x16);
	CHECK(last.context_el1() == 1234u);
	CHECK(last.op()->is_load());
	CHECK(last.timestamp() == 1003u);

	const Record copy = first;	// kept values are copied, not pointed at
	first.set(Record::slot_address + addr_pc, 0x1234);
	CHECK(copy.pc()->address == 0x400000);
	CHECK(first.pc()->address == 0x1234);

	// set() on a record read from the buffer keeps its values, then the new one
	Record changed = last;
	changed.set(Record::slot_counter + 9, 77);
	CHECK_FALSE(changed.in_buffer());
	CHECK(changed.counter(9) == 77);
	CHECK(changed.counter_mask() == (last.counter_mask() | 1u << 9));
	CHECK(same_fields(changed, [&] {
		Record e = last;
		e.set(Record::slot_counter + 9, 77);
		return e;
	}()));
	CHECK(changed.pc() == last.pc());
	CHECK(changed.events() == last.events());
	CHECK(changed.data_source() == last.data_source());
	CHECK(changed.timestamp() == last.timestamp());
	CHECK(changed.op() == last.op());
	CHECK_FALSE(changed.counter(8));
	CHECK(last.in_buffer());
	CHECK_FALSE(last.counter(9));
}

TEST_CASE("SPE data sources: encodings by MIDR (Linux perf's table) and names", "[host][spe]")
{
	using amupmu::spe_data_source_encoding, amupmu::spe_data_source_name, amupmu::SpeDataSource,
		amupmu::SpeDataSourceEncoding;
	CHECK(spe_data_source_encoding(0x413FD0C1) == SpeDataSourceEncoding::common);
	CHECK(spe_data_source_encoding(0x410FD4F0) == SpeDataSourceEncoding::common);	// Neoverse V2
	CHECK(spe_data_source_encoding(0x411FD400) == SpeDataSourceEncoding::common);	// Neoverse V1 r1p0
	CHECK(spe_data_source_encoding(0x410FD490) == SpeDataSourceEncoding::common);	// Neoverse N2
	CHECK(spe_data_source_encoding(0x410FD890) == SpeDataSourceEncoding::common);	// Cortex-A720AE
	CHECK(spe_data_source_encoding(0xC00FAC40) == SpeDataSourceEncoding::ampereone);
	// not in perf's list: Cortex-X2, Cortex-A710, another implementer's part D0C
	CHECK(spe_data_source_encoding(0x410FD480) == SpeDataSourceEncoding::unknown);
	CHECK(spe_data_source_encoding(0x410FD470) == SpeDataSourceEncoding::unknown);
	CHECK(spe_data_source_encoding(0x420FD0C0) == SpeDataSourceEncoding::unknown);
	CHECK(spe_data_source_encoding(0x000F0510) == SpeDataSourceEncoding::unknown);

	using E = SpeDataSourceEncoding;
	const std::pair<std::uint64_t, std::string_view> common[] = {
		{0x0, "L1D"}, {0x8, "L2"}, {0x9, "PEER-CORE"}, {0xa, "LOCAL-CLUSTER"}, {0xb, "SYS-CACHE"},
		{0xc, "PEER-CLUSTER"}, {0xd, "REMOTE"}, {0xe, "DRAM"}, {0x1, ""}, {0xf, ""}};
	for (const auto& [code, name] : common)
		CHECK(spe_data_source_name(E::common, code) == name);
	CHECK(spe_data_source_name(E::ampereone, 0x3) == "SLC");
	CHECK(spe_data_source_name(E::ampereone, 0x8) == "L1D");
	CHECK(spe_data_source_name(E::ampereone, 0xe).empty());
	CHECK(spe_data_source_name(E::unknown, 0x0).empty());
	CHECK(SpeDataSource{E::common, 0xb}.label() == "SYS-CACHE (0xb)");
	CHECK(SpeDataSource{E::unknown, 0xb}.label() == "0xb");
}
