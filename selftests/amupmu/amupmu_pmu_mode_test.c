// SPDX-License-Identifier: GPL-2.0
/*
 * Who owns the PMU, and perf beside amupmu (AMUPMU_PMU_CONFIG, CTL, READ
 * against include/uapi/linux/amupmu.h):
 *
 *  - pmu_owner in INFO and sysfs, the FEAT_PMU_EXCLUSIVE / FEAT_PMU_SHARED
 *    features and the pmu_shared parameter agree; pmu_shared refuses
 *    anything but a boolean;
 *  - with pmu_shared=N (the kernel's arm_pmu owns the PMU, shared mode
 *    off) every PMU command is refused with ENXIO, a group configured in
 *    shared mode before keeps counting until its RELEASE, and a perf
 *    counter of the same task keeps counting undisturbed;
 *  - shared mode: a READ on the group's own CPU moves (perf core's fields
 *    as perf_event_read_local() reads them); perf users beside amupmu, both
 *    counting the same loop; more events than counters (perf multiplexes,
 *    amupmu's pinned events keep counting); what perf core refuses (EBUSY,
 *    CHAIN); a pinned perf event that evicts amupmu's.
 *
 * The fixture, its backend line and the helpers: amupmu_pmu_fixture.h.
 */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <linux/perf_event.h>

#include "amupmu_pmu_fixture.h"

/* ---------------------------------------------------------------- fixture */

/* perf users beside amupmu: shared mode only. */
#define NEED_SHARED() do {							\
	if (self->exclusive)							\
		SKIP(return, "shared mode only: amupmu owns the PMU here "	\
		     "(exclusive mode), perf has no hardware events");		\
	NEED_PMU();								\
} while (0)

/* ---------------------------------------------------------------- ownership */

/*
 * pmu_owner in INFO and sysfs agree; FEAT_PMU_EXCLUSIVE exactly when amupmu
 * owns the PMU, FEAT_PMU_SHARED exactly when arm_pmu owns it and the
 * pmu_shared parameter (0644, Y by default) is Y.
 */
TEST_F(pmu, owner_consistent)
{
	__u64 pmu_cmds = 0;
	char owner[32], param[8] = "";
	struct stat st;
	unsigned int i;

	PMU_BEGIN();
	for (i = AMUPMU_CMD_PMU_CONFIG; i <= AMUPMU_CMD_PMU_READ; i++)
		pmu_cmds |= 1ULL << (i - AMUPMU_CMD_BASE);
	EXPECT_EQ(pmu_cmds, self->info.supported_ioctls & pmu_cmds) {
		TH_LOG("supported_ioctls 0x%llx lacks the PMU commands",
		       (unsigned long long)self->info.supported_ioctls);
	}
	ASSERT_EQ(0, amupmu_read_line(AMUPMU_SYSFS "/pmu_owner", owner, sizeof(owner)));
	ASSERT_EQ(0, stat(PMU_SHARED_PARAM, &st)) {
		TH_LOG("%s: %s", PMU_SHARED_PARAM, strerror(errno));
	}
	EXPECT_EQ(0644U, st.st_mode & 07777);
	ASSERT_EQ(0, amupmu_read_line(PMU_SHARED_PARAM, param, sizeof(param)));
	EXPECT_TRUE(!strcmp(param, "Y") || !strcmp(param, "N")) {
		TH_LOG("pmu_shared \"%s\"", param);
	}
	TH_LOG("pmu_owner %s, features 0x%llx, pmu_shared %s", owner,
	       (unsigned long long)self->info.features, param);
	switch (self->info.pmu_owner) {
	case AMUPMU_PMU_OWNER_AMUPMU:
		EXPECT_STREQ("amupmu", owner);
		EXPECT_TRUE(!!(self->info.features & AMUPMU_FEAT_PMU_EXCLUSIVE));
		EXPECT_FALSE(!!(self->info.features & AMUPMU_FEAT_PMU_SHARED)) {
			TH_LOG("shared mode reported while amupmu owns the PMU");
		}
		EXPECT_NE(0U, self->counter_bits) {
			TH_LOG("%s missing", COUNTER_BITS_PARAM);
		}
		break;
	case AMUPMU_PMU_OWNER_KERNEL:
		EXPECT_STREQ("kernel", owner);
		EXPECT_FALSE(!!(self->info.features & AMUPMU_FEAT_PMU_EXCLUSIVE));
		EXPECT_EQ(!strcmp(param, "Y"), !!(self->info.features & AMUPMU_FEAT_PMU_SHARED)) {
			TH_LOG("pmu_shared %s but INFO features 0x%llx", param,
			       (unsigned long long)self->info.features);
		}
		break;
	default:
		EXPECT_STREQ("none", owner);
		EXPECT_FALSE(!!(self->info.features & AMUPMU_FEAT_PMU_SHARED));
		break;
	}
	if (self->counter_bits) {
		EXPECT_TRUE(self->counter_bits == 32 || self->counter_bits == 64) {
			TH_LOG("pmu_counter_bits %u", self->counter_bits);
		}
	}
}

/* INFO's features now. */
static __u64 features_now(int fd)
{
	struct amupmu_info info;

	return amupmu_query(fd, &info, NULL, 0) ? 0 : info.features;
}

