/*
 * The ABI rules of include/tally/tally.h: an options struct is read by its sz (too small is
 * refused, fields past a short one read as zero, a longer one or one with its padding is
 * accepted only when zero past the last field this version knows), and frames are written
 * at the caller's frame size: the fields both versions know, zero in the rest of each
 * frame, nothing past the last one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tally/tally.h"

/* Inline frames deeper than the library copies out without allocating (api.c). */
#define DEPTH 40

static char dir[] = "/tmp/tally-abi-XXXXXX";
static char prog[300];
static uint64_t cxx_addr, deep_addr;
static int deep_frames;

/* struct tally_frame as a version with only its first two fields declares it */
struct frame_old {
	const char *function;
	const char *file;
};

/* and as a later version with one more field */
struct frame_new {
	struct tally_frame f;
	uint64_t added;
};

static uint64_t symbol(const char *name, uint64_t *size)
{
	char cmd[400], out[80] = "";
	snprintf(cmd, sizeof(cmd), "nm -S %s | awk '$4 == \"%s\" { print $1, $2 }'", prog, name);
	FILE *p = popen(cmd, "r");
	if (!p || !fgets(out, sizeof(out), p))
		return 0;
	pclose(p);
	char *end;
	uint64_t addr = strtoull(out, &end, 16);
	if (size)
		*size = strtoull(end, NULL, 16);
	return addr;
}

/* A function named by a C++ mangled symbol, and one whose body is DEPTH inline calls deep. */
static int write_source(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("void cxx(void) __asm__(\"_ZN3foo3barEv\");\nvoid cxx(void) {}\n"
	      "volatile int sink;\n"
	      "static inline __attribute__((always_inline)) int f0(int x) { sink = x; return x; }\n",
	      f);
	for (int i = 1; i < DEPTH; i++)
		fprintf(f, "static inline __attribute__((always_inline)) int f%d(int x) "
			   "{ return f%d(x + sink) + sink; }\n", i, i - 1);
	fprintf(f, "__attribute__((noinline)) int deep(int x) { return f%d(x); }\n"
		   "int main(void) { cxx(); return deep(1); }\n", DEPTH - 1);
	return fclose(f);
}

