// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: a compressed RAM block device, compatible with zram's sysfs ABI.
 *
 * This file holds device creation and removal, the block device
 * operations, the hzram-control class (hot_add, hot_remove) and module
 * init/exit. The page store and I/O path are in io.c, the compression
 * streams in comp.c, the per-device attributes in sysfs.c.
 */
#include "hzram.h"

#include <linux/idr.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

static int hzram_major;
static unsigned int num_devices = 1;

/* Protects hzram_index_idr: device creation and removal. */
DEFINE_MUTEX(hzram_index_mutex);
static DEFINE_IDR(hzram_index_idr);

/* The device of id @id, or NULL; the caller holds hzram_index_mutex. */
struct hzram *hzram_find(int id)
{
	lockdep_assert_held(&hzram_index_mutex);
	return idr_find(&hzram_index_idr, id);
}

/*
 * The device of the lowest id at or above *@id, which is set to its id;
 * NULL if none. The caller holds hzram_index_mutex.
 */
struct hzram *hzram_find_next(int *id)
{
	lockdep_assert_held(&hzram_index_mutex);
	return idr_get_next(&hzram_index_idr, id);
}

static int hzram_open_disk(struct gendisk *disk)
{
	struct hzram *hz = disk->private_data;

	/* The caller holds disk->open_mutex, which also guards these. */
	return hz->claim || hz->removing ? -EBUSY : 0;
}
HZRAM_DEFINE_OPEN(hzram_open, hzram_open_disk)
HZRAM_DEFINE_RW_PAGE(hzram_rw_page_op)

static const struct block_device_operations hzram_devops = {
	.owner			= THIS_MODULE,
	.open			= hzram_open,
	.submit_bio		= hzram_submit_bio,
	HZRAM_RW_PAGE_OP(hzram_rw_page_op)
	.swap_slot_free_notify	= hzram_slot_free_notify,
};

/**
 * hzram_add() - create a device, uninitialised (disksize 0)
 *
 * The caller holds hzram_index_mutex.
 *
 * Return: the new device's id, or a negative errno (-ENOSPC when
 * HZRAM_MAX_DEVICES exist).
 */
static int hzram_add(void)
{
	struct gendisk *disk;
	struct hzram *hz;
	int ret;

	lockdep_assert_held(&hzram_index_mutex);
	hz = kzalloc(sizeof(*hz), GFP_KERNEL);
	if (!hz)
		return -ENOMEM;
	ret = idr_alloc(&hzram_index_idr, hz, 0, HZRAM_MAX_DEVICES, GFP_KERNEL);
	if (ret < 0)
		goto err_free_hz;
	hz->id = ret;
	init_rwsem(&hz->init_lock);
	hzram_nl_device_init(hz);
	hzram_offload_params_init(&hz->offp);
	hzram_wb_device_init(hz);
	strscpy(hz->comp_algorithm, HZRAM_DEFAULT_COMP,
		sizeof(hz->comp_algorithm));
	hzram_recomp_device_init(hz);

	disk = hzram_alloc_disk();
	if (IS_ERR(disk)) {
		ret = PTR_ERR(disk);
		goto err_remove_idr;
	}
	hz->disk = disk;
	disk->major = hzram_major;
	disk->first_minor = hz->id;
	disk->minors = 1;
	disk->flags |= GENHD_FL_NO_PART;
	disk->fops = &hzram_devops;
	disk->private_data = hz;
	snprintf(disk->disk_name, sizeof(disk->disk_name),
		 HZRAM_DEVICE_PREFIX "%d", hz->id);
	/* The capacity is set by disksize_store(). */
	set_capacity(disk, 0);

	ret = device_add_disk(NULL, disk, hzram_disk_groups);
	if (ret)
		goto err_put_disk;
	hzram_debugfs_add(hz);
	pr_info("added device %s\n", disk->disk_name);
	hzram_nl_event(hz, HZRAM_NL_EV_DEVICE_ADDED, 0);
	return hz->id;

err_put_disk:
	put_disk(disk);
err_remove_idr:
	idr_remove(&hzram_index_idr, hz->id);
err_free_hz:
	kfree(hz);
	return ret;
}

