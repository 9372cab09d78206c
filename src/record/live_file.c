/*
 * tally record --unwind-file (live.h, rec_live_file): a raw recording (stack copies) run
 * through the live unwinder as its records lie in the file, which is the order the rings
 * were drained in, and written as tally record writes it by default. For tests: the same
 * walks as while recording, on records that can be replayed raw as well.
 */
#include "record/live.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

struct conv {
	struct perf_data *d;
	struct perf_writer *w;
	struct rec_live *live;
};

static int write_out(const void *rec, size_t size, void *arg)
{
	struct conv *c = arg;
	return perf_writer_add(c->w, rec, size);
}

static uint64_t *ids_of(const struct perf_attr_info *a)
{
	uint64_t *ids = calloc(a->nids ? a->nids : 1, 8);
	if (ids)
		memcpy(ids, a->ids, 8 * a->nids);
	return ids;
}

/* The attributes of the file, those with stack copies as their unwound samples read. */
static int open_out(struct conv *c, const char *out)
{
	struct perf_event_attr a;
	perf_sample_attr_unwound(&c->d->attrs[0].attr, &a);
	int r = perf_writer_open(out, &a, &c->w);
	for (size_t i = 1; !r && i < c->d->nattrs; i++) {
		const struct perf_attr_info *ai = &c->d->attrs[i];
		a = ai->attr;
		if (a.sample_type & PERF_SAMPLE_STACK_USER)
			perf_sample_attr_unwound(&ai->attr, &a);
		uint64_t *ids = ids_of(ai);
		r = ids ? perf_writer_add_attr(c->w, &a, ids, ai->nids)
			: err_set(-ENOMEM, "out of memory");
		free(ids);
	}
	for (size_t i = 0; !r && i < c->d->nbuild_ids; i++) {
		const struct perf_build_id *b = &c->d->build_ids[i];
		bool kernel = !strcmp(b->filename, "[kernel.kallsyms]");
		r = perf_writer_add_build_id(c->w, b->pid, kernel ? PERF_RECORD_MISC_KERNEL
								   : PERF_RECORD_MISC_USER,
					     b->id, b->len, b->filename);
		if (!r)
			r = rec_live_expect_build_id(c->live, b->filename, b->id, b->len);
	}
	return r;
}

static int no_copy(const char *path)
{
	return err_set(-EINVAL, "%s: no stack copies to unwind (a recording of tally record "
				"--keep-stacks, in the file format)", path);
}

/* Every record in file order: the sampling events' (those with stack copies, and the
 * records that are no samples) by their own time, others' samples as they are. */
static int feed(struct conv *c)
{
	const uint8_t *p = c->d->recs;
	size_t end = c->d->recs_size;
	for (size_t off = c->d->data_off; off + 8 <= end;) {
		struct perf_event_header h;
		memcpy(&h, p + off, sizeof(h));
		if (h.size < 8 || h.size > end - off)
			return err_set(-EINVAL, "%s: at 0x%zx: record runs past the data section",
				       c->d->path, off);
		struct perf_event_rec ev;
		int r = perf_record_decode(c->d->path, off, c->d->attrs, c->d->nattrs, p + off, h.size,
					   &ev);
		uint32_t note;
		if (!r && perf_sample_unwound_note(&ev, &note))
			r = no_copy(c->d->path); /* unwound while recording already */
		if (r)
			return r;
		bool opaque = ev.type == PERF_RECORD_SAMPLE &&
			      !(ev.attr->attr.sample_type & PERF_SAMPLE_STACK_USER);
		if (ev.type < PERF_RECORD_MAX &&
		    (r = rec_live_add(c->live, p + off, h.size, opaque ? REC_LIVE_OPAQUE : 0,
				      ev.time)))
			return r;
		off += h.size;
	}
	return rec_live_finish(c->live);
}

int rec_live_file(const char *in, const char *out, struct rec_live_stats *st)
{
	struct conv c = { 0 };
	int r = perf_data_open(in, &c.d);
	if (r)
		return r;
	if (c.d->pipe || !c.d->recs || !c.d->nattrs || c.d->unwound ||
	    !(c.d->attrs[0].attr.sample_type & PERF_SAMPLE_STACK_USER))
		r = no_copy(in);
	if (!r)
		r = rec_live_new(in, &c.d->attrs[0].attr, write_out, &c, &c.live);
	if (!r)
		r = open_out(&c, out);
	if (!r)
		r = feed(&c);
	if (c.w) {
		uint64_t *ids = r ? NULL : ids_of(&c.d->attrs[0]);
		if (!r && !ids)
			r = err_set(-ENOMEM, "out of memory");
		if (r)
			perf_writer_abort(c.w);
		else
			r = perf_writer_close(c.w, ids, c.d->attrs[0].nids);
		free(ids);
	}
	if (c.live && st)
		rec_live_stats(c.live, st);
	rec_live_free(c.live);
	perf_data_close(c.d);
	return r;
}
