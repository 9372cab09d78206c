/*
 * The Ruby records tally record's ptrace sampler writes (perf/interp_records.h, Ruby's
 * section): a stack per sample, and the iseqs and C method entries the stacks name. The
 * parser takes hostile bytes: every length is checked against the raw size (padded to 8
 * bytes by the kernel's and tally's writers alike, so the record's own lengths say where it
 * ends), every count against its cap.
 */
#ifndef TALLY_REPLAY_SOURCES_RUBY_PAYLOAD_H
#define TALLY_REPLAY_SOURCES_RUBY_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/interp_records.h"

/* One record, pointing into the bytes it was parsed from. */
struct replay_rb_payload {
	uint16_t type;  /* PERF_RB_STACK, PERF_RB_ISEQ or PERF_RB_CFUNC */
	uint16_t flags; /* PERF_RB_STACK_* or PERF_RB_NAME_* */
	uint32_t pid, tid; /* tid: stacks only */
	/* stack: nframes struct perf_rb_frame, innermost first, unaligned */
	uint32_t nframes;
	const uint8_t *frames;
	/* iseq: addr is the iseq; cfunc: the method entry, func its C function */
	uint64_t addr, func;
	int32_t first_lineno;
	const char *label, *path; /* UTF-8, not NUL-terminated; cfunc: label is its name */
	uint16_t label_len, path_len;
	uint32_t nlines; /* struct perf_rb_line, unaligned */
	const uint8_t *lines;
};

/* Whether raw starts with Ruby's magic. */
bool replay_rb_is_payload(const uint8_t *raw, size_t size);
/* Parses a record: 0, or -EINVAL with the message saying what is wrong ("ruby record:
 * ..."), for the caller to prefix with where it lies. */
int replay_rb_parse(const uint8_t *raw, size_t size, struct replay_rb_payload *out);
/* The i-th frame (i < p->nframes) of a parsed stack; the i-th line (i < p->nlines) of a
 * parsed iseq. */
struct perf_rb_frame replay_rb_frame_at(const struct replay_rb_payload *p, uint32_t i);
struct perf_rb_line replay_rb_line_at(const struct replay_rb_payload *p, uint32_t i);

#endif
