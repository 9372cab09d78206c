/*
 * The calling-context tree of exact sources (profile.h, "building from calling-context
 * events"): nodes found by (parent, key, call-site pc) in an open-addressed index, each
 * with a dense pc array that starts at the extent the source gives and widens, at least
 * doubling, when a pc falls outside it. The array holds differences between neighbouring
 * pcs' costs (a run of instructions is +1 at its first pc, -1 after its last); the costs
 * are their running sums, taken only at the end, when profile nodes are made.
 */
#include "profile/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/vec.h"

#define NO_NODE UINT32_MAX

struct cct_node {
	uint32_t parent; /* NO_NODE for the root */
	uint64_t key, call_pc;
	uint64_t lo, n; /* n + 1 diffs, as in struct prof_cct_at */
	uint64_t *diffs;
};

struct prof_cct {
	struct prof_cct_hot hot; /* first: profile.h's inline calls read it through a cast */
	VEC(struct cct_node) nodes;
	uint32_t *slots; /* children index: node id + 1, open-addressed; 0 empty */
	size_t nslots;
	bool failed; /* out of memory or a cost at the root in prof_cct_count */
};

static size_t child_slot(const struct prof_cct *c, uint32_t parent, uint64_t key,
			 uint64_t call_pc)
{
	uint64_t h = ((uint64_t)parent * 0x9e3779b97f4a7c15ull) ^
		     (call_pc * 0xc2b2ae3d27d4eb4full) ^ (key * 0x165667b19e3779f9ull);
	h ^= h >> 31;
	size_t i = (size_t)(h * 0x94d049bb133111ebull >> 17) & (c->nslots - 1);
	while (c->slots[i]) {
		const struct cct_node *r = &c->nodes.v[c->slots[i] - 1];
		if (r->parent == parent && r->call_pc == call_pc && r->key == key)
			break;
		i = (i + 1) & (c->nslots - 1);
	}
	return i;
}

static int grow_slots(struct prof_cct *c)
{
	size_t n = c->nslots ? c->nslots * 2 : 1024;
	uint32_t *s = calloc(n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	free(c->slots);
	c->slots = s;
	c->nslots = n;
	for (size_t id = 0; id < c->nodes.n; id++) {
		const struct cct_node *r = &c->nodes.v[id];
		if (r->parent != NO_NODE)
			s[child_slot(c, r->parent, r->key, r->call_pc)] = (uint32_t)id + 1;
	}
	return 0;
}

static void select_node(struct prof_cct *c, uint32_t id)
{
	const struct cct_node *r = &c->nodes.v[id];
	c->hot.cur = (struct prof_cct_at){ r->diffs, r->lo, r->n, r->key, r->call_pc, id, r->parent };
}

/* The current node's array moved: so did the copies of it in last and leaf, if they are
 * that node. */
static void array_changed(struct prof_cct *c)
{
	if (c->hot.last.node == c->hot.cur.node)
		c->hot.last_ok = false;
	if (c->hot.leaf.node == c->hot.cur.node)
		c->hot.leaf.n = 0;
	select_node(c, c->hot.cur.node);
}

static uint32_t new_node(struct prof_cct *c, uint32_t parent, uint64_t key, uint64_t call_pc)
{
	struct cct_node *r = vec_push(&c->nodes);
	if (!r)
		return NO_NODE;
	*r = (struct cct_node){ .parent = parent, .key = key, .call_pc = call_pc };
	return (uint32_t)(c->nodes.n - 1);
}

int prof_cct_new(struct prof_cct **out)
{
	struct prof_cct *c = calloc(1, sizeof(*c));
	if (!c || grow_slots(c) || new_node(c, NO_NODE, PROF_CCT_NO_KEY, 0) == NO_NODE) {
		prof_cct_free(c);
		return err_set(-ENOMEM, "out of memory");
	}
	select_node(c, PROF_CCT_ROOT);
	*out = c;
	return 0;
}

void prof_cct_free(struct prof_cct *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nodes.n; i++)
		free(c->nodes.v[i].diffs);
	vec_free(&c->nodes);
	free(c->slots);
	free(c);
}

int prof_cct_enter_lookup(struct prof_cct *c, uint64_t key, uint64_t call_pc)
{
	if (2 * (c->nodes.n + 1) > c->nslots && grow_slots(c))
		return err_set(-ENOMEM, "out of memory");
	size_t i = child_slot(c, c->hot.cur.node, key, call_pc);
	int created = !c->slots[i];
	if (created) {
		uint32_t id = new_node(c, c->hot.cur.node, key, call_pc);
		if (id == NO_NODE)
			return err_set(-ENOMEM, "out of memory");
		c->slots[i] = id + 1;
	}
	c->hot.up = c->hot.cur;
	c->hot.up_ok = true;
	select_node(c, c->slots[i] - 1);
	return created;
}

int prof_cct_span(struct prof_cct *c, uint64_t lo, uint64_t n)
{
	struct cct_node *r = &c->nodes.v[c->hot.cur.node];
	if (r->diffs || !n)
		return 0;
	if (!(r->diffs = calloc(n + 1, sizeof(*r->diffs))))
		return err_set(-ENOMEM, "out of memory");
	r->lo = lo;
	r->n = n;
	array_changed(c);
	return 0;
}

/* Enters the child, adds the cost and comes back with the parent's shortcut (up) as it
 * was. */
