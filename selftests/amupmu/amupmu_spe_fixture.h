/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture of the SPE session tests (ABI 2.2: AMUPMU_SPE_CONFIG / CTL /
 * READ, the mapped per-CPU buffers and the records in them; the
 * amupmu_spe_*_test programs, one per area: record, buffer, hotplug, abi,
 * lifetime), and what they share: a small packet decoder that walks the
 * records, the mock model's counters (debugfs amupmu/spe_stats), the
 * session helpers and the ASSERTing shorthands (CONFIG, CTL, MAP, WALK...).
 * Include after _GNU_SOURCE, once per program. Against
 * include/uapi/linux/amupmu.h and Documentation/admin-guide/amupmu.rst
 * ("Mock SPE model").
 *
 * Backends:
 *  - mock builds (AMUPMU_FEAT_MOCK with AMUPMU_FEAT_SPE): everything. The
 *    records are walked with the packet decoder (below) and compared with
 *    the model's own counters (debugfs amupmu/spe_stats); faults come
 *    from amupmu/spe_fault, the operation stream's knobs from
 *    amupmu/spe_stream (restored by the teardown).
 *  - production builds on QEMU (no SPE): every SPE request is refused as
 *    the header documents (AMUPMU_SPE_CONFIG EOPNOTSUPP, INFO spe_owner
 *    NONE); the rest skips.
 * Every test logs its backend first (BEGIN()).
 *
 * The records are published (data_head, READ's bytes) at buffer events
 * and when profiling stops: the tests read the figures after DISABLE.
 *
 * AMUPMU_SPE_ONLY=NAME[,NAME...] runs those tests alone (the board
 * payloads: spe-claim's unbind_stale, bench's irq_o1).
 */
#ifndef AMUPMU_SPE_FIXTURE_H
#define AMUPMU_SPE_FIXTURE_H

#include <stdarg.h>
#include <sys/mman.h>

#include "amupmu_test.h"

#define DBG		"/sys/kernel/debug/amupmu"
#define SPE_STATS	DBG "/spe_stats"
#define SPE_FAULT	DBG "/spe_fault"
#define SPE_STREAM	DBG "/spe_stream"
#define SPE_MODEL	DBG "/spe_model"
#define CPU_PM		DBG "/cpu_pm"
#define ARM_SPE		"/sys/kernel/debug/arm_spe"
#define SPE_DRV		"/sys/bus/platform/drivers/amupmu-spe"
#define MAX_CPUS	64

/* ---------------------------------------------------------------- packets */

#define PKT_PAD		0x00
#define PKT_END		0x01
#define PKT_TS		0x71
#define OP_OTHER	0
#define OP_LDST		1
#define OP_BRANCH	2
#define OP_OTHER_FP	0x02
#define OP_LDST_ST	0x01
#define OP_LDST_AT	0x04
#define REC_BLOCK	64

struct rec {
	bool has_pc, has_op, has_total;
	unsigned int el;	/* PC's EL [62:61] */
	bool ns;
	__u64 pc, va;
	unsigned int op_class, subclass;
	__u64 events;
	unsigned int total, issue, xlat;
	bool has_ctx;
	__u32 ctx;
};

struct walk {
	__u64 records, pads, bytes;
	__u64 el_seen[4];
	__u64 loads, stores, branches, other, fp, atomic_ld, atomic_st;
	__u64 min_total;
	char bad[256];		/* first malformation */
};

/* A record's check: true if it is acceptable (why in @why). */
typedef bool (*rec_check)(const struct rec *r, const void *arg, char *why, size_t size);

static inline __u64 le(const __u8 *p, unsigned int n)
{
	__u64 v = 0;

	while (n--)
		v = (v << 8) | p[n];
	return v;
}

/* Length of the packet at @p (@avail bytes there), 0 if unknown. */
static inline unsigned int pkt_len(const __u8 *p, size_t avail)
{
	__u8 h = p[0];

	if (h == PKT_PAD || h == PKT_END)
		return 1;
	if ((h & 0xfc) == 0x20) {	/* extended header: the real one follows */
		if (avail < 2)
			return 0;
		return 2 + (1U << ((p[1] >> 4) & 3));
	}
	return 1 + (1U << ((h >> 4) & 3));
}

static inline void rec_packet(struct rec *r, const __u8 *p)
{
	__u8 h = p[0];
	unsigned int sz = 1U << ((h >> 4) & 3);
	__u64 v = le(p + 1, sz);

	if ((h & 0xf8) == 0xb0) {
		if ((h & 7) == 0) {
			r->has_pc = true;
			r->pc = v & 0x00ffffffffffffffULL;
			r->el = (v >> 61) & 3;
			r->ns = v >> 63;
		} else if ((h & 7) == 2) {
			r->va = v;
		}
	} else if ((h & 0xf8) == 0x98) {
		if ((h & 7) == 0) {
			r->has_total = true;
			r->total = v;
		} else if ((h & 7) == 1) {
			r->issue = v;
		} else if ((h & 7) == 2) {
			r->xlat = v;
		}
	} else if ((h & 0xcf) == 0x42) {
		r->events = v;
	} else if ((h & 0xfc) == 0x48) {
		r->has_op = true;
		r->op_class = h & 3;
		r->subclass = p[1];
	} else if ((h & 0xfe) == 0x64) {
		r->has_ctx = true;
		r->ctx = v;
	}
}

/*
 * Walk @len bytes of records at offset @from of the @size-byte data area
 * @data (wrapping at its end), counting and checking every record: no
 * packet crosses a 64-byte boundary, every record has a PC, an operation
 * type and a total latency and ends with END or TIMESTAMP, and @check
 * accepts it. False with w->bad set on the first malformation.
 */
static inline bool walk(const __u8 *data, __u64 size, __u64 from, __u64 len, struct walk *w,
			rec_check check, const void *arg)
{
	struct rec r;
	bool in_rec = false;
	__u64 i = 0, rec_start = 0;
	char why[160];

	memset(w, 0, sizeof(*w));
	w->min_total = ~0ULL;
	memset(&r, 0, sizeof(r));
	while (i < len) {
		__u64 off = (from + i) % size;
		const __u8 *p = data + off;
		unsigned int n = pkt_len(p, size - off);

		if (!n || (off % REC_BLOCK) + n > REC_BLOCK || i + n > len) {
			snprintf(w->bad, sizeof(w->bad),
				 "packet 0x%02x at offset %llu (byte %llu of %llu): length %u %s",
				 p[0], (unsigned long long)off, (unsigned long long)i,
				 (unsigned long long)len, n,
				 !n ? "unknown" : i + n > len ? "beyond data_head" :
				 "crosses a 64-byte boundary");
			return false;
		}
		if (p[0] == PKT_PAD) {
			if (in_rec) {
				snprintf(w->bad, sizeof(w->bad), "PAD inside the record at %llu",
					 (unsigned long long)rec_start);
				return false;
			}
			w->pads++;
			i += n;
			continue;
		}
		if (!in_rec) {
			in_rec = true;
			rec_start = off;
			memset(&r, 0, sizeof(r));
		}
		if (off / REC_BLOCK != rec_start / REC_BLOCK) {
			snprintf(w->bad, sizeof(w->bad), "record at %llu crosses its 64-byte block",
				 (unsigned long long)rec_start);
			return false;
		}
		rec_packet(&r, p);
		i += n;
		if (p[0] != PKT_END && p[0] != PKT_TS)
			continue;
		in_rec = false;
		if (!r.has_pc || !r.has_op || !r.has_total) {
			snprintf(w->bad, sizeof(w->bad),
				 "record at %llu lacks a packet: pc %d op %d total %d",
				 (unsigned long long)rec_start, r.has_pc, r.has_op, r.has_total);
			return false;
		}
		w->records++;
		w->el_seen[r.el]++;
		if (r.total < w->min_total)
			w->min_total = r.total;
		if (r.op_class == OP_LDST) {
			if (r.subclass & OP_LDST_ST)
				w->stores++;
			else
				w->loads++;
			if (r.subclass & OP_LDST_AT) {
				if (r.subclass & OP_LDST_ST)
					w->atomic_st++;
				else
					w->atomic_ld++;
			}
		} else if (r.op_class == OP_BRANCH) {
			w->branches++;
		} else {
			w->other++;
			if (r.subclass & OP_OTHER_FP)
				w->fp++;
		}
		why[0] = '\0';
		if (check && !check(&r, arg, why, sizeof(why))) {
			snprintf(w->bad, sizeof(w->bad),
				 "record at %llu (pc 0x%llx el %u class %u sub 0x%x total %u): %s",
				 (unsigned long long)rec_start, (unsigned long long)r.pc, r.el,
				 r.op_class, r.subclass, r.total, why);
			return false;
		}
	}
	if (in_rec) {
		snprintf(w->bad, sizeof(w->bad), "record at %llu does not end before data_head",
			 (unsigned long long)rec_start);
		return false;
	}
	w->bytes = len;
	return true;
}

/* ---------------------------------------------------------------- helpers */

static inline int write_fmt(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline int write_fmt(const char *path, const char *fmt, ...)
{
	char s[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s, sizeof(s), fmt, ap);
	va_end(ap);
	return amupmu_write_str(path, s);
}

enum {
	ST_OPS_EL0, ST_OPS_KERNEL, ST_SELECTED, ST_COLLISIONS, ST_REJ_TYPE, ST_REJ_EVENT,
	ST_REJ_LATENCY, ST_MULTI_LOAD, ST_MULTI_STORE, ST_RECORDS, ST_BYTES, ST_EV_FULL,
	ST_EV_S1, ST_EV_S2, ST_EV_EA, ST_EV_DL, ST_EV_UNKNOWN, ST_IRQS, ST_LOST_NS, ST_IRQ_NS_MIN,
	ST_IRQ_NS_MAX, ST_NR,
};

static const char * const st_names[ST_NR] = {
	"ops_el0", "ops_kernel", "selected", "collisions", "rej_type", "rej_event",
	"rej_latency", "multi_load", "multi_store", "records", "bytes", "ev_full", "ev_s1",
	"ev_s2", "ev_ea", "ev_dl", "ev_unknown", "irqs", "lost_ns", "irq_ns_min", "irq_ns_max",
};

/* The model's counters of @cpu: 0 or -errno (-EPROTO: a key missing). */
static inline int stats_get(unsigned int cpu, __u64 *st)
{
	static char buf[16384];
	char tag[24], *line, *p;
	unsigned int i;

	if (amupmu_read_file(SPE_STATS, buf, sizeof(buf)) < 0)
		return -errno ? -errno : -EIO;
	snprintf(tag, sizeof(tag), "cpu%u ", cpu);
	line = strstr(buf, tag);
	while (line && line != buf && line[-1] != '\n')
		line = strstr(line + 1, tag);
	if (!line)
		return -EPROTO;
	p = strchr(line, '\n');
	if (p)
		*p = '\0';
	for (i = 0; i < ST_NR; i++) {
		char key[32], *k;

		snprintf(key, sizeof(key), " %s=", st_names[i]);
		k = strstr(line, key);
		if (!k)
			return -EPROTO;
		st[i] = strtoull(k + strlen(key), NULL, 10);
	}
	return 0;
}

/* Unbind @dev from amupmu-spe (if bound) and clear its driver_override. */
static inline void spe_dev_give_back(const char *dev)
{
	char path[320];

	write_fmt(SPE_DRV "/unbind", "%s\n", dev);
	snprintf(path, sizeof(path), "/sys/bus/platform/devices/%s/driver_override", dev);
	amupmu_write_str(path, "\n");
}

static inline void cfg_init(struct amupmu_spe_config *c, __u64 *mask, __u32 enables, __u32 pages)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->enables = enables;
	c->interval = 1024;
	c->buf_pages = pages;
	c->cpus_len = sizeof(*mask);
	c->cpus_uptr = (uintptr_t)mask;
}

static inline int spe_config(int fd, struct amupmu_spe_config *c)
{
	return amupmu_ioctl(fd, AMUPMU_SPE_CONFIG, c);
}

static inline int spe_ctl(int fd, __u32 op)
{
	struct amupmu_spe_ctl ctl = { .size = sizeof(ctl), .op = op };

	return amupmu_ioctl(fd, AMUPMU_SPE_CTL, &ctl);
}

/* READ into @e (@n entries); returns entries written or -errno. */
static inline int spe_read(int fd, struct amupmu_spe_cpu *e, unsigned int n)
{
	struct amupmu_spe_read rd = {
		.size = sizeof(rd), .nr_cpus = n, .entry_size = sizeof(*e),
		.cpus_uptr = (uintptr_t)e,
	};
	int ret = amupmu_ioctl(fd, AMUPMU_SPE_READ, &rd);

	return ret ? ret : (int)rd.nr_cpus;
}

/* @cpu's entry of READ, or -errno. */
static inline int spe_read_cpu(int fd, unsigned int cpu, struct amupmu_spe_cpu *out)
{
	struct amupmu_spe_cpu e[MAX_CPUS];
	int n = spe_read(fd, e, MAX_CPUS), i;

	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (e[i].cpu == cpu) {
			*out = e[i];
			return 0;
		}
	}
	return -ENOENT;
}

