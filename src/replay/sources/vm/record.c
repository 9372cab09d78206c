/*
 * Loop records in stack copies (record.h). A record is taken only at its own address
 * (magic, then self, then the layout version); its frames are read from the same copy,
 * within it; every frame's function must be in the registry and its pc in the function
 * (the published pc for the innermost, for each other the call site the frame above it
 * was pushed with). A record that fails any of it gives no frame: it is counted.
 */
#include "replay/sources/vm/record.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "tally/agent.h"

#define LOOP_SIZE sizeof(struct tally_agent_loop)
#define FRAME_SIZE sizeof(struct tally_agent_frame)

static int by_id(const void *a, const void *b)
{
	const struct replay_vm_fn *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->code < y->code ? -1 : x->code > y->code; /* file order: the later last */
}

int replay_vm_registry_index(struct replay_vm_registry *r)
{
	r->nfns = r->dump ? r->dump->ncodes : 0;
	if (!(r->fns = calloc(r->nfns ? r->nfns : 1, sizeof(*r->fns))))
		return err_set(-ENOMEM, "out of memory");
	for (size_t i = 0; i < r->nfns; i++)
		r->fns[i] = (struct replay_vm_fn){ r->dump->codes[i].index, &r->dump->codes[i] };
	qsort(r->fns, r->nfns, sizeof(*r->fns), by_id);
	return 0;
}

void replay_vm_registry_free(struct replay_vm_registry *r)
{
	replay_jitdump_free(r->dump);
	free(r->fns);
	r->dump = NULL;
	r->fns = NULL;
	r->nfns = 0;
}

static const struct replay_jit_code *fn_of(const struct replay_vm_registry *r, uint64_t id)
{
	size_t lo = 0, hi = r->nfns;
	while (lo < hi) { /* past the last entry of id */
		size_t mid = lo + (hi - lo) / 2;
		if (r->fns[mid].id <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && r->fns[lo - 1].id == id ? r->fns[lo - 1].code : NULL;
}

static bool holds(const struct replay_vm_copy *c, uint64_t addr, uint64_t len)
{
	return addr >= c->base && addr - c->base <= c->size && len <= c->size - (addr - c->base);
}

static const uint8_t *at(const struct replay_vm_copy *c, uint64_t addr)
{
	return c->data + (addr - c->base);
}

/* The record's thread state, checked before its frames are: 0 when usable, else the
 * counter of why not. */
static uint64_t *unusable(const struct tally_agent_thread *t, const struct replay_vm_copy *c,
			  struct replay_vm_stats *st)
{
	if (t->seq & 1)
		return &st->changing;
	if (!t->depth)
		return &st->empty;
	if (t->depth > t->max_depth)
		return &st->too_deep;
	if (!holds(c, (uint64_t)(uintptr_t)t->frames, (uint64_t)t->depth * FRAME_SIZE))
		return &st->unreadable;
	return NULL;
}

/* The frames of the record at addr: 1 when they check out (appended to out), 0 when it is
 * no record or fails (counted), negative on error. */
static int read_record(const struct replay_vm_copy *c, uint64_t addr,
		       const struct replay_vm_lookup *lk, struct replay_vm_stats *st,
		       replay_vm_frames *out)
{
	struct tally_agent_loop rec;
	memcpy(&rec, at(c, addr), LOOP_SIZE);
	if (rec.self != addr)
		return 0; /* a copy of a record's bytes, or a chance match */
	st->present = true;
	if (rec.version != TALLY_AGENT_LOOP_VERSION) {
		st->malformed++;
		return 0;
	}
	const struct tally_agent_thread *t = &rec.state;
	uint64_t *why = unusable(t, c, st);
	if (why) {
		(*why)++;
		return 0;
	}
	const struct replay_vm_registry *reg = NULL;
	int r = lk->registry(lk->arg, rec.agent, &reg);
	if (r)
		return r;
	if (!reg || !reg->dump) {
		st->no_registry++;
		return 0;
	}
	size_t first = out->n;
	if (!vec_reserve(out, t->depth))
		return err_set(-ENOMEM, "out of memory");
	const uint8_t *frames = at(c, (uint64_t)(uintptr_t)t->frames);
	for (uint32_t k = 0; k < t->depth; k++) {
		struct tally_agent_frame f, callee;
		memcpy(&f, frames + k * FRAME_SIZE, FRAME_SIZE);
		uint64_t pc = t->pc;
		if (k + 1 < t->depth) {
			memcpy(&callee, frames + (k + 1) * FRAME_SIZE, FRAME_SIZE);
			pc = callee.call_pc;
		}
		const struct replay_jit_code *code = fn_of(reg, f.function);
		if (code && pc == TALLY_AGENT_PC_ENTRY) /* pushed, its first pc not yet published */
			pc = code->addr;
		if (!code || pc < code->addr || pc - code->addr >= code->size) {
			out->n = first;
			if (code)
				st->pc_outside++;
			else
				st->unknown_function++;
			return 0;
		}
		out->v[out->n++] = (struct replay_vm_frame){ reg, code, pc };
	}
	return 1;
}

int replay_vm_scan(const struct replay_vm_copy *c, uint64_t lo, uint64_t hi,
		   const struct replay_vm_lookup *lk, struct replay_vm_stats *st,
		   replay_vm_frames *out, bool *found)
{
	*found = false;
	if (lo < c->base || hi < lo)
		return 0;
	if (hi - c->base > c->size)
		hi = c->base + c->size;
	for (uint64_t a = (lo + 7) & ~7ull; a >= lo && a < hi && hi - a >= LOOP_SIZE; a += 8) {
		uint64_t magic;
		memcpy(&magic, at(c, a), sizeof(magic));
		if (magic != TALLY_AGENT_LOOP_MAGIC)
			continue;
		int r = read_record(c, a, lk, st, out);
		if (r < 0)
			return r;
		if (r) {
			*found = true;
			return 0;
		}
	}
	return 0;
}
