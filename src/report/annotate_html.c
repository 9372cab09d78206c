/*
 * Annotated listing as one self-contained HTML page: no script, no external file. Heat is a
 * background whose strength follows the instruction's weight; the hottest instruction has
 * the anchor #hottest, linked from the header. Everything from the profile, the binary or a
 * source file goes through the XML escaper (which also repairs invalid UTF-8).
 */
#include "report/annotate_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "base/err.h"
#include "report/flamegraph_xml.h"

static const char style[] =
	"body { font: 14px/1.35 \"DejaVu Sans\", Verdana, sans-serif; margin: 1.5em; color: #222;"
	" background: #fbfaf7; }\n"
	"h1 { font-size: 1.3em; margin: 0 0 .3em; }\n"
	".meta { color: #555; margin: .2em 0; }\n"
	"table { border-collapse: collapse; font: 13px/1.3 \"DejaVu Sans Mono\", Menlo, monospace;"
	" margin-top: 1em; }\n"
	"th { text-align: left; color: #555; font-weight: normal; border-bottom: 1px solid #ccc;"
	" padding: 2px 10px; }\n"
	"td { padding: 1px 10px; white-space: pre; }\n"
	"td.n { text-align: right; }\n"
	"tr.src td { color: #1b6a7a; padding-top: 5px; }\n"
	"tr.h4 td, tr.h3 td { font-weight: bold; }\n"
	"td.bar span { display: inline-block; height: 9px; background: #8c1d0c; }\n";

/* Background per heat level 0..4: transparent to strong red. */
static const char *const heat_bg[5] = { "transparent", "#fbe3cf", "#f8c39f", "#f39a74",
					"#ea6a4c" };

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static void put_header(FILE *out, const struct annot_listing *l)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>tally annotate: ",
	      out);
	xml_put(out, l->name);
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", style);
	xml_put(out, l->name);
	fputs("</h1>\n", out);
	if (l->asked) {
		fputs("<p class=\"meta\">asked for <b>", out);
		xml_put(out, l->asked);
		fputs("</b>, which is inlined into this function</p>\n", out);
	}
	fputs("<p class=\"meta\">", out);
	xml_put(out, l->module);
	fprintf(out, " [0x%" PRIx64 ", 0x%" PRIx64 ")%s%s</p>\n", l->lo, l->hi, l->arch ? ", " : "",
		l->arch ? l->arch : "");
	fprintf(out, "<p class=\"meta\"><span id=\"weight\">%" PRId64 "</span> ", l->weight);
	xml_put(out, l->unit);
	fprintf(out, " on these instructions: %.2f%% of %" PRId64 "%s</p>\n",
		l->total ? 100.0 * (double)l->weight / (double)l->total : 0.0, l->total,
		l->max_weight > 0 ? " &#183; <a href=\"#hottest\">hottest instruction</a>" : "");
	if (l->no_disasm) {
		fputs("<p class=\"meta\">", out);
		xml_put(out, l->no_disasm);
		fputs(": the addresses that carry weight, without instructions</p>\n", out);
	}
	if (!l->has_source)
		fputs("<p class=\"meta\">no source positions (no line table for these addresses)</p>\n", out);
}

static void put_source(FILE *out, const struct annot_insn *in, struct annot_sources *src)
{
	size_t len = 0;
	const char *text = annot_source_line(src, in->file, in->line, &len);
	fputs("<tr class=\"src\"><td colspan=\"4\" title=\"", out);
	xml_put(out, in->file);
	fputs("\">", out);
	xml_put(out, base_name(in->file));
	fprintf(out, ":%" PRIu32, in->line);
	if (in->func) {
		fputs(" [inlined ", out);
		xml_put(out, in->func);
		fputc(']', out);
	}
	fputs("</td><td>", out);
	if (text)
		xml_putn(out, text, len);
	fputs("</td></tr>\n", out);
}

static void put_insn(FILE *out, const struct annot_listing *l, const struct annot_insn *in,
		     bool hottest)
{
	int heat = annot_heat(in->weight, l->max_weight);
	fprintf(out, "<tr class=\"h%d\"%s style=\"background:%s\" data-addr=\"%" PRIx64
		     "\" data-w=\"%" PRId64 "\">",
		heat, hottest ? " id=\"hottest\"" : "", heat_bg[heat], in->addr, in->weight);
	if (in->weight)
		fprintf(out, "<td class=\"n\">%.2f%%</td><td class=\"n\">%" PRId64 "</td>",
			l->weight ? 100.0 * (double)in->weight / (double)l->weight : 0.0, in->weight);
	else
		fputs("<td></td><td></td>", out);
	fputs("<td class=\"bar\">", out);
	if (in->weight > 0)
		fprintf(out, "<span style=\"width:%.1fpx\"></span>",
			1 + 59.0 * (double)in->weight / (double)l->max_weight);
	fprintf(out, "</td><td>%" PRIx64 ":</td><td>", in->addr);
	xml_put(out, in->text);
	fputs("</td></tr>\n", out);
}

int annot_write_html(FILE *out, const struct annot_listing *l)
{
	struct annot_sources *src = annot_sources_new();
	put_header(out, l);
	fputs("<table>\n<thead><tr><th>share</th><th>", out);
	xml_put(out, l->unit);
	fprintf(out, "</th><th></th><th>%s</th><th>instruction</th></tr></thead>\n<tbody>\n",
		l->bytecode ? "pc" : "address");
	const char *last_file = NULL;
	uint32_t last_line = 0;
	bool hottest_done = false;
	for (size_t i = 0; i < l->insns.n; i++) {
		const struct annot_insn *in = &l->insns.v[i];
		if (in->file && in->line && (in->line != last_line || !last_file || strcmp(in->file, last_file))) {
			put_source(out, in, src);
			last_file = in->file;
			last_line = in->line;
		}
		bool hottest = !hottest_done && in->weight > 0 && in->weight == l->max_weight;
		hottest_done |= hottest;
		put_insn(out, l, in, hottest);
	}
	fputs("</tbody>\n</table>\n</body>\n</html>\n", out);
	annot_sources_free(src);
	if (fflush(out) || ferror(out))
		return err_set(-EIO, "writing the annotation: %s", strerror(errno));
	return 0;
}
