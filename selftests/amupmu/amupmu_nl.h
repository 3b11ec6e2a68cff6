/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw AF_NETLINK helpers for the generic netlink family "amupmu"
 * (include/uapi/linux/amupmu_netlink.h): open, resolve the family, send a
 * request, receive its answers and extended ACK, parse attributes, wait
 * for an event. Shared by the tests that check the family's requests and
 * the events their own actions cause (netlink, unbind, SPE sessions).
 */
#ifndef AMUPMU_NL_H
#define AMUPMU_NL_H

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/amupmu_netlink.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON	38
#endif

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK	11
#endif

#define NL_BUF		65536

struct nl {
	int fd;
	__u16 family;
	__u32 seq;
	__u32 version;
	bool sendto;	/* requests to the kernel's address (sendto(), as libnl sends) */
};

/* a parsed message: the attributes by type (the last of each), EVENT count */
struct nl_msg {
	__u8 cmd;
	__u16 flags;
	const struct nlattr *a[AMUPMU_NL_A_MAX + 1];
	unsigned int nr_event;
	const struct nlattr *event[64];
};

/* an error reply: errno and the extended ACK */
struct nl_err {
	int error;
	char msg[256];
	__u32 offs;	/* NLMSGERR_ATTR_OFFS, 0 if absent */
	__u32 miss;	/* NLMSGERR_ATTR_MISS_TYPE, 0 if absent */
};

static inline __u64 attr_u64(const struct nlattr *a)
{
	__u64 v;

	memcpy(&v, (const char *)a + NLA_HDRLEN, sizeof(v));
	return v;
}

static inline __u32 attr_u32(const struct nlattr *a)
{
	__u32 v;

	memcpy(&v, (const char *)a + NLA_HDRLEN, sizeof(v));
	return v;
}

/* This process's effective capability set (capget), or -errno. */
static inline int caps_effective(__u64 *eff)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[2];

	if (syscall(SYS_capget, &hdr, caps))
		return -errno;
	*eff = caps[0].effective | (__u64)caps[1].effective << 32;
	return 0;
}

/*
 * NULL when this process passes netlink's CAP_PERFMON checks (CPU_GET's
 * totals, every session in a SESSION_GET dump): CAP_PERFMON or
 * CAP_SYS_ADMIN in its effective set, in the initial user namespace (whose
 * uid_map is the identity of every uid); else why not.
 */
static inline const char *totals_not_privileged(void)
{
	unsigned long long inside = 0, outside = 0, count = 4294967295ULL;
	__u64 eff = 0;
	FILE *f;

	if (caps_effective(&eff))
		return "capget failed";
	if (!(eff & (1ULL << CAP_PERFMON | 1ULL << CAP_SYS_ADMIN)))
		return "neither CAP_PERFMON nor CAP_SYS_ADMIN in effect";
	f = fopen("/proc/self/uid_map", "re");
	if (f) {
		if (fscanf(f, "%llu %llu %llu", &inside, &outside, &count) != 3)
			count = 0;
		fclose(f);
	}
	if (inside || outside || count != 4294967295ULL)
		return "not in the initial user namespace: its capabilities do not count";
	return NULL;
}

static inline int nl_open(struct nl *nl)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int one = 1;

	memset(nl, 0, sizeof(*nl));
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl->fd < 0)
		return -errno;
	if (bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one))) {
		close(nl->fd);
		return -errno;
	}
	return 0;
}

/* append an attribute at @p (room checked by the caller); returns its end */
static inline char *put_attr(char *p, __u16 type, const void *data, __u16 len)
{
	struct nlattr *a = (struct nlattr *)p;

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy(p + NLA_HDRLEN, data, len);
	memset(p + NLA_HDRLEN + len, 0, NLA_ALIGN(len) - len);
	return p + NLA_HDRLEN + NLA_ALIGN(len);
}

