// SPDX-License-Identifier: GPL-2.0
/*
 * AMUPMU_INFO: the handshake ioctl of /dev/amupmu against the ABI contract
 * of include/uapi/linux/amupmu.h -- size and flag handling (iommufd style),
 * unknown commands, the per-CPU entry array, and "a refused request changes
 * nothing". Backend independent: it needs only the loaded module.
 */
#include <pthread.h>
#include <sys/mman.h>

#include "amupmu_test.h"

#define INFO_SZ		sizeof(struct amupmu_info)
#define ENTRY_SZ	sizeof(struct amupmu_cpu_info)
/* One past the last command this header defines (ABI 2 has no AMUPMU_CMD_LAST). */
#define HDR_CMD_END	(AMUPMU_CMD_SPE_READ + 1)
/* Room for struct amupmu_info followed by an unknown, larger tail. */
#define BIG_SZ		8192
/* The largest struct size and cpu_entry_size the driver accepts (the header). */
#define MAX_SZ		AMUPMU_SIZE_MAX

#define CONCURRENT_THREADS	4
#define CONCURRENT_CALLS	2000

union info_buf {
	struct amupmu_info info;
	unsigned char raw[BIG_SZ];
};

FIXTURE(info) {
	int fd;
	unsigned int nr_cpu_ids;
	struct amupmu_info ref;		/* exact-size answer */
	struct amupmu_cpu_info *ref_cpus;	/* nr_cpu_ids entries */
	bool shared_off;	/* this test turned pmu_shared off: teardown turns it on */
};

FIXTURE_SETUP(info)
{
	static struct amupmu_cpumask possible;

	self->fd = -1;
	ASSERT_EQ(0, amupmu_possible_cpus(&possible));
	ASSERT_LT(0U, possible.nr);
	self->nr_cpu_ids = possible.nr;

	AMUPMU_OPEN_DEVICE(self->fd);

	self->ref_cpus = calloc(self->nr_cpu_ids, ENTRY_SZ);
	ASSERT_NE(NULL, self->ref_cpus);
	ASSERT_EQ(0, amupmu_query(self->fd, &self->ref, self->ref_cpus,
				  self->nr_cpu_ids));
}

FIXTURE_TEARDOWN(info)
{
	if (self->shared_off && amupmu_set_pmu_shared(true, NULL))
		TH_LOG("could not turn %s back on", AMUPMU_PMU_SHARED_PARAM);
	free(self->ref_cpus);
	if (self->fd >= 0)
		close(self->fd);
}

/* The output fields of @got equal the reference answer. */
static void expect_same_answer(struct __test_metadata *_metadata,
			       const struct amupmu_info *ref,
			       const struct amupmu_info *got)
{
	EXPECT_EQ(0U, got->flags);
	EXPECT_EQ(ref->abi_major, got->abi_major);
	EXPECT_EQ(ref->abi_minor, got->abi_minor);
	EXPECT_EQ(ref->features, got->features);
	EXPECT_EQ(ref->supported_ioctls, got->supported_ioctls);
	EXPECT_EQ(ref->pmu_owner, got->pmu_owner);
	EXPECT_EQ(ref->nr_cpus, got->nr_cpus);
	EXPECT_EQ(ref->cpu_entry_size, got->cpu_entry_size);
	EXPECT_EQ(0U, got->__reserved);
	EXPECT_EQ(ref->kernel_el, got->kernel_el);
	EXPECT_EQ(ref->clock, got->clock);
}

/*
 * Issue @cmd on @arg (@arg_len bytes, plus @cpus_len bytes at @cpus if not
 * NULL), expect it to fail with @err and to have written nothing.
 */
static void expect_refused(struct __test_metadata *_metadata, int fd,
			   unsigned long cmd, void *arg, size_t arg_len,
			   void *cpus, size_t cpus_len, int err,
			   const char *what)
{
	unsigned char *before = malloc(arg_len + cpus_len);
	int ret;

	ASSERT_NE(NULL, before);
	memcpy(before, arg, arg_len);
	if (cpus)
		memcpy(before + arg_len, cpus, cpus_len);

	ret = amupmu_ioctl(fd, cmd, arg);
	EXPECT_EQ(-err, ret) {
		TH_LOG("%s: expected %s, got %s", what, strerror(err),
		       ret ? strerror(-ret) : "success");
	}
	EXPECT_EQ(0, memcmp(before, arg, arg_len)) {
		TH_LOG("%s: refused request wrote its argument", what);
	}
	if (cpus) {
		EXPECT_EQ(0, memcmp(before + arg_len, cpus, cpus_len)) {
			TH_LOG("%s: refused request wrote the CPU array", what);
		}
	}
	free(before);
}