static inline void *spe_map(int fd, unsigned int cpu, unsigned int pages, int prot)
{
	long pg = sysconf(_SC_PAGESIZE);

	return mmap(NULL, (pages + 1) * pg, prot, MAP_SHARED, fd, AMUPMU_SPE_MMAP_OFFSET(cpu));
}

/* Busy @ms milliseconds in user space on each CPU of @mask (children pinned there). */
static inline void busy_on(__u64 mask, unsigned int ms)
{
	pid_t pids[MAX_CPUS];
	unsigned int cpu, n = 0;

	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		pid_t pid;

		if (!(mask & (1ULL << cpu)))
			continue;
		pid = fork();
		if (!pid) {
			if (amupmu_pin_cpu(cpu))
				_exit(1);
			amupmu_busy_ns((__u64)ms * 1000000ULL);
			_exit(0);
		}
		if (pid > 0)
			pids[n++] = pid;
	}
	while (n--)
		waitpid(pids[n], NULL, 0);
}

/* Walk what @h holds from data_tail to data_head. */
static inline bool walk_buf(const struct amupmu_spe_buf_header *h, struct walk *w, rec_check check,
			    const void *arg)
{
	__u64 head = __atomic_load_n(&h->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = h->data_tail;

	return walk((const __u8 *)h + h->data_offset, h->data_size, tail, head - tail, w,
		    check, arg);
}

/* ---------------------------------------------------------------- fixture */

FIXTURE(sess) {
	int fd;
	unsigned int nr_cpu_ids;
	struct amupmu_info info;
	struct amupmu_cpu_info *cpus;
	bool spe, mock;
	unsigned int cpu;		/* the CPU most tests profile: 1 if there is one */
	__u64 stream_touched;		/* CPUs whose spe_stream changed */
	__u64 fault_touched;
	bool knobs_touched, model_touched, cpu1_offlined;
	char spe_dev[256 + 1];		/* an SPE device node the test bound to amupmu-spe */
	char backend[384];
};

FIXTURE_SETUP(sess)
{
	static struct amupmu_cpumask possible;
	char board[192];
	int ret;

	self->fd = -1;
	ASSERT_EQ(0, amupmu_possible_cpus(&possible));
	self->nr_cpu_ids = possible.nr;
	AMUPMU_OPEN_DEVICE(self->fd);
	self->cpus = calloc(self->nr_cpu_ids, sizeof(*self->cpus));
	ASSERT_NE(NULL, self->cpus);
	ret = amupmu_query(self->fd, &self->info, self->cpus, self->nr_cpu_ids);
	ASSERT_EQ(0, ret) {
		TH_LOG("AMUPMU_INFO: %s", amupmu_errstr(ret));
	}
	self->spe = self->info.features & AMUPMU_FEAT_SPE;
	self->mock = self->info.features & AMUPMU_FEAT_MOCK;
	self->cpu = self->nr_cpu_ids > 1 && amupmu_cpu_online(1) == 1 ? 1 : 0;
	amupmu_board_line(board, sizeof(board));
	snprintf(self->backend, sizeof(self->backend), "%s; features 0x%llx; board \"%s\"",
		 self->spe && self->mock ? "mock SPE model (test build)" :
		 self->spe ? "hardware SPE" :
		 MIDR_IMPLEMENTER(self->cpus[0].midr) == 0 ? "QEMU, no SPE" :
		 "no SPE (production build)",
		 (unsigned long long)self->info.features, board[0] ? board : "unknown");
}

FIXTURE_TEARDOWN(sess)
{
	unsigned int cpu;

	if (self->cpu1_offlined)
		amupmu_set_online(1, true);
	if (self->fd >= 0)
		spe_ctl(self->fd, AMUPMU_SPE_CTL_RELEASE);
	if (self->spe_dev[0])
		spe_dev_give_back(self->spe_dev);
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		if (self->fault_touched & (1ULL << cpu))
			write_fmt(SPE_FAULT, "%u none\n", cpu);
		if (self->stream_touched & (1ULL << cpu))
			if (write_fmt(SPE_STREAM, "%u ops_per_us=1000 atomic=20\n", cpu)) {
				TH_LOG("could not restore spe_stream of cpu%u", cpu);
				_metadata->passed = 0;
			}
	}
	if (self->knobs_touched) {
		amupmu_write_str(ARM_SPE "/pmsfcr_ft", "0\n");
		amupmu_write_str(ARM_SPE "/pmsfcr_type", "0\n");
	}
	if (self->model_touched)
		for (cpu = 0; cpu < self->nr_cpu_ids && cpu < MAX_CPUS; cpu++)
			write_fmt(SPE_MODEL, "%u reset\n", cpu);
	free(self->cpus);
	if (self->fd >= 0)
		close(self->fd);
}