/*
 * Shared mode off: the kernel's arm_pmu owns the PMU and pmu_shared is N
 * (written here when it is Y and the test runs as root; Y is written back
 * at the end, and by the teardown when the test stops before). INFO has no
 * AMUPMU_FEAT_PMU_SHARED, and every PMU command of a session without a
 * group, valid, is ENXIO (permanent: not EBUSY, which says "in use now,
 * try later"); the refused CONFIG writes nothing back. The parameter
 * affects new CONFIGs only: a group configured in shared mode before keeps
 * counting until its RELEASE, after which its session is refused too. Y
 * gives shared mode back.
 */
TEST_F(pmu, kernel_owner_refuses)
{
	static const __u32 ops[] = {
		AMUPMU_PMU_CTL_ENABLE, AMUPMU_PMU_CTL_DISABLE,
		AMUPMU_PMU_CTL_RESET, AMUPMU_PMU_CTL_RELEASE,
	};
	char param[8] = "";
	struct group g, k;
	struct snap s;
	unsigned int i;
	int kept = -1, ret;

	PMU_BEGIN();
	if (self->info.pmu_owner != AMUPMU_PMU_OWNER_KERNEL)
		SKIP(return, "amupmu owns the PMU (pmu_owner %u)", self->info.pmu_owner);
	if (self->shared) {
		if (geteuid() != 0)
			SKIP(return, "shared mode is on: turning it off (pmu_shared=N) needs root");
		/* a group of shared mode, configured before the switch */
		kept = open_dev();
		ASSERT_LE(0, kept);
		group_init(&k, 0);
		group_add(&k, PMUV3_EV_CPU_CYCLES, 0);
		ret = group_config(kept, &k);
		ASSERT_EQ(0, ret) {
			TH_LOG("shared mode: CONFIG {CPU_CYCLES}: %s", amupmu_errstr(ret));
		}
		self->restore_shared = true;
		ret = amupmu_write_str(PMU_SHARED_PARAM, "N");
		ASSERT_EQ(0, ret) {
			TH_LOG("pmu_shared=N: %s", amupmu_errstr(ret));
		}
	}
	ASSERT_EQ(0, amupmu_read_line(PMU_SHARED_PARAM, param, sizeof(param)));
	EXPECT_STREQ("N", param);
	EXPECT_FALSE(!!(features_now(self->fd) & AMUPMU_FEAT_PMU_SHARED)) {
		TH_LOG("pmu_shared=N: INFO still says shared mode");
	}

	group_init(&g, 0);
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	amupmu_pmu_config_init(&g.cfg, g.ev, g.nr, g.cpus.w, g.cpus.len);
	expect_err(_metadata, self->fd, AMUPMU_PMU_CONFIG, &g.cfg, CFG_SZ, ENXIO, true,
		   "CONFIG {CPU_CYCLES} on CPU 0");
	g.ev[0].sample_period = 1000000;
	amupmu_pmu_config_init(&g.cfg, g.ev, g.nr, g.cpus.w, g.cpus.len);
	g.cfg.ring_pages = 1;
	expect_err(_metadata, self->fd, AMUPMU_PMU_CONFIG, &g.cfg, CFG_SZ, ENXIO, true,
		   "CONFIG sampling CPU_CYCLES on CPU 0");
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		ret = amupmu_pmu_ctl(self->fd, ops[i]);
		EXPECT_EQ(-ENXIO, ret) {
			TH_LOG("CTL op %u: %s", ops[i], amupmu_errstr(ret));
		}
	}
	ret = snap_read(self->fd, 0, 1, &s);
	EXPECT_EQ(-ENXIO, ret) {
		TH_LOG("READ cpu 0: %s", amupmu_errstr(ret));
	}
	EXPECT_EQ(AMUPMU_SENTINEL64, s.rd.time_enabled);
	amupmu_pmu_read_all_init(&s.rd, s.v, 1, 1);
	expect_err(_metadata, self->fd, AMUPMU_PMU_READ, &s.rd, RD_SZ, ENXIO, true,
		   "READ_ALL");
	if (kept < 0)
		return;

	/* the group from before counts on, and goes with its RELEASE */
	ASSERT_EQ(0, amupmu_pin_cpu(0));
	ASSERT_EQ(0, amupmu_pmu_ctl(kept, AMUPMU_PMU_CTL_ENABLE));
	amupmu_busy_ns(5 * NSEC_PER_MSEC);
	read_ok(_metadata, kept, 0, 1, &s);
	EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED), s.rd.state);
	EXPECT_LT(0ULL, s.v[0].value) {
		TH_LOG("the shared-mode group from before pmu_shared=N counted nothing");
	}
	ASSERT_EQ(0, amupmu_pmu_ctl(kept, AMUPMU_PMU_CTL_DISABLE));
	ASSERT_EQ(0, amupmu_pmu_ctl(kept, AMUPMU_PMU_CTL_RELEASE));
	amupmu_pmu_config_init(&k.cfg, k.ev, k.nr, k.cpus.w, k.cpus.len);
	expect_err(_metadata, kept, AMUPMU_PMU_CONFIG, &k.cfg, CFG_SZ, ENXIO, true,
		   "CONFIG again after the RELEASE");
	close(kept);

	/* Y: shared mode again */
	ret = amupmu_write_str(PMU_SHARED_PARAM, "Y");
	ASSERT_EQ(0, ret) {
		TH_LOG("pmu_shared=Y: %s", amupmu_errstr(ret));
	}
	self->restore_shared = false;
	EXPECT_TRUE(!!(features_now(self->fd) & AMUPMU_FEAT_PMU_SHARED)) {
		TH_LOG("pmu_shared=Y: INFO does not say shared mode");
	}
	group_init(&g, 0);
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	ret = group_config(self->fd, &g);
	EXPECT_EQ(0, ret) {
		TH_LOG("CONFIG after pmu_shared=Y: %s", amupmu_errstr(ret));
	}
	expect_counter(_metadata, self, &g.cfg, 0, true, "after pmu_shared=Y");
}

