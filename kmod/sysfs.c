// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: the per-device sysfs attributes, with zram's names and meanings
 * (Documentation/admin-guide/blockdev/zram.rst in the kernel tree).
 */
#include "hzram.h"

#include <linux/ctype.h>
#include <linux/overflow.h>
#include <linux/part_stat.h>
#include <linux/sysfs.h>

/* True when only whitespace (a newline, say) is left at @s. */
static bool hzram_tail_is_space(const char *s)
{
	while (*s && isspace(*s))
		s++;
	return *s == '\0';
}

/*
 * Parse a decimal size with an optional K, M, G, T, P or E suffix (powers
 * of 1024, either case) and nothing after it but whitespace.
 * Return: 0, -EINVAL for malformed input, -ERANGE if it overflows u64.
 */
static int hzram_parse_size(const char *buf, u64 *out)
{
	size_t digits = strspn(buf, "0123456789");
	unsigned int shift = 0;
	const char *p, *sfx = "KMGTPE";
	char num[24];
	u64 val;
	int ret;

	if (!digits)
		return -EINVAL;
	if (digits >= sizeof(num))
		return -ERANGE;
	memcpy(num, buf, digits);
	num[digits] = '\0';
	ret = kstrtoull(num, 10, &val);
	if (ret)
		return ret;
	p = buf[digits] ? strchr(sfx, toupper(buf[digits])) : NULL;
	if (p) {
		shift = 10 * (p - sfx + 1);
		digits++;
	}
	if (!hzram_tail_is_space(buf + digits))
		return -EINVAL;
	if (check_shl_overflow(val, shift, out))
		return -ERANGE;
	return 0;
}

static ssize_t disksize_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct hzram *hz = dev_to_hzram(dev);
	u64 val;

	down_read(&hz->init_lock);
	val = hz->disksize;
	up_read(&hz->init_lock);
	return sysfs_emit(buf, "%llu\n", val);
}

static ssize_t disksize_store(struct device *dev, struct device_attribute *attr,
			      const char *buf, size_t len)
{
	struct hzram *hz = dev_to_hzram(dev);
	struct hzram_comp *comp;
	u64 disksize;
	int ret;

	ret = hzram_parse_size(buf, &disksize);
	if (ret)
		return ret;
	if (!disksize)
		return -EINVAL;
	if (disksize > HZRAM_MAX_PAGES << PAGE_SHIFT)
		return -E2BIG;
	disksize = PAGE_ALIGN(disksize);

	down_write(&hz->init_lock);
	if (hzram_init_done(hz)) {
		ret = -EBUSY;
		goto out_unlock;
	}
	ret = hzram_meta_alloc(hz, disksize);
	if (ret)
		goto out_unlock;
	comp = hzram_comp_create(hz->comp_algorithm, &hz->params[0]);
	if (IS_ERR(comp)) {
		pr_err("%s: cannot set up %s: %ld\n", hz->disk->disk_name,
		       hz->comp_algorithm, PTR_ERR(comp));
		ret = PTR_ERR(comp);
		goto out_free_meta;
	}
	ret = hzram_recomp_create(hz);
	if (ret) {
		hzram_comp_destroy(comp);
		goto out_free_meta;
	}
	hz->comp = comp;
	/* Pairs with the acquire in the I/O path: table and comp are set. */
	smp_store_release(&hz->disksize, disksize);
	hzram_offload_start(hz);
	set_capacity_and_notify(hz->disk, disksize >> SECTOR_SHIFT);
	hzram_nl_event(hz, HZRAM_NL_EV_INITIALISED, disksize);
	up_write(&hz->init_lock);
	return len;

out_free_meta:
	hzram_meta_free(hz, disksize);
out_unlock:
	up_write(&hz->init_lock);
	return ret;
}

static ssize_t initstate_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	struct hzram *hz = dev_to_hzram(dev);
	bool done;

	down_read(&hz->init_lock);
	done = hzram_init_done(hz);
	up_read(&hz->init_lock);
	return sysfs_emit(buf, "%u\n", done);
}

/**
 * hzram_reset_device() - free all data and return to the uninitialised state
 * @hz: the device, which nobody has open
 *
 * The algorithm goes back to the default, and the recompression
 * algorithms and every algorithm's parameters are forgotten, as in zram.
 */