/**
 * hzram_remove() - delete a device and free everything it holds
 * @hz: the device
 *
 * The caller holds hzram_index_mutex and removes @hz from the idr on
 * success.
 *
 * Return: 0, or -EBUSY while the device is open.
 */
static int hzram_remove(struct hzram *hz)
{
	struct gendisk *disk = hz->disk;
	bool claimed;

	lockdep_assert_held(&hzram_index_mutex);
	mutex_lock(&disk->open_mutex);
	if (disk_openers(disk)) {
		mutex_unlock(&disk->open_mutex);
		return -EBUSY;
	}
	claimed = hz->claim;
	hz->claim = true;
	/* Unlike claim, which a reset in progress clears, this stays. */
	hz->removing = true;
	mutex_unlock(&disk->open_mutex);

	/* A reset in progress finishes before del_gendisk() returns. */
	if (!claimed) {
		sync_blockdev(disk->part0);
		hzram_reset_device(hz);
	}
	/* Its helper, if any, loses the device. */
	hzram_offload_unlink(hz);
	hzram_debugfs_remove(hz);
	pr_info("removed device %s\n", disk->disk_name);
	del_gendisk(disk);
	/* disksize may have been set between the reset and del_gendisk(). */
	hzram_reset_device(hz);
	hzram_nl_device_removed(hz);
	put_disk(disk);
	kfree(hz);
	return 0;
}

/* True if @disk is one of hzram's devices. */
bool hzram_is_hzram_disk(struct gendisk *disk)
{
	return disk->fops == &hzram_devops;
}

/*
 * Reading hot_add creates a device and returns its id; 0400, like zram's,
 * because reading it changes the system.
 */
static ssize_t hot_add_show(hzram_class_const struct class *class,
			    hzram_class_const struct class_attribute *attr,
			    char *buf)
{
	int ret;

	mutex_lock(&hzram_index_mutex);
	ret = hzram_add();
	mutex_unlock(&hzram_index_mutex);
	if (ret < 0)
		return ret;
	return sysfs_emit(buf, "%d\n", ret);
}
static struct class_attribute class_attr_hot_add =
	__ATTR(hot_add, 0400, hot_add_show, NULL);

static ssize_t hot_remove_store(hzram_class_const struct class *class,
				hzram_class_const struct class_attribute *attr,
				const char *buf, size_t count)
{
	struct hzram *hz;
	int ret, id;

	ret = kstrtoint(buf, 10, &id);
	if (ret)
		return ret;
	if (id < 0)
		return -EINVAL;

	mutex_lock(&hzram_index_mutex);
	hz = idr_find(&hzram_index_idr, id);
	if (hz) {
		ret = hzram_remove(hz);
		if (!ret)
			idr_remove(&hzram_index_idr, id);
	} else {
		ret = -ENODEV;
	}
	mutex_unlock(&hzram_index_mutex);
	return ret ? ret : count;
}
static CLASS_ATTR_WO(hot_remove);

static struct attribute *hzram_control_class_attrs[] = {
	&class_attr_hot_add.attr,
	&class_attr_hot_remove.attr,
	NULL,
};
ATTRIBUTE_GROUPS(hzram_control_class);

static struct class hzram_control_class = {
	.name		= HZRAM_CONTROL_CLASS,
	.class_groups	= hzram_control_class_groups,
};

static int hzram_remove_cb(int id, void *ptr, void *data)
{
	/* Nothing can hold a device open: the module reference prevents it. */
	WARN_ON_ONCE(hzram_remove(ptr));
	return 0;
}

