/*
 * CFI against readelf --debug-dump=frames-interp: every row of every FDE (the CFA and each
 * register column readelf prints) must be what dwarf_cfi_row_at() returns at that row's
 * address. Programs are compiled at test time: gcc and clang, bfd and lld, .eh_frame with
 * and without .eh_frame_hdr, .debug_frame only; plus the system libc (signal frames).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "dwarf/cfi.h"
#include "elf/elf.h"

static char dir[64];

static const char prog_src[] =
	"#include <stdio.h>\n#include <stdlib.h>\n"
	"__attribute__((noinline)) static long leaf(long n) { char *p = malloc(n); long s = 0;"
	" for (long i = 0; i < n; i++) { p[i] = (char)i; s += p[i] * i; } free(p); return s; }\n"
	"__attribute__((noinline)) long mid(long a, long b, long c, long d, long e, long f) {"
	" long v[64]; for (int i = 0; i < 64; i++) v[i] = leaf(a + i) ^ b; long s = c + d;"
	" for (int i = 0; i < 64; i++) s += v[i] * e - f; return s; }\n"
	"int main(int argc, char **argv) { printf(\"%ld\\n\", mid(argc, 2, 3, 4, 5, 6)); return 0; }\n";

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static int setup(void **state)
{
	strcpy(dir, "/tmp/tally-cfi.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	char path[128];
	snprintf(path, sizeof(path), "%s/prog.c", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(prog_src, f);
	fclose(f);
	return sh("cd %s && gcc -O2 -g -o gcc prog.c && clang -O2 -g -fuse-ld=lld -o lld prog.c"
		  " && clang -O2 -g -fuse-ld=bfd -o bfd prog.c"
		  " && gcc -O0 -fno-omit-frame-pointer -o fp prog.c"
		  " && gcc -O2 -g -fno-asynchronous-unwind-tables -fno-exceptions -o dbgframe prog.c"
		  " && gcc -O2 -Wl,--no-eh-frame-hdr -o nohdr prog.c", dir);
}

static int teardown(void **state)
{
	return sh("rm -rf %s", dir);
}

static const char *const regnames[] = { "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
					"r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15" };

static void fmt_rule(const struct dwarf_rule *r, char *out, size_t n)
{
	switch (r->kind) {
	case DWARF_RULE_UNSET:
	case DWARF_RULE_UNDEFINED: snprintf(out, n, "u"); break;
	case DWARF_RULE_SAME: snprintf(out, n, "s"); break;
	case DWARF_RULE_OFFSET: snprintf(out, n, "c%+" PRId64, r->off); break;
	case DWARF_RULE_VAL_OFFSET: snprintf(out, n, "v%+" PRId64, r->off); break;
	case DWARF_RULE_REGISTER: snprintf(out, n, "r%u", r->reg); break; /* then "(name)" */
	case DWARF_RULE_EXPR: snprintf(out, n, "exp"); break;
	case DWARF_RULE_VAL_EXPR: snprintf(out, n, "vexp"); break;
	}
}

static void fmt_cfa(const struct dwarf_cfi_row *row, char *out, size_t n)
{
	if (row->cfa.kind == DWARF_CFA_EXPR)
		snprintf(out, n, "exp");
	else
		snprintf(out, n, "%s%+" PRId64, row->cfa.reg < 16 ? regnames[row->cfa.reg] : "?",
			 row->cfa.off);
}

/* What readelf printed for one row, kept until we know no later row has the same address. */
struct expect {
	uint64_t loc;
	char line[1024];
	char cols[64][16]; /* column names from the LOC CFA header */
	int ncols;
	bool signal;
	bool valid;
};

struct stats {
	int rows, fdes, signal_rows, exp_cfa, debug_frame_rows;
};

