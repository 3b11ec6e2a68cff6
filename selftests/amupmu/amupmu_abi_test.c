// SPDX-License-Identifier: GPL-2.0
/*
 * The ABI rules of include/uapi/linux/amupmu.h, one table line per command
 * (FIXTURE_VARIANT_ADD below), the same sweep for each:
 *
 *  - size below the first version (0, 4, VER0 - 1) -> EINVAL
 *  - size + 1 and size + 8 with one non-zero tail byte -> E2BIG
 *  - size + 1, + 8 and AMUPMU_SIZE_MAX with a zero tail -> accepted
 *  - size AMUPMU_SIZE_MAX + 1 and 2^32 - 1 -> E2BIG
 *  - each bit of flags alone, each bit of every reserved field alone -> EINVAL
 *  - every other nr of AMUPMU_TYPE, the command with direction or size
 *    bits, and the command with ABI 1's type 0xB7 -> ENOTTY
 *
 * and after every refused call the argument is not written and the state
 * read back is unchanged: the INFO answer, and a disabled, counted group
 * (its totals, times and state) plus a fresh session that still has no
 * group. The per-command suites (amupmu_info_test, amupmu_pmu_abi_test,
 * amupmu_amu_abi_test) go deeper into each command's own fields; this one
 * checks that the rules hold uniformly and prints the number of cases.
 *
 * Backend: the PMU of the CPU (QEMU TCG PMUv3 on the board). The PMU
 * commands are swept whole where sessions work: exclusive mode (the amupmu
 * devicetree) and shared mode (the stock devicetree, through perf core);
 * with the kernel's arm_pmu owning the PMU and shared mode off
 * (pmu_shared=N) only the dispatcher's size and command checks are swept
 * for them (beyond those, every PMU command is ENXIO there).
 * AMUPMU_AMU_READ: the mock AMU model in mock builds; where no CPU has a
 * usable AMU (QEMU hides it from production builds) its size, flags and
 * reserved checks come first and a valid request is EOPNOTSUPP.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "amupmu_test.h"

#define BUF_SZ		(AMUPMU_SIZE_MAX + 64)
#define NO_FIELD	((size_t)-1)

FIXTURE(abi) {
	int fd;		/* the state session: a counted, disabled group */
	int fresh;	/* a session without a group */
	bool sessions;	/* PMU sessions work: exclusive or shared mode */
	unsigned int nr_cpu_ids;
	struct amupmu_info ref;
	struct amupmu_pmu_event ev[2];
	__u64 cpus[16];
	struct amupmu_pmu_value vals[AMUPMU_PMU_MAX_EVENTS];
	struct amupmu_pmu_read ref_rd;
	struct amupmu_amu_cpu amu_entry;
	bool amu;	/* some CPU has a usable AMU (AMUPMU_FEAT_AMU) */
	struct amupmu_pmu_value ref_vals[2];
	unsigned int cases;
};

/* One line per command. */
FIXTURE_VARIANT(abi) {
	const char *name;
	unsigned long cmd;
	size_t size;		/* sizeof the struct as this header has it */
	size_t min_size;	/* the first published size */
	size_t flags;		/* offsetof flags */
	__u32 valid_flags;	/* flags the command has whose answer is not EINVAL here */
	size_t reserved[2];	/* offsetof the must-be-zero __u32 fields */
	bool pmu;		/* needs PMU sessions beyond the size checks */
	bool on_fresh;		/* issued on the session without a group */
	bool amu;		/* EOPNOTSUPP beyond the generic checks without an AMU */
};

FIXTURE_VARIANT_ADD(abi, info) {
	.name = "AMUPMU_INFO", .cmd = AMUPMU_INFO,
	.size = sizeof(struct amupmu_info), .min_size = AMUPMU_INFO_SIZE_VER0,
	.flags = offsetof(struct amupmu_info, flags),
	.reserved = { offsetof(struct amupmu_info, __reserved),
		      offsetof(struct amupmu_info, __reserved2) },
};

FIXTURE_VARIANT_ADD(abi, pmu_config) {
	.name = "AMUPMU_PMU_CONFIG", .cmd = AMUPMU_PMU_CONFIG,
	.size = sizeof(struct amupmu_pmu_config), .min_size = AMUPMU_PMU_CONFIG_SIZE_VER0,
	.flags = offsetof(struct amupmu_pmu_config, flags),
	/* MULTIPLEX: accepted in shared mode, EOPNOTSUPP in exclusive (pmu, mux tests) */
	.valid_flags = AMUPMU_PMU_CONFIG_MULTIPLEX,
	.reserved = { offsetof(struct amupmu_pmu_config, __reserved), NO_FIELD },
	.pmu = true, .on_fresh = true,
};

