// SPDX-License-Identifier: GPL-2.0
//
// The mock SPE model's pure parts (kernel/amu_pmu_drv/amupmu_spe_model.h,
// the code the module runs) on the host: golden bytes per packet type from
// the Arm ARM's SPE sample record specification (DDI 0487, D10; the same
// encodings as Linux's tools/perf arm-spe-pkt-decoder), the record layout
// and its 64-byte padding, and the truth tables of SPEFilterByType (with and
// without FEAT_SPE_EFT), SPEFilterByEvent, SPEFilterByLatency and
// SPEMultiAccessSample, and the interval counter's reload.

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

namespace {
using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
#include "amupmu_spe_model.h"

using Bytes = std::vector<u8>;

template <typename F>
Bytes packet(F&& f)
{
	u8 buf[AMUPMU_SPE_REC_MAX] = {};
	const unsigned int n = f(buf);
	return Bytes(buf, buf + n);
}

constexpr u32 B = AMUPMU_SPE_TYPE_B, LD = AMUPMU_SPE_TYPE_LD, ST = AMUPMU_SPE_TYPE_ST;
constexpr u32 FP = AMUPMU_SPE_TYPE_FP, SIMD = AMUPMU_SPE_TYPE_SIMD;

// SPEFilterByType written bit by bit from the PMSFCR_EL1 field descriptions
// (TYPE/TYPEm per type: 1/0 OR, 1/1 AND, 0/1 AND NOT, 0/0 ignored), an
// independent statement of the same rule.
bool type_reference(bool ft, bool eft, u32 ctrl, u32 mask, u32 flags)
{
	if (!ft)
		return true;
	bool any_or = false, or_hit = false;
	for (unsigned int i = 0; i < 5; i++) {
		const bool c = ctrl >> i & 1, m = eft && (mask >> i & 1), f = flags >> i & 1;
		if (!eft && i >= 3)
			continue;	// FP, SIMD: RES0 without FEAT_SPE_EFT
		if (c && !m) {
			any_or = true;
			or_hit = or_hit || f;
		} else if (m && c != f) {
			// AND (c: the type must be there) or AND NOT (!c: must not)
			return false;
		}
	}
	return !any_or || or_hit;
}
} // namespace

