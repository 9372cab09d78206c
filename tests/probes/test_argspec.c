/*
 * USDT argument specs: every x86-64 form GCC and Clang emit (registers of every width,
 * memory with base/index/scale/displacement and symbols, constants), the aarch64 forms,
 * and malformed specs failing cleanly. Expected values worked out by hand from the AT&T
 * and A64 operand syntax.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "base/arena.h"
#include "probes/usdt.h"

static struct usdt_arg *parse(struct arena *a, const char *text, enum usdt_arch arch, size_t n)
{
	struct usdt_arg *args;
	size_t got;
	assert_int_equal(usdt_parse_args(text, arch, a, &args, &got), 0);
	assert_int_equal(got, n);
	return args;
}

static void x86_registers_of_every_width(void **state)
{
	struct arena a = { 0 };
	struct usdt_arg *v = parse(&a, "8@%rax -4@%r10d 2@%r9w -1@%sil 1@%ah 8@%r15 4@%ebp", USDT_ARCH_X86_64, 7);
	assert_int_equal(v[0].kind, USDT_ARG_REG);
	assert_int_equal(v[0].reg, USDT_X86_AX);
	assert_int_equal(v[0].size, 8);
	assert_false(v[0].is_signed);
	assert_int_equal(v[1].reg, USDT_X86_R10);
	assert_int_equal(v[1].reg_width, 4);
	assert_true(v[1].is_signed);
	assert_int_equal(v[2].reg, USDT_X86_R9);
	assert_int_equal(v[2].reg_width, 2);
	assert_int_equal(v[3].reg, USDT_X86_SI);
	assert_int_equal(v[3].reg_width, 1);
	assert_int_equal(v[4].reg, USDT_X86_AX);
	assert_int_equal(v[4].reg_shift, 8);
	assert_int_equal(v[5].reg, USDT_X86_R15);
	assert_int_equal(v[6].reg, USDT_X86_BP);
	arena_free(&a);
}

static void x86_memory_base_index_scale_displacement(void **state)
{
	struct arena a = { 0 };
	struct usdt_arg *v = parse(&a, "-4@-16(%rbp) 8@(%rax,%rbx,8) 2@0x10(,%rcx,4) 8@72(%rsp) 4f@fv(%rip) 8f@.LCPI0_0+8(%rip)",
				   USDT_ARCH_X86_64, 6);
	assert_int_equal(v[0].kind, USDT_ARG_MEM);
	assert_int_equal(v[0].reg, USDT_X86_BP);
	assert_int_equal(v[0].value, -16);
	assert_int_equal(v[0].index, USDT_NO_REG);
	assert_int_equal(v[1].reg, USDT_X86_AX);
	assert_int_equal(v[1].index, USDT_X86_BX);
	assert_int_equal(v[1].scale, 8);
	assert_int_equal(v[1].value, 0);
	assert_int_equal(v[2].reg, USDT_NO_REG);
	assert_int_equal(v[2].index, USDT_X86_CX);
	assert_int_equal(v[2].scale, 4);
	assert_int_equal(v[2].value, 16);
	assert_int_equal(v[3].reg, USDT_X86_SP);
	assert_int_equal(v[3].value, 72);
	assert_true(v[4].is_float);
	assert_int_equal(v[4].size, 4);
	assert_string_equal(v[4].symbol, "fv");
	assert_int_equal(v[4].reg, USDT_X86_IP);
	assert_string_equal(v[5].symbol, ".LCPI0_0");
	assert_int_equal(v[5].value, 8);
	arena_free(&a);
}

static void x86_constants(void **state)
{
	struct arena a = { 0 };
	struct usdt_arg *v = parse(&a, "-4@$5 1@$-56 8@$0x7fffffffffffffff", USDT_ARCH_X86_64, 3);
	assert_int_equal(v[0].kind, USDT_ARG_CONST);
	assert_int_equal(v[0].value, 5);
	assert_int_equal(v[1].value, -56);
	assert_int_equal(v[2].value, INT64_MAX);
	arena_free(&a);
}

static void aarch64_forms_split_outside_brackets(void **state)
{
	struct arena a = { 0 };
	struct usdt_arg *v = parse(&a, "-8@x0 -4@w1 8@[sp, 8] 8@[x29, -16] -4@#17 -4@17 8@[x9] 8@sp 4@[x1, x2]",
				   USDT_ARCH_AARCH64, 9);
	assert_int_equal(v[0].kind, USDT_ARG_REG);
	assert_int_equal(v[0].reg, 0);
	assert_int_equal(v[1].reg, 1);
	assert_int_equal(v[1].reg_width, 4);
	assert_int_equal(v[2].kind, USDT_ARG_MEM);
	assert_int_equal(v[2].reg, USDT_A64_SP);
	assert_int_equal(v[2].value, 8);
	assert_int_equal(v[3].reg, 29);
	assert_int_equal(v[3].value, -16);
	assert_int_equal(v[4].kind, USDT_ARG_CONST);
	assert_int_equal(v[4].value, 17);
	assert_int_equal(v[5].value, 17);
	assert_int_equal(v[6].reg, 9);
	assert_int_equal(v[6].value, 0);
	assert_int_equal(v[7].kind, USDT_ARG_REG);
	assert_int_equal(v[7].reg, USDT_A64_SP);
	assert_int_equal(v[8].index, 2);
	arena_free(&a);
}

static void empty_spec_has_no_arguments(void **state)
{
	struct arena a = { 0 };
	parse(&a, "", USDT_ARCH_X86_64, 0);
	parse(&a, "  ", USDT_ARCH_AARCH64, 0);
	arena_free(&a);
}

static void malformed_specs_fail(void **state)
{
	const char *bad_x86[] = { "4@%xyz", "3@%eax", "4@(%rax", "4@8(%rax,%rbx,3)", "4@$", "-4@",
				  "4@()", "x@%eax", "4@%r16", "4@%eax,", "4f", NULL };
	const char *bad_a64[] = { "8@x31", "8@[sp, 8", "8@[q0]", "8@#", "8@w", NULL };
	struct arena a = { 0 };
	struct usdt_arg *args;
	size_t n;
	for (int i = 0; bad_x86[i]; i++)
		assert_int_not_equal(usdt_parse_args(bad_x86[i], USDT_ARCH_X86_64, &a, &args, &n), 0);
	for (int i = 0; bad_a64[i]; i++)
		assert_int_not_equal(usdt_parse_args(bad_a64[i], USDT_ARCH_AARCH64, &a, &args, &n), 0);
	arena_free(&a);
}

static void describe_names_width_and_memory(void **state)
{
	struct arena a = { 0 };
	struct usdt_arg *v = parse(&a, "-4@%ebp 8@-16(%rbp,%rax,8) 1@%ah", USDT_ARCH_X86_64, 3);
	char buf[128];
	usdt_arg_describe(&v[0], USDT_ARCH_X86_64, buf, sizeof(buf));
	assert_string_equal(buf, "s32 reg rbp[31:0]");
	usdt_arg_describe(&v[1], USDT_ARCH_X86_64, buf, sizeof(buf));
	assert_string_equal(buf, "u64 mem[rbp+rax*8-16]");
	usdt_arg_describe(&v[2], USDT_ARCH_X86_64, buf, sizeof(buf));
	assert_string_equal(buf, "u8 reg rax[15:8]");
	arena_free(&a);
}

static void note_descriptor_round_trip(void **state)
{
	uint8_t d[64] = { 0 };
	/* pc 0x1234, base 0x2000, semaphore 0x4010, "p", "n", "-4@%edi" */
	d[0] = 0x34, d[1] = 0x12, d[9] = 0x20, d[16] = 0x10, d[17] = 0x40;
	memcpy(d + 24, "p\0n\0-4@%edi", 12);
	struct arena a = { 0 };
	struct usdt_probe p;
	assert_int_equal(usdt_parse_desc(d, 36, true, false, &a, &p), 0);
	assert_int_equal(p.pc, 0x1234);
	assert_int_equal(p.note_base, 0x2000);
	assert_int_equal(p.semaphore, 0x4010);
	assert_string_equal(p.provider, "p");
	assert_string_equal(p.name, "n");
	assert_string_equal(p.args_text, "-4@%edi");
	/* Cut before the argument string's NUL: refused. */
	assert_int_not_equal(usdt_parse_desc(d, 35, true, false, &a, &p), 0);
	/* 32-bit layout: three 4-byte addresses. */
	assert_int_equal(usdt_parse_desc(d + 12, 24, false, false, &a, &p), 0);
	assert_string_equal(p.provider, "p");
	arena_free(&a);
}

static void patterns_glob_each_side(void **state)
{
	struct usdt_probe p = { .provider = "python", .name = "function__entry" };
	assert_true(usdt_match(&p, "python:*"));
	assert_true(usdt_match(&p, "py*:function__*"));
	assert_true(usdt_match(&p, "function__entry"));
	assert_false(usdt_match(&p, "python:line"));
	assert_false(usdt_match(&p, "node:*"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(x86_registers_of_every_width),
		cmocka_unit_test(x86_memory_base_index_scale_displacement),
		cmocka_unit_test(x86_constants),
		cmocka_unit_test(aarch64_forms_split_outside_brackets),
		cmocka_unit_test(empty_spec_has_no_arguments),
		cmocka_unit_test(malformed_specs_fail),
		cmocka_unit_test(describe_names_width_and_memory),
		cmocka_unit_test(note_descriptor_round_trip),
		cmocka_unit_test(patterns_glob_each_side),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
