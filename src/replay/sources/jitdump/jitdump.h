/*
 * jitdump files (jit-PID.dump, linux tools/perf/Documentation/jitdump-specification.txt):
 * what a JIT wrote about its code, read into the code it loaded (name, bytes, source lines,
 * unwinding information) and where that code lay from when (loads and moves, in time order).
 * The reader keeps the file's bytes: names, code and unwinding data point into them.
 */
#ifndef TALLY_REPLAY_SOURCES_JITDUMP_H
#define TALLY_REPLAY_SOURCES_JITDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "replay/sources/source.h"

/* One line-table entry: from code offset off on, the code is file:line. */
struct replay_jit_line {
	uint64_t off;
	const char *file;
	uint32_t line;
};

/* One piece of code a JIT_CODE_LOAD record announced. */
struct replay_jit_code {
	const char *name;
	uint64_t addr, size, index; /* where it was loaded, its length, the JIT's own id */
	const uint8_t *bytes;       /* size bytes, NULL when the record did not hold them */
	size_t line0, nlines;       /* its entries in the dump's lines, sorted by offset */
	/* The .eh_frame and .eh_frame_hdr of JIT_CODE_UNWINDING_INFO, NULL when none came. */
	const uint8_t *eh_frame, *eh_frame_hdr;
	uint64_t eh_frame_size, eh_frame_hdr_size;
};

/* The code at [start, end) from time on (until `until`, when it moved away; UINT64_MAX). */
struct replay_jit_place {
	uint64_t start, end, time, until;
	size_t code;
};

struct replay_jitdump {
	char *path;
	uint8_t *data; /* the file's bytes, owned */
	size_t size;
	bool big_endian;
	uint32_t version, elf_mach, pid;
	uint64_t timestamp, flags;
	struct replay_jit_code *codes;
	size_t ncodes;
	struct replay_jit_line *lines;
	size_t nlines;
	struct replay_jit_place *places; /* sorted by start, then time */
	size_t nplaces;
	uint64_t max_size; /* the largest place: how far back a lookup looks */
	/* The first problem met ("PATH: offset 0x1a2c: ..."), "" without one: what was read
	 * before it is kept. */
	char warning[256];
};

/* JITDUMP_FLAGS_ARCH_TIMESTAMP: the timestamps are the CPU's counter, not CLOCK_MONOTONIC. */
#define REPLAY_JITDUMP_ARCH_TIMESTAMP 1ull

/* Reads the dump at path. 0 and *out (a warning in it when the file was damaged past its
 * header), or a negative code with the message set (no file, no jitdump header). */
int replay_jitdump_read(const char *path, struct replay_jitdump **out);
/* The same on bytes in memory, which are copied; name stands for the file in messages. */
int replay_jitdump_parse(const char *name, const void *data, size_t size,
			 struct replay_jitdump **out);
void replay_jitdump_free(struct replay_jitdump *d);

/* The code at pc at time (the latest load or move before time that covers pc and has not
 * moved away); with timed false, the latest that ever covered pc. NULL for none. */
const struct replay_jit_code *replay_jitdump_find(const struct replay_jitdump *d, uint64_t pc,
						  uint64_t time, bool timed);
/* The line entry of code covering code offset off, NULL for none. */
const struct replay_jit_line *replay_jitdump_line(const struct replay_jitdump *d,
						  const struct replay_jit_code *c, uint64_t off);

/* The code of a dump for the unwinder (unwind.c): its places in time order, and how
 * many of them the unwinder has. */
struct unw_ctx;
struct unw_space;
struct replay_jit_feed {
	size_t *order; /* indexes of d->places, by time */
	size_t next;
};
int replay_jit_feed_init(struct replay_jit_feed *f, const struct replay_jitdump *d);
void replay_jit_feed_free(struct replay_jit_feed *f);
/* Gives s the code d loaded and moved up to time (with timed false: all of it), with its
 * CFI, made in c. 0, or a negative code with the message set. */
int replay_jit_feed_apply(struct replay_jit_feed *f, const struct replay_jitdump *d,
			  struct unw_ctx *c, struct unw_space *s, uint64_t time, bool timed);

/* The frame source of the dumps d's markers name (source.c): JIT frames (PROF_JIT) named
 * by the moment of the sample, whose CFI it gives the unwinder (before_unwind). out->ops is
 * NULL when d has no marker. 0, or a negative code with the message set; a dump that
 * cannot be read is a warning, not an error. */
extern const struct replay_source_type replay_jitdump_source;

#endif
