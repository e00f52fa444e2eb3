// SPDX-License-Identifier: GPL-2.0
/* zs_lookup_class_index(), added for zram's recompression (6.2). */
#include <linux/mm.h>
#include <linux/zsmalloc.h>

static unsigned int __maybe_unused hzram_probe(struct zs_pool *pool,
					       unsigned int size)
{
	return zs_lookup_class_index(pool, size);
}
