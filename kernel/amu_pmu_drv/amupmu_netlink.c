// SPDX-License-Identifier: GPL-2.0
/*
 * amupmu: the generic netlink family "amupmu" (include/uapi/linux/
 * amupmu_netlink.h, Documentation/netlink/specs/amupmu.yaml).
 *
 * Requests: STATUS_GET, CPU_GET (do and dump), SESSION_GET (dump) and
 * SUBSCRIBE.
 *
 * Privilege: what shows other users' sessions (the SESSION_GET dump beyond
 * the caller's own sessions, the session and buffer event groups) needs
 * CAP_PERFMON or CAP_SYS_ADMIN (perfmon_capable()'s pair) of both the
 * socket's opener and the process that sends the request, each having
 * either, checked by amupmu_nl_perfmon() (the opener on the socket's file,
 * also for a request sent to an explicit address): a socket opened without it
 * and handed to a privileged process (a setuid program's stdout) cannot be
 * made to ask for it. A dump decides in its start callback, which runs in
 * the sender's context; the later parts of a dump run in whoever reads the
 * socket, and use what the start decided. The CPU group (hotplug, ownership)
 * and the per-CPU session counts of CPU_GET are open to every user, as
 * AMUPMU_INFO's free counters are: they name no process, event or filter.
 * CPU_GET's LOST_TOTAL and THROTTLED_TOTAL (every session's lost samples and
 * throttles on the CPU) describe what other users' sessions sample: they are
 * in the reply only for a caller with CAP_PERFMON, decided in the same way
 * (a do in its context, a dump in its start callback). For these polled
 * requests a sender with neither capability is answered without the
 * audited checks (amupmu_nl_perfmon_quiet()); SUBSCRIBE audits them all.
 *
 * Events: the driver's files call the amupmu_nl_*() emitters from any
 * context; an emitter only copies the event into a fixed queue
 * under a raw spinlock (no allocation, no sleeping) and queues a work item,
 * which builds one message per subscriber and unicasts it.
 *
 * Why subscriptions and not netlink multicast groups: neither kernel this
 * module builds for lets a family check CAP_PERFMON when a socket joins a
 * multicast group (6.1's genl_bind() knows only GENL_MCAST_CAP_NET_ADMIN
 * and _SYS_ADMIN, checked in the network namespace's user namespace; the
 * family bind() callback of later kernels cannot refuse), and a multicast
 * sender does not learn which listener's buffer overflowed. A subscription
 * is checked once, on the subscribing socket and process, and a unicast that finds the
 * receiver's buffer full is counted (the receiver reads ENOBUFS).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/cpumask.h>
#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uidgid.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <linux/amupmu_netlink.h>

#include "amupmu.h"
#include "amupmu_compat.h"
#include "amupmu_pmu.h"
#include "amupmu_spe.h"

/* ------------------------------------------------------------ state */

/*
 * Sessions (the registry the SESSION_GET dump walks), in the order they
 * started, so ids ascend. amupmu_nl_sess_lock is a leaf lock: nothing else
 * is taken under it.
 */
static LIST_HEAD(amupmu_nl_sessions);
static DEFINE_MUTEX(amupmu_nl_sess_lock);
static u64 amupmu_nl_next_id = 1;	/* under amupmu_nl_sess_lock */

/* bumped by every hotplug, ownership and session change; never 0 */
static atomic_t amupmu_nl_gen = ATOMIC_INIT(1);

/**
 * struct amupmu_nl_ev - a queued event
 * @cmd: enum amupmu_nl_cmds
 * @group: enum amupmu_nl_group
 * @seq: its group's sequence number
 * @time: ktime_get_ns() when it happened
 * @pid: process it names (a reference), or NULL
 * @u: the event's data, by @cmd
 */
struct amupmu_nl_ev {
	u8 cmd;
	u8 group;
	u64 seq;
	u64 time;
	struct pid *pid;
	union {
		struct {
			u32 cpu;
			u32 flags;
			u32 pmu_version;
			u32 pmu_counters;
			u32 amu_version;
			u32 spe_version;
			u64 midr;
		} cpu;
		struct {
			u32 unit;
			u32 owner;
		} own;
		struct {
			u64 id;
			u32 kind;
		} sess;
		struct {
			char name[AMUPMU_NL_KNOB_LEN];
			u64 old;
			u64 new;
		} knob;
		struct {
			u64 id;
			u32 cpu;
			u32 what;
			u64 val;	/* LOST: records lost; SPE: PMBSR_EL1; THROTTLE: count */
		} buf;
	} u;
};

#define AMUPMU_NL_QUEUE_LEN	256	/* a power of 2 */
/* payload room of an event message (the largest, CPU_ONLINE, is 112 bytes) */
#define AMUPMU_NL_EV_SIZE	256

/*
 * The event queue. amupmu_nl_q_lock (a raw spinlock: emitters run in hard
 * interrupt context, under other raw spinlocks) guards everything below it.
 */
static DEFINE_RAW_SPINLOCK(amupmu_nl_q_lock);
static struct amupmu_nl_ev amupmu_nl_q[AMUPMU_NL_QUEUE_LEN];
static unsigned int amupmu_nl_q_head;	/* next to send */
static unsigned int amupmu_nl_q_tail;	/* next free */
static bool amupmu_nl_live;		/* the family is registered */
static u64 amupmu_nl_seq[__AMUPMU_NL_GROUP_MAX];
static u64 amupmu_nl_dropped;