/* send a request of @cmd with @attrs (@alen bytes of ready attributes) */
static inline int nl_send(struct nl *nl, __u16 type, __u8 cmd, __u8 version, __u16 flags,
		   const void *attrs, size_t alen)
{
	char buf[1024];
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct genlmsghdr *g = NLMSG_DATA(h);

	if (NLMSG_LENGTH(GENL_HDRLEN) + alen > sizeof(buf))
		return -E2BIG;
	memset(buf, 0, NLMSG_LENGTH(GENL_HDRLEN));
	h->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN) + alen;
	h->nlmsg_type = type;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	h->nlmsg_seq = ++nl->seq;
	g->cmd = cmd;
	g->version = version;
	memcpy(buf + NLMSG_LENGTH(GENL_HDRLEN), attrs, alen);
	if (nl->sendto) {
		struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

		if (sendto(nl->fd, buf, h->nlmsg_len, 0, (struct sockaddr *)&kernel,
			   sizeof(kernel)) != (ssize_t)h->nlmsg_len)
			return -errno;
		return 0;
	}
	if (send(nl->fd, buf, h->nlmsg_len, 0) != (ssize_t)h->nlmsg_len)
		return -errno;
	return 0;
}

static inline void parse_attrs(struct nl_msg *m, const struct nlmsghdr *h)
{
	const char *p = (const char *)NLMSG_DATA(h) + GENL_HDRLEN;
	const char *end = (const char *)h + h->nlmsg_len;
	const struct genlmsghdr *g = NLMSG_DATA(h);

	memset(m, 0, sizeof(*m));
	m->cmd = g->cmd;
	m->flags = h->nlmsg_flags;
	while (p + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const struct nlattr *)p;
		__u16 t = a->nla_type & NLA_TYPE_MASK;

		if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
			break;
		if (t == AMUPMU_NL_A_EVENT && m->nr_event < 64)
			m->event[m->nr_event++] = a;
		else if (t <= AMUPMU_NL_A_MAX)
			m->a[t] = a;
		p += NLA_ALIGN(a->nla_len);
	}
}

static inline void parse_err(struct nl_err *e, const struct nlmsghdr *h)
{
	const struct nlmsgerr *err = NLMSG_DATA(h);
	const char *p, *end = (const char *)h + h->nlmsg_len;

	memset(e, 0, sizeof(*e));
	e->error = -err->error;
	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	p = (const char *)err + sizeof(*err);
	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		p += err->msg.nlmsg_len - sizeof(struct nlmsghdr);
	while (p + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const struct nlattr *)p;

		if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
			break;
		if (a->nla_type == NLMSGERR_ATTR_MSG)
			snprintf(e->msg, sizeof(e->msg), "%.*s",
				 (int)(a->nla_len - NLA_HDRLEN), p + NLA_HDRLEN);
		else if (a->nla_type == NLMSGERR_ATTR_OFFS)
			e->offs = attr_u32(a);
#ifdef NLMSGERR_ATTR_MISS_TYPE
		else if (a->nla_type == NLMSGERR_ATTR_MISS_TYPE)
			e->miss = attr_u32(a);
#endif
		p += NLA_ALIGN(a->nla_len);
	}
}

/*
 * Receive the replies to the last request: each data message to @cb (may
 * be NULL), until the ACK or NLMSG_DONE. Returns 0, the request's -errno
 * (@err gets the extended ACK), or -errno of recv.
 */
static inline int nl_recv(struct nl *nl, struct nl_err *err,
		   void (*cb)(const struct nlmsghdr *h, void *arg), void *arg)
{
	static char buf[NL_BUF];
	struct nl_err dummy;

	if (!err)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	for (;;) {
		ssize_t n = recv(nl->fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0)
			return -errno;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != nl->seq)
				continue;	/* an event, or an old reply */
			if (h->nlmsg_type == NLMSG_ERROR) {
				parse_err(err, h);
				return -err->error;
			}
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (cb)
				cb(h, arg);
		}
	}
}

