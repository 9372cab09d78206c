/*
 * The CPython frame source's match rule and splice (replay/sources/python/source.c), driven record by
 * record: code and stack payloads as the capture writes them, then stacks whose native
 * frames lie in the real /usr/bin/python3.11 (its _PyEval_EvalFrameDefault found by the
 * symbol table). Lines come from location tables written here by the format's own
 * description (CPython's Objects/locations.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/err.h"
#include "elf/elf.h"
#include "perf/interp_records.h"
#include "replay/namer.h"
#include "replay/sources/python/python.h"

#define INTERP "/usr/bin/python3.11"
#define PID 100
#define TID 101
#define A_CODE 0x7f0000001000ull
#define B_CODE 0x7f0000002000ull
#define C_CODE 0x7f0000003000ull

static struct unw_module interp = { .path = INTERP };
static uint64_t eval_at, other_at;

/* 3.11 location table, "no column" entries (code 13): 8 code units at line first+1, 8 at
 * first+3. */
static const uint8_t table[] = { 0x80 | 13 << 3 | 7, 2, 0x80 | 13 << 3 | 7, 4 };

struct fixture {
	struct perf_attr_info bpf;
	struct perf_data d;
	struct replay_python_stats stats;
	struct replay_namer *nm;
	uint64_t time;
	struct replay_sym_stack out;
	char names[512];
};

static void open_interp(void)
{
	static bool tried;
	struct elf_symtab t;
	if (tried)
		return;
	tried = true;
	if (elf_open(INTERP, &interp.elf) || elf_symbols(interp.elf, ELF_SYMS_BOTH, false, &t)) {
		err_clear();
		return;
	}
	for (size_t i = 0; i < t.n; i++) {
		if (!strcmp(t.syms[i].name, "_PyEval_EvalFrameDefault"))
			eval_at = t.syms[i].addr;
		if (!strcmp(t.syms[i].name, "PyObject_Vectorcall"))
			other_at = t.syms[i].addr;
	}
	elf_symtab_free(&t);
}

static int setup(void **state)
{
	open_interp();
	struct fixture *f = calloc(1, sizeof(*f));
	f->bpf.attr.type = PERF_TYPE_SOFTWARE;
	f->bpf.attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	f->d.path = "t.data";
	f->d.attrs = &f->bpf;
	f->d.nattrs = 1;
	struct replay_frame_source src;
	assert_int_equal(replay_python_source_new(&f->d, &f->stats, &src), 0);
	assert_non_null(src.ops);
	assert_int_equal(replay_namer_new(&src, 1, &f->nm), 0);
	f->time = 1000;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	replay_namer_free(f->nm);
	free(f);
	return 0;
}

/* Skipped, with cmocka's SKIPPED line, where there is no python3.11 to place frames in. */
static void need_interp(void)
{
	if (!eval_at || !other_at)
		skip();
}

static void put(uint8_t **p, const void *v, size_t n)
{
	memcpy(*p, v, n);
	*p += n;
}

static void payload(struct fixture *f, const uint8_t *b, size_t n)
{
	struct perf_event_rec ev = { .type = PERF_RECORD_SAMPLE, .attr = &f->bpf,
				     .time = f->time++, .raw_data = b, .raw_size = (uint32_t)n };
	assert_int_equal(replay_namer_record(f->nm, &ev), 0);
}

static void code(struct fixture *f, uint32_t pid, uint64_t addr, const char *qualname)
{
	uint8_t b[256], *p = b;
	uint32_t magic = 0x31595054, zero = 0, lt = sizeof(table);
	uint16_t type = 2, flags = 0, ql = (uint16_t)strlen(qualname), fl = 6;
	int32_t first = 10;
	put(&p, &magic, 4), put(&p, &type, 2), put(&p, &flags, 2), put(&p, &pid, 4);
	put(&p, &zero, 4), put(&p, &addr, 8), put(&p, &first, 4), put(&p, &ql, 2);
	put(&p, &fl, 2), put(&p, &lt, 4), put(&p, qualname, ql), put(&p, "/a.py/", 6);
	put(&p, table, sizeof(table));
	payload(f, b, (size_t)(p - b));
}