static void check_row(struct dwarf_cfi *cfi, const struct expect *e, struct stats *st,
		      bool is_debug)
{
	struct dwarf_cfi_row row;
	int r = dwarf_cfi_row_at(cfi, e->loc, &row);
	if (r) {
		fail_msg("no row at 0x%" PRIx64 " (%d: %s)", e->loc, r, err_msg());
		return;
	}
	char buf[1024];
	strcpy(buf, e->line);
	char *save = NULL, *tok = strtok_r(buf, " \t\n", &save);
	tok = strtok_r(NULL, " \t\n", &save);
	char got[32];
	fmt_cfa(&row, got, sizeof(got));
	if (!tok || strcmp(tok, got))
		fail_msg("0x%" PRIx64 ": CFA readelf %s, tally %s", e->loc, tok ? tok : "-", got);
	for (int i = 0; i < e->ncols; i++) {
		tok = strtok_r(NULL, " \t\n", &save);
		if (!tok)
			break;
		if (save && *save == '(') /* readelf writes a register rule as "r9 (r9)" */
			strtok_r(NULL, " \t\n", &save);
		int reg = -1;
		if (!strcmp(e->cols[i], "ra"))
			reg = row.ra_reg;
		for (int k = 0; k < 16; k++)
			if (!strcmp(e->cols[i], regnames[k]))
				reg = k;
		if (reg < 0)
			continue;
		fmt_rule(&row.regs[reg], got, sizeof(got));
		if (strcmp(tok, got))
			fail_msg("0x%" PRIx64 ": %s readelf %s, tally %s", e->loc, e->cols[i], tok, got);
	}
	if (row.signal_frame != e->signal)
		fail_msg("0x%" PRIx64 ": signal frame flag differs", e->loc);
	st->rows++;
	st->signal_rows += row.signal_frame;
	st->exp_cfa += row.cfa.kind == DWARF_CFA_EXPR;
	st->debug_frame_rows += is_debug;
}

struct cie_info {
	unsigned long off;
	bool signal;
	char line[1024];
	char cols[64][16];
	int ncols;
};

static bool covered(uint64_t (*ranges)[2], int n, uint64_t pc)
{
	for (int i = 0; i < n; i++)
		if (pc >= ranges[i][0] && pc < ranges[i][1])
			return true;
	return false;
}

/* Compares every row readelf prints for path; returns the counts seen. */
static struct stats compare_with_readelf(const char *path)
{
	struct stats st = { 0 };
	struct elf_file *ef;
	struct dwarf_cfi *cfi;
	assert_int_equal(elf_open(path, &ef), 0);
	assert_int_equal(dwarf_cfi_open_elf(ef, NULL, &cfi), 0);

	char cmd[256];
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp %s", path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	static struct cie_info cies[16384];
	static uint64_t eh_ranges[200000][2];
	int ncies = 0, neh = 0;
	static struct expect e, pend;
	bool is_debug = false, in_cie = false, fde_rows = true;
	uint64_t fde_start = 0;
	struct cie_info *cur_cie = NULL, *fde_cie = NULL;
	char line[1024];
	bool skip_fde = false;
	memset(&pend, 0, sizeof(pend));
	for (;;) {
		char *got = fgets(line, sizeof(line), p);
		unsigned long off, cie_off;
		uint64_t a, b;
		char aug[32];
		bool new_entry = !got || strstr(line, " FDE ") || strstr(line, " CIE ") ||
				 strstr(line, "Contents of");
		if (new_entry) {
			if (pend.valid && !skip_fde)
				check_row(cfi, &pend, &st, is_debug);
			pend.valid = false;
			if (!fde_rows && fde_cie && !skip_fde) { /* an FDE with the CIE's row only */
				struct expect ce = { .loc = fde_start, .ncols = fde_cie->ncols,
						     .signal = fde_cie->signal, .valid = true };
				snprintf(ce.line, sizeof(ce.line), "%016" PRIx64 " %s", fde_start,
					 strchr(fde_cie->line, ' ') ? strchr(fde_cie->line, ' ') + 1 : "");
				memcpy(ce.cols, fde_cie->cols, sizeof(ce.cols));
				if (fde_cie->line[0])
					check_row(cfi, &ce, &st, is_debug);
			}
			fde_rows = true;
			fde_cie = NULL;
		}
		if (!got)
			break;
		if (strstr(line, "Contents of the .debug_frame"))
			is_debug = true;
		else if (strstr(line, "Contents of the .eh_frame"))
			is_debug = false;
		if (strstr(line, " CIE") && sscanf(line, "%lx", &off) == 1) {
			aug[0] = 0;
			sscanf(line, "%*x %*x %*x CIE \"%31[^\"]\"", aug);
			assert_true(ncies < 16384);
			cur_cie = &cies[ncies++];
			memset(cur_cie, 0, sizeof(*cur_cie));
			cur_cie->off = off + (is_debug ? 1ul << 40 : 0);
			cur_cie->signal = strchr(aug, 'S') != NULL;
			in_cie = true;
			continue;
		}
		if (sscanf(line, "%lx %*x %*x FDE cie=%lx pc=%" SCNx64 "..%" SCNx64, &off, &cie_off,
			   &a, &b) == 4) {
			in_cie = false;
			st.fdes++;
			fde_cie = NULL;
			for (int i = 0; i < ncies; i++)
				if (cies[i].off == cie_off + (is_debug ? 1ul << 40 : 0))
					fde_cie = &cies[i];
			assert_non_null(fde_cie);
			e.signal = fde_cie->signal;
			fde_start = a;
			fde_rows = false;
			skip_fde = is_debug && covered(eh_ranges, neh, a);
			if (!is_debug && neh < 200000 && b > a) {
				eh_ranges[neh][0] = a;
				eh_ranges[neh++][1] = b;
			}
			continue;
		}
		if (strstr(line, "LOC") && strstr(line, "CFA")) {
			char buf[1024], *save = NULL;
			strcpy(buf, line);
			int n = 0;
			strtok_r(buf, " \t\n", &save);
			strtok_r(NULL, " \t\n", &save);
			for (char *t; (t = strtok_r(NULL, " \t\n", &save)) && n < 64; n++)
				snprintf(e.cols[n], sizeof(e.cols[n]), "%s", t);
			e.ncols = n;
			if (in_cie && cur_cie) {
				memcpy(cur_cie->cols, e.cols, sizeof(e.cols));
				cur_cie->ncols = n;
			}
			continue;
		}
		uint64_t loc;
		char cfa[64];
		if (sscanf(line, "%16" SCNx64 " %63s", &loc, cfa) == 2 && strlen(line) > 17 &&
		    line[16] == ' ') {
			if (in_cie) {
				snprintf(cur_cie->line, sizeof(cur_cie->line), "%s", line);
				continue;
			}
			fde_rows = true;
			if (pend.valid && pend.loc != loc && !skip_fde)
				check_row(cfi, &pend, &st, is_debug);
			pend = e;
			pend.loc = loc;
			snprintf(pend.line, sizeof(pend.line), "%s", line);
			pend.valid = true;
		}
	}
	pclose(p); /* readelf exits 1 on libc without saying why; the row counts are checked */
	dwarf_cfi_close(cfi);
	elf_close(ef);
	return st;
}

