/*
 * Syscall tables: a sorted array searched by hash (a program's calls are resolved once at
 * load, so lookups are not on the interpreter's path).
 */
#include <errno.h>
#include <string.h>

#include "base/vec.h"
#include "sbpf/isa.h"
#include "sbpf/syscall.h"

int sbpf_syscalls_add(struct sbpf_syscalls *s, const char *name, sbpf_syscall_fn fn)
{
	uint32_t hash = sbpf_hash(name, strlen(name));
	if (sbpf_syscalls_find(s, hash))
		return -EEXIST;
	if (!vec_push(s))
		return -ENOMEM;
	size_t i = s->n - 1;
	while (i > 0 && s->v[i - 1].hash > hash) {
		s->v[i] = s->v[i - 1];
		i--;
	}
	s->v[i] = (struct sbpf_syscall){ name, hash, fn };
	return 0;
}

const struct sbpf_syscall *sbpf_syscalls_find(const struct sbpf_syscalls *s, uint32_t hash)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->v[mid].hash == hash)
			return &s->v[mid];
		if (s->v[mid].hash < hash)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void sbpf_syscalls_free(struct sbpf_syscalls *s)
{
	vec_free(s);
}