TEST_CASE("SPE packets: golden bytes (Arm ARM D10 sample record specification)",
	  "[host][spe_model]")
{
	// PAD 0b00000000, END 0b00000001
	CHECK(AMUPMU_SPE_HDR_PAD == 0x00);
	CHECK(AMUPMU_SPE_HDR_END == 0x01);
	// address, PC (index 0): VA[55:0], EL [62:61], NS [63]
	CHECK(packet([](u8* b) {
		      return amupmu_spe_pkt_address(b, AMUPMU_SPE_ADDR_PC,
						    amupmu_spe_addr_insn(0xffff800008123456ULL, 1));
	      }) == Bytes{0xb0, 0x56, 0x34, 0x12, 0x08, 0x00, 0x80, 0xff, 0xa0});
	CHECK(packet([](u8* b) {
		      return amupmu_spe_pkt_address(b, AMUPMU_SPE_ADDR_PC,
						    amupmu_spe_addr_insn(0x0000aaaabbbbccccULL, 0));
	      }) == Bytes{0xb0, 0xcc, 0xcc, 0xbb, 0xbb, 0xaa, 0xaa, 0x00, 0x80});
	// EL2 (a VHE host's kernel): 0b10 in [62:61]
	CHECK(amupmu_spe_addr_insn(0xffff800000001000ULL, 2) == 0xc0ff800000001000ULL);
	// branch target (index 1), same payload
	CHECK(packet([](u8* b) {
		      return amupmu_spe_pkt_address(b, AMUPMU_SPE_ADDR_BRANCH,
						    amupmu_spe_addr_insn(0x400000, 0));
	      }) == Bytes{0xb1, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x80});
	// data virtual address (index 2): the whole VA, top byte in [63:56]
	CHECK(packet([](u8* b) {
		      return amupmu_spe_pkt_address(b, AMUPMU_SPE_ADDR_DATA_VA, 0xffff000012345678ULL);
	      }) == Bytes{0xb2, 0x78, 0x56, 0x34, 0x12, 0x00, 0x00, 0xff, 0xff});
	// data physical address (index 3): PA[55:0], NS [63]
	CHECK(packet([](u8* b) {
		      return amupmu_spe_pkt_address(b, AMUPMU_SPE_ADDR_DATA_PA,
						    amupmu_spe_addr_pa(0x80001040));
	      }) == Bytes{0xb3, 0x40, 0x10, 0x00, 0x80, 0x00, 0x00, 0x00, 0x80});
	// counters 0b10011iii, 2-byte payload: total 0, issue 1, translation 2
	CHECK(packet([](u8* b) { return amupmu_spe_pkt_counter(b, AMUPMU_SPE_CNT_TOTAL, 300); }) ==
	      Bytes{0x98, 0x2c, 0x01});
	CHECK(packet([](u8* b) { return amupmu_spe_pkt_counter(b, AMUPMU_SPE_CNT_ISSUE, 5); }) ==
	      Bytes{0x99, 0x05, 0x00});
	CHECK(packet([](u8* b) {
		      return amupmu_spe_pkt_counter(b, AMUPMU_SPE_CNT_XLAT,
						    amupmu_spe_saturate(0x1234, 0xfff));
	      }) == Bytes{0x9a, 0xff, 0x0f});
	// events 0b01ss0010, the smallest payload that holds the bits
	CHECK(packet([](u8* b) { return amupmu_spe_pkt_events(b, AMUPMU_SPE_EV_RETIRED); }) ==
	      Bytes{0x42, 0x02});
	CHECK(packet([](u8* b) {
		      return amupmu_spe_pkt_events(b, AMUPMU_SPE_EV_RETIRED | AMUPMU_SPE_EV_L1D_ACCESS |
							  AMUPMU_SPE_EV_LLC_ACCESS);
	      }) == Bytes{0x52, 0x06, 0x01});
	CHECK(packet([](u8* b) {
		      return amupmu_spe_pkt_events(b, AMUPMU_SPE_EV_RETIRED | AMUPMU_SPE_EV_L1D_ACCESS |
							  AMUPMU_SPE_EV_L2D_ACCESS);
	      }) == Bytes{0x62, 0x06, 0x00, 0x08, 0x00});
	// data source 0b01ss0011, 2 bytes
	CHECK(packet([](u8* b) { return amupmu_spe_pkt_data_source(b, 0x000e); }) ==
	      Bytes{0x53, 0x0e, 0x00});
	// operation type 0b010010cc: load, store, atomic (extended: AT, bit 1), branch, other
	CHECK(packet([](u8* b) { return amupmu_spe_pkt_op_type(b, AMUPMU_SPE_OP_LDST, 0); }) ==
	      Bytes{0x49, 0x00});
	CHECK(packet([](u8* b) {
		      return amupmu_spe_pkt_op_type(b, AMUPMU_SPE_OP_LDST, AMUPMU_SPE_OP_LDST_ST);
	      }) == Bytes{0x49, 0x01});
	CHECK(packet([](u8* b) {
		      return amupmu_spe_pkt_op_type(b, AMUPMU_SPE_OP_LDST,
						    AMUPMU_SPE_OP_LDST_EXT | AMUPMU_SPE_OP_LDST_AT |
							    AMUPMU_SPE_OP_LDST_ST);
	      }) == Bytes{0x49, 0x07});
	CHECK(packet([](u8* b) {
		      return amupmu_spe_pkt_op_type(b, AMUPMU_SPE_OP_BRANCH, AMUPMU_SPE_OP_BR_COND);
	      }) == Bytes{0x4a, 0x01});
	CHECK(packet([](u8* b) {
		      return amupmu_spe_pkt_op_type(b, AMUPMU_SPE_OP_OTHER,
						    AMUPMU_SPE_OP_OTHER_FP | AMUPMU_SPE_OP_OTHER_ASE);
	      }) == Bytes{0x48, 0x06});
	// context 0b011001ii, 4 bytes: CONTEXTIDR_EL1 (0), CONTEXTIDR_EL2 (1)
	CHECK(packet([](u8* b) { return amupmu_spe_pkt_context(b, false, 1234); }) ==
	      Bytes{0x64, 0xd2, 0x04, 0x00, 0x00});
	CHECK(packet([](u8* b) { return amupmu_spe_pkt_context(b, true, 1234); }) ==
	      Bytes{0x65, 0xd2, 0x04, 0x00, 0x00});
	// timestamp 0b01110001, 8 bytes
	CHECK(packet([](u8* b) { return amupmu_spe_pkt_timestamp(b, 0x0123456789abcdefULL); }) ==
	      Bytes{0x71, 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01});
}

