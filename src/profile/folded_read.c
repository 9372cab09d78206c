/*
 * Folded stacks (FlameGraph's stackcollapse output): one "root;...;leaf COUNT" per line.
 * Frames suffixed "_[i]" are read as inline and "_[k]" as kernel frames, the suffixes
 * tally's own export writes. Bytes in names are kept as they are (not necessarily UTF-8);
 * a line that does not end in a count, an empty frame name or a NUL byte is an error
 * naming the line.
 */
#include "profile/read.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "base/vec.h"
#include "profile/profile.h"

/* The next line without its end (LF or CRLF); NULL at the end of the input. */
static const char *next_line(struct cur *c, size_t *len)
{
	if (cur_eof(c))
		return NULL;
	const uint8_t *nl = memchr(c->p, '\n', cur_left(c));
	size_t n = nl ? (size_t)(nl - c->p) : cur_left(c);
	const char *s = (const char *)cur_bytes(c, n);
	if (nl)
		cur_skip(c, 1);
	if (n && s[n - 1] == '\r')
		n--;
	*len = n;
	return s;
}

/* Splits "STACK COUNT"; -1 when the line does not end in a decimal count. */
static int split_count(const char *s, size_t len, size_t *stack_len, int64_t *count)
{
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	size_t i = len;
	while (i && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	/* Up to 19 digits: any count tally writes (a profile's total stays below 2^63). */
	if (i == len || len - i > 19 || !i || (s[i - 1] != ' ' && s[i - 1] != '\t'))
		return -1;
	int64_t v = 0;
	for (size_t k = i; k < len; k++) {
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[k] - '0', &v))
			return -1;
	}
	*count = v;
	while (i && (s[i - 1] == ' ' || s[i - 1] == '\t'))
		i--;
	*stack_len = i;
	return 0;
}

static uint32_t frame_of(struct prof *p, const char *name, size_t len)
{
	struct prof_frame_desc d = { .kind = PROF_NATIVE, .module = PROF_NONE };
	if (len > 4 && name[len - 4] == '_' && name[len - 3] == '[' && name[len - 1] == ']' &&
	    strchr("ikjpr", name[len - 2]) && name[len - 2]) {
		d.kind = name[len - 2] == 'i' ? PROF_INLINE
			 : name[len - 2] == 'k' ? PROF_KERNEL
			 : name[len - 2] == 'j' ? PROF_JIT
			 : name[len - 2] == 'r' ? PROF_RUBY : PROF_PYTHON;
		len -= 4;
	}
	uint32_t fn = prof_intern(p, name, len);
	if (fn == PROF_NONE)
		return PROF_NONE;
	d.function = prof_str(p, fn);
	return prof_frame(p, &d);
}

static int read_line(struct prof *p, const char *s, size_t len, void *stackv)
{
	VEC(struct prof_loc) *stack = stackv;
	size_t slen;
	int64_t count;
	if (split_count(s, len, &slen, &count))
		return err_set(-EINVAL, "expected 'frame;frame;... COUNT'");
	stack->n = 0;
	for (size_t a = 0; a <= slen;) {
		const char *semi = memchr(s + a, ';', slen - a);
		size_t b = semi ? (size_t)(semi - s) : slen;
		if (b == a)
			return err_set(-EINVAL, "empty frame name at column %zu", a + 1);
		struct prof_loc *l = vec_push(stack);
		if (!l)
			return err_set(-ENOMEM, "out of memory");
		l->frame = frame_of(p, s + a, b - a);
		if (l->frame == PROF_NONE)
			return -EINVAL;
		a = b + 1;
	}
	/* Folded lines list the root first; the model wants the innermost frame first. */
	for (size_t i = 0, j = stack->n - 1; i < j; i++, j--) {
		struct prof_loc t = stack->v[i];
		stack->v[i] = stack->v[j];
		stack->v[j] = t;
	}
	return prof_add_stack(p, stack->v, stack->n, &count);
}

bool prof_sniff_folded(const void *data, size_t size)
{
	/* The first line whole, however long (a stack of a million frames is one line), but
	 * only its first 64 KiB checked for text: the count is at its end. */
	struct cur c = cur_make(data, size, false);
	size_t len, slen;
	int64_t count;
	const char *s;
	while ((s = next_line(&c, &len)) && !len)
		;
	return s && !memchr(s, 0, len < 65536 ? len : 65536) && !split_count(s, len, &slen, &count);
}

int prof_read_folded(const char *name, const void *data, size_t size, struct prof **out)
{
	struct prof *p;
	VEC(struct prof_loc) stack = { 0 };
	int rc = prof_new(&p);
	if (rc)
		return err_prefix(rc, "%s", name);
	rc = prof_add_metric(p, "samples", "count");
	rc = rc < 0 ? rc : prof_set_source(p, name);
	struct cur c = cur_make(data, size, false);
	size_t len, lineno = 0;
	const char *s;
	while (!rc && (s = next_line(&c, &len))) {
		lineno++;
		if (len)
			rc = read_line(p, s, len, &stack);
	}
	if (rc)
		err_prefix(rc, "%s: line %zu", name, lineno);
	else if (prof_is_empty(p))
		rc = err_set(-EINVAL, "%s: no stacks (empty profile)", name);
	vec_free(&stack);
	if (!rc)
		rc = prof_finish(p);
	if (rc) {
		prof_free(p);
		return rc;
	}
	*out = p;
	return 0;
}
