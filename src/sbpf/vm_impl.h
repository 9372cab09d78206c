/*
 * The VM's insides, shared by vm.c (setup, memory, syscall services) and interp_loops.c (the
 * dispatch loop). Not for other modules: they use vm.h.
 *
 * Regions are indexed by the top 32 bits of a VM address (region i starts at i << 32), the
 * reference's aligned layout; every region here starts at the beginning of its slot.
 */
#ifndef TALLY_SBPF_VM_IMPL_H
#define TALLY_SBPF_VM_IMPL_H

#include "base/arena.h"
#include "base/vec.h"
#include "sbpf/vm.h"

#define SBPF_NREGIONS 5

struct sbpf_region {
	uint8_t *host;
	uint64_t len;      /* bytes of host memory */
	bool writable;
	uint8_t gap_shift; /* 0, or log2 of the frame size when frames alternate with gaps */
};

struct sbpf_frame {
	uint64_t saved[4]; /* r6..r9 */
	uint64_t fp;       /* r10 */
	uint64_t ret_pc;
};

struct sbpf_vm {
	const struct sbpf_program *prog;
	struct sbpf_region regions[SBPF_NREGIONS];
	uint64_t reg[16]; /* r0..r10; 11..15 absorb out-of-range register fields */
	uint64_t pc;
	uint64_t budget;
	uint64_t remaining; /* CU left, kept exact at every syscall boundary */
	uint64_t syscall_cu; /* CU charged by syscalls themselves */
	unsigned depth;
	unsigned max_depth;
	uint64_t frame_step; /* r10 increment per call (0 with manual bumps) */
	struct sbpf_frame frames[SBPF_MAX_CALL_DEPTH];
	uint8_t *stack;
	uint64_t stack_len;
	uint8_t *heap;
	uint64_t heap_pos; /* sol_alloc_free_'s bump pointer */
	bool ran;
	struct sbpf_hooks hooks;
	bool has_hooks;
	struct tally_agent_thread *published; /* the publishing variant's pc slot */
	void *user;
	const struct sbpf_syscall *cur_sc; /* the syscall running now */
	uint64_t cur_sc_cu; /* CU left when it started (for its exit tracepoint) */
	struct sbpf_result *res; /* where a syscall error lands during a run */
	bool failed;
	VEC(char *) logs;
	uint8_t *return_data;
	size_t return_len;
	struct arena arena;
	struct sbpf_trace trace; /* the hooked loop's when the hooks bring none */
};

/* Fills res with the access violation the reference reports for [addr, addr+size). */
void sbpf_vm_access_fault(const struct sbpf_vm *vm, uint64_t addr, uint64_t size, bool store,
			  struct sbpf_result *res);

/* Host pointer for [addr, addr+size), or NULL. The interpreter's hot path. */
static inline uint8_t *sbpf_xlate(const struct sbpf_vm *vm, uint64_t addr, uint64_t size,
				  bool store)
{
	uint64_t idx = addr >> 32;
	if (__builtin_expect(idx >= SBPF_NREGIONS, 0))
		return NULL;
	const struct sbpf_region *r = &vm->regions[idx];
	uint64_t off = addr & 0xffffffffu;
	if (__builtin_expect(r->gap_shift != 0, 0)) {
		if ((off >> r->gap_shift) & 1)
			return NULL;
		uint64_t mask = ~0ull << r->gap_shift;
		off = ((off & mask) >> 1) | (off & ~mask);
	}
	if (__builtin_expect(off + size > r->len || (store && !r->writable), 0))
		return NULL;
	return r->host + off;
}

int sbpf_interp_run(struct sbpf_vm *vm);
int sbpf_interp_run_hooked(struct sbpf_vm *vm);
int sbpf_interp_run_published(struct sbpf_vm *vm);
/* What both loops call to run a syscall (cu: the meter, committed first) and to end a run;
 * out of line for their tracepoints (interp_trace.c). */
__attribute__((visibility("hidden"))) int sbpf_interp_syscall(struct sbpf_vm *vm,
							       const struct sbpf_syscall *sc,
							       uint64_t cu, uint64_t *args,
							       uint64_t *ret);
__attribute__((visibility("hidden"))) void sbpf_interp_end(struct sbpf_vm *vm, uint64_t pc,
							    uint64_t cu);

#endif