FIXTURE_VARIANT_ADD(abi, pmu_ctl) {
	.name = "AMUPMU_PMU_CTL", .cmd = AMUPMU_PMU_CTL,
	.size = sizeof(struct amupmu_pmu_ctl), .min_size = AMUPMU_PMU_CTL_SIZE_VER0,
	.flags = offsetof(struct amupmu_pmu_ctl, flags),
	.reserved = { offsetof(struct amupmu_pmu_ctl, __reserved), NO_FIELD },
	.pmu = true,
};

FIXTURE_VARIANT_ADD(abi, pmu_read) {
	.name = "AMUPMU_PMU_READ", .cmd = AMUPMU_PMU_READ,
	.size = sizeof(struct amupmu_pmu_read), .min_size = AMUPMU_PMU_READ_SIZE_VER0,
	.flags = offsetof(struct amupmu_pmu_read, flags),
	/* READ_TIMES: valid for any group (amupmu_mux_test) */
	.valid_flags = AMUPMU_PMU_READ_TIMES,
	/* nr_cpus must be 0 without AMUPMU_PMU_READ_ALL */
	.reserved = { offsetof(struct amupmu_pmu_read, nr_cpus), NO_FIELD },
	.pmu = true,
};

FIXTURE_VARIANT_ADD(abi, amu_read) {
	.name = "AMUPMU_AMU_READ", .cmd = AMUPMU_AMU_READ,
	.size = sizeof(struct amupmu_amu_read), .min_size = AMUPMU_AMU_READ_SIZE_VER0,
	.flags = offsetof(struct amupmu_amu_read, flags),
	.reserved = { offsetof(struct amupmu_amu_read, __reserved), NO_FIELD },
	.amu = true,
};

static int do_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/* The valid request of the variant's command, in @b (BUF_SZ bytes, zeroed). */
static void build(FIXTURE_DATA(abi) *self, const FIXTURE_VARIANT(abi) *v, unsigned char *b)
{
	memset(b, 0, BUF_SZ);
	switch (v->cmd) {
	case AMUPMU_INFO:
		amupmu_info_init((void *)b, NULL, 0, 0);
		break;
	case AMUPMU_PMU_CONFIG:
		amupmu_pmu_config_init((void *)b, self->ev, 1, self->cpus, 8);
		break;
	case AMUPMU_AMU_READ:
		/* CPU 0's counters: reading changes nothing */
		amupmu_amu_read_init((void *)b, self->cpus, 8, &self->amu_entry, 1,
				     sizeof(self->amu_entry));
		break;
	case AMUPMU_PMU_CTL:
		/* disabling a disabled group changes nothing */
		amupmu_pmu_ctl_init((void *)b, AMUPMU_PMU_CTL_DISABLE);
		break;
	default:
		amupmu_pmu_read_init((void *)b, 0, self->vals, AMUPMU_PMU_MAX_EVENTS);
		break;
	}
}

/* The state, read back: equal to what the setup recorded. */
static void expect_state(struct __test_metadata *_metadata, FIXTURE_DATA(abi) *self,
			 const char *what)
{
	struct amupmu_pmu_value vals[2];
	struct amupmu_pmu_read rd;
	struct amupmu_info info;
	int ret;

	ASSERT_EQ(0, amupmu_query(self->fd, &info, NULL, 0));
	EXPECT_EQ(0, memcmp(&info, &self->ref, sizeof(info))) {
		TH_LOG("%s: the INFO answer changed", what);
	}
	if (!self->sessions)
		return;
	ret = amupmu_pmu_read(self->fd, 0, vals, 2, &rd);
	ASSERT_EQ(0, ret) {
		TH_LOG("%s: READ of the state session: %s", what, strerror(-ret));
	}
	EXPECT_EQ(self->ref_rd.state, rd.state);
	EXPECT_EQ(self->ref_rd.time_enabled, rd.time_enabled) {
		TH_LOG("%s: the group's time_enabled changed", what);
	}
	EXPECT_EQ(self->ref_rd.time_running, rd.time_running);
	EXPECT_EQ(0, memcmp(vals, self->ref_vals, sizeof(vals))) {
		TH_LOG("%s: the group's totals changed", what);
	}
	ret = amupmu_pmu_ctl(self->fresh, AMUPMU_PMU_CTL_RESET);
	EXPECT_EQ(-ENODEV, ret) {
		TH_LOG("%s: the fresh session has a group now", what);
	}
}