/* Entries buffer of @n entries of @entry_size bytes, all AMUPMU_FILL_BYTE. */
static unsigned char *alloc_entries(struct __test_metadata *_metadata,
				    size_t n, size_t entry_size)
{
	unsigned char *p = malloc(n * entry_size);

	ASSERT_NE(NULL, p);
	memset(p, AMUPMU_FILL_BYTE, n * entry_size);
	return p;
}

/*
 * Check an entry array written with @entry_size for @written entries out of
 * @total: the first @written match the reference (tail beyond the kernel's
 * entry zero), the rest are untouched.
 */
static void expect_entries(struct __test_metadata *_metadata,
			   FIXTURE_DATA(info) *self, const unsigned char *buf,
			   size_t entry_size, size_t written, size_t total)
{
	size_t i, cmp = entry_size < ENTRY_SZ ? entry_size : ENTRY_SZ;

	for (i = 0; i < total; i++) {
		const unsigned char *e = buf + i * entry_size;

		if (i >= written) {
			EXPECT_TRUE(all_bytes(e, entry_size, AMUPMU_FILL_BYTE)) {
				TH_LOG("entry %zu (beyond nr_cpus %zu) written",
				       i, written);
			}
			continue;
		}
		EXPECT_EQ(0, memcmp(e, &self->ref_cpus[i], cmp)) {
			TH_LOG("entry %zu (entry size %zu) differs from the reference",
			       i, entry_size);
		}
		if (entry_size > ENTRY_SZ) {
			EXPECT_TRUE(all_bytes(e + ENTRY_SZ, entry_size - ENTRY_SZ, 0)) {
				TH_LOG("entry %zu: bytes beyond %zu not zero-filled",
				       i, ENTRY_SZ);
			}
		}
	}
}

