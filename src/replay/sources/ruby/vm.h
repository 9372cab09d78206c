/*
 * What the native frames of a Ruby sample are to the splice (source.c): activations of
 * rb_vm_exec (exported by libruby: each runs the Ruby frames from one entered from C, the
 * VM_FRAME_FLAG_FINISH frame, inwards), and the function a frame is in, by the start of
 * its CFI entry (libruby is stripped: its static functions have no symbol, but every
 * function has an FDE), so that the native frame of a C method's function is found.
 */
#ifndef TALLY_REPLAY_SOURCES_RUBY_VM_H
#define TALLY_REPLAY_SOURCES_RUBY_VM_H

#include <stdbool.h>
#include <stdint.h>

#include "base/vec.h"
#include "unwind/unwind.h"

/* A module: where rb_vm_exec lies (lo == hi: it has none), and its FDEs' starts and ends
 * sorted by start (read when first asked). Module-relative (ELF vaddr). */
struct replay_rb_module {
	const struct unw_module *mod;
	uint64_t lo, hi;
	bool fdes_read;
	VEC(uint64_t) fde_start;
	VEC(uint64_t) fde_end;
};

struct replay_rb_vm_index {
	VEC(struct replay_rb_module *) mods;
};

/* Whether frame i of frames (0: the sampled pc; the others return addresses) lies in
 * rb_vm_exec. -ENOMEM with the message set, else 0 and *yes. */
int replay_rb_vm_exec_frame(struct replay_rb_vm_index *x, const struct unw_frame *frames,
			    size_t i, bool *yes);
/* Whether frame i lies in the function that starts at func (an address in the process):
 * by its module's CFI. -ENOMEM with the message set, else 0 and *yes. */
int replay_rb_in_function(struct replay_rb_vm_index *x, const struct unw_frame *frames,
			  size_t i, uint64_t func, bool *yes);
void replay_rb_vm_index_free(struct replay_rb_vm_index *x);

#endif
