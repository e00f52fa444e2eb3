// SPDX-License-Identifier: GPL-2.0
/*
 * swapbench: push several times the machine's memory through swap and
 * read it all back, timed, on real memory pages.
 *
 * Usage: swapbench MIB DATA [LABEL]
 *
 * Allocates MIB MiB of anonymous memory and fills it page by page with
 * the pages of DATA (a file of 4 KiB pages captured from real programs):
 * page p holds DATA's page p % (its pages) with its first word replaced
 * by p, so that every page is distinct and checkable. Once memory is
 * short, the fill pushes pages out to swap. Then it reads every page
 * back, in order, and checks it whole; the pages that went out come back
 * through major faults.
 *
 * Prints one JSON object: seconds for the fill (swap-out) and for the
 * read-back (swap-in), the major faults of each phase and the read-back's
 * major faults per second. Exits 1 if a page came back wrong, 2 on bad
 * usage or no memory.
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

int main(int argc, char **argv)
{
	const char *label = argc > 3 ? argv[3] : "";
	size_t mib, pages, data_pages, p;
	double t0, t1, t2;
	long f0, f1, f2;
	char *mem, *data, want[PAGE];

	if (argc < 3 || argc > 4 || !(mib = strtoul(argv[1], NULL, 10))) {
		fprintf(stderr, "usage: swapbench MIB DATA [LABEL]\n");
		return 2;
	}
	data = read_data(argv[2], &data_pages);
	if (!data)
		return 2;
	pages = mib << 8;
	mem = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 2;
	}

	f0 = majflt();
	t0 = now();
	for (p = 0; p < pages; p++)
		make_page(mem + p * PAGE, data, data_pages, p);
	t1 = now();
	f1 = majflt();
	for (p = 0; p < pages; p++) {
		make_page(want, data, data_pages, p);
		if (memcmp(mem + p * PAGE, want, PAGE)) {
			fprintf(stderr, "swapbench: page %zu came back wrong\n", p);
			return 1;
		}
	}
	t2 = now();
	f2 = majflt();
	printf("{\"label\":\"%s\",\"metric\":\"swap\",\"mib\":%zu,\"write_s\":%.3f,"
	       "\"read_s\":%.3f,\"total_s\":%.3f,\"majflt_write\":%ld,\"majflt_read\":%ld,"
	       "\"majflt_per_s\":%.0f,\"verified_pages\":%zu}\n",
	       label, mib, t1 - t0, t2 - t1, t2 - t0, f1 - f0, f2 - f1,
	       (f2 - f1) / (t2 - t1), pages);
	return 0;
}
