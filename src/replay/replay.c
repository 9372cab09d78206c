/*
 * Replay of a perf.data file: see replay.h. Each process (pid) has its own address space,
 * kept by the rules of unwind/procs.h (shared with tally record's live unwinding): a fork
 * copies the parent's, an exec empties it. Samples are unwound in time order, so each sees
 * the mappings of its moment. Samples of a bpf-output event are what a BPF program wrote at another
 * sample's instant (tally record's Python frames), not cost: they go to the side hook of
 * replay_unwind_each with the other records, never unwound nor counted.
 */
#include "replay/unwound.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/idmap.h"
#include "base/vec.h"
#include "unwind/procs.h"

struct thread_comm {
	uint32_t tid;
	char comm[REPLAY_COMM_MAX];
};

struct replay {
	struct perf_data *d;
	struct unw_ctx *ctx;
	struct idmap comm_index; /* tid -> comms.v[] */
	VEC(struct thread_comm) comms;
	struct unw_procs procs;
	int (*fn)(const struct replay_stack *st, void *arg);
	int (*side)(const struct perf_event_rec *ev, void *arg);
	void *arg;
	struct replay_info *info;
	const struct replay_unwind_hook *hook; /* NULL: none */
	struct unw_frame frames[512];
	uint64_t ips[512];
};

/* The user part of a callchain (after PERF_CONTEXT_USER), sampled ip first. */
static size_t user_chain(const struct perf_event_rec *ev, uint64_t *out, size_t max)
{
	size_t n = 0;
	bool user = false;
	for (uint64_t i = 0; i < ev->nr_callchain && n < max; i++) {
		uint64_t ip = perf_callchain_at(ev, i);
		if (ip >= PERF_CONTEXT_MAX)
			user = ip == PERF_CONTEXT_USER;
		else if (user)
			out[n++] = ip;
	}
	return n;
}

static size_t kernel_frames(const struct perf_event_rec *ev)
{
	size_t n = 0;
	bool kernel = false;
	for (uint64_t i = 0; i < ev->nr_callchain; i++) {
		uint64_t ip = perf_callchain_at(ev, i);
		if (ip >= PERF_CONTEXT_MAX) {
			kernel = ip == PERF_CONTEXT_KERNEL;
			continue;
		}
		n += kernel;
	}
	return n;
}

static const char *comm_of(const struct replay *r, uint32_t tid)
{
	uint32_t i = idmap_get(&r->comm_index, tid);
	return i == IDMAP_NONE ? "" : r->comms.v[i].comm;
}

static int set_comm(struct replay *r, uint32_t tid, const char *comm)
{
	uint32_t at = idmap_get(&r->comm_index, tid);
	struct thread_comm *t = at == IDMAP_NONE ? NULL : &r->comms.v[at];
	if (!t) {
		if (!vec_reserve(&r->comms, 1) ||
		    idmap_put(&r->comm_index, tid, (uint32_t)r->comms.n))
			return -ENOMEM;
		t = vec_push(&r->comms);
		t->tid = tid;
	}
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	return 0;
}

struct sample_stack {
	struct perf_data *d;
	const struct perf_event_rec *ev;
};

static int fetch_stack(void *arg, uint64_t need, const uint8_t **data, uint64_t *size)
{
	const struct sample_stack *s = arg;
	return perf_sample_stack(s->d, s->ev, need, data, size);
}

static int on_sample(struct replay *r, const struct perf_event_rec *ev)
{
	struct unw_proc *p = unw_procs_get(&r->procs, ev->pid);
	if (!p)
		return -ENOMEM;
	if (!p->sampled)
		r->info->processes++;
	p->sampled = true;
	r->info->samples++;
	int err = r->hook ? r->hook->before_sample(r->hook->self, r->ctx, &p->space, ev) : 0;
	if (err)
		return err;
	struct unw_regs regs;
	unw_regs_from_perf(unw_ctx_arch(r->ctx), ev->regs_abi, ev->regs_mask, ev->regs, &regs);
	struct replay_stack st = { .ev = ev, .frames = r->frames, .nkernel = kernel_frames(ev),
				.comm = comm_of(r, ev->tid) };
	size_t max = sizeof(r->frames) / sizeof(r->frames[0]);
	uint32_t note;
	bool marked = perf_sample_unwound_note(ev, &note);
	if (marked || !(ev->attr->attr.sample_type & PERF_SAMPLE_STACK_USER)) {
		/* Unwound while recording, or recorded with frame pointers only: the chain is
		 * all there is, judged as the walk that made it ended (its note; the files of
		 * tally record --stacks=unwound before it had one said so by a feature bit) or
		 * as a frame-pointer walk. */
		size_t nu = user_chain(ev, r->ips, max);
		if (marked || r->d->unwound) {
			st.n = unw_from_unwound_chain(r->ctx, &p->space, r->ips, nu,
						      marked ? &note : NULL, r->frames, max, &st.end);
			r->info->unwound_recorded++;
		} else {
			st.n = unw_from_callchain(r->ctx, &p->space, r->ips, nu, r->frames, max,
						  &st.end);
			r->info->fp_recorded++;
		}
	} else {
		/* Only the top of a file's stack copy has been read: the rest when a walk needs it. */
		struct sample_stack ss = { r->d, ev };
		struct unw_stack stack = { ev->stack, ev->stack_size, ev->stack_total, fetch_stack,
					   &ss };
		st.n = unw_unwind_stack(r->ctx, &p->space, &regs, &stack, r->frames, max, &st.end,
					&err);
		if (err)
			return err;
	}
	return r->fn(&st, r->arg);
}

