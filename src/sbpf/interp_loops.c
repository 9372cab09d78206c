/*
 * The three builds of the interpreter loop (interp_loop_template.inc): plain, hooked for
 * exact profilers, and publishing its pc for the agent's sampler.
 */
#include <string.h>

#include "sbpf/vm_impl.h"
#include "tally/agent.h"

#define INTERP_NAME sbpf_interp_run
#define INTERP_HOOKED 0
#include "sbpf/interp_loop_template.inc"
#undef INTERP_NAME
#undef INTERP_HOOKED

#define INTERP_NAME sbpf_interp_run_hooked
#define INTERP_HOOKED 1
#include "sbpf/interp_loop_template.inc"
#undef INTERP_NAME
#undef INTERP_HOOKED

#define INTERP_NAME sbpf_interp_run_published
#define INTERP_HOOKED 2
#include "sbpf/interp_loop_template.inc"
#undef INTERP_NAME
#undef INTERP_HOOKED
