// SPDX-License-Identifier: GPL-2.0
/*
 * SPE sessions across CPU power-down (the mock build's debugfs cpu_pm)
 * and hotplug (mock builds; production builds check the refusals and
 * skip, amupmu_spe_fixture.h): discard_exact (lost bytes stay exact while
 * the buffer is full), hotplug_cpu_pm (OFFLINE while away, profiling
 * resumes, power-down cycles while busy), hotplug_states (DISABLE and
 * ENABLE while offline; a FAULT survives hotplug and power-down). Needs
 * an online cpu1 and root.
 */
#define _GNU_SOURCE
#include "amupmu_spe_fixture.h"

/* ---------------------------------------------------------------- lost bytes */

/*
 * lost_bytes stays exact while the buffer is full across CPU power-down
 * (cpu_pm) and hotplug: the model's bytes == published + lost.
 */
TEST_F(sess, discard_exact)
{
	__u64 mask = 2, st0[ST_NR], st1[ST_NR];
	struct amupmu_spe_buf_header *h;
	struct amupmu_spe_config c;
	struct amupmu_spe_cpu e;
	struct walk w;
	int fd, r, i;
	pid_t pid;

	BEGIN();
	if (self->nr_cpu_ids < 2 || amupmu_cpu_online(1) != 1)
		SKIP(return, "needs an online CPU 1");
	STREAM(1, "ops_per_us=50");
	fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	cfg_init(&c, &mask, AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_KERNEL, 2);
	c.interval = 1024;
	CONFIG(fd, &c);
	MAP(h, fd, 1, 2);
	r = amupmu_write_str(SPE_STATS, "1 reset\n");
	ASSERT_EQ(0, r);
	STATS(1, st0);
	CTL(fd, AMUPMU_SPE_CTL_ENABLE);
	pid = fork();
	if (!pid) {
		amupmu_pin_cpu(1);
		amupmu_busy_ns(200000000ULL);
		_exit(0);
	}
	ASSERT_LT(0, pid);
	for (i = 0; i < 10; i++) {
		usleep(10000);
		r = amupmu_write_str(CPU_PM, "1\n");
		if (r)
			break;
	}
	waitpid(pid, NULL, 0);
	EXPECT_EQ(0, r) {
		TH_LOG("cpu_pm: %s", amupmu_errstr(r));
	}
	READ_CPU(fd, 1, &e);
	log_entry(_metadata, "full, after cpu_pm", &e);
	EXPECT_TRUE(!!(e.state & AMUPMU_SPE_DISCARDING));
	self->cpu1_offlined = true;
	r = amupmu_set_online(1, false);
	ASSERT_EQ(0, r);
	r = amupmu_set_online(1, true);
	ASSERT_EQ(0, r);
	self->cpu1_offlined = false;
	busy_on(mask, 50);
	CTL(fd, AMUPMU_SPE_CTL_DISABLE);
	STATS(1, st1);
	READ_CPU(fd, 1, &e);
	log_entry(_metadata, "disabled", &e);
	TH_LOG("model: bytes %llu records %llu ev_full %llu irqs %llu",
	       (unsigned long long)(st1[ST_BYTES] - st0[ST_BYTES]),
	       (unsigned long long)(st1[ST_RECORDS] - st0[ST_RECORDS]),
	       (unsigned long long)(st1[ST_EV_FULL] - st0[ST_EV_FULL]),
	       (unsigned long long)(st1[ST_IRQS] - st0[ST_IRQS]));
	EXPECT_LT(0ULL, e.lost_bytes);
	EXPECT_EQ(st1[ST_BYTES] - st0[ST_BYTES], e.bytes + e.lost_bytes);
	EXPECT_EQ(0ULL, e.faults);
	WALK(h, &w, NULL, NULL);
	EXPECT_EQ(e.records, w.records);
	munmap(h, 3 * sysconf(_SC_PAGESIZE));
	close(fd);
}

/* ---------------------------------------------------------------- hotplug, power-down */

