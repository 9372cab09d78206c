/*
 * libFuzzer target for ptrace mode's reader of a CPython process's frames
 * (record/python_walk.h), whose input is the target's memory. The input is a struct
 * py_proc_cfg (the layout, addresses included) and then the memory image, mapped at BASE;
 * every other address is unreadable. The walk of thread 1 must end within a bounded number
 * of reads, and every record it writes must be one replay's parser takes whole.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "record/python_walk.h"
#include "replay/sources/python/payload.h"

#define BASE 0x10000u
/* Reads a walk may make at most: the thread search, each frame (its block, its code
 * object, its caller's owner byte) and each new code object's record (block, two
 * strings of two reads, the line table's size and bytes), with room to spare. */
#define MAX_READS (3 * 65536 + 4 * (PERF_PY_MAX_FRAMES + 1) + 8 * 128 + 16)

struct image {
	const uint8_t *b;
	size_t n;
	size_t reads;
};

static int read_image(void *arg, uint64_t addr, void *buf, size_t n)
{
	struct image *im = arg;
	if (++im->reads > MAX_READS)
		abort();
	if (addr < BASE || addr - BASE > im->n || n > im->n - (addr - BASE))
		return -1;
	memcpy(buf, im->b + (addr - BASE), n);
	return 0;
}

static int check_record(const void *payload, size_t size, void *arg)
{
	struct replay_py_payload p;
	if (replay_py_parse(payload, size, &p))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct py_proc_cfg cfg;
	if (size < sizeof(cfg))
		return 0;
	memcpy(&cfg, data, sizeof(cfg));
	struct image im = { data + sizeof(cfg), size - sizeof(cfg), 0 };
	struct rec_mem mem = { read_image, &im };
	struct rec_pyseen seen = { 0 };
	uint64_t tstate = 0;
	for (int pass = 0; pass < 2; pass++) { /* the second finds the code objects seen */
		im.reads = 0;
		rec_pywalk(&cfg, &mem, &seen, 7, 1, 1, &tstate, check_record, NULL);
	}
	rec_pyseen_free(&seen);
	err_clear();
	return 0;
}