/* AMUPMU_SPE_ONLY=NAME[,NAME...]: those tests alone (board payloads) */
static inline bool spe_only(const char *name)
{
	const char *only = getenv("AMUPMU_SPE_ONLY"), *p;
	size_t n = strlen(name);

	if (!only || !*only)
		return true;
	for (p = only; (p = strstr(p, name)); p += n)
		if ((p == only || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return true;
	return false;
}

/*
 * First statement of every test: the backend. Without SPE every SPE
 * request is refused as documented and the test skips; the rest needs the
 * mock model (its debugfs files) and root.
 */
#define BEGIN() do {								\
	AMUPMU_SKIPPED_IN_SETUP(self->fd);					\
	if (!spe_only(_metadata->name))						\
		SKIP(return, "AMUPMU_SPE_ONLY=%s", getenv("AMUPMU_SPE_ONLY"));	\
	TH_LOG("backend: %s", self->backend);					\
	if (!self->spe) {							\
		__u64 _m = 1;							\
		struct amupmu_spe_config _c;					\
		int _r;								\
		cfg_init(&_c, &_m, AMUPMU_SPE_EN_USER, 2);			\
		_r = spe_config(self->fd, &_c);					\
		ASSERT_EQ(-EOPNOTSUPP, _r) {					\
			TH_LOG("SPE_CONFIG without SPE: %s", amupmu_errstr(_r));	\
		}								\
		_r = spe_ctl(self->fd, AMUPMU_SPE_CTL_ENABLE);			\
		ASSERT_EQ(-ENODEV, _r) {					\
			TH_LOG("SPE_CTL without a config: %s", amupmu_errstr(_r));	\
		}								\
		ASSERT_EQ((__u32)AMUPMU_SPE_OWNER_NONE, self->info.spe_owner);	\
		SKIP(return, "no SPE (QEMU hides it): SPE_CONFIG EOPNOTSUPP, "	\
		     "spe_owner NONE as documented; sessions need a mock build");	\
	}									\
	if (!self->mock)							\
		SKIP(return, "hardware SPE: these tests need the mock model");	\
	if (geteuid() != 0)							\
		SKIP(return, "debugfs needs root");				\
	ASSERT_TRUE(amupmu_path_exists(SPE_STATS)) {				\
		TH_LOG("mock build without %s (debugfs mounted?)", SPE_STATS);	\
	}									\
} while (0)

#define STREAM(_cpu, _keys) do {						\
	int _r = write_fmt(SPE_STREAM, "%u %s\n", (_cpu), (_keys));		\
	self->stream_touched |= 1ULL << (_cpu);					\
	ASSERT_EQ(0, _r) {							\
		TH_LOG("spe_stream \"%u %s\": %s", (_cpu), (_keys), amupmu_errstr(_r));	\
	}									\
} while (0)

