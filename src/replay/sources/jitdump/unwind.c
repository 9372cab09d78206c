/*
 * The unwinding side of a jitdump (jitdump.h, replay_jit_feed): the code a dump loaded and
 * moved is handed to the unwinder in time order, with the CFI of JIT_CODE_UNWINDING_INFO,
 * before each sample of the dump's process, up to the sample's time. Code addresses are
 * reused: a load's CFI serves the samples after it until other code takes its memory
 * (unw_space_jit). Code without CFI still cuts away the CFI of code it replaces.
 */
#include "replay/sources/jitdump/jitdump.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "unwind/unwind.h"

static int by_time(const void *a, const void *b, void *arg)
{
	const struct replay_jitdump *d = arg;
	const struct replay_jit_place *x = &d->places[*(const size_t *)a],
				      *y = &d->places[*(const size_t *)b];
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	/* At the same time, in the order the dump has them. */
	return x->code < y->code ? -1 : x->code > y->code;
}

int replay_jit_feed_init(struct replay_jit_feed *f, const struct replay_jitdump *d)
{
	*f = (struct replay_jit_feed){ 0 };
	if (!d->nplaces)
		return 0;
	if (!(f->order = malloc(d->nplaces * sizeof(*f->order))))
		return err_set(-ENOMEM, "%s: out of memory", d->path);
	for (size_t i = 0; i < d->nplaces; i++)
		f->order[i] = i;
	qsort_r(f->order, d->nplaces, sizeof(*f->order), by_time, (void *)d);
	return 0;
}

void replay_jit_feed_free(struct replay_jit_feed *f)
{
	free(f->order);
	*f = (struct replay_jit_feed){ 0 };
}

/* The CFI of code, made in c; NULL for code without (no UNWINDING_INFO, or V8's empty
 * header alone). */
static int code_cfi(const struct replay_jitdump *d, const struct replay_jit_code *code,
		    struct unw_ctx *c, struct unw_jit_code **out)
{
	*out = NULL;
	if (!code->eh_frame)
		return 0;
	char name[512];
	snprintf(name, sizeof(name), "%s: %s", d->path, code->name);
	struct unw_jit_cfi_opts o = {
		.sz = sizeof(o),
		.name = name,
		.code_size = code->size,
		.eh_frame = code->eh_frame,
		.eh_frame_size = code->eh_frame_size,
		.eh_frame_hdr = code->eh_frame_hdr,
		.eh_frame_hdr_size = code->eh_frame_hdr_size,
	};
	return unw_jit_code_new(c, &o, out);
}

int replay_jit_feed_apply(struct replay_jit_feed *f, const struct replay_jitdump *d,
			  struct unw_ctx *c, struct unw_space *s, uint64_t time, bool timed)
{
	for (; f->next < d->nplaces; f->next++) {
		const struct replay_jit_place *p = &d->places[f->order[f->next]];
		if (timed && p->time > time)
			break;
		struct unw_jit_code *jc;
		int r = code_cfi(d, &d->codes[p->code], c, &jc);
		if (!r && unw_space_jit(s, p->start, p->end, jc))
			r = err_set(-ENOMEM, "%s: out of memory", d->path);
		if (r)
			return r;
	}
	return 0;
}
