// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: the control device /dev/hzram-control, through which a helper
 * (hzramd) attaches to a device and speaks the protocol of
 * include/uapi/linux/hzram.h (Documentation/uapi.rst): ATTACH, the two
 * mapped regions, FETCH and COMMIT over io_uring, DETACH; and the
 * monitor, which sees the helper's process die and takes back batches it
 * keeps too long.
 *
 * Privilege is checked once, at ATTACH (CAP_SYS_ADMIN), as ublk checks it
 * when a device is added: the attached file is then the helper's
 * credential, and FETCH, COMMIT, mmap and DETACH on it need nothing more.
 * The device node is root's alone (0600).
 */
#include "offload.h"

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

/* What a waiting FETCH keeps in its command. */
struct hzram_fetch_pdu {
	struct list_head node;		/* on off->fetchers, under off->lock;
					 * empty once taken off */
	int res;
};

static struct hzram_fetch_pdu *hzram_pdu(struct io_uring_cmd *cmd)
{
	BUILD_BUG_ON(sizeof(struct hzram_fetch_pdu) >
		     sizeof_field(struct io_uring_cmd, pdu));
	return (struct hzram_fetch_pdu *)cmd->pdu;
}

static struct io_uring_cmd *hzram_pdu_cmd(struct hzram_fetch_pdu *pdu)
{
	return container_of((void *)pdu, struct io_uring_cmd, pdu);
}

static void hzram_fetch_done(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	hzram_uring_cmd_done(cmd, hzram_pdu(cmd)->res, issue_flags);
}
HZRAM_DEFINE_URING_TW(hzram_fetch_done_tw, hzram_fetch_done)

/*
 * Complete a waiting FETCH, taking it off the list: once off, the cancel
 * handler leaves it alone, so it completes exactly once.
 */
static void hzram_fetch_complete(struct hzram_offload *off,
				 struct hzram_fetch_pdu *pdu, int res)
	__must_hold(&off->lock)
{
	lockdep_assert_held(&off->lock);
	list_del_init(&pdu->node);
	pdu->res = res;
	io_uring_cmd_complete_in_task(hzram_pdu_cmd(pdu), hzram_fetch_done_tw);
}

/* Hand READY batches to waiting FETCHes. */
void hzram_offload_dispatch(struct hzram_offload *off)
	__must_hold(&off->lock)
{
	lockdep_assert_held(&off->lock);
	while (off->active && !off->unlinked && !list_empty(&off->ready) &&
	       !list_empty(&off->fetchers)) {
		struct hzram_batch *b = list_first_entry(&off->ready,
						struct hzram_batch, node);
		struct hzram_fetch_pdu *pdu = list_first_entry(&off->fetchers,
						struct hzram_fetch_pdu, node);

		hzram_fetch_complete(off, pdu, hzram_batch_hand_out(off, b));
	}
}

/* Fail every waiting FETCH with @res, one at a time under the lock. */
static void hzram_offload_fail_fetches(struct hzram_offload *off, int res)
	__must_hold(&off->lock)
{
	struct hzram_fetch_pdu *pdu;

	lockdep_assert_held(&off->lock);
	while ((pdu = list_first_entry_or_null(&off->fetchers,
					       struct hzram_fetch_pdu, node)))
		hzram_fetch_complete(off, pdu, res);
}

/*
 * Detach @off from its device, if it still has one, taking back what it
 * holds; its waiting FETCHes complete with @fetch_res, later ones fail.
 * The caller holds hzram_offload_mutex, which keeps both @off's device
 * and (for callers that found @off through the device) @off itself.
 */
static void hzram_offload_detach_locked(struct hzram_offload *off,
					int fetch_res)
{
	struct hzram *hz = off->hz;

	lockdep_assert_held(&hzram_offload_mutex);
	if (hz) {
		down_write(&hz->init_lock);
		hzram_offload_stop(hz);
		mutex_lock(&off->mutex);
		off->hz = NULL;
		mutex_unlock(&off->mutex);
		WRITE_ONCE(hz->off, NULL);
		up_write(&hz->init_lock);
		pr_info("%s: helper detached\n", hz->disk->disk_name);
		hzram_nl_event(hz, HZRAM_NL_EV_HELPER_DETACHED,
			       task_pid_nr(off->task));
	}
	hzram_delay(HZRAM_DELAY_FAIL_FETCHES);
	spin_lock(&off->lock);
	off->unlinked = true;
	hzram_offload_fail_fetches(off, fetch_res);
	spin_unlock(&off->lock);
}