static void amupmu_nl_work_fn(struct work_struct *work);
static DECLARE_WORK(amupmu_nl_work, amupmu_nl_work_fn);

/**
 * struct amupmu_nl_sub - a subscribed socket
 * @node: in amupmu_nl_subs
 * @net: the socket's network namespace (valid while subscribed: the socket
 *	holds it, and its release removes the subscription first)
 * @portid: the socket's port id
 * @groups: bitmap of enum amupmu_nl_group
 * @pid_ns: pid namespace of the subscribing process (a reference): pids in
 *	its events are translated into it
 */
struct amupmu_nl_sub {
	struct list_head node;
	struct net *net;
	u32 portid;
	u32 groups;
	struct pid_namespace *pid_ns;
};

/* subscriptions; amupmu_nl_sub_lock guards the list and the counters */
static LIST_HEAD(amupmu_nl_subs);
static DEFINE_MUTEX(amupmu_nl_sub_lock);
static unsigned int amupmu_nl_nr_subs;
static u64 amupmu_nl_undelivered;
/*
 * The groups some subscription holds (a bitmap of enum amupmu_nl_group),
 * written under amupmu_nl_sub_lock, read locklessly by amupmu_nl_queue():
 * an event nobody listens to takes its sequence number and goes no further
 * (no queue slot, no work item: a session storm without a monitor costs
 * what it did before the family existed)
 */
static u32 amupmu_nl_listened;

static struct genl_family amupmu_nl_family;

/* Groups that name processes or describe counters. */
#define AMUPMU_NL_GROUPS_PERFMON	(BIT(AMUPMU_NL_GROUP_SESSION) | BIT(AMUPMU_NL_GROUP_BUFFER))

/* ------------------------------------------------------------ emitting */

static void amupmu_nl_gen_bump(void)
{
	if (unlikely(atomic_inc_return(&amupmu_nl_gen) == 0))
		atomic_inc(&amupmu_nl_gen);
}

/*
 * Queue @ev (any context). The group's sequence number is taken even when
 * the queue is full, so that every subscriber sees the gap. Consumes
 * @ev->pid.
 */
static void amupmu_nl_queue(struct amupmu_nl_ev *ev)
{
	struct pid *drop = NULL;
	unsigned long flags;

	ev->time = ktime_get_ns();
	raw_spin_lock_irqsave(&amupmu_nl_q_lock, flags);
	if (!amupmu_nl_live) {
		drop = ev->pid;
	} else {
		ev->seq = amupmu_nl_seq[ev->group]++;
		if (!(READ_ONCE(amupmu_nl_listened) & BIT(ev->group))) {
			drop = ev->pid;
		} else if (amupmu_nl_q_tail - amupmu_nl_q_head >= AMUPMU_NL_QUEUE_LEN) {
			amupmu_nl_dropped++;
			drop = ev->pid;
		} else {
			amupmu_nl_q[amupmu_nl_q_tail++ % AMUPMU_NL_QUEUE_LEN] = *ev;
			queue_work(system_wq, &amupmu_nl_work);
		}
	}
	raw_spin_unlock_irqrestore(&amupmu_nl_q_lock, flags);
	put_pid(drop);
}

/**
 * amupmu_nl_cpu_event() - a CPU came online or went offline
 * @cpu: the CPU
 * @online: which
 * @first: its first online since load
 *
 * Process context (hotplug callbacks), amupmu_dev.lock not held.
 */
static void amupmu_nl_cpu_event(unsigned int cpu, bool online, bool first)
{
	struct amupmu_nl_ev ev = {
		.cmd = online ? AMUPMU_NL_CMD_CPU_ONLINE : AMUPMU_NL_CMD_CPU_OFFLINE,
		.group = AMUPMU_NL_GROUP_CPU,
	};
	struct amupmu_cpu_info ci;

	amupmu_nl_gen_bump();
	amupmu_cpu_snapshot(cpu, &ci);
	ev.u.cpu.cpu = cpu;
	ev.u.cpu.flags = ci.flags;
	ev.u.cpu.midr = ci.midr;
	ev.u.cpu.pmu_version = ci.pmu_version;
	ev.u.cpu.pmu_counters = ci.pmu_num_counters;
	ev.u.cpu.amu_version = ci.amu_version;
	ev.u.cpu.spe_version = ci.spe_version;
	amupmu_nl_queue(&ev);
}

/* the CPU group's events, once every unit's part of a hotplug is done */
const struct amupmu_unit_ops amupmu_nl_unit = {
	.cpu_changed = amupmu_nl_cpu_event,
};

/**
 * amupmu_nl_owner_event() - the PMU or SPE changed hands
 * @unit: enum amupmu_nl_unit
 * @owner: the new owner (enum amupmu_pmu_owner or enum amupmu_spe_owner)
 */
void amupmu_nl_owner_event(u32 unit, u32 owner)
{
	struct amupmu_nl_ev ev = {
		.cmd = AMUPMU_NL_CMD_OWNER_CHANGE,
		.group = AMUPMU_NL_GROUP_CPU,
		.u.own = { .unit = unit, .owner = owner },
	};

	amupmu_nl_gen_bump();
	amupmu_nl_queue(&ev);
}

