// SPDX-License-Identifier: GPL-2.0
/*
 * The ABI of AMUPMU_AMU_READ (amupmu_amu_fixture.h): without a usable AMU
 * a valid request is EOPNOTSUPP and writes nothing; every size, flag,
 * reserved field, entry_size, nr_cpus, CPU set, cpus_len and pointer
 * check is refused with its errno and writes nothing back; larger entries
 * and CPU sets with zero tails are accepted; and the kernel logged no
 * oops or undefined instruction meanwhile (the last test).
 *
 * Errno order of AMUPMU_AMU_READ (the kernel's, amupmu_amu_cmd_read(); the
 * header lists the errnos without an order): the dispatcher's size checks
 * (EINVAL, E2BIG, EFAULT), then the struct's own fields (flags, reserved,
 * entry_size, nr_cpus above the maximum: EINVAL), then CAP_PERFMON
 * (EACCES, amupmu_priv_test's rows), then a usable AMU (EOPNOTSUPP), then
 * the CPU set (EINVAL, ENODEV, EFAULT) and the entries' room (EINVAL,
 * EFAULT). Where no CPU has a usable AMU the sweep below therefore expects
 * EOPNOTSUPP for the CPU-set and room checks, and the field errno before.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "amupmu_amu_fixture.h"

/* ---------------------------------------------------------------- no AMU */

/*
 * Production (no AMU anywhere, or amu=0): a valid request of every
 * possible CPU, of CPU 0 and of a larger entry are EOPNOTSUPP and write
 * nothing; the struct's own checks come first (the sweep below).
 */
TEST_F(amu, no_amu_eopnotsupp)
{
	unsigned int n = self->nr_cpu_ids < MAX_CPUS ? self->nr_cpu_ids : MAX_CPUS, cpu;
	struct amupmu_amu_read rd, before;
	unsigned char *buf, *copy;
	__u64 word = 0;
	int ret;

	AMU_BEGIN();
	if (self->usable)
		SKIP(return, "a usable AMU (the mock or the hardware's)");
	for (cpu = 0; cpu < n; cpu++)
		word |= 1ULL << cpu;
	buf = malloc(n * 2 * ENTRY_SZ);
	copy = malloc(n * 2 * ENTRY_SZ);
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, copy);
	memset(buf, AMUPMU_FILL_BYTE, n * 2 * ENTRY_SZ);
	memcpy(copy, buf, n * 2 * ENTRY_SZ);
	amupmu_amu_read_init(&rd, &word, sizeof(word), buf, n, ENTRY_SZ);
	before = rd;
	ret = amupmu_ioctl(self->fd, AMUPMU_AMU_READ, &rd);
	EXPECT_EQ(-EOPNOTSUPP, ret) {
		TH_LOG("AMU_READ of every CPU without an AMU: %s", amupmu_errstr(ret));
	}
	EXPECT_EQ(0, memcmp(&before, &rd, sizeof(rd)));
	EXPECT_EQ(0, memcmp(copy, buf, n * ENTRY_SZ));
	/* one CPU, an entry twice as large */
	word = 1;
	amupmu_amu_read_init(&rd, &word, sizeof(word), buf, 1, 2 * ENTRY_SZ);
	before = rd;
	ret = amupmu_ioctl(self->fd, AMUPMU_AMU_READ, &rd);
	EXPECT_EQ(-EOPNOTSUPP, ret);
	EXPECT_EQ(0, memcmp(&before, &rd, sizeof(rd)));
	EXPECT_EQ(0, memcmp(copy, buf, n * 2 * ENTRY_SZ));
	EXPECT_FALSE(!!(self->info.features & AMUPMU_FEAT_AMU));
	free(buf);
	free(copy);
}

/* ---------------------------------------------------------------- ABI sweep */

/*
 * Expect @rd to be refused with -@err, writing neither @rd nor @n bytes at
 * @entries. Without a usable AMU a request refused for what is checked
 * after the AMU (@before_amu false: the CPU set, the entries' room) is
 * EOPNOTSUPP instead.
 */
