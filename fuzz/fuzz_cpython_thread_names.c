/*
 * libFuzzer target: the walk to Python's thread names in another process's memory
 * (cpython/thread_names.c). The input is a version (its first byte: 3.8 ... 3.13) and the
 * memory, mapped at 0x100000 with _PyRuntime at its start; every read outside it fails, as
 * process_vm_readv's would. The layout is tally's table of the version (3.13: 3.12's
 * offsets, 3.13's object facts). Names found must be NUL-terminated, non-empty and as many
 * as asked at most. The seeds (a sys.modules with threading, whose _active holds two
 * Threads, per version; one with none) come from fuzz/corpus/cpython_thread_names/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/layout_table.h"
#include "cpython/thread_names.h"

#define BASE 0x100000u

struct image {
	const uint8_t *data;
	size_t size;
};

static int read_image(void *arg, uint64_t addr, void *buf, size_t n)
{
	const struct image *m = arg;
	if (addr < BASE || addr - BASE > m->size || m->size - (addr - BASE) < n)
		return -1;
	memcpy(buf, m->data + (addr - BASE), n);
	return 0;
}

static const struct {
	uint32_t version_hex, variant;
} versions[] = {
	{ 0x030800f0, CPY_VARIANT_38 },  { 0x030900f0, CPY_VARIANT_39 },
	{ 0x030a00f0, CPY_VARIANT_310 }, { 0x030b00f0, CPY_VARIANT_311 },
	{ 0x030c00f0, CPY_VARIANT_312 }, { 0x030d00f0, CPY_VARIANT_313 },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || data[0] >= sizeof(versions) / sizeof(versions[0]))
		return 0;
	struct cpy_layout l = { .sz = sizeof(l) };
	uint32_t v = versions[data[0]].version_hex;
	if (cpy_layout_table(v == 0x030d00f0 ? 0x030c00f0 : v, &l))
		abort();
	l.version_hex = v;
	l.variant = versions[data[0]].variant;
	struct image m = { data + 1, size - 1 };
	struct cpy_threading t;
	if (cpy_threading_find(&l, BASE, read_image, &m, &t))
		return 0;
	struct cpy_thread_name names[4];
	int n = cpy_thread_names(&l, &t, read_image, &m, names, 4);
	if (n > 4)
		abort();
	for (int i = 0; i < n; i++)
		if (!memchr(names[i].name, 0, sizeof(names[i].name)) || !names[i].name[0])
			abort();
	return 0;
}