/*
 * pmu_shared takes a boolean: anything else ("maybe", "2", "-1", "x",
 * "o", a lone newline) is refused with EINVAL and changes neither the
 * parameter nor INFO's mode; a user without root cannot open it for
 * writing (0644). In every mode (the parameter is always there).
 */
TEST_F(pmu, pmu_shared_param_refuses_bad)
{
	static const char *const bad[] = { "maybe", "2", "-1", "x", "o", "\n" };
	char before[8] = "", after[8] = "";
	int status, ret;
	unsigned int i;
	__u64 feat;
	pid_t pid;

	PMU_BEGIN();
	if (geteuid() != 0)
		SKIP(return, "writing pmu_shared needs root");
	feat = features_now(self->fd);
	ASSERT_EQ(0, amupmu_read_line(PMU_SHARED_PARAM, before, sizeof(before)));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ret = amupmu_write_str(PMU_SHARED_PARAM, bad[i]);
		EXPECT_EQ(-EINVAL, ret) {
			TH_LOG("pmu_shared \"%s\": %s", bad[i], amupmu_errstr(ret));
		}
		if (!ret && !strcmp(before, "Y"))
			self->restore_shared = true;	/* it took something: Y again */
		ASSERT_EQ(0, amupmu_read_line(PMU_SHARED_PARAM, after, sizeof(after)));
		EXPECT_STREQ(before, after) {
			TH_LOG("the refused write \"%s\" changed pmu_shared", bad[i]);
		}
		EXPECT_EQ(feat, features_now(self->fd)) {
			TH_LOG("the refused write \"%s\" changed INFO's features", bad[i]);
		}
	}
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		fd = open(PMU_SHARED_PARAM, O_WRONLY | O_CLOEXEC);
		_exit(fd < 0 && errno == EACCES ? 0 : 11);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("unprivileged child: status %d (10 setuid, 11 opened pmu_shared for "
		       "writing or not EACCES)", WEXITSTATUS(status));
	}
	ASSERT_EQ(0, amupmu_read_line(PMU_SHARED_PARAM, after, sizeof(after)));
	EXPECT_STREQ(before, after);
	TH_LOG("pmu_shared %s: %zu bad writes refused", after, ARRAY_SIZE(bad));
}

static int perf_open(__u64 config, bool exclude_kernel)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_HARDWARE;
	attr.size = sizeof(attr);
	attr.config = config;
	attr.disabled = 1;
	attr.exclude_kernel = exclude_kernel;
	attr.exclude_hv = 1;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

struct perf_count {
	__u64 value, enabled, running;
};

static int perf_read(int fd, struct perf_count *c)
{
	return read(fd, c, sizeof(*c)) == (ssize_t)sizeof(*c) ? 0 : -EIO;
}

/*
 * PMU commands of a group: refused with shared mode off, served through
 * perf core in shared mode; amupmu writes no PMU register either way.
 */
static void refused_pmu_calls(int fd)
{
	struct group g;
	struct snap s;

	group_init(&g, 0);
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	group_add(&g, PMUV3_EV_INST_RETIRED, AMUPMU_EV_RAW | AMUPMU_EV_USER_ONLY);
	group_config(fd, &g);
	amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_ENABLE);
	amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_RESET);
	snap_read(fd, 0, 2, &s);
	amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_DISABLE);
	amupmu_pmu_ctl(fd, AMUPMU_PMU_CTL_RELEASE);
}

/*
 * perf counters of this task running across amupmu calls (refused with
 * shared mode off, perf core's own in shared mode) and the known loop
 * count as they should: amupmu wrote no PMU register.
 */