static void expect_refused(struct __test_metadata *_metadata, FIXTURE_DATA(amu) *self,
			   struct amupmu_amu_read *rd, void *entries, size_t n, int err,
			   bool before_amu, const char *what, unsigned int *cases)
{
	unsigned char before[AMUPMU_SIZE_MAX + 64];
	unsigned char *eb = NULL;
	size_t len = rd->size > READ_SZ && rd->size <= AMUPMU_SIZE_MAX ? rd->size : READ_SZ;
	int ret;

	memcpy(before, rd, len);
	if (n) {
		eb = malloc(n);
		ASSERT_NE(NULL, eb);
		memcpy(eb, entries, n);
	}
	ret = amupmu_ioctl(self->fd, AMUPMU_AMU_READ, rd);
	if (!self->usable && !before_amu)
		err = EOPNOTSUPP;
	EXPECT_EQ(-err, ret) {
		TH_LOG("AMU_READ %s: expected %s, got %s", what, strerror(err),
		       amupmu_errstr(ret));
	}
	EXPECT_EQ(0, memcmp(before, rd, len)) {
		TH_LOG("AMU_READ %s: the refused call wrote its argument", what);
	}
	if (n) {
		EXPECT_EQ(0, memcmp(eb, entries, n)) {
			TH_LOG("AMU_READ %s: the refused call wrote entries", what);
		}
		free(eb);
	}
	(*cases)++;
}

/*
 * The size, flags and reserved rules (before EOPNOTSUPP on every board),
 * and the fields': entry_size, nr_cpus, the CPU set, cpus_len; a refused
 * call writes nothing back.
 */