static inline void family_cb(const struct nlmsghdr *h, void *arg)
{
	const char *p = (const char *)NLMSG_DATA(h) + GENL_HDRLEN;
	const char *end = (const char *)h + h->nlmsg_len;
	struct nl *nl = arg;

	while (p + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const struct nlattr *)p;

		if (a->nla_len < NLA_HDRLEN)
			break;
		if (a->nla_type == CTRL_ATTR_FAMILY_ID)
			memcpy(&nl->family, p + NLA_HDRLEN, sizeof(nl->family));
		if (a->nla_type == CTRL_ATTR_VERSION)
			nl->version = attr_u32(a);
		p += NLA_ALIGN(a->nla_len);
	}
}

/* Resolve the family by name: 0, -ENOENT when it is not registered. */
static inline int nl_resolve(struct nl *nl)
{
	char attrs[64];
	char *end = put_attr(attrs, CTRL_ATTR_FAMILY_NAME, AMUPMU_NL_FAMILY_NAME,
			     sizeof(AMUPMU_NL_FAMILY_NAME));
	int ret = nl_send(nl, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0, attrs, end - attrs);

	if (ret)
		return ret;
	nl->family = 0;
	ret = nl_recv(nl, NULL, family_cb, nl);
	if (!ret && !nl->family)
		ret = -ENOENT;
	return ret;
}

/* one request to the family; replies to @cb */
static inline int nl_request(struct nl *nl, __u8 cmd, __u16 flags, const void *attrs, size_t alen,
		      struct nl_err *err, void (*cb)(const struct nlmsghdr *h, void *arg),
		      void *arg)
{
	int ret = nl_send(nl, nl->family, cmd, AMUPMU_NL_FAMILY_VERSION, flags, attrs, alen);

	return ret ?: nl_recv(nl, err, cb, arg);
}

static inline int nl_subscribe(struct nl *nl, __u32 groups, struct nl_err *err)
{
	char attrs[16];
	char *end = put_attr(attrs, AMUPMU_NL_A_GROUPS, &groups, sizeof(groups));

	return nl_request(nl, AMUPMU_NL_CMD_SUBSCRIBE, 0, attrs, end - attrs, err, NULL, NULL);
}

static inline void status_cb(const struct nlmsghdr *h, void *arg)
{
	/* the reply copied: the ACK that follows reuses nl_recv's buffer */
	static char copy[1024];

	if (h->nlmsg_len > sizeof(copy))
		return;
	memcpy(copy, h, h->nlmsg_len);
	parse_attrs(arg, (const struct nlmsghdr *)copy);
}

/* A socket of its own on @nl, the family resolved, subscribed to @groups. */
static inline int nl_listen(struct nl *nl, __u32 groups)
{
	int ret = nl_open(nl);

	if (ret)
		return ret;
	ret = nl_resolve(nl);
	if (!ret)
		ret = nl_subscribe(nl, groups, NULL);
	if (ret)
		close(nl->fd);
	return ret;
}

/* STATUS_GET into @m (valid until the next nl_status()) */
static inline int nl_status(struct nl *nl, struct nl_msg *m)
{
	memset(m, 0, sizeof(*m));
	return nl_request(nl, AMUPMU_NL_CMD_STATUS_GET, 0, NULL, 0, NULL, status_cb, m);
}

static inline int nl_status_u64(struct nl *nl, int attr, __u64 *val)
{
	struct nl_msg m;
	int ret = nl_status(nl, &m);

	if (ret)
		return ret;
	if (!m.a[attr])
		return -ENODATA;
	*val = m.a[attr]->nla_len >= NLA_HDRLEN + 8 ? attr_u64(m.a[attr]) : attr_u32(m.a[attr]);
	return 0;
}

/*
 * Wait up to @ms for one event on @nl into @m (a private copy in @buf).
 * Returns 0, -ETIMEDOUT, or recv's -errno (ENOBUFS after an overrun).
 */
static inline int nl_event(struct nl *nl, struct nl_msg *m, char *buf, size_t size, int ms)
{
	struct pollfd pfd = { .fd = nl->fd, .events = POLLIN };
	ssize_t n;

	if (poll(&pfd, 1, ms) <= 0)
		return -ETIMEDOUT;
	n = recv(nl->fd, buf, size, 0);
	if (n < 0)
		return -errno;
	if (!NLMSG_OK((struct nlmsghdr *)buf, (size_t)n))
		return -EBADMSG;
	parse_attrs(m, (struct nlmsghdr *)buf);
	return 0;
}

