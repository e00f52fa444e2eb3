// SPDX-License-Identifier: GPL-2.0
/* zs_malloc() takes the NUMA node to allocate on (6.17). */
#include <linux/mm.h>
#include <linux/zsmalloc.h>

static unsigned long __maybe_unused hzram_probe(struct zs_pool *pool,
						size_t len, gfp_t gfp)
{
	return zs_malloc(pool, len, gfp, NUMA_NO_NODE);
}
