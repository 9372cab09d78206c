/*
 * What the Lua source needs to know of the native frames' modules: whether a module is a
 * Lua interpreter (it defines Lua's API: lua_pcallk among its symbols, exported even by a
 * stripped lua5.4), whose frames between a C function's and the next are the VM's own
 * activations, and where each of a module's functions starts (its FDEs: a stripped file's
 * only list of them), which tells the frame of a C function Lua called.
 */
#ifndef TALLY_REPLAY_SOURCES_LUA_MODULES_H
#define TALLY_REPLAY_SOURCES_LUA_MODULES_H

#include <stdbool.h>
#include <stdint.h>

#include "base/vec.h"
#include "unwind/unwind.h"

struct replay_lua_module {
	const struct unw_module *mod;
	bool interp;
	uint64_t *starts; /* FDE starts, module-relative, sorted; NULL until asked */
	size_t nstarts;
	bool starts_read;
};

/* The modules seen so far, each looked at once. Owns the tables. */
struct replay_lua_modules {
	VEC(struct replay_lua_module) v;
};

/* The module of frame fr (NULL: out of memory). */
struct replay_lua_module *replay_lua_module_of(struct replay_lua_modules *x,
					       const struct unw_module *mod);
/* Whether frame i (0: the sampled pc, others return addresses) of frames lies in a function
 * that starts at the runtime address entry. */
bool replay_lua_frame_starts_at(struct replay_lua_modules *x, const struct unw_frame *frames,
				size_t i, uint64_t entry);
void replay_lua_modules_free(struct replay_lua_modules *x);

#endif