static void hzram_destroy_devices(void)
{
	mutex_lock(&hzram_index_mutex);
	idr_for_each(&hzram_index_idr, hzram_remove_cb, NULL);
	idr_destroy(&hzram_index_idr);
	mutex_unlock(&hzram_index_mutex);
}

static int __init hzram_init(void)
{
	unsigned int i;
	int ret;

	/* The slot bits stay below the checksum (bits 32 to 63). */
	BUILD_BUG_ON(__HZRAM_SLOT_BITS > HZRAM_CSUM_SHIFT);
	BUILD_BUG_ON(sizeof(struct hzram_slot) != 24);	/* as documented */
	BUILD_BUG_ON(HZRAM_PAGE_SIZE != PAGE_SIZE);

	ret = hzram_comp_init();
	if (ret)
		return ret;
	ret = hzram_offload_init();
	if (ret)
		goto err_comp_exit;
	ret = hzram_wb_init();
	if (ret)
		goto err_offload_exit;
	ret = hzram_nl_init();
	if (ret)
		goto err_wb_exit;
	hzram_debugfs_init();
	hzram_fault_init();
	hzram_major = register_blkdev(0, HZRAM_DEVICE_PREFIX);
	if (hzram_major <= 0) {
		pr_err("cannot get a major number\n");
		ret = -EBUSY;
		goto err_debugfs_exit;
	}

	mutex_lock(&hzram_index_mutex);
	for (i = 0; i < num_devices; i++) {
		ret = hzram_add();
		if (ret < 0)
			break;
	}
	mutex_unlock(&hzram_index_mutex);
	if (ret < 0)
		goto err_destroy_devices;

	/* hot_add may create devices as soon as the class exists. */
	ret = class_register(&hzram_control_class);
	if (ret) {
		pr_err("cannot register the %s class\n", HZRAM_CONTROL_CLASS);
		goto err_destroy_devices;
	}
	/* Last: a helper may attach as soon as the control device exists. */
	ret = hzram_ctl_register();
	if (ret) {
		pr_err("cannot register /dev/hzram-control\n");
		goto err_class_unregister;
	}
	return 0;

err_class_unregister:
	class_unregister(&hzram_control_class);
err_destroy_devices:
	hzram_destroy_devices();
	unregister_blkdev(hzram_major, HZRAM_DEVICE_PREFIX);
err_debugfs_exit:
	hzram_debugfs_exit();
	hzram_nl_exit();
err_wb_exit:
	hzram_wb_exit();
err_offload_exit:
	hzram_offload_exit();
err_comp_exit:
	hzram_comp_exit();
	return ret;
}

static void __exit hzram_exit(void)
{
	/* No helper may attach, no hot_add race with the teardown. */
	hzram_ctl_unregister();
	class_unregister(&hzram_control_class);
	hzram_destroy_devices();
	unregister_blkdev(hzram_major, HZRAM_DEVICE_PREFIX);
	hzram_debugfs_exit();
	hzram_nl_exit();
	hzram_wb_exit();
	hzram_offload_exit();
	hzram_comp_exit();
}

module_init(hzram_init);
module_exit(hzram_exit);

static int hzram_num_devices_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret;

	ret = kstrtouint(val, 10, &n);
	if (ret)
		return ret;
	if (n > HZRAM_MAX_DEVICES) {
		pr_err("num_devices=%u: at most %d devices\n", n,
		       HZRAM_MAX_DEVICES);
		return -EINVAL;
	}
	*(unsigned int *)kp->arg = n;
	return 0;
}

static const struct kernel_param_ops hzram_num_devices_ops = {
	.set = hzram_num_devices_set,
	.get = param_get_uint,
};
module_param_cb(num_devices, &hzram_num_devices_ops, &num_devices, 0444);
MODULE_PARM_DESC(num_devices, "Number of devices to create at load (0.."
		 __stringify(HZRAM_MAX_DEVICES) ", default 1)");

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Compressed RAM block device");
MODULE_VERSION(HZRAM_VERSION);
