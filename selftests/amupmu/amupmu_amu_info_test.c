// SPDX-License-Identifier: GPL-2.0
/*
 * What amupmu says of the Activity Monitors without reading their
 * counters (amupmu_amu_fixture.h): the AMU fields of AMUPMU_INFO's
 * entries (the architected group 0, the model's group 1, AMU_OFF with
 * amu=0); the AMU files of /sys/class/misc/amupmu/cpuN/ (read-only and
 * equal to INFO on a CPU with AMUPMU_CPU_AMU, absent on the others); the
 * ID frames (only where the devicetree has "amupmu,cpu-frames" nodes, each
 * with a CoreSight component ID).
 */
#define _GNU_SOURCE
#include <dirent.h>

#include "amupmu_amu_fixture.h"

static const __u16 mock_group0[MOCK_CG0NC] = {
	AMU_EV_CPU_CYCLES, AMU_EV_CNT_CYCLES, AMU_EV_INST_RETIRED, AMU_EV_STALL_BACKEND_MEM,
};
static const __u16 mock_group1[MOCK_CG1NC] = { 0x0300, 0x0301 };

/* The AMU files of cpuN/ (ABI 2.1 adds all but the first three). */
static const char * const amu_files[] = {
	"amu_version", "amcfgr_el0", "amcgcr_el0", "amcr_el0", "amcntenset0_el0",
	"amcntenset1_el0", "amu_group0_events", "amu_group1_events",
};

/* ---------------------------------------------------------------- INFO, sysfs */

/* The AMU fields of INFO: the architected group 0 and the model's group 1. */
TEST_F(amu, info_fields)
{
	unsigned int cpu, n, amu_cpus = 0, off_cpus = 0;

	AMU_BEGIN();
	for (cpu = 0; cpu < self->nr_cpu_ids; cpu++) {
		const struct amupmu_cpu_info *e = &self->cpus[cpu];
		__u64 cg0 = AMCGCR_CG0NC(e->amcgcr), cg1 = AMCGCR_CG1NC(e->amcgcr);

		if (e->flags & AMUPMU_CPU_AMU_OFF)
			off_cpus++;
		if (!(e->flags & AMUPMU_CPU_AMU)) {
			EXPECT_EQ(0U, e->amcntenset0);
			EXPECT_TRUE(all_bytes(e->amevtyper0, sizeof(e->amevtyper0), 0));
			EXPECT_TRUE(all_bytes(e->amevtyper1, sizeof(e->amevtyper1), 0));
			continue;
		}
		amu_cpus++;
		EXPECT_LE(1U, e->amu_version);
		EXPECT_LE((__u64)AMU_CG0_ARCH_COUNTERS, cg0);
		EXPECT_GE((__u64)AMUPMU_AMU_MAX_COUNTERS, cg0);
		EXPECT_GE((__u64)AMUPMU_AMU_MAX_COUNTERS, cg1);
		/* AMUv1: the four architected events, in this order */
		for (n = 0; n < AMU_CG0_ARCH_COUNTERS; n++) {
			EXPECT_EQ(mock_group0[n], e->amevtyper0[n]) {
				TH_LOG("cpu%u: amevtyper0[%u] 0x%04x", cpu, n, e->amevtyper0[n]);
			}
		}
		for (n = cg0; n < AMUPMU_AMU_MAX_COUNTERS; n++) {
			EXPECT_EQ(0, e->amevtyper0[n]);
		}
		for (n = cg1; n < AMUPMU_AMU_MAX_COUNTERS; n++) {
			EXPECT_EQ(0, e->amevtyper1[n]);
		}
		/* counters beyond the group's are not enabled */
		EXPECT_EQ(0U, e->amcntenset0 & ~((1U << cg0) - 1));
		EXPECT_EQ(0U, e->amcntenset1 & ~(cg1 >= 32 ? ~0U : (1U << cg1) - 1));
		if (self->mock) {
			EXPECT_EQ((__u64)MOCK_CG0NC, cg0);
			EXPECT_EQ((__u64)MOCK_CG1NC, cg1);
			EXPECT_EQ(0, memcmp(e->amevtyper1, mock_group1, sizeof(mock_group1))) {
				TH_LOG("cpu%u: amevtyper1 0x%04x 0x%04x, the model has 0x0300 0x0301",
				       cpu, e->amevtyper1[0], e->amevtyper1[1]);
			}
			/* at discovery, with the model's defaults */
			EXPECT_EQ(0xfU, e->amcntenset0);
			EXPECT_EQ(0x3U, e->amcntenset1);
			EXPECT_TRUE(!!(e->flags & AMUPMU_CPU_MOCK));
		}
		TH_LOG("cpu%u: AMUv1%s amcr 0x%llx amcntenset0 0x%x amcntenset1 0x%x "
		       "group0 %llu group1 %llu%s", cpu, e->amu_version >= 2 ? "p1" : "",
		       (unsigned long long)e->amcr, e->amcntenset0, e->amcntenset1,
		       (unsigned long long)cg0, (unsigned long long)cg1,
		       e->flags & AMUPMU_CPU_AMU_ZERO ? " (AMU_ZERO)" : "");
	}
	EXPECT_EQ(amu_cpus != 0, self->usable) {
		TH_LOG("AMUPMU_FEAT_AMU %d, %u CPUs with AMUPMU_CPU_AMU", self->usable, amu_cpus);
	}
	if (self->param_off) {
		EXPECT_EQ(0U, amu_cpus);
		EXPECT_FALSE(self->usable);
	}
	/* amu=0 on a build whose CPUs have an AMU: every such CPU is AMU_OFF */
	if (self->param_off && self->mock) {
		for (cpu = 0; cpu < self->nr_cpu_ids; cpu++) {
			const struct amupmu_cpu_info *e = &self->cpus[cpu];

			if (!(e->flags & AMUPMU_CPU_DISCOVERED))
				continue;
			EXPECT_TRUE(!!(e->flags & AMUPMU_CPU_AMU_OFF)) {
				TH_LOG("cpu%u: amu=0, flags 0x%x without AMU_OFF", cpu, e->flags);
			}
			EXPECT_LE(1U, e->amu_version);
		}
	}
	if (!self->mock && !self->usable) {
		EXPECT_EQ(0U, off_cpus) {
			TH_LOG("AMU_OFF on a board whose CPUs have no AMU");
		}
	}
	TH_LOG("%u CPUs with a usable AMU, %u with AMU_OFF", amu_cpus, off_cpus);
}