void hzram_reset_device(struct hzram *hz)
{
	down_write(&hz->init_lock);
	hz->limit_pages = 0;
	strscpy(hz->comp_algorithm, HZRAM_DEFAULT_COMP,
		sizeof(hz->comp_algorithm));
	hzram_recomp_device_init(hz);
	if (!hzram_init_done(hz)) {
		hzram_bd_drop(hz);
		up_write(&hz->init_lock);
		return;
	}
	/*
	 * Staged pages are stored before the store goes, and read batches
	 * end (with their I/O accounting) before the statistics are zeroed.
	 */
	hzram_offload_stop(hz);
	set_capacity_and_notify(hz->disk, 0);
	part_stat_set_all(hz->disk->part0, 0);
	hzram_meta_free(hz, hz->disksize);
	/* As zram: the backing device goes; its settings stay. */
	hzram_bd_drop(hz);
	hzram_comp_destroy(hz->comp);
	hz->comp = NULL;
	hzram_recomp_destroy(hz);
	hz->disksize = 0;
	memset(&hz->stats, 0, sizeof(hz->stats));
	/* A helper attached through the reset counts as the one attach. */
	if (hz->off)
		atomic64_set(&hz->stats.offload[HZRAM_OFF_ATTACHES], 1);
	WRITE_ONCE(hz->read_ns_kernel, 0);
	WRITE_ONCE(hz->read_ns_helper, 0);
	up_write(&hz->init_lock);
	hzram_nl_event(hz, HZRAM_NL_EV_RESET, 0);
}

static ssize_t reset_store(struct device *dev, struct device_attribute *attr,
			   const char *buf, size_t len)
{
	struct hzram *hz = dev_to_hzram(dev);
	struct gendisk *disk = hz->disk;
	unsigned long val;
	int ret;

	ret = kstrtoul(buf, 10, &val);
	if (ret)
		return ret;
	if (!val)
		return -EINVAL;

	/* Refuse while open: mounted, swap, or any other user. */
	mutex_lock(&disk->open_mutex);
	if (disk_openers(disk) || hz->claim) {
		mutex_unlock(&disk->open_mutex);
		return -EBUSY;
	}
	hz->claim = true;
	mutex_unlock(&disk->open_mutex);

	sync_blockdev(disk->part0);
	hzram_reset_device(hz);

	mutex_lock(&disk->open_mutex);
	hz->claim = false;
	mutex_unlock(&disk->open_mutex);
	return len;
}

static ssize_t comp_algorithm_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct hzram *hz = dev_to_hzram(dev);
	ssize_t sz;

	down_read(&hz->init_lock);
	sz = hzram_comp_available_show(hz->comp_algorithm, buf, 0);
	up_read(&hz->init_lock);
	return sz;
}

static ssize_t comp_algorithm_store(struct device *dev,
				    struct device_attribute *attr,
				    const char *buf, size_t len)
{
	struct hzram *hz = dev_to_hzram(dev);
	char copy[HZRAM_ALG_NAME_MAX], *name;
	int ret = 0;

	/* zram's bound for a name (ZRAM_MAX_ALGO_NAME_SZ), then ours. */
	if (strnlen(buf, 128) >= 128)
		return -E2BIG;
	if (strscpy(copy, buf, sizeof(copy)) < 0)
		return -EINVAL;
	name = strim(copy);
	if (!name[0] || !hzram_comp_available(name))
		return -EINVAL;

	down_write(&hz->init_lock);
	if (hzram_init_done(hz))
		ret = -EBUSY;
	else
		strscpy(hz->comp_algorithm, name, sizeof(hz->comp_algorithm));
	/* Its algorithm_params go with the old algorithm, as in zram. */
	if (!ret)
		hzram_params_reset(hz, 0);
	up_write(&hz->init_lock);
	return ret ? ret : len;
}

static ssize_t mem_limit_store(struct device *dev,
			       struct device_attribute *attr, const char *buf,
			       size_t len)
{
	struct hzram *hz = dev_to_hzram(dev);
	u64 limit;
	int ret;

	ret = hzram_parse_size(buf, &limit);
	if (ret)
		return ret;
	if (limit > U64_MAX - PAGE_SIZE)
		return -ERANGE;

	down_write(&hz->init_lock);
	WRITE_ONCE(hz->limit_pages, PAGE_ALIGN(limit) >> PAGE_SHIFT);
	up_write(&hz->init_lock);
	return len;
}