/**
 * amupmu_nl_knob_event() - an SPE debugfs knob was written (process context)
 * @name: the knob's file name
 * @old: its value before
 * @new: its value now
 */
void amupmu_nl_knob_event(const char *name, u64 old, u64 new)
{
	struct amupmu_nl_ev ev = {
		.cmd = AMUPMU_NL_CMD_KNOB_CHANGE,
		.group = AMUPMU_NL_GROUP_SESSION,
		.pid = get_pid(task_tgid(current)),
		.u.knob = { .old = old, .new = new },
	};

	strscpy(ev.u.knob.name, name, sizeof(ev.u.knob.name));
	amupmu_nl_queue(&ev);
}

/* A buffer-group count event @cmd, sent when @count reaches a power of 2. */
static void amupmu_nl_buf_count(u8 cmd, u64 id, unsigned int cpu, u64 count)
{
	struct amupmu_nl_ev ev = {
		.cmd = cmd,
		.group = AMUPMU_NL_GROUP_BUFFER,
		.u.buf = { .id = id, .cpu = cpu, .val = count },
	};

	if (!is_power_of_2(count))
		return;
	amupmu_nl_queue(&ev);
}

/**
 * amupmu_nl_ring_lost() - a CPU's part of a sample ring lost a record
 * @id: the session's id
 * @cpu: the CPU
 * @lost: its lost count now; an event when it is a power of 2
 *
 * Any context (the PMU overflow handler).
 */
void amupmu_nl_ring_lost(u64 id, unsigned int cpu, u64 lost)
{
	amupmu_nl_buf_count(AMUPMU_NL_CMD_RING_LOST, id, cpu, lost);
}

/**
 * amupmu_nl_spe_buffer() - an SPE buffer management event
 * @id: the session's id
 * @cpu: the CPU
 * @what: enum amupmu_nl_spe_event
 * @pmbsr: PMBSR_EL1
 *
 * Any context (the SPE buffer interrupt).
 */
void amupmu_nl_spe_buffer(u64 id, unsigned int cpu, u32 what, u64 pmbsr)
{
	struct amupmu_nl_ev ev = {
		.cmd = AMUPMU_NL_CMD_SPE_BUFFER,
		.group = AMUPMU_NL_GROUP_BUFFER,
		.u.buf = { .id = id, .cpu = cpu, .what = what, .val = pmbsr },
	};

	amupmu_nl_queue(&ev);
}

/**
 * amupmu_nl_throttle() - a session's sample interrupts were throttled on a CPU
 * @id: the session's id
 * @cpu: the CPU
 * @throttled: its throttled count now; an event when it is a power of 2
 *
 * Any context (the PMU overflow handler).
 */
void amupmu_nl_throttle(u64 id, unsigned int cpu, u64 throttled)
{
	amupmu_nl_buf_count(AMUPMU_NL_CMD_THROTTLE, id, cpu, throttled);
}

static void amupmu_nl_session_event(const struct amupmu_nl_sess *ns, u8 cmd)
{
	struct amupmu_nl_ev ev = {
		.cmd = cmd,
		.group = AMUPMU_NL_GROUP_SESSION,
		.pid = get_pid(ns->owner),
		.u.sess = { .id = ns->id, .kind = ns->kind },
	};

	amupmu_nl_queue(&ev);
}

/**
 * amupmu_nl_session_start() - a session configured its PMU group or SPE
 * @ns: filled by the caller (kind, cpus, events or SPE registers); gets its
 *	id and owner here. What it points to must stay valid and unchanged
 *	until amupmu_nl_session_end().
 *
 * Process context, the configuring process.
 */
void amupmu_nl_session_start(struct amupmu_nl_sess *ns)
{
	ns->owner = get_pid(task_tgid(current));
	ns->uid = current_euid();
	mutex_lock(&amupmu_nl_sess_lock);
	ns->id = amupmu_nl_next_id++;
	list_add_tail(&ns->node, &amupmu_nl_sessions);
	amupmu_nl_gen_bump();
	mutex_unlock(&amupmu_nl_sess_lock);
	amupmu_nl_session_event(ns, AMUPMU_NL_CMD_SESSION_START);
}

/**
 * amupmu_nl_session_end() - the session gave its group or SPE back
 * @ns: as registered by amupmu_nl_session_start()
 */
void amupmu_nl_session_end(struct amupmu_nl_sess *ns)
{
	mutex_lock(&amupmu_nl_sess_lock);
	list_del(&ns->node);
	amupmu_nl_gen_bump();
	mutex_unlock(&amupmu_nl_sess_lock);
	amupmu_nl_session_event(ns, AMUPMU_NL_CMD_SESSION_END);
	put_pid(ns->owner);
	ns->owner = NULL;
}

/* ------------------------------------------------------------ delivering */

/* A process id as a process of @ns sees it; 0 when it does not. */
static u32 amupmu_nl_pid(struct pid *pid, struct pid_namespace *ns)
{
	return pid ? pid_nr_ns(pid, ns) : 0;
}

