/*
 * The test driver of the scripts in tests/cpython, over src/cpython as the recorder and the
 * report use it:
 *   cpy_check layout ELF [DIR]    one "name value" line per field of struct cpy_layout
 *                                 (DIR: a debug directory to look in by build-id)
 *   cpy_check lines FILE          the line of every instruction of the code objects in FILE
 *   cpy_check unicode ELF FILE    the text of the str objects in FILE
 *   cpy_check is ELF...           "ELF yes" or "ELF no": whether it is the interpreter
 * FILE holds what python3.11 wrote: records of whitespace-separated fields (see the
 * scripts). lines and unicode print one line per mismatch and exit 1 when there is any.
 * Exit 1 with tally's message when the layout is refused.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "cpython/code.h"
#include "cpython/layout.h"

static int load(const char *path, const char *debug_dir, struct cpy_layout *l)
{
	struct cpy_layout_opts opts = { .sz = sizeof(opts), .debug_dir = debug_dir };
	l->sz = sizeof(*l);
	if (cpy_layout_load(path, &opts, l)) {
		fprintf(stderr, "tally: %s\n", err_msg());
		return 1;
	}
	return 0;
}

/* Decodes a hex field into a malloc'd buffer: its length, or -1. */
static long unhex(const char *hex, uint8_t **out)
{
	size_t n = strlen(hex);
	if (n % 2 || !(*out = malloc(n / 2 + 1)))
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned b;
		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -1;
		(*out)[i] = (uint8_t)b;
	}
	return (long)(n / 2);
}

/* Records "NAME FIRSTLINENO TABLE_HEX NUNITS LINE..." (LINE -1 for none): every code
 * unit's line, from co_positions(). */
static int check_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return perror(path), 1;
	char name[512], *hex = malloc(1 << 20);
	int32_t first;
	long nunits, bad = 0, codes = 0, units = 0;
	while (hex && fscanf(f, "%511s %" SCNd32 " %1048575s %ld", name, &first, hex, &nunits) == 4) {
		uint8_t *table;
		long len = unhex(strcmp(hex, "-") ? hex : "", &table);
		if (len < 0)
			return fprintf(stderr, "%s: bad table hex\n", name), 1;
		for (long i = 0; i < nunits; i++) {
			int32_t want, got = 0;
			if (fscanf(f, "%" SCNd32, &want) != 1)
				return fprintf(stderr, "%s: short record\n", name), 1;
			int err = cpy_linetable_line(table, (size_t)len, first, (int32_t)i, &got);
			if (err || got != want) {
				if (bad++ < 20)
					printf("%s: unit %ld: line %d (error %d), python says %d\n", name,
					       i, got, err, want);
			}
		}
		int32_t past;
		if (cpy_linetable_line(table, (size_t)len, first, (int32_t)nunits, &past) != -ENOENT &&
		    bad++ < 20)
			printf("%s: unit %ld past the end has a line\n", name, nunits);
		free(table);
		codes++;
		units += nunits;
	}
	fclose(f);
	free(hex);
	printf("%ld code objects, %ld code units, %ld mismatches\n", codes, units, bad);
	return bad || !codes;
}

/* Records "OBJECT_HEX UTF8_HEX": a str object's bytes (ctypes.string_at(id(s), size)) and
 * its text as Python encodes it (lone surrogates as U+FFFD). */
static int check_unicode(const char *elf, const char *path)
{
	struct cpy_layout l;
	if (load(elf, NULL, &l))
		return 1;
	FILE *f = fopen(path, "r");
	if (!f)
		return perror(path), 1;
	char *objhex = malloc(1 << 20), *wanthex = malloc(1 << 20);
	long bad = 0, n = 0;
	while (objhex && wanthex && fscanf(f, "%1048575s %1048575s", objhex, wanthex) == 2) {
		uint8_t *obj, *want;
		long objlen = unhex(objhex, &obj), wantlen = unhex(strcmp(wanthex, "-") ? wanthex : "", &want);
		if (objlen < 0 || wantlen < 0)
			return fprintf(stderr, "bad hex\n"), 1;
		size_t cap = (size_t)wantlen + 1, got_len;
		char *got = malloc(cap);
		bool cut;
		int err = got ? cpy_unicode_utf8(&l, obj, (size_t)objlen, got, cap, &got_len, &cut) : -ENOMEM;
		if (err || cut || got_len != (size_t)wantlen || memcmp(got, want, got_len)) {
			if (bad++ < 20)
				printf("string %ld: error %d cut %d: got %zu bytes \"%s\", want %ld\n", n,
				       err, err ? 0 : cut, err ? 0 : got_len, err ? "" : got, wantlen);
		}
		free(got);
		free(obj);
		free(want);
		n++;
	}
	fclose(f);
	free(objhex);
	free(wanthex);
	printf("%ld strings, %ld mismatches\n", n, bad);
	return bad || !n;
}

