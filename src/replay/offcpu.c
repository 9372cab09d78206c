/*
 * Pairing switch-out samples with switch-in records (see offcpu.h). Records come in time
 * order; each thread has at most one open interval, kept by tid until its switch-in.
 * Intervals are kept by the sample's file offset, sorted, for the replay's lookups.
 */
#include "replay/offcpu.h"

#include <errno.h>
#include <stdlib.h>

#include "base/err.h"
#include "base/idmap.h"
#include "base/vec.h"

struct interval {
	uint64_t off; /* the switch sample's offset in the file */
	uint64_t start, ns;
};

struct replay_offcpu {
	const struct perf_attr_info *sw; /* the switch event */
	VEC(struct interval) v;
	struct idmap open; /* tid -> index into v of its open interval */
};

/* The switch event: a tracepoint beside a first event that records context switches. */
static const struct perf_attr_info *switch_attr(const struct perf_data *d)
{
	if (d->nattrs < 2 || !d->attrs[0].attr.context_switch ||
	    !(d->attrs[0].attr.sample_type & PERF_SAMPLE_IDENTIFIER))
		return NULL;
	for (size_t i = 1; i < d->nattrs; i++)
		if (d->attrs[i].attr.type == PERF_TYPE_TRACEPOINT)
			return &d->attrs[i];
	return NULL;
}

static int on_record(const struct perf_event_rec *ev, void *arg)
{
	struct replay_offcpu *o = arg;
	/* tid 0 is a CPU's idle task: its "off-CPU" time is the others' work (-a) */
	if (ev->type == PERF_RECORD_SAMPLE && ev->attr == o->sw && ev->tid) {
		if (!vec_reserve(&o->v, 1) ||
		    idmap_put(&o->open, ev->tid, (uint32_t)o->v.n))
			return -ENOMEM;
		*vec_push(&o->v) = (struct interval){ ev->file_off, ev->time, 0 };
		return 0;
	}
	/* a switch-in: per-task records (SWITCH), or CPU-wide ones (-a: SWITCH_CPU_WIDE, whose
	 * sample id is the task coming in) */
	if ((ev->type != PERF_RECORD_SWITCH && ev->type != PERF_RECORD_SWITCH_CPU_WIDE) ||
	    (ev->misc & PERF_RECORD_MISC_SWITCH_OUT))
		return 0;
	uint32_t i = idmap_get(&o->open, ev->tid);
	if (i == IDMAP_NONE)
		return 0;
	if (ev->time > o->v.v[i].start)
		o->v.v[i].ns = ev->time - o->v.v[i].start;
	return idmap_put(&o->open, ev->tid, IDMAP_NONE);
}

static int by_off(const void *a, const void *b)
{
	const struct interval *x = a, *y = b;
	return (x->off > y->off) - (x->off < y->off);
}

int replay_offcpu_scan(struct perf_data *d, struct replay_offcpu **out)
{
	*out = NULL;
	const struct perf_attr_info *sw = switch_attr(d);
	if (!sw)
		return 0;
	struct replay_offcpu *o = calloc(1, sizeof(*o));
	if (!o)
		return err_set(-ENOMEM, "out of memory");
	o->sw = sw;
	int r = perf_data_each(d, on_record, o);
	if (r == -ENOMEM)
		err_set(r, "%s: out of memory pairing context switches", d->path);
	if (r) {
		replay_offcpu_free(o);
		return r;
	}
	if (o->v.n)
		qsort(o->v.v, o->v.n, sizeof(*o->v.v), by_off);
	idmap_free(&o->open);
	*out = o;
	return 0;
}

bool replay_offcpu_is_switch(const struct replay_offcpu *o, const struct perf_event_rec *ev)
{
	return o && ev->attr == o->sw;
}

uint64_t replay_offcpu_ns(const struct replay_offcpu *o, const struct perf_event_rec *ev)
{
	size_t lo = 0, hi = o->v.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->v.v[mid].off < ev->file_off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < o->v.n && o->v.v[lo].off == ev->file_off ? o->v.v[lo].ns : 0;
}

void replay_offcpu_free(struct replay_offcpu *o)
{
	if (!o)
		return;
	vec_free(&o->v);
	idmap_free(&o->open);
	free(o);
}
