/*
 * The payloads tally record's BPF program writes through bpf-output events (PERF_SAMPLE_RAW)
 * with a thread's CPython frames at a sample's instant, and the code objects they name, as
 * perf/interp_records.h lays them out (docs/python.md). The parser takes hostile bytes:
 * every length is checked against the raw size (which the kernel pads to 8 bytes, so the
 * payload's own lengths say where it ends).
 */
#ifndef TALLY_REPLAY_SOURCES_PYTHON_PAYLOAD_H
#define TALLY_REPLAY_SOURCES_PYTHON_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "perf/interp_records.h"

/* One payload, pointing into the bytes it was parsed from. */
struct replay_py_payload {
	uint16_t type;  /* PERF_PY_STACK or PERF_PY_CODE */
	uint16_t flags; /* PERF_PY_STACK_* or PERF_PY_CODE_* */
	uint32_t pid, tid; /* tid: stacks only */
	/* stack: nframes struct perf_py_frame, innermost first, unaligned (read with
	 * replay_py_frame_at) */
	uint32_t nframes;
	const uint8_t *frames;
	/* code */
	uint64_t code;
	int32_t firstlineno;
	const char *qualname, *filename; /* UTF-8, not NUL-terminated */
	uint16_t qualname_len, filename_len;
	const uint8_t *linetable; /* the raw line table, its format in flags (interp_records.h) */
	uint32_t linetable_len;
};

/* Whether the size bytes at raw start with the payload magic: the payloads of other BPF
 * programs (perf trace's, say) are none of ours. */
int replay_py_is_payload(const uint8_t *raw, size_t size);
/* Parses a payload: 0, or -EINVAL with the message saying what is wrong ("python payload:
 * ..."), for the caller to prefix with where it lies. */
int replay_py_parse(const uint8_t *raw, size_t size, struct replay_py_payload *out);
/* The i-th frame (i < p->nframes) of a parsed stack. */
struct perf_py_frame replay_py_frame_at(const struct replay_py_payload *p, uint32_t i);

#endif