/* Issue @b (@len bytes meaningful), expect -@err, nothing written, same state. */
static void expect_refused(struct __test_metadata *_metadata, FIXTURE_DATA(abi) *self,
			   const FIXTURE_VARIANT(abi) *v, unsigned long cmd,
			   unsigned char *b, size_t len, int err, const char *what)
{
	static unsigned char before[BUF_SZ];
	int fd = v->on_fresh ? self->fresh : self->fd, ret;

	memcpy(before, b, len);
	ret = do_ioctl(fd, cmd, b);
	EXPECT_EQ(-err, ret) {
		TH_LOG("%s %s: expected %s, got %s", v->name, what, strerror(err),
		       ret ? strerror(-ret) : "success");
	}
	EXPECT_EQ(0, memcmp(before, b, len)) {
		TH_LOG("%s %s: the refused call wrote its argument", v->name, what);
	}
	if (!ret && v->cmd == AMUPMU_PMU_CONFIG)
		amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_RELEASE);
	expect_state(_metadata, self, what);
	self->cases++;
}

static void expect_accepted(struct __test_metadata *_metadata, FIXTURE_DATA(abi) *self,
			    const FIXTURE_VARIANT(abi) *v, unsigned char *b, const char *what)
{
	int fd = v->on_fresh ? self->fresh : self->fd, ret;

	/* no usable AMU: past the generic checks, a valid request is EOPNOTSUPP */
	if (v->amu && !self->amu) {
		__u32 size;

		memcpy(&size, b, sizeof(size));
		expect_refused(_metadata, self, v, v->cmd, b, size, EOPNOTSUPP, what);
		return;
	}
	ret = do_ioctl(fd, v->cmd, b);
	EXPECT_EQ(0, ret) {
		TH_LOG("%s %s: %s", v->name, what, strerror(-ret));
	}
	if (!ret && v->cmd == AMUPMU_PMU_CONFIG)
		EXPECT_EQ(0, amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_RELEASE));
	expect_state(_metadata, self, what);
	self->cases++;
}

FIXTURE_SETUP(abi)
{
	static struct amupmu_cpumask possible;
	struct amupmu_pmu_config cfg;
	cpu_set_t set;

	self->fd = self->fresh = -1;
	ASSERT_EQ(0, amupmu_possible_cpus(&possible));
	self->nr_cpu_ids = possible.nr;
	AMUPMU_OPEN_DEVICE(self->fd);
	self->fresh = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fresh);
	ASSERT_EQ(0, amupmu_query(self->fd, &self->ref, NULL, 0));
	self->sessions = amupmu_pmu_sessions_work(&self->ref);
	self->amu = self->ref.features & AMUPMU_FEAT_AMU;
	TH_LOG("backend: PMU in %s, %s, %s", amupmu_pmu_mode_name(&self->ref),
	       self->ref.features & AMUPMU_FEAT_MOCK ? "mock AMU/SPE" : "hardware AMU/SPE",
	       self->amu ? "AMU in use" : "no usable AMU (AMU_READ: EOPNOTSUPP)");

	amupmu_pmu_event_set(&self->ev[0], PMUV3_EV_CPU_CYCLES, 0);
	amupmu_pmu_event_set(&self->ev[1], PMUV3_EV_CPU_CYCLES, AMUPMU_EV_USER_ONLY);
	self->cpus[0] = 1;	/* CPU 0 */
	if (!self->sessions)
		return;
	/* the state session: count a little on CPU 0, then disable */
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	amupmu_pmu_config_init(&cfg, self->ev, 2, self->cpus, 8);
	ASSERT_EQ(0, amupmu_ioctl(self->fd, AMUPMU_PMU_CONFIG, &cfg));
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	for (volatile int i = 0; i < 100000; i++)
		;
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
	ASSERT_EQ(0, amupmu_pmu_read(self->fd, 0, self->ref_vals, 2, &self->ref_rd));
	ASSERT_LT(0ULL, self->ref_vals[0].value);
}