/* What one CPU_GET reply carries: its attributes' bytes, the totals. */
struct nl_cpu_reply {
	unsigned int n;		/* replies seen for the CPU */
	__u32 cpu;
	char attrs[2048];	/* the attributes but the totals, as sent, in order */
	size_t alen;
	bool has_lost, has_throttled;
	__u64 lost, throttled;
	bool bad;		/* a total not a u64, or attributes beyond attrs[] */
};

static inline void nl_cpu_reply_cb(const struct nlmsghdr *h, void *arg)
{
	const char *p = (const char *)NLMSG_DATA(h) + GENL_HDRLEN;
	const char *end = (const char *)h + h->nlmsg_len;
	struct nl_cpu_reply *r = arg;
	struct nl_msg m;

	parse_attrs(&m, h);
	if (m.cmd != AMUPMU_NL_CMD_CPU_GET || !m.a[AMUPMU_NL_A_CPU] ||
	    attr_u32(m.a[AMUPMU_NL_A_CPU]) != r->cpu)
		return;
	r->n++;
	r->has_lost = m.a[AMUPMU_NL_A_LOST_TOTAL];
	r->has_throttled = m.a[AMUPMU_NL_A_THROTTLED_TOTAL];
	if (r->has_lost) {
		r->bad |= m.a[AMUPMU_NL_A_LOST_TOTAL]->nla_len != NLA_HDRLEN + 8;
		r->lost = attr_u64(m.a[AMUPMU_NL_A_LOST_TOTAL]);
	}
	if (r->has_throttled) {
		r->bad |= m.a[AMUPMU_NL_A_THROTTLED_TOTAL]->nla_len != NLA_HDRLEN + 8;
		r->throttled = attr_u64(m.a[AMUPMU_NL_A_THROTTLED_TOTAL]);
	}
	/* every attribute but the totals (no PAD on arm64: 64-bit aligned is not needed) */
	r->alen = 0;
	while (p + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const struct nlattr *)p;
		__u16 t = a->nla_type & NLA_TYPE_MASK;
		size_t len = NLA_ALIGN(a->nla_len);

		if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
			break;
		if (len > (size_t)(end - p))
			len = end - p;
		if (t != AMUPMU_NL_A_LOST_TOTAL && t != AMUPMU_NL_A_THROTTLED_TOTAL) {
			if (r->alen + len > sizeof(r->attrs)) {
				r->bad = true;
				r->alen = 0;
				return;
			}
			memcpy(r->attrs + r->alen, p, len);
			r->alen += len;
		}
		p += NLA_ALIGN(a->nla_len);
	}
}

/*
 * CPU_GET of @cpu on @nl: a do, or with @dump the dump's message of @cpu.
 * -ENOMSG without one, -EBADMSG when a total is not a u64.
 */
static inline int nl_cpu_get(struct nl *nl, __u32 cpu, bool dump, struct nl_cpu_reply *r)
{
	char attrs[16];
	char *end = put_attr(attrs, AMUPMU_NL_A_CPU, &cpu, sizeof(cpu));
	int ret;

	memset(r, 0, sizeof(*r));
	r->cpu = cpu;
	if (dump)
		ret = nl_request(nl, AMUPMU_NL_CMD_CPU_GET, NLM_F_DUMP, NULL, 0, NULL,
				 nl_cpu_reply_cb, r);
	else
		ret = nl_request(nl, AMUPMU_NL_CMD_CPU_GET, 0, attrs, end - attrs, NULL,
				 nl_cpu_reply_cb, r);
	if (!ret && r->n != 1)
		ret = -ENOMSG;
	if (!ret && r->bad)
		ret = -EBADMSG;
	return ret;
}

/* A socket of its own on @nl, the family resolved. */
static inline int nl_ready(struct nl *nl)
{
	int ret = nl_open(nl);

	if (ret)
		return ret;
	ret = nl_resolve(nl);
	if (ret)
		close(nl->fd);
	return ret;
}

#endif /* AMUPMU_NL_H */
