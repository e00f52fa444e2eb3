// SPDX-License-Identifier: GPL-2.0
/* Class attribute methods take const pointers (6.4). */
#include <linux/device.h>

static ssize_t hzram_probe_show(const struct class *class,
				const struct class_attribute *attr, char *buf)
{
	return 0;
}

static ssize_t hzram_probe_store(const struct class *class,
				 const struct class_attribute *attr,
				 const char *buf, size_t count)
{
	return count;
}

static struct class_attribute hzram_probe_attr __maybe_unused = {
	.show	= hzram_probe_show,
	.store	= hzram_probe_store,
};
