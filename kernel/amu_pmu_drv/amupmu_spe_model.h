/* SPDX-License-Identifier: GPL-2.0 */
/*
 * amupmu: the pure parts of the mock SPE model (amupmu_mock_spe.c), as
 * functions of their arguments: the sample record encoding and the sample
 * filters of the Arm ARM (DDI 0487, chapter D10 "The Statistical Profiling
 * Extension", the SPE sample record specification and the SPEFilterByType,
 * SPEFilterByEvent, SPEFilterByLatency and SPEMultiAccessSample
 * pseudocode). The module uses them, and the host tests
 * (lib/libamupmu/tests/host/test_spe_model.cpp) check the same code against
 * golden bytes and truth tables.
 *
 * Whoever includes it provides u8, u16, u32, u64 and bool (the kernel's
 * linux/types.h, or the host test's typedefs). Register fields are passed
 * in already extracted (FIELD_GET() of the kernel's PMSFCR_EL1_TYPE ...):
 * only the packet format, which no kernel header has, is defined here.
 */
#ifndef AMUPMU_SPE_MODEL_H
#define AMUPMU_SPE_MODEL_H

/*
 * Packet headers (short format, one byte). Bits [5:4] of a header that
 * carries a payload give its size, 1 << sz bytes:
 *   PAD 0b00000000, END 0b00000001, Timestamp 0b01110001 (8 bytes),
 *   Events 0b01ss0010, Data Source 0b01ss0011,
 *   Context 0b011001ii (4 bytes, ii: 0 CONTEXTIDR_EL1, 1 CONTEXTIDR_EL2),
 *   Operation Type 0b010010cc (1 byte, cc: the class),
 *   Address 0b10110iii (8 bytes, iii: the index below),
 *   Counter 0b10011iii (2 bytes, iii: the index below).
 */
#define AMUPMU_SPE_HDR_PAD		0x00
#define AMUPMU_SPE_HDR_END		0x01
#define AMUPMU_SPE_HDR_TIMESTAMP	0x71
#define AMUPMU_SPE_HDR_EVENTS		0x42
#define AMUPMU_SPE_HDR_DATA_SOURCE	0x43
#define AMUPMU_SPE_HDR_OP_TYPE		0x48
#define AMUPMU_SPE_HDR_CONTEXT		0x64
#define AMUPMU_SPE_HDR_COUNTER		0x98
#define AMUPMU_SPE_HDR_ADDRESS		0xb0
#define AMUPMU_SPE_HDR_SZ_SHIFT		4

/* Address packet indices */
#define AMUPMU_SPE_ADDR_PC		0	/* instruction virtual address */
#define AMUPMU_SPE_ADDR_BRANCH		1	/* branch target address */
#define AMUPMU_SPE_ADDR_DATA_VA		2
#define AMUPMU_SPE_ADDR_DATA_PA		3

/*
 * Address payloads: PC and branch target, VA[55:0] with EL [62:61] and
 * NS [63]; data virtual address, the 64-bit VA (its top byte in [63:56]);
 * data physical address, PA[55:0] with NS [63] (CH [62] and PAT [59:56]
 * zero here).
 */
#define AMUPMU_SPE_ADDR_VA_MASK		0x00ffffffffffffffULL
#define AMUPMU_SPE_ADDR_EL_SHIFT	61
#define AMUPMU_SPE_ADDR_NS		0x8000000000000000ULL

/* Counter packet indices */
#define AMUPMU_SPE_CNT_TOTAL		0
#define AMUPMU_SPE_CNT_ISSUE		1
#define AMUPMU_SPE_CNT_XLAT		2

/* Events packet bits, also the PMSEVFR_EL1/PMSNEVFR_EL1 bit of each event */
#define AMUPMU_SPE_EV_EXCEPTION		0x000001U
#define AMUPMU_SPE_EV_RETIRED		0x000002U
#define AMUPMU_SPE_EV_L1D_ACCESS	0x000004U
#define AMUPMU_SPE_EV_L1D_REFILL	0x000008U
#define AMUPMU_SPE_EV_TLB_ACCESS	0x000010U
#define AMUPMU_SPE_EV_TLB_WALK		0x000020U
#define AMUPMU_SPE_EV_NOT_TAKEN		0x000040U
#define AMUPMU_SPE_EV_MISPRED		0x000080U
#define AMUPMU_SPE_EV_LLC_ACCESS	0x000100U
#define AMUPMU_SPE_EV_LLC_MISS		0x000200U
#define AMUPMU_SPE_EV_REMOTE		0x000400U
#define AMUPMU_SPE_EV_ALIGNMENT		0x000800U
#define AMUPMU_SPE_EV_L2D_ACCESS	0x080000U	/* FEAT_SPEv1p4: events 19-23 */
#define AMUPMU_SPE_EV_L2D_MISS		0x100000U
#define AMUPMU_SPE_EV_V1P4		0xf80000U

