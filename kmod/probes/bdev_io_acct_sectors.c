// SPDX-License-Identifier: GPL-2.0
/* bdev_start_io_acct() takes the number of sectors (until 6.3). */
#include <linux/blkdev.h>
#include <linux/jiffies.h>

static unsigned long __maybe_unused hzram_probe(struct block_device *bdev,
						enum req_op op)
{
	return bdev_start_io_acct(bdev, PAGE_SECTORS, op, jiffies);
}
