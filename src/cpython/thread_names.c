/*
 * Python's names of a process's threads (thread_names.h): a walk of dicts in another
 * process's memory. A dict's entries are read in chunks straight from its keys object,
 * in insertion order, without hashing (a str's hash is salted per process): the dicts
 * walked are small but for sys.modules, and the walk is bounded by a budget of reads.
 *
 * Facts of the headers of 3.8-3.13 (Include/cpython/dictobject.h, Objects/dict-common.h,
 * 3.11+: Include/internal/pycore_dict.h, pycore_object.h; Include/cpython/object.h,
 * longintrepr.h), for the x86-64 and aarch64 release builds cpy_layout_load() accepts;
 * tests/cpython/layout.test.sh checks each against the DWARF of pyenv's builds.
 */
#include "cpython/thread_names.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "cpython/code.h"

/* Caps: interpreters walked, entries of sys.modules, of _active (threads), of a module's
 * or an instance's dict (threading's holds some 150 names, a Thread's some 15). */
#define MAX_INTERPS 16
#define MAX_MODULES (1u << 16)
#define MAX_THREADS (1u << 14)
#define MAX_ATTRS (1u << 12)
/* Reads one walk may make: enough for sys.modules of a large program (a read per key)
 * and the threads' attributes, a bound on the time of a walk of lying memory. */
#define READ_BUDGET (1u << 17)
#define CHUNK 64 /* entries read at once */

#define TPFLAGS_INLINE_VALUES (1u << 2) /* 3.13 */
#define TPFLAGS_MANAGED_DICT (1u << 4)  /* 3.11+ */
#define LONG_SHIFT 30                   /* bits of an int's digit */
#define MANAGED_DICT (-24)
#define MANAGED_VALUES_311 (-32)

/* The same in 3.8-3.13: the type object's and dict's fields, a module's dict, an int's
 * size (or tag) and digits; the keys objects before 3.11 and after. */
#define OBJ .tp_basicsize = 32, .tp_flags = 168, .tp_dictoffset = 288, \
	    .ma_keys = 32, .ma_values = 40, .md_dict = 16, .long_size = 16, .ob_digit = 24
#define OLD_KEYS .dk_size = 8, .dk_nentries = 32, .dk_indices = 40
#define NEW_KEYS .dk_size = 8, .dk_nentries = 24, .dk_indices = 32

static const struct cpy_object_facts facts[] = {
	{ .major_minor = 0x0308, OBJ, .ht_cached_keys = 872, OLD_KEYS },
	{ .major_minor = 0x0309, OBJ, .ht_cached_keys = 864, OLD_KEYS },
	{ .major_minor = 0x030a, OBJ, .ht_cached_keys = 872, OLD_KEYS },
	{ .major_minor = 0x030b, OBJ, .ht_cached_keys = 872, NEW_KEYS },
	{ .major_minor = 0x030c, OBJ, .ht_cached_keys = 880, NEW_KEYS },
	{ .major_minor = 0x030d, OBJ, .ht_cached_keys = 880, NEW_KEYS, .values = 8, .values_valid = 3 },
};

const struct cpy_object_facts *cpy_object_facts(uint32_t version_hex)
{
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++)
		if (facts[i].major_minor == version_hex >> 16)
			return &facts[i];
	return NULL;
}

struct walk {
	const struct cpy_layout *l;
	const struct cpy_object_facts *f;
	cpy_read_fn read;
	void *arg;
	uint32_t budget;
};

static int rd(struct walk *w, uint64_t addr, void *buf, size_t n)
{
	if (!w->budget || !addr)
		return -EIO;
	w->budget--;
	return w->read(w->arg, addr, buf, n) ? -EIO : 0;
}

static int rd_u64(struct walk *w, uint64_t addr, uint64_t *v) { return rd(w, addr, v, 8); }

static bool old_dicts(const struct cpy_layout *l) { return CPY_FRAME_OBJECTS(l->variant); }

static int walk_init(struct walk *w, const struct cpy_layout *l, cpy_read_fn read, void *arg)
{
	*w = (struct walk){ l, cpy_object_facts(l->version_hex), read, arg, READ_BUDGET };
	return w->f ? 0 : -ENOENT;
}

