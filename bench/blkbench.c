// SPDX-License-Identifier: GPL-2.0
/*
 * blkbench: direct-I/O load on a block device, with real pages as data.
 *
 * fio fills its write buffers with random or patterned bytes (a file
 * pattern is cut at 512 bytes), which tells nothing about a compressing
 * device. blkbench does what fio does for a plain psync job -- one thread
 * per job, O_DIRECT pread/pwrite, each job on its own region -- but every
 * byte it writes comes from a data file (a capture of real memory pages):
 * device offset o holds data[o % data size], so reads see the same pages.
 *
 * Usage: blkbench --dev DEV --data FILE --rw write|read|randwrite|randread
 *                 --bs BYTES [--jobs N] [--size BYTES] [--runtime SEC]
 *                 [--label TEXT]
 *   --size     bytes per job region (default: the data file's size);
 *              job j works on [j * size, (j + 1) * size)
 *   --runtime  seconds to run (default 5); 0: one pass over each region
 *
 * Prints one JSON object: throughput (MB/s of data, 10^6 bytes), IOPS and
 * per-I/O latency percentiles (microseconds).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_JOBS 64
#define MAX_SAMPLES (1u << 22)	/* latencies kept per job */

struct opts {
	const char *dev, *data, *label;
	int rand, write;
	size_t bs, size, data_len;
	int jobs;
	double runtime;
	const char *rw;
};