static int amupmu_nl_fill_event(struct sk_buff *skb, const struct amupmu_nl_ev *ev,
				struct pid_namespace *ns)
{
	void *hdr = genlmsg_put(skb, 0, 0, &amupmu_nl_family, 0, ev->cmd);

	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, AMUPMU_NL_A_SEQ, ev->seq, AMUPMU_NL_A_PAD) ||
	    nla_put_u64_64bit(skb, AMUPMU_NL_A_TIME, ev->time, AMUPMU_NL_A_PAD))
		goto cancel;

	switch (ev->cmd) {
	case AMUPMU_NL_CMD_CPU_ONLINE:
		if (nla_put_u64_64bit(skb, AMUPMU_NL_A_MIDR, ev->u.cpu.midr, AMUPMU_NL_A_PAD) ||
		    nla_put_u32(skb, AMUPMU_NL_A_PMU_VERSION, ev->u.cpu.pmu_version) ||
		    nla_put_u32(skb, AMUPMU_NL_A_PMU_COUNTERS, ev->u.cpu.pmu_counters) ||
		    nla_put_u32(skb, AMUPMU_NL_A_AMU_VERSION, ev->u.cpu.amu_version) ||
		    nla_put_u32(skb, AMUPMU_NL_A_SPE_VERSION, ev->u.cpu.spe_version))
			goto cancel;
		fallthrough;
	case AMUPMU_NL_CMD_CPU_OFFLINE:
		if (nla_put_u32(skb, AMUPMU_NL_A_CPU, ev->u.cpu.cpu) ||
		    nla_put_u32(skb, AMUPMU_NL_A_CPU_FLAGS, ev->u.cpu.flags))
			goto cancel;
		break;
	case AMUPMU_NL_CMD_OWNER_CHANGE:
		if (nla_put_u32(skb, AMUPMU_NL_A_UNIT, ev->u.own.unit) ||
		    nla_put_u32(skb, AMUPMU_NL_A_OWNER, ev->u.own.owner))
			goto cancel;
		break;
	case AMUPMU_NL_CMD_SESSION_START:
	case AMUPMU_NL_CMD_SESSION_END:
		if (nla_put_u64_64bit(skb, AMUPMU_NL_A_SESSION_ID, ev->u.sess.id,
				      AMUPMU_NL_A_PAD) ||
		    nla_put_u32(skb, AMUPMU_NL_A_SESSION_KIND, ev->u.sess.kind) ||
		    nla_put_u32(skb, AMUPMU_NL_A_PID, amupmu_nl_pid(ev->pid, ns)))
			goto cancel;
		break;
	case AMUPMU_NL_CMD_KNOB_CHANGE:
		if (nla_put_string(skb, AMUPMU_NL_A_KNOB, ev->u.knob.name) ||
		    nla_put_u64_64bit(skb, AMUPMU_NL_A_OLD, ev->u.knob.old, AMUPMU_NL_A_PAD) ||
		    nla_put_u64_64bit(skb, AMUPMU_NL_A_NEW, ev->u.knob.new, AMUPMU_NL_A_PAD) ||
		    nla_put_u32(skb, AMUPMU_NL_A_PID, amupmu_nl_pid(ev->pid, ns)))
			goto cancel;
		break;
	case AMUPMU_NL_CMD_RING_LOST:
	case AMUPMU_NL_CMD_SPE_BUFFER:
	case AMUPMU_NL_CMD_THROTTLE:
		if (nla_put_u64_64bit(skb, AMUPMU_NL_A_SESSION_ID, ev->u.buf.id,
				      AMUPMU_NL_A_PAD) ||
		    nla_put_u32(skb, AMUPMU_NL_A_CPU, ev->u.buf.cpu))
			goto cancel;
		if (ev->cmd == AMUPMU_NL_CMD_THROTTLE) {
			if (nla_put_u64_64bit(skb, AMUPMU_NL_A_THROTTLED, ev->u.buf.val,
					      AMUPMU_NL_A_PAD))
				goto cancel;
		} else if (ev->cmd == AMUPMU_NL_CMD_RING_LOST ?
		    nla_put_u64_64bit(skb, AMUPMU_NL_A_LOST, ev->u.buf.val, AMUPMU_NL_A_PAD) :
		    nla_put_u32(skb, AMUPMU_NL_A_SPE_EVENT, ev->u.buf.what) ||
		    nla_put_u64_64bit(skb, AMUPMU_NL_A_PMBSR, ev->u.buf.val, AMUPMU_NL_A_PAD))
			goto cancel;
		break;
	}
	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* amupmu_nl_listened again, after a change of the subscriptions. */
static void amupmu_nl_listened_update(void)
{
	struct amupmu_nl_sub *sub;
	u32 groups = 0;

	lockdep_assert_held(&amupmu_nl_sub_lock);
	list_for_each_entry(sub, &amupmu_nl_subs, node)
		groups |= sub->groups;
	WRITE_ONCE(amupmu_nl_listened, groups);
}

static void amupmu_nl_sub_free(struct amupmu_nl_sub *sub)
{
	list_del(&sub->node);
	amupmu_nl_nr_subs--;
	put_pid_ns(sub->pid_ns);
	kfree(sub);
	amupmu_nl_listened_update();
}

