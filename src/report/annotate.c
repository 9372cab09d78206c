/*
 * tally annotate's entry point: build the listing, print it as text or HTML.
 */
#include "report/annotate_impl.h"

int rep_annotate(FILE *out, const struct prof *p, const struct rep_annot_opts *o)
{
	struct annot_listing l;
	int rc = annot_build(p, o, &l);
	if (!rc)
		rc = o->html ? annot_write_html(out, &l) : annot_write_text(out, &l, o->color);
	annot_free(&l);
	return rc;
}