/* Operation Type packet classes and their subclass bits */
#define AMUPMU_SPE_OP_OTHER		0
#define AMUPMU_SPE_OP_LDST		1
#define AMUPMU_SPE_OP_BRANCH		2
/* other, not SVE/SME: ASE [2], FP [1], COND [0] */
#define AMUPMU_SPE_OP_OTHER_ASE		0x04
#define AMUPMU_SPE_OP_OTHER_FP		0x02
#define AMUPMU_SPE_OP_OTHER_COND	0x01
/* load/store: general-purpose register 0b0000000s; extended 0b000ARexAT1s */
#define AMUPMU_SPE_OP_LDST_ST		0x01
#define AMUPMU_SPE_OP_LDST_EXT		0x02
#define AMUPMU_SPE_OP_LDST_AT		0x04
/* branch: INDIRECT [1], COND [0] */
#define AMUPMU_SPE_OP_BR_INDIRECT	0x02
#define AMUPMU_SPE_OP_BR_COND		0x01

/*
 * Operation type flags, in the order of PMSFCR_EL1.TYPE [20:16] and
 * TYPEm [52:48]: B, LD, ST, FP, SIMD.
 */
#define AMUPMU_SPE_TYPE_B		0x01U
#define AMUPMU_SPE_TYPE_LD		0x02U
#define AMUPMU_SPE_TYPE_ST		0x04U
#define AMUPMU_SPE_TYPE_FP		0x08U
#define AMUPMU_SPE_TYPE_SIMD		0x10U
#define AMUPMU_SPE_TYPE_ALL		0x1fU
#define AMUPMU_SPE_TYPE_BASE		0x07U	/* B, LD, ST: without FEAT_SPE_EFT */

/* The block a record never crosses, 1 << PMSIDR_EL1.MaxSize (6) */
#define AMUPMU_SPE_REC_MAX		64U

/**
 * struct amupmu_spe_op - one sampled operation, as its record reports it
 * @pc: its virtual address
 * @target: branch target (branches)
 * @va: data virtual address (loads and stores)
 * @pa: data physical address (loads and stores)
 * @ts: timestamp (generic timer count)
 * @events: AMUPMU_SPE_EV_* bits
 * @total: total latency in cycles (not yet saturated)
 * @issue: issue latency
 * @xlat: translation latency (loads and stores)
 * @context: CONTEXTIDR value
 * @data_source: the Data Source packet's payload (loads)
 * @el: the exception level it ran at (0-3)
 * @op_class: AMUPMU_SPE_OP_OTHER, _LDST or _BRANCH
 * @subclass: the Operation Type packet's payload
 */
struct amupmu_spe_op {
	u64 pc;
	u64 target;
	u64 va;
	u64 pa;
	u64 ts;
	u32 events;
	u32 total;
	u32 issue;
	u32 xlat;
	u32 context;
	u16 data_source;
	u8 el;
	u8 op_class;
	u8 subclass;
};

/**
 * struct amupmu_spe_rec_cfg - what a record contains besides the operation
 * @pa: PMSCR.PA: a physical address packet for loads and stores
 * @cx: PMSCR.CX: a Context packet
 * @cx_el2: the Context packet reports CONTEXTIDR_EL2 (a VHE host)
 * @ts: PMSCR.TS: the record ends with a Timestamp packet, else END
 * @lds: PMSIDR_EL1.LDS: loads have a Data Source packet
 * @count_max: the counters' saturation value (PMSIDR_EL1.CountSize)
 */
struct amupmu_spe_rec_cfg {
	bool pa;
	bool cx;
	bool cx_el2;
	bool ts;
	bool lds;
	u32 count_max;
};

/* @n bytes of @v at @buf, little-endian */
static inline unsigned int amupmu_spe_put_le(u8 *buf, u64 v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		buf[i] = (u8)(v >> (8 * i));
	return n;
}