/* Send @ev to each subscriber of its group. Process context. */
static void amupmu_nl_deliver(const struct amupmu_nl_ev *ev)
{
	struct amupmu_nl_sub *sub, *tmp;
	struct sk_buff *skb;
	int ret;

	mutex_lock(&amupmu_nl_sub_lock);
	list_for_each_entry_safe(sub, tmp, &amupmu_nl_subs, node) {
		if (!(sub->groups & BIT(ev->group)))
			continue;
		skb = genlmsg_new(AMUPMU_NL_EV_SIZE, GFP_KERNEL);
		if (!skb || amupmu_nl_fill_event(skb, ev, sub->pid_ns)) {
			kfree_skb(skb);
			amupmu_nl_undelivered++;
			continue;
		}
		ret = genlmsg_unicast(sub->net, skb, sub->portid);
		if (ret == -ECONNREFUSED)
			amupmu_nl_sub_free(sub);	/* the socket is gone */
		else if (ret)
			amupmu_nl_undelivered++;	/* its buffer is full: ENOBUFS there */
	}
	mutex_unlock(&amupmu_nl_sub_lock);
}

static void amupmu_nl_work_fn(struct work_struct *work)
{
	struct amupmu_nl_ev ev;
	unsigned long flags;

	for (;;) {
		raw_spin_lock_irqsave(&amupmu_nl_q_lock, flags);
		if (amupmu_nl_q_head == amupmu_nl_q_tail) {
			raw_spin_unlock_irqrestore(&amupmu_nl_q_lock, flags);
			return;
		}
		ev = amupmu_nl_q[amupmu_nl_q_head++ % AMUPMU_NL_QUEUE_LEN];
		raw_spin_unlock_irqrestore(&amupmu_nl_q_lock, flags);
		amupmu_nl_deliver(&ev);
		put_pid(ev.pid);
		cond_resched();
	}
}

/* A netlink socket closed: its subscription ends. */
static int amupmu_nl_notify(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct netlink_notify *n = ptr;
	struct amupmu_nl_sub *sub, *tmp;

	if (event != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC)
		return NOTIFY_DONE;
	mutex_lock(&amupmu_nl_sub_lock);
	list_for_each_entry_safe(sub, tmp, &amupmu_nl_subs, node)
		if (sub->portid == n->portid && net_eq(sub->net, n->net))
			amupmu_nl_sub_free(sub);
	mutex_unlock(&amupmu_nl_sub_lock);
	return NOTIFY_DONE;
}

static struct notifier_block amupmu_nl_notifier = {
	.notifier_call = amupmu_nl_notify,
};

/* ------------------------------------------------------------ requests */

static int amupmu_nl_status_get(struct sk_buff *skb, struct genl_info *info)
{
	u64 features = amupmu_features();
	u64 dropped, undelivered;
	unsigned long flags;
	struct sk_buff *msg;
	unsigned int subs;
	void *hdr;

	raw_spin_lock_irqsave(&amupmu_nl_q_lock, flags);
	dropped = amupmu_nl_dropped;
	raw_spin_unlock_irqrestore(&amupmu_nl_q_lock, flags);
	mutex_lock(&amupmu_nl_sub_lock);
	undelivered = amupmu_nl_undelivered;
	subs = amupmu_nl_nr_subs;
	mutex_unlock(&amupmu_nl_sub_lock);

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &amupmu_nl_family, 0, AMUPMU_NL_CMD_STATUS_GET);
	if (!hdr ||
	    nla_put_u64_64bit(msg, AMUPMU_NL_A_FEATURES, features, AMUPMU_NL_A_PAD) ||
	    nla_put_u32(msg, AMUPMU_NL_A_NR_CPUS, nr_cpu_ids) ||
	    nla_put_u32(msg, AMUPMU_NL_A_PMU_OWNER, amupmu_pmu_owner(features)) ||
	    nla_put_u32(msg, AMUPMU_NL_A_SPE_OWNER, amupmu_spe_owner()) ||
	    nla_put_u32(msg, AMUPMU_NL_A_GENERATION, atomic_read(&amupmu_nl_gen)) ||
	    nla_put_u64_64bit(msg, AMUPMU_NL_A_EVENTS_DROPPED, dropped, AMUPMU_NL_A_PAD) ||
	    nla_put_u64_64bit(msg, AMUPMU_NL_A_EVENTS_UNDELIVERED, undelivered,
			      AMUPMU_NL_A_PAD) ||
	    nla_put_u32(msg, AMUPMU_NL_A_SUBSCRIBERS, subs)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/*
 * CAP_PERFMON or CAP_SYS_ADMIN of the request's socket opener, and either
 * of the two of the sending process, each in the initial user namespace
 * (perfmon_capable()'s pair for each). The opener is checked on the
 * socket's file for every request, also one sent to an explicit address
 * (NETLINK_SKB_DST: sendto(), or sendmsg() with msg_name, as libnl always
 * does), for which netlink_capable() would skip it; a socket without a
 * file (a kernel socket) is denied. Valid only in the sender's context (a
 * doit, or a dump's start callback): the sender is current.
 */
static bool amupmu_nl_perfmon(const struct sk_buff *skb)
{
	const struct sock *sk = NETLINK_CB(skb).sk;
	const struct socket *sock = sk ? sk->sk_socket : NULL;
	const struct file *f = sock ? sock->file : NULL;

	return f &&
	       (file_ns_capable(f, &init_user_ns, CAP_PERFMON) ||
		file_ns_capable(f, &init_user_ns, CAP_SYS_ADMIN)) &&
	       (ns_capable(&init_user_ns, CAP_PERFMON) ||
		ns_capable(&init_user_ns, CAP_SYS_ADMIN));
}

/*
 * amupmu_nl_perfmon() for the polled requests (CPU_GET, the SESSION_GET
 * dump), whose privileged part is an optional extra: a sender with
 * neither capability is answered without it before any audited check, so
 * that it leaves no capability denial records in the audit log. In the
 * sender's context, as amupmu_nl_perfmon().
 */
static bool amupmu_nl_perfmon_quiet(const struct sk_buff *skb)
{
	return (ns_capable_noaudit(&init_user_ns, CAP_PERFMON) ||
		ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN)) &&
	       amupmu_nl_perfmon(skb);
}

