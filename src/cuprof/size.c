/*
 * Static instruction counts per function and inline frame (see size.h): every instruction
 * of the text is one unit of weight at its pc, in the innermost frame that holds it.
 */
#include "cuprof/size.h"

#include <stdio.h>

#include "cuprof/frames.h"
#include "profile/profile.h"
#include "sbpf/program.h"

static int add_insns(struct cuprof_frames *s, const struct sbpf_program *prog)
{
	int64_t one = 1;
	for (uint64_t pc = 0; pc < prog->ninsns; pc++) {
		uint32_t fn = cuprof_frames_function(s, pc);
		uint32_t node = fn == PROF_NONE ? PROF_NONE : prof_child(s->p, PROF_ROOT, fn, 0, 0);
		uint32_t line;
		uint32_t at = node == PROF_NONE ? PROF_NONE : cuprof_frames_inline_node(s, node, pc, &line);
		if (at == PROF_NONE || prof_add_self(s->p, at, cuprof_frames_addr(s, pc), line, &one))
			return -1;
		if (prog->code[pc].kind == SBPF_K_LDDW)
			pc++;
	}
	return 0;
}

int cuprof_size_profile(const struct sbpf_program *prog, const char *path, struct prof **out)
{
	struct prof *p;
	int rc = prof_new(&p);
	if (rc)
		return rc;
	char source[512];
	snprintf(source, sizeof(source), "sbpf size: %s", path ? path : prog->name);
	struct cuprof_frames s;
	if ((rc = prof_add_metric(p, "instructions", "count")) < 0 ||
	    (rc = prof_set_source(p, source)) || (rc = cuprof_frames_init(&s, prog, path, p)))
		goto fail;
	rc = add_insns(&s, prog);
	cuprof_frames_free(&s);
	if (rc || (rc = prof_finish(p)))
		goto fail;
	*out = p;
	return 0;
fail:
	prof_free(p);
	return rc < 0 ? rc : -1;
}
