/*
 * The CU profiler as the Solana runtime's observer (runtime_watch.h): depth 1 starts the
 * profiler on the instruction's program, deeper programs enter and leave it as CPI.
 */
#include "cuprof/runtime_watch.h"

#include <errno.h>
#include <string.h>

#include "base/err.h"
#include "cuprof/profiler.h"

static int program_start(void *ctx, const struct sol_program *p, unsigned depth,
			 const struct sbpf_hooks **hooks)
{
	struct cuprof_watch *w = ctx;
	int rc;
	if (depth > 1)
		rc = cuprof_enter_program(w->pr, p->prog, p->name, p->path);
	else if ((rc = cuprof_new(p->prog, &w->pr)))
		rc = err_set(rc, "out of memory");
	if (!rc)
		*hooks = cuprof_hooks(w->pr);
	return rc;
}

static int program_end(void *ctx, unsigned depth)
{
	struct cuprof_watch *w = ctx;
	return depth > 1 ? cuprof_exit_program(w->pr) : 0;
}

/* A builtin at depth 1 is the instruction's program, which the profiler refuses. */
static int builtin_run(void *ctx, const char *name, unsigned depth, uint64_t cu)
{
	struct cuprof_watch *w = ctx;
	return depth > 1 && w->pr ? cuprof_builtin(w->pr, name, cu) : 0;
}

/* An instruction that never ran its program still gets its (empty) profile. */
static int instruction_end(void *ctx, const struct sol_program *top, uint64_t cu)
{
	struct cuprof_watch *w = ctx;
	int rc = w->pr ? 0 : cuprof_new(top->prog, &w->pr);
	if (rc)
		return err_set(rc, "out of memory");
	rc = cuprof_build(w->pr, top->path, cu, &w->profile);
	cuprof_watch_release(w);
	return rc;
}

void cuprof_watch_init(struct cuprof_watch *w)
{
	memset(w, 0, sizeof(*w));
	w->observer = (struct sol_observer){
		.ctx = w,
		.program_start = program_start,
		.program_end = program_end,
		.builtin_run = builtin_run,
		.instruction_end = instruction_end,
	};
}

void cuprof_watch_release(struct cuprof_watch *w)
{
	cuprof_free(w->pr);
	w->pr = NULL;
}