/* A code record whose strings and line table the capture could not read. */
static void code_read_failed(struct fixture *f, uint32_t pid, uint64_t addr)
{
	uint8_t b[64], *p = b;
	uint32_t magic = 0x31595054, zero = 0;
	uint16_t type = 2, flags = PERF_PY_CODE_READ_FAILED;
	int32_t first = 10;
	put(&p, &magic, 4), put(&p, &type, 2), put(&p, &flags, 2), put(&p, &pid, 4);
	put(&p, &zero, 4), put(&p, &addr, 8), put(&p, &first, 4), put(&p, &zero, 4);
	put(&p, &zero, 4);
	payload(f, b, (size_t)(p - b));
}

struct pyf {
	uint64_t code;
	int32_t lasti;
	uint32_t entry;
};

static void stack(struct fixture *f, uint32_t tid, uint16_t flags, const struct pyf *v, uint32_t n)
{
	uint8_t b[512], *p = b;
	uint32_t magic = 0x31595054, pid = PID, zero = 0;
	uint16_t type = 1;
	put(&p, &magic, 4), put(&p, &type, 2), put(&p, &flags, 2), put(&p, &pid, 4);
	put(&p, &tid, 4), put(&p, &n, 4), put(&p, &zero, 4);
	for (uint32_t i = 0; i < n; i++)
		put(&p, &v[i].code, 8), put(&p, &v[i].lasti, 4), put(&p, &v[i].entry, 4);
	payload(f, b, (size_t)(p - b));
}

/* Names a sample of tid whose native frames are given innermost first as 'e' (in the eval
 * loop) and 'c' (elsewhere in the interpreter); f->names: the named stack outermost first,
 * Python frames as NAME:LINE, the eval loop as E, others as C. */
static const char *sample(struct fixture *f, uint32_t tid, const char *shape, bool whole)
{
	struct perf_event_rec ev = { .type = PERF_RECORD_SAMPLE, .pid = PID, .tid = tid,
				     .time = f->time++ };
	struct unw_frame fr[16];
	size_t n = strlen(shape);
	for (size_t i = 0; i < n; i++) {
		uint64_t rel = (shape[i] == 'e' ? eval_at + 0x40 : other_at + 0x10) + i;
		fr[i] = (struct unw_frame){ .pc = rel, .mod = &interp, .rel = rel };
	}
	struct replay_stack st = { &ev, fr, n, whole ? UNW_END_OUTERMOST : UNW_END_FP_CHAIN, 0, "p" };
	assert_int_equal(replay_namer_name(f->nm, &st, &f->out), 0);
	char *w = f->names;
	*w = 0;
	for (size_t i = 0; i < f->out.n; i++) {
		const struct replay_sym_frame *s = &f->out.frames[i];
		size_t left = sizeof(f->names) - (size_t)(w - f->names);
		if (s->kind == PROF_PYTHON) {
			assert_string_equal(s->file, strcmp(s->function, "[read failed]")
							     ? "/a.py/"
							     : "[read failed]");
			assert_int_equal(s->first_line, 10);
			assert_string_equal(s->module, INTERP);
			w += snprintf(w, left, "%s%s:%u", i ? ";" : "", s->function, s->line);
		} else if (s->kind == PROF_NATIVE || s->kind == PROF_TRUNCATED) {
			/* the interpreter is not symbolized here (no file to open): by address */
			bool e = s->addr >= eval_at && s->addr < eval_at + 0x100;
			w += snprintf(w, left, "%s%s", i ? ";" : "",
				      s->kind == PROF_TRUNCATED ? "T" : e ? "E" : "C");
		}
	}
	return f->names;
}

static void codes(struct fixture *f)
{
	code(f, PID, A_CODE, "<module>");
	code(f, PID, B_CODE, "g");
	code(f, PID, C_CODE, "C.h");
}

