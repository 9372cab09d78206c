/*
 * Reading some of a DIE's attributes. Decoding every attribute (dwarf_die_read) was most
 * of the cost of a walk that wants a few attributes of many DIEs: the symbolizer's index
 * wants the ranges, call site and links of each subprogram, not its name, type or frame
 * base. The others are stepped over, by their size where the abbreviation knows it.
 */
#include "dwarf/dwarf.h"
#include "dwarf/dwarf_internal.h"

_Static_assert(DWARF_MAX_ATTRS <= 64, "a want mask has a bit per kept attribute");

/* Steps over attribute at (not decoded). */
static int skip(struct dwarf *d, const struct dwarf_unit *u, struct cur *c,
		const struct dwarf_abbrev_attr *at)
{
	if (u->abbrevs_fit && at->size >= 0) {
		cur_skip(c, (uint64_t)at->size);
		return 0;
	}
	return dwarf_form_skip(d, u, c, at->form);
}

int dwarf_die_read_some(struct dwarf *d, struct dwarf_unit *u, uint64_t off, uint64_t want,
			struct dwarf_die *die, uint64_t *next)
{
	struct cur c;
	int err = dwarf_die_begin(d, u, off, die, &c);
	if (err)
		return err;
	const struct dwarf_abbrev *a = die->abbrev;
	if (a) {
		die->nvals = a->nattrs < DWARF_MAX_ATTRS ? a->nattrs : DWARF_MAX_ATTRS;
		for (uint16_t i = 0; i < a->nattrs; i++) {
			const struct dwarf_abbrev_attr *at = &a->attrs[i];
			if (i < DWARF_MAX_ATTRS && (want >> i & 1)) {
				err = dwarf_form_read(d, u, &c, at->form, dwarf_attr_const(a, at),
						      &die->vals[i]);
			} else {
				if (i < DWARF_MAX_ATTRS)
					die->vals[i].cls = DWC_NONE;
				err = skip(d, u, &c, at);
			}
			if (err || !cur_ok(&c))
				return dwarf_info_bad(d, off,
						      cur_ok(&c) ? "DIE uses an unknown attribute form"
								 : "DIE runs past the end of its unit");
		}
	}
	*next = cur_off(&c);
	return 0;
}
