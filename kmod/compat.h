/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hzram: every difference between the kernels hzram supports (6.1 and
 * 6.12) lives here, so that the driver reads the same on both.
 */
#ifndef _HZRAM_COMPAT_H
#define _HZRAM_COMPAT_H

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/string.h>
#include <linux/version.h>
#include <linux/zsmalloc.h>

/*
 * The kernels hzram is built and tested on. The conditions below name the
 * release that changed each interface, for whoever ports it further.
 */
#if !(LINUX_VERSION_CODE >= KERNEL_VERSION(6, 1, 0) && \
      LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)) && \
    !(LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0) && \
      LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0))
#error "hzram supports Linux 6.1 and 6.12"
#endif

/* Queue limits every hzram disk gets. */
#define HZRAM_LOGICAL_BLOCK_SIZE	512	/* sub-page I/O is allowed */
#define HZRAM_MAX_HW_SECTORS		(SZ_1M >> SECTOR_SHIFT)
#define HZRAM_MAX_SEGMENTS		(SZ_1M >> PAGE_SHIFT)

/**
 * hzram_alloc_disk() - allocate a blk-mq disk with hzram's queue limits
 * @set: the tag set, already allocated
 * @queuedata: stored in the request queue
 *
 * Return: the disk, or an ERR_PTR.
 */
static inline struct gendisk *hzram_alloc_disk(struct blk_mq_tag_set *set,
					       void *queuedata)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
	struct queue_limits lim = {
		.logical_block_size	= HZRAM_LOGICAL_BLOCK_SIZE,
		.physical_block_size	= PAGE_SIZE,
		.io_min			= PAGE_SIZE,
		.io_opt			= PAGE_SIZE,
		.max_hw_sectors		= HZRAM_MAX_HW_SECTORS,
		.max_segments		= HZRAM_MAX_SEGMENTS,
		.discard_granularity	= PAGE_SIZE,
		.max_hw_discard_sectors	= UINT_MAX,
		.max_write_zeroes_sectors = UINT_MAX,
		.features		= BLK_FEAT_STABLE_WRITES |
					  BLK_FEAT_SYNCHRONOUS,
	};

	return blk_mq_alloc_disk(set, &lim, queuedata);
#else
	struct gendisk *disk = blk_mq_alloc_disk(set, queuedata);
	struct request_queue *q;

	if (IS_ERR(disk))
		return disk;
	q = disk->queue;
	blk_queue_logical_block_size(q, HZRAM_LOGICAL_BLOCK_SIZE);
	blk_queue_physical_block_size(q, PAGE_SIZE);
	blk_queue_io_min(q, PAGE_SIZE);
	blk_queue_io_opt(q, PAGE_SIZE);
	blk_queue_max_hw_sectors(q, HZRAM_MAX_HW_SECTORS);
	blk_queue_max_segments(q, HZRAM_MAX_SEGMENTS);
	q->limits.discard_granularity = PAGE_SIZE;
	blk_queue_max_discard_sectors(q, UINT_MAX);
	blk_queue_max_write_zeroes_sectors(q, UINT_MAX);
	blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	blk_queue_flag_clear(QUEUE_FLAG_ADD_RANDOM, q);
	blk_queue_flag_set(QUEUE_FLAG_STABLE_WRITES, q);
	return disk;
#endif
}

/*
 * block_device_operations.open: the first argument became the gendisk in
 * 6.5. HZRAM_DEFINE_OPEN(name, fn) defines an open method @name that calls
 * int fn(struct gendisk *).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define HZRAM_DEFINE_OPEN(name, fn)					\
	static int name(struct gendisk *disk, blk_mode_t mode)		\
	{								\
		return fn(disk);					\
	}
#else
#define HZRAM_DEFINE_OPEN(name, fn)					\
	static int name(struct block_device *bdev, fmode_t mode)	\
	{								\
		return fn(bdev->bd_disk);				\
	}
#endif

/*
 * ->queue_rqs() takes a struct rq_list since 6.13, and in 6.12 stable
 * kernels that have the backport; Kbuild probes the header for it.
 */
#ifdef HZRAM_HAVE_RQ_LIST
typedef struct rq_list hzram_rq_list;
#else
typedef struct request *hzram_rq_list;
#endif

/* Class attribute methods take const pointers since 6.4. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#define hzram_class_const const
#else
#define hzram_class_const
#endif

/*
 * zsmalloc object access, shaped like the zs_obj_read_begin() /
 * zs_obj_write() API that replaced zs_map_object() in 6.15.
 */

/* Map object @handle for reading; undo with hzram_zs_read_end(). */
static inline const void *hzram_zs_read_begin(struct zs_pool *pool,
					      unsigned long handle)
{
	return zs_map_object(pool, handle, ZS_MM_RO);
}

static inline void hzram_zs_read_end(struct zs_pool *pool,
				     unsigned long handle)
{
	zs_unmap_object(pool, handle);
}

/* Copy @len bytes from @src into the freshly allocated object @handle. */
static inline void hzram_zs_write(struct zs_pool *pool, unsigned long handle,
				  const void *src, size_t len)
{
	void *dst = zs_map_object(pool, handle, ZS_MM_WO);

	memcpy(dst, src, len);
	zs_unmap_object(pool, handle);
}

#endif /* _HZRAM_COMPAT_H */