/* Sessions of each kind whose CPU set has @cpu. */
static void amupmu_nl_cpu_sessions(unsigned int cpu, u32 *pmu, u32 *spe)
{
	const struct amupmu_nl_sess *ns;

	*pmu = 0;
	*spe = 0;
	mutex_lock(&amupmu_nl_sess_lock);
	list_for_each_entry(ns, &amupmu_nl_sessions, node) {
		if (!cpumask_test_cpu(cpu, ns->cpus))
			continue;
		if (ns->kind == AMUPMU_NL_SESSION_PMU)
			(*pmu)++;
		else
			(*spe)++;
	}
	mutex_unlock(&amupmu_nl_sess_lock);
}

/*
 * One CPU_GET reply; @perfmon: the caller has CAP_PERFMON (amupmu_nl_perfmon())
 * and gets the CPU's totals of every session too.
 */
static int amupmu_nl_fill_cpu(struct sk_buff *skb, u32 portid, u32 seq, int flags,
			      unsigned int cpu, struct netlink_callback *cb, bool perfmon)
{
	u64 features = amupmu_features();
	struct amupmu_cpu_info ci;
	u32 pmu_sess, spe_sess;
	u64 lost, throttled;
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &amupmu_nl_family, flags, AMUPMU_NL_CMD_CPU_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);
	amupmu_cpu_snapshot(cpu, &ci);
	amupmu_nl_cpu_sessions(cpu, &pmu_sess, &spe_sess);
	if (nla_put_u32(skb, AMUPMU_NL_A_CPU, cpu) ||
	    nla_put_u32(skb, AMUPMU_NL_A_CPU_FLAGS, ci.flags) ||
	    nla_put_u64_64bit(skb, AMUPMU_NL_A_MIDR, ci.midr, AMUPMU_NL_A_PAD) ||
	    nla_put_u64_64bit(skb, AMUPMU_NL_A_REVIDR, ci.revidr, AMUPMU_NL_A_PAD) ||
	    nla_put_u32(skb, AMUPMU_NL_A_PMU_VERSION, ci.pmu_version) ||
	    nla_put_u32(skb, AMUPMU_NL_A_PMU_COUNTERS, ci.pmu_num_counters) ||
	    nla_put_u32(skb, AMUPMU_NL_A_PMU_COUNTERS_FREE,
			amupmu_pmu_free_mask(cpu, ci.pmu_num_counters)) ||
	    nla_put_u32(skb, AMUPMU_NL_A_AMU_VERSION, ci.amu_version) ||
	    nla_put_u32(skb, AMUPMU_NL_A_SPE_VERSION, ci.spe_version) ||
	    nla_put_u64_64bit(skb, AMUPMU_NL_A_PMSIDR, ci.pmsidr, AMUPMU_NL_A_PAD) ||
	    nla_put_u64_64bit(skb, AMUPMU_NL_A_AMCFGR, ci.amcfgr, AMUPMU_NL_A_PAD) ||
	    nla_put_u32(skb, AMUPMU_NL_A_PMU_OWNER, amupmu_pmu_owner(features)) ||
	    nla_put_u32(skb, AMUPMU_NL_A_SPE_OWNER, amupmu_spe_owner()) ||
	    nla_put_u32(skb, AMUPMU_NL_A_PMU_SESSIONS, pmu_sess) ||
	    nla_put_u32(skb, AMUPMU_NL_A_SPE_SESSIONS, spe_sess))
		goto cancel;
	if (perfmon) {
		amupmu_pmu_totals(cpu, &lost, &throttled);
		if (nla_put_u64_64bit(skb, AMUPMU_NL_A_LOST_TOTAL, lost, AMUPMU_NL_A_PAD) ||
		    nla_put_u64_64bit(skb, AMUPMU_NL_A_THROTTLED_TOTAL, throttled,
				      AMUPMU_NL_A_PAD))
			goto cancel;
	}
	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int amupmu_nl_cpu_get(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	u32 cpu;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, AMUPMU_NL_A_CPU))
		return -EINVAL;
	cpu = nla_get_u32(info->attrs[AMUPMU_NL_A_CPU]);
	if (cpu >= nr_cpu_ids || !cpu_possible(cpu)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[AMUPMU_NL_A_CPU],
				    "no such CPU (not possible)");
		return -ENODEV;
	}
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	ret = amupmu_nl_fill_cpu(msg, info->snd_portid, info->snd_seq, 0, cpu, NULL,
				 amupmu_nl_perfmon_quiet(skb));
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

/*
 * The CPU_GET dump's start, in the sender's context: cb->args[1] says
 * whether it gets the totals (CAP_PERFMON), decided once.
 */
static int amupmu_nl_cpu_dump_start(struct netlink_callback *cb)
{
	cb->args[1] = amupmu_nl_perfmon_quiet(cb->skb);
	return 0;
}

