/*
 * Reading the public API's options structs by their size (see opts.h). Every version of a
 * struct starts with sz, so reading it is always in bounds; nothing past sz is read.
 */
#include <errno.h>
#include <string.h>

#include "base/err.h"
#include "base/opts.h"

int opts_read(void *known, size_t size, size_t fields_end, const void *opts, const char *name)
{
	memset(known, 0, size);
	if (!opts)
		return 0;
	size_t sz = *(const size_t *)opts;
	if (sz < sizeof(sz))
		return err_set(-EINVAL, "%s: sz %zu does not hold sz itself (%zu bytes)", name, sz,
			       sizeof(sz));
	const unsigned char *bytes = opts;
	for (size_t i = fields_end; i < sz; i++)
		if (bytes[i])
			return err_set(-EINVAL,
				       "%s: byte %zu is not zero, and this version's fields end at byte %zu",
				       name, i, fields_end);
	memcpy(known, opts, sz < fields_end ? sz : fields_end);
	return 0;
}