TEST_F(pmu, kernel_owner_perf_undisturbed)
{
	struct perf_count c0, c1, c2, i0, i1, i2, ia, ib;
	int cyc, ins = -1, ret;
	double ratio;

	PMU_BEGIN();
	if (self->info.pmu_owner == AMUPMU_PMU_OWNER_AMUPMU)
		SKIP(return, "exclusive mode: no hardware perf events");
	if (self->info.pmu_owner != AMUPMU_PMU_OWNER_KERNEL)
		SKIP(return, "no PMUv3");
#ifndef __aarch64__
	SKIP(return, "the known loop is aarch64 code");
#endif
	cyc = perf_open(PERF_COUNT_HW_CPU_CYCLES, false);
	ASSERT_LE(0, cyc) {
		TH_LOG("perf_event_open(CPU_CYCLES): %s", strerror(-cyc));
	}
	/* arm_pmu maps INSTRUCTIONS whatever PMCEID says: QEMU counts it only under icount */
	if (self->icount) {
		ins = perf_open(PERF_COUNT_HW_INSTRUCTIONS, true);
		ASSERT_LE(0, ins) {
			TH_LOG("perf_event_open(INSTRUCTIONS): %s", strerror(-ins));
		}
	}

	ASSERT_EQ(0, ioctl(cyc, PERF_EVENT_IOC_ENABLE, 0));
	if (ins >= 0) {
		ASSERT_EQ(0, ioctl(ins, PERF_EVENT_IOC_ENABLE, 0));
	}
	ASSERT_EQ(0, perf_read(cyc, &c0));
	if (ins >= 0) {
		ASSERT_EQ(0, perf_read(ins, &i0));
	}
	refused_pmu_calls(self->fd);
	if (ins >= 0) {
		ASSERT_EQ(0, perf_read(ins, &ia));
	}
	amupmu_insn_loop(LOOP_N);
	if (ins >= 0) {
		ASSERT_EQ(0, perf_read(ins, &ib));
	}
	refused_pmu_calls(self->fd);
	if (ins >= 0) {
		ASSERT_EQ(0, perf_read(ins, &i1));
	}
	ASSERT_EQ(0, perf_read(cyc, &c1));
	amupmu_busy_ns(NSEC_PER_MSEC);
	ASSERT_EQ(0, perf_read(cyc, &c2));
	if (ins >= 0) {
		ASSERT_EQ(0, perf_read(ins, &i2));
	}

	TH_LOG("perf cycles over the loop: %llu in %llu ns running",
	       (unsigned long long)(c1.value - c0.value),
	       (unsigned long long)(c1.running - c0.running));
	EXPECT_LT(c0.value, c1.value);
	EXPECT_LE(c1.value, c2.value);
	EXPECT_LT(c0.running, c1.running);
	if (self->qemu && c1.running > c0.running) {
		/* QEMU's cycle counter runs at 1 GHz of the virtual clock */
		ratio = (double)(c1.value - c0.value) / (double)(c1.running - c0.running);
		EXPECT_TRUE(ratio > 0.5 && ratio < 2.0) {
			TH_LOG("cycles per ns running %.3f (QEMU: 1.0)", ratio);
		}
	}
	if (self->icount) {
		/* one instruction is one ns of virtual time, one cycle */
		EXPECT_LE(LOOP_INSNS, c1.value - c0.value);
	}
	if (ins >= 0) {
		ret = (int)(ib.value - ia.value - LOOP_INSNS);
		TH_LOG("perf EL0 instructions: amupmu calls %llu, loop %llu (%+d), then %llu",
		       (unsigned long long)(ia.value - i0.value),
		       (unsigned long long)(ib.value - ia.value), ret,
		       (unsigned long long)(i1.value - ib.value));
		/*
		 * perf's own EL0 count of the loop runs +10.8k (6.1) to +14.1k
		 * (6.12) over it, from arm_pmu/QEMU, not amupmu: allow 1 %; a
		 * counter amupmu had touched would be far outside it.
		 */
		EXPECT_LE(LOOP_INSNS, ib.value - ia.value);
		EXPECT_GE(LOOP_INSNS + LOOP_INSNS / 100, ib.value - ia.value);
		EXPECT_GE(LOOP_INSNS + LOOP_INSNS / 100, i1.value - i0.value);
		EXPECT_LE(i1.value, i2.value);
		close(ins);
	}
	close(cyc);
}

/* ---------------------------------------------------------------- shared mode: reads */

/*
 * Shared mode reads a pinned counter on its CPU the way
 * perf_event_read_local() does, through perf's fields (event->oncpu, then
 * pmu->read() and event->count: the function is not exported to modules).
 * This fails when a kernel changes what they mean: a READ on CPU 0 from
 * CPU 0 (the same-CPU path, no cross-call) twice around 20 ms of spinning
 * there must see the cycles of the spin. Without pmu->read() folding into
 * count, or with oncpu no longer the CPU's number, the count would stand
 * still (perf core folds a pinned CPU counter only when it stops it).
 * 10^6 cycles: 20 times below QEMU's 1 GHz of virtual time, and a 50 MHz
 * core's.
 */
TEST_F(pmu, shared_read_local_moves)
{
	struct snap a, b;
	struct group g;
	int ret;

	PMU_BEGIN();
	NEED_SHARED();
	ASSERT_EQ(0, amupmu_pin_cpu(0));
	group_init(&g, 0);
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	ret = group_config(self->fd, &g);
	ASSERT_EQ(0, ret) {
		TH_LOG("CONFIG CPU_CYCLES on CPU 0: %s", amupmu_errstr(ret));
	}
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	read_ok(_metadata, self->fd, 0, 1, &a);
	amupmu_busy_ns(20 * NSEC_PER_MSEC);
	read_ok(_metadata, self->fd, 0, 1, &b);
	TH_LOG("CPU_CYCLES read on CPU 0 around 20 ms of spinning: %llu then %llu",
	       (unsigned long long)a.v[0].value, (unsigned long long)b.v[0].value);
	EXPECT_LE(a.v[0].value + 1000000ULL, b.v[0].value);
	EXPECT_EQ((__u32)(AMUPMU_READ_ENABLED | AMUPMU_READ_SHARED), b.rd.state);
	EXPECT_EQ(0ULL, b.rd.throttled);
}

/* ---------------------------------------------------------------- shared mode: perf */

/*
 * A raw PMUv3 perf event @config (:u when @user_only): of this task when
 * @cpu is -1, else CPU-wide on @cpu; a group leader (opened disabled,
 * pinned when @pinned) when @group_fd is -1, else a sibling of it.
 * Returns the fd or -errno.
 */
static int perf_open_raw(__u64 config, bool user_only, int group_fd, int cpu, bool pinned,
			 __u64 read_format)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_RAW;
	attr.size = sizeof(attr);
	attr.config = config;
	attr.disabled = group_fd < 0;
	attr.pinned = pinned && group_fd < 0;
	attr.exclude_kernel = user_only;
	attr.exclude_hv = user_only;
	attr.read_format = read_format;
	fd = syscall(__NR_perf_event_open, &attr, cpu < 0 ? 0 : -1, cpu, group_fd,
		     PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

/* A perf group's read() with PERF_FORMAT_GROUP and both times. */
#define PERF_GROUP_FORMAT	(PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | \
				 PERF_FORMAT_TOTAL_TIME_RUNNING)