/* A keys object's entries: where they begin, how many are in use, and their size. */
struct entries {
	uint64_t at;
	uint32_t n, size;
};

static int keys_entries(struct walk *w, uint64_t keys, uint32_t cap, struct entries *e)
{
	const struct cpy_object_facts *f = w->f;
	uint8_t h[64];
	if (f->dk_indices > sizeof(h) || f->dk_nentries > sizeof(h) - 8 ||
	    f->dk_size > sizeof(h) - 8 || rd(w, keys, h, f->dk_indices))
		return -EIO;
	int64_t nentries;
	memcpy(&nentries, h + f->dk_nentries, 8);
	if (old_dicts(w->l)) {
		/* indices of 1, 2, 4 or 8 bytes by dk_size; entries of hash, key, value */
		int64_t size;
		memcpy(&size, h + f->dk_size, 8);
		if (size < 8 || size > (1 << 30) || (size & (size - 1)) || nentries > size)
			return -EIO;
		uint32_t width = size <= 0xff ? 1 : size <= 0xffff ? 2 : 4;
		e->at = keys + f->dk_indices + (uint64_t)size * width;
		e->size = 24;
	} else {
		/* dk_log2_size, dk_log2_index_bytes, dk_kind (0: general entries of hash, key,
		 * value; 1 and 2, unicode and split: key, value) */
		uint8_t log2 = h[f->dk_size], log2_index = h[f->dk_size + 1], kind = h[f->dk_size + 2];
		if (log2 < 3 || log2 > 30 || log2_index < log2 || log2_index > log2 + 2 ||
		    kind > 2 || nentries > (1 << log2))
			return -EIO;
		e->at = keys + f->dk_indices + (1ull << log2_index);
		e->size = kind ? 16 : 24;
	}
	if (nentries < 0 || nentries > cap)
		return -EIO;
	e->n = (uint32_t)nentries;
	return 0;
}

/* Called with each entry's key and value (both non-NULL): 1 stops the walk (found), 0 goes
 * on, < 0 fails it. */
typedef int (*entry_fn)(struct walk *w, uint64_t key, uint64_t value, void *ctx);

/* The entries of keys, their values in the entries or (split keys) in the values array at
 * values, whose pointers number at most nvalues. */
static int each_entry(struct walk *w, uint64_t keys, uint64_t values, uint32_t nvalues,
		      uint32_t cap, entry_fn fn, void *ctx)
{
	struct entries e;
	int r = keys_entries(w, keys, cap, &e);
	if (r)
		return r;
	if (values && e.n > nvalues)
		e.n = nvalues;
	uint64_t buf[CHUNK * 3], vals[CHUNK];
	uint32_t words = e.size / 8;
	for (uint32_t i = 0; i < e.n; i += CHUNK) {
		uint32_t k = e.n - i < CHUNK ? e.n - i : CHUNK;
		if (rd(w, e.at + (uint64_t)i * e.size, buf, (size_t)k * e.size) ||
		    (values && rd(w, values + 8ull * i, vals, 8ull * k)))
			return -EIO;
		for (uint32_t j = 0; j < k; j++) {
			/* the key is the entry's last word but for the value, if it has one */
			uint64_t key = buf[j * words + words - 2];
			uint64_t value = values ? vals[j] : buf[j * words + words - 1];
			if (!key || !value)
				continue;
			if ((r = fn(w, key, value, ctx)))
				return r;
		}
	}
	return 0;
}

static int dict_each(struct walk *w, uint64_t dict, uint32_t cap, entry_fn fn, void *ctx)
{
	uint64_t keys, values;
	if (rd_u64(w, dict + w->f->ma_keys, &keys) || rd_u64(w, dict + w->f->ma_values, &values))
		return -EIO;
	return each_entry(w, keys, values ? values + w->f->values : 0, cap, cap, fn, ctx);
}

/* The text of the str at addr as UTF-8 in out (cap bytes): 0, or -EIO. *cut when it was
 * longer. */
