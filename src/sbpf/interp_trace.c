/*
 * What the interpreter loops (interp_loop_template.inc) call to run a syscall and to end a
 * run, with the VM's tracepoints (docs/sbpf.md). In a file of their own so that the loops
 * compile to the same code with and without the tracepoints (-DTALLY_NO_TRACEPOINTS):
 * inlined into the hooked loop, they made GCC allocate its registers differently and the
 * byte loop ran 2-3% slower while detached; in interp_loops.c, GCC still tuned the loops'
 * register use to these functions' bodies (-fipa-ra). bench/sbpf/tracepoints.sh measures
 * what is left.
 */
#include <tally/trace.h>

#include "sbpf/vm_impl.h"

/* The instructions since the meter's last commit (vm->remaining still holds it) are
 * committed first: meter_flush. syscall_exit reads its arguments back from vm, so that
 * only vm and rc live across the call (each saved register cost a push and a pop on every
 * syscall, attached or not). */
int sbpf_interp_syscall(struct sbpf_vm *vm, const struct sbpf_syscall *sc, uint64_t cu,
			uint64_t *args, uint64_t *ret)
{
	TALLY_TRACEPOINT(tally_sbpf, meter_flush, vm->pc, vm->remaining - cu, cu);
	vm->remaining = cu;
	TALLY_TRACEPOINT(tally_sbpf, syscall_enter, sc->name, sc->hash, vm->pc, cu);
	vm->cur_sc = sc;
	vm->cur_sc_cu = cu;
	int rc = sc->fn(vm, args, ret);
	TALLY_TRACEPOINT(tally_sbpf, syscall_exit, vm->cur_sc->name, vm->cur_sc->hash, vm->pc,
			 vm->cur_sc_cu, vm->remaining, rc);
	vm->cur_sc = NULL;
	return rc;
}

void sbpf_interp_end(struct sbpf_vm *vm, uint64_t pc, uint64_t cu)
{
	TALLY_TRACEPOINT(tally_sbpf, meter_flush, pc, vm->remaining - cu, cu);
	vm->remaining = cu;
}
