// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: idle pages, as zram tracks them.
 *
 * Every slot keeps the time of its last read or write (seconds since
 * boot), always: zram's CONFIG_ZRAM_TRACK_ENTRY_ACTIME is no option here.
 * Writing "all" or an age in seconds to sysfs idle marks the written
 * slots not accessed since (same-filled and written-back ones excepted,
 * as in zram); a
 * read or a write clears the mark. debugfs hzram/<disk>/block_state
 * lists every written slot: index, access time, state letters, in
 * zram's format.
 */
#include "hzram.h"

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

struct dentry *hzram_debugfs_root;

/* Slot @index holds data (what block_state lists); the lock is held. */
static bool hzram_slot_written(struct hzram *hz, u32 index)
{
	const struct hzram_slot *slot = &hz->table[index];

	return slot->handle || (slot->flags & (BIT(HZRAM_SLOT_SAME) |
					       BIT(HZRAM_SLOT_STAGED) |
					       BIT(HZRAM_SLOT_WB)));
}

/*
 * Mark the written slots last accessed before @cutoff (seconds since boot;
 * 0: every one) idle, and clear the mark of the others. The caller holds
 * init_lock, so the table stays.
 */
static void __hzram_mark_idle(struct hzram *hz, u32 cutoff)
{
	/* Not u32: a device may have 2^32 pages. */
	unsigned long index, nr = hz->disksize >> PAGE_SHIFT;

	lockdep_assert_held(&hz->init_lock);
	for (index = 0; index < nr; index++) {
		hzram_slot_lock(hz, index);
		/* As zram: never same-filled or written-back pages. */
		if (hzram_slot_written(hz, index) &&
		    !(hz->table[index].flags & (BIT(HZRAM_SLOT_SAME) |
						BIT(HZRAM_SLOT_WB))))
			hzram_slot_mark_idle(hz, index, !cutoff ||
					     cutoff > hz->table[index].ac_time);
		hzram_slot_unlock(hz, index);
		if (!(index % 1024))
			cond_resched();
	}
}

/**
 * hzram_mark_idle() - sysfs idle: mark the pages not accessed lately
 * @hz: the device
 * @buf: "all", or an age in seconds (decimal, octal with 0, hex with 0x)
 *
 * As zram: an age not below the time since boot marks nothing and
 * succeeds, whether or not the device is initialised.
 *
 * Return: 0; -EINVAL for anything else, or if the device is not
 * initialised.
 */
int hzram_mark_idle(struct hzram *hz, const char *buf)
{
	u32 cutoff = 0;
	int ret = 0;

	if (!sysfs_streq(buf, "all")) {
		time64_t uptime = ktime_get_boottime_seconds();
		unsigned int age;

		if (kstrtouint(buf, 0, &age))
			return -EINVAL;
		/* No slot was accessed before boot. */
		if (age >= uptime)
			return 0;
		cutoff = uptime - age;
	}
	down_read(&hz->init_lock);
	if (hzram_init_done(hz))
		__hzram_mark_idle(hz, cutoff);
	else
		ret = -EINVAL;
	up_read(&hz->init_lock);
	return ret;
}

/*
 * One line per written slot, from the slot at *@ppos (the file position
 * counts slots, as zram's does): "%12lu %12u.%06d %c%c%c%c%c%c\n", the
 * index, the access time, then s (same-filled), w (written back), h
 * (huge), i (idle), r (recompressed), n (incompressible) or '.'.
 */
static ssize_t hzram_block_state_read(struct file *file, char __user *ubuf,
				      size_t count, loff_t *ppos)
{
	struct hzram *hz = file->private_data;
	ssize_t written = 0;
	unsigned long index, nr;
	char *buf;

	count = min_t(size_t, count, SZ_64K);
	buf = kvmalloc(count, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	down_read(&hz->init_lock);
	if (!hzram_init_done(hz)) {
		written = -EINVAL;
		goto out;
	}
	nr = hz->disksize >> PAGE_SHIFT;
	for (; *ppos < nr; ++*ppos) {
		unsigned long flags;
		int n = 0;

		index = *ppos;
		hzram_slot_lock(hz, index);
		flags = hz->table[index].flags;
		if (hzram_slot_written(hz, index))
			n = snprintf(buf + written, count - written,
				     "%12lu %12u.%06d %c%c%c%c%c%c\n", index,
				     hz->table[index].ac_time, 0,
				     flags & BIT(HZRAM_SLOT_SAME) ? 's' : '.',
				     flags & BIT(HZRAM_SLOT_WB) ? 'w' : '.',
				     flags & BIT(HZRAM_SLOT_HUGE) ? 'h' : '.',
				     flags & BIT(HZRAM_SLOT_IDLE) ? 'i' : '.',
				     flags & HZRAM_PRIO_MASK ? 'r' : '.',
				     flags & BIT(HZRAM_SLOT_INCOMPRESSIBLE) ?
				     'n' : '.');
		hzram_slot_unlock(hz, index);
		/* Only whole lines: the rest at the next read. */
		if (n >= count - written)
			break;
		written += n;
		if (!(index % 1024))
			cond_resched();
	}
	up_read(&hz->init_lock);
	if (copy_to_user(ubuf, buf, written))
		written = -EFAULT;
	kvfree(buf);
	return written;
out:
	up_read(&hz->init_lock);
	kvfree(buf);
	return written;
}

static const struct file_operations hzram_block_state_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.read	= hzram_block_state_read,
	.llseek	= default_llseek,
};

/* debugfs is best effort: without it, block_state is all that is missing. */
void hzram_debugfs_init(void)
{
	hzram_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
}

void hzram_debugfs_exit(void)
{
	debugfs_remove_recursive(hzram_debugfs_root);
}

void hzram_debugfs_add(struct hzram *hz)
{
	hz->debugfs_dir = debugfs_create_dir(hz->disk->disk_name,
					     hzram_debugfs_root);
	debugfs_create_file("block_state", 0400, hz->debugfs_dir, hz,
			    &hzram_block_state_fops);
}

/* Waits for the reads of block_state under way. */
void hzram_debugfs_remove(struct hzram *hz)
{
	debugfs_remove_recursive(hz->debugfs_dir);
	hz->debugfs_dir = NULL;
}
