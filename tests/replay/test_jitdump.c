/*
 * The jitdump reader on dumps built here by hand, record by record as the specification
 * lays them out (linux tools/perf/Documentation/jitdump-specification.txt): loads, moves
 * and reuse of an address in time order, line tables with the repeated-file shorthand,
 * unwinding data, both byte orders, and hostile files (cut short, lying sizes and counts).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "replay/sources/jitdump/jitdump.h"
#include "unwind/unwind.h"

struct buf {
	uint8_t b[4096];
	size_t n;
	bool be;
	size_t rec; /* where the record being built starts */
};

static void put(struct buf *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void u32(struct buf *b, uint32_t v)
{
	uint8_t x[4];
	for (int i = 0; i < 4; i++)
		x[b->be ? 3 - i : i] = (uint8_t)(v >> (8 * i));
	put(b, x, 4);
}

static void u64(struct buf *b, uint64_t v)
{
	uint8_t x[8];
	for (int i = 0; i < 8; i++)
		x[b->be ? 7 - i : i] = (uint8_t)(v >> (8 * i));
	put(b, x, 8);
}

static void header(struct buf *b, bool be)
{
	memset(b, 0, sizeof(*b));
	b->be = be;
	u32(b, 0x4A695444);
	u32(b, 1);
	u32(b, 40);
	u32(b, 62); /* EM_X86_64 */
	u32(b, 0);
	u32(b, 123);
	u64(b, 1000);
	u64(b, 0);
}

static void begin(struct buf *b, uint32_t id, uint64_t time)
{
	b->rec = b->n;
	u32(b, id);
	u32(b, 0); /* the size, set by end() */
	u64(b, time);
}

static void end(struct buf *b)
{
	uint32_t size = (uint32_t)(b->n - b->rec);
	size_t n = b->n;
	b->n = b->rec + 4;
	u32(b, size);
	b->n = n;
}

static void load(struct buf *b, uint64_t time, uint64_t addr, uint64_t size, uint64_t index,
		 const char *name)
{
	begin(b, 0, time);
	u32(b, 123);
	u32(b, 124);
	u64(b, addr);
	u64(b, addr);
	u64(b, size);
	u64(b, index);
	put(b, name, strlen(name) + 1);
	for (uint64_t i = 0; i < size; i++)
		put(b, &(uint8_t){ (uint8_t)(0x90 + i) }, 1);
	end(b);
}

static void move(struct buf *b, uint64_t time, uint64_t from, uint64_t to, uint64_t size,
		 uint64_t index)
{
	begin(b, 1, time);
	u32(b, 123);
	u32(b, 124);
	u64(b, to);
	u64(b, from);
	u64(b, to);
	u64(b, size);
	u64(b, index);
	end(b);
}

static struct replay_jitdump *parse(const struct buf *b)
{
	struct replay_jitdump *d = NULL;
	assert_int_equal(replay_jitdump_parse("jit-123.dump", b->b, b->n, &d), 0);
	return d;
}

static const char *name_at(const struct replay_jitdump *d, uint64_t pc, uint64_t t)
{
	const struct replay_jit_code *c = replay_jitdump_find(d, pc, t, true);
	return c ? c->name : NULL;
}

static void jitdump_header_and_loads_are_read(void **state)
{
	struct buf b;
	header(&b, false);
	load(&b, 2000, 0x1000, 0x10, 1, "JS:*hot a.js:3:1");
	load(&b, 2001, 0x2000, 0x8, 2, "JS:~cold a.js:9:1");
	struct replay_jitdump *d = parse(&b);
	assert_int_equal(d->pid, 123);
	assert_int_equal(d->elf_mach, 62);
	assert_int_equal(d->ncodes, 2);
	assert_string_equal(d->warning, "");
	assert_string_equal(name_at(d, 0x1000, 3000), "JS:*hot a.js:3:1");
	assert_string_equal(name_at(d, 0x100f, 3000), "JS:*hot a.js:3:1");
	assert_null(name_at(d, 0x1010, 3000));
	assert_string_equal(name_at(d, 0x2004, 3000), "JS:~cold a.js:9:1");
	assert_null(name_at(d, 0x0fff, 3000));
	const struct replay_jit_code *c = replay_jitdump_find(d, 0x1000, 3000, true);
	assert_non_null(c->bytes);
	assert_int_equal(c->bytes[0], 0x90);
	assert_int_equal(c->bytes[15], 0x9f);
	replay_jitdump_free(d);
}

static void jitdump_big_endian_dump_is_read(void **state)
{
	struct buf b;
	header(&b, true);
	load(&b, 2000, 0x1000, 0x10, 1, "f");
	struct replay_jitdump *d = parse(&b);
	assert_true(d->big_endian);
	assert_int_equal(d->pid, 123);
	assert_string_equal(name_at(d, 0x1008, 3000), "f");
	replay_jitdump_free(d);
}

static void jitdump_reused_address_names_the_code_of_the_moment(void **state)
{
	struct buf b;
	header(&b, false);
	load(&b, 2000, 0x1000, 0x10, 1, "first");
	load(&b, 5000, 0x1000, 0x20, 2, "second");
	struct replay_jitdump *d = parse(&b);
	assert_null(name_at(d, 0x1000, 1999)); /* before any code was there */
	assert_string_equal(name_at(d, 0x1000, 2000), "first");
	assert_string_equal(name_at(d, 0x1008, 4999), "first");
	assert_string_equal(name_at(d, 0x1008, 5000), "second");
	assert_null(name_at(d, 0x1018, 4999)); /* the first was shorter */
	assert_string_equal(name_at(d, 0x1018, 6000), "second");
	/* Without a comparable clock: the latest code at the address. */
	assert_string_equal(replay_jitdump_find(d, 0x1008, 0, false)->name, "second");
	replay_jitdump_free(d);
}

static void jitdump_moved_code_leaves_its_old_address(void **state)
{
	struct buf b;
	header(&b, false);
	load(&b, 2000, 0x1000, 0x10, 7, "moved");
	move(&b, 3000, 0x1000, 0x9000, 0x10, 7);
	struct replay_jitdump *d = parse(&b);
	assert_string_equal(name_at(d, 0x1004, 2500), "moved");
	assert_null(name_at(d, 0x1004, 3500));
	assert_null(name_at(d, 0x9004, 2500));
	assert_string_equal(name_at(d, 0x9004, 3500), "moved");
	replay_jitdump_free(d);
}

static void jitdump_move_of_unknown_code_warns_and_reads_on(void **state)
{
	struct buf b;
	header(&b, false);
	move(&b, 1500, 0x5000, 0x6000, 0x10, 99);
	load(&b, 2000, 0x1000, 0x10, 1, "after");
	struct replay_jitdump *d = parse(&b);
	assert_non_null(strstr(d->warning, "jit-123.dump: offset 0x28: JIT_CODE_MOVE"));
	assert_string_equal(name_at(d, 0x1000, 2000), "after");
	assert_null(name_at(d, 0x6000, 2000));
	replay_jitdump_free(d);
}

/* Entry addresses count from the code's address plus the 64-byte ELF header perf inject
 * puts before it (what V8 writes). */
static void debug_entry(struct buf *b, uint64_t addr, uint32_t line, const char *file)
{
	u64(b, addr);
	u32(b, line);
	u32(b, 5);
	put(b, file, strlen(file) + 1);
}

static void jitdump_debug_info_gives_lines_to_the_next_load(void **state)
{
	struct buf b;
	header(&b, false);
	begin(&b, 2, 1900);
	u64(&b, 0x1000);
	u64(&b, 3);
	debug_entry(&b, 0x1000 + 64, 10, "/src/a.js");
	debug_entry(&b, 0x1000 + 64 + 8, 12, "\xff");
	debug_entry(&b, 0x1000 + 64 + 12, 3, "/src/b.js");
	end(&b);
	load(&b, 2000, 0x1000, 0x10, 1, "f");
	load(&b, 2001, 0x3000, 0x10, 2, "no lines");
	struct replay_jitdump *d = parse(&b);
	const struct replay_jit_code *c = replay_jitdump_find(d, 0x1000, 2500, true);
	assert_int_equal(c->nlines, 3);
	const struct replay_jit_line *l = replay_jitdump_line(d, c, 0);
	assert_string_equal(l->file, "/src/a.js");
	assert_int_equal(l->line, 10);
	l = replay_jitdump_line(d, c, 9);
	assert_string_equal(l->file, "/src/a.js");
	assert_int_equal(l->line, 12);
	l = replay_jitdump_line(d, c, 15);
	assert_string_equal(l->file, "/src/b.js");
	assert_int_equal(l->line, 3);
	c = replay_jitdump_find(d, 0x3000, 2500, true);
	assert_int_equal(c->nlines, 0);
	assert_null(replay_jitdump_line(d, c, 0));
	replay_jitdump_free(d);
}

static void jitdump_interleaved_line_tables_find_their_code(void **state)
{
	struct buf b;
	header(&b, false);
	for (uint64_t a = 0x1000; a <= 0x2000; a += 0x1000) {
		begin(&b, 2, 1900);
		u64(&b, a);
		u64(&b, 1);
		debug_entry(&b, a + 64, (uint32_t)(a >> 12), "/src/a.js");
		end(&b);
	}
	load(&b, 2000, 0x1000, 0x10, 1, "one");
	load(&b, 2001, 0x2000, 0x10, 2, "two");
	struct replay_jitdump *d = parse(&b);
	assert_int_equal(replay_jitdump_line(d, &d->codes[0], 0)->line, 1);
	assert_int_equal(replay_jitdump_line(d, &d->codes[1], 0)->line, 2);
	replay_jitdump_free(d);
}

/* Node 20's baseline code: garbage for the script name, longer than its first NUL. */
static void jitdump_garbled_line_table_is_left_out(void **state)
{
	struct buf b;
	header(&b, false);
	begin(&b, 2, 1900);
	u64(&b, 0x1000);
	u64(&b, 1);
	debug_entry(&b, 0x1000 + 64, 3, "G`\x03");
	end(&b);
	load(&b, 2000, 0x1000, 0x10, 1, "garbled");
	begin(&b, 2, 2100);
	u64(&b, 0x2000);
	u64(&b, 1);
	debug_entry(&b, 0x2000 + 64 + 0x100, 3, "/src/a.js"); /* past the code's end */
	end(&b);
	load(&b, 2200, 0x2000, 0x10, 2, "past its end");
	struct replay_jitdump *d = parse(&b);
	assert_int_equal(d->codes[0].nlines, 0);
	assert_int_equal(d->codes[1].nlines, 0);
	assert_non_null(strstr(d->warning, "jit-123.dump: offset 0x28: JIT_CODE_DEBUG_INFO for "
					   "0x1000 does not describe its code"));
	assert_string_equal(name_at(d, 0x2000, 2500), "past its end");
	replay_jitdump_free(d);
}

/* The same garbage, of the script name's length (a freed buffer): read again with the
 * script of the code's own V8 name. */
static void jitdump_v8_garbled_script_names_are_read_again(void **state)
{
	struct buf b;
	header(&b, false);
	begin(&b, 2, 1900);
	u64(&b, 0x1000);
	u64(&b, 2);
	for (uint32_t k = 0; k < 2; k++) {
		u64(&b, 0x1000 + 64 + 8 * k);
		u32(&b, 7 + k);
		u32(&b, 1);
		put(&b, "\xc7X\0\x04\x01\x02\x03\x04\x05", 9); /* 9 bytes, as "/src/a.js" */
		put(&b, "", 1);
	}
	end(&b);
	load(&b, 2000, 0x1000, 0x10, 1, "JS:*f /src/a.js:1:1");
	struct replay_jitdump *d = parse(&b);
	const struct replay_jit_code *c = &d->codes[0];
	assert_int_equal(c->nlines, 2);
	assert_string_equal(replay_jitdump_line(d, c, 0)->file, "/src/a.js");
	assert_int_equal(replay_jitdump_line(d, c, 0)->line, 7);
	assert_int_equal(replay_jitdump_line(d, c, 9)->line, 8);
	assert_string_equal(d->warning, "");
	replay_jitdump_free(d);
}

static void jitdump_unwinding_info_is_split_into_frame_and_header(void **state)
{
	struct buf b;
	header(&b, false);
	begin(&b, 4, 1900);
	u64(&b, 24);
	u64(&b, 8);
	u64(&b, 24);
	for (int i = 0; i < 24; i++)
		put(&b, &(uint8_t){ (uint8_t)i }, 1);
	end(&b);
	load(&b, 2000, 0x1000, 0x10, 1, "f");
	struct replay_jitdump *d = parse(&b);
	const struct replay_jit_code *c = &d->codes[0];
	assert_int_equal(c->eh_frame_size, 16);
	assert_int_equal(c->eh_frame[0], 0);
	assert_int_equal(c->eh_frame_hdr_size, 8);
	assert_int_equal(c->eh_frame_hdr[0], 16);
	replay_jitdump_free(d);
}

/* The unwinder gets each code's CFI from its load's time on, until other code takes its
 * memory; moved code keeps its CFI (unwind.c). */
static void jitdump_feed_gives_the_unwinder_cfi_in_time_order(void **state)
{
	struct buf b;
	header(&b, false);
	begin(&b, 4, 1900);
	u64(&b, 24);
	u64(&b, 0);
	u64(&b, 24);
	for (int i = 0; i < 24; i++)
		put(&b, &(uint8_t){ 0 }, 1);
	end(&b);
	load(&b, 2000, 0x1000, 0x10, 1, "a");
	load(&b, 3000, 0x1008, 0x10, 2, "b"); /* no CFI: a's is gone */
	move(&b, 3500, 0x1000, 0x2000, 0x10, 1);
	struct replay_jitdump *d = parse(&b);
	struct replay_jit_feed f;
	struct unw_ctx *c;
	struct unw_space s = { 0 };
	assert_int_equal(replay_jit_feed_init(&f, d), 0);
	assert_int_equal(unw_ctx_new(UNW_AUTO, &c), 0);
	assert_int_equal(replay_jit_feed_apply(&f, d, c, &s, 1999, true), 0);
	assert_int_equal(s.njits, 0);
	assert_int_equal(replay_jit_feed_apply(&f, d, c, &s, 2000, true), 0);
	assert_int_equal(s.njits, 1);
	assert_int_equal(s.jits[0].start, 0x1000);
	assert_int_equal(replay_jit_feed_apply(&f, d, c, &s, 3000, true), 0);
	assert_int_equal(s.njits, 0);
	assert_int_equal(replay_jit_feed_apply(&f, d, c, &s, 3500, true), 0);
	assert_int_equal(s.njits, 1);
	assert_int_equal(s.jits[0].start, 0x2000);
	assert_int_equal(s.jits[0].end, 0x2010);
	replay_jit_feed_free(&f);
	/* On another clock than the dump's: all of it at once, the last code each address
	 * held. */
	unw_space_clear(&s);
	assert_int_equal(replay_jit_feed_init(&f, d), 0);
	assert_int_equal(replay_jit_feed_apply(&f, d, c, &s, 0, false), 0);
	assert_int_equal(s.njits, 1);
	assert_int_equal(s.jits[0].start, 0x2000);
	replay_jit_feed_free(&f);
	unw_space_clear(&s);
	unw_ctx_free(c);
	replay_jitdump_free(d);
}

static void jitdump_truncated_file_keeps_the_whole_records(void **state)
{
	struct buf b;
	header(&b, false);
	load(&b, 2000, 0x1000, 0x10, 1, "whole");
	size_t cut = b.n;
	load(&b, 2001, 0x2000, 0x10, 2, "cut");
	for (size_t n = cut; n < b.n; n++) {
		struct replay_jitdump *d = NULL;
		assert_int_equal(replay_jitdump_parse("jit-123.dump", b.b, n, &d), 0);
		assert_int_equal(d->ncodes, 1);
		assert_string_equal(name_at(d, 0x1000, 2500), "whole");
		if (n > cut)
			assert_non_null(strstr(d->warning, "jit-123.dump: offset 0x"));
		else
			assert_string_equal(d->warning, "");
		replay_jitdump_free(d);
	}
}

static void jitdump_lying_sizes_and_counts_are_refused(void **state)
{
	struct buf b;
	header(&b, false);
	load(&b, 2000, 0x1000, 0x10, 1, "kept");
	begin(&b, 2, 2100); /* a debug record that claims 2^60 entries */
	u64(&b, 0x2000);
	u64(&b, 1ull << 60);
	debug_entry(&b, 0x2000, 1, "x.js");
	end(&b);
	struct replay_jitdump *d = parse(&b);
	assert_non_null(strstr(d->warning, "JIT_CODE_DEBUG_INFO of 1152921504606846976 entries"));
	assert_string_equal(name_at(d, 0x1000, 2500), "kept");
	replay_jitdump_free(d);

	header(&b, false);
	load(&b, 2000, UINT64_MAX - 4, 0x10, 1, "wraps");
	d = parse(&b);
	assert_int_equal(d->ncodes, 0);
	assert_non_null(strstr(d->warning, "runs past the address space"));
	replay_jitdump_free(d);

	header(&b, false);
	begin(&b, 0, 2000);
	u32(&b, 1); /* a load cut short inside its own record */
	end(&b);
	d = parse(&b);
	assert_non_null(strstr(d->warning, "JIT_CODE_LOAD cut short"));
	replay_jitdump_free(d);

	header(&b, false);
	begin(&b, 0, 2000);
	end(&b);
	b.b[b.rec + 4] = 8; /* a record smaller than its own header */
	d = parse(&b);
	assert_non_null(strstr(d->warning, "record of 8 bytes"));
	replay_jitdump_free(d);
}

static void jitdump_not_a_dump_is_an_error(void **state)
{
	struct replay_jitdump *d = NULL;
	assert_int_not_equal(replay_jitdump_parse("x.dump", "ELF\x7f", 4, &d), 0);
	assert_int_not_equal(replay_jitdump_parse("x.dump", "", 0, &d), 0);
	struct buf b;
	header(&b, false);
	assert_int_not_equal(replay_jitdump_parse("x.dump", b.b, 30, &d), 0);
	b.b[8] = 200; /* a header larger than the file */
	assert_int_not_equal(replay_jitdump_parse("x.dump", b.b, b.n, &d), 0);
	assert_null(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jitdump_header_and_loads_are_read),
		cmocka_unit_test(jitdump_big_endian_dump_is_read),
		cmocka_unit_test(jitdump_reused_address_names_the_code_of_the_moment),
		cmocka_unit_test(jitdump_moved_code_leaves_its_old_address),
		cmocka_unit_test(jitdump_move_of_unknown_code_warns_and_reads_on),
		cmocka_unit_test(jitdump_debug_info_gives_lines_to_the_next_load),
		cmocka_unit_test(jitdump_interleaved_line_tables_find_their_code),
		cmocka_unit_test(jitdump_garbled_line_table_is_left_out),
		cmocka_unit_test(jitdump_v8_garbled_script_names_are_read_again),
		cmocka_unit_test(jitdump_unwinding_info_is_split_into_frame_and_header),
		cmocka_unit_test(jitdump_feed_gives_the_unwinder_cfi_in_time_order),
		cmocka_unit_test(jitdump_truncated_file_keeps_the_whole_records),
		cmocka_unit_test(jitdump_lying_sizes_and_counts_are_refused),
		cmocka_unit_test(jitdump_not_a_dump_is_an_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