TEST_CASE("SPE records: layout, the end packet, at most 64 bytes", "[host][spe_model]")
{
	amupmu_spe_op load{};
	load.pc = 0xffff800008123456ULL;
	load.va = 0xffff000012345678ULL;
	load.pa = 0x80001040;
	load.ts = 0x0123456789abcdefULL;
	load.events = AMUPMU_SPE_EV_RETIRED | AMUPMU_SPE_EV_L1D_ACCESS | AMUPMU_SPE_EV_L2D_ACCESS;
	load.total = 5000;	// saturates at 12 bits
	load.issue = 3;
	load.xlat = 2;
	load.context = 1234;
	load.data_source = 0x8;
	load.el = 1;
	load.op_class = AMUPMU_SPE_OP_LDST;
	load.subclass = 0;
	amupmu_spe_rec_cfg all{true, true, false, true, true, 0xfff};

	const Bytes full = packet([&](u8* b) { return amupmu_spe_record(b, &load, &all); });
	const Bytes golden{
		0xb0, 0x56, 0x34, 0x12, 0x08, 0x00, 0x80, 0xff, 0xa0,	// PC, EL1, NS
		0x49, 0x00,						// load, GP register
		0x62, 0x06, 0x00, 0x08, 0x00,				// retired, L1D, L2D access
		0xb2, 0x78, 0x56, 0x34, 0x12, 0x00, 0x00, 0xff, 0xff,	// data VA
		0xb3, 0x40, 0x10, 0x00, 0x80, 0x00, 0x00, 0x00, 0x80,	// data PA, NS
		0x53, 0x08, 0x00,					// data source
		0x98, 0xff, 0x0f,					// total, saturated
		0x99, 0x03, 0x00,					// issue
		0x9a, 0x02, 0x00,					// translation
		0x64, 0xd2, 0x04, 0x00, 0x00,				// CONTEXTIDR_EL1
		0x71, 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01,	// timestamp ends it
	};
	CHECK(full == golden);
	CHECK(full.size() == 60);
	CHECK(full.size() <= AMUPMU_SPE_REC_MAX);

	// TS=0: END ends the record; no PA, no context; a store has no data source
	amupmu_spe_rec_cfg none{false, false, false, false, true, 0xffff};
	amupmu_spe_op store = load;
	store.subclass = AMUPMU_SPE_OP_LDST_ST;
	const Bytes st = packet([&](u8* b) { return amupmu_spe_record(b, &store, &none); });
	CHECK(st.size() == 9 + 2 + 5 + 9 + 9 + 1);
	CHECK(st.back() == AMUPMU_SPE_HDR_END);
	CHECK(st[9] == 0x49);
	CHECK(st[10] == 0x01);
	// 16-bit counters do not saturate at 5000
	CHECK(st[25] == 0x98);
	CHECK(st[26] == 0x88);
	CHECK(st[27] == 0x13);

	// a branch: PC, target, no data address, no translation latency
	amupmu_spe_op br{};
	br.pc = 0x400000;
	br.target = 0x400100;
	br.el = 0;
	br.op_class = AMUPMU_SPE_OP_BRANCH;
	br.subclass = AMUPMU_SPE_OP_BR_COND;
	br.events = AMUPMU_SPE_EV_RETIRED | AMUPMU_SPE_EV_NOT_TAKEN;
	br.total = 7;
	br.issue = 1;
	br.ts = 0x0123456789abcdefULL;
	const Bytes b = packet([&](u8* p) { return amupmu_spe_record(p, &br, &all); });
	CHECK(b == Bytes{0xb0, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x80, 0xb1, 0x00, 0x01,
			 0x40, 0x00, 0x00, 0x00, 0x00, 0x80, 0x4a, 0x01, 0x42, 0x42, 0x98, 0x07,
			 0x00, 0x99, 0x01, 0x00, 0x64, 0x00, 0x00, 0x00, 0x00, 0x71, 0xef, 0xcd,
			 0xab, 0x89, 0x67, 0x45, 0x23, 0x01});
}

