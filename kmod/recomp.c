// SPDX-License-Identifier: GPL-2.0
/*
 * hzram: recompression, as zram has it (7.3): up to three secondary
 * algorithms by priority (sysfs recomp_algorithm), their parameters and
 * the primary's (algorithm_params), and recompress, which compresses
 * pages again with one of them and keeps the result where it takes a
 * smaller zsmalloc size class. Every kernel hzram builds for has it;
 * zram has it only where built with CONFIG_ZRAM_MULTI_COMP, which
 * Debian's kernels are not.
 *
 * A recompressed slot keeps its algorithm's priority in its flags
 * (HZRAM_SLOT_PRIO), and every decode of it (reads, a read of its block
 * once written back compressed) uses that algorithm's streams, set up at
 * init with the primary's and freed at reset. The helper is given no
 * such page to decode: it decodes LZ4 only (hzram_read_snapshot()).
 *
 * recompress runs in the writer of the sysfs file, under init_lock held
 * for reading and pp_mutex, as writeback does: it chooses the pages (PP,
 * pp.c), largest first, and recompresses each under its slot lock
 * (hzram_recompress_slot()), or, with a helper that recompresses with the
 * algorithm (zstd), sends them to it in batches (offload_recomp.c).
 */
#include "hzram.h"

#include <linux/gfp.h>
#include <linux/sched/signal.h>
#include <linux/kernel_read_file.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#define HZRAM_PRIMARY		0
#define HZRAM_SECONDARY		1

/* recompress's types, as zram's. */
#define HZRAM_RECOMP_IDLE	BIT(0)
#define HZRAM_RECOMP_HUGE	BIT(1)

void hzram_params_reset(struct hzram *hz, u32 prio)
{
	vfree(hz->params[prio].dict);
	hz->params[prio].dict = NULL;
	hz->params[prio].dict_sz = 0;
	hz->params[prio].level = HZRAM_LEVEL_UNSET;
}

/*
 * Forget every recomp_algorithm and algorithm_params (freeing their
 * dictionaries): at creation, reset and removal; init_lock held, or
 * nobody else can reach the device.
 */
void hzram_recomp_device_init(struct hzram *hz)
{
	u32 prio;

	for (prio = HZRAM_PRIMARY; prio < HZRAM_MAX_COMPS; prio++) {
		hz->recomp_algorithm[prio][0] = '\0';
		hzram_params_reset(hz, prio);
	}
}

/* The algorithm set at @prio, or NULL. */
static const char *hzram_prio_alg(struct hzram *hz, u32 prio)
{
	const char *alg = prio == HZRAM_PRIMARY ? hz->comp_algorithm :
			  hz->recomp_algorithm[prio];

	return alg[0] ? alg : NULL;
}

/**
 * hzram_recomp_create() - set up the recompression algorithms' streams
 * @hz: the device, being initialised (init_lock held for writing)
 *
 * Return: 0, or hzram_comp_create()'s error, with none set up.
 */
int hzram_recomp_create(struct hzram *hz)
{
	struct hzram_comp *comp;
	u32 prio;

	for (prio = HZRAM_SECONDARY; prio < HZRAM_MAX_COMPS; prio++) {
		if (!hzram_prio_alg(hz, prio))
			continue;
		comp = hzram_comp_create(hz->recomp_algorithm[prio],
					 &hz->params[prio]);
		if (IS_ERR(comp)) {
			pr_err("%s: cannot set up %s: %ld\n",
			       hz->disk->disk_name, hz->recomp_algorithm[prio],
			       PTR_ERR(comp));
			hzram_recomp_destroy(hz);
			return PTR_ERR(comp);
		}
		hz->recomp[prio] = comp;
	}
	return 0;
}

/* Free the recompression streams; init_lock held for writing. */
void hzram_recomp_destroy(struct hzram *hz)
{
	u32 prio;

	for (prio = HZRAM_SECONDARY; prio < HZRAM_MAX_COMPS; prio++) {
		if (hz->recomp[prio])
			hzram_comp_destroy(hz->recomp[prio]);
		hz->recomp[prio] = NULL;
	}
}

/* The first priority from @min_prio with algorithm @alg; -EINVAL: none. */
static int hzram_prio_lookup(struct hzram *hz, const char *alg, u32 min_prio)
{
	u32 prio;

	for (prio = min_prio; prio < HZRAM_MAX_COMPS; prio++) {
		const char *cur = hzram_prio_alg(hz, prio);

		if (cur && !strcmp(cur, alg))
			return prio;
	}
	return -EINVAL;
}