TEST_F(info, device_opens)
{
	struct stat st;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	ASSERT_EQ(0, fstat(self->fd, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(info, exact_size)
{
	const struct amupmu_info *info = &self->ref;
	__u64 known_cmds = (1ULL << (HDR_CMD_END - AMUPMU_CMD_BASE)) - 1;
	unsigned int i;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	EXPECT_EQ(INFO_SZ, info->size);
	EXPECT_EQ(0U, info->flags);
	EXPECT_EQ((__u32)AMUPMU_ABI_MAJOR, info->abi_major);
	/* 2.1 and later: AMUPMU_AMU_READ and the AMU fields of the entries */
	EXPECT_LE((__u32)AMUPMU_ABI_MINOR, info->abi_minor);
	EXPECT_NE(AMUPMU_SENTINEL32, info->abi_minor);
	EXPECT_TRUE(!!(info->supported_ioctls & (1ULL << (AMUPMU_CMD_AMU_READ - AMUPMU_CMD_BASE)))) {
		TH_LOG("supported_ioctls 0x%llx lacks AMUPMU_AMU_READ (ABI 2.1)",
		       (unsigned long long)info->supported_ioctls);
	}
	EXPECT_TRUE(!!(info->supported_ioctls & (1ULL << (AMUPMU_CMD_SPE_READ - AMUPMU_CMD_BASE)))) {
		TH_LOG("supported_ioctls 0x%llx lacks AMUPMU_SPE_READ (ABI 2.2)",
		       (unsigned long long)info->supported_ioctls);
	}
	/* 2.2: who owns SPE; none exactly when no CPU has SPE */
	EXPECT_LE(info->spe_owner, (__u32)AMUPMU_SPE_OWNER_UNCLAIMED);
	EXPECT_EQ(!(info->features & AMUPMU_FEAT_SPE), info->spe_owner == AMUPMU_SPE_OWNER_NONE) {
		TH_LOG("features 0x%llx, spe_owner %u", (unsigned long long)info->features,
		       info->spe_owner);
	}
	EXPECT_EQ(0U, info->__reserved2);
	EXPECT_TRUE(!!(info->supported_ioctls & 1));
	EXPECT_EQ(0ULL, info->supported_ioctls & ~known_cmds) {
		TH_LOG("supported_ioctls 0x%llx has commands past AMUPMU_SPE_READ",
		       (unsigned long long)info->supported_ioctls);
	}
	EXPECT_EQ(0ULL, info->features & ~(__u64)(AMUPMU_FEAT_PMU_SHARED * 2 - 1)) {
		TH_LOG("unknown feature bits in 0x%llx",
		       (unsigned long long)info->features);
	}
	EXPECT_GE((__u32)AMUPMU_PMU_OWNER_AMUPMU, info->pmu_owner);
	EXPECT_EQ(self->nr_cpu_ids, info->nr_cpus);
	EXPECT_EQ(ENTRY_SZ, info->cpu_entry_size);
	EXPECT_EQ(0U, info->__reserved);
	EXPECT_EQ((__u64)(uintptr_t)self->ref_cpus, info->cpus_uptr);
	EXPECT_TRUE(info->kernel_el == 1 || info->kernel_el == 2) {
		TH_LOG("kernel_el %u", info->kernel_el);
	}
	EXPECT_TRUE(info->clock == AMUPMU_CLOCK_CNTVCT || info->clock == AMUPMU_CLOCK_CNTPCT) {
		TH_LOG("clock %u", info->clock);
	}
	for (i = 0; i < self->nr_cpu_ids; i++) {
		EXPECT_EQ(i, self->ref_cpus[i].cpu);
		EXPECT_EQ(0U, self->ref_cpus[i].__reserved);
	}

	TH_LOG("ABI %u.%u features 0x%llx pmu_owner %u nr_cpus %u kernel_el %u clock %u",
	       info->abi_major, info->abi_minor,
	       (unsigned long long)info->features, info->pmu_owner,
	       info->nr_cpus, info->kernel_el, info->clock);
}

/*
 * kernel_el is the exception level the board booted the kernel at: 1 on
 * QEMU's plain -M virt, 2 on virtualization=on (VHE). The expectation
 * comes from the kernel log (KVM's "VHE mode initialized" / "started at
 * EL1"), else from the board line the harness passes.
 */
TEST_F(info, kernel_el_matches_boot)
{
	char how[256], board[512];
	unsigned int want;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	amupmu_board_line(board, sizeof(board));
	want = amupmu_boot_kernel_el(how, sizeof(how));
	TH_LOG("board \"%s\": INFO kernel_el %u, boot says %u (%s)", board,
	       self->ref.kernel_el, want, how);
	if (!want)
		SKIP(return, "the boot does not tell the kernel's exception level (%s)", how);
	EXPECT_EQ(want, self->ref.kernel_el);
}

/* INFO's features say @shared (FEAT_PMU_SHARED) and nothing else changed. */
static void expect_shared(struct __test_metadata *_metadata, FIXTURE_DATA(info) *self,
			  bool shared, const char *what)
{
	struct amupmu_info info;

	ASSERT_EQ(0, amupmu_query(self->fd, &info, NULL, 0));
	TH_LOG("%s: features 0x%llx, PMU in %s", what, (unsigned long long)info.features,
	       amupmu_pmu_mode_name(&info));
	EXPECT_EQ(shared, amupmu_pmu_shared(&info)) {
		TH_LOG("%s: FEAT_PMU_SHARED %s", what, shared ? "missing" : "still set");
	}
	EXPECT_EQ(self->ref.features & ~(__u64)AMUPMU_FEAT_PMU_SHARED,
		  info.features & ~(__u64)AMUPMU_FEAT_PMU_SHARED);
	EXPECT_EQ(self->ref.pmu_owner, info.pmu_owner);
}

/*
 * The PMU mode (ABI 2.3): exclusive exactly when amupmu owns the PMU;
 * shared only where the kernel's arm_pmu owns it, never with exclusive,
 * and exactly when the module parameter pmu_shared is Y there. Where the
 * kernel owns the PMU the parameter is turned off and on again, and INFO
 * follows it at once.
 */
TEST_F(info, pmu_mode)
{
	bool exclusive = self->ref.features & AMUPMU_FEAT_PMU_EXCLUSIVE;
	bool shared = amupmu_pmu_shared(&self->ref);
	char param[8];
	int ret;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	ret = amupmu_read_line(AMUPMU_PMU_SHARED_PARAM, param, sizeof(param));
	ASSERT_EQ(0, ret) {
		TH_LOG("%s: %s", AMUPMU_PMU_SHARED_PARAM, amupmu_errstr(ret));
	}
	TH_LOG("backend: PMU in %s; pmu_owner %u, features 0x%llx, pmu_shared=%s",
	       amupmu_pmu_mode_name(&self->ref), self->ref.pmu_owner,
	       (unsigned long long)self->ref.features, param);
	EXPECT_TRUE(!strcmp(param, "Y") || !strcmp(param, "N")) {
		TH_LOG("pmu_shared reads '%s'", param);
	}
	EXPECT_EQ(self->ref.pmu_owner == AMUPMU_PMU_OWNER_AMUPMU, exclusive);
	EXPECT_FALSE(exclusive && shared);
	if (shared) {
		EXPECT_EQ((__u32)AMUPMU_PMU_OWNER_KERNEL, self->ref.pmu_owner);
		EXPECT_TRUE(!!(self->ref.features & AMUPMU_FEAT_PMU));
	}
	if (self->ref.pmu_owner != AMUPMU_PMU_OWNER_KERNEL)
		return;
	EXPECT_EQ(param[0] == 'Y', shared);
	ASSERT_EQ(0, amupmu_set_pmu_shared(false, NULL));
	self->shared_off = true;
	expect_shared(_metadata, self, false, "pmu_shared=N");
	ASSERT_EQ(0, amupmu_set_pmu_shared(true, NULL));
	self->shared_off = false;
	expect_shared(_metadata, self, true, "pmu_shared=Y");
	/* as found */
	if (param[0] != 'Y')
		ASSERT_EQ(0, amupmu_set_pmu_shared(false, NULL));
}

/* The sample clock is the kernel's: CNTPCT_EL0 on a VHE host, CNTVCT_EL0 at EL1. */
TEST_F(info, clock_matches_kernel_el)
{
	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	TH_LOG("kernel_el %u, clock %u (%s)", self->ref.kernel_el, self->ref.clock,
	       self->ref.clock == AMUPMU_CLOCK_CNTPCT ? "CNTPCT_EL0" :
	       self->ref.clock == AMUPMU_CLOCK_CNTVCT ? "CNTVCT_EL0" : "?");
	EXPECT_EQ(self->ref.kernel_el == 2 ? (__u32)AMUPMU_CLOCK_CNTPCT :
					     (__u32)AMUPMU_CLOCK_CNTVCT, self->ref.clock);
}

/*
 * A caller built against ABI 1 passes the 56-byte struct: accepted, and
 * nothing is written past it (kernel_el and clock are beyond).
 */
TEST_F(info, size_ver0_accepted)
{
	union info_buf b;
	int ret;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	memset(&b, AMUPMU_FILL_BYTE, sizeof(b));
	amupmu_info_init(&b.info, NULL, 0, 0);
	b.info.size = AMUPMU_INFO_SIZE_VER0;
	memset(b.raw + AMUPMU_INFO_SIZE_VER0, AMUPMU_FILL_BYTE, sizeof(b) - AMUPMU_INFO_SIZE_VER0);
	ret = amupmu_ioctl(self->fd, AMUPMU_INFO, &b);
	ASSERT_EQ(0, ret) {
		TH_LOG("INFO size %u: %s", AMUPMU_INFO_SIZE_VER0, strerror(-ret));
	}
	EXPECT_EQ(self->ref.abi_major, b.info.abi_major);
	EXPECT_EQ(self->ref.features, b.info.features);
	EXPECT_TRUE(all_bytes(b.raw + AMUPMU_INFO_SIZE_VER0, sizeof(b) - AMUPMU_INFO_SIZE_VER0,
			      AMUPMU_FILL_BYTE)) {
		TH_LOG("INFO size %u wrote past its struct", AMUPMU_INFO_SIZE_VER0);
	}
}

/*
 * Entries of the first published size (112 bytes, before
 * pmu_counters_free): filled for 112 bytes at a 112-byte stride, nothing
 * written beyond.
 */
TEST_F(info, entry_size_ver0)
{
	const size_t esz = AMUPMU_CPU_INFO_SIZE_VER0;
	unsigned int n = self->nr_cpu_ids;
	struct amupmu_info info;
	unsigned char *buf;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	buf = alloc_entries(_metadata, n + 1, esz);
	amupmu_info_init(&info, buf, n, esz);
	ASSERT_EQ(0, amupmu_ioctl(self->fd, AMUPMU_INFO, &info));
	expect_same_answer(_metadata, &self->ref, &info);
	expect_entries(_metadata, self, buf, esz, n, n + 1);
	free(buf);
}

/*
 * Entries of ABI 2.0's size (120 bytes, before the AMU fields and the ID
 * frames of 2.1): filled for 120 bytes at a 120-byte stride, nothing
 * written beyond, and those 120 bytes are the same as in a 2.1 entry.
 */
TEST_F(info, entry_size_ver1)
{
	const size_t esz = AMUPMU_CPU_INFO_SIZE_VER1;
	unsigned int n = self->nr_cpu_ids;
	struct amupmu_info info;
	unsigned char *buf;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	buf = alloc_entries(_metadata, n + 1, esz);
	amupmu_info_init(&info, buf, n, esz);
	ASSERT_EQ(0, amupmu_ioctl(self->fd, AMUPMU_INFO, &info));
	expect_same_answer(_metadata, &self->ref, &info);
	EXPECT_EQ((__u32)AMUPMU_CPU_INFO_SIZE_VER2, info.cpu_entry_size);
	expect_entries(_metadata, self, buf, esz, n, n + 1);
	free(buf);
}

/*
 * An entry size between ABI 2.0's and 2.1's (a multiple of 8): each
 * entry is written for that many bytes, the AMU fields cut where it ends.
 */
TEST_F(info, entry_size_between_ver1_and_ver2)
{
	const size_t esz = AMUPMU_CPU_INFO_SIZE_VER1 + 88;
	unsigned int n = self->nr_cpu_ids;
	struct amupmu_info info;
	unsigned char *buf;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	_Static_assert(AMUPMU_CPU_INFO_SIZE_VER1 + 88 < AMUPMU_CPU_INFO_SIZE_VER2, "between");
	buf = alloc_entries(_metadata, n + 1, esz);
	amupmu_info_init(&info, buf, n, esz);
	ASSERT_EQ(0, amupmu_ioctl(self->fd, AMUPMU_INFO, &info));
	expect_same_answer(_metadata, &self->ref, &info);
	expect_entries(_metadata, self, buf, esz, n, n + 1);
	free(buf);
}

/*
 * The ABI 2.1 part of each entry (the AMU fields and the ID frames) follows
 * its flags: zero without AMUPMU_CPU_AMU / AMUPMU_CPU_*_FRAME; with
 * AMUPMU_CPU_AMU_OFF no AMU register was read (amu_version still says what
 * the ID register reports); the frames' reserved words are zero.
 */
TEST_F(info, ver2_fields_follow_flags)
{
	static const struct amupmu_id_frame zero_frame;
	unsigned int i;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	EXPECT_EQ((__u32)AMUPMU_CPU_INFO_SIZE_VER2, self->ref.cpu_entry_size);
	for (i = 0; i < self->nr_cpu_ids; i++) {
		const struct amupmu_cpu_info *e = &self->ref_cpus[i];
		bool amu = e->flags & AMUPMU_CPU_AMU;

		EXPECT_FALSE(amu && (e->flags & AMUPMU_CPU_AMU_OFF)) {
			TH_LOG("cpu%u: flags 0x%x: AMU and AMU_OFF", i, e->flags);
		}
		EXPECT_FALSE(!amu && (e->flags & AMUPMU_CPU_AMU_ZERO)) {
			TH_LOG("cpu%u: flags 0x%x: AMU_ZERO without AMU", i, e->flags);
		}
		if (!amu) {
			EXPECT_EQ(0ULL, e->amcr);
			EXPECT_EQ(0U, e->amcntenset0);
			EXPECT_EQ(0U, e->amcntenset1);
			EXPECT_TRUE(all_bytes(e->amevtyper0, sizeof(e->amevtyper0), 0));
			EXPECT_TRUE(all_bytes(e->amevtyper1, sizeof(e->amevtyper1), 0));
			EXPECT_EQ(0ULL, e->amcfgr);
			EXPECT_EQ(0ULL, e->amcgcr);
		}
		if (!(e->flags & AMUPMU_CPU_AMU_FRAME)) {
			EXPECT_EQ(0, memcmp(&e->amu_frame, &zero_frame, sizeof(zero_frame))) {
				TH_LOG("cpu%u: amu_frame written without AMUPMU_CPU_AMU_FRAME", i);
			}
		}
		if (!(e->flags & AMUPMU_CPU_PMU_FRAME)) {
			EXPECT_EQ(0, memcmp(&e->pmu_frame, &zero_frame, sizeof(zero_frame))) {
				TH_LOG("cpu%u: pmu_frame written without AMUPMU_CPU_PMU_FRAME", i);
			}
		}
		EXPECT_EQ(0U, e->amu_frame.__reserved);
		EXPECT_EQ(0U, e->pmu_frame.__reserved);
	}
}

/* nr_cpus 0 asks only: no array needed, nr_cpus and entry size reported. */
TEST_F(info, ask_only)
{
	struct amupmu_info info;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	amupmu_info_init(&info, NULL, 0, 0);
	ASSERT_EQ(0, amupmu_ioctl(self->fd, AMUPMU_INFO, &info));
	expect_same_answer(_metadata, &self->ref, &info);
	EXPECT_EQ(0ULL, info.cpus_uptr);
}

/* A request with an array pointer but nr_cpus 0 writes no entry. */
TEST_F(info, nr_cpus_zero_writes_nothing)
{
	unsigned char *buf;
	struct amupmu_info info;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	buf = alloc_entries(_metadata, 1, ENTRY_SZ);
	amupmu_info_init(&info, buf, 0, ENTRY_SZ);
	ASSERT_EQ(0, amupmu_ioctl(self->fd, AMUPMU_INFO, &info));
	expect_same_answer(_metadata, &self->ref, &info);
	expect_entries(_metadata, self, buf, ENTRY_SZ, 0, 1);
	free(buf);
}

TEST_F(info, size_below_ver0)
{
	union info_buf b;
	char what[64];
	__u32 size;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	for (size = 0; size < AMUPMU_INFO_SIZE_VER0; size++) {
		memset(&b, 0, sizeof(b));
		amupmu_info_init(&b.info, NULL, 0, 0);
		b.info.size = size;
		snprintf(what, sizeof(what), "size %u", size);
		expect_refused(_metadata, self->fd, AMUPMU_INFO, &b, INFO_SZ,
			       NULL, 0, EINVAL, what);
	}
}

TEST_F(info, size_nonzero_tail_e2big)
{
	union info_buf b;
	char what[64];
	size_t pos;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	for (pos = INFO_SZ; pos < INFO_SZ + 8; pos++) {
		memset(&b, 0, sizeof(b));
		amupmu_info_init(&b.info, NULL, 0, 0);
		b.info.size = INFO_SZ + 8;
		b.raw[pos] = 0x01;
		snprintf(what, sizeof(what), "size %zu, tail byte %zu set",
			 INFO_SZ + 8, pos);
		expect_refused(_metadata, self->fd, AMUPMU_INFO, &b, INFO_SZ + 8,
			       NULL, 0, E2BIG, what);
	}
}

/* Sizes above 4096 bytes are refused whatever the tail holds. */
TEST_F(info, size_above_max)
{
	static const size_t sizes[] = { MAX_SZ + 1, MAX_SZ + 8, BIG_SZ };
	union info_buf b;
	char what[64];
	size_t i;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		memset(&b, 0, sizeof(b));
		amupmu_info_init(&b.info, NULL, 0, 0);
		b.info.size = sizes[i];
		snprintf(what, sizeof(what), "size %zu, zero tail", sizes[i]);
		expect_refused(_metadata, self->fd, AMUPMU_INFO, &b, sizes[i],
			       NULL, 0, E2BIG, what);
	}
}

TEST_F(info, size_larger_zero_tail)
{
	static const size_t sizes[] = { INFO_SZ + 1, INFO_SZ + 8, INFO_SZ + 64, MAX_SZ };
	union info_buf b;
	size_t i;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		memset(&b, 0, sizeof(b));
		amupmu_info_init(&b.info, NULL, 0, 0);
		b.info.size = sizes[i];
		ASSERT_EQ(0, amupmu_ioctl(self->fd, AMUPMU_INFO, &b)) {
			TH_LOG("size %zu with a zero tail refused", sizes[i]);
		}
		expect_same_answer(_metadata, &self->ref, &b.info);
		EXPECT_TRUE(all_bytes(b.raw + INFO_SZ, sizes[i] - INFO_SZ, 0)) {
			TH_LOG("size %zu: the unknown tail was written", sizes[i]);
		}
		EXPECT_TRUE(all_bytes(b.raw + sizes[i], BIG_SZ - sizes[i], 0));
	}
}

/* Each bit alone of a must-be-zero __u32 field at @offset -> EINVAL. */
static void expect_each_bit_refused(struct __test_metadata *_metadata, int fd,
				    size_t offset, const char *field)
{
	struct amupmu_info info;
	char what[64];
	unsigned int bit;
	__u32 v;

	for (bit = 0; bit < 32; bit++) {
		amupmu_info_init(&info, NULL, 0, 0);
		v = 1U << bit;
		memcpy((unsigned char *)&info + offset, &v, sizeof(v));
		snprintf(what, sizeof(what), "%s bit %u", field, bit);
		expect_refused(_metadata, fd, AMUPMU_INFO, &info, INFO_SZ,
			       NULL, 0, EINVAL, what);
	}
}

TEST_F(info, flags_each_bit)
{
	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	expect_each_bit_refused(_metadata, self->fd,
				offsetof(struct amupmu_info, flags), "flags");
}

TEST_F(info, reserved_nonzero)
{
	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	expect_each_bit_refused(_metadata, self->fd,
				offsetof(struct amupmu_info, __reserved), "__reserved");
}

TEST_F(info, unknown_commands)
{
	const struct {
		const char *name;
		unsigned long cmd;
	} cmds[] = {
		{ "one past AMUPMU_SPE_READ", _IO(AMUPMU_TYPE, HDR_CMD_END) },
		{ "one past supported_ioctls", _IO(AMUPMU_TYPE, amupmu_cmd_end(&self->ref)) },
		{ "AMUPMU_CMD_BASE - 1", _IO(AMUPMU_TYPE, AMUPMU_CMD_BASE - 1) },
		{ "nr 0", _IO(AMUPMU_TYPE, 0) },
		{ "nr 0xff", _IO(AMUPMU_TYPE, 0xff) },
		{ "type + 1", _IO(AMUPMU_TYPE + 1, AMUPMU_CMD_INFO) },
		{ "type - 1", _IO(AMUPMU_TYPE - 1, AMUPMU_CMD_INFO) },
		{ "type 0", _IO(0, AMUPMU_CMD_INFO) },
		{ "_IOR info", _IOR(AMUPMU_TYPE, AMUPMU_CMD_INFO, struct amupmu_info) },
		{ "_IOW info", _IOW(AMUPMU_TYPE, AMUPMU_CMD_INFO, struct amupmu_info) },
		{ "_IOWR info", _IOWR(AMUPMU_TYPE, AMUPMU_CMD_INFO, struct amupmu_info) },
		/* ABI 1's type: remoteproc's and nsfs's, never amupmu's again */
		{ "INFO with ABI 1's type 0xB7", _IO(AMUPMU_TYPE_ABI1, AMUPMU_CMD_INFO) },
		{ "PMU_CONFIG with type 0xB7", _IO(AMUPMU_TYPE_ABI1, AMUPMU_CMD_PMU_CONFIG) },
		{ "PMU_CTL with type 0xB7", _IO(AMUPMU_TYPE_ABI1, AMUPMU_CMD_PMU_CTL) },
		{ "PMU_READ with type 0xB7", _IO(AMUPMU_TYPE_ABI1, AMUPMU_CMD_PMU_READ) },
		{ "AMU_READ with type 0xB7", _IO(AMUPMU_TYPE_ABI1, AMUPMU_CMD_AMU_READ) },
		{ "_IOWR amu_read", _IOWR(AMUPMU_TYPE, AMUPMU_CMD_AMU_READ, struct amupmu_amu_read) },
	};
	struct amupmu_info info;
	size_t i;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		amupmu_info_init(&info, NULL, 0, 0);
		expect_refused(_metadata, self->fd, cmds[i].cmd, &info, INFO_SZ,
			       NULL, 0, ENOTTY, cmds[i].name);
	}
}

