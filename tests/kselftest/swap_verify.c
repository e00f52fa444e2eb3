// SPDX-License-Identifier: GPL-2.0
/*
 * swap_verify [-r] [-p [-w FILE]] MIB [PASSES [DATA]]: allocate MIB MiB of anonymous
 * memory, fill it, then read every word back PASSES times (default 2),
 * walking the memory in a different order each pass so that pages go out
 * to swap and come back. Exits 0 when every word was right, 1 on the first
 * wrong one (printing where), 2 on bad usage.
 *
 * The first pass walks forwards, from the pages written first: with more
 * memory than fits, each page it brings back pushes out one it has yet to
 * read, so every page goes out to swap and comes back once more. With -r
 * it walks backwards, from the pages still in memory: only the pages that
 * were swapped out come back, once each, for about a third of the swap
 * traffic.
 *
 * With -p, once written the memory is paged out at once
 * (madvise(MADV_PAGEOUT)), without memory pressure: each page goes to swap
 * once and comes back at the first pass. With -w FILE it then creates FILE
 * and waits until it is gone before reading anything back, so that a test
 * can act on the swapped-out pages (write them back, say) meanwhile.
 *
 * By default each page is 256 pseudo-random bytes (unique to each word)
 * followed by a repeated word, so it compresses about tenfold: a
 * compressed swap device can hold several times the machine's memory of
 * it. With DATA, a file of pages, page p holds the file's page
 * p % (its pages) instead: real memory, at its real compression ratio.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define PAGE 4096
#define WORDS (PAGE / 8)

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static const uint64_t *data;	/* DATA mapped, or NULL */
static unsigned long data_pages;

static uint64_t word(uint64_t page, unsigned int i)
{
	if (data)
		return data[(page % data_pages) * WORDS + i];
	return i < 32 ? mix(page * WORDS + i) : mix(page) | 1;
}

static int map_data(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) || st.st_size < PAGE) {
		perror(path);
		return -1;
	}
	data_pages = st.st_size / PAGE;
	/* Kept in memory while it is the reference: locked. */
	data = mmap(NULL, data_pages * PAGE, PROT_READ, MAP_PRIVATE | MAP_POPULATE | MAP_LOCKED,
		    fd, 0);
	close(fd);
	if (data == MAP_FAILED) {
		perror("mmap DATA");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long mib, passes = 2, pages, p, pass, reverse = 0, pageout = 0;
	const char *wait_file = NULL;
	uint64_t *mem;
	unsigned int i;

	for (; argc > 1 && argv[1][0] == '-' && argv[1][1] && !argv[1][2]; argc--, argv++) {
		if (argv[1][1] == 'r') {
			reverse = 1;
		} else if (argv[1][1] == 'p') {
			pageout = 1;
		} else if (argv[1][1] == 'w' && argc > 2) {
			wait_file = argv[2];
			argc--, argv++;
		} else {
			break;
		}
	}
	if (argc < 2 || argc > 4 || !(mib = strtoul(argv[1], NULL, 10)) ||
	    (argc >= 3 && !(passes = strtoul(argv[2], NULL, 10))) ||
	    (wait_file && !pageout)) {
		fprintf(stderr, "usage: swap_verify [-r] [-p [-w FILE]] MIB [PASSES [DATA]]\n");
		return 2;
	}
	if (argc == 4 && map_data(argv[3]))
		return 2;
	pages = mib << 8;
	mem = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	for (p = 0; p < pages; p++)
		for (i = 0; i < WORDS; i++)
			mem[p * WORDS + i] = word(p, i);
	printf("swap_verify: wrote %lu MiB\n", mib);
	if (pageout) {
		if (madvise(mem, pages * PAGE, MADV_PAGEOUT)) {
			perror("madvise(MADV_PAGEOUT)");
			return 2;
		}
		printf("swap_verify: paged out %lu MiB\n", mib);
	}
	fflush(stdout);
	if (wait_file) {
		const struct timespec tick = { 0, 10 * 1000 * 1000 };
		int fd = open(wait_file, O_WRONLY | O_CREAT | O_EXCL, 0600);

		if (fd < 0) {
			perror(wait_file);
			return 2;
		}
		close(fd);
		while (access(wait_file, F_OK) == 0)
			nanosleep(&tick, NULL);
	}

	for (pass = 0; pass < passes; pass++) {
		/* Odd passes walk backwards (even ones with -r). */
		for (unsigned long k = 0; k < pages; k++) {
			p = (pass ^ reverse) & 1 ? pages - 1 - k : k;
			for (i = 0; i < WORDS; i++) {
				if (mem[p * WORDS + i] != word(p, i)) {
					printf("swap_verify: pass %lu: page %lu word %u: %#llx, want %#llx\n",
					       pass, p, i,
					       (unsigned long long)mem[p * WORDS + i],
					       (unsigned long long)word(p, i));
					return 1;
				}
			}
		}
		printf("swap_verify: pass %lu: %lu MiB verified\n", pass + 1, mib);
		fflush(stdout);
	}
	return 0;
}