/* Parse "0x%04x 0x%04x ..." into @ev; returns the count or -1. */
static int parse_events(const char *s, __u16 *ev, unsigned int max)
{
	unsigned int n = 0, v;
	int used;

	while (*s) {
		if (n >= max || sscanf(s, "0x%4x%n", &v, &used) != 1 || used != 6)
			return -1;
		ev[n++] = v;
		s += used;
		if (*s == ' ' && s[1])
			s++;
		else if (*s)
			return -1;
	}
	return n;
}

/*
 * cpuN/'s AMU files: there, read-only (0444) and equal to INFO on a CPU
 * with AMUPMU_CPU_AMU; no AMU file at all on the others (production
 * builds on QEMU, amu=0). Writes are refused (amupmu_sysfs_test sweeps
 * every file with bad input too).
 */
TEST_F(amu, sysfs_files)
{
	unsigned int cpu, checked = 0;
	char dir[128], path[192], buf[256];
	size_t i;

	AMU_BEGIN();
	for (cpu = 0; cpu < self->nr_cpu_ids; cpu++) {
		const struct amupmu_cpu_info *e = &self->cpus[cpu];
		bool amu = e->flags & AMUPMU_CPU_AMU;

		snprintf(dir, sizeof(dir), AMUPMU_SYSFS "/cpu%u", cpu);
		if (!amupmu_path_exists(dir))
			continue;
		/* the flag files: always there, 0 or 1 */
		snprintf(path, sizeof(path), "%s/amu_off", dir);
		ASSERT_EQ(0, amupmu_read_line(path, buf, sizeof(buf)));
		EXPECT_STREQ(e->flags & AMUPMU_CPU_AMU_OFF ? "1" : "0", buf);
		snprintf(path, sizeof(path), "%s/amu_zero", dir);
		ASSERT_EQ(0, amupmu_read_line(path, buf, sizeof(buf)));
		EXPECT_STREQ(e->flags & AMUPMU_CPU_AMU_ZERO ? "1" : "0", buf);
		if (!amu) {
			for (i = 0; i < ARRAY_SIZE(amu_files); i++) {
				snprintf(path, sizeof(path), "%s/%s", dir, amu_files[i]);
				EXPECT_FALSE(amupmu_path_exists(path)) {
					TH_LOG("cpu%u has no usable AMU (flags 0x%x) but %s exists",
					       cpu, e->flags, path);
				}
			}
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(amu_files); i++) {
			struct stat st;
			__u64 v = 0;
			__u16 ev[AMUPMU_AMU_MAX_COUNTERS];
			int n, fd;

			snprintf(path, sizeof(path), "%s/%s", dir, amu_files[i]);
			ASSERT_EQ(0, stat(path, &st)) {
				TH_LOG("%s: %s", path, strerror(errno));
			}
			EXPECT_EQ(0444U, st.st_mode & 07777) {
				TH_LOG("%s: mode %o", path, st.st_mode & 07777);
			}
			ASSERT_EQ(0, amupmu_read_line(path, buf, sizeof(buf)));
			fd = open(path, O_WRONLY | O_CLOEXEC);
			EXPECT_EQ(-1, fd) {
				TH_LOG("%s opens for writing", path);
			}
			if (fd >= 0)
				close(fd);
			if (!strcmp(amu_files[i], "amu_group0_events") ||
			    !strcmp(amu_files[i], "amu_group1_events")) {
				bool g0 = amu_files[i][9] == '0';
				const __u16 *want = g0 ? e->amevtyper0 : e->amevtyper1;
				__u64 nc = g0 ? AMCGCR_CG0NC(e->amcgcr) : AMCGCR_CG1NC(e->amcgcr);

				n = parse_events(buf, ev, AMUPMU_AMU_MAX_COUNTERS);
				EXPECT_EQ((int)nc, n) {
					TH_LOG("%s: \"%s\": %d events, AMCGCR says %llu", path, buf,
					       n, (unsigned long long)nc);
				}
				if (n == (int)nc) {
					EXPECT_EQ(0, memcmp(ev, want, n * sizeof(*ev))) {
						TH_LOG("%s: \"%s\" differs from INFO", path, buf);
					}
				}
				continue;
			}
			EXPECT_EQ(0, amupmu_parse_u64(buf, &v)) {
				TH_LOG("%s: \"%s\" is not a number", path, buf);
			}
			switch (i) {
			case 0:
				EXPECT_EQ(e->amu_version, v);
				break;
			case 1:
				EXPECT_EQ(e->amcfgr, v);
				break;
			case 2:
				EXPECT_EQ(e->amcgcr, v);
				break;
			case 3:
				EXPECT_EQ(e->amcr, v);
				break;
			case 4:
				EXPECT_EQ(e->amcntenset0, v);
				break;
			default:
				EXPECT_EQ(e->amcntenset1, v);
				break;
			}
			checked++;
		}
		if (self->mock) {
			snprintf(path, sizeof(path), "%s/amu_group1_events", dir);
			ASSERT_EQ(0, amupmu_read_line(path, buf, sizeof(buf)));
			EXPECT_STREQ("0x0300 0x0301", buf);
			snprintf(path, sizeof(path), "%s/amu_group0_events", dir);
			ASSERT_EQ(0, amupmu_read_line(path, buf, sizeof(buf)));
			EXPECT_STREQ("0x0011 0x4004 0x0008 0x4005", buf);
		}
	}
	TH_LOG("%u AMU register files compared with INFO", checked);
}