static ssize_t mem_used_max_store(struct device *dev,
				  struct device_attribute *attr,
				  const char *buf, size_t len)
{
	struct hzram *hz = dev_to_hzram(dev);
	unsigned long val;
	int ret;

	/* Only "0" is accepted: it restarts the peak from current use. */
	ret = kstrtoul(buf, 10, &val);
	if (ret || val)
		return -EINVAL;

	down_read(&hz->init_lock);
	if (hzram_init_done(hz))
		atomic_long_set(&hz->stats.max_used_pages,
				zs_get_total_pages(hz->mem_pool));
	up_read(&hz->init_lock);
	return len;
}

static ssize_t compact_store(struct device *dev, struct device_attribute *attr,
			     const char *buf, size_t len)
{
	struct hzram *hz = dev_to_hzram(dev);
	int ret = 0;

	down_read(&hz->init_lock);
	if (hzram_init_done(hz))
		zs_compact(hz->mem_pool);
	else
		ret = -EINVAL;
	up_read(&hz->init_lock);
	return ret ? ret : len;
}

/* "all", or an age in seconds: idle.c. */
static ssize_t idle_store(struct device *dev, struct device_attribute *attr,
			  const char *buf, size_t len)
{
	int ret = hzram_mark_idle(dev_to_hzram(dev), buf);

	return ret ? ret : len;
}

/**
 * hzram_mm_stat() - the fields of mm_stat
 * @hz: the device; the caller holds its init_lock
 * @v: set to the fields, enum hzram_mm_stat_field
 */
void hzram_mm_stat(struct hzram *hz, u64 v[HZRAM_MM_NR_FIELDS])
{
	struct zs_pool_stats pool_stats = {};
	unsigned long mem_used = 0;

	lockdep_assert_held(&hz->init_lock);
	if (hzram_init_done(hz)) {
		mem_used = zs_get_total_pages(hz->mem_pool);
		zs_pool_stats(hz->mem_pool, &pool_stats);
	}
	v[HZRAM_MM_ORIG_DATA_SIZE] =
		(u64)atomic64_read(&hz->stats.pages_stored) << PAGE_SHIFT;
	v[HZRAM_MM_COMPR_DATA_SIZE] = atomic64_read(&hz->stats.compr_data_size);
	v[HZRAM_MM_MEM_USED_TOTAL] = (u64)mem_used << PAGE_SHIFT;
	v[HZRAM_MM_MEM_LIMIT] = (u64)hz->limit_pages << PAGE_SHIFT;
	v[HZRAM_MM_MEM_USED_MAX] =
		(u64)atomic_long_read(&hz->stats.max_used_pages) << PAGE_SHIFT;
	v[HZRAM_MM_SAME_PAGES] = atomic64_read(&hz->stats.same_pages);
	v[HZRAM_MM_PAGES_COMPACTED] =
		atomic_long_read(&pool_stats.pages_compacted);
	v[HZRAM_MM_HUGE_PAGES] = atomic64_read(&hz->stats.huge_pages);
	v[HZRAM_MM_HUGE_PAGES_SINCE] =
		atomic64_read(&hz->stats.huge_pages_since);
}

static ssize_t mm_stat_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct hzram *hz = dev_to_hzram(dev);
	u64 v[HZRAM_MM_NR_FIELDS];

	down_read(&hz->init_lock);
	hzram_mm_stat(hz, v);
	up_read(&hz->init_lock);
	return sysfs_emit(buf,
			  "%8llu %8llu %8llu %8llu %8llu %8llu %8llu %8llu %8llu\n",
			  v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]);
}

/* The fields of io_stat (enum hzram_io_stat_field) into @v. */
void hzram_io_stat(struct hzram *hz, u64 v[HZRAM_IO_NR_FIELDS])
{
	v[HZRAM_IO_FAILED_READS] = atomic64_read(&hz->stats.failed_reads);
	v[HZRAM_IO_FAILED_WRITES] = atomic64_read(&hz->stats.failed_writes);
	v[HZRAM_IO_INVALID_IO] = atomic64_read(&hz->stats.invalid_io);
	v[HZRAM_IO_NOTIFY_FREE] = atomic64_read(&hz->stats.notify_free);
}

static ssize_t io_stat_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct hzram *hz = dev_to_hzram(dev);
	u64 v[HZRAM_IO_NR_FIELDS];

	down_read(&hz->init_lock);
	hzram_io_stat(hz, v);
	up_read(&hz->init_lock);
	return sysfs_emit(buf, "%8llu %8llu %8llu %8llu\n", v[0], v[1], v[2],
			  v[3]);
}

