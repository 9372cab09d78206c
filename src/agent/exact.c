/*
 * Exact mode: each interpreter thread's enter/exit/cost reports build a calling-context
 * tree with profile's event builder (prof_cct, the engine the sBPF CU profiler uses), keyed
 * by function id; at stop every thread's tree goes into one profile, each node a VM frame
 * of its registered function below its caller at the call-site pc, each cost at its pc and
 * the line the function's line table gives, written as pprof (atomically).
 */
#include "agent/agent_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/err.h"
#include "profile/profile.h"
#include "report/report.h"

int agent_exact_thread_init(struct agent_thread *t)
{
	t->exact_rc = 0;
	return prof_cct_new(&t->cct);
}

void agent_exact_thread_free(struct agent_thread *t)
{
	prof_cct_free(t->cct);
	t->cct = NULL;
}

void agent_exact_thread_retire(struct agent_thread *t)
{
	struct tally_agent *a = t->agent;
	if (!t->cct)
		return;
	struct prof_cct **slot = vec_push(&a->done_cct);
	if (!slot || t->exact_rc) {
		a->exact_rc = a->exact_rc ? a->exact_rc : t->exact_rc ? t->exact_rc : -ENOMEM;
		agent_exact_thread_free(t);
		return;
	}
	*slot = t->cct;
	t->cct = NULL;
}

/* The first failure sticks: a tree that missed an event is not written as if exact. */
static int failed(struct agent_thread *t, int rc)
{
	if (!t->exact_rc)
		t->exact_rc = rc;
	return rc;
}

int tally_agent_enter(struct tally_agent_thread *pub, uint32_t function, uint64_t call_pc)
{
	struct agent_thread *t = (struct agent_thread *)pub;
	if (!t->cct)
		return err_set(-EINVAL, "agent: exact mode is off");
	int rc = prof_cct_enter(t->cct, function, call_pc);
	if (rc == 1) {
		const struct agent_fn *f = agent_fn_get(t->agent, function);
		if (!f)
			return failed(t, err_set(-ENOENT, "agent: no function %u registered", function));
		rc = prof_cct_span(t->cct, f->start, f->end - f->start);
	}
	return rc < 0 ? failed(t, rc) : 0;
}

int tally_agent_exit(struct tally_agent_thread *pub)
{
	struct agent_thread *t = (struct agent_thread *)pub;
	if (!t->cct)
		return err_set(-EINVAL, "agent: exact mode is off");
	int rc = prof_cct_exit(t->cct);
	return rc ? failed(t, rc) : 0;
}

int tally_agent_cost(struct tally_agent_thread *pub, uint64_t pc, uint64_t cost)
{
	struct agent_thread *t = (struct agent_thread *)pub;
	if (!t->cct)
		return err_set(-EINVAL, "agent: exact mode is off");
	int rc = prof_cct_cost(t->cct, pc, cost);
	return rc ? failed(t, rc) : 0;
}

static uint32_t place_node(void *ctx, struct prof *p, uint32_t parent, uint64_t parent_key,
			   uint64_t key, uint64_t call_pc)
{
	const struct tally_agent *a = ctx;
	uint32_t frame = agent_fn_frame(p, agent_fn_get(a, (uint32_t)key));
	if (frame == PROF_NONE)
		return PROF_NONE;
	const struct agent_fn *caller =
		parent_key == PROF_CCT_NO_KEY ? NULL : agent_fn_get(a, (uint32_t)parent_key);
	return prof_child(p, parent, frame, call_pc, caller ? agent_fn_line(caller, call_pc) : 0);
}

static uint32_t place_pc(void *ctx, struct prof *p, uint32_t node, uint64_t key, uint64_t pc,
			 uint64_t *addr, uint32_t *line)
{
	const struct agent_fn *f = agent_fn_get(ctx, (uint32_t)key);
	*addr = pc;
	*line = f ? agent_fn_line(f, pc) : 0;
	return node;
}

static int build(struct tally_agent *a, struct prof **out)
{
	struct prof *p;
	int rc = prof_new(&p);
	if (rc)
		return rc;
	int metric = rc = prof_add_metric(p, a->o.exact_metric, "count");
	if (rc >= 0)
		rc = prof_set_source(p, "agent: exact");
	struct prof_cct_place place = { a, place_node, place_pc };
	for (size_t i = 0; !rc && i < a->done_cct.n; i++)
		rc = prof_cct_build(a->done_cct.v[i], p, metric, &place);
	for (uint32_t i = 0; !rc && i < a->o.max_threads; i++) {
		const struct agent_thread *t = &a->threads[i];
		if (t->state == THREAD_ACTIVE && t->cct)
			rc = t->exact_rc ? t->exact_rc : prof_cct_build(t->cct, p, metric, &place);
	}
	if (!rc)
		rc = prof_finish(p);
	if (rc) {
		prof_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int agent_exact_write(struct tally_agent *a)
{
	if (a->exact_rc)
		return err_set(a->exact_rc, "agent: an exact hook failed; no exact profile written");
	struct prof *p = NULL;
	char *path = agent_path(a->o.exact_output, getpid());
	struct afile *f = NULL;
	int rc = path ? build(a, &p) : -ENOMEM;
	if (!rc && !(rc = afile_open(path, 0, &f))) {
		/* commit frees f whether it succeeds or not */
		rc = rep_pprof(afile_stream(f), p);
		if (rc)
			afile_abort(f);
		else
			rc = afile_commit(f);
	}
	if (rc && path)
		err_prefix(rc, "%s", path);
	prof_free(p);
	free(path);
	return rc;
}
