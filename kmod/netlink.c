// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: the generic netlink family "hzram" (include/uapi/linux/hzram.h,
 * Documentation/uapi.rst): every device's configuration and statistics
 * in one dump, and events on the multicast group "events".
 *
 * An event is queued on its device, without allocating or sleeping, from
 * whatever context it happens in (the write path, under reclaim, among
 * others), and sent by a work item with GFP_KERNEL. While nobody listens
 * on the group, an event costs a test of one bit. A device's queue holds
 * HZRAM_NL_QUEUE events; past that, events are dropped (the statistics
 * still count what happened). The family is read-only: sysfs changes
 * state.
 */
#include "hzram.h"

#include <net/genetlink.h>

/* Events of the write path: sent once a second at most per device. */
#define HZRAM_NL_EVENT_GAP	HZ

static struct genl_family hzram_genl_family;

enum { HZRAM_NL_MCGRP_EVENTS };

/*
 * The events name helpers' processes and tell of every device's state:
 * root's (CAP_SYS_ADMIN) to listen to, where the kernel can restrict a
 * group (compat.h).
 */
static const struct genl_multicast_group hzram_nl_mcgrps[] = {
	[HZRAM_NL_MCGRP_EVENTS] = { .name = HZRAM_GENL_MCGRP_EVENTS,
				    HZRAM_GENL_MCGRP_ADMIN },
};

static const struct nla_policy hzram_nl_policy[HZRAM_NL_A_MAX + 1] = {
	[HZRAM_NL_A_ID] = { .type = NLA_U32 },
};

static bool hzram_nl_listened(void)
{
	return genl_has_listeners(&hzram_genl_family, &init_net,
				  HZRAM_NL_MCGRP_EVENTS);
}

