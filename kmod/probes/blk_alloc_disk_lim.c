// SPDX-License-Identifier: GPL-2.0
/* blk_alloc_disk() takes the disk's queue limits (6.9). */
#include <linux/blkdev.h>

static __maybe_unused struct gendisk *hzram_probe(void)
{
	struct queue_limits lim = {
		.logical_block_size	= 512,
		.physical_block_size	= PAGE_SIZE,
		.io_min			= PAGE_SIZE,
		.io_opt			= PAGE_SIZE,
		.discard_granularity	= PAGE_SIZE,
		.max_hw_discard_sectors	= UINT_MAX,
		.max_write_zeroes_sectors = UINT_MAX,
	};
	struct gendisk *disk = blk_alloc_disk(&lim, NUMA_NO_NODE);

	return IS_ERR(disk) ? NULL : disk;
}