struct perf_group_count {
	__u64 nr, enabled, running;
	__u64 values[MAX_GROUP];
};

static int perf_group_read(int leader, struct perf_group_count *c)
{
	ssize_t n = read(leader, c, sizeof(*c));

	return n >= (ssize_t)(3 * sizeof(__u64)) &&
	       n == (ssize_t)((3 + c->nr) * sizeof(__u64)) ? 0 : -EIO;
}

/* ioctl @req on a perf group, all of it. 0 or -errno. */
static int perf_group_ctl(int leader, unsigned long req)
{
	return ioctl(leader, req, PERF_IOC_FLAG_GROUP) ? -errno : 0;
}

/*
 * perf and amupmu at the same time on CPU 0: a perf group of this task
 * (INST_RETIRED:u leading, CPU_CYCLES:u beside it: raw PMUv3 events) and
 * an amupmu session with the same two events on CPU 0 count the same known
 * loop. Everything fits in the counters, so neither multiplexes: perf's
 * time_running is its time_enabled, amupmu's READ has no EVICTED and its
 * time_running is its time_enabled. Under -icount both INST_RETIRED:u are
 * the loop within 0.1 %, and both CPU_CYCLES:u agree within 1 % (the
 * perf window holds amupmu's); without -icount (no INST_RETIRED in QEMU)
 * the cycles only, amupmu's no more than perf's.
 */
TEST_F(pmu, shared_perf_beside_amupmu)
{
	struct perf_group_count pc;
	__u32 evs[2];
	unsigned int nr = 0, i, cyc;
	int fds[2] = { -1, -1 }, ret;
	struct group g;
	struct snap s;

	PMU_BEGIN();
	NEED_SHARED();
#ifndef __aarch64__
	SKIP(return, "the known loop is aarch64 code");
#endif
	ASSERT_EQ(0, amupmu_pin_cpu(0));
	if (self->icount)
		evs[nr++] = PMUV3_EV_INST_RETIRED;
	cyc = nr;
	evs[nr++] = PMUV3_EV_CPU_CYCLES;

	group_init(&g, 0);
	for (i = 0; i < nr; i++)
		group_add(&g, evs[i], AMUPMU_EV_USER_ONLY);
	ret = group_config(self->fd, &g);
	ASSERT_EQ(0, ret) {
		TH_LOG("amupmu CONFIG of %u events: %s", nr, amupmu_errstr(ret));
	}
	for (i = 0; i < nr; i++) {
		fds[i] = perf_open_raw(evs[i], true, i ? fds[0] : -1, -1, false,
				       PERF_GROUP_FORMAT);
		ASSERT_LE(0, fds[i]) {
			TH_LOG("perf_event_open(raw 0x%x:u) beside amupmu: %s", evs[i],
			       strerror(-fds[i]));
		}
	}
	ASSERT_EQ(0, perf_group_ctl(fds[0], PERF_EVENT_IOC_RESET));
	ASSERT_EQ(0, perf_group_ctl(fds[0], PERF_EVENT_IOC_ENABLE));
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	amupmu_insn_loop(LOOP_N);
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
	ASSERT_EQ(0, perf_group_ctl(fds[0], PERF_EVENT_IOC_DISABLE));
	ASSERT_EQ(0, perf_group_read(fds[0], &pc));
	read_ok(_metadata, self->fd, 0, nr, &s);

	if (self->icount)
		TH_LOG("INST_RETIRED:u, loop of %llu: amupmu %llu (%+lld), perf %llu (%+lld)",
		       (unsigned long long)LOOP_INSNS, (unsigned long long)s.v[0].value,
		       (long long)(s.v[0].value - LOOP_INSNS), (unsigned long long)pc.values[0],
		       (long long)(pc.values[0] - LOOP_INSNS));
	TH_LOG("CPU_CYCLES:u: amupmu %llu (enabled %llu ns, running %llu ns), perf %llu "
	       "(enabled %llu ns, running %llu ns)", (unsigned long long)s.v[cyc].value,
	       (unsigned long long)s.rd.time_enabled, (unsigned long long)s.rd.time_running,
	       (unsigned long long)pc.values[cyc], (unsigned long long)pc.enabled,
	       (unsigned long long)pc.running);
	ASSERT_EQ((__u64)nr, pc.nr);
	EXPECT_LT(0ULL, pc.enabled);
	EXPECT_EQ(pc.enabled, pc.running) {
		TH_LOG("perf's group multiplexed beside %u amupmu events: everything fits", nr);
	}
	EXPECT_EQ(RD_STATE(0), s.rd.state);
	EXPECT_LE(s.rd.time_enabled, s.rd.time_running + TIME_SLACK_NS) {
		TH_LOG("amupmu counted %llu of %llu ns enabled",
		       (unsigned long long)s.rd.time_running,
		       (unsigned long long)s.rd.time_enabled);
	}
	if (self->icount) {
		EXPECT_TRUE(within_permille(s.v[0].value, LOOP_INSNS, 1)) {
			TH_LOG("amupmu INST_RETIRED:u %llu, not the loop's %llu within 0.1 %%",
			       (unsigned long long)s.v[0].value, (unsigned long long)LOOP_INSNS);
		}
		EXPECT_TRUE(within_permille(pc.values[0], LOOP_INSNS, 1)) {
			TH_LOG("perf INST_RETIRED:u %llu, not the loop's %llu within 0.1 %%",
			       (unsigned long long)pc.values[0], (unsigned long long)LOOP_INSNS);
		}
		EXPECT_TRUE(within_permille(s.v[cyc].value, pc.values[cyc], 10)) {
			TH_LOG("CPU_CYCLES:u: amupmu %llu, perf %llu: more than 1 %% apart",
			       (unsigned long long)s.v[cyc].value,
			       (unsigned long long)pc.values[cyc]);
		}
	}
	EXPECT_LT(0ULL, s.v[cyc].value);
	EXPECT_GE(pc.values[cyc] + pc.values[cyc] / 100, s.v[cyc].value) {
		TH_LOG("amupmu's CPU_CYCLES:u %llu over a window inside perf's %llu",
		       (unsigned long long)s.v[cyc].value, (unsigned long long)pc.values[cyc]);
	}
	for (i = nr; i-- > 0;)
		close(fds[i]);
}

