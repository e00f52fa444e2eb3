// SPDX-License-Identifier: GPL-2.0
/*
 * Queue features are flags in struct queue_limits (6.11), among them
 * BLK_FEAT_SYNCHRONOUS and BLK_FEAT_STABLE_WRITES; before, they were queue
 * flags (QUEUE_FLAG_*).
 */
#include <linux/blkdev.h>

static blk_features_t __maybe_unused hzram_probe(void)
{
	struct queue_limits lim = {
		.features = BLK_FEAT_STABLE_WRITES | BLK_FEAT_SYNCHRONOUS,
	};

	return lim.features;
}
