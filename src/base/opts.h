/*
 * Options structs of the public API, read as libbpf reads its opts. Each starts with
 * `size_t sz`, the size of the struct the caller was compiled with. A shorter one (an
 * older header) leaves the fields past its end reading as zero; a longer one (a newer
 * header) is accepted only when every byte past the fields this library knows is zero, so
 * that asking for something this version cannot do fails instead of being ignored.
 */
#ifndef TALLY_BASE_OPTS_H
#define TALLY_BASE_OPTS_H

#include <stddef.h>

/* The offset just past field of type: the least size that holds it. */
#define OFFSETOF_END(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

/* Copies the caller's opts (NULL: all defaults) into known, size bytes of the struct as
 * this library declares it, zero past the caller's sz. -EINVAL, with a message naming
 * `name`, when sz is smaller than the sz field itself (0 included) or when a byte past
 * size is not zero. */
int opts_read(void *known, size_t size, const void *opts, const char *name);

/* opts_read for a struct tally_... type, checking both pointers are of that type. */
#define OPTS_READ(type, known, opts) \
	opts_read((struct type *){ known }, sizeof(struct type), (const struct type *){ opts }, #type)

#endif
