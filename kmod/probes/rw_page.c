// SPDX-License-Identifier: GPL-2.0
/*
 * block_device_operations.rw_page, with the request's operation as an
 * enum req_op, and page_endio() to complete the page (gone in 6.3).
 */
#include <linux/blkdev.h>
#include <linux/pagemap.h>

static int hzram_probe_rw_page(struct block_device *bdev, sector_t sector,
			       struct page *page, enum req_op op)
{
	page_endio(page, op_is_write(op), 0);
	return 0;
}

static const struct block_device_operations hzram_probe_ops __maybe_unused = {
	.rw_page = hzram_probe_rw_page,
};