int prof_cct_child_cost_lookup(struct prof_cct *c, uint64_t key, uint64_t call_pc,
			       uint64_t pc, uint64_t cost)
{
	struct prof_cct_at up = c->hot.up;
	bool up_ok = c->hot.up_ok;
	int created = prof_cct_enter_lookup(c, key, call_pc);
	if (created < 0)
		return created;
	int rc = prof_cct_cost(c, pc, cost);
	c->hot.leaf = c->hot.cur;
	select_node(c, c->hot.cur.parent);
	c->hot.up = up;
	c->hot.up_ok = up_ok;
	return rc ? rc : created;
}

int prof_cct_exit_lookup(struct prof_cct *c)
{
	if (c->hot.cur.node == PROF_CCT_ROOT)
		return err_set(-EINVAL, "calling-context exit with no frame entered");
	c->hot.last = c->hot.cur;
	c->hot.last_ok = true;
	c->hot.up_ok = false;
	select_node(c, c->hot.cur.parent);
	return 0;
}

void prof_cct_resume(struct prof_cct *c, uint32_t node)
{
	c->hot.up_ok = false;
	select_node(c, node);
}

/* Widens the current node's array over [lo, hi) (at least doubling it, so that a function
 * met without its extent costs few reallocations). The differences move with their pcs,
 * the old last entry included: every run it ends lies inside the old extent. */
static int widen(struct prof_cct *c, uint64_t lo, uint64_t hi)
{
	struct cct_node *r = &c->nodes.v[c->hot.cur.node];
	if (r->n) {
		lo = lo < r->lo ? lo : r->lo;
		hi = hi > r->lo + r->n ? hi : r->lo + r->n;
	}
	uint64_t grow = hi - lo < 2 * r->n ? 2 * r->n - (hi - lo) : 0;
	if (r->n && lo < r->lo)
		lo = lo > grow ? lo - grow : 0;
	else
		hi += grow;
	uint64_t *v = calloc(hi - lo + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (r->n)
		memcpy(v + (r->lo - lo), r->diffs, (r->n + 1) * sizeof(*v));
	free(r->diffs);
	r->diffs = v;
	r->lo = lo;
	r->n = hi - lo;
	array_changed(c);
	return 0;
}

void prof_cct_count_run_far(struct prof_cct *c, uint64_t lo, uint64_t n)
{
	if (c->failed || c->hot.cur.node == PROF_CCT_ROOT || widen(c, lo, lo + n)) {
		c->failed = true;
		return;
	}
	c->hot.cur.diffs[lo - c->hot.cur.lo]++;
	c->hot.cur.diffs[lo - c->hot.cur.lo + n]--;
}

int prof_cct_cost_far(struct prof_cct *c, uint64_t pc, uint64_t cost)
{
	if (c->hot.cur.node == PROF_CCT_ROOT)
		return err_set(-EINVAL, "calling-context cost with no frame entered");
	if (widen(c, pc, pc + 1))
		return err_set(-ENOMEM, "out of memory");
	c->hot.cur.diffs[pc - c->hot.cur.lo] += cost;
	c->hot.cur.diffs[pc - c->hot.cur.lo + 1] -= cost;
	return 0;
}

bool prof_cct_ok(const struct prof_cct *c)
{
	return !c->failed;
}

uint64_t prof_cct_total(const struct prof_cct *c)
{
	uint64_t t = 0;
	for (size_t i = 0; i < c->nodes.n; i++) {
		const struct cct_node *r = &c->nodes.v[i];
		uint64_t cost = 0;
		for (uint64_t k = 0; k < r->n; k++) {
			cost += r->diffs[k];
			t += cost;
		}
	}
	return t;
}

static uint32_t place_node(const struct prof_cct_place *pl, struct prof *p, uint32_t parent,
			   uint64_t parent_key, const struct cct_node *r)
{
	if (pl && pl->node)
		return pl->node(pl->ctx, p, parent, parent_key, r->key, r->call_pc);
	return prof_child(p, parent, (uint32_t)r->key, r->call_pc, 0);
}

static int add_costs(const struct prof_cct_place *pl, struct prof *p, uint32_t node,
		     const struct cct_node *r, int64_t *w, int metric)
{
	uint64_t cost = 0;
	for (uint64_t k = 0; k < r->n; k++) {
		if (!(cost += r->diffs[k]))
			continue;
		uint64_t addr = r->lo + k;
		uint32_t line = 0, at = node;
		if (pl && pl->pc)
			at = pl->pc(pl->ctx, p, node, r->key, r->lo + k, &addr, &line);
		w[metric] = (int64_t)cost;
		if (at == PROF_NONE || prof_add_self(p, at, addr, line, w))
			return -ENOMEM;
	}
	return 0;
}

int prof_cct_build(const struct prof_cct *c, struct prof *p, int metric,
		   const struct prof_cct_place *place)
{
	if (c->failed)
		return err_set(-ENOMEM, "out of memory, or a cost outside any frame, while profiling");
	size_t nm = prof_nmetrics(p);
	if (metric < 0 || (size_t)metric >= nm)
		return err_set(-EINVAL, "no metric %d in the profile", metric);
	uint32_t *pnode = malloc(c->nodes.n * sizeof(*pnode));
	int64_t *w = calloc(nm, sizeof(*w));
	int rc = pnode && w ? 0 : -ENOMEM;
	if (!rc)
		pnode[PROF_CCT_ROOT] = PROF_ROOT;
	/* parents have smaller ids than their children */
	for (size_t id = 1; !rc && id < c->nodes.n; id++) {
		const struct cct_node *r = &c->nodes.v[id];
		pnode[id] = place_node(place, p, pnode[r->parent], c->nodes.v[r->parent].key, r);
		rc = pnode[id] == PROF_NONE ? -ENOMEM : add_costs(place, p, pnode[id], r, w, metric);
	}
	free(pnode);
	free(w);
	return rc ? err_set(rc, "out of memory building the profile") : 0;
}