/*
 * More events than counters: an amupmu session with N - 2 events on CPU 0
 * (INST_RETIRED:u under -icount, else the filler event), and N - 2 perf
 * events of this task beside it, each its own group, where two event
 * counters are left. amupmu's events are pinned: they keep counting the
 * whole time (no EVICTED, time_running is time_enabled; under -icount each
 * is the loop within 0.1 %); perf's multiplex (each 0 < time_running <
 * time_enabled, together no more than the two counters left, scaled within
 * 10 % of the loop under -icount).
 */
TEST_F(pmu, shared_perf_multiplexes_amupmu_pinned)
{
	const unsigned int k = self->nr_counters - 2, m = self->nr_counters - 2;
	const __u64 loops = 5 * LOOP_N, insns = 2 * loops;
	struct perf_count pc[MAX_GROUP];
	int fds[MAX_GROUP], ret;
	double share = 0;
	__u32 ev;
	unsigned int i, multiplexed = 0;
	struct group g;
	struct snap s;

	PMU_BEGIN();
	NEED_SHARED();
#ifndef __aarch64__
	SKIP(return, "the known loop is aarch64 code");
#endif
	if (self->nr_counters < 4)
		SKIP(return, "PMCR_EL0.N %u < 4", self->nr_counters);
	ASSERT_EQ(0, amupmu_pin_cpu(0));
	ev = self->icount ? PMUV3_EV_INST_RETIRED : self->filler;

	group_init(&g, 0);
	for (i = 0; i < k; i++)
		group_add(&g, ev, AMUPMU_EV_USER_ONLY);
	ret = group_config(self->fd, &g);
	ASSERT_EQ(0, ret) {
		TH_LOG("amupmu CONFIG of %u x 0x%x:u: %s", k, ev, amupmu_errstr(ret));
	}
	for (i = 0; i < m; i++) {
		fds[i] = perf_open_raw(ev, true, -1, -1, false,
				       PERF_FORMAT_TOTAL_TIME_ENABLED |
				       PERF_FORMAT_TOTAL_TIME_RUNNING);
		ASSERT_LE(0, fds[i]) {
			TH_LOG("perf_event_open(raw 0x%x:u) #%u: %s", ev, i, strerror(-fds[i]));
		}
	}
	for (i = 0; i < m; i++) {
		ASSERT_EQ(0, ioctl(fds[i], PERF_EVENT_IOC_ENABLE, 0));
	}
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	amupmu_insn_loop(loops);
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
	for (i = 0; i < m; i++) {
		ASSERT_EQ(0, ioctl(fds[i], PERF_EVENT_IOC_DISABLE, 0));
	}
	for (i = 0; i < m; i++) {
		ASSERT_EQ(0, perf_read(fds[i], &pc[i]));
	}
	read_ok(_metadata, self->fd, 0, k, &s);

	TH_LOG("%u amupmu events 0x%x:u and %u perf ones, %u+1 counters; loop %llu insns; "
	       "amupmu: enabled %llu ns, running %llu ns, state 0x%x", k, ev, m,
	       self->nr_counters, (unsigned long long)insns,
	       (unsigned long long)s.rd.time_enabled, (unsigned long long)s.rd.time_running,
	       s.rd.state);
	EXPECT_EQ(RD_STATE(0), s.rd.state);
	EXPECT_LE(s.rd.time_enabled, s.rd.time_running + TIME_SLACK_NS) {
		TH_LOG("amupmu's pinned events counted %llu of %llu ns enabled",
		       (unsigned long long)s.rd.time_running,
		       (unsigned long long)s.rd.time_enabled);
	}
	for (i = 0; i < k; i++) {
		TH_LOG("amupmu event %u: %llu (%+lld)", i, (unsigned long long)s.v[i].value,
		       (long long)(s.v[i].value - insns));
		if (self->icount) {
			EXPECT_TRUE(within_permille(s.v[i].value, insns, 1)) {
				TH_LOG("amupmu event %u: %llu, not the loop's %llu within 0.1 %%",
				       i, (unsigned long long)s.v[i].value,
				       (unsigned long long)insns);
			}
		}
	}
	for (i = 0; i < m; i++) {
		double scaled = pc[i].running ?
				(double)pc[i].value * pc[i].enabled / pc[i].running : 0;

		TH_LOG("perf event %u: %llu, enabled %llu ns, running %llu ns (%.1f %%), "
		       "scaled %.0f", i, (unsigned long long)pc[i].value,
		       (unsigned long long)pc[i].enabled, (unsigned long long)pc[i].running,
		       pc[i].enabled ? 100.0 * pc[i].running / pc[i].enabled : 0, scaled);
		EXPECT_LT(0ULL, pc[i].enabled);
		EXPECT_LT(0ULL, pc[i].running) {
			TH_LOG("perf event %u never ran: no multiplexing", i);
		}
		EXPECT_GT(pc[i].enabled, pc[i].running) {
			TH_LOG("perf event %u ran all the time beside %u pinned amupmu events",
			       i, k);
		}
		multiplexed += pc[i].running < pc[i].enabled;
		if (pc[i].enabled)
			share += (double)pc[i].running / pc[i].enabled;
		if (self->icount && pc[i].running) {
			EXPECT_TRUE(scaled > 0.9 * insns && scaled < 1.1 * insns) {
				TH_LOG("perf event %u scaled to %.0f, the loop is %llu", i,
				       scaled, (unsigned long long)insns);
			}
		}
	}
	TH_LOG("perf: %u of %u events multiplexed, %.2f counters' worth of running time "
	       "(%u left beside amupmu)", multiplexed, m, share, self->nr_counters - k);
	EXPECT_GE(self->nr_counters - k + 0.05, share);
	for (i = 0; i < m; i++)
		close(fds[i]);
}

