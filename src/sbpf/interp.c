/*
 * The two builds of the interpreter loop (interp_loop.h): plain, and hooked for profilers.
 */
#include <string.h>

#include <tally/trace.h>

#include "sbpf/vm_impl.h"

/* The tracepoints of both loops (see interp_loop.h), out of line: with GCC, probes inlined
 * into the hooked loop changed its register allocation enough to cost 2-3% per
 * instruction while detached (bench/sbpf/tracepoints.sh). */
#define TRACE_FN static __attribute__((noinline, cold, unused)) void
TRACE_FN trace_syscall_enter(const struct sbpf_syscall *sc, uint64_t pc, uint64_t cu)
{
	TALLY_TRACEPOINT(tally_sbpf, syscall_enter, sc->name, sc->hash, pc, cu);
}

TRACE_FN trace_syscall_exit(const struct sbpf_syscall *sc, uint64_t pc, uint64_t cu_before,
			    uint64_t cu_after, int rc)
{
	TALLY_TRACEPOINT(tally_sbpf, syscall_exit, sc->name, sc->hash, pc, cu_before, cu_after, rc);
}

TRACE_FN trace_meter_flush(uint64_t pc, uint64_t charged, uint64_t cu)
{
	TALLY_TRACEPOINT(tally_sbpf, meter_flush, pc, charged, cu);
}
#undef TRACE_FN

#define INTERP_NAME sbpf_interp_run
#define INTERP_HOOKED 0
#include "sbpf/interp_loop.h"
#undef INTERP_NAME
#undef INTERP_HOOKED

#define INTERP_NAME sbpf_interp_run_hooked
#define INTERP_HOOKED 1
#include "sbpf/interp_loop.h"
#undef INTERP_NAME
#undef INTERP_HOOKED
