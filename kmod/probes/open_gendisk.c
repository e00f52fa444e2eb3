// SPDX-License-Identifier: GPL-2.0
/*
 * block_device_operations.open takes the gendisk and a blk_mode_t (6.5),
 * not the block_device and an fmode_t.
 */
#include <linux/blkdev.h>

static int hzram_probe_open(struct gendisk *disk, blk_mode_t mode)
{
	return 0;
}

static const struct block_device_operations hzram_probe_ops __maybe_unused = {
	.open = hzram_probe_open,
};
