/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the hzram kselftests: sysfs access returning -errno,
 * device creation and removal, statistics parsing, page I/O.
 */
#ifndef HZRAM_TEST_H
#define HZRAM_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/fs.h>
#include <linux/hzram.h>

#define PAGE 4096
#define CONTROL "/sys/class/" HZRAM_CONTROL_CLASS

/* Write @val to @path in one write(2). Return: 0 or -errno. */
static inline int attr_write_path(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;
	int ret = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != strlen(val))
		ret = -EIO;
	close(fd);
	return ret;
}

/* Read @path into @buf (NUL-terminated). Return: bytes read or -errno. */
static inline int attr_read_path(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

static inline void attr_path(char *path, size_t len, int id, const char *attr)
{
	snprintf(path, len, "/sys/block/" HZRAM_DEVICE_PREFIX "%d/%s", id, attr);
}

static inline int attr_write(int id, const char *attr, const char *val)
{
	char path[128];

	attr_path(path, sizeof(path), id, attr);
	return attr_write_path(path, val);
}

static inline int attr_read(int id, const char *attr, char *buf, size_t len)
{
	char path[128];

	attr_path(path, sizeof(path), id, attr);
	return attr_read_path(path, buf, len);
}

/* Parse up to @n unsigned numbers from attribute @attr. Return: count or -errno. */
static inline int attr_read_u64s(int id, const char *attr, uint64_t *v, int n)
{
	char buf[512], *p = buf, *end;
	int ret, i;

	ret = attr_read(id, attr, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	for (i = 0; i < n; i++) {
		errno = 0;
		v[i] = strtoull(p, &end, 10);
		if (end == p || errno)
			break;
		p = end;
	}
	return i;
}

static inline uint64_t attr_u64(int id, const char *attr)
{
	uint64_t v = UINT64_MAX;

	attr_read_u64s(id, attr, &v, 1);
	return v;
}

/* mm_stat as an array indexed by enum hzram_mm_stat_field; -1 if unreadable. */
static inline int mm_stat(int id, uint64_t v[HZRAM_MM_NR_FIELDS])
{
	return attr_read_u64s(id, "mm_stat", v, HZRAM_MM_NR_FIELDS) ==
	       HZRAM_MM_NR_FIELDS ? 0 : -1;
}

static inline int io_stat(int id, uint64_t v[HZRAM_IO_NR_FIELDS])
{
	return attr_read_u64s(id, "io_stat", v, HZRAM_IO_NR_FIELDS) ==
	       HZRAM_IO_NR_FIELDS ? 0 : -1;
}

/* Create a device through hot_add. Return: its id or -errno. */
static inline int hot_add(void)
{
	char buf[32];
	int ret = attr_read_path(CONTROL "/hot_add", buf, sizeof(buf));

	return ret < 0 ? ret : atoi(buf);
}

static inline int hot_remove(int id)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", id);
	return attr_write_path(CONTROL "/hot_remove", buf);
}

static inline void dev_path(char *path, size_t len, int id)
{
	snprintf(path, len, "/dev/" HZRAM_DEVICE_PREFIX "%d", id);
}

/* Open /dev/hzramN. Return: an fd or -errno. */
static inline int dev_open(int id, int flags)
{
	char path[64];
	int fd;

	dev_path(path, sizeof(path), id);
	fd = open(path, flags);
	return fd < 0 ? -errno : fd;
}

/* pread/pwrite all of @len or fail. Return: 0 or -errno (-EIO if short). */
static inline int pio(int fd, void *buf, size_t len, off_t off, int write)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write ? pwrite(fd, (char *)buf + done, len - done, off + done)
				  : pread(fd, (char *)buf + done, len - done, off + done);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		done += n;
	}
	return 0;
}

static inline void *page_alloc(size_t pages)
{
	void *p = NULL;

	if (posix_memalign(&p, PAGE, pages * PAGE))
		return NULL;
	memset(p, 0, pages * PAGE);
	return p;
}

/* Fixed-seed pseudo-random bytes (xorshift64*). */
static inline uint64_t rnd_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static inline void rnd_fill(void *buf, size_t len, uint64_t seed)
{
	uint64_t s = seed | 1, *p = buf;
	size_t i;

	for (i = 0; i < len / 8; i++)
		p[i] = rnd_next(&s);
}

/* A page that compresses well but is not same-filled: text-like. */
static inline void text_fill(void *buf, size_t len, uint64_t seed)
{
	static const char *words[] = { "block ", "device ", "page ", "swap ",
				       "memory ", "compressed ", "kernel ", "zram " };
	uint64_t s = seed | 1;
	char *p = buf;
	size_t i = 0;

	while (i < len) {
		const char *w = words[rnd_next(&s) % 8];
		size_t n = strlen(w);

		if (n > len - i)
			n = len - i;
		memcpy(p + i, w, n);
		i += n;
	}
}

static inline int page_same_filled(const void *page)
{
	const uint64_t *w = page;
	int i;

	for (i = 1; i < PAGE / 8; i++)
		if (w[i] != w[0])
			return 0;
	return 1;
}

#endif /* HZRAM_TEST_H */