FIXTURE_TEARDOWN(abi)
{
	if (self->fresh >= 0)
		close(self->fresh);
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(abi, sweep)
{
	static unsigned char b[BUF_SZ];
	static const size_t small[] = { 0, 4 };
	const size_t tails[] = { 1, 8 };
	const size_t big[] = { AMUPMU_SIZE_MAX + 1, 0xffffffff };
	bool full = !variant->pmu || self->sessions;
	unsigned int nr, bit, dir, cmd_end;
	char what[96];
	size_t i, r, pos;
	__u32 size;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	TH_LOG("%s: struct %zu bytes, first version %zu%s", variant->name, variant->size,
	       variant->min_size, full ? "" : " (no PMU sessions here: dispatcher checks only)");

	/* below the first version */
	for (i = 0; i <= ARRAY_SIZE(small); i++) {
		size = i < ARRAY_SIZE(small) ? small[i] : variant->min_size - 1;
		build(self, variant, b);
		memcpy(b, &size, sizeof(size));
		snprintf(what, sizeof(what), "size %u", size);
		expect_refused(_metadata, self, variant, variant->cmd, b, variant->size, EINVAL,
			       what);
	}
	/* larger, with one non-zero byte in the unknown tail */
	for (i = 0; i < ARRAY_SIZE(tails); i++) {
		for (pos = 0; pos < tails[i]; pos++) {
			build(self, variant, b);
			size = variant->size + tails[i];
			memcpy(b, &size, sizeof(size));
			b[variant->size + pos] = 0x80;
			snprintf(what, sizeof(what), "size %u, tail byte %zu non-zero", size,
				 variant->size + pos);
			expect_refused(_metadata, self, variant, variant->cmd, b, size, E2BIG,
				       what);
		}
	}
	/* above the maximum */
	for (i = 0; i < ARRAY_SIZE(big); i++) {
		build(self, variant, b);
		size = big[i];
		memcpy(b, &size, sizeof(size));
		snprintf(what, sizeof(what), "size %u", size);
		expect_refused(_metadata, self, variant, variant->cmd, b, variant->size, E2BIG,
			       what);
	}
	/* unknown commands: every other nr of the type, and direction / size bits */
	cmd_end = amupmu_cmd_end(&self->ref);
	EXPECT_EQ((unsigned int)AMUPMU_CMD_SPE_READ + 1, cmd_end) {
		TH_LOG("supported_ioctls 0x%llx", (unsigned long long)self->ref.supported_ioctls);
	}
	for (nr = 0; nr < 256; nr++) {
		if (_IO(AMUPMU_TYPE, nr) == variant->cmd)
			continue;
		/* the other commands' lines cover their own nr */
		if (nr >= AMUPMU_CMD_BASE && nr < cmd_end)
			continue;
		build(self, variant, b);
		snprintf(what, sizeof(what), "as nr 0x%x", nr);
		expect_refused(_metadata, self, variant, _IO(AMUPMU_TYPE, nr), b, variant->size,
			       ENOTTY, what);
	}
	for (dir = 1; dir < 4; dir++) {
		build(self, variant, b);
		snprintf(what, sizeof(what), "with direction %u and size bits", dir);
		expect_refused(_metadata, self, variant,
			       _IOC(dir, AMUPMU_TYPE, _IOC_NR(variant->cmd), variant->size), b,
			       variant->size, ENOTTY, what);
	}
	build(self, variant, b);
	expect_refused(_metadata, self, variant, _IOC(0, AMUPMU_TYPE + 1, _IOC_NR(variant->cmd), 0),
		       b, variant->size, ENOTTY, "with the next type");
	/* ABI 1's type (0xB7: remoteproc's and nsfs's in ioctl-number.rst) */
	build(self, variant, b);
	expect_refused(_metadata, self, variant, _IO(AMUPMU_TYPE_ABI1, _IOC_NR(variant->cmd)),
		       b, variant->size, ENOTTY, "with ABI 1's type 0xB7");

	if (!full)
		goto out;
	/* flags and reserved bits, one at a time */
	for (bit = 0; bit < 32; bit++) {
		build(self, variant, b);
		*(__u32 *)(b + variant->flags) = 1U << bit;
		snprintf(what, sizeof(what), "flags bit %u", bit);
		/* a flag the command has (ABI 2.3) is another test's */
		if (!(variant->valid_flags & 1U << bit))
			expect_refused(_metadata, self, variant, variant->cmd, b, variant->size,
				       EINVAL, what);
		for (r = 0; r < ARRAY_SIZE(variant->reserved); r++) {
			if (variant->reserved[r] == NO_FIELD)
				continue;
			build(self, variant, b);
			*(__u32 *)(b + variant->reserved[r]) = 1U << bit;
			snprintf(what, sizeof(what), "reserved field at %zu bit %u",
				 variant->reserved[r], bit);
			expect_refused(_metadata, self, variant, variant->cmd, b, variant->size,
				       EINVAL, what);
		}
	}
	/* zero tails are accepted, up to AMUPMU_SIZE_MAX */
	{
		const size_t ok_sizes[] = { variant->size, variant->size + 1, variant->size + 8,
					    AMUPMU_SIZE_MAX };

		for (i = 0; i < ARRAY_SIZE(ok_sizes); i++) {
			build(self, variant, b);
			size = ok_sizes[i];
			memcpy(b, &size, sizeof(size));
			snprintf(what, sizeof(what), "size %u, zero tail", size);
			expect_accepted(_metadata, self, variant, b, what);
			EXPECT_TRUE(all_bytes(b + variant->size, BUF_SZ - variant->size, 0)) {
				TH_LOG("%s %s: the unknown tail was written", variant->name, what);
			}
		}
	}
out:
	TH_LOG("%s: %u cases", variant->name, self->cases);
	printf("# AMUPMU-FIGURE abi-%s cases=%u passed=%u\n", variant->name, self->cases,
	       _metadata->passed ? self->cases : 0);
	fflush(stdout);
}

TEST_HARNESS_MAIN