static int setup(void **state)
{
	if (!mkdtemp(dir))
		return -1;
	char src[300], cmd[700];
	snprintf(src, sizeof(src), "%s/abi.c", dir);
	snprintf(prog, sizeof(prog), "%s/abi", dir);
	snprintf(cmd, sizeof(cmd), "cc -O1 -g %s -o %s", src, prog);
	if (write_source(src) || system(cmd))
		return -1;
	cxx_addr = symbol("_ZN3foo3barEv", NULL);
	uint64_t size = 0, start = symbol("deep", &size);
	/* the instruction of deep with the most frames: f0's store, inside all of them */
	struct tally_symbolizer *s;
	if (!cxx_addr || !start || tally_symbolizer_open(prog, NULL, &s))
		return -1;
	for (uint64_t a = start; a < start + size; a++) {
		int n = tally_symbolize(s, a, NULL, 0);
		if (n > deep_frames) {
			deep_frames = n;
			deep_addr = a;
		}
	}
	tally_symbolizer_close(s);
	return deep_frames > DEPTH ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

/* The name the symbolizer gives cxx with these options, or NULL when the open fails. */
static const char *cxx_name(const struct tally_symbolizer_opts *o, int *rc)
{
	static char name[100];
	struct tally_symbolizer *s;
	if ((*rc = tally_symbolizer_open(prog, o, &s)))
		return NULL;
	struct tally_frame f[4];
	int n = tally_symbolize(s, cxx_addr, f, 4);
	snprintf(name, sizeof(name), "%s", n >= 1 && f[n - 1].function ? f[n - 1].function : "?");
	tally_symbolizer_close(s);
	return name;
}

static void abi_opts_sz_zero_is_einval(void **state)
{
	struct tally_symbolizer_opts o = { .sz = 0 };
	int rc;
	assert_null(cxx_name(&o, &rc));
	assert_int_equal(rc, -EINVAL);
	assert_non_null(strstr(tally_errmsg(), "tally_symbolizer_opts: sz 0 "));
}

static void abi_opts_sz_smaller_than_its_own_field_is_einval(void **state)
{
	struct tally_symbolizer_opts o = { .sz = sizeof(size_t) - 1 };
	int rc;
	assert_null(cxx_name(&o, &rc));
	assert_int_equal(rc, -EINVAL);
}

static void abi_opts_null_and_sz_alone_read_as_defaults(void **state)
{
	struct tally_symbolizer_opts o = { .sz = sizeof(size_t), .no_demangle = true };
	int rc;
	assert_string_equal(cxx_name(NULL, &rc), "foo::bar()");
	assert_string_equal(cxx_name(&o, &rc), "foo::bar()");
}

static void abi_opts_field_past_a_short_sz_reads_as_zero(void **state)
{
	TALLY_OPTS(tally_symbolizer_opts, o, .no_demangle = true);
	int rc;
	assert_string_equal(cxx_name(&o, &rc), "_ZN3foo3barEv");
	o.sz = offsetof(struct tally_symbolizer_opts, no_demangle);
	assert_string_equal(cxx_name(&o, &rc), "foo::bar()");
}

/* The struct as a later version with one more field declares it. */
struct opts_new {
	struct tally_symbolizer_opts o;
	uint64_t added;
};

static void abi_opts_longer_with_zero_past_ours_is_read(void **state)
{
	struct opts_new n;
	memset(&n, 0, sizeof(n));
	n.o.sz = sizeof(n);
	n.o.no_demangle = true;
	int rc;
	assert_string_equal(cxx_name(&n.o, &rc), "_ZN3foo3barEv");
}

static void abi_opts_longer_with_a_byte_set_past_ours_is_einval(void **state)
{
	struct opts_new n;
	memset(&n, 0, sizeof(n));
	n.o.sz = sizeof(n);
	((unsigned char *)&n.added)[7] = 1;
	int rc;
	assert_null(cxx_name(&n.o, &rc));
	assert_int_equal(rc, -EINVAL);
	char want[100];
	snprintf(want, sizeof(want), "tally_symbolizer_opts: byte %zu is not zero",
		 sizeof(struct tally_symbolizer_opts) + 7);
	assert_non_null(strstr(tally_errmsg(), want));
}

/* Where this version's last field ends: its tail padding follows. */
#define OPTS_FIELDS_END (offsetof(struct tally_symbolizer_opts, debug_cache) + sizeof(bool))

/* The struct as a later version may declare it: a field in this one's tail padding. */
struct opts_in_padding {
	size_t sz;
	const char *debug_dir;
	bool no_demangle;
	bool debug_cache;
	bool added;
};
_Static_assert(offsetof(struct opts_in_padding, added) == OPTS_FIELDS_END &&
		       sizeof(struct opts_in_padding) == sizeof(struct tally_symbolizer_opts),
	       "the test's newer struct puts its field in the tail padding");

static void abi_opts_field_in_our_tail_padding_is_einval_when_set(void **state)
{
	struct opts_in_padding n;
	memset(&n, 0, sizeof(n));
	n.sz = sizeof(n);
	n.no_demangle = true;
	n.added = true;
	int rc;
	assert_null(cxx_name((const struct tally_symbolizer_opts *)&n, &rc));
	assert_int_equal(rc, -EINVAL);
	char want[100];
	snprintf(want, sizeof(want), "tally_symbolizer_opts: byte %zu is not zero", OPTS_FIELDS_END);
	assert_non_null(strstr(tally_errmsg(), want));
	n.added = false;
	assert_string_equal(cxx_name((const struct tally_symbolizer_opts *)&n, &rc), "_ZN3foo3barEv");
}

/* This version's struct, only padding past its last field: zero is read, a byte set in
 * the padding is refused (it is where a newer field would be), and a sz that ends at the
 * last field, without the padding, is read whole. */
static void abi_opts_with_only_padding_past_the_last_field(void **state)
{
	TALLY_OPTS(tally_symbolizer_opts, o, .no_demangle = true);
	int rc;
	assert_true(OPTS_FIELDS_END < sizeof(o));
	assert_string_equal(cxx_name(&o, &rc), "_ZN3foo3barEv");
	((unsigned char *)&o)[sizeof(o) - 1] = 1;
	assert_null(cxx_name(&o, &rc));
	assert_int_equal(rc, -EINVAL);
	o.sz = OPTS_FIELDS_END;
	assert_string_equal(cxx_name(&o, &rc), "_ZN3foo3barEv");
}

/* TALLY_OPTS sets sz and the fields given and clears the rest, padding included. */
static void abi_tally_opts_clears_what_it_does_not_set(void **state)
{
	TALLY_OPTS(tally_symbolizer_opts, o, .debug_dir = "/nowhere", .debug_cache = true);
	assert_int_equal(o.sz, sizeof(o));
	assert_string_equal(o.debug_dir, "/nowhere");
	assert_false(o.no_demangle);
	assert_true(o.debug_cache);
	for (size_t i = OPTS_FIELDS_END; i < sizeof(o); i++)
		assert_int_equal(((const unsigned char *)&o)[i], 0);
}

static void abi_frame_smaller_than_its_first_field_is_einval(void **state)
{
	struct tally_symbolizer *s;
	assert_int_equal(tally_symbolizer_open(prog, NULL, &s), 0);
	struct tally_frame f[2];
	assert_int_equal(tally_symbolize_sized(s, cxx_addr, f, 2, 0), -EINVAL);
	assert_int_equal(tally_symbolize_sized(s, cxx_addr, f, 2, sizeof(char *) - 1), -EINVAL);
	assert_non_null(strstr(tally_errmsg(), "tally_frame: frame size 7 "));
	tally_symbolizer_close(s);
}

/* Older frames, max of them, at the deep address: each as the full frames have it, and the
 * bytes after the last one untouched. */
static void check_old_frames(struct tally_symbolizer *s, size_t max)
{
	struct tally_frame full[DEPTH + 8];
	int n = tally_symbolize(s, deep_addr, full, DEPTH + 8);
	assert_int_equal(n, deep_frames);
	struct {
		struct frame_old f[DEPTH + 8];
		unsigned char after[64];
	} old;
	memset(&old, 0xaa, sizeof(old));
	assert_true(max <= DEPTH + 8);
	assert_int_equal(tally_symbolize_sized(s, deep_addr, (struct tally_frame *)old.f, max,
					       sizeof(old.f[0])),
			 n);
	size_t wrote = (size_t)n < max ? (size_t)n : max;
	for (size_t i = 0; i < wrote; i++) {
		assert_ptr_equal(old.f[i].function, full[i].function);
		assert_ptr_equal(old.f[i].file, full[i].file);
	}
	for (size_t b = wrote * sizeof(old.f[0]); b < sizeof(old); b++)
		assert_int_equal(((unsigned char *)&old)[b], 0xaa);
}

static void abi_older_frames_get_their_fields_and_nothing_past(void **state)
{
	struct tally_symbolizer *s;
	assert_int_equal(tally_symbolizer_open(prog, NULL, &s), 0);
	check_old_frames(s, 2);
	check_old_frames(s, 0);
	tally_symbolizer_close(s);
}

static void abi_older_frames_deeper_than_the_copy_buffer_all_arrive(void **state)
{
	struct tally_symbolizer *s;
	assert_int_equal(tally_symbolizer_open(prog, NULL, &s), 0);
	check_old_frames(s, DEPTH + 8);
	check_old_frames(s, (size_t)deep_frames - 1);
	tally_symbolizer_close(s);
}

static void abi_newer_frames_read_zero_past_ours(void **state)
{
	struct tally_symbolizer *s;
	assert_int_equal(tally_symbolizer_open(prog, NULL, &s), 0);
	struct tally_frame full[4];
	struct frame_new f[4];
	memset(f, 0xaa, sizeof(f));
	int n = tally_symbolize(s, deep_addr, full, 4);
	assert_int_equal(tally_symbolize_sized(s, deep_addr, &f[0].f, 3, sizeof(f[0])), n);
	for (int i = 0; i < 3; i++) {
		assert_ptr_equal(f[i].f.function, full[i].function);
		assert_int_equal(f[i].f.line, full[i].line);
		assert_int_equal(f[i].f.inlined, full[i].inlined);
		assert_int_equal(f[i].added, 0);
	}
	assert_int_equal(f[3].added, 0xaaaaaaaaaaaaaaaaull);
	tally_symbolizer_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(abi_opts_sz_zero_is_einval),
		cmocka_unit_test(abi_opts_sz_smaller_than_its_own_field_is_einval),
		cmocka_unit_test(abi_opts_null_and_sz_alone_read_as_defaults),
		cmocka_unit_test(abi_opts_field_past_a_short_sz_reads_as_zero),
		cmocka_unit_test(abi_opts_longer_with_zero_past_ours_is_read),
		cmocka_unit_test(abi_opts_longer_with_a_byte_set_past_ours_is_einval),
		cmocka_unit_test(abi_opts_field_in_our_tail_padding_is_einval_when_set),
		cmocka_unit_test(abi_opts_with_only_padding_past_the_last_field),
		cmocka_unit_test(abi_tally_opts_clears_what_it_does_not_set),
		cmocka_unit_test(abi_frame_smaller_than_its_first_field_is_einval),
		cmocka_unit_test(abi_older_frames_get_their_fields_and_nothing_past),
		cmocka_unit_test(abi_older_frames_deeper_than_the_copy_buffer_all_arrive),
		cmocka_unit_test(abi_newer_frames_read_zero_past_ours),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
