/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hzram: every difference between the kernels hzram supports (6.1 and
 * later) lives here, so that the driver reads the same on all of them.
 *
 * Differences are decided by compiling, not by version numbers, since
 * distributions backport interfaces into older releases: before the
 * module is built, kmod/probes/gen-config compiles each test file in
 * kmod/probes/ against the kernel's headers and defines HZRAM_HAVE_<NAME>
 * in hzram_config.h for each that compiles (kmod/Kbuild runs it). The
 * releases named below, where each interface changed upstream, are for
 * the reader; nothing tests them.
 */
#ifndef _HZRAM_COMPAT_H
#define _HZRAM_COMPAT_H

#include "hzram_config.h"

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
 * non-rotational, no entropy, and synchronous (swap then reads and writes
 * single pages in the faulting or reclaiming task, skipping the swap
 * cache), as zram is. The limits go to blk_alloc_disk() since 6.9
 * (HZRAM_HAVE_BLK_ALLOC_DISK_LIM), through blk_queue_*() before. The
 * features are BLK_FEAT_* flags in the limits since 6.11
 * (HZRAM_HAVE_BLK_FEAT), queue flags before; a disk was made synchronous
 * with QUEUE_FLAG_SYNCHRONOUS from 6.3 to 6.10
 * (HZRAM_HAVE_QUEUE_FLAG_SYNCHRONOUS) and by having ->rw_page before 6.3
 * (HZRAM_HAVE_RW_PAGE, below).
 *
 * Return: the disk, or an ERR_PTR.
 */
static inline struct gendisk *hzram_alloc_disk(void)
{
	struct gendisk *disk;
#ifdef HZRAM_HAVE_BLK_ALLOC_DISK_LIM
	struct queue_limits lim = {
		.logical_block_size	= HZRAM_LOGICAL_BLOCK_SIZE,
		.physical_block_size	= PAGE_SIZE,
		.io_min			= PAGE_SIZE,
		.io_opt			= PAGE_SIZE,
		.discard_granularity	= PAGE_SIZE,
		.max_hw_discard_sectors	= UINT_MAX,
		.max_write_zeroes_sectors = UINT_MAX,
#ifdef HZRAM_HAVE_BLK_FEAT
		.features		= BLK_FEAT_STABLE_WRITES |
					  BLK_FEAT_SYNCHRONOUS,
#endif
	};

	disk = blk_alloc_disk(&lim, NUMA_NO_NODE);
	if (IS_ERR(disk))
		return disk;
#else
	struct request_queue *q;

	disk = blk_alloc_disk(NUMA_NO_NODE);
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
#endif
#ifndef HZRAM_HAVE_BLK_FEAT
	blk_queue_flag_set(QUEUE_FLAG_NONROT, disk->queue);
	blk_queue_flag_clear(QUEUE_FLAG_ADD_RANDOM, disk->queue);
	blk_queue_flag_set(QUEUE_FLAG_STABLE_WRITES, disk->queue);
#ifdef HZRAM_HAVE_QUEUE_FLAG_SYNCHRONOUS
	blk_queue_flag_set(QUEUE_FLAG_SYNCHRONOUS, disk->queue);
#endif
#endif
	return disk;
}

/*
 * ->rw_page (until 6.3; HZRAM_HAVE_RW_PAGE): swap reads and writes a page
 * through it without a bio, and a device that has it gets
 * SWP_SYNCHRONOUS_IO. HZRAM_DEFINE_RW_PAGE(name) defines the method @name
 * around hzram_rw_page() (io.c builds it where HZRAM_HAVE_RW_PAGE is
 * defined), with the disk's I/O accounting: bdev_start_io_acct() took the
 * number of sectors until 6.3 (HZRAM_HAVE_BDEV_IO_ACCT_SECTORS).
 * HZRAM_RW_PAGE_OP(name) is its line in block_device_operations.
 */
#ifdef HZRAM_HAVE_RW_PAGE
#ifdef HZRAM_HAVE_BDEV_IO_ACCT_SECTORS
#define hzram_bdev_start_io_acct(bdev, op)				\
	bdev_start_io_acct(bdev, PAGE_SECTORS, op, jiffies)
#else
#define hzram_bdev_start_io_acct(bdev, op)				\
	bdev_start_io_acct(bdev, op, jiffies)
