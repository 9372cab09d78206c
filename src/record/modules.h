/*
 * Module capture during recording: build-ids, and cache copies of what a report could not
 * reach later (see modules.c).
 */
#ifndef TALLY_RECORD_MODULES_H
#define TALLY_RECORD_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "perf/perf.h"

struct rec_module {
	char *path;
	uint8_t id[20];
	uint8_t len; /* 0: no build-id known */
};

struct rec_modules {
	struct rec_module *v;
	size_t n, cap;
};

/* An executable mapping as a PERF_RECORD_MMAP2 describes it. */
struct rec_mmap {
	uint32_t pid;
	uint64_t start, end;
	uint32_t maj, min;
	uint64_t ino;
	const char *path;
};

/* mkdir -p; 0 or a negative errno. path is restored before returning. */
int rec_mkdirs(char *path);

void rec_modules_note(struct rec_modules *m, const struct rec_mmap *mm);
/* Adds the build-ids to the file's build-id feature. */
void rec_modules_write(struct rec_modules *m, struct perf_writer *w);
void rec_modules_free(struct rec_modules *m);

#endif
