/*
 * The calling-context tree: nodes found or created by (parent, frame, call site), self
 * weights added at a pc, and building it from whole stacks (samplers, readers; exact
 * sources' enter/exit/cost events are cct.c's). Children are linked in arrival
 * order here; prof_finish() (finish.c) puts them in canonical order.
 */
#include "profile/prof_internal.h"

#include <errno.h>
#include <string.h>

#include "base/err.h"

struct node_key {
	const struct prof *p;
	uint32_t parent, frame, call_line;
	uint64_t call_pc;
};

static bool node_eq(const void *ctx, uint32_t id)
{
	const struct node_key *k = ctx;
	const struct prof_node *n = &k->p->nodes.v[id];
	return n->parent == k->parent && n->frame == k->frame && n->call_pc == k->call_pc &&
	       n->call_line == k->call_line;
}

uint32_t prof_child(struct prof *p, uint32_t parent, uint32_t frame, uint64_t call_pc,
		    uint32_t call_line)
{
	if (parent >= p->nodes.n || frame >= p->frames.n) {
		err_set(-EINVAL, "node %u or frame %u does not exist", parent, frame);
		return PROF_NONE;
	}
	struct node_key k = { p, parent, frame, call_line, call_pc };
	uint32_t h = idhash_mix((uint64_t)parent << 32 | frame, call_pc ^ (uint64_t)call_line << 48);
	uint32_t id = idhash_find(&p->node_index, h, node_eq, &k);
	if (id != PROF_NONE)
		return id;
	if (p->nodes.n >= PROF_NONE - 1) {
		err_set(-E2BIG, "more than 2^32 calling contexts");
		return PROF_NONE;
	}
	id = (uint32_t)p->nodes.n;
	struct prof_node *n = vec_push(&p->nodes);
	int rc = -ENOMEM;
	if (!n || (rc = prof_grow_i64(&p->self, p->nodes.n * p->metrics.n)) ||
	    (rc = idhash_add(&p->node_index, h, id))) {
		if (n)
			p->nodes.n--;
		if (rc != -E2BIG) /* else prof_grow_i64 said the profile is too large */
			err_set(-ENOMEM, "out of memory building the profile");
		return PROF_NONE;
	}
	struct prof_node *par = &p->nodes.v[parent];
	n->parent = parent;
	n->frame = frame;
	n->call_pc = call_pc;
	n->call_line = call_line;
	n->depth = par->depth + 1;
	n->first_child = PROF_NONE;
	n->first_pc = PROF_NONE;
	n->next_sibling = par->first_child;
	par->first_child = id;
	p->finished = false;
	return id;
}

struct pcw_key {
	const struct prof *p;
	uint32_t node, line;
	uint64_t pc;
};

static bool pcw_eq(const void *ctx, uint32_t id)
{
	const struct pcw_key *k = ctx;
	const struct prof_pcw *e = &k->p->pcws.v[id];
	return k->p->pcw_node.v[id] == k->node && e->pc == k->pc && e->line == k->line;
}

uint32_t prof_pcw_get(struct prof *p, uint32_t node, uint64_t pc, uint32_t line)
{
	struct pcw_key k = { p, node, line, pc };
	uint32_t h = idhash_mix((uint64_t)node << 32 | line, pc);
	uint32_t id = idhash_find(&p->pcw_index, h, pcw_eq, &k);
	if (id != PROF_NONE)
		return id;
	id = (uint32_t)p->pcws.n;
	struct prof_pcw *e = vec_push(&p->pcws);
	uint32_t *owner = e ? vec_push(&p->pcw_node) : NULL;
	int rc = -ENOMEM;
	if (!owner || (rc = prof_grow_i64(&p->pcw_w, p->pcws.n * p->metrics.n)) ||
	    (rc = idhash_add(&p->pcw_index, h, id))) {
		p->pcws.n = p->pcw_node.n = id;
		if (rc != -E2BIG)
			err_set(-ENOMEM, "out of memory building the profile");
		return PROF_NONE;
	}
	*owner = node;
	e->pc = pc;
	e->line = line;
	e->next = p->nodes.v[node].first_pc;
	p->nodes.v[node].first_pc = id;
	p->finished = false;
	return id;
}

/* |w| is abs_but_one(w) + (w < 0): -INT64_MIN itself does not fit in an int64_t. */
static int64_t abs_but_one(int64_t w)
{
	return w < 0 ? -(w + 1) : w;
}