TEST_F(amu, abi_sweep)
{
	static unsigned char b[AMUPMU_SIZE_MAX + 64];
	static __u64 cpus[AMUPMU_AMU_CPUS_LEN_MAX / 8 + 1];
	struct amupmu_amu_read *rd = (void *)b;
	unsigned int n = self->nr_cpu_ids, cases = 0, bit, pos;
	size_t ebytes = 2 * (n + 2) * AMUPMU_AMU_ENTRY_SIZE_MAX;
	unsigned char *ent = malloc(ebytes);
	char what[96];
	__u32 size;
	size_t i;

	AMU_BEGIN();
	ASSERT_NE(NULL, ent);
	memset(ent, AMUPMU_FILL_BYTE, ebytes);
#define BUILD() do {								\
	memset(b, 0, sizeof(b));						\
	memset(cpus, 0, sizeof(cpus));						\
	cpus[0] = 1;								\
	amupmu_amu_read_init(rd, cpus, 8, ent, 1, ENTRY_SZ);			\
} while (0)
#define REFUSED(err, before_amu) \
	expect_refused(_metadata, self, rd, ent, ebytes, err, before_amu, what, &cases)

	/* every size below the first version */
	for (size = 0; size < AMUPMU_AMU_READ_SIZE_VER0; size++) {
		BUILD();
		rd->size = size;
		snprintf(what, sizeof(what), "size %u", size);
		REFUSED(EINVAL, true);
	}
	/* a non-zero unknown tail, and above the maximum */
	for (pos = READ_SZ; pos < READ_SZ + 8; pos++) {
		BUILD();
		rd->size = READ_SZ + 8;
		b[pos] = 0x40;
		snprintf(what, sizeof(what), "size %zu, tail byte %u non-zero", READ_SZ + 8, pos);
		REFUSED(E2BIG, true);
	}
	{
		static const __u32 big[] = { AMUPMU_SIZE_MAX + 1, AMUPMU_SIZE_MAX + 8, 0xffffffff };

		for (i = 0; i < ARRAY_SIZE(big); i++) {
			BUILD();
			rd->size = big[i];
			snprintf(what, sizeof(what), "size %u", big[i]);
			REFUSED(E2BIG, true);
		}
	}
	/* flags and __reserved, each bit */
	for (bit = 0; bit < 32; bit++) {
		BUILD();
		rd->flags = 1U << bit;
		snprintf(what, sizeof(what), "flags bit %u", bit);
		REFUSED(EINVAL, true);
		BUILD();
		rd->__reserved = 1U << bit;
		snprintf(what, sizeof(what), "__reserved bit %u", bit);
		REFUSED(EINVAL, true);
	}

	/* entry_size: below VER0, not a multiple of 8, above 4096 */
	for (size = 0; size < AMUPMU_AMU_CPU_SIZE_VER0; size += size < 64 ? 1 : 8) {
		BUILD();
		rd->entry_size = size;
		snprintf(what, sizeof(what), "entry_size %u", size);
		REFUSED(EINVAL, true);
	}
	{
		static const __u32 bad[] = {
			AMUPMU_AMU_CPU_SIZE_VER0 - 8, AMUPMU_AMU_CPU_SIZE_VER0 - 1,
			AMUPMU_AMU_CPU_SIZE_VER0 + 1, AMUPMU_AMU_CPU_SIZE_VER0 + 4,
			AMUPMU_AMU_CPU_SIZE_VER0 + 7, AMUPMU_AMU_ENTRY_SIZE_MAX - 4,
			AMUPMU_AMU_ENTRY_SIZE_MAX + 8, 1U << 20, 0xfffffff8,
		};

		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			BUILD();
			rd->entry_size = bad[i];
			snprintf(what, sizeof(what), "entry_size %u", bad[i]);
			REFUSED(EINVAL, true);
		}
	}
	/* nr_cpus: fewer than the set, above the maximum */
	BUILD();
	rd->nr_cpus = 0;
	snprintf(what, sizeof(what), "nr_cpus 0");
	REFUSED(EINVAL, false);
	if (n >= 2) {
		BUILD();
		cpus[0] = 3;
		rd->nr_cpus = 1;
		snprintf(what, sizeof(what), "nr_cpus 1 for CPUs 0-1");
		REFUSED(EINVAL, false);
	}
	BUILD();
	rd->nr_cpus = AMUPMU_AMU_READ_CPUS_MAX + 1;
	snprintf(what, sizeof(what), "nr_cpus %u", AMUPMU_AMU_READ_CPUS_MAX + 1);
	REFUSED(EINVAL, true);
	BUILD();
	rd->nr_cpus = 0xffffffff;
	snprintf(what, sizeof(what), "nr_cpus 0xffffffff");
	REFUSED(EINVAL, true);
	/* the CPU set: empty, a CPU that is not possible, cpus_len */
	BUILD();
	cpus[0] = 0;
	snprintf(what, sizeof(what), "empty CPU set");
	REFUSED(EINVAL, false);
	BUILD();
	memset(cpus, 0, sizeof(cpus));
	rd->cpus_len = AMUPMU_AMU_CPUS_LEN_MAX;
	snprintf(what, sizeof(what), "empty CPU set of %u bytes", AMUPMU_AMU_CPUS_LEN_MAX);
	REFUSED(EINVAL, false);
	if (n < AMUPMU_AMU_CPUS_LEN_MAX * 8) {
		BUILD();
		cpus[n / 64] |= 1ULL << (n % 64);
		rd->cpus_len = (n / 64 + 1) * 8;
		rd->nr_cpus = 2;
		snprintf(what, sizeof(what), "CPU %u (nr_cpu_ids %u)", n, n);
		REFUSED(ENODEV, false);
	}
	BUILD();
	cpus[AMUPMU_AMU_CPUS_LEN_MAX / 8 - 1] = 1ULL << 63;
	rd->cpus_len = AMUPMU_AMU_CPUS_LEN_MAX;
	rd->nr_cpus = 2;
	snprintf(what, sizeof(what), "CPU %u", AMUPMU_AMU_CPUS_LEN_MAX * 8 - 1);
	REFUSED(ENODEV, false);
	{
		static const __u32 lens[] = { 0, 1, 4, 7, 12, AMUPMU_AMU_CPUS_LEN_MAX + 8, 1U << 20 };

		for (i = 0; i < ARRAY_SIZE(lens); i++) {
			BUILD();
			rd->cpus_len = lens[i];
			snprintf(what, sizeof(what), "cpus_len %u", lens[i]);
			REFUSED(EINVAL, false);
		}
	}
	/* a bit beyond cpus_len is not read: the set is empty */
	BUILD();
	cpus[0] = 0;
	cpus[1] = 1;
	snprintf(what, sizeof(what), "CPU 64 beyond cpus_len 8");
	REFUSED(EINVAL, false);

	/* EFAULT: the CPU set and the entries where nothing can be read/written */
	{
		long page = sysconf(_SC_PAGESIZE);
		unsigned char *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *guard;
		const __u64 bad[] = { 0, 1, 0xffff800000000000ULL, 0 };

		ASSERT_NE(MAP_FAILED, map);
		guard = map + page;
		ASSERT_EQ(0, mprotect(guard, page, PROT_NONE));
		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			BUILD();
			rd->cpus_uptr = i == 3 ? (__u64)(uintptr_t)guard : bad[i];
			snprintf(what, sizeof(what), "cpus_uptr 0x%llx",
				 (unsigned long long)rd->cpus_uptr);
			REFUSED(EFAULT, false);
			BUILD();
			rd->entries_uptr = i == 3 ? (__u64)(uintptr_t)guard : bad[i];
			snprintf(what, sizeof(what), "entries_uptr 0x%llx",
				 (unsigned long long)rd->entries_uptr);
			REFUSED(EFAULT, false);
		}
		/* the bitmap's last word on the guard page */
		BUILD();
		memset(map, 0, page);
		((__u64 *)guard)[-1] = 1;
		rd->cpus_uptr = (__u64)(uintptr_t)(guard - 8);
		rd->cpus_len = 16;
		snprintf(what, sizeof(what), "CPU bitmap running into a PROT_NONE page");
		REFUSED(EFAULT, false);
		/* the second entry on the guard page: the first may be written */
		if (n >= 2 && self->usable) {
			int ret;

			BUILD();
			cpus[0] = 3;
			rd->nr_cpus = 2;
			rd->entries_uptr = (__u64)(uintptr_t)(guard - ENTRY_SZ);
			ret = amupmu_ioctl(self->fd, AMUPMU_AMU_READ, rd);
			EXPECT_EQ(-EFAULT, ret) {
				TH_LOG("entries running into a PROT_NONE page: %s",
				       amupmu_errstr(ret));
			}
			EXPECT_EQ(AMUPMU_SENTINEL64, rd->timer_freq);
			EXPECT_EQ(2U, rd->nr_cpus);
			cases++;
		}
		/* the struct itself ends on the guard page */
		memcpy(guard - 4, &(__u32){ READ_SZ }, 4);
		EXPECT_EQ(-EFAULT, amupmu_ioctl(self->fd, AMUPMU_AMU_READ, guard - 4));
		cases++;
		munmap(map, 2 * page);
	}
	/* ABI 1's type, direction and size bits: ENOTTY */
	BUILD();
	EXPECT_EQ(-ENOTTY, amupmu_ioctl(self->fd, _IO(AMUPMU_TYPE_ABI1, AMUPMU_CMD_AMU_READ), rd));
	EXPECT_EQ(-ENOTTY, amupmu_ioctl(self->fd, _IOWR(AMUPMU_TYPE, AMUPMU_CMD_AMU_READ,
							 struct amupmu_amu_read), rd));
	EXPECT_EQ(-ENOTTY, amupmu_ioctl(self->fd, _IO(AMUPMU_TYPE, AMUPMU_CMD_SPE_READ + 1), rd));
	cases += 3;