TEST_F(info, entry_size_too_small)
{
	struct amupmu_info info;
	unsigned char *buf;
	char what[64];
	__u32 size;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	buf = alloc_entries(_metadata, self->nr_cpu_ids, ENTRY_SZ);
	for (size = 0; size < AMUPMU_CPU_INFO_SIZE_VER0; size++) {
		amupmu_info_init(&info, buf, self->nr_cpu_ids, size);
		snprintf(what, sizeof(what), "cpu_entry_size %u", size);
		expect_refused(_metadata, self->fd, AMUPMU_INFO, &info, INFO_SZ,
			       buf, self->nr_cpu_ids * ENTRY_SZ, EINVAL, what);
	}
	free(buf);
}

TEST_F(info, cpus_uptr_null)
{
	struct amupmu_info info;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	amupmu_info_init(&info, NULL, self->nr_cpu_ids, ENTRY_SZ);
	expect_refused(_metadata, self->fd, AMUPMU_INFO, &info, INFO_SZ,
		       NULL, 0, EFAULT, "nr_cpus > 0, cpus_uptr 0");
}

TEST_F(info, cpus_uptr_bad)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t array = self->nr_cpu_ids * ENTRY_SZ;
	size_t len = ((array + page - 1) / page) * page + page;
	struct amupmu_info info;
	unsigned char *map, *guard;
	struct {
		const char *what;
		__u64 uptr;
	} bad[3];
	size_t i;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	guard = map + len - page;
	ASSERT_EQ(0, mprotect(guard, page, PROT_NONE));

	bad[0].what = "PROT_NONE page";
	bad[0].uptr = (uintptr_t)guard;
	bad[1].what = "address 1";
	bad[1].uptr = 1;
	bad[2].what = "kernel address";
	bad[2].uptr = 0xffff800000000000ULL;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		amupmu_info_init(&info, NULL, self->nr_cpu_ids, ENTRY_SZ);
		info.cpus_uptr = bad[i].uptr;
		expect_refused(_metadata, self->fd, AMUPMU_INFO, &info, INFO_SZ,
			       NULL, 0, EFAULT, bad[i].what);
	}

	/*
	 * The last entry straddles into the guard page: the first entries may
	 * have been written before the fault, the header must not be.
	 */
	amupmu_info_init(&info, guard - array + ENTRY_SZ / 2, self->nr_cpu_ids,
			 ENTRY_SZ);
	expect_refused(_metadata, self->fd, AMUPMU_INFO, &info, INFO_SZ,
		       NULL, 0, EFAULT, "array running into a PROT_NONE page");
	munmap(map, len);
}

