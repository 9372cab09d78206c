/*
 * Internals shared by the files of src/unwind: the context, module loading, the rule cache.
 */
#ifndef TALLY_UNWIND_INTERNAL_H
#define TALLY_UNWIND_INTERNAL_H

#include "unwind/unwind.h"

/* A direct-mapped cache of CFI rows by (module, vaddr): sampled pcs repeat a lot, and running
 * the CIE and FDE programs for each step is the bulk of the cost without it. */
#define UNW_CACHE_SIZE 2048

struct unw_cache_entry {
	const struct unw_module *mod;
	uint64_t vaddr;
	int result; /* 0 or -ENOENT */
	uint64_t rules; /* bit per register whose rule is not DWARF_RULE_UNSET */
	struct dwarf_cfi_row row;
};

struct unw_expect {
	char *path;
	uint8_t id[20];
	uint8_t len;
};

struct unw_ctx {
	enum unw_method method;
	const struct unw_arch *arch;
	struct unw_expect *expects;
	size_t nexpects;
	struct unw_module **mods;
	size_t nmods, capmods;
	struct unw_cache_entry *cache;
	struct unw_stats stats;
};

struct unw_module *unw_module_get(struct unw_ctx *c, const char *path);
bool unw_module_try_debug(struct unw_module *m);
void unw_module_free(struct unw_module *m);

/* The row for vaddr in m, through the cache: 0, -ENOENT, or another negative code. *rules
 * (when not NULL): the registers the row has a rule for, so that a step visits only them. */
int unw_rule_lookup(struct unw_ctx *c, struct unw_module *m, uint64_t vaddr,
		    const struct dwarf_cfi_row **row, uint64_t *rules);

#endif