#define STATS(_cpu, _st) do {							\
	int _r = stats_get((_cpu), (_st));					\
	ASSERT_EQ(0, _r) {							\
		TH_LOG("%s cpu%u: %s", SPE_STATS, (_cpu), amupmu_errstr(_r));	\
	}									\
} while (0)

#define CONFIG(_fd, _c) do {							\
	int _r = spe_config((_fd), (_c));					\
	ASSERT_EQ(0, _r) {							\
		TH_LOG("SPE_CONFIG: %s", amupmu_errstr(_r));			\
	}									\
} while (0)

#define CTL(_fd, _op) do {							\
	int _r = spe_ctl((_fd), (_op));						\
	ASSERT_EQ(0, _r) {							\
		TH_LOG("SPE_CTL %s: %s", #_op, amupmu_errstr(_r));		\
	}									\
} while (0)

#define READ_CPU(_fd, _cpu, _e) do {						\
	int _r = spe_read_cpu((_fd), (_cpu), (_e));				\
	ASSERT_EQ(0, _r) {							\
		TH_LOG("SPE_READ cpu%u: %s", (_cpu), amupmu_errstr(_r));	\
	}									\
} while (0)

#define MAP(_h, _fd, _cpu, _pages) do {						\
	(_h) = spe_map((_fd), (_cpu), (_pages), PROT_READ | PROT_WRITE);	\
	ASSERT_NE(MAP_FAILED, (void *)(_h)) {					\
		TH_LOG("mmap cpu%u: %s", (_cpu), strerror(errno));		\
	}									\
} while (0)

#define WALK(_h, _w, _check, _arg) do {						\
	bool _ok = walk_buf((_h), (_w), (_check), (_arg));			\
	EXPECT_TRUE(_ok) {							\
		TH_LOG("cpu%u: %s", (_h)->cpu, (_w)->bad);			\
	}									\
} while (0)

static inline void log_entry(struct __test_metadata *_metadata, const char *what,
			     const struct amupmu_spe_cpu *e)
{
	TH_LOG("%s: cpu%u state 0x%x bytes %llu records %llu lost %llu trunc %llu coll %llu "
	       "faults %llu pmbsr 0x%llx events %llu", what, e->cpu, e->state,
	       (unsigned long long)e->bytes, (unsigned long long)e->records,
	       (unsigned long long)e->lost_bytes, (unsigned long long)e->truncations,
	       (unsigned long long)e->collisions, (unsigned long long)e->faults,
	       (unsigned long long)e->last_pmbsr, (unsigned long long)e->events);
}

#endif /* AMUPMU_SPE_FIXTURE_H */
