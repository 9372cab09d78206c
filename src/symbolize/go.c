/*
 * Go binaries without DWARF (go build -ldflags='-s -w', the usual release build): functions,
 * files and lines from .gopclntab (elf/gopclntab.h), the table Go's runtime reads for its own
 * tracebacks. Only where the module has no DWARF: Go's DWARF says the same, and more.
 * Inlined calls are expanded from the function's inline tree (Go 1.18 on), as Go's own
 * traceback expands them.
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

size_t sym_go_frames(struct sym_module *m, uint64_t addr, struct tally_frame *frames,
		     size_t max)
{
	struct elf_gofunc fn;
	struct elf_goframe go[SYM_GO_MAX_FRAMES];
	if (!elf_gopclntab_find(m->go, addr, &fn) || !fn.name)
		return 0;
	size_t n = elf_gopclntab_frames(m->go, &fn, addr, go,
					max < SYM_GO_MAX_FRAMES ? max : SYM_GO_MAX_FRAMES);
	for (size_t i = 0; i < n; i++)
		frames[i] = (struct tally_frame){ .function = go[i].name, .file = go[i].file,
						  .line = go[i].line };
	frames[n - 1].sym_start = fn.entry;
	return n;
}

void sym_go_free(struct sym_module *m)
{
	elf_gopclntab_close(m->go);
	m->go = NULL;
}
