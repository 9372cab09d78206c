/*
 * Kernel symbols for the kernel part of sampled callchains: /proc/kallsyms, or the copy of
 * it in perf's build-id cache ([kernel.kallsyms]/BUILD-ID/kallsyms, which perf record and
 * tally record write: perf/keep.h) when that copy describes the running kernel as it is
 * laid out now.
 */
#ifndef TALLY_REPLAY_KALLSYMS_H
#define TALLY_REPLAY_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/idmap.h"
#include "base/vec.h"

struct replay_ksym {
	uint64_t addr;
	const char *name; /* in the arena */
};

/* Owns the listing (mapped or read), the module table and the names handed out. */
struct replay_kallsyms {
	const char *text;
	size_t len;
	bool mapped;     /* text is a mapping of the cache copy, else malloc'd */
	size_t core_end; /* the kernel's own lines (sorted by address) end here; tagged
			  * lines ("name\t[module]") follow */
	VEC(struct replay_ksym) mods; /* text symbols of the tagged lines, sorted */
	struct idmap names;           /* line offset -> index in found */
	VEC(const char *) found;
	struct arena arena;
};

/* Finds the listing; nothing is parsed until an address is looked up. Without root (or
 * with kptr_restrict) every address reads as 0 and nothing is ever found. */
void replay_kallsyms_load(struct replay_kallsyms *k);
/* The same for a listing already in memory (malloc'd; k takes it over), of any content:
 * lines of another shape are passed over. */
void replay_kallsyms_from_text(struct replay_kallsyms *k, char *text, size_t len);
/* The text symbol at or before addr, NULL when there is none. */
const char *replay_kallsyms_find(struct replay_kallsyms *k, uint64_t addr);
void replay_kallsyms_free(struct replay_kallsyms *k);

#endif