static bool bpf_output_attr(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_BPF_OUTPUT;
}

bool replay_is_bpf_output(const struct perf_event_rec *ev)
{
	return ev->type == PERF_RECORD_SAMPLE && bpf_output_attr(&ev->attr->attr);
}

bool replay_has_bpf_output(const struct perf_data *d)
{
	for (size_t i = 0; i < d->nattrs; i++)
		if (bpf_output_attr(&d->attrs[i].attr))
			return true;
	return false;
}

static int on_record(struct replay *r, const struct perf_event_rec *ev)
{
	switch (ev->type) {
	case PERF_RECORD_SAMPLE:
		return on_sample(r, ev);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return unw_procs_map(r->ctx, &r->procs, ev->pid, ev->map_start, ev->map_len,
				     ev->map_pgoff, ev->map_prot, ev->filename);
	case PERF_RECORD_COMM:
		if (set_comm(r, ev->tid, ev->comm))
			return -ENOMEM;
		if ((ev->misc & PERF_RECORD_MISC_COMM_EXEC) && ev->pid == ev->tid)
			return unw_procs_exec(&r->procs, ev->pid);
		return 0;
	case PERF_RECORD_FORK:
		{
			char parent[REPLAY_COMM_MAX]; /* copied: set_comm may move the array */
			snprintf(parent, sizeof(parent), "%s", comm_of(r, ev->ptid));
			if (set_comm(r, ev->tid, parent))
				return -ENOMEM;
		}
		return unw_procs_fork(&r->procs, ev->pid, ev->ppid);
	case PERF_RECORD_LOST:
		r->info->lost += ev->lost;
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		r->info->lost_samples += ev->lost;
		return 0;
	case PERF_RECORD_THROTTLE:
		r->info->throttled++;
		return 0;
	}
	return 0;
}

static int on_event(const struct perf_event_rec *ev, void *arg)
{
	struct replay *r = arg;
	/* What a BPF program wrote at a sample's instant costs nothing of its own. */
	bool bpf = replay_is_bpf_output(ev);
	int rc = bpf ? 0 : on_record(r, ev);
	if (!rc && r->side && (bpf || ev->type != PERF_RECORD_SAMPLE))
		rc = r->side(ev, r->arg);
	return rc;
}

int replay_unwind_each(struct perf_data *d, enum unw_method method,
		       const struct replay_unwind_hook *hook,
		       int (*fn)(const struct replay_stack *st, void *arg),
		       int (*side)(const struct perf_event_rec *ev, void *arg), void *arg,
		       struct replay_info *info, struct unw_ctx **ctx_out)
{
	struct replay_info dummy;
	struct replay r = { .d = d, .fn = fn, .side = side, .arg = arg,
			    .info = info ? info : &dummy, .hook = hook };
	memset(r.info, 0, sizeof(*r.info));
	snprintf(r.info->stopped, sizeof(r.info->stopped), "%s", d->stopped);
	if (unw_ctx_new(method, &r.ctx))
		return err_set(-ENOMEM, "out of memory");
	int rc = 0;
	for (size_t i = 0; i < d->nbuild_ids && !rc; i++)
		rc = unw_ctx_expect_build_id(r.ctx, d->build_ids[i].filename, d->build_ids[i].id,
					     d->build_ids[i].len);
	if (!rc)
		rc = perf_data_each(d, on_event, &r);
	if (rc == -ENOMEM)
		err_set(rc, "%s: out of memory", d->path);
	unw_procs_free(&r.procs);
	vec_free(&r.comms);
	idmap_free(&r.comm_index);
	if (ctx_out && !rc)
		*ctx_out = r.ctx;
	else
		unw_ctx_free(r.ctx);
	return rc;
}

int replay_unwind_data(struct perf_data *d, enum unw_method method,
		       int (*fn)(const struct replay_stack *st, void *arg), void *arg,
		       struct replay_info *info, struct unw_ctx **ctx_out)
{
	return replay_unwind_each(d, method, NULL, fn, NULL, arg, info, ctx_out);
}

int replay_unwind(const char *path, enum unw_method method,
	       int (*fn)(const struct replay_stack *st, void *arg), void *arg,
	       struct replay_info *info, struct unw_ctx **ctx_out)
{
	struct perf_data *d;
	int rc = perf_data_open(path, &d);
	if (rc)
		return rc;
	rc = replay_unwind_data(d, method, fn, arg, info, ctx_out);
	perf_data_close(d);
	return rc;
}
