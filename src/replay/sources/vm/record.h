/*
 * Mixed mode's loop records (include/tally/agent.h, struct tally_agent_loop) read from a
 * sample's stack copy: the record, the frames it points to, each checked against its
 * agent's registry (a jitdump in the VM's pc space). source.c finds the copy, the native
 * frames and the registries' files; this part takes the bytes as hostile.
 */
#ifndef TALLY_REPLAY_SOURCES_VM_RECORD_H
#define TALLY_REPLAY_SOURCES_VM_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"
#include "replay/sources/jitdump/jitdump.h"
#include "replay/sources/vm/vm.h"

/* A stack copy: data[0] was at address base. */
struct replay_vm_copy {
	const uint8_t *data;
	uint64_t base, size;
};

/* A function of a registry, by id (the dump's code_index). */
struct replay_vm_fn {
	uint64_t id;
	const struct replay_jit_code *code;
};

/* One agent's registry in one process; dump NULL when it has none. Owns dump and fns. */
struct replay_vm_registry {
	uint32_t pid, agent;
	struct replay_jitdump *dump;
	struct replay_vm_fn *fns; /* sorted by id; a later load of an id wins */
	size_t nfns;
};

/* Indexes r->dump's functions by id. 0, or -ENOMEM with the message set. */
int replay_vm_registry_index(struct replay_vm_registry *r);
void replay_vm_registry_free(struct replay_vm_registry *r);

/* A VM frame: its function and its pc. */
struct replay_vm_frame {
	const struct replay_vm_registry *reg;
	const struct replay_jit_code *code;
	uint64_t pc;
};
typedef VEC(struct replay_vm_frame) replay_vm_frames;

/* Where the registry of an agent (by its number in the sample's process) is: 0 and *out
 * (NULL: it has none), or a negative code with the message set. */
struct replay_vm_lookup {
	int (*registry)(void *arg, uint32_t agent, const struct replay_vm_registry **out);
	void *arg;
};

/* Searches [lo, hi) of c, one native frame's part of the stack, for a loop record. When
 * one checks out, its frames are appended to *out, outermost first, and *found is set;
 * a record that fails is counted in *st by reason. 0, or a negative code (message set). */
int replay_vm_scan(const struct replay_vm_copy *c, uint64_t lo, uint64_t hi,
		   const struct replay_vm_lookup *lk, struct replay_vm_stats *st,
		   replay_vm_frames *out, bool *found);

#endif
