/*
 * heap_on_huge_pages (base/bulk.h), as the kernel reports it in /proc/self/smaps: a part of
 * [heap] of the requested size is marked for huge pages ("hg" in VmFlags), starts on a
 * 2 MiB boundary and holds no page yet (a page touched before the madvise would keep its
 * 2 MiB on small pages), blocks allocated later land in it, and, where the kernel gives
 * huge pages on request, they are on huge pages. It has its own binary: the call must come
 * before the heap grows, so main() makes it before cmocka allocates anything.
 */
#include <fcntl.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/bulk.h"

#define HUGE ((uintptr_t)2 << 20)
#define ROOM ((size_t)64 << 20)

#if defined(__SANITIZE_ADDRESS__)
#define BRK_HEAP 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BRK_HEAP 0
#endif
#endif
#ifndef BRK_HEAP
#define BRK_HEAP 1 /* glibc's malloc: the heap grows with brk */
#endif

struct heap_part {
	uintptr_t lo, hi;
	unsigned long rss_kb, huge_kb;
	bool hg;
};

/* The parts of [heap] in smaps, in address order; returns how many (at most max). Read
 * with read(2) into static memory: stdio's buffers would come from the heap under test. */
static size_t heap_parts(struct heap_part *v, size_t max)
{
	static char text[1 << 20];
	size_t len = 0;
	int fd = open("/proc/self/smaps", O_RDONLY);
	for (ssize_t k = 1; fd >= 0 && k > 0 && len < sizeof(text) - 1; len += (size_t)k)
		if ((k = read(fd, text + len, sizeof(text) - 1 - len)) < 0)
			k = 0;
	if (fd >= 0)
		close(fd);
	text[len] = 0;
	size_t n = 0;
	struct heap_part *cur = NULL;
	for (char *line = text, *next; *line; line = next) {
		next = strchr(line, '\n');
		next = next ? (*next = 0, next + 1) : line + strlen(line);
		unsigned long lo, hi, kb;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			cur = strstr(line, "[heap]") && n < max ? &v[n++] : NULL;
			if (cur)
				*cur = (struct heap_part){ .lo = lo, .hi = hi };
		} else if (cur && sscanf(line, "Rss: %lu kB", &kb) == 1) {
			cur->rss_kb = kb;
		} else if (cur && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1) {
			cur->huge_kb = kb;
		} else if (cur && !strncmp(line, "VmFlags:", 8)) {
			cur->hg = strstr(line, " hg") != NULL;
		}
	}
	return n;
}

static const struct heap_part *marked(const struct heap_part *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].hg)
			return &v[i];
	return NULL;
}

/* The heap as heap_on_huge_pages left it, read before cmocka allocated anything. */
static struct heap_part at_start[8];
static size_t nat_start;

static void room_is_marked_aligned_and_untouched(void **state)
{
	(void)state;
	const struct heap_part *h = marked(at_start, nat_start);
	if (!BRK_HEAP) {
		assert_null(h); /* a sanitizer's malloc: nothing to mark */
		return;
	}
	assert_non_null(h);
	assert_int_equal(h->lo % HUGE, 0);
	assert_int_equal(h->hi % HUGE, 0);
	assert_true(h->hi - h->lo >= ROOM - 2 * HUGE);
	assert_int_equal(h->rss_kb, 0);
}

static bool thp_on_request(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r"); /* after start */
	char buf[128] = "";
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	return strstr(buf, "[always]") || strstr(buf, "[madvise]");
}

static void later_blocks_land_in_the_room(void **state)
{
	(void)state;
	if (!BRK_HEAP)
		return;
	size_t size = (size_t)8 << 20;
	unsigned char *p = malloc(size);
	assert_non_null(p);
	memset(p, 0x5a, size);
	struct heap_part v[8];
	const struct heap_part *h = marked(v, heap_parts(v, 8));
	assert_non_null(h);
	assert_true((uintptr_t)p >= h->lo && (uintptr_t)p + size <= h->hi);
	if (thp_on_request())
		assert_true(h->huge_kb >= 4096); /* 8 MiB written: two huge pages at least */
	free(p);
}

int main(void)
{
	mallopt(M_MMAP_THRESHOLD, 32 << 20); /* as the tally command sets it */
	heap_on_huge_pages(ROOM);
	nat_start = heap_parts(at_start, 8);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(room_is_marked_aligned_and_untouched),
		cmocka_unit_test(later_blocks_land_in_the_room),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