static struct stats check_built(const char *name)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	struct stats st = compare_with_readelf(path);
	assert_true(st.rows > 10);
	return st;
}

static void cfi_gcc_eh_frame_hdr_matches_readelf(void **state)
{
	struct stats st = check_built("gcc");
	assert_true(st.exp_cfa > 0); /* the PLT's CFA is DW_CFA_def_cfa_expression */
}

static void cfi_clang_lld_matches_readelf(void **state) { check_built("lld"); }
static void cfi_clang_bfd_matches_readelf(void **state) { check_built("bfd"); }
static void cfi_frame_pointer_build_matches_readelf(void **state) { check_built("fp"); }
static void cfi_without_eh_frame_hdr_is_indexed(void **state) { check_built("nohdr"); }

static void cfi_debug_frame_only_matches_readelf(void **state)
{
	struct stats st = check_built("dbgframe");
	assert_true(st.debug_frame_rows > 3);
}

static void cfi_libc_signal_frames_and_state_stack_match_readelf(void **state)
{
	struct stats st = compare_with_readelf("/lib/x86_64-linux-gnu/libc.so.6");
	assert_true(st.rows > 5000);
	assert_true(st.signal_rows > 0); /* __restore_rt's FDE has the 'S' augmentation */
}

struct plt_env {
	uint64_t rsp, rip;
};

static int plt_reg(void *arg, unsigned regno, uint64_t *val)
{
	struct plt_env *e = arg;
	if (regno == 7)
		*val = e->rsp;
	else if (regno == 16)
		*val = e->rip;
	else
		return -1;
	return 0;
}

static int no_mem(void *arg, uint64_t addr, unsigned size, uint64_t *val) { return -1; }

/* GNU ld's PLT: DW_OP_breg7 8; DW_OP_breg16 0; lit15; and; litN; ge; lit3; shl; plus. The
 * CFA is rsp+8 before the entry's push and rsp+16 after it, which the expression tells by
 * the pc's offset in the 16-byte entry. */
