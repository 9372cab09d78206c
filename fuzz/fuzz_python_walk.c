/*
 * libFuzzer target for ptrace mode's reader of a CPython process's frames
 * (record/python_walk.h), whose input is the target's memory. The input is a struct
 * py_proc_cfg (the layout, addresses included) and then the memory image (memory_image.h).
 * The walk of thread 1 must end within a bounded number of reads, and every record it
 * writes must be one replay's parser takes whole.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "memory_image.h"
#include "record/python_walk.h"
#include "replay/sources/python/payload.h"

/* Reads a walk may make at most: the thread search, each frame (its block, its code
 * object, its caller's owner byte) and each new code object's record (block, two
 * strings of two reads, the line table's size and bytes), with room to spare. */
#define MAX_READS (3 * 65536 + 4 * (PERF_PY_MAX_FRAMES + 1) + 8 * 128 + 16)

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
	struct memory_image im = { data + sizeof(cfg), size - sizeof(cfg), 0, MAX_READS };
	struct rec_mem mem = { memory_image_read, &im };
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