TEST_CASE("SPE records: padding keeps every record within a 64-byte block",
	  "[host][spe_model]")
{
	CHECK(amupmu_spe_pad_before(0x1000, 60) == 0);
	CHECK(amupmu_spe_pad_before(0x1004, 60) == 0);
	CHECK(amupmu_spe_pad_before(0x1005, 60) == 59);
	CHECK(amupmu_spe_pad_before(0x1010, 60) == 48);
	CHECK(amupmu_spe_pad_before(0x1010, 48) == 0);
	CHECK(amupmu_spe_pad_after(0x103c) == 4);
	CHECK(amupmu_spe_pad_after(0x1040) == 0);
	CHECK(amupmu_spe_pad_after(0x1001) == 63);
	for (u64 ptr = 0x2000; ptr < 0x2080; ptr++)
		for (unsigned int len = 1; len <= AMUPMU_SPE_REC_MAX; len++) {
			const u64 start = ptr + amupmu_spe_pad_before(ptr, len);
			const u64 end = start + len;
			CAPTURE(ptr, len);
			REQUIRE(start / 64 == (end - 1) / 64);
			REQUIRE((end + amupmu_spe_pad_after(end)) % 64 == 0);
		}
}

TEST_CASE("SPEFilterByType: truth table without FEAT_SPE_EFT (OR of B, LD, ST)",
	  "[host][spe_model]")
{
	struct Row {
		bool ft;
		u32 ctrl, flags;
		bool pass;
	};
	const Row rows[] = {
		{false, B, LD, true},	     {false, 0, B, true},	// FT=0: no type filter
		{true, B, B, true},	     {true, B, LD, false},	 {true, B, FP, false},
		{true, LD, LD, true},	     {true, LD, ST, false},	 {true, ST, ST, true},
		{true, LD | ST, LD, true},   {true, LD | ST, ST, true},	 {true, LD | ST, B, false},
		{true, B | LD | ST, 0, false}, {true, B | LD, LD | FP, true},
		// FP, SIMD are RES0 without EFT: FT with only them selects no type
		// (CONSTRAINED UNPREDICTABLE, refused by the driver): the model passes all
		{true, FP, LD, true},	     {true, SIMD | LD, SIMD, false},
	};
	for (const Row& r : rows) {
		CAPTURE(r.ft, r.ctrl, r.flags);
		// TYPEm is ignored without EFT
		CHECK(amupmu_spe_filter_type(r.ft, false, r.ctrl, 0, r.flags) == r.pass);
		CHECK(amupmu_spe_filter_type(r.ft, false, r.ctrl, 0x1f, r.flags) == r.pass);
	}
}

