/*
 * Annotated listing as terminal text. The hottest instructions stand out twice: a bar
 * column (works in any pager or log) and, on a terminal, ANSI colour by heat (red for the
 * hottest, like perf annotate). A source line is printed above the first instruction of
 * each run that comes from it; text from source files and names is printed with control
 * characters (C0 and C1) replaced, so a hostile file cannot drive the terminal.
 */
#include "report/annotate_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "base/err.h"
#include "base/utf8.h"

static const char *const heat_colour[5] = { "\033[2m", "\033[32m", "\033[33m", "\033[31m",
					    "\033[1;31m" };
#define SOURCE_COLOUR "\033[36m"
#define RESET "\033[0m"

/* Text from files and profiles: control characters and bytes that are not UTF-8 (a lone
 * 0x9b is CSI to some terminals) become '?'. */
static void put_safe(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	if (n == SIZE_MAX)
		n = strlen(str);
	while (i < n && s[i]) {
		size_t len = utf8_decode(s + i, n - i, NULL);
		if (!len || s[i] < 0x20 || s[i] == 0x7f || (s[i] == 0xc2 && s[i + 1] < 0xa0))
			fputc(s[i] == '\t' ? ' ' : '?', out);
		else
			fwrite(s + i, 1, len, out);
		i += len ? len : 1;
	}
}

static void put_count(FILE *out, int64_t v, int width)
{
	char digits[32], grouped[48];
	int n = snprintf(digits, sizeof(digits), "%" PRId64, v), k = 0;
	for (int i = 0; i < n; i++) {
		if (i && digits[i - 1] != '-' && (n - i) % 3 == 0)
			grouped[k++] = ',';
		grouped[k++] = digits[i];
	}
	grouped[k] = 0;
	fprintf(out, "%*s", width, grouped);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static void put_source(FILE *out, const struct annot_insn *in, struct annot_sources *src,
		       bool color)
{
	size_t len = 0;
	const char *text = annot_source_line(src, in->file, in->line, &len);
	if (color)
		fputs(SOURCE_COLOUR, out);
	fprintf(out, "%36s", "");
	put_safe(out, base_name(in->file), SIZE_MAX);
	fprintf(out, ":%" PRIu32, in->line);
	if (in->func) {
		fputs(" [inlined ", out);
		put_safe(out, in->func, SIZE_MAX);
		fputc(']', out);
	}
	if (text) {
		while (len && (*text == ' ' || *text == '\t'))
			text++, len--;
		fputs("   ", out);
		put_safe(out, text, len);
	}
	fputs(color ? RESET "\n" : "\n", out);
}

static void put_header(FILE *out, const struct annot_listing *l)
{
	fputs("function ", out);
	put_safe(out, l->name, SIZE_MAX);
	if (l->asked) {
		fputs(" (into which ", out);
		put_safe(out, l->asked, SIZE_MAX);
		fputs(" was inlined)", out);
	}
	fprintf(out, "\n  in ");
	put_safe(out, l->module, SIZE_MAX);
	fprintf(out, " [0x%" PRIx64 ", 0x%" PRIx64 ")", l->lo, l->hi);
	if (l->arch)
		fprintf(out, ", %s", l->arch);
	fputs("\n  ", out);
	put_count(out, l->weight, 0);
	fprintf(out, " %s on these instructions: %.2f%% of ", l->unit,
		l->total ? 100.0 * (double)l->weight / (double)l->total : 0.0);
	put_count(out, l->total, 0);
	fputc('\n', out);
	if (l->no_disasm) {
		fputs("  ", out);
		put_safe(out, l->no_disasm, SIZE_MAX);
		fputs(": listing the addresses that carry weight, without instructions\n", out);
	}
	if (!l->has_source)
		fputs("  no source positions (no line table for these addresses)\n", out);
	fputc('\n', out);
}

int annot_write_text(FILE *out, const struct annot_listing *l, bool color)
{
	struct annot_sources *src = annot_sources_new();
	put_header(out, l);
	fprintf(out, "%8s %10s %-8s  %6s   %s\n", "share", l->unit, "", l->bytecode ? "pc" : "addr",
		"instruction");
	const char *last_file = NULL;
	uint32_t last_line = 0;
	for (size_t i = 0; i < l->insns.n; i++) {
		const struct annot_insn *in = &l->insns.v[i];
		if (in->file && in->line && (in->line != last_line || !last_file || strcmp(in->file, last_file))) {
			put_source(out, in, src, color);
			last_file = in->file;
			last_line = in->line;
		}
		int heat = annot_heat(in->weight, l->max_weight);
		char bar[9] = "";
		if (in->weight > 0) {
			int n = (int)(8.0 * (double)in->weight / (double)l->max_weight + 0.999);
			memset(bar, '#', (size_t)(n > 8 ? 8 : n < 1 ? 1 : n));
			bar[n > 8 ? 8 : n < 1 ? 1 : n] = 0;
		}
		if (color)
			fputs(heat_colour[heat], out);
		if (in->weight)
			fprintf(out, "%7.2f%% ", l->weight ? 100.0 * (double)in->weight / (double)l->weight : 0.0);
		else
			fprintf(out, "%8s ", "");
		if (in->weight)
			put_count(out, in->weight, 10);
		else
			fprintf(out, "%10s", "");
		fprintf(out, " %-8s  %6" PRIx64 ":  ", bar, in->addr);
		put_safe(out, in->text, SIZE_MAX);
		fputs(color ? RESET "\n" : "\n", out);
	}
	annot_sources_free(src);
	if (fflush(out) || ferror(out))
		return err_set(-EIO, "writing the annotation: %s", strerror(errno));
	return 0;
}
