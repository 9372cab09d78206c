/*
 * Processes' address spaces from a recording's records (procs.h): the rules replay and
 * tally record's live unwinding share.
 */
#include "unwind/procs.h"

#include <errno.h>

struct unw_proc *unw_procs_get(struct unw_procs *p, uint32_t pid)
{
	uint32_t i = idmap_get(&p->index, pid);
	if (i != IDMAP_NONE)
		return &p->v.v[i];
	if (!vec_reserve(&p->v, 1) || idmap_put(&p->index, pid, (uint32_t)p->v.n))
		return NULL;
	struct unw_proc *e = vec_push(&p->v);
	*e = (struct unw_proc){ .pid = pid };
	return e;
}

int unw_procs_map(struct unw_ctx *c, struct unw_procs *p, uint32_t pid, uint64_t start,
		  uint64_t len, uint64_t pgoff, uint32_t prot, const char *path)
{
	if (pid == UINT32_MAX) /* the kernel's own image */
		return 0;
	struct unw_proc *e = unw_procs_get(p, pid);
	if (!e)
		return -ENOMEM;
	return unw_space_map(c, &e->space, start, start + len, pgoff, prot, path);
}

int unw_procs_exec(struct unw_procs *p, uint32_t pid)
{
	struct unw_proc *e = unw_procs_get(p, pid);
	if (!e)
		return -ENOMEM;
	unw_space_clear(&e->space);
	return 0;
}

int unw_procs_fork(struct unw_procs *p, uint32_t pid, uint32_t ppid)
{
	if (pid == ppid)
		return 0;
	struct unw_proc *child = unw_procs_get(p, pid), *parent;
	if (!child || !(parent = unw_procs_get(p, ppid)))
		return -ENOMEM;
	child = unw_procs_get(p, pid); /* the array may have moved */
	return unw_space_copy(&child->space, &parent->space);
}

void unw_procs_exit(struct unw_procs *p, uint32_t pid)
{
	uint32_t i = idmap_get(&p->index, pid);
	if (i == IDMAP_NONE)
		return;
	unw_space_clear(&p->v.v[i].space);
	idmap_del(&p->index, pid);
	if (i != p->v.n - 1) { /* the last process takes its place */
		p->v.v[i] = p->v.v[p->v.n - 1];
		idmap_put(&p->index, p->v.v[i].pid, i); /* an update after a deletion: no growth */
	}
	p->v.n--;
}

void unw_procs_free(struct unw_procs *p)
{
	for (size_t i = 0; i < p->v.n; i++)
		unw_space_clear(&p->v.v[i].space);
	vec_free(&p->v);
	idmap_free(&p->index);
}
