/* Inflates every dif of a difdump file with C zlib's uncompress(), one
 * after the other on one core, and prints the time: the floor pmdump's
 * "states" is measured against (see ../compare-zlib.sh).
 * Build: cc -O2 -o inflate inflate.c -lz */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zlib.h>

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: inflate DIFS\n");
		return 1;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *buf = malloc(n);
	if (fread(buf, 1, n, f) != (size_t)n) {
		perror("read");
		return 2;
	}
	static unsigned char out[4 << 20];
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	long pos = 0, total = 0;
	int difs = 0;
	while (pos + 4 <= n) {
		unsigned long len = buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16 | (unsigned long)buf[pos + 3] << 24;
		pos += 4;
		uLongf outlen = sizeof out;
		if (uncompress(out, &outlen, buf + pos, len) != Z_OK) {
			fprintf(stderr, "dif %d does not inflate\n", difs);
			return 1;
		}
		total += outlen;
		pos += len;
		difs++;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.3f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
	fprintf(stderr, "C zlib: %d difs, %ld bytes inflated\n", difs, total);
	return 0;
}
