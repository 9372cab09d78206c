/*
 * Named frames: what a sample's unwound frames become once frame sources (sources/) and
 * the kernel's symbols have named them, outermost first, and the stack they are pushed
 * onto while they are named. A frame's kind is the profile model's, so a source of a new
 * kind of code needs nothing here.
 */
#ifndef TALLY_REPLAY_FRAMES_H
#define TALLY_REPLAY_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "replay/unwound.h"

struct replay_sym_frame {
	enum prof_kind kind;  /* PROF_INLINE: inlined into the frame before it; PROF_JIT: its
			       * module is the file that named it; PROF_PYTHON: the interpreter
			       * that ran it; PROF_VM (an agent's VM frame): addr is the VM's pc */
	const char *function; /* NULL when unknown; "[truncated]", "[plt]" */
	const char *file;     /* source file, NULL when unknown */
	uint32_t line;
	const char *module;   /* path as mapped; NULL when in no file */
	const char *build_id; /* the module's build-id in hex, NULL or "" when unknown */
	uint64_t addr;        /* module-relative pc (return addresses as found), 0 unknown */
	uint64_t pc;          /* the runtime address */
	uint64_t sym_start;   /* module-relative start of the function, 0 unknown */
	uint32_t first_line;  /* a Python frame's co_firstlineno, 0 unknown */
};

struct replay_sym_stack {
	const struct replay_stack *raw;
	const struct replay_sym_frame *frames; /* outermost first: [truncated], user, kernel */
	size_t n;
	const char *comm;
	/* The same for samples whose frames are the same (frames is then the same pointer,
	 * valid until the replay ends): 1, 2, ...; 0 when not known. */
	uint32_t id;
	/* Whether the sampled thread held its interpreter's lock, as a source read it at
	 * the sample (PROF_GIL_UNKNOWN: none did). */
	enum prof_gil gil;
};

struct replay_frames; /* the stack being named, outermost frame first */

/* A new frame of kind at the inner end of out, zeroed but for kind; NULL when the stack is
 * full (4096 frames: what does not fit is left out). Its strings must live as long as the
 * namer. */
struct replay_sym_frame *replay_frames_push(struct replay_frames *out, enum prof_kind kind);

#endif