/* algo= and priority= both given: @prio must have @alg. */
static int hzram_prio_check(struct hzram *hz, const char *alg, u32 prio)
{
	const char *cur = hzram_prio_alg(hz, prio);

	return cur && !strcmp(cur, alg) ? 0 : -EINVAL;
}

static ssize_t recomp_algorithm_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	struct hzram *hz = dev_to_hzram(dev);
	ssize_t sz = 0;
	u32 prio;

	down_read(&hz->init_lock);
	for (prio = HZRAM_SECONDARY; prio < HZRAM_MAX_COMPS; prio++) {
		if (!hzram_prio_alg(hz, prio))
			continue;
		sz += sysfs_emit_at(buf, sz, "#%u: ", prio);
		sz = hzram_comp_available_show(hz->recomp_algorithm[prio], buf,
					       sz);
	}
	up_read(&hz->init_lock);
	return sz;
}

/*
 * "algo=NAME [priority=N]", N 1 (the default) to 3, as zram: before init
 * only; the priority's algorithm_params are forgotten.
 */
static ssize_t recomp_algorithm_store(struct device *dev,
				      struct device_attribute *attr,
				      const char *buf, size_t len)
{
	struct hzram *hz = dev_to_hzram(dev);
	char *copy, *args, *param, *val, *alg = NULL;
	int prio = HZRAM_SECONDARY, ret = 0;

	copy = kstrndup(buf, len, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	args = skip_spaces(copy);
	while (*args) {
		args = next_arg(args, &param, &val);
		if (!val || !*val) {
			ret = -EINVAL;
			goto out;
		}
		if (!strcmp(param, "algo")) {
			alg = val;
		} else if (!strcmp(param, "priority")) {
			ret = kstrtoint(val, 10, &prio);
			if (ret)
				goto out;
		}
	}
	if (!alg || prio < HZRAM_SECONDARY || prio >= HZRAM_MAX_COMPS) {
		ret = -EINVAL;
		goto out;
	}
	/* zram's bound for a name (ZRAM_MAX_ALGO_NAME_SZ). */
	if (strlen(alg) >= 128) {
		ret = -E2BIG;
		goto out;
	}
	if (!hzram_comp_available(alg)) {
		ret = -EINVAL;
		goto out;
	}
	down_write(&hz->init_lock);
	if (hzram_init_done(hz)) {
		ret = -EBUSY;
	} else {
		strscpy(hz->recomp_algorithm[prio], alg,
			sizeof(hz->recomp_algorithm[prio]));
		hzram_params_reset(hz, prio);
	}
	up_write(&hz->init_lock);
out:
	kfree(copy);
	return ret ? ret : len;
}

/*
 * Read dictionary file @path (zram's way: the kernel's file reader, whole
 * file, vmalloc()ed) into @params. Return: 0; -EINVAL for an empty file;
 * the reader's error.
 */
static int hzram_dict_load(const char *path, struct hzram_comp_params *params)
{
	void *buf = NULL;
	ssize_t sz;

	sz = kernel_read_file_from_path(path, 0, &buf, INT_MAX, NULL,
					READING_POLICY);
	if (sz < 0) {
		pr_err("cannot read dictionary %s: %zd\n", path, sz);
		return sz;
	}
	if (!sz) {
		vfree(buf);
		pr_err("dictionary %s is empty\n", path);
		return -EINVAL;
	}
	params->dict = buf;
	params->dict_sz = sz;
	return 0;
}

/*
 * "[priority=N] [algo=NAME] [level=L] [dict=PATH]", as zram: the
 * parameters of the algorithm at priority N (0, the primary, by default;
 * or the first with algorithm NAME), replacing those set before; before
 * init only. Beyond zram, the level and the dictionary are checked here
 * against the algorithm set at that priority (zram fails the next init
 * instead).
 */
static ssize_t algorithm_params_store(struct device *dev,
				      struct device_attribute *attr,
				      const char *buf, size_t len)
{
	struct hzram *hz = dev_to_hzram(dev);
	char *copy, *args, *param, *val, *alg = NULL, *dict = NULL;
	struct hzram_comp_params params = { .level = HZRAM_LEVEL_UNSET };
	int prio = HZRAM_PRIMARY, ret = 0;
	bool prio_given = false;
	const char *cur;

	copy = kstrndup(buf, len, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	args = skip_spaces(copy);
	while (*args) {
		args = next_arg(args, &param, &val);
		if (!val || !*val) {
			ret = -EINVAL;
			goto out;
		}
		if (!strcmp(param, "priority")) {
			prio_given = true;
			ret = kstrtoint(val, 10, &prio);
		} else if (!strcmp(param, "level")) {
			ret = kstrtoint(val, 10, &params.level);
		} else if (!strcmp(param, "algo")) {
			alg = val;
		} else if (!strcmp(param, "dict")) {
			dict = val;
		} else if (!strcmp(param, "deflate.winbits")) {
			/* Checked as zram does; hzram has no deflate. */
			int winbits;

			ret = kstrtoint(val, 10, &winbits);
		}
		if (ret)
			goto out;
	}
	down_write(&hz->init_lock);
	if (hzram_init_done(hz)) {
		ret = -EBUSY;
		goto unlock;
	}
	if (prio_given && (prio < HZRAM_PRIMARY || prio >= HZRAM_MAX_COMPS)) {
		ret = -EINVAL;
		goto unlock;
	}
	if (alg && prio_given) {
		ret = hzram_prio_check(hz, alg, prio);
	} else if (alg) {
		prio = hzram_prio_lookup(hz, alg, HZRAM_PRIMARY);
		ret = prio < 0 ? prio : 0;
	}
	if (ret)
		goto unlock;
	if (dict) {
		ret = hzram_dict_load(dict, &params);
		if (ret)
			goto unlock;
	}
	cur = hzram_prio_alg(hz, prio);
	if (cur)
		ret = hzram_comp_check(cur, &params);
	if (ret) {
		vfree(params.dict);
		goto unlock;
	}
	hzram_params_reset(hz, prio);
	hz->params[prio] = params;
unlock:
	up_write(&hz->init_lock);
out:
	kfree(copy);
	return ret ? ret : len;
}

/* The last priority set up: nothing above @prio. */
static bool hzram_prio_last(struct hzram *hz, u32 prio)
{
	u32 p;

	for (p = prio + 1; p < HZRAM_MAX_COMPS; p++)
		if (hz->recomp[p])
			return false;
	return true;
}

/*
 * Choose the pages that recompression @mode with priority @prio takes:
 * stored compressed or raw in memory (not same-filled, staged, written
 * back, chosen already, or incompressible), of the type asked, and not
 * compressed already with @prio or a higher priority. Stops early when
 * memory for the list runs out, as zram does.
 */
static void hzram_recomp_scan(struct hzram *hz, struct hzram_pp *pp, u32 mode,
			      u32 prio)
{
	unsigned long nr = hz->disksize >> PAGE_SHIFT, index;

	for (index = 0; index < nr; index++) {
		struct hzram_slot *slot = &hz->table[index];
		unsigned long flags;

		if (!hzram_pp_reserve(pp))
			break;
		hzram_slot_lock(hz, index);
		flags = slot->flags;
		if (!slot->handle ||
		    (flags & (BIT(HZRAM_SLOT_SAME) | BIT(HZRAM_SLOT_STAGED) |
			      BIT(HZRAM_SLOT_WB) | BIT(HZRAM_SLOT_PP) |
			      BIT(HZRAM_SLOT_INCOMPRESSIBLE))))
			goto next;
		if ((mode & HZRAM_RECOMP_IDLE) && !(flags & BIT(HZRAM_SLOT_IDLE)))
			goto next;
		if ((mode & HZRAM_RECOMP_HUGE) && !(flags & BIT(HZRAM_SLOT_HUGE)))
			goto next;
		if (((flags & HZRAM_PRIO_MASK) >> HZRAM_SLOT_PRIO) >= prio)
			goto next;
		hzram_pp_push(hz, pp, index, flags);
next:
		hzram_slot_unlock(hz, index);
		if (!(index % 1024)) {
			if (fatal_signal_pending(current))
				break;
			cond_resched();
		}
	}
}

/* Recompress the pages chosen, at most *@max_pages of them tried. */
static int hzram_recomp_pages(struct hzram *hz, struct hzram_pp *pp, u32 prio,
			      unsigned int threshold, u64 max_pages)
{
	const bool last = hzram_prio_last(hz, prio);
	void *buf;
	u32 index;
	int ret = 0;

	buf = (void *)__get_free_page(GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	/* Through the helper first, if it can: what it leaves, here. */
	ret = hzram_offload_recompress(hz, pp, prio, threshold, last,
				       &max_pages, buf);
	while (!ret && max_pages && hzram_pp_pop(pp, &index)) {
		ret = hzram_recompress_slot(hz, index, prio, threshold, last,
					    buf);
		if (ret < 0)
			break;
		max_pages -= ret;
		ret = 0;
		/* A killed writer lets reset and the helper's detach go on. */
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		cond_resched();
	}
	free_page((unsigned long)buf);
	return ret;
}

/*
 * "[type=idle|huge|huge_idle] [max_pages=N] [threshold=BYTES]
 * [algo=NAME] [priority=N]", as zram (Documentation/admin-guide.rst).
 */
static ssize_t recompress_store(struct device *dev,
				struct device_attribute *attr,
				const char *buf, size_t len)
{
	struct hzram *hz = dev_to_hzram(dev);
	char *copy, *args, *param, *val, *alg = NULL;
	int prio = HZRAM_SECONDARY, ret = 0;
	u64 max_pages = U64_MAX;
	unsigned int threshold = 0;
	bool prio_given = false;
	struct hzram_pp *pp;
	u32 mode = 0;

	copy = kstrndup(buf, len, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	args = skip_spaces(copy);
	while (*args) {
		args = next_arg(args, &param, &val);
		if (!val || !*val) {
			ret = -EINVAL;
			goto out;
		}
		if (!strcmp(param, "type")) {
			if (!strcmp(val, "idle"))
				mode = HZRAM_RECOMP_IDLE;
			else if (!strcmp(val, "huge"))
				mode = HZRAM_RECOMP_HUGE;
			else if (!strcmp(val, "huge_idle"))
				mode = HZRAM_RECOMP_IDLE | HZRAM_RECOMP_HUGE;
			else
				ret = -EINVAL;
		} else if (!strcmp(param, "max_pages")) {
			ret = kstrtoull(val, 10, &max_pages);
		} else if (!strcmp(param, "threshold")) {
			ret = kstrtouint(val, 10, &threshold);
		} else if (!strcmp(param, "algo")) {
			alg = val;
		} else if (!strcmp(param, "priority")) {
			prio_given = true;
			ret = kstrtoint(val, 10, &prio);
		}
		if (ret)
			goto out;
	}

	down_read(&hz->init_lock);
	if (!hzram_init_done(hz) || threshold >= hz->huge_class_size ||
	    (prio_given &&
	     (prio < HZRAM_SECONDARY || prio >= HZRAM_MAX_COMPS))) {
		ret = -EINVAL;
		goto unlock;
	}
	if (alg && prio_given) {
		ret = hzram_prio_check(hz, alg, prio);
	} else if (alg) {
		prio = hzram_prio_lookup(hz, alg, HZRAM_SECONDARY);
		ret = prio < 0 ? prio : 0;
	}
	if (!ret && !hz->recomp[prio])
		ret = -EINVAL;
	if (ret)
		goto unlock;

	pp = kzalloc(sizeof(*pp), GFP_KERNEL);
	if (!pp) {
		ret = -ENOMEM;
		goto unlock;
	}
	mutex_lock(&hz->pp_mutex);
	hzram_recomp_scan(hz, pp, mode, prio);
	ret = hzram_recomp_pages(hz, pp, prio, threshold, max_pages);
	hzram_pp_release(hz, pp);
	mutex_unlock(&hz->pp_mutex);
	kfree(pp);
unlock:
	up_read(&hz->init_lock);
out:
	kfree(copy);
	return ret ? ret : len;
}

/* recomp_stat's fields (hzram's own: zram counts none of these). */
void hzram_recomp_stat(struct hzram *hz, u64 v[HZRAM_RECOMP_NR_FIELDS])
{
	v[HZRAM_RECOMP_PAGES] = atomic64_read(&hz->stats.recomp_pages);
	v[HZRAM_RECOMP_INCOMPRESSIBLE] = atomic64_read(&hz->stats.incompressible);
	v[HZRAM_RECOMP_TRIED] = atomic64_read(&hz->stats.recomp_tried);
}

static ssize_t recomp_stat_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	u64 v[HZRAM_RECOMP_NR_FIELDS];

	hzram_recomp_stat(dev_to_hzram(dev), v);
	return sysfs_emit(buf, "%8llu %8llu %8llu\n", v[0], v[1], v[2]);
}

static DEVICE_ATTR_RW(recomp_algorithm);
static DEVICE_ATTR_WO(recompress);
static DEVICE_ATTR_WO(algorithm_params);
static DEVICE_ATTR_RO(recomp_stat);

static struct attribute *hzram_recomp_attrs[] = {
	&dev_attr_recomp_algorithm.attr,
	&dev_attr_recompress.attr,
	&dev_attr_algorithm_params.attr,
	&dev_attr_recomp_stat.attr,
	NULL,
};

const struct attribute_group hzram_recomp_group = {
	.attrs = hzram_recomp_attrs,
};
