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
 *                 [--label TEXT] [--no-copy]
 *   --size     bytes per job region (default: the data file's size);
 *              job j works on [j * size, (j + 1) * size)
 *   --runtime  seconds to run (default 5); 0: one pass over each region
 *   --no-copy  a pure writer (psync): each write goes straight from the
 *              data, read into memory once, with no copy into a buffer
 *
 * Prints one JSON object: throughput (MB/s of data, 10^6 bytes), IOPS,
 * per-I/O latency percentiles (microseconds), and the CPU time of the
 * jobs' threads (user and system seconds, all jobs together).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <liburing.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_JOBS 64
#define MAX_DEPTH 256
#define MAX_SAMPLES (1u << 22)	/* latencies kept per job */

struct opts {
	const char *dev, *data, *label, *engine;
	int rand, write, uring;
	size_t bs, size, data_len;
	int jobs, iodepth, no_copy;
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
	double seconds, cpu_user, cpu_sys;
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

/* The next block of the job's region, or -1 when one pass is done. */
static long next_block(struct job *j, uint64_t *seed, size_t *next)
{
	const struct opts *o = j->o;
	size_t blocks = o->size / o->bs;

	if (o->rand)
		return rnd(seed) % blocks;
	if (!o->runtime && *next >= blocks)
		return -1;
	return (*next)++ % blocks;
}

/* Fill @buf with what device offset @off holds. */
static void fill(struct job *j, char *buf, off_t off)
{
	/* The region repeats the data file; bs divides its size. */
	memcpy(buf, j->data + off % j->o->data_len, j->o->bs);
}

static void record(struct job *j, double a, double b)
{
	if (j->ios < MAX_SAMPLES)
		j->lat_ns[j->ios] = (uint32_t)((b - a) * 1e9);
	j->ios++;
	j->bytes += j->o->bs;
}

static int run_psync(struct job *j, int fd, off_t base, double end)
{
	const struct opts *o = j->o;
	uint64_t seed = 0x9e3779b97f4a7c15ULL * (j->id + 1);
	size_t next = 0;
	const char *src;
	char *buf;
	int err = 0;

	if (posix_memalign((void **)&buf, 4096, o->bs))
		return ENOMEM;
	src = buf;
	/* Faulted in now, not during the first reads. */
	memset(buf, 0, o->bs);
	for (;;) {
		long blk = next_block(j, &seed, &next);
		off_t off = base + (off_t)blk * o->bs;
		ssize_t n;
		double a, b;

		if (blk < 0)
			break;
		if (o->write && o->no_copy)
			src = j->data + off % o->data_len;
		else if (o->write)
			fill(j, buf, off);
		a = now();
		n = o->write ? pwrite(fd, src, o->bs, off) : pread(fd, buf, o->bs, off);
		b = now();
		if (n != (ssize_t)o->bs) {
			err = n < 0 ? errno : EIO;
			break;
		}
		record(j, a, b);
		if (o->runtime && b >= end)
			break;
	}
	free(buf);
	return err;
}

/* iodepth I/Os in flight through one io_uring; each slot has a buffer. */
static int run_uring(struct job *j, int fd, off_t base, double end)
{
	const struct opts *o = j->o;
	uint64_t seed = 0x9e3779b97f4a7c15ULL * (j->id + 1);
	double started[MAX_DEPTH];
	struct io_uring ring;
	int inflight = 0, err = 0, stop = 0, slot, ret;
	size_t next = 0;
	char *bufs;

	ret = io_uring_queue_init(o->iodepth, &ring, 0);
	if (ret < 0)
		return -ret;
	if (posix_memalign((void **)&bufs, 4096, o->bs * o->iodepth)) {
		io_uring_queue_exit(&ring);
		return ENOMEM;
	}
	/*
	 * Faulted in now: a read into an untouched buffer faults it in from
	 * an io_uring worker, which may sleep there and so make io_uring
	 * start more workers, at random, which changes the throughput of
	 * a synchronous device by a third from one run to the next.
	 */
	memset(bufs, 0, o->bs * o->iodepth);
	for (slot = 0; slot < o->iodepth; slot++) {
		long blk = next_block(j, &seed, &next);
		char *buf = bufs + slot * o->bs;
		off_t off = base + (off_t)blk * o->bs;
		struct io_uring_sqe *sqe;

		if (blk < 0)
			break;
		sqe = io_uring_get_sqe(&ring);
		if (o->write) {
			fill(j, buf, off);
			io_uring_prep_write(sqe, fd, buf, o->bs, off);
		} else {
			io_uring_prep_read(sqe, fd, buf, o->bs, off);
		}
		io_uring_sqe_set_data64(sqe, slot);
		started[slot] = now();
		inflight++;
	}
	io_uring_submit(&ring);
	while (inflight) {
		struct io_uring_cqe *cqe;
		struct io_uring_sqe *sqe;
		double b;
		long blk;
		off_t off;
		char *buf;

		ret = io_uring_wait_cqe(&ring, &cqe);
		if (ret < 0) {
			err = -ret;
			break;
		}
		b = now();
		slot = io_uring_cqe_get_data64(cqe);
		if (cqe->res != (int)o->bs) {
			err = cqe->res < 0 ? -cqe->res : EIO;
			stop = 1;
		} else {
			record(j, started[slot], b);
		}
		io_uring_cqe_seen(&ring, cqe);
		inflight--;
		if (stop || (o->runtime && b >= end))
			stop = 1;
		blk = stop ? -1 : next_block(j, &seed, &next);
		if (blk < 0)
			continue;
		buf = bufs + slot * o->bs;
		off = base + (off_t)blk * o->bs;
		sqe = io_uring_get_sqe(&ring);
		if (o->write) {
			fill(j, buf, off);
			io_uring_prep_write(sqe, fd, buf, o->bs, off);
		} else {
			io_uring_prep_read(sqe, fd, buf, o->bs, off);
		}
		io_uring_sqe_set_data64(sqe, slot);
		started[slot] = now();
		inflight++;
		io_uring_submit(&ring);
	}
	io_uring_queue_exit(&ring);
	free(bufs);
	return err;
}

static void *job_fn(void *arg)
{
	struct job *j = arg;
	const struct opts *o = j->o;
	off_t base = (off_t)j->id * o->size;
	struct rusage ru;
	double t0;
	int fd;

	fd = open(o->dev, (o->write ? O_WRONLY : O_RDONLY) | O_DIRECT);
	if (fd < 0) {
		j->err = errno;
		pthread_barrier_wait(j->start);
		return NULL;
	}
	pthread_barrier_wait(j->start);
	t0 = now();
	if (o->uring)
		j->err = run_uring(j, fd, base, t0 + o->runtime);
	else
		j->err = run_psync(j, fd, base, t0 + o->runtime);
	j->seconds = now() - t0;
	if (!getrusage(RUSAGE_THREAD, &ru)) {
		j->cpu_user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6;
		j->cpu_sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
	}
	close(fd);
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
		"--bs BYTES [--jobs N] [--size BYTES] [--runtime SEC] "
		"[--engine psync|io_uring] [--iodepth N] [--label TEXT] [--no-copy]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", 1, NULL, 'd' }, { "data", 1, NULL, 'D' },
		{ "rw", 1, NULL, 'r' }, { "bs", 1, NULL, 'b' },
		{ "jobs", 1, NULL, 'j' }, { "size", 1, NULL, 's' },
		{ "runtime", 1, NULL, 't' }, { "label", 1, NULL, 'l' },
		{ "engine", 1, NULL, 'e' }, { "iodepth", 1, NULL, 'q' },
		{ "no-copy", 0, NULL, 'n' }, { NULL, 0, NULL, 0 },
	};
	struct opts o = { .jobs = 1, .runtime = 5, .label = "", .engine = "psync",
			  .iodepth = 32 };
	struct job jobs[MAX_JOBS] = {};
	pthread_t th[MAX_JOBS];
	pthread_barrier_t start;
	uint64_t ios = 0, bytes = 0, n = 0;
	uint32_t *all;
	double secs = 0, cpu_user = 0, cpu_sys = 0;
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
		case 'e': o.engine = optarg; break;
		case 'q': o.iodepth = atoi(optarg); break;
		case 'n': o.no_copy = 1; break;
		default: usage();
		}
	}
	if (!o.dev || !o.data || !o.rw || !o.bs || o.bs % 4096 || o.jobs < 1 ||
	    o.jobs > MAX_JOBS || o.runtime < 0 || o.iodepth < 1 || o.iodepth > MAX_DEPTH)
		usage();
	if (!strcmp(o.engine, "io_uring"))
		o.uring = 1;
	else if (strcmp(o.engine, "psync"))
		usage();
	if (!strcmp(o.rw, "write") || !strcmp(o.rw, "randwrite"))
		o.write = 1;
	else if (strcmp(o.rw, "read") && strcmp(o.rw, "randread"))
		usage();
	o.rand = !strncmp(o.rw, "rand", 4);
	if (o.no_copy && (!o.write || o.uring)) {
		fprintf(stderr, "blkbench: --no-copy is for psync writes\n");
		return 2;
	}

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
	/* Aligned for O_DIRECT: --no-copy writes from it. */
	if (posix_memalign((void **)&data, 4096, o.data_len))
		data = NULL;
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
		cpu_user += jobs[i].cpu_user;
		cpu_sys += jobs[i].cpu_sys;
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
	       "\"engine\":\"%s\",\"iodepth\":%d,\"ios\":%llu,\"bytes\":%llu,\"seconds\":%.3f,\"mb_per_s\":%.1f,"
	       "\"iops\":%.0f,\"lat_p50_us\":%.1f,\"lat_p99_us\":%.1f,\"no_copy\":%d,"
	       "\"cpu_user_s\":%.3f,\"cpu_sys_s\":%.3f}\n",
	       o.label, o.dev, o.rw, o.bs, o.jobs, o.engine, o.uring ? o.iodepth : 1,
	       (unsigned long long)ios,
	       (unsigned long long)bytes, secs, bytes / secs / 1e6, ios / secs,
	       n ? all[n / 2] / 1e3 : 0, n ? all[n * 99 / 100] / 1e3 : 0, o.no_copy,
	       cpu_user, cpu_sys);
	return 0;
}