/* Does /proc/device-tree hold a node compatible with @compat? */
static bool dt_has_compatible(const char *dir, const char *compat, int depth)
{
	char path[512], buf[1024];
	struct dirent *de;
	bool found = false;
	ssize_t len;
	DIR *d;

	snprintf(path, sizeof(path), "%s/compatible", dir);
	len = amupmu_read_file(path, buf, sizeof(buf));
	for (ssize_t o = 0; len > 0 && o < len; o += strlen(buf + o) + 1)
		if (!strcmp(buf + o, compat))
			return true;
	if (depth > 6)
		return false;
	d = opendir(dir);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		found = dt_has_compatible(path, compat, depth + 1);
	}
	closedir(d);
	return found;
}

/*
 * cpuN/<p>iidr, <p>devarch, <p>devid, <p>devtype (0x%08x), <p>pidr (5
 * registers), <p>cidr (4), space-separated: the frame's INFO fields.
 */
static void expect_frame_files(struct __test_metadata *_metadata, unsigned int cpu,
			       const char *p, const struct amupmu_id_frame *f)
{
	static const struct { const char *name; size_t off; unsigned int n; } files[] = {
		{ "iidr", offsetof(struct amupmu_id_frame, iidr), 1 },
		{ "devarch", offsetof(struct amupmu_id_frame, devarch), 1 },
		{ "devid", offsetof(struct amupmu_id_frame, devid), 1 },
		{ "devtype", offsetof(struct amupmu_id_frame, devtype), 1 },
		{ "pidr", offsetof(struct amupmu_id_frame, pidr), 5 },
		{ "cidr", offsetof(struct amupmu_id_frame, cidr), 4 },
	};
	char path[160], buf[128], want[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		const __u32 *v = (const __u32 *)((const unsigned char *)f + files[i].off);
		unsigned int k;
		int len = 0;

		for (k = 0; k < files[i].n; k++)
			len += snprintf(want + len, sizeof(want) - len, "%s0x%08x", k ? " " : "", v[k]);
		snprintf(path, sizeof(path), AMUPMU_SYSFS "/cpu%u/%s%s", cpu, p, files[i].name);
		ASSERT_EQ(0, amupmu_read_line(path, buf, sizeof(buf))) {
			TH_LOG("%s: %s", path, strerror(errno));
		}
		EXPECT_STREQ(want, buf);
	}
}