/**
 * hzram_offload_unlink() - detach the helper of a device being removed
 * @hz: the device
 *
 * The helper's FETCHes fail with -ENODEV; its file stays open, unlinked.
 * The lookup and the detach are one step under hzram_offload_mutex: the
 * helper's release, which frees the offload, waits for it.
 */
void hzram_offload_unlink(struct hzram *hz)
{
	struct hzram_offload *off;

	mutex_lock(&hzram_offload_mutex);
	off = hz->off;
	if (off) {
		hzram_delay(HZRAM_DELAY_UNLINK);
		hzram_offload_detach_locked(off, -ENODEV);
	}
	mutex_unlock(&hzram_offload_mutex);
}

/*
 * Is the helper's process exiting? Its group exits (a fatal signal,
 * exit_group()), or its leader has exited and no other thread is left:
 * a leader that leaves with pthread_exit() while other threads serve is
 * not the helper's death. (@off holds a reference to the leader, and so
 * to its signal struct.)
 */
static bool hzram_offload_task_dead(struct hzram_offload *off)
{
	struct task_struct *t = off->task;

	return (READ_ONCE(t->signal->flags) & SIGNAL_GROUP_EXIT) ||
	       ((READ_ONCE(t->flags) & PF_EXITING) &&
		READ_ONCE(t->signal->nr_threads) <= 1);
}

/* Count the death of @off's process, once, if it is still attached. */
static void hzram_offload_count_death(struct hzram_offload *off)
{
	lockdep_assert_held(&hzram_offload_mutex);
	if (off->hz && !off->died) {
		off->died = true;
		pr_warn("%s: helper %d died; the module takes its batches back\n",
			off->hz->disk->disk_name, task_pid_nr(off->task));
		hzram_offload_count(off->hz, HZRAM_OFF_DEATHS);
		hzram_nl_event(off->hz, HZRAM_NL_EV_HELPER_DIED,
			       task_pid_nr(off->task));
	}
}

/*
 * Every HZRAM_MONITOR_MS: take back the batches the helper kept past
 * offload_timeout_ms, and detach a helper whose process is exiting (its
 * io_uring waits for our FETCHes to complete). The release of the file
 * cancels the monitor before it frees @off.
 */
static void hzram_offload_monitor_fn(struct work_struct *work)
{
	struct hzram_offload *off = container_of(to_delayed_work(work),
					struct hzram_offload, monitor);

	/*
	 * A killed or exiting process: its io_uring cancels its requests
	 * before the task is marked PF_EXITING, and waits for our FETCHes.
	 */
	if (hzram_offload_task_dead(off)) {
		/*
		 * Its FETCHes first, without the global mutex, which a stop of
		 * another device may hold a while: on 6.1 the dying process's
		 * io_uring waits for them.
		 */
		spin_lock(&off->lock);
		off->unlinked = true;
		hzram_offload_fail_fetches(off, -ECANCELED);
		spin_unlock(&off->lock);
		/* What it held, back now: its detach may wait a while. */
		hzram_offload_take_all(off);
		mutex_lock(&hzram_offload_mutex);
		hzram_offload_count_death(off);
		hzram_offload_detach_locked(off, -ECANCELED);
		mutex_unlock(&hzram_offload_mutex);
		return;
	}
	hzram_offload_take_late(off);
	if (!READ_ONCE(off->unlinked))
		queue_delayed_work(hzram_monitor_wq, &off->monitor,
				   msecs_to_jiffies(HZRAM_MONITOR_MS));
}

/*
 * A FETCH: a batch at once if one is ready, else queued until one is (or
 * the helper goes). It is always completed through io_uring_cmd_done(),
 * even at once: a batch number handed back as the handler's return value
 * would be taken for a failure (linked requests cancelled) by 6.1's
 * io_uring. Where the kernel cancels io_uring commands, a queued FETCH is
 * cancelable: marked before it can be queued, so that a cancel finds it
 * queued or not yet; io_uring_cmd_done() unmarks it.
 */