TEST_CASE("SPEFilterByType: truth table with FEAT_SPE_EFT (TYPEm: OR, AND, AND NOT)",
	  "[host][spe_model]")
{
	struct Row {
		u32 ctrl, mask, flags;
		bool pass;
	};
	const Row rows[] = {
		// OR group only, as without EFT
		{B | LD, 0, B, true}, {B | LD, 0, LD, true}, {B | LD, 0, ST, false},
		{FP, 0, FP, true}, {FP, 0, SIMD, false}, {FP | SIMD, 0, SIMD, true},
		// AND: FP must be there
		{FP, FP, FP, true}, {FP, FP, FP | SIMD, true}, {FP, FP, SIMD, false},
		{FP, FP, LD, false},
		// AND of two
		{FP | SIMD, FP | SIMD, FP | SIMD, true}, {FP | SIMD, FP | SIMD, FP, false},
		// AND NOT: no SIMD
		{0, SIMD, SIMD, false}, {0, SIMD, FP, true}, {0, SIMD, LD, true},
		{0, SIMD, FP | SIMD, false}, {0, SIMD, 0, true},
		// (LD OR ST) AND SIMD
		{LD | ST | SIMD, SIMD, LD | SIMD, true}, {LD | ST | SIMD, SIMD, ST | SIMD, true},
		{LD | ST | SIMD, SIMD, LD, false}, {LD | ST | SIMD, SIMD, SIMD, false},
		// (LD OR ST) AND NOT FP
		{LD | ST, FP, LD, true}, {LD | ST, FP, LD | FP, false}, {LD | ST, FP, B, false},
		// B AND NOT (FP OR SIMD) with B in the AND group
		{B, B | FP | SIMD, B, true}, {B, B | FP | SIMD, B | SIMD, false},
		{B, B | FP | SIMD, LD, false},
		// no type selected, no mask: everything
		{0, 0, LD, true}, {0, 0, 0, true},
	};
	for (const Row& r : rows) {
		CAPTURE(r.ctrl, r.mask, r.flags);
		CHECK(amupmu_spe_filter_type(true, true, r.ctrl, r.mask, r.flags) == r.pass);
		CHECK(type_reference(true, true, r.ctrl, r.mask, r.flags) == r.pass);
	}
	// every combination against the bit-by-bit statement of the rule
	for (u32 ctrl = 0; ctrl < 32; ctrl++)
		for (u32 mask = 0; mask < 32; mask++)
			for (u32 flags = 0; flags < 32; flags++)
				for (int eft = 0; eft < 2; eft++) {
					CAPTURE(ctrl, mask, flags, eft);
					REQUIRE(amupmu_spe_filter_type(true, eft, ctrl, mask, flags) ==
						type_reference(true, eft, ctrl, mask, flags));
				}
}

TEST_CASE("SPEFilterByEvent and SPEFilterByLatency: truth tables", "[host][spe_model]")
{
	const u64 ret = AMUPMU_SPE_EV_RETIRED, refill = AMUPMU_SPE_EV_L1D_REFILL;
	const u64 walk = AMUPMU_SPE_EV_TLB_WALK, mis = AMUPMU_SPE_EV_MISPRED;
	struct Row {
		bool fe;
		u64 evfr;
		bool fne;
		u64 nevfr, events;
		bool pass;
	};
	const Row rows[] = {
		{false, ret | refill, false, mis, 0, true},	     // neither enabled
		{true, ret | refill, false, 0, ret, false},	     // FE: all of PMSEVFR
		{true, ret | refill, false, 0, ret | refill, true},
		{true, ret | refill, false, 0, ret | refill | walk, true},
		{true, 0, false, 0, 0, true},			     // FE with nothing set
		{false, 0, true, mis, ret | mis, false},	     // FnE: none of PMSNEVFR
		{false, 0, true, mis | walk, ret, true},
		{false, 0, true, mis | walk, walk, false},
		{true, ret, true, mis, ret, true},		     // both
		{true, ret, true, mis, ret | mis, false},
		{true, ret, true, mis, refill, false},
		{false, 0, false, mis, mis, true},		     // PMSNEVFR without FnE
		{true, 1ULL << 48, false, 0, 1ULL << 48, true},	     // IMPLEMENTATION DEFINED bits
	};
	for (const Row& r : rows) {
		CAPTURE(r.fe, r.evfr, r.fne, r.nevfr, r.events);
		CHECK(amupmu_spe_filter_event(r.fe, r.evfr, r.fne, r.nevfr, r.events) == r.pass);
	}

	CHECK(amupmu_spe_filter_latency(false, 100, 0));
	CHECK_FALSE(amupmu_spe_filter_latency(true, 100, 99));
	CHECK(amupmu_spe_filter_latency(true, 100, 100));
	CHECK(amupmu_spe_filter_latency(true, 100, 4000));
	// the comparison is with the saturated counter
	CHECK(amupmu_spe_filter_latency(true, 0xfff, amupmu_spe_saturate(100000, 0xfff)));
	CHECK_FALSE(amupmu_spe_filter_latency(true, 0x1000, amupmu_spe_saturate(100000, 0xfff)));
	CHECK(amupmu_spe_saturate(0xfff, 0xfff) == 0xfff);
	CHECK(amupmu_spe_saturate(0x1000, 0xfff) == 0xfff);
	CHECK(amupmu_spe_saturate(0x1000, 0xffff) == 0x1000);
}

