// SPDX-License-Identifier: GPL-2.0
/*
 * swap_verify MIB [PASSES]: allocate MIB MiB of anonymous memory, fill it
 * with a pattern unique to each word, then read every word back PASSES
 * times (default 2), walking the memory in a different order each pass so
 * that pages go out to swap and come back. Exits 0 when every word was
 * right, 1 on the first wrong one (printing where), 2 on bad usage.
 *
 * Each page is 256 pseudo-random bytes followed by a repeated word, so it
 * compresses about tenfold: a compressed swap device can hold several
 * times the machine's memory of it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

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

static uint64_t word(uint64_t page, unsigned int i)
{
	return i < 32 ? mix(page * WORDS + i) : mix(page) | 1;
}

int main(int argc, char **argv)
{
	unsigned long mib, passes = 2, pages, p, pass;
	uint64_t *mem;
	unsigned int i;

	if (argc < 2 || argc > 3 || !(mib = strtoul(argv[1], NULL, 10)) ||
	    (argc == 3 && !(passes = strtoul(argv[2], NULL, 10)))) {
		fprintf(stderr, "usage: swap_verify MIB [PASSES]\n");
		return 2;
	}
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
	fflush(stdout);

	for (pass = 0; pass < passes; pass++) {
		/* Odd passes walk backwards: the oldest swapped pages first. */
		for (unsigned long k = 0; k < pages; k++) {
			p = pass & 1 ? pages - 1 - k : k;
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