static int hzram_offload_fetch(struct hzram_offload *off,
			       struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct hzram_fetch_pdu *pdu = hzram_pdu(cmd);
	int ret = -EIOCBQUEUED;

	INIT_LIST_HEAD(&pdu->node);
	if (HZRAM_URING_CANCEL)
		hzram_uring_cmd_cancelable(cmd, issue_flags);
	spin_lock(&off->lock);
	if (off->unlinked)
		ret = -ENODEV;
	else if (off->active && !list_empty(&off->ready))
		ret = hzram_batch_hand_out(off, list_first_entry(&off->ready,
						struct hzram_batch, node));
	else
		list_add_tail(&pdu->node, &off->fetchers);
	spin_unlock(&off->lock);
	if (ret != -EIOCBQUEUED)
		hzram_uring_cmd_done(cmd, ret, issue_flags);
	return -EIOCBQUEUED;
}

/*
 * The ring of a queued FETCH is going away (6.7+): complete it unless it
 * is completing already, and look at the helper now rather than at the
 * monitor's next round: its process may be exiting. The command holds
 * the file, so @off stays.
 */
static void hzram_offload_cancel(struct hzram_offload *off,
				 struct io_uring_cmd *cmd,
				 unsigned int issue_flags)
{
	struct hzram_fetch_pdu *pdu = hzram_pdu(cmd);
	bool queued;

	spin_lock(&off->lock);
	queued = !list_empty(&pdu->node);
	list_del_init(&pdu->node);
	spin_unlock(&off->lock);
	if (queued)
		hzram_uring_cmd_done(cmd, -ECANCELED, issue_flags);
	if (!READ_ONCE(off->unlinked))
		mod_delayed_work(hzram_monitor_wq, &off->monitor, 0);
}

static int hzram_offload_commit(struct hzram_offload *off,
				const struct hzram_cmd *c)
{
	struct hzram_batch *b;
	unsigned int n;
	int ret = 0;

	mutex_lock(&off->mutex);
	if (!off->hz) {
		ret = -ENODEV;
		goto out;
	}
	if (c->flags || c->batch >= off->nr_batches) {
		ret = -EINVAL;
		goto bad;
	}
	n = array_index_nospec(c->batch, off->nr_batches);
	b = &off->batches[n];
	spin_lock(&off->lock);
	if (b->state == HZRAM_BATCH_HELPER && b->seq == c->seq)
		b->state = HZRAM_BATCH_KERNEL;
	else
		ret = -ESTALE;
	spin_unlock(&off->lock);
	if (ret)
		goto bad;
	hzram_delay(HZRAM_DELAY_COMMIT);
	hzram_offload_count(off->hz, b->read ? HZRAM_OFF_READ_BATCHES :
				b->recomp ? HZRAM_OFF_RECOMP_BATCHES :
				HZRAM_OFF_BATCHES);
	/* Write and read round trips: a zstd batch's would swamp them. */
	if (!b->recomp)
		hzram_rtt_count(off->hz, b->handed);
	if (b->read)
		hzram_ns_average(&off->hz->read_ns_helper,
				 ktime_get_ns() - b->created, b->nr);
	hzram_batch_store(off, b, off->rw + n * off->slot_size, 0);
	goto out;
bad:
	hzram_offload_count(off->hz, HZRAM_OFF_BAD_COMMITS);
out:
	mutex_unlock(&off->mutex);
	return ret;
}

/*
 * A new helper for device @a->device, with arenas of its present
 * offload_batch_pages; under hzram_offload_mutex, so that the size cannot
 * change before the helper is linked (it cannot once it is).
 */