/*
 * A session asking for more events than the PMU has (N + 2 event-counter
 * events on CPU 0): EBUSY (perf core cannot schedule the last pinned one),
 * nothing written back, no group; and nothing left behind: a pinned perf
 * group of this task with every counter (CPU_CYCLES and N more) then runs
 * the whole time. A smaller CONFIG (N events) works afterwards.
 */
TEST_F(pmu, shared_too_many_events_ebusy)
{
	const unsigned int n = self->nr_counters;
	struct perf_group_count pc;
	int fds[MAX_GROUP], ret;
	union cfg_buf b;
	unsigned int i;
	struct group g;

	PMU_BEGIN();
	NEED_SHARED();
	ASSERT_EQ(0, amupmu_pin_cpu(0));
	group_init(&g, 0);
	group_add_n(&g, self->filler, n + 2);
	memset(&b, 0, sizeof(b));
	amupmu_pmu_config_init(&b.cfg, g.ev, g.nr, g.cpus.w, g.cpus.len);
	expect_config_refused(_metadata, self->fd, &b, CFG_SZ, EBUSY, "N + 2 event-counter events");

	/* all N + 1 counters for perf */
	for (i = 0; i <= n; i++) {
		fds[i] = perf_open_raw(i ? self->filler : PMUV3_EV_CPU_CYCLES, false,
				       i ? fds[0] : -1, -1, true, PERF_GROUP_FORMAT);
		ASSERT_LE(0, fds[i]) {
			TH_LOG("perf_event_open #%u: %s", i, strerror(-fds[i]));
		}
	}
	ASSERT_EQ(0, perf_group_ctl(fds[0], PERF_EVENT_IOC_ENABLE));
	amupmu_busy_ns(5 * NSEC_PER_MSEC);
	ASSERT_EQ(0, perf_group_ctl(fds[0], PERF_EVENT_IOC_DISABLE));
	ASSERT_EQ(0, perf_group_read(fds[0], &pc));
	TH_LOG("after the refused CONFIG: a pinned perf group of %u events: enabled %llu ns, "
	       "running %llu ns, cycles %llu", n + 1, (unsigned long long)pc.enabled,
	       (unsigned long long)pc.running, (unsigned long long)pc.values[0]);
	EXPECT_LT(0ULL, pc.enabled);
	EXPECT_EQ(pc.enabled, pc.running) {
		TH_LOG("the refused CONFIG left perf events behind: perf's %u do not fit", n + 1);
	}
	EXPECT_LT(0ULL, pc.values[0]);
	for (i = n + 1; i-- > 0;)
		close(fds[i]);

	g.nr = n;
	ret = group_config(self->fd, &g);
	EXPECT_EQ(0, ret) {
		TH_LOG("the N = %u events that fit, after the refusal: %s", n, amupmu_errstr(ret));
	}
	expect_counters_valid(_metadata, self, &g);
	EXPECT_EQ(0U, g.cfg.counters_free);
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RELEASE));
	expect_all_free(_metadata, self, "after the N + 2 events");
}

/*
 * CHAIN (0x1e) in shared mode: EINVAL with AMUPMU_EV_RAW, alone and after
 * valid events (perf core chains counters itself; a CHAIN event of its own
 * would never count), and without RAW (EOPNOTSUPP first when PMCEID does
 * not have it); nothing written back, no group, nothing left.
 */
TEST_F(pmu, shared_chain_einval)
{
	static const __u32 flags[] = { AMUPMU_EV_RAW, AMUPMU_EV_RAW | AMUPMU_EV_USER_ONLY, 0 };
	unsigned int i, pos;
	union cfg_buf b;
	struct group g;
	char what[96];
	bool impl;

	PMU_BEGIN();
	NEED_SHARED();
	impl = amupmu_event_implemented(self->cpu0, PMUV3_EV_CHAIN);
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		int err = !flags[i] && !impl ? EOPNOTSUPP : EINVAL;

		for (pos = 0; pos < 3; pos += 2) {
			group_init(&g, 0);
			if (pos) {
				group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
				group_add(&g, self->filler, 0);
			}
			group_add(&g, PMUV3_EV_CHAIN, flags[i]);
			memset(&b, 0, sizeof(b));
			amupmu_pmu_config_init(&b.cfg, g.ev, g.nr, g.cpus.w, g.cpus.len);
			snprintf(what, sizeof(what), "CHAIN flags 0x%x (event %u of %u, PMCEID %s)",
				 flags[i], g.nr - 1, g.nr, impl ? "has it" : "has not");
			expect_config_refused(_metadata, self->fd, &b, CFG_SZ, err, what);
		}
	}
	expect_all_free(_metadata, self, "after the CHAIN events");
}