/* Adds weights to node at pc/line; pcw is that entry when the caller knows it (else
 * PROF_NONE). Returns the entry, or PROF_NONE with the message set. */
static uint32_t add_at(struct prof *p, uint32_t node, uint64_t pc, uint32_t line, uint32_t pcw,
		       const int64_t *weights)
{
	if (node == PROF_ROOT || node >= p->nodes.n) {
		err_set(-EINVAL, "weight added to node %u, which has no frame", node);
		return PROF_NONE;
	}
	size_t nm = p->metrics.n;
	if (!nm) {
		err_set(-EINVAL, "weight added to a profile with no metric");
		return PROF_NONE;
	}
	if (prof_grow_i64(&p->abs_sum, nm))
		return PROF_NONE;
	/* Checked first for every metric, added after: a failure leaves the sums as they were
	 * (the metric count comes from input, so no array of them goes on the stack). */
	for (size_t i = 0; i < nm; i++) {
		int64_t sum;
		if (__builtin_add_overflow(p->abs_sum.v[i], abs_but_one(weights[i]), &sum) ||
		    __builtin_add_overflow(sum, weights[i] < 0, &sum)) {
			err_set(-EOVERFLOW, "total weight exceeds 2^63");
			return PROF_NONE;
		}
	}
	uint32_t e = pcw != PROF_NONE ? pcw : prof_pcw_get(p, node, pc, line);
	if (e == PROF_NONE)
		return PROF_NONE;
	int64_t *self = p->self.v + (size_t)node * nm, *pw = p->pcw_w.v + (size_t)e * nm;
	for (size_t i = 0; i < nm; i++) {
		/* in this order, as checked: each partial sum fits */
		p->abs_sum.v[i] = p->abs_sum.v[i] + abs_but_one(weights[i]) + (weights[i] < 0);
		self[i] += weights[i];
		pw[i] += weights[i];
	}
	p->has_weight = true;
	return e;
}

int prof_add_self(struct prof *p, uint32_t node, uint64_t pc, uint32_t line,
		  const int64_t *weights)
{
	return add_at(p, node, pc, line, PROF_NONE, weights) == PROF_NONE ? -EINVAL : 0;
}

/* The frame that stands for "the rest of the stack is unknown". */
static uint32_t truncated_frame(struct prof *p)
{
	struct prof_frame_desc d = { .kind = PROF_TRUNCATED, .module = PROF_NONE };
	return prof_frame(p, &d);
}

/* A hash of a stack's frames and call sites: everything that decides its node, which is
 * all but the innermost pc and line. */
static uint32_t stack_hash(const struct prof_loc *stack, size_t n)
{
	uint64_t h = n;
	for (size_t i = 0; i < n; i++)
		h = idhash_mix(h ^ stack[i].frame,
			       i ? stack[i].pc ^ (uint64_t)stack[i].line << 48 : 0);
	return (uint32_t)h;
}

struct stack_key {
	const struct prof *p;
	const struct prof_loc *stack;
	size_t n;
};

/* Whether the stack stored at id is this stack (but for the innermost pc and line). */
static bool stack_eq(const void *ctx, uint32_t id)
{
	const struct stack_key *k = ctx;
	const union prof_stack_slot *s = k->p->stack_store.v + id;
	if (s->h.n != k->n || s[2].loc.frame != k->stack[0].frame)
		return false;
	for (size_t i = 1; i < k->n; i++)
		if (s[2 + i].loc.frame != k->stack[i].frame || s[2 + i].loc.pc != k->stack[i].pc ||
		    s[2 + i].loc.line != k->stack[i].line)
			return false;
	return true;
}

/* Stores the stack (its node) for prof_add_stack's lookup; *id is where. */
static int remember_stack(struct prof *p, const struct prof_loc *stack, size_t n,
			  uint32_t h, uint32_t node, uint32_t *id)
{
	size_t off = p->stack_store.n;
	union prof_stack_slot *hdr = off < UINT32_MAX - n - 2 ? vec_push(&p->stack_store) : NULL;
	if (hdr && !vec_push(&p->stack_store))
		hdr = NULL;
	for (size_t i = 0; hdr && i < n; i++) {
		union prof_stack_slot *l = vec_push(&p->stack_store);
		if (!l)
			hdr = NULL;
		else
			l->loc = stack[i];
	}
	if (!hdr || idhash_add(&p->stack_index, h, (uint32_t)off)) {
		p->stack_store.n = off;
		return err_set(-ENOMEM, "out of memory building the profile");
	}
	hdr = &p->stack_store.v[off]; /* the pushes may have moved it */
	hdr->h.n = (uint32_t)n;
	hdr->h.pcw = PROF_NONE;
	hdr->h.node = node;
	*id = (uint32_t)off;
	return 0;
}