TEST_CASE("SPEMultiAccessSample: a load-and-store operation samples one access",
	  "[host][spe_model]")
{
	CHECK(amupmu_spe_multi_access(LD | ST, false) == LD);
	CHECK(amupmu_spe_multi_access(LD | ST, true) == ST);
	CHECK(amupmu_spe_multi_access(LD | ST | SIMD, true) == (ST | SIMD));
	CHECK(amupmu_spe_multi_access(LD, true) == LD);
	CHECK(amupmu_spe_multi_access(ST, false) == ST);
	CHECK(amupmu_spe_multi_access(B, true) == B);
	// then the type filter sees only the access sampled
	CHECK_FALSE(amupmu_spe_filter_type(true, false, ST, 0, amupmu_spe_multi_access(LD | ST, false)));
	CHECK(amupmu_spe_filter_type(true, false, ST, 0, amupmu_spe_multi_access(LD | ST, true)));
	CHECK(amupmu_spe_filter_type(true, false, LD, 0, amupmu_spe_multi_access(LD | ST, false)));
	CHECK_FALSE(amupmu_spe_filter_type(true, false, LD, 0, amupmu_spe_multi_access(LD | ST, true)));
}

TEST_CASE("SPE interval counter: reload with PMSIRR_EL1.RND, PMSIDR_EL1.Interval",
	  "[host][spe_model]")
{
	CHECK(amupmu_spe_interval(0x100, false, 0xff, 256) == 0x100);
	CHECK(amupmu_spe_interval(0x1000, false, 0x55, 256) == 0x1000);
	CHECK(amupmu_spe_interval(0x1000, true, 0x1ab, 256) == 0x10ab);
	CHECK(amupmu_spe_interval(0x1000, true, 0, 256) == 0x1000);
	CHECK(amupmu_spe_interval(0x10ff, false, 0, 256) == 0x1000);	// low 8 bits RES0
	// below the CPU's minimum: CONSTRAINED UNPREDICTABLE, the model takes the minimum
	CHECK(amupmu_spe_interval(0, false, 0, 256) == 256);
	CHECK(amupmu_spe_interval(0x200, true, 0x7, 1024) == 1031);
	for (u32 r = 0; r < 1024; r++) {
		const u32 v = amupmu_spe_interval(0x4000, true, r, 256);
		REQUIRE(v >= 0x4000);
		REQUIRE(v <= 0x4000 + 255);
	}
	// the Arm ARM's PMSIDR_EL1.Interval encoding; 0b0001 and 0b1001 up are reserved
	const u32 table[] = {256, 4096, 512, 768, 1024, 1536, 2048, 3072, 4096, 4096, 4096};
	for (unsigned int i = 0; i < 11; i++)
		CHECK(amupmu_spe_min_interval_ops(i) == table[i]);
}