static int str_text(struct walk *w, uint64_t addr, char *out, size_t cap, bool *cut)
{
	uint8_t buf[128 + 4 * CPY_THREAD_NAME_MAX];
	size_t head = w->l->unicode.compact_size, off, len, n;
	unsigned kind;
	if (head > 128 || (rd(w, addr, buf, head) && rd(w, addr, buf, head = w->l->unicode.ascii_size)))
		return -EIO;
	if (cpy_unicode_extent(w->l, buf, head, &off, &len, &kind))
		return -EIO;
	*cut = len > 4 * (cap - 1);
	n = off + (*cut ? 4 * (cap - 1) : len);
	if (n > sizeof(buf) || rd(w, addr, buf, n))
		return -EIO;
	bool more;
	size_t got;
	if (cpy_unicode_utf8(w->l, buf, n, out, cap, &got, &more))
		return -EIO;
	*cut |= more;
	return 0;
}

/* Whether the str at addr is name; a key that is no str is not. */
static bool str_is(struct walk *w, uint64_t addr, const char *name)
{
	char text[32];
	bool cut;
	return !str_text(w, addr, text, sizeof(text), &cut) && !cut && !strcmp(text, name);
}

struct find {
	const char *name;
	uint64_t value;
};

static int find_key(struct walk *w, uint64_t key, uint64_t value, void *ctx)
{
	struct find *f = ctx;
	if (!str_is(w, key, f->name))
		return 0;
	f->value = value;
	return 1;
}

/* The value of key name in the dict at dict: 1 and *value, 0 when absent, or -EIO. */
static int dict_get(struct walk *w, uint64_t dict, uint32_t cap, const char *name,
		    uint64_t *value)
{
	struct find f = { name, 0 };
	int r = dict_each(w, dict, cap, find_key, &f);
	*value = f.value;
	return r;
}

int cpy_threading_find(const struct cpy_layout *l, uint64_t runtime, cpy_read_fn read,
		       void *arg, struct cpy_threading *out)
{
	struct walk w;
	uint64_t interp, modules, module, mdict, active, type;
	if (walk_init(&w, l, read, arg) || !l->interp_modules)
		return -ENOENT;
	if (rd_u64(&w, runtime + l->runtime.interpreters_head, &interp))
		return -EIO;
	for (int i = 0; interp && i < MAX_INTERPS; i++) {
		int r;
		if (rd_u64(&w, interp + l->interp_modules, &modules))
			return -EIO;
		if (modules && rd_u64(&w, modules + l->object.ob_type, &out->dict_type))
			return -EIO;
		if (modules && (r = dict_get(&w, modules, MAX_MODULES, "threading", &module)) < 0)
			return r;
		if (modules && r == 1) {
			if (rd_u64(&w, module + w.f->md_dict, &mdict) ||
			    (r = dict_get(&w, mdict, MAX_ATTRS, "_active", &active)) < 0 ||
			    (r == 1 && rd_u64(&w, active + l->object.ob_type, &type)))
				return -EIO;
			if (r == 1 && type == out->dict_type) {
				out->active = active;
				return 0;
			}
		}
		if (rd_u64(&w, interp + l->interp.next, &interp))
			return -EIO;
	}
	return -ENOENT;
}

/* A Thread's two attributes. */
struct thread_attrs {
	uint64_t name, native_id;
};

static int attr_key(struct walk *w, uint64_t key, uint64_t value, void *ctx)
{
	struct thread_attrs *a = ctx;
	char text[32];
	bool cut;
	if (str_text(w, key, text, sizeof(text), &cut) || cut)
		return 0;
	if (!strcmp(text, "_name"))
		a->name = value;
	else if (!strcmp(text, "_native_id"))
		a->native_id = value;
	return a->name && a->native_id;
}