/* The fields of debug_stat's second line into @v. */
void hzram_debug_stat(struct hzram *hz, u64 v[HZRAM_DEBUG_NR_FIELDS])
{
	v[HZRAM_DEBUG_WRITESTALL] = atomic64_read(&hz->stats.writestall);
	v[HZRAM_DEBUG_MISS_FREE] = atomic64_read(&hz->stats.miss_free);
}

static ssize_t debug_stat_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct hzram *hz = dev_to_hzram(dev);
	u64 v[HZRAM_DEBUG_NR_FIELDS];

	down_read(&hz->init_lock);
	hzram_debug_stat(hz, v);
	up_read(&hz->init_lock);
	return sysfs_emit(buf, "version: 1\n%8llu %8llu\n", v[0], v[1]);
}

/*
 * Streams are per CPU, so their number is the number of online CPUs; as in
 * zram, a write is checked and then has no effect.
 */
static ssize_t max_comp_streams_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", num_online_cpus());
}

static ssize_t max_comp_streams_store(struct device *dev,
				      struct device_attribute *attr,
				      const char *buf, size_t len)
{
	unsigned int val;
	int ret;

	ret = kstrtouint(buf, 10, &val);
	if (ret)
		return ret;
	return val ? len : -EINVAL;
}

/* The fields of offload_stat (enum hzram_offload_stat_field) into @v. */
void hzram_offload_stat(struct hzram *hz, u64 v[HZRAM_OFF_NR_FIELDS])
{
	int i;

	v[HZRAM_OFF_HELPER] = hzram_offload_attached(hz);
	v[HZRAM_OFF_ACTIVE] = rcu_access_pointer(hz->off_io) != NULL;
	for (i = HZRAM_OFF_STAGED; i < HZRAM_OFF_NR_FIELDS; i++)
		v[i] = atomic64_read(&hz->stats.offload[i]);
	v[HZRAM_OFF_RTT_P50_US] = hzram_offload_rtt(hz, 50);
	v[HZRAM_OFF_RTT_P99_US] = hzram_offload_rtt(hz, 99);
	v[HZRAM_OFF_READ_NS_KERNEL] = READ_ONCE(hz->read_ns_kernel);
	v[HZRAM_OFF_READ_NS_HELPER] = READ_ONCE(hz->read_ns_helper);
}

static ssize_t offload_stat_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct hzram *hz = dev_to_hzram(dev);
	u64 v[HZRAM_OFF_NR_FIELDS];
	ssize_t sz = 0;
	int i;

	hzram_offload_stat(hz, v);
	for (i = 0; i < HZRAM_OFF_NR_FIELDS; i++)
		sz += sysfs_emit_at(buf, sz, "%s%8llu", i ? " " : "", v[i]);
	sz += sysfs_emit_at(buf, sz, "\n");
	return sz;
}

/*
 * The offload settings: one unsigned number each, within [min, max].
 * offload_batch_pages sizes the arenas of the next helper to attach, and
 * cannot change while one is attached.
 */
static ssize_t hzram_offload_param_store(struct hzram *hz, const char *buf,
					 size_t len, unsigned int *field,
					 unsigned int min, unsigned int max)
{
	unsigned int val;
	int ret;

	ret = kstrtouint(buf, 10, &val);
	if (ret)
		return ret;
	if (val < min || val > max)
		return -EINVAL;
	mutex_lock(&hzram_offload_mutex);
	if (field == &hz->offp.batch_pages && hzram_offload_attached(hz)) {
		ret = -EBUSY;
	} else if ((field == &hz->offp.batch_pages &&
		    val < READ_ONCE(hz->offp.min_pages)) ||
		   (field == &hz->offp.min_pages &&
		    val > READ_ONCE(hz->offp.batch_pages))) {
		ret = -EINVAL;	/* min_pages <= batch_pages */
	} else {
		WRITE_ONCE(*field, val);
	}
	mutex_unlock(&hzram_offload_mutex);
	return ret ? ret : len;
}

