/*
 * The payloads tally record's BPF program writes through bpf-output events (PERF_SAMPLE_RAW)
 * with a thread's CPython frames at a sample's instant, and the code objects they name:
 * the layout is the contract of issue 14 (docs/python.md), little-endian and packed. The
 * parser takes hostile bytes: every length is checked against the raw size (which the
 * kernel pads to 8 bytes, so the payload's own lengths say where it ends).
 */
#ifndef TALLY_REPLAY_PYTHON_PAYLOAD_H
#define TALLY_REPLAY_PYTHON_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#define REPLAY_PY_MAGIC 0x31595054u /* "TPY1" */
#define REPLAY_PY_MAX_FRAMES 1024   /* TALLY_PY_MAX_FRAMES of the capture side */
#define REPLAY_PY_FRAME_SIZE 16

enum replay_py_type { REPLAY_PY_STACK = 1, REPLAY_PY_CODE = 2 };
/* Stack flags: more frames than the cap; a read failed, the stack stops there. */
#define REPLAY_PY_STACK_CUT 0x1u
#define REPLAY_PY_STACK_READ_FAILED 0x2u
/* Code flags: a string was cut. */
#define REPLAY_PY_CODE_CUT 0x1u
/* Frame flags: the first frame its _PyEval_EvalFrameDefault activation ran. */
#define REPLAY_PY_FRAME_ENTRY 0x1u

struct replay_py_frame {
	uint64_t code;  /* address of its PyCodeObject */
	int32_t lasti;  /* code-unit index of its current instruction, -1 unknown */
	uint32_t flags; /* REPLAY_PY_FRAME_* */
};

/* One payload, pointing into the bytes it was parsed from. */
struct replay_py_payload {
	enum replay_py_type type;
	uint16_t flags;
	uint32_t pid, tid; /* tid: stacks only */
	/* stack: nframes frames of REPLAY_PY_FRAME_SIZE bytes, innermost first (read with
	 * replay_py_frame_at) */
	uint32_t nframes;
	const uint8_t *frames;
	/* code */
	uint64_t code;
	int32_t firstlineno;
	const char *qualname, *filename; /* UTF-8, not NUL-terminated */
	uint16_t qualname_len, filename_len;
	const uint8_t *linetable; /* raw 3.11 co_linetable */
	uint32_t linetable_len;
};

/* Whether the size bytes at raw start with the payload magic: the payloads of other BPF
 * programs (perf trace's, say) are none of ours. */
int replay_py_is_payload(const uint8_t *raw, size_t size);
/* Parses a payload: 0, or -EINVAL with the message saying what is wrong ("python payload:
 * ..."), for the caller to prefix with where it lies. */
int replay_py_parse(const uint8_t *raw, size_t size, struct replay_py_payload *out);
/* The i-th frame (i < p->nframes) of a parsed stack. */
struct replay_py_frame replay_py_frame_at(const struct replay_py_payload *p, uint32_t i);

#endif