/* The attributes of the instance at obj, wherever its version keeps them. */
static int instance_attrs(struct walk *w, uint64_t obj, struct thread_attrs *a)
{
	uint64_t type, flags, ptr, head[2];
	int64_t basicsize, dictoffset;
	if (rd_u64(w, obj + w->l->object.ob_type, &type) ||
	    rd(w, type + w->f->tp_basicsize, &basicsize, 8) ||
	    rd_u64(w, type + w->f->tp_flags, &flags) ||
	    rd(w, type + w->f->tp_dictoffset, &dictoffset, 8))
		return -EIO;
	uint64_t keys_at = type + w->f->ht_cached_keys, values = 0, dict = 0, keys;
	uint32_t nvalues = MAX_ATTRS;
	if (old_dicts(w->l) || !(flags & TPFLAGS_MANAGED_DICT)) {
		if (dictoffset < 16 || dictoffset > (1 << 16) || dictoffset % 8 ||
		    rd_u64(w, obj + (uint64_t)dictoffset, &dict))
			return -EIO;
	} else if (w->l->variant == CPY_VARIANT_311) {
		if (rd(w, obj + MANAGED_VALUES_311, head, sizeof(head)))
			return -EIO;
		values = head[0];
		dict = head[1];
	} else if (w->l->variant == CPY_VARIANT_312) {
		if (rd_u64(w, obj + MANAGED_DICT, &ptr))
			return -EIO;
		if (ptr & 1)
			values = ptr + 1;
		else
			dict = ptr;
	} else {
		uint8_t vh[4];
		if (rd_u64(w, obj + MANAGED_DICT, &dict))
			return -EIO;
		if (!dict && flags & TPFLAGS_INLINE_VALUES) {
			/* inline values follow the object's fixed part, as many as their
			 * capacity (their first byte); valid while no dict took them over */
			if (basicsize < 16 || basicsize > (1 << 16) ||
			    rd(w, obj + (uint64_t)basicsize, vh, sizeof(vh)) || !vh[w->f->values_valid])
				return -EIO;
			values = obj + (uint64_t)basicsize + w->f->values;
			nvalues = vh[0];
		}
	}
	if (dict)
		return dict_each(w, dict, MAX_ATTRS, attr_key, a);
	if (!values || rd_u64(w, keys_at, &keys))
		return -EIO;
	return each_entry(w, keys, values, nvalues, MAX_ATTRS, attr_key, a);
}

/* A positive int that fits 32 bits: 0 and *v, or -EIO. */
static int int_value(struct walk *w, uint64_t addr, uint32_t *v)
{
	uint8_t buf[64];
	uint64_t size;
	if (w->f->ob_digit > sizeof(buf) - 8 || w->f->long_size > sizeof(buf) - 8 ||
	    rd(w, addr, buf, w->f->ob_digit + 8u))
		return -EIO;
	memcpy(&size, buf + w->f->long_size, 8);
	uint64_t ndigits = size;
	if (w->l->variant == CPY_VARIANT_312 || w->l->variant == CPY_VARIANT_313) {
		if (size & 3) /* zero or negative */
			return -EIO;
		ndigits = size >> 3;
	}
	if (ndigits < 1 || ndigits > 2)
		return -EIO;
	uint32_t d[2] = { 0, 0 };
	memcpy(d, buf + w->f->ob_digit, 4 * ndigits);
	uint64_t value = d[0] | (uint64_t)d[1] << LONG_SHIFT;
	if (d[0] >> LONG_SHIFT || d[1] >> LONG_SHIFT || !value || value > UINT32_MAX)
		return -EIO;
	*v = (uint32_t)value;
	return 0;
}

struct names {
	struct cpy_thread_name *out;
	size_t n, max;
};

static int thread_entry(struct walk *w, uint64_t key, uint64_t thread, void *ctx)
{
	(void)key;
	struct names *ns = ctx;
	struct thread_attrs a = { 0, 0 };
	struct cpy_thread_name *t = &ns->out[ns->n];
	bool cut;
	/* a thread whose attributes cannot be read is left out, not the others */
	if (instance_attrs(w, thread, &a) != 1 || int_value(w, a.native_id, &t->tid) ||
	    str_text(w, a.name, t->name, sizeof(t->name), &cut) || !t->name[0])
		return w->budget ? 0 : -EIO;
	return ++ns->n == ns->max;
}

int cpy_thread_names(const struct cpy_layout *l, const struct cpy_threading *t,
		     cpy_read_fn read, void *arg, struct cpy_thread_name *out, size_t max)
{
	struct walk w;
	uint64_t type;
	if (walk_init(&w, l, read, arg))
		return -ENOENT;
	if (rd_u64(&w, t->active + l->object.ob_type, &type) || type != t->dict_type)
		return -EIO;
	struct names ns = { out, 0, max };
	if (!max)
		return 0;
	int r = dict_each(&w, t->active, MAX_THREADS, thread_entry, &ns);
	return r < 0 ? r : (int)ns.n;
}