static int hzram_offload_link(struct file *file, struct hzram *hz,
			      unsigned int granted, struct hzram_offload **offp)
{
	struct hzram_offload *off;
	unsigned int batch_pages;
	int ret = 0;

	lockdep_assert_held(&hzram_index_mutex);	/* @hz stays */
	for (;;) {
		batch_pages = READ_ONCE(hz->offp.batch_pages);
		hzram_delay(HZRAM_DELAY_ATTACH);
		/* Not under the mutex: a monitor may need it to free memory. */
		off = hzram_offload_alloc(batch_pages);
		if (!off)
			return -ENOMEM;
		INIT_DELAYED_WORK(&off->monitor, hzram_offload_monitor_fn);
		mutex_lock(&hzram_offload_mutex);
		if (batch_pages == READ_ONCE(hz->offp.batch_pages))
			break;
		/* offload_batch_pages changed meanwhile: size them again. */
		mutex_unlock(&hzram_offload_mutex);
		hzram_offload_free(off);
	}
	down_write(&hz->init_lock);
	if (hz->off) {
		ret = -EBUSY;
	} else if (hzram_init_done(hz) && !hzram_comp_helper_lz4(hz->comp)) {
		ret = -EOPNOTSUPP;	/* the helper makes LZ4 only */
	} else {
		off->hz = hz;
		off->decode = granted & HZRAM_FEAT_DECOMPRESS;
		off->recomp = granted & HZRAM_FEAT_RECOMPRESS;
		off->task = get_task_struct(current->group_leader);
		WRITE_ONCE(hz->off, off);
		hzram_offload_count(hz, HZRAM_OFF_ATTACHES);
		hzram_offload_start(hz);
		/* Pairs with the acquire of mmap, ioctl and uring_cmd. */
		smp_store_release(&file->private_data, off);
		queue_delayed_work(hzram_monitor_wq, &off->monitor,
				   msecs_to_jiffies(HZRAM_MONITOR_MS));
		pr_info("%s: helper %d attached\n", hz->disk->disk_name,
			task_pid_nr(off->task));
		hzram_nl_event(hz, HZRAM_NL_EV_HELPER_ATTACHED,
			       task_pid_nr(off->task));
	}
	up_write(&hz->init_lock);
	mutex_unlock(&hzram_offload_mutex);
	if (ret) {
		hzram_offload_free(off);
		return ret;
	}
	*offp = off;
	return 0;
}

static long hzram_ctl_attach(struct file *file, struct hzram_attach __user *arg)
{
	struct hzram_offload *off;
	struct hzram_attach a;
	struct hzram *hz;
	unsigned int granted;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (get_user(a.size, &arg->size))
		return -EFAULT;
	if (a.size != sizeof(a))
		return -EINVAL;
	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (a.version != HZRAM_UAPI_VERSION)
		return -EPROTO;
	/* Reserved, so that they can mean something later. */
	if (a.reserved[0] || a.reserved[1])
		return -EINVAL;
	granted = a.features & HZRAM_FEATURES;
	if (!(granted & HZRAM_FEAT_COMPRESS))
		return -EOPNOTSUPP;
	if (a.device >= HZRAM_MAX_DEVICES)
		return -ENODEV;

	mutex_lock(&hzram_index_mutex);
	if (file->private_data) {
		ret = -EISCONN;		/* this file already serves a device */
		goto out;
	}
	hz = hzram_find(a.device);
	ret = hz ? hzram_offload_link(file, hz, granted, &off) : -ENODEV;
	if (ret)
		goto out;
	a.features = granted;
	a.nr_batches = off->nr_batches;
	a.batch_pages = off->batch_pages;
	a.ro_offset = 0;
	a.ro_size = off->ro_size;
	a.staging_offset = off->staging_off;
	a.rw_offset = off->ro_size;
	a.rw_size = off->rw_size;
	memset(a.reserved, 0, sizeof(a.reserved));
	mutex_unlock(&hzram_index_mutex);
	/* The attachment stands even if the reply cannot be written. */
	return copy_to_user(arg, &a, sizeof(a)) ? -EFAULT : 0;
out:
	mutex_unlock(&hzram_index_mutex);
	return ret;
}

/*
 * A helper leaving on purpose: its batches go back to the kernel and its
 * FETCHes complete with -ECANCELED, as at its death, but not counted as
 * one. The file stays open, unlinked.
 */
static long hzram_ctl_detach(struct file *file)
{
	struct hzram_offload *off = smp_load_acquire(&file->private_data);
	long ret = 0;

	if (!off)
		return -ENXIO;
	mutex_lock(&hzram_offload_mutex);
	if (READ_ONCE(off->unlinked)) {
		ret = -ENODEV;
	} else {
		/*
		 * Nothing more for it, and what it holds back at once: the
		 * detach may wait for a recompress, which waits for its
		 * batches.
		 */
		spin_lock(&off->lock);
		off->unlinked = true;
		/*
		 * Its FETCHes now too: nothing would be handed to them, and
		 * its process may die meanwhile, with no monitor to see it.
		 */
		hzram_offload_fail_fetches(off, -ECANCELED);
		spin_unlock(&off->lock);
		hzram_offload_take_all(off);
		hzram_offload_detach_locked(off, -ECANCELED);
	}
	mutex_unlock(&hzram_offload_mutex);
	return ret;
}