#undef BUILD
#undef REFUSED
	free(ent);
	TH_LOG("%u refused requests, none wrote anything back", cases);
	printf("# AMUPMU-FIGURE abi-AMUPMU_AMU_READ-fields cases=%u\n", cases);
	fflush(stdout);
}

/*
 * Accepted requests (a usable AMU): larger structs with a zero tail, larger
 * entries zero-filled beyond the kernel's, nr_cpus larger than the set
 * (entries beyond untouched), the set at any cpus_len up to 1024, and the
 * output fields.
 */
TEST_F(amu, abi_accepted)
{
	static unsigned char b[AMUPMU_SIZE_MAX];
	static __u64 cpus[AMUPMU_AMU_CPUS_LEN_MAX / 8];
	struct amupmu_amu_read *rd = (void *)b;
	unsigned int n = self->nr_cpu_ids < MAX_CPUS ? self->nr_cpu_ids : MAX_CPUS, cnt, k;
	const __u32 esizes[] = { ENTRY_SZ, ENTRY_SZ + 8, 2 * ENTRY_SZ, AMUPMU_AMU_ENTRY_SIZE_MAX };
	const __u32 sizes[] = { READ_SZ, READ_SZ + 1, READ_SZ + 8, AMUPMU_SIZE_MAX };
	__u64 word = online_word(self->nr_cpu_ids, &cnt);
	unsigned char *ent;
	size_t i;
	int ret;

	AMU_BEGIN();
	if (!self->usable)
		SKIP(return, "no usable AMU: every valid request is EOPNOTSUPP");
	ent = malloc((n + 2) * AMUPMU_AMU_ENTRY_SIZE_MAX);
	ASSERT_NE(NULL, ent);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		memset(b, 0, sizeof(b));
		amupmu_amu_read_init(rd, &word, 8, ent, cnt, ENTRY_SZ);
		rd->size = sizes[i];
		ret = amupmu_ioctl(self->fd, AMUPMU_AMU_READ, rd);
		EXPECT_EQ(0, ret) {
			TH_LOG("size %u, zero tail: %s", sizes[i], amupmu_errstr(ret));
		}
		EXPECT_TRUE(all_bytes(b + READ_SZ, sizeof(b) - READ_SZ, 0));
		EXPECT_EQ(cnt, rd->nr_cpus);
		EXPECT_EQ((__u32)ENTRY_SZ, rd->entry_size);
		EXPECT_NE(AMUPMU_SENTINEL64, rd->timer_freq);
		EXPECT_EQ(0U, rd->flags);
		EXPECT_EQ(0U, rd->__reserved);
	}
	for (i = 0; i < ARRAY_SIZE(esizes); i++) {
		/* room for two more entries than the set: untouched */
		memset(ent, AMUPMU_FILL_BYTE, (n + 2) * AMUPMU_AMU_ENTRY_SIZE_MAX);
		amupmu_amu_read_init(rd, &word, 8, ent, cnt + 2, esizes[i]);
		ret = amupmu_ioctl(self->fd, AMUPMU_AMU_READ, rd);
		ASSERT_EQ(0, ret) {
			TH_LOG("entry_size %u: %s", esizes[i], amupmu_errstr(ret));
		}
		EXPECT_EQ(cnt, rd->nr_cpus);
		EXPECT_EQ((__u32)ENTRY_SZ, rd->entry_size);
		for (k = 0; k < cnt + 2; k++) {
			const unsigned char *p = ent + k * esizes[i];
			const struct amupmu_amu_cpu *e = (const void *)p;

			if (k >= cnt) {
				EXPECT_TRUE(all_bytes(p, esizes[i], AMUPMU_FILL_BYTE)) {
					TH_LOG("entry_size %u: entry %u beyond the set written",
					       esizes[i], k);
				}
				continue;
			}
			EXPECT_TRUE(all_bytes(p + ENTRY_SZ, esizes[i] - ENTRY_SZ, 0)) {
				TH_LOG("entry_size %u: entry %u not zero-filled beyond %zu",
				       esizes[i], k, ENTRY_SZ);
			}
			EXPECT_TRUE(!!((word >> e->cpu) & 1));
			if (k) {
				EXPECT_LT(((const struct amupmu_amu_cpu *)(p - esizes[i]))->cpu,
					  e->cpu);
			}
			EXPECT_EQ(0U, e->state);
			EXPECT_EQ(0U, e->__reserved);
			EXPECT_EQ(AMCGCR_CG0NC(self->cpus[e->cpu].amcgcr), e->nr_group0);
			EXPECT_EQ(AMCGCR_CG1NC(self->cpus[e->cpu].amcgcr), e->nr_group1);
			EXPECT_LT(0ULL, e->time);
			for (unsigned int c = e->nr_group0; c < AMUPMU_AMU_MAX_COUNTERS; c++) {
				EXPECT_EQ(0ULL, e->group0[c]);
			}
			for (unsigned int c = e->nr_group1; c < AMUPMU_AMU_MAX_COUNTERS; c++) {
				EXPECT_EQ(0ULL, e->group1[c]);
			}
		}
	}
	/* the same CPU 0 at every cpus_len: a multiple of 8 up to 1024 */
	for (k = 8; k <= AMUPMU_AMU_CPUS_LEN_MAX; k *= 2) {
		memset(cpus, 0, sizeof(cpus));
		cpus[0] = 1;
		amupmu_amu_read_init(rd, cpus, k, ent, 1, ENTRY_SZ);
		ret = amupmu_ioctl(self->fd, AMUPMU_AMU_READ, rd);
		EXPECT_EQ(0, ret) {
			TH_LOG("cpus_len %u: %s", k, amupmu_errstr(ret));
		}
		EXPECT_EQ(1U, rd->nr_cpus);
	}
	/* nr_cpus at the maximum */
	free(ent);
	ent = calloc(AMUPMU_AMU_READ_CPUS_MAX, ENTRY_SZ);
	ASSERT_NE(NULL, ent);
	amupmu_amu_read_init(rd, &word, 8, ent, AMUPMU_AMU_READ_CPUS_MAX, ENTRY_SZ);
	EXPECT_EQ(0, amupmu_ioctl(self->fd, AMUPMU_AMU_READ, rd));
	EXPECT_EQ(cnt, rd->nr_cpus);
	free(ent);
}