/* The size field (log2 of the payload bytes) a header carries */
static inline u8 amupmu_spe_hdr_sz(unsigned int bytes)
{
	return bytes == 8 ? 3 : bytes == 4 ? 2 : bytes == 2 ? 1 : 0;
}

static inline unsigned int amupmu_spe_pkt_address(u8 *buf, unsigned int index, u64 payload)
{
	buf[0] = AMUPMU_SPE_HDR_ADDRESS | index;
	return 1 + amupmu_spe_put_le(buf + 1, payload, 8);
}

/* Payload of an instruction address (PC, branch target) at @el, Non-secure */
static inline u64 amupmu_spe_addr_insn(u64 va, unsigned int el)
{
	return (va & AMUPMU_SPE_ADDR_VA_MASK) | ((u64)el << AMUPMU_SPE_ADDR_EL_SHIFT) |
	       AMUPMU_SPE_ADDR_NS;
}

/* Payload of a Non-secure data physical address */
static inline u64 amupmu_spe_addr_pa(u64 pa)
{
	return (pa & AMUPMU_SPE_ADDR_VA_MASK) | AMUPMU_SPE_ADDR_NS;
}

/* A latency as a counter of maximum @count_max reports it (saturating) */
static inline u32 amupmu_spe_saturate(u32 cycles, u32 count_max)
{
	return cycles > count_max ? count_max : cycles;
}

static inline unsigned int amupmu_spe_pkt_counter(u8 *buf, unsigned int index, u32 value)
{
	buf[0] = AMUPMU_SPE_HDR_COUNTER | index;
	return 1 + amupmu_spe_put_le(buf + 1, value, 2);
}

/* Events packet of the smallest size (1, 2, 4 bytes) that holds @events */
static inline unsigned int amupmu_spe_pkt_events(u8 *buf, u32 events)
{
	unsigned int n = events > 0xffff ? 4 : events > 0xff ? 2 : 1;

	buf[0] = AMUPMU_SPE_HDR_EVENTS | amupmu_spe_hdr_sz(n) << AMUPMU_SPE_HDR_SZ_SHIFT;
	return 1 + amupmu_spe_put_le(buf + 1, events, n);
}

/* Data Source packet, 2 bytes (its values are IMPLEMENTATION DEFINED) */
static inline unsigned int amupmu_spe_pkt_data_source(u8 *buf, u16 source)
{
	buf[0] = AMUPMU_SPE_HDR_DATA_SOURCE | amupmu_spe_hdr_sz(2) << AMUPMU_SPE_HDR_SZ_SHIFT;
	return 1 + amupmu_spe_put_le(buf + 1, source, 2);
}

static inline unsigned int amupmu_spe_pkt_op_type(u8 *buf, unsigned int op_class, u8 subclass)
{
	buf[0] = AMUPMU_SPE_HDR_OP_TYPE | op_class;
	buf[1] = subclass;
	return 2;
}

/* Context packet: @el2 reports CONTEXTIDR_EL2 (index 1), else CONTEXTIDR_EL1 */
static inline unsigned int amupmu_spe_pkt_context(u8 *buf, bool el2, u32 context)
{
	buf[0] = AMUPMU_SPE_HDR_CONTEXT | (el2 ? 1 : 0);
	return 1 + amupmu_spe_put_le(buf + 1, context, 4);
}

static inline unsigned int amupmu_spe_pkt_timestamp(u8 *buf, u64 ts)
{
	buf[0] = AMUPMU_SPE_HDR_TIMESTAMP;
	return 1 + amupmu_spe_put_le(buf + 1, ts, 8);
}

/**
 * amupmu_spe_record() - the record of @op, without padding
 * @buf: room for AMUPMU_SPE_REC_MAX bytes
 * @op: the operation
 * @cfg: what the record contains
 *
 * Packets in the order PC, branch target, Operation Type, Events, data
 * virtual address, data physical address, Data Source, counters (total,
 * issue, translation), Context, then Timestamp or END: the architecture
 * fixes only that a record ends with one of these two. The largest record
 * (a load with every option) is 60 bytes.
 *
 * Return: its length.
 */