/*
 * perf core takes a pinned counter away: N + 1 pinned perf events on CPU 0,
 * opened (disabled) before an amupmu session configures two events there,
 * are older; enabled, they come first and amupmu's events go into error
 * state: READ says AMUPMU_READ_EVICTED and the totals stop. With perf's
 * events closed it stays so until the next ENABLE puts them back (no
 * EVICTED, counting again); a second set of older events evicts them
 * again, and then a RESET puts them back.
 */
TEST_F(pmu, shared_pinned_perf_evicts)
{
	const unsigned int n = self->nr_counters;
	int fds[2][MAX_GROUP], ret, round;
	struct snap a, b2, c;
	unsigned int i;
	struct group g;

	PMU_BEGIN();
	NEED_SHARED();
	if (geteuid() != 0)
		SKIP(return, "CPU-wide perf events need CAP_PERFMON");
	ASSERT_EQ(0, amupmu_pin_cpu(0));
	/* two sets of N + 1 pinned events of their own each, older than the session's */
	for (round = 0; round < 2; round++) {
		for (i = 0; i <= n; i++) {
			fds[round][i] = perf_open_raw(i ? self->filler : PMUV3_EV_CPU_CYCLES,
						      false, -1, 0, true, 0);
			ASSERT_LE(0, fds[round][i]) {
				TH_LOG("CPU-wide perf_event_open #%u on CPU 0: %s", i,
				       strerror(-fds[round][i]));
			}
		}
	}
	group_init(&g, 0);
	group_add(&g, self->filler, 0);
	group_add(&g, PMUV3_EV_CPU_CYCLES, 0);
	ret = group_config(self->fd, &g);
	ASSERT_EQ(0, ret) {
		TH_LOG("CONFIG beside %u disabled perf events: %s", 2 * (n + 1),
		       amupmu_errstr(ret));
	}
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
	for (round = 0; round < 2; round++) {
		amupmu_busy_ns(2 * NSEC_PER_MSEC);
		read_ok(_metadata, self->fd, 0, 2, &a);
		for (i = 0; i <= n; i++) {
			ASSERT_EQ(0, ioctl(fds[round][i], PERF_EVENT_IOC_ENABLE, 0));
		}
		amupmu_busy_ns(2 * NSEC_PER_MSEC);
		ASSERT_EQ(0, snap_read(self->fd, 0, 2, &b2));
		amupmu_busy_ns(5 * NSEC_PER_MSEC);
		ASSERT_EQ(0, snap_read(self->fd, 0, 2, &c));
		TH_LOG("round %d: before perf's %u older pinned events: state 0x%x cycles %llu; "
		       "with them: state 0x%x cycles %llu, 5 ms later state 0x%x cycles %llu",
		       round, n + 1, a.rd.state, (unsigned long long)a.v[1].value, b2.rd.state,
		       (unsigned long long)b2.v[1].value, c.rd.state,
		       (unsigned long long)c.v[1].value);
		EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED | AMUPMU_READ_EVICTED), b2.rd.state) {
			TH_LOG("older pinned perf events on every counter: not evicted");
		}
		EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED | AMUPMU_READ_EVICTED), c.rd.state);
		EXPECT_EQ(b2.v[1].value, c.v[1].value) {
			TH_LOG("an evicted counter counted on");
		}
		for (i = n + 1; i-- > 0;)
			close(fds[round][i]);
		/* evicted until ENABLE (round 0) or RESET (round 1) */
		amupmu_busy_ns(NSEC_PER_MSEC);
		ASSERT_EQ(0, snap_read(self->fd, 0, 2, &c));
		EXPECT_TRUE(!!(c.rd.state & AMUPMU_READ_EVICTED)) {
			TH_LOG("round %d: the eviction ended without ENABLE or RESET", round);
		}
		if (!round) {
			ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
			ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_ENABLE));
		} else {
			ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_RESET));
		}
		read_ok(_metadata, self->fd, 0, 2, &a);
		amupmu_busy_ns(5 * NSEC_PER_MSEC);
		read_ok(_metadata, self->fd, 0, 2, &c);
		TH_LOG("round %d: after %s: state 0x%x cycles %llu, 5 ms later %llu", round,
		       round ? "RESET" : "DISABLE/ENABLE", a.rd.state,
		       (unsigned long long)a.v[1].value, (unsigned long long)c.v[1].value);
		EXPECT_EQ(RD_STATE(AMUPMU_READ_ENABLED), c.rd.state);
		EXPECT_LT(a.v[1].value, c.v[1].value) {
			TH_LOG("round %d: not counting again after %s", round,
			       round ? "RESET" : "ENABLE");
		}
	}
	ASSERT_EQ(0, amupmu_pmu_ctl(self->fd, AMUPMU_PMU_CTL_DISABLE));
}

TEST_HARNESS_MAIN
