/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hzram: every difference between the kernels hzram supports (6.1 and
 * later) lives here, so that the driver reads the same on all of them.
 *
 * Interfaces that changed up to 6.12 are told apart by version: the
 * conditions name the release that changed each. Those that changed
 * after 6.12 are told apart by what the kernel's headers declare, probed
 * by kmod/Kbuild (HZRAM_HAVE_*), since distributions backport them.
 */
#ifndef _HZRAM_COMPAT_H
#define _HZRAM_COMPAT_H

#include <linux/blkdev.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/string.h>
#include <linux/version.h>
#include <linux/zsmalloc.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "hzram needs Linux 6.1 or later"
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
#define HZRAM_HAVE_RW_PAGE	1	/* io.c builds hzram_rw_page() */
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
 * zsmalloc. Objects are read with hzram_zs_read_begin() and
 * hzram_zs_read_end(), shaped like the zs_obj_read_begin() API that
 * replaced zs_map_object() in 6.15 (HZRAM_HAVE_ZS_OBJ_READ): an object
 * that spans two pages is copied into @local_copy, which must hold @len
 * bytes; 7.0 passes @len on (HZRAM_HAVE_ZS_READ_LEN). Neither sleeps.
 */
#ifdef HZRAM_HAVE_ZS_OBJ_READ
static inline const void *hzram_zs_read_begin(struct zs_pool *pool,
					      unsigned long handle,
					      unsigned int len,
					      void *local_copy)
{
#ifdef HZRAM_HAVE_ZS_READ_LEN
	return zs_obj_read_begin(pool, handle, len, local_copy);
#else
	return zs_obj_read_begin(pool, handle, local_copy);
#endif
}

static inline void hzram_zs_read_end(struct zs_pool *pool,
				     unsigned long handle, unsigned int len,
				     const void *mem)
{
#ifdef HZRAM_HAVE_ZS_READ_LEN
	zs_obj_read_end(pool, handle, len, (void *)mem);
#else
	zs_obj_read_end(pool, handle, (void *)mem);
#endif
}

/* Copy @len bytes from @src into the freshly allocated object @handle. */
static inline void hzram_zs_write(struct zs_pool *pool, unsigned long handle,
				  const void *src, size_t len)
{
	zs_obj_write(pool, handle, (void *)src, len);
}
#else
static inline const void *hzram_zs_read_begin(struct zs_pool *pool,
					      unsigned long handle,
					      unsigned int len,
					      void *local_copy)
{
	return zs_map_object(pool, handle, ZS_MM_RO);
}

static inline void hzram_zs_read_end(struct zs_pool *pool,
				     unsigned long handle, unsigned int len,
				     const void *mem)
{
	zs_unmap_object(pool, handle);
}

static inline void hzram_zs_write(struct zs_pool *pool, unsigned long handle,
				  const void *src, size_t len)
{
	void *dst = zs_map_object(pool, handle, ZS_MM_WO);

	memcpy(dst, src, len);
	zs_unmap_object(pool, handle);
}
#endif

/* zs_malloc() takes the NUMA node to allocate on since 6.17. */
static inline unsigned long hzram_zs_malloc(struct zs_pool *pool, size_t len,
					    gfp_t gfp)
{
#ifdef HZRAM_HAVE_ZS_MALLOC_NID
	return zs_malloc(pool, len, gfp, NUMA_NO_NODE);
#else
	return zs_malloc(pool, len, gfp);
#endif
}

/*
 * io_uring commands (IORING_OP_URING_CMD): the declarations moved to
 * <linux/io_uring/cmd.h> in 6.7, and the command's payload is read from
 * the SQE since 6.6. hzram_uring_cmd_payload(cmd, type) returns the
 * start of sqe->cmd as a const type *, valid while ->uring_cmd runs.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif

#ifdef HZRAM_HAVE_URING_SQE_CMD_TYPED	/* 7.0 */
#define hzram_uring_cmd_payload(cmd, type)	io_uring_sqe_cmd((cmd)->sqe, type)
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#define hzram_uring_cmd_payload(cmd, type) \
	((const type *)io_uring_sqe_cmd((cmd)->sqe))
#else
#define hzram_uring_cmd_payload(cmd, type)	((const type *)(cmd)->cmd)
#endif

/*
 * Completing a command: io_uring_cmd_done() lost its second result (res2,
 * for 32-byte CQEs, which hzram does not use) when io_uring_cmd_done32()
 * came, in 6.18.
 */
static inline void hzram_uring_cmd_done(struct io_uring_cmd *cmd, int ret,
					unsigned int issue_flags)
{
#ifdef HZRAM_HAVE_URING_CMD_DONE32
	io_uring_cmd_done(cmd, ret, issue_flags);
#else
	io_uring_cmd_done(cmd, ret, 0, issue_flags);
#endif
}

/*
 * Completing a command in its task: HZRAM_DEFINE_URING_TW(name, fn)
 * defines the callback @name for io_uring_cmd_complete_in_task(), which
 * calls void fn(struct io_uring_cmd *, unsigned int issue_flags). The
 * callback takes the io_uring request itself since 6.19.
 */
#ifdef HZRAM_HAVE_URING_CMD_FROM_TW
#define HZRAM_DEFINE_URING_TW(name, fn)					\
	static void name(struct io_tw_req tw_req, io_tw_token_t tw)	\
	{								\
		fn(io_uring_cmd_from_tw(tw_req),			\
		   IO_URING_CMD_TASK_WORK_ISSUE_FLAGS);			\
	}
#else
#define HZRAM_DEFINE_URING_TW(name, fn)					\
	static void name(struct io_uring_cmd *cmd, unsigned int issue_flags) \
	{								\
		fn(cmd, issue_flags);					\
	}
#endif

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

/*
 * A generic netlink multicast group that only CAP_SYS_ADMIN may join:
 * genl_multicast_group.flags, since 6.7 and in 6.1.y.
 */
#include <net/genetlink.h>
#ifdef GENL_MCAST_CAP_SYS_ADMIN
#define HZRAM_GENL_MCGRP_ADMIN	.flags = GENL_MCAST_CAP_SYS_ADMIN
#else
#define HZRAM_GENL_MCGRP_ADMIN
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
