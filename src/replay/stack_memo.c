/*
 * An open-addressing table of kept stacks by a hash of their key. A stack is kept the
 * second time it comes, its hash noted the first: many recordings (a recursive sort, say)
 * have most of their stacks once only, and keeping those (3.4 KB a stack of 28 frames)
 * cost more, in fresh memory, than naming the stacks that do repeat once more. Memory is
 * bounded: past MAX_STACKS stacks or MAX_WORDS words of keys and frames, new stacks are
 * named every time, as without the memo; past MAX_STACKS hashes noted, the notes start
 * over.
 */
#include "replay/stack_memo.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

#define MAX_STACKS (1u << 16)
#define MAX_WORDS ((size_t)8 << 20) /* 64 MiB */

struct kept {
	uint64_t hash;
	uint32_t id;
	size_t nkey;
	uint64_t *key;
	struct replay_sym_frame *frames;
	size_t n;
};

/* The hashes of stacks seen once: open addressing, 0 for an empty slot (a hash of 0 is
 * noted as 1). */
struct seen {
	uint64_t *slots;
	size_t cap, count;
};

struct replay_stack_memo {
	struct kept **slots;
	size_t cap, count, words;
	VEC(uint64_t) key; /* the key being looked up */
	struct seen once;
};

struct replay_stack_memo *replay_stack_memo_new(void)
{
	return calloc(1, sizeof(struct replay_stack_memo));
}

void replay_stack_memo_free(struct replay_stack_memo *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i]);
	free(m->slots);
	free(m->once.slots);
	vec_free(&m->key);
	free(m);
}

/* st's key into m->key, and its hash. */
static bool make_key(struct replay_stack_memo *m, const struct replay_stack *st, uint64_t *hash)
{
	size_t need = 4 + 3 * st->n + st->ev->nr_callchain;
	m->key.n = 0;
	if (!vec_reserve(&m->key, need))
		return false;
	uint64_t *w = m->key.v;
	bool anon = false;
	*w++ = st->end;
	*w++ = st->n;
	for (size_t i = 0; i < st->n; i++) {
		*w++ = st->frames[i].pc;
		*w++ = (uint64_t)(uintptr_t)st->frames[i].mod;
		*w++ = st->frames[i].rel;
		anon |= !st->frames[i].mod || !st->frames[i].mod->elf;
	}
	/* Memory no ELF file backs is named by its process's perf map: the same addresses in
	 * two processes are different code. */
	*w++ = anon ? st->ev->pid : UINT64_MAX;
	*w++ = st->ev->nr_callchain;
	for (uint64_t i = 0; i < st->ev->nr_callchain; i++)
		*w++ = perf_callchain_at(st->ev, i);
	m->key.n = need;
	uint64_t h = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < need; i++)
		h = (h ^ m->key.v[i]) * 0xff51afd7ed558ccdull;
	*hash = h ^ h >> 29;
	return true;
}

/* The slot of the key in m->key: a kept stack, or the empty slot where it would go. */
static struct kept **slot_of(struct replay_stack_memo *m, uint64_t hash)
{
	for (size_t i = hash & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct kept *k = m->slots[i];
		if (!k || (k->hash == hash && k->nkey == m->key.n &&
			   !memcmp(k->key, m->key.v, m->key.n * sizeof(*k->key))))
			return &m->slots[i];
	}
}

uint32_t replay_stack_memo_find(struct replay_stack_memo *m, const struct replay_stack *st,
			 const struct replay_sym_frame **frames, size_t *n)
{
	uint64_t hash;
	if (!m->count || !make_key(m, st, &hash))
		return 0;
	struct kept *k = *slot_of(m, hash);
	if (!k)
		return 0;
	*frames = k->frames;
	*n = k->n;
	return k->id;
}

static bool grow(struct replay_stack_memo *m)
{
	size_t cap = m->cap ? m->cap * 2 : 256;
	struct kept **slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return false;
	for (size_t i = 0; i < m->cap; i++) {
		struct kept *k = m->slots[i];
		if (!k)
			continue;
		size_t j = k->hash & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = k;
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return true;
}

static bool seen_grow(struct seen *s)
{
	size_t cap = s->cap ? s->cap * 2 : 256;
	if (s->count >= MAX_STACKS) {
		s->count = 0; /* start over, in the room there is */
		memset(s->slots, 0, s->cap * sizeof(*s->slots));
		return true;
	}
	uint64_t *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return false;
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->slots[i])
			continue;
		size_t j = s->slots[i] & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = s->slots[i];
	}
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	return true;
}

/* Whether hash was noted before; notes it when not (false, too, without memory to). */
static bool seen_before(struct seen *s, uint64_t hash)
{
	hash = hash ? hash : 1;
	if (2 * (s->count + 1) > s->cap && !seen_grow(s))
		return false;
	size_t i = hash & (s->cap - 1);
	for (; s->slots[i]; i = (i + 1) & (s->cap - 1))
		if (s->slots[i] == hash)
			return true;
	s->slots[i] = hash;
	s->count++;
	return false;
}

uint32_t replay_stack_memo_keep(struct replay_stack_memo *m, const struct replay_stack *st,
			 const struct replay_sym_frame *frames, size_t n,
			 const struct replay_sym_frame **kept)
{
	uint64_t hash;
	if (m->count >= MAX_STACKS || !make_key(m, st, &hash) || !seen_before(&m->once, hash))
		return 0;
	size_t words = m->key.n + n * sizeof(*frames) / sizeof(uint64_t);
	if (m->words + words > MAX_WORDS || (2 * (m->count + 1) > m->cap && !grow(m)))
		return 0;
	struct kept **slot = slot_of(m, hash);
	if (*slot)
		return 0; /* kept already: find would have said so */
	struct kept *k = malloc(sizeof(*k) + m->key.n * sizeof(*k->key) + n * sizeof(*frames));
	if (!k)
		return 0;
	k->frames = (struct replay_sym_frame *)(k + 1);
	k->key = (uint64_t *)(k->frames + n);
	memcpy(k->frames, frames, n * sizeof(*frames));
	memcpy(k->key, m->key.v, m->key.n * sizeof(*k->key));
	k->hash = hash;
	k->nkey = m->key.n;
	k->n = n;
	k->id = (uint32_t)++m->count;
	m->words += words;
	*slot = k;
	*kept = k->frames;
	return k->id;
}