struct job {
	const struct opts *o;
	const char *data;
	int id;
	pthread_barrier_t *start;
	uint64_t ios, bytes;
	uint32_t *lat_ns;	/* first min(ios, MAX_SAMPLES) latencies */
	int err;
	double seconds;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static void *job_fn(void *arg)
{
	struct job *j = arg;
	const struct opts *o = j->o;
	size_t blocks = o->size / o->bs, next = 0;
	uint64_t seed = 0x9e3779b97f4a7c15ULL * (j->id + 1);
	off_t base = (off_t)j->id * o->size;
	char *buf = NULL;
	double t0, t1, end;
	int fd;

	fd = open(o->dev, (o->write ? O_WRONLY : O_RDONLY) | O_DIRECT);
	if (fd < 0 || posix_memalign((void **)&buf, 4096, o->bs)) {
		j->err = errno;
		pthread_barrier_wait(j->start);
		return NULL;
	}
	pthread_barrier_wait(j->start);
	t0 = now();
	end = t0 + o->runtime;
	for (;;) {
		size_t blk = o->rand ? rnd(&seed) % blocks : next++ % blocks;
		size_t off = blk * o->bs;	/* within the region */
		ssize_t n;
		double a, b;

		if (!o->runtime && next > blocks)
			break;
		if (o->write) {
			/* The region repeats the data file; bs divides its size. */
			memcpy(buf, j->data + (base + off) % o->data_len, o->bs);
			a = now();
			n = pwrite(fd, buf, o->bs, base + off);
		} else {
			a = now();
			n = pread(fd, buf, o->bs, base + off);
		}
		b = now();
		if (n != (ssize_t)o->bs) {
			j->err = n < 0 ? errno : EIO;
			break;
		}
		if (j->ios < MAX_SAMPLES)
			j->lat_ns[j->ios] = (uint32_t)((b - a) * 1e9);
		j->ios++;
		j->bytes += o->bs;
		if (o->runtime && b >= end)
			break;
	}
	t1 = now();
	j->seconds = t1 - t0;
	close(fd);
	free(buf);
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static size_t parse_size(const char *s)
{
	char *end;
	size_t v = strtoull(s, &end, 10);

	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end || end == s) {
		fprintf(stderr, "blkbench: bad size '%s'\n", s);
		exit(2);
	}
	return v;
}

static void usage(void)
{
	fprintf(stderr, "usage: blkbench --dev DEV --data FILE --rw write|read|randwrite|randread "
		"--bs BYTES [--jobs N] [--size BYTES] [--runtime SEC] [--label TEXT]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", 1, NULL, 'd' }, { "data", 1, NULL, 'D' },
		{ "rw", 1, NULL, 'r' }, { "bs", 1, NULL, 'b' },
		{ "jobs", 1, NULL, 'j' }, { "size", 1, NULL, 's' },
		{ "runtime", 1, NULL, 't' }, { "label", 1, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .jobs = 1, .runtime = 5, .label = "" };
	struct job jobs[MAX_JOBS] = {};
	pthread_t th[MAX_JOBS];
	pthread_barrier_t start;
	uint64_t ios = 0, bytes = 0, n = 0;
	uint32_t *all;
	double secs = 0;
	char *data;
	struct stat st;
	int c, i, fd, err = 0;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o.dev = optarg; break;
		case 'D': o.data = optarg; break;
		case 'r': o.rw = optarg; break;
		case 'b': o.bs = parse_size(optarg); break;
		case 'j': o.jobs = atoi(optarg); break;
		case 's': o.size = parse_size(optarg); break;
		case 't': o.runtime = atof(optarg); break;
		case 'l': o.label = optarg; break;
		default: usage();
		}
	}
	if (!o.dev || !o.data || !o.rw || !o.bs || o.bs % 4096 || o.jobs < 1 ||
	    o.jobs > MAX_JOBS || o.runtime < 0)
		usage();
	if (!strcmp(o.rw, "write") || !strcmp(o.rw, "randwrite"))
		o.write = 1;
	else if (strcmp(o.rw, "read") && strcmp(o.rw, "randread"))
		usage();
	o.rand = !strncmp(o.rw, "rand", 4);

	fd = open(o.data, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || !st.st_size || st.st_size % o.bs) {
		fprintf(stderr, "blkbench: %s: unreadable, empty, or not a multiple of bs\n", o.data);
		return 1;
	}
	o.data_len = st.st_size;
	if (!o.size)
		o.size = o.data_len;
	if (o.size % o.bs || o.size < o.bs) {
		fprintf(stderr, "blkbench: --size must be a multiple of --bs\n");
		return 2;
	}
	data = malloc(o.data_len);
	for (size_t done = 0; data && done < o.data_len;) {
		ssize_t r = read(fd, data + done, o.data_len - done);

		if (r <= 0) {
			fprintf(stderr, "blkbench: reading %s failed\n", o.data);
			return 1;
		}
		done += r;
	}
	close(fd);

	pthread_barrier_init(&start, NULL, o.jobs);
	for (i = 0; i < o.jobs; i++) {
		jobs[i] = (struct job){ .o = &o, .data = data, .id = i, .start = &start };
		jobs[i].lat_ns = malloc(MAX_SAMPLES * sizeof(uint32_t));
		if (!data || !jobs[i].lat_ns) {
			fprintf(stderr, "blkbench: out of memory\n");
			return 1;
		}
		pthread_create(&th[i], NULL, job_fn, &jobs[i]);
	}
	for (i = 0; i < o.jobs; i++) {
		pthread_join(th[i], NULL);
		ios += jobs[i].ios;
		bytes += jobs[i].bytes;
		if (jobs[i].seconds > secs)
			secs = jobs[i].seconds;
		if (jobs[i].err)
			err = jobs[i].err;
	}
	if (err) {
		fprintf(stderr, "blkbench: %s %s: %s\n", o.rw, o.dev, strerror(err));
		return 1;
	}

	all = malloc((ios < (uint64_t)o.jobs * MAX_SAMPLES ? ios : (uint64_t)o.jobs * MAX_SAMPLES) *
		     sizeof(uint32_t) + 1);
	for (i = 0; i < o.jobs; i++) {
		uint64_t k = jobs[i].ios < MAX_SAMPLES ? jobs[i].ios : MAX_SAMPLES;

		memcpy(all + n, jobs[i].lat_ns, k * sizeof(uint32_t));
		n += k;
	}
	qsort(all, n, sizeof(uint32_t), cmp_u32);
	printf("{\"label\":\"%s\",\"dev\":\"%s\",\"rw\":\"%s\",\"bs\":%zu,\"jobs\":%d,"
	       "\"ios\":%llu,\"bytes\":%llu,\"seconds\":%.3f,\"mb_per_s\":%.1f,"
	       "\"iops\":%.0f,\"lat_p50_us\":%.1f,\"lat_p99_us\":%.1f}\n",
	       o.label, o.dev, o.rw, o.bs, o.jobs, (unsigned long long)ios,
	       (unsigned long long)bytes, secs, bytes / secs / 1e6, ios / secs,
	       n ? all[n / 2] / 1e3 : 0, n ? all[n * 99 / 100] / 1e3 : 0);
	return 0;
}