#endif
#define HZRAM_DEFINE_RW_PAGE(name)					\
	static int name(struct block_device *bdev, sector_t sector,	\
			struct page *page, enum req_op op)		\
	{								\
		unsigned long start;					\
		int ret;						\
									\
		start = hzram_bdev_start_io_acct(bdev->bd_disk->part0, op); \
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
 * block_device_operations.open: the first argument became the gendisk,
 * and the mode a blk_mode_t, in 6.5 (HZRAM_HAVE_OPEN_GENDISK).
 * HZRAM_DEFINE_OPEN(name, fn) defines an open method @name that calls
 * int fn(struct gendisk *).
 */
#ifdef HZRAM_HAVE_OPEN_GENDISK
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
#ifdef HZRAM_HAVE_CLASS_ATTR_CONST
#define hzram_class_const const
#else
#define hzram_class_const
#endif

/*
 * zsmalloc. Objects are read with hzram_zs_read_begin() and
 * hzram_zs_read_end(), shaped like the zs_obj_read_begin() API that
 * replaced zs_map_object() in 6.15: an object that spans two pages is
 * copied into @local_copy, which must hold @len bytes. Both read calls
 * take @len since 7.0 (HZRAM_HAVE_ZS_OBJ_READ_LEN), not before
 * (HZRAM_HAVE_ZS_OBJ_READ); zs_obj_write() came with them
 * (HZRAM_HAVE_ZS_OBJ_WRITE). Where they are missing, zs_map_object().
 * Neither read call sleeps.
 */
static inline const void *hzram_zs_read_begin(struct zs_pool *pool,
					      unsigned long handle,
					      unsigned int len,
					      void *local_copy)
{
#if defined(HZRAM_HAVE_ZS_OBJ_READ_LEN)
	return zs_obj_read_begin(pool, handle, len, local_copy);
#elif defined(HZRAM_HAVE_ZS_OBJ_READ)
	return zs_obj_read_begin(pool, handle, local_copy);
#else
	return zs_map_object(pool, handle, ZS_MM_RO);
#endif
}

static inline void hzram_zs_read_end(struct zs_pool *pool,
				     unsigned long handle, unsigned int len,
				     const void *mem)
{
#if defined(HZRAM_HAVE_ZS_OBJ_READ_LEN)
	zs_obj_read_end(pool, handle, len, (void *)mem);
#elif defined(HZRAM_HAVE_ZS_OBJ_READ)
	zs_obj_read_end(pool, handle, (void *)mem);
#else
	zs_unmap_object(pool, handle);
#endif
}

/* Copy @len bytes from @src into the freshly allocated object @handle. */
static inline void hzram_zs_write(struct zs_pool *pool, unsigned long handle,
				  const void *src, size_t len)
{
#ifdef HZRAM_HAVE_ZS_OBJ_WRITE
	zs_obj_write(pool, handle, (void *)src, len);
#else
	void *dst = zs_map_object(pool, handle, ZS_MM_WO);

	memcpy(dst, src, len);
	zs_unmap_object(pool, handle);
#endif
}

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
 * The zsmalloc size class an object of @size bytes goes to, after classes
 * of the same shape were merged: a smaller index is less memory. zs_malloc()
 * stores the handle with the object, so the class is that of @size plus
 * the handle's size.
 * zs_lookup_class_index() gives it from 6.2 on
 * (HZRAM_HAVE_ZS_LOOKUP_CLASS_INDEX); before, the classes of 6.1's
 * zsmalloc are worked out here as zs_create_pool() makes them: 16-byte
 * steps from 32 bytes to PAGE_SIZE, a class merged into the next larger
 * one while both use as many pages per zspage (the count of 1 to 4 that
 * wastes least) and fit as many objects in it.
 */
#ifndef HZRAM_HAVE_ZS_LOOKUP_CLASS_INDEX
#define HZRAM_ZS_MIN_ALLOC	32
#define HZRAM_ZS_DELTA		(PAGE_SIZE >> 8)
#define HZRAM_ZS_CLASSES \
	(DIV_ROUND_UP(PAGE_SIZE - HZRAM_ZS_MIN_ALLOC, HZRAM_ZS_DELTA) + 1)

static inline void hzram_zs_class_shape(unsigned int i, unsigned int *pages,
					unsigned int *objs)
{
	unsigned int size = min_t(unsigned int, PAGE_SIZE,
				  HZRAM_ZS_MIN_ALLOC + i * HZRAM_ZS_DELTA);
	unsigned int n, best = 1, best_used = 0;

	for (n = 1; n <= 4; n++) {
		unsigned int bytes = n * PAGE_SIZE;
		unsigned int used = (bytes - bytes % size) * 100 / bytes;

		if (used > best_used) {
			best_used = used;
			best = n;
		}
	}
	*pages = best;
	*objs = best * PAGE_SIZE / size;
}
#endif

static inline unsigned int hzram_zs_class_index(struct zs_pool *pool,
						unsigned int size)
{
	size += sizeof(unsigned long);
#ifdef HZRAM_HAVE_ZS_LOOKUP_CLASS_INDEX
	return zs_lookup_class_index(pool, size);
#else
	unsigned int i = 0, pages, objs, p, o;

	if (size > HZRAM_ZS_MIN_ALLOC)
		i = DIV_ROUND_UP(size - HZRAM_ZS_MIN_ALLOC, HZRAM_ZS_DELTA);
	i = min_t(unsigned int, i, HZRAM_ZS_CLASSES - 1);
	hzram_zs_class_shape(i, &pages, &objs);
	while (i + 1 < HZRAM_ZS_CLASSES) {
		hzram_zs_class_shape(i + 1, &p, &o);
		if (p != pages || o != objs)
			break;
		i++;
	}
	return i;
#endif
}

/*
 * io_uring commands (IORING_OP_URING_CMD): the declarations moved from
 * <linux/io_uring.h> to <linux/io_uring/cmd.h> in 6.8
 * (HZRAM_HAVE_IO_URING_CMD_H). The command's payload is read from the SQE
 * with io_uring_sqe_cmd(sqe) from 6.6 (HZRAM_HAVE_URING_SQE_CMD), with
 * io_uring_sqe_cmd(sqe, type) since 7.0 (HZRAM_HAVE_URING_SQE_CMD_TYPED),
 * and was at cmd->cmd before 6.6. hzram_uring_cmd_payload(cmd, type)
 * returns the start of sqe->cmd as a const type *, valid while ->uring_cmd
 * runs.
 */
#ifdef HZRAM_HAVE_IO_URING_CMD_H
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif

#if defined(HZRAM_HAVE_URING_SQE_CMD_TYPED)
#define hzram_uring_cmd_payload(cmd, type)	io_uring_sqe_cmd((cmd)->sqe, type)
#elif defined(HZRAM_HAVE_URING_SQE_CMD)
#define hzram_uring_cmd_payload(cmd, type) \
	((const type *)io_uring_sqe_cmd((cmd)->sqe))
#else
#define hzram_uring_cmd_payload(cmd, type)	((const type *)(cmd)->cmd)
#endif

/*
 * Completing a command: io_uring_cmd_done() took a second result (res2,
 * for 32-byte CQEs, which hzram does not use) until io_uring_cmd_done32()
 * took it over, in 6.18 (HZRAM_HAVE_URING_CMD_DONE_RES2).
 */
static inline void hzram_uring_cmd_done(struct io_uring_cmd *cmd, int ret,
					unsigned int issue_flags)
{
#ifdef HZRAM_HAVE_URING_CMD_DONE_RES2
	io_uring_cmd_done(cmd, ret, 0, issue_flags);
#else
	io_uring_cmd_done(cmd, ret, issue_flags);
#endif
}

/*
 * Completing a command in its task: HZRAM_DEFINE_URING_TW(name, fn)
 * defines the callback @name for io_uring_cmd_complete_in_task(), which
 * calls void fn(struct io_uring_cmd *, unsigned int issue_flags). The
 * callback takes the io_uring request itself and a token since 6.19
 * (HZRAM_HAVE_URING_CMD_FROM_TW), the command and the issue flags before.
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
 * io_uring command cancelation, since 6.7 (HZRAM_HAVE_URING_CMD_CANCEL): a
 * command marked cancelable is handed back to ->uring_cmd with
 * IO_URING_F_CANCEL when its ring goes away (its task exiting among
 * others), for the driver to complete it. Without it the ring waits for
 * the driver to complete it.
 */
#ifdef HZRAM_HAVE_URING_CMD_CANCEL
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
 * vm_flags became read-only outside the vm_flags_*() helpers in 6.3
 * (HZRAM_HAVE_VM_FLAGS_CLEAR).
 */
static inline void hzram_vma_deny_write(struct vm_area_struct *vma)
{
#ifdef HZRAM_HAVE_VM_FLAGS_CLEAR
	vm_flags_clear(vma, VM_MAYWRITE);
#else
	vma->vm_flags &= ~VM_MAYWRITE;
#endif
}

/*
 * A generic netlink multicast group that only CAP_SYS_ADMIN may join:
 * HZRAM_GENL_MCGRP_ADMIN, last in a struct genl_multicast_group's
 * initializer, sets GENL_MCAST_CAP_SYS_ADMIN in its flags where the
 * kernel has it (6.7, and the stable kernels from 6.1.y on:
 * HZRAM_HAVE_GENL_MCAST_CAP); joining then needs CAP_SYS_ADMIN in the user
 * namespace of the socket's network namespace. Elsewhere it is empty,
 * and any process may join.
 */
#ifdef HZRAM_HAVE_GENL_MCAST_CAP
#define HZRAM_GENL_MCGRP_ADMIN	.flags = GENL_MCAST_CAP_SYS_ADMIN
#else
#define HZRAM_GENL_MCGRP_ADMIN
#endif

#endif /* _HZRAM_COMPAT_H */
