// SPDX-License-Identifier: GPL-2.0
/*
 * QUEUE_FLAG_SYNCHRONOUS: how a disk tells swap that it completes I/O
 * synchronously from 6.3 (when ->rw_page went) until it became
 * BLK_FEAT_SYNCHRONOUS (6.11).
 */
#include <linux/blkdev.h>

static void __maybe_unused hzram_probe(struct request_queue *q)
{
	blk_queue_flag_set(QUEUE_FLAG_SYNCHRONOUS, q);
}