/* Entry strides must keep __aligned_u64 aligned and stay within 4096. */
TEST_F(info, entry_size_unaligned_or_huge)
{
	static const __u32 sizes[] = {
		ENTRY_SZ + 1, ENTRY_SZ + 4, ENTRY_SZ + 7, MAX_SZ - 1, MAX_SZ + 8, 1u << 20,
		0xfffffff8u,
	};
	struct amupmu_info info;
	unsigned char *buf;
	char what[64];
	size_t i;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	buf = alloc_entries(_metadata, self->nr_cpu_ids, ENTRY_SZ);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		amupmu_info_init(&info, buf, self->nr_cpu_ids, sizes[i]);
		snprintf(what, sizeof(what), "cpu_entry_size %u", sizes[i]);
		expect_refused(_metadata, self->fd, AMUPMU_INFO, &info, INFO_SZ,
			       buf, self->nr_cpu_ids * ENTRY_SZ, EINVAL, what);
	}
	free(buf);
}

TEST_F(info, entry_size_larger_zero_filled)
{
	const size_t sizes[] = { ENTRY_SZ + 8, ENTRY_SZ + 64, 2 * ENTRY_SZ, MAX_SZ };
	unsigned int n = self->nr_cpu_ids;
	struct amupmu_info info;
	unsigned char *buf;
	size_t i;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		/* one spare entry after the array must stay untouched */
		buf = alloc_entries(_metadata, n + 1, sizes[i]);
		amupmu_info_init(&info, buf, n, sizes[i]);
		ASSERT_EQ(0, amupmu_ioctl(self->fd, AMUPMU_INFO, &info)) {
			TH_LOG("cpu_entry_size %zu refused", sizes[i]);
		}
		expect_same_answer(_metadata, &self->ref, &info);
		EXPECT_EQ(ENTRY_SZ, info.cpu_entry_size);
		expect_entries(_metadata, self, buf, sizes[i], n, n + 1);
		free(buf);
	}
}

