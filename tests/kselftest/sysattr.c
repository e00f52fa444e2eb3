// SPDX-License-Identifier: GPL-2.0
/*
 * sysattr: read or write a sysfs attribute and report the errno exactly.
 *
 *   sysattr read FILE          print the content; exit 0
 *   sysattr write FILE VALUE   write VALUE in one write(2); exit 0
 *
 * On failure it prints the errno's name (EBUSY, EINVAL, ...) and exits 1.
 * The shell tests use it where they assert an exact errno.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int fail(void)
{
	printf("%s\n", strerrorname_np(errno));
	return 1;
}

int main(int argc, char **argv)
{
	char buf[4096];
	ssize_t n;
	int fd, wr;

	wr = argc == 4 && !strcmp(argv[1], "write");
	if (!wr && !(argc == 3 && !strcmp(argv[1], "read"))) {
		fprintf(stderr, "usage: sysattr read FILE | sysattr write FILE VALUE\n");
		return 2;
	}
	fd = open(argv[2], wr ? O_WRONLY : O_RDONLY);
	if (fd < 0)
		return fail();
	if (wr) {
		if (write(fd, argv[3], strlen(argv[3])) < 0)
			return fail();
	} else {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			fwrite(buf, 1, n, stdout);
		if (n < 0)
			return fail();
	}
	return close(fd) ? fail() : 0;
}