/* cb->args[0]: the next CPU number; args[1]: see amupmu_nl_cpu_dump_start() */
static int amupmu_nl_cpu_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	unsigned int cpu;

	cb->seq = atomic_read(&amupmu_nl_gen);
	for (cpu = cb->args[0]; cpu < nr_cpu_ids; cpu++) {
		if (!cpu_possible(cpu))
			continue;
		if (amupmu_nl_fill_cpu(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				       NLM_F_MULTI, cpu, cb, cb->args[1]))
			break;
	}
	cb->args[0] = cpu;
	return skb->len;
}

static int amupmu_nl_fill_session(struct sk_buff *skb, struct netlink_callback *cb,
				  const struct amupmu_nl_sess *ns)
{
	u64 words[BITS_TO_U64(NR_CPUS)];
	struct nlattr *nest, *ev;
	unsigned int e;
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &amupmu_nl_family, NLM_F_MULTI, AMUPMU_NL_CMD_SESSION_GET);
	if (!hdr)
		return -EMSGSIZE;
	genl_dump_check_consistent(cb, hdr);
	bitmap_to_arr64(words, cpumask_bits(ns->cpus), nr_cpu_ids);
	if (nla_put_u64_64bit(skb, AMUPMU_NL_A_SESSION_ID, ns->id, AMUPMU_NL_A_PAD) ||
	    nla_put_u32(skb, AMUPMU_NL_A_SESSION_KIND, ns->kind) ||
	    nla_put_u32(skb, AMUPMU_NL_A_PID,
			amupmu_nl_pid(ns->owner, task_active_pid_ns(current))) ||
	    nla_put(skb, AMUPMU_NL_A_CPUS, BITS_TO_U64(nr_cpu_ids) * sizeof(u64), words))
		goto cancel;
	if (ns->kind == AMUPMU_NL_SESSION_SPE) {
		if (nla_put_u64_64bit(skb, AMUPMU_NL_A_PMSFCR, ns->pmsfcr, AMUPMU_NL_A_PAD) ||
		    nla_put_u64_64bit(skb, AMUPMU_NL_A_PMSIRR, ns->pmsirr, AMUPMU_NL_A_PAD))
			goto cancel;
	}
	for (e = 0; e < ns->nr_events; e++) {
		nest = nla_nest_start(skb, AMUPMU_NL_A_EVENT);
		ev = nest;
		if (!nest ||
		    nla_put_u32(skb, AMUPMU_NL_EVENT_A_TYPE, ns->evtyper[e]) ||
		    nla_put_u64_64bit(skb, AMUPMU_NL_EVENT_A_PERIOD, ns->period[e],
				      AMUPMU_NL_EVENT_A_PAD))
			goto cancel;
		nla_nest_end(skb, ev);
	}
	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* SESSION_GET dump, cb->args[1]: what the caller may see */
enum {
	AMUPMU_NL_SEE_NONE,	/* opener and sender differ in uid: nothing */
	AMUPMU_NL_SEE_OWN,	/* sessions of the uid in cb->args[2] */
	AMUPMU_NL_SEE_ALL,	/* CAP_PERFMON: every session */
};

/*
 * The dump's start, in the sender's context: what it may see, decided once
 * (the dump's later parts run in the context of whoever reads the socket).
 */
static int amupmu_nl_session_dump_start(struct netlink_callback *cb)
{
	const struct sock *sk = NETLINK_CB(cb->skb).sk;
	const struct file *f = sk && sk->sk_socket ? sk->sk_socket->file : NULL;
	kuid_t uid = current_euid();

	if (amupmu_nl_perfmon_quiet(cb->skb)) {
		cb->args[1] = AMUPMU_NL_SEE_ALL;
	} else if (f && uid_eq(f->f_cred->euid, uid)) {
		cb->args[1] = AMUPMU_NL_SEE_OWN;
		cb->args[2] = __kuid_val(uid);
	} else {
		cb->args[1] = AMUPMU_NL_SEE_NONE;
	}
	return 0;
}

/* May the dump of @cb show @ns? */
static bool amupmu_nl_session_visible(const struct netlink_callback *cb,
				      const struct amupmu_nl_sess *ns)
{
	switch (cb->args[1]) {
	case AMUPMU_NL_SEE_ALL:
		return true;
	case AMUPMU_NL_SEE_OWN:
		return __kuid_val(ns->uid) == cb->args[2];
	default:
		return false;
	}
}

/* cb->args[0]: the id of the last session sent; args[1], [2]: see above */
static int amupmu_nl_session_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	const struct amupmu_nl_sess *ns;

	mutex_lock(&amupmu_nl_sess_lock);
	cb->seq = atomic_read(&amupmu_nl_gen);
	list_for_each_entry(ns, &amupmu_nl_sessions, node) {
		if (ns->id <= cb->args[0] || !amupmu_nl_session_visible(cb, ns))
			continue;
		if (amupmu_nl_fill_session(skb, cb, ns))
			break;
		cb->args[0] = ns->id;
	}
	mutex_unlock(&amupmu_nl_sess_lock);
	return skb->len;
}