/* <module> (entry) called g, which called C code that called back into C.h (entry). */
static const struct pyf two_runs[] = { { C_CODE, 9, 1 }, { B_CODE, 3, 0 }, { A_CODE, -1, 1 } };

static void each_activation_takes_its_run_innermost_first(void **state)
{
	struct fixture *f = *state;
	need_interp();
	codes(f);
	stack(f, TID, 0, two_runs, 3);
	assert_string_equal(sample(f, TID, "cecec", true), "C;<module>:0;g:11;C;C.h:13;C");
	assert_int_equal(f->stats.samples, 1);
	assert_int_equal(f->stats.frames, 3);
}

static void runs_and_activations_that_disagree_keep_native_frames(void **state)
{
	struct fixture *f = *state;
	need_interp();
	codes(f);
	stack(f, TID, 0, two_runs, 3);
	assert_string_equal(sample(f, TID, "ccec", true), "C;E;C;C"); /* two runs, one activation */
	stack(f, TID, 0, two_runs + 1, 2);
	assert_string_equal(sample(f, TID, "cecec", true), "C;E;C;E;C"); /* one run, two */
	stack(f, TID, 0, two_runs, 2); /* g follows the last entry frame: no activation ran it */
	assert_string_equal(sample(f, TID, "cec", true), "C;E;C");
	assert_int_equal(f->stats.inconsistent, 3);
	assert_int_equal(f->stats.samples, 0);
}

static void the_eval_loop_sampled_between_frames_keeps_its_activation(void **state)
{
	struct fixture *f = *state;
	need_interp();
	codes(f);
	stack(f, TID, 0, two_runs + 1, 2);
	assert_string_equal(sample(f, TID, "ecec", true), "C;<module>:0;g:11;C;E");
	assert_int_equal(f->stats.between, 1);
	/* not when the sample is elsewhere: that activation ran a frame it should show */
	stack(f, TID, 0, two_runs + 1, 2);
	assert_string_equal(sample(f, TID, "cecec", true), "C;E;C;E;C");
	assert_int_equal(f->stats.inconsistent, 1);
}

static void a_truncated_native_stack_takes_the_innermost_runs(void **state)
{
	struct fixture *f = *state;
	need_interp();
	codes(f);
	stack(f, TID, 0, two_runs, 3);
	assert_string_equal(sample(f, TID, "cec", false), "T;C;C.h:13;C");
	assert_int_equal(f->stats.inconsistent, 0);
}

static void a_cut_python_stack_splices_its_whole_runs(void **state)
{
	struct fixture *f = *state;
	need_interp();
	codes(f);
	stack(f, TID, 1, two_runs, 2); /* C.h (entry), g: cut before <module> */
	assert_string_equal(sample(f, TID, "cecec", true), "C;E;C;C.h:13;C");
	assert_int_equal(f->stats.cut, 1);
}

/* A read that failed (or a cycle, after which the capture keeps no frame): the runs read
 * spliced as for a cut stack, counted apart. */
static void a_stack_whose_read_failed_splices_what_was_read(void **state)
{
	struct fixture *f = *state;
	need_interp();
	codes(f);
	stack(f, TID, PERF_PY_STACK_READ_FAILED, two_runs, 2);
	assert_string_equal(sample(f, TID, "cecec", true), "C;E;C;C.h:13;C");
	stack(f, TID, PERF_PY_STACK_READ_FAILED, NULL, 0);
	assert_string_equal(sample(f, TID, "cecec", true), "C;E;C;E;C");
	assert_int_equal(f->stats.read_failed, 2);
	assert_int_equal(f->stats.cut, 0);
	assert_int_equal(f->stats.inconsistent, 0);
}

/* A code object whose name, file and line table could not be read: its frames say so, with
 * no line, never an empty name or the first line as if it were known. */
static void a_code_whose_read_failed_names_its_frames_so(void **state)
{
	struct fixture *f = *state;
	need_interp();
	code(f, PID, A_CODE, "<module>");
	code_read_failed(f, PID, B_CODE);
	code(f, PID, C_CODE, "C.h");
	stack(f, TID, 0, two_runs, 3);
	assert_string_equal(sample(f, TID, "cecec", true),
			    "C;<module>:0;[read failed]:0;C;C.h:13;C");
}