/* Adds weights to the stack stored at id, whose innermost location is now inner. */
static int add_to_stored(struct prof *p, uint32_t id, const struct prof_loc *inner,
			 const int64_t *weights, uint32_t *pcw_out)
{
	/* Hot code repeats the same pc too: the entry remembers the last one's weights. */
	union prof_stack_slot *e = &p->stack_store.v[id];
	bool same = e[0].h.pcw != PROF_NONE && e[1].last.pc == inner->pc &&
		    e[1].last.line == inner->line;
	uint32_t pcw = add_at(p, e[0].h.node, inner->pc, inner->line, same ? e[0].h.pcw : PROF_NONE,
			      weights);
	if (pcw == PROF_NONE)
		return -EINVAL;
	e[0].h.pcw = pcw;
	e[1].last = *inner;
	*pcw_out = pcw;
	return 0;
}

static int add_self_at(struct prof *p, uint32_t node, uint64_t pc, uint32_t line,
		       const int64_t *weights, uint32_t *pcw_out)
{
	*pcw_out = add_at(p, node, pc, line, PROF_NONE, weights);
	return *pcw_out == PROF_NONE ? -EINVAL : 0;
}

int prof_add_stack_at(struct prof *p, const struct prof_loc *stack, size_t n,
		      const int64_t *weights, uint32_t *kept, uint32_t *pcw)
{
	if (*kept != PROF_NONE && n)
		return add_to_stored(p, *kept, &stack[0], weights, pcw);
	if (!n) {
		uint32_t f = truncated_frame(p);
		uint32_t node = f == PROF_NONE ? PROF_NONE : prof_child(p, PROF_ROOT, f, 0, 0);
		return node == PROF_NONE ? -ENOMEM : add_self_at(p, node, 0, 0, weights, pcw);
	}
	/* Samplers repeat stacks many times: one lookup of the whole stack finds its node
	 * without walking the tree level by level. */
	struct stack_key k = { p, stack, n };
	uint32_t h = stack_hash(stack, n);
	uint32_t id = idhash_find(&p->stack_index, h, stack_eq, &k);
	if (id != PROF_NONE) {
		*kept = id;
		return add_to_stored(p, id, &stack[0], weights, pcw);
	}
	uint32_t node = PROF_ROOT;
	uint64_t call_pc = 0;
	uint32_t call_line = 0;
	for (size_t i = n; i-- > 0;) {
		node = prof_child(p, node, stack[i].frame, call_pc, call_line);
		if (node == PROF_NONE)
			return -EINVAL;
		call_pc = stack[i].pc;
		call_line = stack[i].line;
	}
	if (n < 1024 && remember_stack(p, stack, n, h, node, kept))
		return -ENOMEM;
	return add_self_at(p, node, stack[0].pc, stack[0].line, weights, pcw);
}

int prof_add_stack_kept(struct prof *p, const struct prof_loc *stack, size_t n,
			const int64_t *weights, uint32_t *kept)
{
	uint32_t pcw;
	return prof_add_stack_at(p, stack, n, weights, kept, &pcw);
}

int prof_add_stack(struct prof *p, const struct prof_loc *stack, size_t n,
		   const int64_t *weights)
{
	uint32_t kept = PROF_NONE;
	return prof_add_stack_kept(p, stack, n, weights, &kept);
}

size_t prof_nnodes(const struct prof *p)
{
	return p->nodes.n;
}

const struct prof_node *prof_node_at(const struct prof *p, uint32_t id)
{
	return &p->nodes.v[id];
}

const int64_t *prof_self(const struct prof *p, uint32_t node)
{
	static const int64_t none[1];
	return p->metrics.n ? p->self.v + (size_t)node * p->metrics.n : none;
}

const struct prof_pcw *prof_pcw_at(const struct prof *p, uint32_t id)
{
	return &p->pcws.v[id];
}

const int64_t *prof_pcw_weights(const struct prof *p, uint32_t pcw)
{
	return p->pcw_w.v + (size_t)pcw * p->metrics.n;
}