TEST_F(info, nr_cpus_smaller_and_larger)
{
	unsigned int n = self->nr_cpu_ids, k;
	struct amupmu_info info;
	unsigned char *buf;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	/* entries 0 .. min(k, nr_cpu_ids) - 1 written, the rest untouched */
	for (k = 0; k <= n + 2; k++) {
		buf = alloc_entries(_metadata, n + 3, ENTRY_SZ);
		amupmu_info_init(&info, buf, k, ENTRY_SZ);
		ASSERT_EQ(0, amupmu_ioctl(self->fd, AMUPMU_INFO, &info)) {
			TH_LOG("nr_cpus %u refused", k);
		}
		expect_same_answer(_metadata, &self->ref, &info);
		expect_entries(_metadata, self, buf, ENTRY_SZ, k < n ? k : n, n + 3);
		free(buf);
	}
}

TEST_F(info, nr_cpus_is_possible)
{
	static struct amupmu_cpumask possible;
	unsigned int cpu, count = 0;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	ASSERT_EQ(0, amupmu_possible_cpus(&possible));
	for (cpu = 0; cpu < possible.nr; cpu++)
		count += possible.cpu[cpu];
	/* nr_cpu_ids: highest possible CPU + 1 (== count unless holes) */
	EXPECT_EQ(possible.nr, self->ref.nr_cpus);
	TH_LOG("possible CPUs: %u, nr_cpu_ids %u", count, possible.nr);
}