/* A nest of @n u64 fields: attribute HZRAM_NL_STAT_FIRST + i is field i. */
static int hzram_nl_put_fields(struct sk_buff *skb, int type, const u64 *v,
			       int n)
{
	struct nlattr *nest = nla_nest_start(skb, type);
	int i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		if (nla_put_u64_64bit(skb, HZRAM_NL_STAT_FIRST + i, v[i],
				      HZRAM_NL_STAT_PAD)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* Everything hzramctl lists of @hz; the caller holds its init_lock. */
static int hzram_nl_put_device(struct sk_buff *skb, struct hzram *hz)
{
	u64 mm[HZRAM_MM_NR_FIELDS], io[HZRAM_IO_NR_FIELDS];
	u64 dbg[HZRAM_DEBUG_NR_FIELDS], off[HZRAM_OFF_NR_FIELDS];
	u64 bd[HZRAM_BD_NR_FIELDS], rc[HZRAM_RECOMP_NR_FIELDS];
	/* The algorithm the device uses; the one it will use otherwise. */
	const char *alg = hz->comp ? hz->comp->name : hz->comp_algorithm;

	hzram_mm_stat(hz, mm);
	hzram_io_stat(hz, io);
	hzram_debug_stat(hz, dbg);
	hzram_offload_stat(hz, off);
	hzram_bd_stat(hz, bd);
	hzram_recomp_stat(hz, rc);
	if (nla_put_u32(skb, HZRAM_NL_A_ID, hz->id) ||
	    nla_put_string(skb, HZRAM_NL_A_NAME, hz->disk->disk_name) ||
	    nla_put_u64_64bit(skb, HZRAM_NL_A_DISKSIZE, hz->disksize,
			      HZRAM_NL_A_PAD) ||
	    nla_put_string(skb, HZRAM_NL_A_COMP_ALGORITHM, alg) ||
	    nla_put_u32(skb, HZRAM_NL_A_MAX_COMP_STREAMS, num_online_cpus()) ||
	    nla_put_u64_64bit(skb, HZRAM_NL_A_MEM_LIMIT,
			      (u64)hz->limit_pages << PAGE_SHIFT,
			      HZRAM_NL_A_PAD) ||
	    hzram_nl_put_fields(skb, HZRAM_NL_A_MM_STAT, mm,
				HZRAM_MM_NR_FIELDS) ||
	    hzram_nl_put_fields(skb, HZRAM_NL_A_IO_STAT, io,
				HZRAM_IO_NR_FIELDS) ||
	    hzram_nl_put_fields(skb, HZRAM_NL_A_DEBUG_STAT, dbg,
				HZRAM_DEBUG_NR_FIELDS) ||
	    nla_put_string(skb, HZRAM_NL_A_OFFLOAD,
			   hzram_offload_modes[READ_ONCE(hz->offp.mode)]) ||
	    hzram_nl_put_fields(skb, HZRAM_NL_A_OFFLOAD_STAT, off,
				HZRAM_OFF_NR_FIELDS) ||
	    hzram_nl_put_fields(skb, HZRAM_NL_A_BD_STAT, bd,
				HZRAM_BD_NR_FIELDS) ||
	    hzram_nl_put_fields(skb, HZRAM_NL_A_RECOMP_STAT, rc,
				HZRAM_RECOMP_NR_FIELDS))
		return -EMSGSIZE;
	return 0;
}

/* One HZRAM_NL_CMD_GET_DEVICE message for @hz into @skb. */
static int hzram_nl_fill(struct sk_buff *skb, struct hzram *hz, u32 portid,
			 u32 seq, int flags)
{
	void *hdr;
	int ret;

	hdr = genlmsg_put(skb, portid, seq, &hzram_genl_family, flags,
			  HZRAM_NL_CMD_GET_DEVICE);
	if (!hdr)
		return -EMSGSIZE;
	down_read(&hz->init_lock);
	ret = hzram_nl_put_device(skb, hz);
	up_read(&hz->init_lock);
	if (ret) {
		genlmsg_cancel(skb, hdr);
		return ret;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static int hzram_nl_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	struct hzram *hz;
	int ret;

	if (!info->attrs[HZRAM_NL_A_ID]) {
		GENL_SET_ERR_MSG(info, "HZRAM_NL_A_ID missing: dump to list all devices");
		return -EINVAL;
	}
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&hzram_index_mutex);
	hz = hzram_find(nla_get_u32(info->attrs[HZRAM_NL_A_ID]));
	ret = hz ? hzram_nl_fill(msg, hz, info->snd_portid, info->snd_seq, 0) :
		   -ENODEV;
	mutex_unlock(&hzram_index_mutex);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

/* cb->args[0]: the id to go on from. */
static int hzram_nl_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	int id = cb->args[0];
	struct hzram *hz;
	int ret = 0;

	mutex_lock(&hzram_index_mutex);
	while ((hz = hzram_find_next(&id))) {
		ret = hzram_nl_fill(skb, hz, NETLINK_CB(cb->skb).portid,
				    cb->nlh->nlmsg_seq, NLM_F_MULTI);
		if (ret)
			break;
		id++;
	}
	mutex_unlock(&hzram_index_mutex);
	cb->args[0] = id;
	/* A device that did not fit goes in the next message. */
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret ? ret : skb->len;
}

static const struct genl_small_ops hzram_nl_ops[] = {
	{
		.cmd = HZRAM_NL_CMD_GET_DEVICE,
		/* Attributes it does not know are ignored. */
		.validate = GENL_DONT_VALIDATE_STRICT | GENL_DONT_VALIDATE_DUMP,
		.doit = hzram_nl_get_doit,
		.dumpit = hzram_nl_get_dumpit,
	},
};

static struct genl_family hzram_genl_family __ro_after_init = {
	.name = HZRAM_GENL_NAME,
	.version = HZRAM_GENL_VERSION,
	.maxattr = HZRAM_NL_A_MAX,
	.policy = hzram_nl_policy,
	.module = THIS_MODULE,
	.parallel_ops = true,
	.small_ops = hzram_nl_ops,
	.n_small_ops = ARRAY_SIZE(hzram_nl_ops),
	.resv_start_op = HZRAM_NL_CMD_EVENT + 1,
	.mcgrps = hzram_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(hzram_nl_mcgrps),
};

/* Send event @ev of device @id, @name; 0 or a negative errno. */
static int hzram_nl_send(const struct hzram_nl_ev *ev, u32 id,
			 const char *name)
{
	struct sk_buff *skb;
	void *hdr;
	int ret = -EMSGSIZE;

	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	hdr = genlmsg_put(skb, 0, 0, &hzram_genl_family, 0, HZRAM_NL_CMD_EVENT);
	if (!hdr)
		goto err;
	if (nla_put_u32(skb, HZRAM_NL_A_EVENT, ev->event) ||
	    nla_put_u32(skb, HZRAM_NL_A_ID, id) ||
	    nla_put_string(skb, HZRAM_NL_A_NAME, name))
		goto err;
	switch (ev->event) {
	case HZRAM_NL_EV_INITIALISED:
		if (nla_put_u64_64bit(skb, HZRAM_NL_A_DISKSIZE, ev->value,
				      HZRAM_NL_A_PAD) ||
		    nla_put_string(skb, HZRAM_NL_A_COMP_ALGORITHM, ev->alg))
			goto err;
		break;
	case HZRAM_NL_EV_MEM_LIMIT:
		if (nla_put_u64_64bit(skb, HZRAM_NL_A_MEM_LIMIT, ev->value,
				      HZRAM_NL_A_PAD))
			goto err;
		break;
	case HZRAM_NL_EV_WRITE_FAILED:
		if (hzram_nl_put_fields(skb, HZRAM_NL_A_IO_STAT, ev->io,
					HZRAM_IO_NR_FIELDS))
			goto err;
		break;
	case HZRAM_NL_EV_HELPER_ATTACHED:
	case HZRAM_NL_EV_HELPER_DETACHED:
	case HZRAM_NL_EV_HELPER_DIED:
		if (nla_put_u32(skb, HZRAM_NL_A_HELPER_PID, ev->value))
			goto err;
		break;
	}
	genlmsg_end(skb, hdr);
	/* -ESRCH: nobody listens any more. */
	ret = genlmsg_multicast(&hzram_genl_family, skb, 0,
				HZRAM_NL_MCGRP_EVENTS, GFP_KERNEL);
	return ret == -ESRCH ? 0 : ret;
err:
	nlmsg_free(skb);
	return ret;
}

static void hzram_nl_work_fn(struct work_struct *work)
{
	struct hzram *hz = container_of(work, struct hzram, nl_work);
	struct hzram_nl_ev ev;

	while (kfifo_out_spinlocked(&hz->nl_queue, &ev, 1, &hz->nl_lock)) {
		if (hzram_nl_send(&ev, hz->id, hz->disk->disk_name))
			pr_warn_ratelimited("%s: event %u not sent\n",
					    hz->disk->disk_name, ev.event);
	}
}

/**
 * hzram_nl_event() - queue an event of device @hz for the "events" group
 * @hz: the device
 * @event: enum hzram_nl_event
 * @value: what the event carries (include/uapi/linux/hzram.h): disksize,
 *	mem_limit or the helper's pid; 0 for the others
 *
 * Any context; neither allocates nor sleeps. Nothing is queued while
 * nobody listens. The events of the write path go once a second at most.
 */
void hzram_nl_event(struct hzram *hz, enum hzram_nl_event event, u64 value)
{
	struct hzram_nl_ev ev = { .event = event, .value = value };
	unsigned long flags;

	if (!hzram_nl_listened())
		return;
	if (event == HZRAM_NL_EV_MEM_LIMIT || event == HZRAM_NL_EV_WRITE_FAILED) {
		unsigned long *next = &hz->nl_next[event == HZRAM_NL_EV_MEM_LIMIT];
		unsigned long old = READ_ONCE(*next);

		/* One of the writers racing here sends it. */
		if (time_before(jiffies, old) ||
		    cmpxchg(next, old, jiffies + HZRAM_NL_EVENT_GAP) != old)
			return;
		if (event == HZRAM_NL_EV_WRITE_FAILED)
			hzram_io_stat(hz, ev.io);
	}
	if (event == HZRAM_NL_EV_INITIALISED)
		strscpy(ev.alg, hz->comp_algorithm, sizeof(ev.alg));
	spin_lock_irqsave(&hz->nl_lock, flags);
	kfifo_put(&hz->nl_queue, ev);
	spin_unlock_irqrestore(&hz->nl_lock, flags);
	schedule_work(&hz->nl_work);
}

/* Set up @hz's event queue, before anything can queue on it. */
void hzram_nl_device_init(struct hzram *hz)
{
	spin_lock_init(&hz->nl_lock);
	INIT_KFIFO(hz->nl_queue);
	INIT_WORK(&hz->nl_work, hzram_nl_work_fn);
	hz->nl_next[0] = hz->nl_next[1] = jiffies;
}

/*
 * @hz is going away: send what it queued, then HZRAM_NL_EV_DEVICE_REMOVED.
 * Nothing queues on it any more.
 */
void hzram_nl_device_removed(struct hzram *hz)
{
	struct hzram_nl_ev ev = { .event = HZRAM_NL_EV_DEVICE_REMOVED };

	flush_work(&hz->nl_work);
	if (hzram_nl_listened())
		hzram_nl_send(&ev, hz->id, hz->disk->disk_name);
}

int hzram_nl_init(void)
{
	return genl_register_family(&hzram_genl_family);
}

void hzram_nl_exit(void)
{
	genl_unregister_family(&hzram_genl_family);
}
