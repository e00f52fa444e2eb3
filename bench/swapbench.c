// SPDX-License-Identifier: GPL-2.0
/*
 * swapbench: push several times the machine's memory through swap and
 * read it all back, timed, on real memory pages.
 *
 * Usage: swapbench MIB DATA [LABEL [PASSES]]
 *
 * Pushes MIB MiB of anonymous memory through swap in PASSES passes
 * (default 1), each over a fresh mapping of MIB / PASSES MiB: the pass
 * fills it page by page with the pages of DATA (a file of 4 KiB pages
 * captured from real programs), reads every page back in order, checks
 * it whole, and unmaps it (swap frees its slots). Page p of the run (p
 * counts on across passes) holds DATA's page p % (its pages) with its
 * first word replaced by p, so that every page is distinct and
 * checkable. Once memory is short, the fill pushes pages out to swap;
 * the pages that went out come back through major faults. Passes let a
 * run move more through swap than the device could hold at once: these
 * pages compress to about a third, so three times the memory does not
 * fit in it compressed, but two passes of one and a half do.
 *
 * Prints one JSON object: seconds for the fills (swap-out) and for the
 * read-backs (swap-in), the major faults of each and the read-backs'
 * major faults per second, all passes together. Exits 1 if a page came
 * back wrong, 2 on bad usage or no memory.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long majflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_majflt;
}

static char *read_data(const char *path, size_t *pages)
{
	struct stat st;
	size_t len, done = 0;
	char *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) || st.st_size < PAGE) {
		perror(path);
		return NULL;
	}
	*pages = st.st_size / PAGE;
	len = *pages * PAGE;
	buf = malloc(len);
	while (buf && done < len) {
		ssize_t n = read(fd, buf + done, len - done);

		if (n <= 0) {
			perror(path);
			return NULL;
		}
		done += n;
	}
	close(fd);
	return buf;
}

static void make_page(char *dst, const char *data, size_t data_pages, uint64_t p)
{
	memcpy(dst, data + (p % data_pages) * PAGE, PAGE);
	memcpy(dst, &p, sizeof(p));
}

/*
 * One pass over @pages pages, numbered from @first: fill, read back and
 * check, unmap. Adds its seconds and major faults to @sec and @flt
 * ([0] fill, [1] read-back).
 */
static int pass(size_t pages, uint64_t first, const char *data,
		size_t data_pages, double sec[2], long flt[2])
{
	char *mem, want[PAGE];
	double t0, t1, t2;
	long f0, f1, f2;
	size_t i;

	mem = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	f0 = majflt();
	t0 = now();
	for (i = 0; i < pages; i++)
		make_page(mem + i * PAGE, data, data_pages, first + i);
	t1 = now();
	f1 = majflt();
	for (i = 0; i < pages; i++) {
		make_page(want, data, data_pages, first + i);
		if (memcmp(mem + i * PAGE, want, PAGE)) {
			fprintf(stderr, "swapbench: page %llu came back wrong\n",
				(unsigned long long)(first + i));
			return 1;
		}
	}
	t2 = now();
	f2 = majflt();
	munmap(mem, pages * PAGE);
	sec[0] += t1 - t0;
	sec[1] += t2 - t1;
	flt[0] += f1 - f0;
	flt[1] += f2 - f1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *label = argc > 3 ? argv[3] : "";
	size_t mib, passes = 1, per_pass, n;
	double sec[2] = { 0, 0 };
	long flt[2] = { 0, 0 };
	char *data;
	int ret;

	if (argc < 3 || argc > 5 || !(mib = strtoul(argv[1], NULL, 10)) ||
	    (argc > 4 && !(passes = strtoul(argv[4], NULL, 10))) ||
	    passes > (mib << 8)) {
		fprintf(stderr, "usage: swapbench MIB DATA [LABEL [PASSES]]\n");
		return 2;
	}
	data = read_data(argv[2], &n);
	if (!data)
		return 2;
	per_pass = (mib << 8) / passes;
	for (size_t k = 0; k < passes; k++) {
		ret = pass(per_pass, (uint64_t)k * per_pass, data, n, sec, flt);
		if (ret)
			return ret;
	}
	printf("{\"label\":\"%s\",\"metric\":\"swap\",\"mib\":%zu,\"passes\":%zu,"
	       "\"write_s\":%.3f,\"read_s\":%.3f,\"total_s\":%.3f,\"majflt_write\":%ld,"
	       "\"majflt_read\":%ld,\"majflt_per_s\":%.0f,\"verified_pages\":%zu}\n",
	       label, mib, passes, sec[0], sec[1], sec[0] + sec[1], flt[0], flt[1],
	       flt[1] / sec[1], per_pass * passes);
	return 0;
}
