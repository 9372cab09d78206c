/*
 * The inside of struct prof, shared by the files of src/profile only. Arrays are VECs
 * indexed by id; weights are flat arrays with nmetrics values per node or pc entry.
 */
#ifndef TALLY_PROFILE_PROF_INTERNAL_H
#define TALLY_PROFILE_PROF_INTERNAL_H

#include "base/arena.h"
#include "base/vec.h"
#include "profile/idhash.h"
#include "profile/profile.h"

struct prof_strent {
	const char *s;
	uint32_t len;
};

struct prof_i64v {
	int64_t *v;
	size_t n, cap;
};

/* A stored stack is two header slots (h, then last) and n slots of loc. */
union prof_stack_slot {
	struct {
		uint32_t n; /* frames that follow the header */
		uint32_t node;
		uint32_t pcw; /* the pc entry the stack's weight last went to, PROF_NONE */
	} h;
	struct prof_loc last; /* that entry's pc and line, to see a repeat without reading it */
	struct prof_loc loc;
};

struct prof_counter {
	uint32_t name;
	int64_t value;
};

struct prof {
	struct arena arena; /* string bytes */
	VEC(struct prof_strent) strs;
	struct idhash str_index;
	VEC(struct prof_metric) metrics;
	VEC(struct prof_module) modules;
	struct idhash module_index;
	VEC(struct prof_frame) frames;
	struct idhash frame_index;
	VEC(struct prof_node) nodes;
	struct idhash node_index;
	/* Stacks added so far, for prof_add_stack's fast path: each a header followed by a
	 * copy of the stack, so checking a hit reads one contiguous run of memory (several
	 * times faster than walking the nodes' parents); the index maps a hash of the whole
	 * stack to its header's position. */
	VEC(union prof_stack_slot) stack_store;
	struct idhash stack_index;
	struct prof_i64v self; /* nnodes * nmetrics */
	VEC(struct prof_pcw) pcws;
	struct idhash pcw_index; /* by (node, pc, line) */
	VEC(uint32_t) pcw_node;	 /* owner node of each pc entry */
	struct prof_i64v pcw_w;	 /* npcws * nmetrics */
	/* Per metric, the sum of |weight| added: while it fits in int64, every node total and
	 * every sum an output makes fits too, so those need no overflow checks. */
	struct prof_i64v abs_sum;
	VEC(struct prof_counter) counters;
	/* Threads, and the samples that were added with their thread and time (threads.c):
	 * in the order added, each with nmetrics weights in sample_w. */
	VEC(struct prof_thread) threads;
	struct idhash thread_index;
	VEC(struct prof_sample) samples;
	struct prof_i64v sample_w;
	struct prof_info info;
	uint32_t source;	 /* string id of info.source */
	bool has_weight, finished;
};

/* The pc entry of node at (pc, line), made when missing; PROF_NONE on failure. */
uint32_t prof_pcw_get(struct prof *p, uint32_t node, uint64_t pc, uint32_t line);
/* prof_add_stack_kept that also says which pc entry the weight went to. */
int prof_add_stack_at(struct prof *p, const struct prof_loc *stack, size_t n,
		      const int64_t *weights, uint32_t *kept, uint32_t *pcw);
/* Appends a sample record (weights: nmetrics values) without adding weight anywhere. */
int prof_log_sample(struct prof *p, const struct prof_sample *s, const int64_t *weights);

/* Grows a flat int64 VEC to hold n values (new ones zeroed). */
int prof_grow_i64(struct prof_i64v *v, size_t n);

#endif
