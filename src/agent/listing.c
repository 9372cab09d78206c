/*
 * opts.listing: the registered functions' instructions as text, in the layout of `objdump
 * -dl` (a "START <NAME>:" line per function, a "FILE:LINE" line where the line changes, a
 * "  PC:<TAB>TEXT" line per instruction, pcs in hex), which `tally annotate --listing`
 * reads to put each bytecode pc's weight next to its text. Unregistered functions are
 * written too: profiles taken before they went away still name them. One line is one
 * record, so line breaks in names and texts become '_' and ' '.
 */
#include "agent/agent_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/err.h"

static void put_one_line(FILE *out, const char *s, char instead)
{
	for (; *s; s++)
		fputc(*s == '\n' || *s == '\r' || (*s == '\t' && instead == ' ') ? instead : *s, out);
}

static void put_function(FILE *out, const struct agent_fn *f)
{
	fprintf(out, "\n%016" PRIx64 " <", f->start);
	put_one_line(out, f->name, '_');
	fputs(">:\n", out);
	uint32_t last = 0;
	for (size_t i = 0; i < f->ninsns; i++) {
		uint32_t line = f->file ? agent_fn_line(f, f->insns[i].pc) : 0;
		if (line && line != last) {
			put_one_line(out, f->file, '_');
			fprintf(out, ":%" PRIu32 "\n", line);
		}
		last = line;
		fprintf(out, "%8" PRIx64 ":\t", f->insns[i].pc);
		put_one_line(out, f->insns[i].text, ' ');
		fputc('\n', out);
	}
}

int agent_listing_write(struct tally_agent *a)
{
	char *path = agent_path(a->o.listing, getpid());
	struct afile *af = NULL;
	int rc = path ? afile_open(path, 0, &af) : -ENOMEM;
	free(path);
	if (rc)
		return rc;
	FILE *out = afile_stream(af);
	fputs("tally agent listing: each function's instructions, as objdump -dl lays them out\n",
	      out);
	for (uint32_t id = 1; id < a->next_id; id++) {
		const struct agent_fn *f = agent_fn_get(a, id);
		if (f && f->ninsns)
			put_function(out, f);
	}
	for (size_t i = 0; i < a->retired.n; i++)
		if (a->retired.v[i]->ninsns)
			put_function(out, a->retired.v[i]);
	return afile_commit(af);
}