/* ---------------------------------------------------------------- the kernel log */

/* The kernel log's length when the program started: the last test looks past it. */
static size_t log_start;

__attribute__((constructor)) static void note_log_start(void)
{
	char *log = amupmu_kernel_log();

	log_start = log ? strlen(log) : 0;
	free(log);
}

/*
 * Every AMU request of this program (every refusal and the accepted
 * requests) ran without the kernel logging an oops, a BUG or an undefined
 * instruction (on QEMU an AMU register access is UNDEFINED: a production
 * build must never make one). The check payload looks for the same in the
 * whole boot's log after all programs ran.
 */
TEST_F(amu, kernel_log_clean)
{
	static const char * const bad[] = {
		"Undefined instruction", "Oops", "BUG:", "WARNING:", "Unable to handle kernel",
	};
	char *log, *start;
	size_t i;

	AMU_BEGIN();
	log = amupmu_kernel_log();
	if (!log)
		SKIP(return, "cannot read the kernel log (%s)", strerror(errno));
	/* what this program's requests made the kernel say (the ring may have wrapped) */
	start = strlen(log) >= log_start ? log + log_start : log;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char *p = strstr(start, bad[i]);

		EXPECT_EQ(NULL, p) {
			char line[200];
			char *s = p, *e;

			while (s > log && s[-1] != '\n')
				s--;
			e = strchr(p, '\n');
			snprintf(line, sizeof(line), "%.*s", e ? (int)(e - s) : 150, s);
			TH_LOG("kernel log: %s", line);
		}
	}
	free(log);
}

TEST_HARNESS_MAIN