/*
 * The ID frames: AMUPMU_CPU_AMU_FRAME / PMU_FRAME only where the devicetree
 * has "amupmu,cpu-frames" nodes, and then on some CPU; a frame without its
 * flag is zero (amupmu_info_test), one with it has a CoreSight component
 * ID (CIDR0-3 0x0D, 0x?0, 0x05, 0xB1).
 */
TEST_F(amu, id_frames_follow_devicetree)
{
	bool dt = dt_has_compatible("/proc/device-tree", "amupmu,cpu-frames", 0);
	unsigned int cpu, framed = 0, off = 0, off_framed = 0;

	AMU_BEGIN();
	for (cpu = 0; cpu < self->nr_cpu_ids; cpu++) {
		const struct amupmu_cpu_info *e = &self->cpus[cpu];
		const struct amupmu_id_frame *f[2] = { &e->amu_frame, &e->pmu_frame };
		const __u32 flag[2] = { AMUPMU_CPU_AMU_FRAME, AMUPMU_CPU_PMU_FRAME };
		int i;

		if (e->flags & AMUPMU_CPU_AMU_OFF) {
			off++;
			off_framed += !!(e->flags & AMUPMU_CPU_AMU_FRAME);
		}
		for (i = 0; i < 2; i++) {
			if (!(e->flags & flag[i])) {
				char path[128];

				snprintf(path, sizeof(path), AMUPMU_SYSFS "/cpu%u/%siidr", cpu,
					 i ? "pm" : "am");
				EXPECT_FALSE(amupmu_path_exists(path)) {
					TH_LOG("%s without the frame flag", path);
				}
				continue;
			}
			framed++;
			/*
			 * The UAPI contract (AMUPMU_CPU_AMU_OFF, amupmu.h): amu=0
			 * reads no AMU system register, but the memory-mapped AMU
			 * frame's ID registers are still read and reported: an
			 * AMU_OFF CPU of a devicetree with frames has the frame
			 * flag and a CoreSight component ID (checked below), and
			 * never AMUPMU_CPU_AMU
			 */
			if (i == 0 && (e->flags & AMUPMU_CPU_AMU_OFF)) {
				EXPECT_FALSE(!!(e->flags & AMUPMU_CPU_AMU)) {
					TH_LOG("cpu%u: AMU_OFF and AMU both set", cpu);
				}
				EXPECT_NE(0U, f[i]->iidr | f[i]->devarch) {
					TH_LOG("cpu%u: AMU_OFF, frame flag set, IIDR and DEVARCH 0",
					       cpu);
				}
				TH_LOG("cpu%u: AMU_OFF, its AMU frame read (the contract)", cpu);
			}
			EXPECT_TRUE(dt) {
				TH_LOG("cpu%u: %s frame flag without an amupmu,cpu-frames node",
				       cpu, i ? "PMU" : "AMU");
			}
			EXPECT_EQ(0x0DU, f[i]->cidr[0] & 0xff);
			EXPECT_EQ(0x05U, f[i]->cidr[2] & 0xff);
			EXPECT_EQ(0xB1U, f[i]->cidr[3] & 0xff);
			expect_frame_files(_metadata, cpu, i ? "pm" : "am", f[i]);
			TH_LOG("cpu%u %s frame: IIDR 0x%08x DEVARCH 0x%08x DEVTYPE 0x%x CIDR "
			       "%02x %02x %02x %02x", cpu, i ? "PMU" : "AMU", f[i]->iidr,
			       f[i]->devarch, f[i]->devtype, f[i]->cidr[0], f[i]->cidr[1],
			       f[i]->cidr[2], f[i]->cidr[3]);
		}
	}
	if (dt) {
		EXPECT_LT(0U, framed) {
			TH_LOG("the devicetree has amupmu,cpu-frames, no CPU reports a frame");
		}
		/* amu=0 does not stop the frame reads (AMUPMU_CPU_AMU_OFF's contract) */
		if (off) {
			EXPECT_LT(0U, off_framed) {
				TH_LOG("%u AMU_OFF CPUs, none reports its AMU frame", off);
			}
		}
	}
	TH_LOG("devicetree %s amupmu,cpu-frames; %u frames reported", dt ? "has" : "has no",
	       framed);
}

TEST_HARNESS_MAIN
