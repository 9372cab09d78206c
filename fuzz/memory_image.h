/*
 * A target process's memory for the fuzz targets of interpreter readers (record/interp.h):
 * the input's bytes mapped at MEMORY_IMAGE_BASE, every other address unreadable, and a
 * bound on the reads one walk makes (past it the target aborts: a walk that does not end).
 */
#ifndef TALLY_FUZZ_MEMORY_IMAGE_H
#define TALLY_FUZZ_MEMORY_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MEMORY_IMAGE_BASE 0x10000u

struct memory_image {
	const uint8_t *b;
	size_t n;
	size_t reads, max_reads; /* reads is zeroed before each walk */
};

/* struct rec_mem's read over a struct memory_image. */
static inline int memory_image_read(void *arg, uint64_t addr, void *buf, size_t n)
{
	struct memory_image *im = arg;
	if (++im->reads > im->max_reads)
		abort();
	if (addr < MEMORY_IMAGE_BASE || addr - MEMORY_IMAGE_BASE > im->n ||
	    n > im->n - (addr - MEMORY_IMAGE_BASE))
		return -1;
	memcpy(buf, im->b + (addr - MEMORY_IMAGE_BASE), n);
	return 0;
}

#endif
