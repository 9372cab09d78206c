/*
 * Go binaries without DWARF (go build -ldflags='-s -w', the usual release build): functions,
 * files and lines from .gopclntab (elf/gopclntab.h), the table Go's runtime reads for its own
 * tracebacks. Only where the module has no DWARF: Go's DWARF says the same, and more.
 * Inlined calls are not expanded (their tree lies outside the table, behind funcdata).
 */
#include <errno.h>
#include <stdio.h>

#include "base/err.h"
#include "symbolize/symbolize_internal.h"

void sym_go_open(struct sym_module *m, const struct elf_file *src)
{
	if (src)
		return;
	int err = elf_gopclntab_open(m->elf, &m->go);
	if (err && err != -ENOENT)
		fprintf(stderr, "tally: warning: %s; using symbol tables only\n", err_msg());
	if (err) {
		m->go = NULL;
		err_clear();
	}
}

bool sym_go_frame(struct sym_module *m, uint64_t addr, struct tally_frame *f)
{
	struct elf_gofunc fn;
	if (!elf_gopclntab_find(m->go, addr, &fn) || !fn.name)
		return false;
	*f = (struct tally_frame){ .function = fn.name, .sym_start = fn.entry };
	elf_gopclntab_line(m->go, &fn, addr, &f->file, &f->line);
	return true;
}

void sym_go_free(struct sym_module *m)
{
	elf_gopclntab_close(m->go);
	m->go = NULL;
}
