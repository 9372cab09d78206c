/*
 * Options structs of the public API, read as libbpf reads its opts. Each starts with
 * `size_t sz`, the size of the struct the caller was compiled with. A shorter one (an
 * older header) leaves the fields past its end reading as zero; past the last field this
 * library knows, every byte up to sz must be zero, tail padding included: a newer header
 * may have put a field there, and an option this version cannot honour is refused.
 */
#ifndef TALLY_BASE_OPTS_H
#define TALLY_BASE_OPTS_H

#include <stddef.h>

/* The offset just past field of type: the least size that holds it. */
#define OFFSETOF_END(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

/* Copies the caller's opts (NULL: all defaults) into known, a struct of size bytes whose
 * last field ends at fields_end; what the caller's sz leaves out reads as zero. -EINVAL,
 * with a message naming `name`, when sz is smaller than the sz field itself (0 included)
 * or when a byte from fields_end up to sz is not zero. */
int opts_read(void *known, size_t size, size_t fields_end, const void *opts, const char *name);

/* opts_read for a struct tally_... type whose last field is last (a field added to the
 * struct becomes the last here), checking both pointers are of that type. */
#define OPTS_READ(type, last, known, opts)                                                   \
	opts_read((struct type *){ known }, sizeof(struct type), OFFSETOF_END(struct type, last), \
		  (const struct type *){ opts }, #type)

#endif