#define HZRAM_OFFLOAD_ATTR(name, min, max)				\
static ssize_t offload_##name##_show(struct device *dev,		\
				     struct device_attribute *attr,	\
				     char *buf)				\
{									\
	return sysfs_emit(buf, "%u\n",					\
			  READ_ONCE(dev_to_hzram(dev)->offp.name));	\
}									\
static ssize_t offload_##name##_store(struct device *dev,		\
				      struct device_attribute *attr,	\
				      const char *buf, size_t len)	\
{									\
	struct hzram *hz = dev_to_hzram(dev);				\
									\
	return hzram_offload_param_store(hz, buf, len, &hz->offp.name,	\
					 min, max);			\
}									\
static DEVICE_ATTR_RW(offload_##name)

HZRAM_OFFLOAD_ATTR(batch_pages, 1, 4096);
HZRAM_OFFLOAD_ATTR(flush_us, 1, 1000000);
HZRAM_OFFLOAD_ATTR(min_pages, 1, 4096);
HZRAM_OFFLOAD_ATTR(timeout_ms, 10, 60000);
HZRAM_OFFLOAD_ATTR(read_min_pages, 0, 4096);

static ssize_t offload_verify_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(dev_to_hzram(dev)->offp.verify));
}

static ssize_t offload_verify_store(struct device *dev,
				    struct device_attribute *attr,
				    const char *buf, size_t len)
{
	bool val;
	int ret = kstrtobool(buf, &val);

	if (ret)
		return ret;
	WRITE_ONCE(dev_to_hzram(dev)->offp.verify, val);
	return len;
}

/*
 * offload: "auto" (the default) and "on" stage lz4 writes for an attached
 * helper; "on" also sends it every read of offload_read_min_pages or
 * more, "auto" only while it has measured the helper faster at them than
 * the kernel. "off" stops, taking back what the helper holds (it stays
 * attached, and is given nothing until offload is auto or on again).
 */
const char *const hzram_offload_modes[] = {
	[HZRAM_OFFLOAD_OFF] = "off",
	[HZRAM_OFFLOAD_AUTO] = "auto",
	[HZRAM_OFFLOAD_ON] = "on",
};

static ssize_t offload_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  hzram_offload_modes[READ_ONCE(dev_to_hzram(dev)->offp.mode)]);
}

static ssize_t offload_store(struct device *dev, struct device_attribute *attr,
			     const char *buf, size_t len)
{
	struct hzram *hz = dev_to_hzram(dev);
	int mode = sysfs_match_string(hzram_offload_modes, buf);

	if (mode < 0)
		return -EINVAL;
	mutex_lock(&hzram_offload_mutex);
	down_write(&hz->init_lock);
	WRITE_ONCE(hz->offp.mode, mode);
	if (mode != HZRAM_OFFLOAD_OFF)
		hzram_offload_start(hz);
	else
		hzram_offload_stop(hz);
	up_write(&hz->init_lock);
	mutex_unlock(&hzram_offload_mutex);
	return len;
}

static DEVICE_ATTR_RW(disksize);
static DEVICE_ATTR_RO(initstate);
static DEVICE_ATTR_WO(reset);
static DEVICE_ATTR_RW(comp_algorithm);
static DEVICE_ATTR_WO(mem_limit);
static DEVICE_ATTR_WO(mem_used_max);
static DEVICE_ATTR_WO(compact);
static DEVICE_ATTR_WO(idle);
static DEVICE_ATTR_RO(mm_stat);
static DEVICE_ATTR_RO(io_stat);
static DEVICE_ATTR_RO(debug_stat);
static DEVICE_ATTR_RW(max_comp_streams);
static DEVICE_ATTR_RO(offload_stat);
static DEVICE_ATTR_RW(offload);
static DEVICE_ATTR_RW(offload_verify);

static struct attribute *hzram_disk_attrs[] = {
	&dev_attr_disksize.attr,
	&dev_attr_initstate.attr,
	&dev_attr_reset.attr,
	&dev_attr_comp_algorithm.attr,
	&dev_attr_mem_limit.attr,
	&dev_attr_mem_used_max.attr,
	&dev_attr_compact.attr,
	&dev_attr_idle.attr,
	&dev_attr_mm_stat.attr,
	&dev_attr_io_stat.attr,
	&dev_attr_debug_stat.attr,
	&dev_attr_max_comp_streams.attr,
	&dev_attr_offload.attr,
	&dev_attr_offload_stat.attr,
	&dev_attr_offload_batch_pages.attr,
	&dev_attr_offload_flush_us.attr,
	&dev_attr_offload_min_pages.attr,
	&dev_attr_offload_timeout_ms.attr,
	&dev_attr_offload_verify.attr,
	&dev_attr_offload_read_min_pages.attr,
	NULL,
};

static const struct attribute_group hzram_disk_group = {
	.attrs = hzram_disk_attrs,
};

const struct attribute_group *hzram_disk_groups[] = {
	&hzram_disk_group,
	&hzram_wb_group,
	&hzram_recomp_group,
	NULL,
};
