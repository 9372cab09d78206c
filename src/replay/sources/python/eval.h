/*
 * Which native frames are activations of CPython's eval loop, _PyEval_EvalFrameDefault:
 * each runs a run of Python frames (source.c). Found by the function's symbols in
 * the module and in its separate debug file, so that the part gcc moved out of line
 * (_PyEval_EvalFrameDefault.cold, only in .symtab) counts as the same activation.
 */
#ifndef TALLY_REPLAY_SOURCES_PYTHON_EVAL_H
#define TALLY_REPLAY_SOURCES_PYTHON_EVAL_H

#include <stdbool.h>

#include "base/vec.h"
#include "unwind/unwind.h"

#define REPLAY_EVAL_MAX_RANGES 4

/* A module and where its eval loop lies (nranges 0: it has none). */
struct replay_eval_module {
	const struct unw_module *mod;
	unsigned nranges;
	uint64_t lo[REPLAY_EVAL_MAX_RANGES], hi[REPLAY_EVAL_MAX_RANGES]; /* module-relative */
};

/* The modules seen so far, each looked at once. */
struct replay_eval_index {
	VEC(struct replay_eval_module) mods;
};

/* Whether frame i of frames (0: the sampled pc; the others return addresses) lies in the
 * eval loop. -ENOMEM with the message set, else 0 and *yes. */
int replay_eval_frame(struct replay_eval_index *x, const struct unw_frame *frames, size_t i,
		      bool *yes);
void replay_eval_index_free(struct replay_eval_index *x);

#endif
