/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hzram: every difference between the kernels hzram supports (6.1 and
 * 6.12) lives here, so that the driver reads the same on both.
 */
#ifndef _HZRAM_COMPAT_H
#define _HZRAM_COMPAT_H

#include <linux/blkdev.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
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

/**
 * hzram_alloc_disk() - allocate a bio-based disk with hzram's queue limits
 *
 * Stable pages (a page under write is not changed until the write ends),
 * non-rotational, no entropy; synchronous where the kernel has the flag
 * (6.1 learns it from ->rw_page instead).
 *
 * Return: the disk, or an ERR_PTR.
 */
static inline struct gendisk *hzram_alloc_disk(void)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
	struct queue_limits lim = {
		.logical_block_size	= HZRAM_LOGICAL_BLOCK_SIZE,
		.physical_block_size	= PAGE_SIZE,
		.io_min			= PAGE_SIZE,
		.io_opt			= PAGE_SIZE,
		.discard_granularity	= PAGE_SIZE,
		.max_hw_discard_sectors	= UINT_MAX,
		.max_write_zeroes_sectors = UINT_MAX,
		.features		= BLK_FEAT_STABLE_WRITES |
					  BLK_FEAT_SYNCHRONOUS,
	};

	return blk_alloc_disk(&lim, NUMA_NO_NODE);
#else
	struct gendisk *disk = blk_alloc_disk(NUMA_NO_NODE);
	struct request_queue *q;

	if (IS_ERR_OR_NULL(disk))
		return disk ? disk : ERR_PTR(-ENOMEM);
	q = disk->queue;
	blk_queue_logical_block_size(q, HZRAM_LOGICAL_BLOCK_SIZE);
	blk_queue_physical_block_size(q, PAGE_SIZE);
	blk_queue_io_min(q, PAGE_SIZE);
	blk_queue_io_opt(q, PAGE_SIZE);
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
 * ->rw_page: until 6.3, swap reads and writes a page through it without a
 * bio, and a device that has it gets SWP_SYNCHRONOUS_IO (6.12 has
 * BLK_FEAT_SYNCHRONOUS instead). HZRAM_DEFINE_RW_PAGE(name) defines the
 * method @name around hzram_rw_page(), with the disk's I/O accounting;
 * HZRAM_RW_PAGE_OP(name) is its line in block_device_operations.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
#define HZRAM_DEFINE_RW_PAGE(name)					\
	static int name(struct block_device *bdev, sector_t sector,	\
			struct page *page, enum req_op op)		\
	{								\
		unsigned long start;					\
		int ret;						\
									\
		start = bdev_start_io_acct(bdev->bd_disk->part0,	\
					   PAGE_SECTORS, op, jiffies);	\
		ret = hzram_rw_page(bdev->bd_disk->private_data, sector,\
				    page, op_is_write(op));		\
		bdev_end_io_acct(bdev->bd_disk->part0, op, start);	\
		/* On error the caller unlocks, and retries with a bio. */ \
		if (!ret)						\
			page_endio(page, op_is_write(op), 0);		\
		return ret;						\
	}
#define HZRAM_RW_PAGE_OP(name)	.rw_page = name,
#else
#define HZRAM_DEFINE_RW_PAGE(name)
#define HZRAM_RW_PAGE_OP(name)
#endif

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

/*
 * io_uring commands (IORING_OP_URING_CMD): the declarations moved to
 * <linux/io_uring/cmd.h> in 6.7, and the command's payload is read from
 * the SQE since 6.6. hzram_uring_cmd_payload() returns the 16 bytes of
 * sqe->cmd, valid while ->uring_cmd runs.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif

static inline const void *hzram_uring_cmd_payload(struct io_uring_cmd *cmd)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	return io_uring_sqe_cmd(cmd->sqe);
#else
	return cmd->cmd;
#endif
}

/*
 * io_uring command cancelation, since 6.7: a command marked cancelable is
 * handed back to ->uring_cmd with IO_URING_F_CANCEL when its ring goes
 * away (its task exiting among others), for the driver to complete it.
 * Before 6.7 the ring waits for the driver to complete it.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
#define HZRAM_URING_CANCEL	IO_URING_F_CANCEL
static inline void hzram_uring_cmd_cancelable(struct io_uring_cmd *cmd,
					      unsigned int issue_flags)
{
	io_uring_cmd_mark_cancelable(cmd, issue_flags);
}
#else
#define HZRAM_URING_CANCEL	0
static inline void hzram_uring_cmd_cancelable(struct io_uring_cmd *cmd,
					      unsigned int issue_flags)
{
}
#endif

/* vm_flags became read-only outside the vm_flags_*() helpers in 6.3. */
static inline void hzram_vma_deny_write(struct vm_area_struct *vma)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_clear(vma, VM_MAYWRITE);
#else
	vma->vm_flags &= ~VM_MAYWRITE;
#endif
}

#endif /* _HZRAM_COMPAT_H */