static void unwind_plt_entry_uses_cfa_expression(void **state)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/gcc", dir);
	struct elf_file *ef;
	struct dwarf_cfi *cfi;
	assert_int_equal(elf_open(path, &ef), 0);
	assert_int_equal(dwarf_cfi_open_elf(ef, NULL, &cfi), 0);
	struct elf_section *plt = elf_section_by_name(ef, ".plt");
	assert_non_null(plt);
	/* The threshold as readelf decodes it: DW_OP_lit11 (or lit10 with IBT PLTs). */
	char cmd[256], out[4096] = "";
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames %s | grep -o 'DW_OP_and; DW_OP_lit[0-9]*'", path);
	FILE *p = popen(cmd, "r");
	assert_non_null(fgets(out, sizeof(out), p));
	pclose(p);
	int lit = atoi(strstr(out, "lit") + 3);
	struct dwarf_cfi_row row;
	uint64_t entry = plt->addr + 16; /* PLT0 is the resolver stub, entries follow */
	struct plt_env env = { .rsp = 0x7ffc0000 };
	struct dwarf_expr_env x = { plt_reg, no_mem, &env, 8, false };
	for (unsigned o = 0; o < 16; o++) {
		env.rip = entry + o;
		assert_int_equal(dwarf_cfi_row_at(cfi, env.rip, &row), 0);
		assert_int_equal(row.cfa.kind, DWARF_CFA_EXPR);
		uint64_t cfa;
		assert_int_equal(dwarf_expr_eval(row.cfa.expr, row.cfa.expr_len, &x, false, 0, &cfa), 0);
		assert_int_equal(cfa, env.rsp + ((int)o >= lit ? 16 : 8));
	}
	dwarf_cfi_close(cfi);
	elf_close(ef);
}

static void expr_rejects_stack_underflow_and_runaway_branches(void **state)
{
	struct dwarf_expr_env x = { plt_reg, no_mem, NULL, 8, false };
	uint64_t v;
	const uint8_t underflow[] = { 0x22 };             /* plus on an empty stack */
	const uint8_t loop[] = { 0x2f, 0xfd, 0xff };      /* skip -3: itself, forever */
	const uint8_t deref[] = { 0x30, 0x06 };           /* lit0; deref through no_mem */
	const uint8_t truncated[] = { 0x0e, 1, 2 };       /* const8u with 2 of 8 bytes */
	assert_int_not_equal(dwarf_expr_eval(underflow, sizeof(underflow), &x, false, 0, &v), 0);
	assert_int_not_equal(dwarf_expr_eval(loop, sizeof(loop), &x, false, 0, &v), 0);
	assert_int_not_equal(dwarf_expr_eval(deref, sizeof(deref), &x, false, 0, &v), 0);
	assert_int_not_equal(dwarf_expr_eval(truncated, sizeof(truncated), &x, false, 0, &v), 0);
	const uint8_t arith[] = { 0x3a, 0x35, 0x1e, 0x11, 0x7e, 0x22, 0x12, 0x29 }; /* 10*5 + -2 == itself */
	assert_int_equal(dwarf_expr_eval(arith, sizeof(arith), &x, false, 0, &v), 0);
	assert_int_equal(v, 1);
}

static void cfi_truncated_entry_names_file_and_offset(void **state)
{
	/* A CIE claiming 0x40 bytes in a 12-byte section. */
	const uint8_t eh[] = { 0x40, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0 };
	struct dwarf_cfi_src src = { .name = "bad.so", .eh_frame = { eh, sizeof(eh), 0x1000 },
				     .addr_size = 8 };
	struct dwarf_cfi *cfi;
	struct dwarf_cfi_row row;
	assert_int_equal(dwarf_cfi_open(&src, &cfi), 0);
	assert_true(dwarf_cfi_row_at(cfi, 0x1000, &row) < 0);
	assert_string_equal(err_msg(), "bad.so: .eh_frame at 0x0: entry length runs past the section");
	dwarf_cfi_close(cfi);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cfi_gcc_eh_frame_hdr_matches_readelf),
		cmocka_unit_test(cfi_clang_lld_matches_readelf),
		cmocka_unit_test(cfi_clang_bfd_matches_readelf),
		cmocka_unit_test(cfi_frame_pointer_build_matches_readelf),
		cmocka_unit_test(cfi_without_eh_frame_hdr_is_indexed),
		cmocka_unit_test(cfi_debug_frame_only_matches_readelf),
		cmocka_unit_test(cfi_libc_signal_frames_and_state_stack_match_readelf),
		cmocka_unit_test(unwind_plt_entry_uses_cfa_expression),
		cmocka_unit_test(expr_rejects_stack_underflow_and_runaway_branches),
		cmocka_unit_test(cfi_truncated_entry_names_file_and_offset),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