static void a_frame_of_unknown_code_keeps_native_frames(void **state)
{
	struct fixture *f = *state;
	need_interp();
	code(f, PID, A_CODE, "<module>");
	code(f, PID + 1, B_CODE, "g"); /* another process's */
	code(f, PID, C_CODE, "C.h");
	stack(f, TID, 0, two_runs, 3);
	assert_string_equal(sample(f, TID, "cecec", true), "C;E;C;E;C");
	assert_int_equal(f->stats.code_unknown, 1);
}

static void a_record_goes_to_the_next_sample_of_its_thread_only(void **state)
{
	struct fixture *f = *state;
	need_interp();
	codes(f);
	stack(f, TID, 0, two_runs + 1, 2);
	assert_string_equal(sample(f, TID + 1, "cec", true), "C;E;C"); /* another thread */
	assert_string_equal(sample(f, TID, "cec", true), "C;<module>:0;g:11;C");
	assert_string_equal(sample(f, TID, "cec", true), "C;E;C"); /* taken already */
	stack(f, TID, 0, two_runs + 1, 2);
	struct perf_event_rec exit_ev = { .type = PERF_RECORD_EXIT, .pid = PID, .tid = TID,
					  .time = f->time++ };
	assert_int_equal(replay_namer_record(f->nm, &exit_ev), 0);
	assert_string_equal(sample(f, TID, "cec", true), "C;E;C"); /* the thread ended */
	assert_int_equal(f->stats.unrecorded, 3);
}

static void a_later_code_record_and_an_exec_replace_the_names(void **state)
{
	struct fixture *f = *state;
	need_interp();
	codes(f);
	code(f, PID, B_CODE, "g2"); /* a new code object where g's was */
	stack(f, TID, 0, two_runs + 1, 2);
	assert_string_equal(sample(f, TID, "cec", true), "C;<module>:0;g2:11;C");
	struct perf_event_rec exec_ev = { .type = PERF_RECORD_COMM, .misc = PERF_RECORD_MISC_COMM_EXEC,
					  .pid = PID, .tid = PID, .time = f->time++, .comm = "x" };
	assert_int_equal(replay_namer_record(f->nm, &exec_ev), 0);
	stack(f, TID, 0, two_runs + 1, 2);
	assert_string_equal(sample(f, TID, "cec", true), "C;E;C");
	assert_int_equal(f->stats.code_unknown, 1);
}

static void other_programs_payloads_are_ignored_and_malformed_ones_counted(void **state)
{
	struct fixture *f = *state;
	need_interp();
	static const uint8_t other[] = "not a TPY1 payload";
	payload(f, other, sizeof(other));
	static const uint8_t bad[] = { 0x54, 0x50, 0x59, 0x31, 9, 0, 0, 0 };
	payload(f, bad, sizeof(bad));
	assert_int_equal(f->stats.malformed, 1);
	assert_int_equal(f->stats.records, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(each_activation_takes_its_run_innermost_first, setup, teardown),
		cmocka_unit_test_setup_teardown(runs_and_activations_that_disagree_keep_native_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(the_eval_loop_sampled_between_frames_keeps_its_activation, setup, teardown),
		cmocka_unit_test_setup_teardown(a_truncated_native_stack_takes_the_innermost_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(a_cut_python_stack_splices_its_whole_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(a_stack_whose_read_failed_splices_what_was_read, setup, teardown),
		cmocka_unit_test_setup_teardown(a_code_whose_read_failed_names_its_frames_so, setup, teardown),
		cmocka_unit_test_setup_teardown(a_frame_of_unknown_code_keeps_native_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(a_record_goes_to_the_next_sample_of_its_thread_only, setup, teardown),
		cmocka_unit_test_setup_teardown(a_later_code_record_and_an_exec_replace_the_names, setup, teardown),
		cmocka_unit_test_setup_teardown(other_programs_payloads_are_ignored_and_malformed_ones_counted, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