struct concurrent_arg {
	int fd;
	unsigned int nr;
	const struct amupmu_info *ref;
	const struct amupmu_cpu_info *ref_cpus;
	pthread_barrier_t *start;
	unsigned int failures;
	int first_err;
};

static void *concurrent_worker(void *p)
{
	struct concurrent_arg *a = p;
	struct amupmu_cpu_info *cpus = calloc(a->nr, ENTRY_SZ);
	struct amupmu_info info;
	unsigned int i;
	int ret;

	if (!cpus) {
		a->failures = CONCURRENT_CALLS;
		a->first_err = -ENOMEM;
		return NULL;
	}
	pthread_barrier_wait(a->start);
	for (i = 0; i < CONCURRENT_CALLS; i++) {
		ret = amupmu_query(a->fd, &info, cpus, a->nr);
		/* identical answers: same request, same array contents */
		info.cpus_uptr = a->ref->cpus_uptr;
		if (ret || memcmp(&info, a->ref, INFO_SZ) ||
		    memcmp(cpus, a->ref_cpus, a->nr * ENTRY_SZ)) {
			if (!a->failures++)
				a->first_err = ret;
		}
	}
	free(cpus);
	return NULL;
}

TEST_F(info, concurrent_calls)
{
	struct concurrent_arg args[CONCURRENT_THREADS];
	pthread_t threads[CONCURRENT_THREADS];
	pthread_barrier_t start;
	unsigned int i;

	AMUPMU_SKIPPED_IN_SETUP(self->fd);
	ASSERT_EQ(0, pthread_barrier_init(&start, NULL, CONCURRENT_THREADS));
	for (i = 0; i < CONCURRENT_THREADS; i++) {
		args[i] = (struct concurrent_arg) {
			.fd = self->fd,
			.nr = self->nr_cpu_ids,
			.ref = &self->ref,
			.ref_cpus = self->ref_cpus,
			.start = &start,
		};
		ASSERT_EQ(0, pthread_create(&threads[i], NULL, concurrent_worker,
					    &args[i]));
	}
	for (i = 0; i < CONCURRENT_THREADS; i++) {
		ASSERT_EQ(0, pthread_join(threads[i], NULL));
	}
	pthread_barrier_destroy(&start);

	for (i = 0; i < CONCURRENT_THREADS; i++) {
		EXPECT_EQ(0U, args[i].failures) {
			TH_LOG("thread %u: %u of %u calls failed or differed (first: %s)",
			       i, args[i].failures, CONCURRENT_CALLS,
			       args[i].first_err ? strerror(-args[i].first_err) :
			       "different answer");
		}
	}
}

TEST_HARNESS_MAIN