static long hzram_ctl_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	switch (cmd) {
	case HZRAM_IOC_ATTACH:
		return hzram_ctl_attach(file, (struct hzram_attach __user *)arg);
	case HZRAM_IOC_DETACH:
		return hzram_ctl_detach(file);
	}
	return -ENOTTY;
}

static int hzram_ctl_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct hzram_offload *off = smp_load_acquire(&file->private_data);
	unsigned long size = vma->vm_end - vma->vm_start;

	if (!off)
		return -ENXIO;
	/* Shared both ways: a private copy would never reach the other side. */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_pgoff == 0) {
		if (size > off->ro_size)
			return -EINVAL;
		/* The kernel's: the helper may read, never write. */
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		hzram_vma_deny_write(vma);
		return remap_vmalloc_range(vma, off->ro, 0);
	}
	if (vma->vm_pgoff == off->ro_size >> PAGE_SHIFT) {
		if (size > off->rw_size)
			return -EINVAL;
		return remap_vmalloc_range(vma, off->rw, 0);
	}
	return -EINVAL;
}

static int hzram_ctl_uring_cmd(struct io_uring_cmd *cmd,
			       unsigned int issue_flags)
{
	struct hzram_offload *off = smp_load_acquire(&cmd->file->private_data);
	struct hzram_cmd c;

	if (!off)
		return -ENXIO;
	/* Only a queued FETCH is cancelable; its SQE may be gone. */
	if (issue_flags & HZRAM_URING_CANCEL) {
		hzram_offload_cancel(off, cmd, issue_flags);
		return 0;
	}
	c = *hzram_uring_cmd_payload(cmd, struct hzram_cmd);
	switch (cmd->cmd_op) {
	case HZRAM_CMD_FETCH:
		/* Every field is reserved: 0, so that it can mean more. */
		if (c.batch || c.flags || c.seq)
			return -EINVAL;
		return hzram_offload_fetch(off, cmd, issue_flags);
	case HZRAM_CMD_COMMIT:
		return hzram_offload_commit(off, &c);
	default:
		return -EOPNOTSUPP;
	}
}

static int hzram_ctl_release(struct inode *inode, struct file *file)
{
	struct hzram_offload *off = file->private_data;

	if (!off)
		return 0;
	/*
	 * No FETCH waits (each holds the file) and nothing is mapped (each
	 * mapping does too).
	 */
	spin_lock(&off->lock);
	off->unlinked = true;
	spin_unlock(&off->lock);
	cancel_delayed_work_sync(&off->monitor);
	/*
	 * Nothing can commit now: what it held, back at once. The detach
	 * below may wait for a recompress, which waits for its batches.
	 */
	hzram_offload_take_all(off);
	mutex_lock(&hzram_offload_mutex);
	/* Killed with no FETCH queued: the exit closes the file first. */
	if (hzram_offload_task_dead(off))
		hzram_offload_count_death(off);
	hzram_offload_detach_locked(off, -ENODEV);
	mutex_unlock(&hzram_offload_mutex);
	hzram_offload_free(off);
	return 0;
}

static int hzram_ctl_open(struct inode *inode, struct file *file)
{
	/* misc_open() left the miscdevice here: unattached until ATTACH. */
	file->private_data = NULL;
	return nonseekable_open(inode, file);
}

static const struct file_operations hzram_ctl_fops = {
	.owner		= THIS_MODULE,
	.open		= hzram_ctl_open,
	.release	= hzram_ctl_release,
	.unlocked_ioctl	= hzram_ctl_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= hzram_ctl_mmap,
	.uring_cmd	= hzram_ctl_uring_cmd,
};

static struct miscdevice hzram_ctl_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "hzram-control",
	.fops	= &hzram_ctl_fops,
	.mode	= 0600,
};

/* The control device: registered last at load, deregistered first. */
int hzram_ctl_register(void)
{
	BUILD_BUG_ON(sizeof(struct hzram_attach) != HZRAM_ATTACH_SIZE);
	BUILD_BUG_ON(sizeof(struct hzram_batch_desc) != HZRAM_BATCH_DESC_SIZE);
	BUILD_BUG_ON(sizeof(struct hzram_cmd) != HZRAM_CMD_SIZE);
	BUILD_BUG_ON(sizeof(struct hzram_page_record) !=
		     HZRAM_PAGE_RECORD_SIZE);
	return misc_register(&hzram_ctl_misc);
}

void hzram_ctl_unregister(void)
{
	misc_deregister(&hzram_ctl_misc);
}
