/*
 * The test driver of the scripts in tests/cpython, over src/cpython as the recorder and the
 * report use it:
 *   cpy_check layout ELF [DIR]    one "name value" line per field of struct cpy_layout
 *                                 that the version has (DIR: a debug directory to look in
 *                                 by build-id); layout-dwarf: 3.13's from its DWARF
 *                                 rather than its _Py_DebugOffsets; table: 3.11's or
 *                                 3.12's from tally's table alone, as if ELF had no debug
 *                                 information, then "source table"
 *   cpy_check offsets FILE        cpy_debug_offsets_parse() of FILE's bytes (as 3.13.0's)
 *   cpy_check lines FILE [FORMAT] the line of every instruction of the code objects in FILE,
 *                                 their tables of FORMAT (enum cpy_linetable_format; 0)
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
#include "cpython/thread_names.h"

static bool prefer_dwarf, table_only;

static int load(const char *path, const char *debug_dir, struct cpy_layout *l)
{
	struct cpy_layout_opts opts = { .sz = sizeof(opts), .debug_dir = debug_dir,
					.prefer_dwarf = prefer_dwarf, .table_only = table_only };
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
static int check_lines(const char *path, unsigned format)
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
			int err = cpy_lines_line(format, table, (size_t)len, first, (int32_t)i, &got);
			if (err || got != want) {
				if (bad++ < 20)
					printf("%s: unit %ld: line %d (error %d), python says %d\n", name,
					       i, got, err, want);
			}
		}
		/* Past the end, a table says nothing; co_lnotab's last line runs on (3.8, 3.9).
		 * Before the start (a frame not started), 3.8-3.10 say co_firstlineno. */
		int32_t past;
		if (format != CPY_LINES_LNOTAB &&
		    cpy_lines_line(format, table, (size_t)len, first, (int32_t)nunits, &past) != -ENOENT &&
		    bad++ < 20)
			printf("%s: unit %ld past the end has a line\n", name, nunits);
		if (format != CPY_LINES_LOCATIONS &&
		    (cpy_lines_line(format, table, (size_t)len, first, -1, &past) || past != first) &&
		    bad++ < 20)
			printf("%s: a frame not started is not at co_firstlineno\n", name);
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
	bool v11 = l.variant == CPY_VARIANT_311, v13 = l.variant == CPY_VARIANT_313;
	bool old = CPY_FRAME_OBJECTS(l.variant);
	printf("variant %" PRIu32 "\n", l.variant);
	printf("linetable_format %" PRIu32 "\n", l.linetable_format);
	P("_PyRuntimeState.interpreters.head", l.runtime.interpreters_head);
	P("PyInterpreterState.next", l.interp.next);
	P(old ? "PyInterpreterState.tstate_head" : "PyInterpreterState.threads.head",
	  l.interp.threads_head);
	P("PyThreadState.next", l.thread.next);
	P("PyThreadState.interp", l.thread.interp);
	if (!old)
		P("PyThreadState.native_thread_id", l.thread.native_thread_id);
	P("PyThreadState.thread_id", l.thread.thread_id);
	if (old) {
		P("PyThreadState.frame", l.thread_current_frame);
		P("PyFrameObject.f_code", l.frame.f_code);
		P("PyFrameObject.f_back", l.frame.previous);
		P("PyFrameObject.f_lasti", l.frame_lasti);
	} else if (v13) {
		P("PyThreadState.current_frame", l.thread_current_frame);
		P("_PyInterpreterFrame.f_executable", l.frame.f_code);
		P("_PyInterpreterFrame.instr_ptr", l.frame.prev_instr);
	} else {
		P("PyThreadState.cframe", l.thread.cframe);
		P("_PyCFrame.current_frame", l.cframe.current_frame);
		P("_PyInterpreterFrame.f_code", l.frame.f_code);
		P("_PyInterpreterFrame.prev_instr", l.frame.prev_instr);
	}
	if (!old) {
		P("_PyInterpreterFrame.previous", l.frame.previous);
		if (v11)
			P("_PyInterpreterFrame.is_entry", l.frame.is_entry);
		P("_PyInterpreterFrame.owner", l.frame.owner);
		P("PyCodeObject.co_qualname", l.code.qualname);
	} else if (l.code.qualname != l.code.name) {
		printf("qualname_is_not_co_name %" PRIu32 "\n", l.code.qualname);
	}
	P("PyCodeObject.co_name", l.code.name);
	P("PyCodeObject.co_filename", l.code.filename);
	P("PyCodeObject.co_firstlineno", l.code.firstlineno);
	P(l.linetable_format == CPY_LINES_LNOTAB ? "PyCodeObject.co_lnotab"
						 : "PyCodeObject.co_linetable", l.code.linetable);
	if (!old) {
		P("PyCodeObject.co_code_adaptive", l.code.code_adaptive);
		P("PyCodeObject._co_firsttraceable", l.code.firsttraceable);
	}
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
	if (v11 || old) {
		P("PyASCIIObject.state.ready.bit", l.unicode.ready.bit_offset);
		P("PyASCIIObject.state.ready.bits", l.unicode.ready.bit_size);
	}
	P("PyCompactUnicodeObject.utf8_length", l.unicode.utf8_length);
	P("PyCompactUnicodeObject.utf8", l.unicode.utf8);
	P(old || v11 ? "_PyRuntimeState.ceval.gil" : "PyInterpreterState.ceval.gil",
	  old || v11 ? l.gil.runtime : l.gil.interp);
	P("_gil_runtime_state.locked", l.gil.locked);
	P("_gil_runtime_state.last_holder", l.gil.last_holder);
	P(old || v11 ? "PyInterpreterState.modules" : "PyInterpreterState.imports.modules",
	  l.interp_modules);
	const struct cpy_object_facts *f = cpy_object_facts(l.version_hex);
	if (!f)
		return fprintf(stderr, "no object facts for its version\n"), 1;
	P("PyTypeObject.tp_basicsize", f->tp_basicsize);
	P("PyTypeObject.tp_flags", f->tp_flags);
	P("PyTypeObject.tp_dictoffset", f->tp_dictoffset);
	P("PyHeapTypeObject.ht_cached_keys", f->ht_cached_keys);
	P("PyDictObject.ma_keys", f->ma_keys);
	P("PyDictObject.ma_values", f->ma_values);
	P("PyModuleObject.md_dict", f->md_dict);
	if (old) {
		P("PyDictKeysObject.dk_size", f->dk_size);
	} else {
		P("PyDictKeysObject.dk_log2_size", f->dk_size);
		P("PyDictKeysObject.dk_log2_index_bytes", f->dk_size + 1);
		P("PyDictKeysObject.dk_kind", f->dk_size + 2);
		P("PyDictValues.values", f->values);
	}
	if (v13)
		P("PyDictValues.valid", f->values_valid);
	P("PyDictKeysObject.dk_nentries", f->dk_nentries);
	P("PyDictKeysObject.dk_indices", f->dk_indices);
	bool tagged = l.variant == CPY_VARIANT_312 || v13;
	P(tagged ? "PyLongObject.long_value.lv_tag" : "PyLongObject.ob_base.ob_size", f->long_size);
	P(tagged ? "PyLongObject.long_value.ob_digit" : "PyLongObject.ob_digit", f->ob_digit);
	if (table_only)
		printf("source %s\n", l.source == CPY_FROM_TABLE ? "table" : "other");
	return 0;
}

