/*
 * Module capture during recording: build-ids, and cache copies of what a report could not
 * reach later (see modules.c).
 */
#ifndef TALLY_RECORD_MODULES_H
#define TALLY_RECORD_MODULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/perf.h"
#include "record/record.h"

struct rec_module {
	char *path;
	uint8_t id[20];
	uint8_t len; /* 0: no build-id known */
};

/* Ownership: the paths; rec_modules_free releases everything. Zeroed: empty. */
struct rec_modules {
	struct rec_module *v; /* a VEC (base/vec.h) */
	size_t n, cap;
	uint32_t *slots;      /* by path hash: index + 1 into v, 0 free; nslots a power of 2 */
	size_t nslots;
	uint64_t dropped;     /* files not held: REC_MODULES_MAX were (record.h) */
};

/* An executable mapping as a PERF_RECORD_MMAP2 describes it. */
struct rec_mmap {
	uint32_t pid;
	uint64_t start, end;
	uint32_t maj, min;
	uint64_t ino;
	const char *path;
	uint64_t pgoff;
};

/* Whether record rec (size bytes, header first) is an MMAP2 of an executable mapping
 * with its path whole: then *mm describes it, its path pointing into rec. */
bool rec_mmap_of(const void *rec, size_t size, struct rec_mmap *mm);

void rec_modules_note(struct rec_modules *m, const struct rec_mmap *mm);
/* Adds the build-ids to the file's build-id feature, the kernel's among them; with
 * kallsyms its symbols are kept in the build-id cache too (perf_kallsyms_save: once a
 * recording is enough, as the kernel is the same). */
void rec_modules_write(struct rec_modules *m, struct perf_writer *w, bool kallsyms);
/* Stores the compressed separate debug files of the modules in the debug cache
 * (elf_debug_cache_store), so that the first report of the recording does not inflate
 * them: perf record fills its build-id cache at the same point. */
void rec_modules_cache_debug(const struct rec_modules *m);
void rec_modules_free(struct rec_modules *m);

#endif