static int print_layout(const char *path, const char *debug_dir)
{
	struct cpy_layout l;
	if (load(path, debug_dir, &l))
		return 1;
	printf("version_hex %" PRIu32 "\n", l.version_hex);
	printf("runtime_addr %" PRIu64 "\ncode_type_addr %" PRIu64 "\n", l.runtime_addr,
	       l.code_type_addr);
	printf("eval_lo %" PRIu64 "\neval_hi %" PRIu64 "\n", l.eval_lo, l.eval_hi);
	printf("eval_cold_lo %" PRIu64 "\neval_cold_hi %" PRIu64 "\n", l.eval_cold_lo,
	       l.eval_cold_hi);
#define P(name, v) printf("%s %" PRIu32 "\n", name, (uint32_t)(v))
	P("_PyRuntimeState.interpreters.head", l.runtime.interpreters_head);
	P("PyInterpreterState.next", l.interp.next);
	P("PyInterpreterState.threads.head", l.interp.threads_head);
	P("PyThreadState.next", l.thread.next);
	P("PyThreadState.interp", l.thread.interp);
	P("PyThreadState.native_thread_id", l.thread.native_thread_id);
	P("PyThreadState.thread_id", l.thread.thread_id);
	P("PyThreadState.cframe", l.thread.cframe);
	P("_PyCFrame.current_frame", l.cframe.current_frame);
	P("_PyInterpreterFrame.f_code", l.frame.f_code);
	P("_PyInterpreterFrame.previous", l.frame.previous);
	P("_PyInterpreterFrame.prev_instr", l.frame.prev_instr);
	P("_PyInterpreterFrame.is_entry", l.frame.is_entry);
	P("_PyInterpreterFrame.owner", l.frame.owner);
	P("PyCodeObject.co_qualname", l.code.qualname);
	P("PyCodeObject.co_name", l.code.name);
	P("PyCodeObject.co_filename", l.code.filename);
	P("PyCodeObject.co_firstlineno", l.code.firstlineno);
	P("PyCodeObject.co_linetable", l.code.linetable);
	P("PyCodeObject.co_code_adaptive", l.code.code_adaptive);
	P("PyCodeObject._co_firsttraceable", l.code.firsttraceable);
	P("PyObject.ob_type", l.object.ob_type);
	P("PyVarObject.ob_size", l.object.ob_size);
	P("PyBytesObject.ob_sval", l.object.bytes_sval);
	P("sizeof.PyASCIIObject", l.unicode.ascii_size);
	P("sizeof.PyCompactUnicodeObject", l.unicode.compact_size);
	P("PyASCIIObject.length", l.unicode.length);
	P("PyASCIIObject.state.kind.bit", l.unicode.kind.bit_offset);
	P("PyASCIIObject.state.kind.bits", l.unicode.kind.bit_size);
	P("PyASCIIObject.state.compact.bit", l.unicode.compact.bit_offset);
	P("PyASCIIObject.state.compact.bits", l.unicode.compact.bit_size);
	P("PyASCIIObject.state.ascii.bit", l.unicode.ascii.bit_offset);
	P("PyASCIIObject.state.ascii.bits", l.unicode.ascii.bit_size);
	P("PyASCIIObject.state.ready.bit", l.unicode.ready.bit_offset);
	P("PyASCIIObject.state.ready.bits", l.unicode.ready.bit_size);
	P("PyCompactUnicodeObject.utf8_length", l.unicode.utf8_length);
	P("PyCompactUnicodeObject.utf8", l.unicode.utf8);
	return 0;
}

static int print_is_interpreter(int n, char **paths)
{
	for (int i = 0; i < n; i++) {
		struct elf_file *elf;
		if (elf_open(paths[i], &elf))
			return fprintf(stderr, "tally: %s\n", err_msg()), 1;
		printf("%s %s\n", paths[i], cpy_is_interpreter(elf) ? "yes" : "no");
		elf_close(elf);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "is"))
		return print_is_interpreter(argc - 2, argv + 2);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "layout"))
		return print_layout(argv[2], argc == 4 ? argv[3] : NULL);
	if (argc == 3 && !strcmp(argv[1], "lines"))
		return check_lines(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "unicode"))
		return check_unicode(argv[2], argv[3]);
	fprintf(stderr, "usage: cpy_check layout ELF [DIR] | lines FILE | unicode ELF FILE | is ELF...\n");
	return 2;
}