static inline unsigned int amupmu_spe_record(u8 *buf, const struct amupmu_spe_op *op,
					     const struct amupmu_spe_rec_cfg *cfg)
{
	bool ldst = op->op_class == AMUPMU_SPE_OP_LDST;
	bool load = ldst && !(op->subclass & AMUPMU_SPE_OP_LDST_ST);
	unsigned int n = 0;

	n += amupmu_spe_pkt_address(buf + n, AMUPMU_SPE_ADDR_PC,
				    amupmu_spe_addr_insn(op->pc, op->el));
	if (op->op_class == AMUPMU_SPE_OP_BRANCH)
		n += amupmu_spe_pkt_address(buf + n, AMUPMU_SPE_ADDR_BRANCH,
					    amupmu_spe_addr_insn(op->target, op->el));
	n += amupmu_spe_pkt_op_type(buf + n, op->op_class, op->subclass);
	n += amupmu_spe_pkt_events(buf + n, op->events);
	if (ldst) {
		n += amupmu_spe_pkt_address(buf + n, AMUPMU_SPE_ADDR_DATA_VA, op->va);
		if (cfg->pa)
			n += amupmu_spe_pkt_address(buf + n, AMUPMU_SPE_ADDR_DATA_PA,
						    amupmu_spe_addr_pa(op->pa));
		if (load && cfg->lds)
			n += amupmu_spe_pkt_data_source(buf + n, op->data_source);
	}
	n += amupmu_spe_pkt_counter(buf + n, AMUPMU_SPE_CNT_TOTAL,
				    amupmu_spe_saturate(op->total, cfg->count_max));
	n += amupmu_spe_pkt_counter(buf + n, AMUPMU_SPE_CNT_ISSUE,
				    amupmu_spe_saturate(op->issue, cfg->count_max));
	if (ldst)
		n += amupmu_spe_pkt_counter(buf + n, AMUPMU_SPE_CNT_XLAT,
					    amupmu_spe_saturate(op->xlat, cfg->count_max));
	if (cfg->cx)
		n += amupmu_spe_pkt_context(buf + n, cfg->cx_el2, op->context);
	if (cfg->ts) {
		n += amupmu_spe_pkt_timestamp(buf + n, op->ts);
	} else {
		buf[n] = AMUPMU_SPE_HDR_END;
		n++;
	}
	return n;
}

/**
 * amupmu_spe_pad_before() - PAD bytes before a record of @len bytes at @ptr
 *	so that it does not cross an AMUPMU_SPE_REC_MAX boundary
 * @ptr: the write pointer (PMBPTR_EL1)
 * @len: the record's length, at most AMUPMU_SPE_REC_MAX
 */
static inline unsigned int amupmu_spe_pad_before(u64 ptr, unsigned int len)
{
	unsigned int off = ptr & (AMUPMU_SPE_REC_MAX - 1);

	return off + len > AMUPMU_SPE_REC_MAX ? AMUPMU_SPE_REC_MAX - off : 0;
}

/*
 * PAD bytes after a record that ends at @end, up to the next boundary: the
 * model fills each record's block, so that records start on 64 bytes.
 */
static inline unsigned int amupmu_spe_pad_after(u64 end)
{
	return (AMUPMU_SPE_REC_MAX - (end & (AMUPMU_SPE_REC_MAX - 1))) & (AMUPMU_SPE_REC_MAX - 1);
}

/**
 * amupmu_spe_filter_type() - SPEFilterByType: is an operation of type
 *	@flags recorded?
 * @ft: PMSFCR_EL1.FT
 * @eft: FEAT_SPE_EFT is implemented
 * @ctrl: PMSFCR_EL1.TYPE (bits [20:16] shifted down: B, LD, ST, FP, SIMD)
 * @mask: PMSFCR_EL1.TYPEm, likewise (ignored without FEAT_SPE_EFT)
 * @flags: AMUPMU_SPE_TYPE_* of the operation
 *
 * Without FEAT_SPE_EFT, the operation passes when it is of one of the
 * selected types B, LD, ST (a Boolean OR; FP and SIMD are RES0). With
 * FEAT_SPE_EFT each type takes part according to its TYPEm bit:
 * TYPE 1 TYPEm 0: OR (the operation must be of at least one such type);
 * TYPE 1 TYPEm 1: AND (it must be of every such type);
 * TYPE 0 TYPEm 1: AND NOT (it must be of none of them);
 * TYPE 0 TYPEm 0: ignored.
 * No type selected at all (FT with TYPE 0 without EFT) is CONSTRAINED
 * UNPREDICTABLE; the model then records everything (the OR group is empty).
 */
