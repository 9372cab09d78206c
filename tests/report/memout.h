/*
 * An output written into memory, for the unit tests of the writers: out_open gives the
 * FILE a writer takes, out_close the text it wrote (the caller frees it). Included after
 * <cmocka.h>.
 */
#ifndef TALLY_TESTS_REPORT_MEMOUT_H
#define TALLY_TESTS_REPORT_MEMOUT_H

#include <stdio.h>

struct out {
	char *buf;
	size_t len;
	FILE *f;
};

static inline FILE *out_open(struct out *o)
{
	o->buf = NULL;
	o->len = 0;
	o->f = open_memstream(&o->buf, &o->len);
	assert_non_null(o->f);
	return o->f;
}

static inline char *out_close(struct out *o)
{
	fclose(o->f);
	return o->buf;
}

#endif