TEST_F(sess, hotplug_cpu_pm)
{
	struct amupmu_spe_buf_header *h;
	struct amupmu_spe_config c;
	struct amupmu_spe_cpu e;
	__u64 mask = 3, b;
	struct walk w;
	int fd, r, i;
	pid_t pid;

	BEGIN();
	if (self->nr_cpu_ids < 2 || amupmu_cpu_online(1) != 1)
		SKIP(return, "needs an online CPU 1");
	STREAM(0, "ops_per_us=50");
	STREAM(1, "ops_per_us=50");
	fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	cfg_init(&c, &mask, AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_KERNEL, 64);
	c.interval = 8192;
	CONFIG(fd, &c);
	MAP(h, fd, 1, 64);
	CTL(fd, AMUPMU_SPE_CTL_ENABLE);
	busy_on(2, 50);
	self->cpu1_offlined = true;
	r = amupmu_set_online(1, false);
	ASSERT_EQ(0, r) {
		TH_LOG("offline cpu1: %s", amupmu_errstr(r));
	}
	READ_CPU(fd, 1, &e);
	log_entry(_metadata, "offline", &e);
	EXPECT_TRUE(!!(e.state & AMUPMU_SPE_OFFLINE));
	b = e.bytes;
	r = amupmu_set_online(1, true);
	ASSERT_EQ(0, r) {
		TH_LOG("online cpu1: %s", amupmu_errstr(r));
	}
	self->cpu1_offlined = false;
	busy_on(2, 50);
	READ_CPU(fd, 1, &e);
	log_entry(_metadata, "online again", &e);
	EXPECT_FALSE(!!(e.state & AMUPMU_SPE_OFFLINE));
	EXPECT_TRUE(!!(e.state & AMUPMU_SPE_ENABLED));
	/* the head moves at a buffer event or a stop: stop to see the bytes */
	CTL(fd, AMUPMU_SPE_CTL_DISABLE);
	READ_CPU(fd, 1, &e);
	log_entry(_metadata, "online again, disabled", &e);
	EXPECT_LT(b, e.bytes);
	EXPECT_EQ(0ULL, e.faults);
	CTL(fd, AMUPMU_SPE_CTL_ENABLE);

	/* power-down cycles while cpu1 is busy */
	b = e.bytes;
	pid = fork();
	if (!pid) {
		amupmu_pin_cpu(1);
		amupmu_busy_ns(300000000ULL);
		_exit(0);
	}
	ASSERT_LT(0, pid);
	for (i = 0; i < 20; i++) {
		r = amupmu_write_str(CPU_PM, "1\n");
		if (r)
			break;
		usleep(10000);
	}
	waitpid(pid, NULL, 0);
	EXPECT_EQ(0, r) {
		TH_LOG("cpu_pm \"1\": %s", amupmu_errstr(r));
	}
	CTL(fd, AMUPMU_SPE_CTL_DISABLE);
	READ_CPU(fd, 1, &e);
	log_entry(_metadata, "after cpu_pm cycles", &e);
	EXPECT_LT(b, e.bytes);
	EXPECT_EQ(0ULL, e.faults);
	EXPECT_FALSE(!!(e.state & AMUPMU_SPE_FAULT));
	WALK(h, &w, NULL, NULL);
	READ_CPU(fd, 1, &e);
	EXPECT_EQ(e.records, w.records);
	munmap(h, 65 * sysconf(_SC_PAGESIZE));
	close(fd);
}

/*
 * State changes while a CPU is away: DISABLE and ENABLE while CPU 1 is
 * offline (it profiles when it is back); a FAULT survives hotplug and
 * power-down (only DISABLE + ENABLE clears it: nothing is written).
 */
TEST_F(sess, hotplug_states)
{
	struct amupmu_spe_buf_header *h;
	struct amupmu_spe_config c;
	struct amupmu_spe_cpu e;
	__u64 mask = 2, b, st0[ST_NR], st1[ST_NR];
	struct walk w;
	int fd, r;

	BEGIN();
	if (self->nr_cpu_ids < 2 || amupmu_cpu_online(1) != 1)
		SKIP(return, "needs an online CPU 1");
	STREAM(1, "ops_per_us=50");
	fd = open(AMUPMU_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	cfg_init(&c, &mask, AMUPMU_SPE_EN_USER | AMUPMU_SPE_EN_KERNEL, 64);
	c.interval = 8192;
	CONFIG(fd, &c);
	MAP(h, fd, 1, 64);
	CTL(fd, AMUPMU_SPE_CTL_ENABLE);
	busy_on(mask, 30);
	self->cpu1_offlined = true;
	ASSERT_EQ(0, amupmu_set_online(1, false));
	CTL(fd, AMUPMU_SPE_CTL_DISABLE);
	READ_CPU(fd, 1, &e);
	log_entry(_metadata, "offline, disabled", &e);
	b = e.bytes;
	EXPECT_FALSE(!!(e.state & AMUPMU_SPE_ENABLED));
	CTL(fd, AMUPMU_SPE_CTL_ENABLE);
	READ_CPU(fd, 1, &e);
	log_entry(_metadata, "offline, enabled", &e);
	EXPECT_EQ((__u32)(AMUPMU_SPE_ENABLED | AMUPMU_SPE_OFFLINE), e.state);
	ASSERT_EQ(0, amupmu_set_online(1, true));
	self->cpu1_offlined = false;
	busy_on(mask, 30);
	CTL(fd, AMUPMU_SPE_CTL_DISABLE);
	READ_CPU(fd, 1, &e);
	log_entry(_metadata, "online, disabled", &e);
	EXPECT_LT(b, e.bytes);

	/* a fault, then hotplug and power-down: still FAULT, nothing written */
	CTL(fd, AMUPMU_SPE_CTL_ENABLE);
	self->fault_touched |= 2;
	ASSERT_EQ(0, amupmu_write_str(SPE_FAULT, "1 s1\n"));
	busy_on(mask, 30);
	READ_CPU(fd, 1, &e);
	ASSERT_TRUE(!!(e.state & AMUPMU_SPE_FAULT));
	STATS(1, st0);
	self->cpu1_offlined = true;
	ASSERT_EQ(0, amupmu_set_online(1, false));
	ASSERT_EQ(0, amupmu_set_online(1, true));
	self->cpu1_offlined = false;
	r = amupmu_write_str(CPU_PM, "1\n");
	EXPECT_EQ(0, r);
	busy_on(mask, 30);
	STATS(1, st1);
	READ_CPU(fd, 1, &e);
	log_entry(_metadata, "fault, after hotplug and cpu_pm", &e);
	EXPECT_TRUE(!!(e.state & AMUPMU_SPE_FAULT));
	EXPECT_EQ(1ULL, e.faults);
	EXPECT_EQ(st0[ST_BYTES], st1[ST_BYTES]) {
		TH_LOG("the model wrote %llu bytes after the fault",
		       (unsigned long long)(st1[ST_BYTES] - st0[ST_BYTES]));
	}
	CTL(fd, AMUPMU_SPE_CTL_DISABLE);
	WALK(h, &w, NULL, NULL);
	READ_CPU(fd, 1, &e);
	EXPECT_EQ(e.records, w.records);
	munmap(h, 65 * sysconf(_SC_PAGESIZE));
	close(fd);
}

TEST_HARNESS_MAIN