static inline bool amupmu_spe_filter_type(bool ft, bool eft, u32 ctrl, u32 mask, u32 flags)
{
	u32 ctrl_or, ctrl_and, ctrl_nand;

	if (!ft)
		return true;
	if (!eft) {
		ctrl &= AMUPMU_SPE_TYPE_BASE;
		mask = 0;
	}
	ctrl &= AMUPMU_SPE_TYPE_ALL;
	mask &= AMUPMU_SPE_TYPE_ALL;
	ctrl_or = ctrl & ~mask;
	ctrl_and = ctrl & mask;
	ctrl_nand = ~ctrl & mask;
	return (!ctrl_or || (flags & ctrl_or)) && (flags & ctrl_and) == ctrl_and &&
	       !(flags & ctrl_nand);
}

/**
 * amupmu_spe_filter_event() - SPEFilterByEvent
 * @fe: PMSFCR_EL1.FE
 * @evfr: PMSEVFR_EL1: with FE, every event set here must have occurred
 * @fne: PMSFCR_EL1.FnE
 * @nevfr: PMSNEVFR_EL1: with FnE, no event set here may have occurred
 * @events: the operation's events (64-bit: the bits of both registers)
 */
static inline bool amupmu_spe_filter_event(bool fe, u64 evfr, bool fne, u64 nevfr, u64 events)
{
	if (fe && (events & evfr) != evfr)
		return false;
	if (fne && (events & nevfr))
		return false;
	return true;
}

/**
 * amupmu_spe_filter_latency() - SPEFilterByLatency
 * @fl: PMSFCR_EL1.FL
 * @minlat: PMSLATFR_EL1.MINLAT
 * @total: the total latency counter as the record reports it (saturated)
 */
static inline bool amupmu_spe_filter_latency(bool fl, u32 minlat, u32 total)
{
	return !fl || total >= minlat;
}

/**
 * amupmu_spe_multi_access() - SPEMultiAccessSample: the type flags an
 *	operation is sampled with
 * @flags: its AMUPMU_SPE_TYPE_* flags
 * @store: for an operation that both loads and stores (an atomic), the
 *	choice the PE made: sample the store access, else the load
 *
 * Return: @flags, with only LD or only ST for a load-and-store operation.
 */
static inline u32 amupmu_spe_multi_access(u32 flags, bool store)
{
	u32 both = AMUPMU_SPE_TYPE_LD | AMUPMU_SPE_TYPE_ST;

	if ((flags & both) != both)
		return flags;
	return flags & ~(store ? AMUPMU_SPE_TYPE_LD : AMUPMU_SPE_TYPE_ST);
}

/*
 * The smallest sampling interval, in operations, of PMSIDR_EL1.Interval
 * @field (Arm ARM: 0b0000 256, 0b0010 512, 0b0011 768, 0b0100 1024,
 * 0b0101 1536, 0b0110 2048, 0b0111 3072, 0b1000 4096; the reserved
 * values, 0b0001 and 0b1001 up: the largest). The driver checks intervals
 * with it, the mock model enforces it.
 */
static inline u32 amupmu_spe_min_interval_ops(unsigned int field)
{
	static const u16 ops[] = { 256, 4096, 512, 768, 1024, 1536, 2048, 3072, 4096 };

	return field < 9 ? ops[field] : 4096;
}

/**
 * amupmu_spe_interval() - the value the interval counter reloads with
 * @interval: PMSIRR_EL1.INTERVAL in place (bits [31:8], low 8 bits 0)
 * @rnd: PMSIRR_EL1.RND
 * @random: random bits (the low 8 used with RND)
 * @min: the smallest interval the PE supports (PMSIDR_EL1.Interval)
 *
 * With RND the low 8 bits are random: [INTERVAL, INTERVAL + 255]. An
 * INTERVAL below @min is CONSTRAINED UNPREDICTABLE; the model uses @min.
 */
static inline u32 amupmu_spe_interval(u32 interval, bool rnd, u32 random, u32 min)
{
	interval &= ~0xffU;
	if (interval < min)
		interval = min;
	return rnd ? interval | (random & 0xff) : interval;
}

#endif /* AMUPMU_SPE_MODEL_H */
