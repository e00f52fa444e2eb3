// SPDX-License-Identifier: GPL-2.0
/* zstd dictionaries in the kernel's zstd interface (6.12, for zram). */
#include <linux/zstd.h>

static size_t __maybe_unused hzram_probe(zstd_cctx *cctx, void *dst,
					 const void *src, zstd_custom_mem mem)
{
	zstd_cdict *cdict = zstd_create_cdict_byreference(src, 1,
			zstd_get_cparams(3, 4096, 1), mem);
	zstd_ddict *ddict = zstd_create_ddict_byreference(src, 1, mem);

	zstd_free_ddict(ddict);
	return zstd_compress_using_cdict(cctx, dst, 1, src, 1, cdict);
}
