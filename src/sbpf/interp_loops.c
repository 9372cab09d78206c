/*
 * The two builds of the interpreter loop (interp_loop.inc): plain, and hooked for profilers.
 */
#include <string.h>

#include "sbpf/vm_impl.h"

#define INTERP_NAME sbpf_interp_run
#define INTERP_HOOKED 0
#include "sbpf/interp_loop.inc"
#undef INTERP_NAME
#undef INTERP_HOOKED

#define INTERP_NAME sbpf_interp_run_hooked
#define INTERP_HOOKED 1
#include "sbpf/interp_loop.inc"
#undef INTERP_NAME
#undef INTERP_HOOKED