/* The whole file as a _Py_DebugOffsets of CPython 3.13.0: 0, or 1 with the message. */
static int parse_offsets(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return perror(path), 1;
	uint8_t buf[4096];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	struct cpy_layout l = { .sz = sizeof(l) };
	if (cpy_debug_offsets_parse(buf, n, 0x030d00f0, path, &l)) {
		fprintf(stderr, "tally: %s\n", err_msg());
		return 1;
	}
	printf("PyThreadState.current_frame %" PRIu32 "\n", l.thread_current_frame);
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
	if ((argc == 3 || argc == 4) &&
	    (!strcmp(argv[1], "layout") || !strcmp(argv[1], "layout-dwarf") ||
	     !strcmp(argv[1], "table"))) {
		prefer_dwarf = !strcmp(argv[1], "layout-dwarf");
		table_only = !strcmp(argv[1], "table");
		return print_layout(argv[2], argc == 4 ? argv[3] : NULL);
	}
	if (argc == 3 && !strcmp(argv[1], "offsets"))
		return parse_offsets(argv[2]);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "lines"))
		return check_lines(argv[2], argc == 4 ? (unsigned)atoi(argv[3]) : CPY_LINES_LOCATIONS);
	if (argc == 4 && !strcmp(argv[1], "unicode"))
		return check_unicode(argv[2], argv[3]);
	fprintf(stderr, "usage: cpy_check layout|layout-dwarf|table ELF [DIR] | offsets FILE | lines FILE | unicode ELF FILE | is ELF...\n");
	return 2;
}