static int amupmu_nl_subscribe(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attr = info->attrs[AMUPMU_NL_A_GROUPS];
	struct amupmu_nl_sub *sub, *found = NULL;
	struct net *net = genl_info_net(info);
	u32 groups;
	int ret = 0;

	if (GENL_REQ_ATTR_CHECK(info, AMUPMU_NL_A_GROUPS))
		return -EINVAL;
	groups = nla_get_u32(attr);
	if ((groups & AMUPMU_NL_GROUPS_PERFMON) && !amupmu_nl_perfmon(skb)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "the session and buffer groups need CAP_PERFMON");
		return -EACCES;
	}

	mutex_lock(&amupmu_nl_sub_lock);
	list_for_each_entry(sub, &amupmu_nl_subs, node) {
		if (sub->portid == info->snd_portid && net_eq(sub->net, net)) {
			found = sub;
			break;
		}
	}
	if (found && !groups) {
		amupmu_nl_sub_free(found);
	} else if (found) {
		found->groups = groups;
	} else if (groups) {
		if (amupmu_nl_nr_subs >= AMUPMU_NL_SUBSCRIBERS_MAX) {
			NL_SET_ERR_MSG(info->extack, "too many subscribed sockets");
			ret = -EBUSY;
			goto out;
		}
		sub = kzalloc(sizeof(*sub), GFP_KERNEL);
		if (!sub) {
			ret = -ENOMEM;
			goto out;
		}
		sub->net = net;
		sub->portid = info->snd_portid;
		sub->groups = groups;
		sub->pid_ns = get_pid_ns(task_active_pid_ns(current));
		list_add_tail(&sub->node, &amupmu_nl_subs);
		amupmu_nl_nr_subs++;
	}
	amupmu_nl_listened_update();
out:
	mutex_unlock(&amupmu_nl_sub_lock);
	return ret;
}

static const struct nla_policy amupmu_nl_cpu_policy[AMUPMU_NL_A_CPU + 1] = {
	[AMUPMU_NL_A_CPU] = { .type = NLA_U32 },
};

static const struct nla_policy amupmu_nl_subscribe_policy[AMUPMU_NL_A_GROUPS + 1] = {
	[AMUPMU_NL_A_GROUPS] = NLA_POLICY_MASK(NLA_U32, AMUPMU_NL_GROUPS_ALL),
};

/*
 * Operations without a policy take no attribute: with resv_start_op 0 every
 * operation is validated strictly, and the core refuses any attribute of
 * an operation that has no policy.
 */
static const struct genl_ops amupmu_nl_ops[] = {
	{
		.cmd = AMUPMU_NL_CMD_STATUS_GET,
		.doit = amupmu_nl_status_get,
	},
	{
		.cmd = AMUPMU_NL_CMD_CPU_GET,
		.doit = amupmu_nl_cpu_get,
		.start = amupmu_nl_cpu_dump_start,
		.dumpit = amupmu_nl_cpu_dump,
		.policy = amupmu_nl_cpu_policy,
		.maxattr = ARRAY_SIZE(amupmu_nl_cpu_policy) - 1,
	},
	{
		.cmd = AMUPMU_NL_CMD_SESSION_GET,
		.start = amupmu_nl_session_dump_start,
		.dumpit = amupmu_nl_session_dump,
	},
	{
		.cmd = AMUPMU_NL_CMD_SUBSCRIBE,
		.doit = amupmu_nl_subscribe,
		.policy = amupmu_nl_subscribe_policy,
		.maxattr = ARRAY_SIZE(amupmu_nl_subscribe_policy) - 1,
	},
};

static struct genl_family amupmu_nl_family __ro_after_init = {
	.name = AMUPMU_NL_FAMILY_NAME,
	.version = AMUPMU_NL_FAMILY_VERSION,
	.maxattr = AMUPMU_NL_A_MAX,
	.netnsok = true,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.ops = amupmu_nl_ops,
	.n_ops = ARRAY_SIZE(amupmu_nl_ops),
	.resv_start_op = 0,	/* every operation is new: strict */
};

/* ------------------------------------------------------------ load */

/* After the device is ready: events flow from here on. */
int amupmu_nl_init(void)
{
	unsigned long flags;
	int ret;

	ret = netlink_register_notifier(&amupmu_nl_notifier);
	if (ret)
		return ret;
	ret = genl_register_family(&amupmu_nl_family);
	if (ret) {
		netlink_unregister_notifier(&amupmu_nl_notifier);
		return ret;
	}
	raw_spin_lock_irqsave(&amupmu_nl_q_lock, flags);
	amupmu_nl_live = true;
	raw_spin_unlock_irqrestore(&amupmu_nl_q_lock, flags);
	return 0;
}

/* First at unload: no event is queued or sent after it. */
void amupmu_nl_exit(void)
{
	struct amupmu_nl_sub *sub, *tmp;
	unsigned long flags;

	raw_spin_lock_irqsave(&amupmu_nl_q_lock, flags);
	amupmu_nl_live = false;
	raw_spin_unlock_irqrestore(&amupmu_nl_q_lock, flags);
	/* the queue's last events go out to the subscribers still there */
	flush_work(&amupmu_nl_work);
	genl_unregister_family(&amupmu_nl_family);
	netlink_unregister_notifier(&amupmu_nl_notifier);
	mutex_lock(&amupmu_nl_sub_lock);
	list_for_each_entry_safe(sub, tmp, &amupmu_nl_subs, node)
		amupmu_nl_sub_free(sub);
	mutex_unlock(&amupmu_nl_sub_lock);
}
