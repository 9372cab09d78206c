/*
 * USDT argument specs: "SIZE[f]@OPERAND", space-separated, where OPERAND is whatever the
 * compiler printed for an asm operand. x86-64 (AT&T): $imm, %reg of any width, and memory
 * disp(%base,%index,scale) with a numeric or symbolic displacement. aarch64: xN/wN/sp,
 * #imm or a bare number, and [base{, #imm | , xM}]. An aarch64 operand contains a space
 * ("[sp, 8]"), so arguments are split on spaces outside brackets only.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/vec.h"
#include "probes/usdt.h"

struct x86_reg {
	const char *name;
	int reg, width, shift;
};

/* Every general-purpose register name, by width; ah/bh/ch/dh are bits 8-15. */
static const struct x86_reg x86_regs[] = {
	{ "rax", USDT_X86_AX, 8, 0 }, { "eax", USDT_X86_AX, 4, 0 }, { "ax", USDT_X86_AX, 2, 0 },
	{ "al", USDT_X86_AX, 1, 0 },  { "ah", USDT_X86_AX, 1, 8 },  { "rbx", USDT_X86_BX, 8, 0 },
	{ "ebx", USDT_X86_BX, 4, 0 }, { "bx", USDT_X86_BX, 2, 0 },  { "bl", USDT_X86_BX, 1, 0 },
	{ "bh", USDT_X86_BX, 1, 8 },  { "rcx", USDT_X86_CX, 8, 0 }, { "ecx", USDT_X86_CX, 4, 0 },
	{ "cx", USDT_X86_CX, 2, 0 },  { "cl", USDT_X86_CX, 1, 0 },  { "ch", USDT_X86_CX, 1, 8 },
	{ "rdx", USDT_X86_DX, 8, 0 }, { "edx", USDT_X86_DX, 4, 0 }, { "dx", USDT_X86_DX, 2, 0 },
	{ "dl", USDT_X86_DX, 1, 0 },  { "dh", USDT_X86_DX, 1, 8 },  { "rsi", USDT_X86_SI, 8, 0 },
	{ "esi", USDT_X86_SI, 4, 0 }, { "si", USDT_X86_SI, 2, 0 },  { "sil", USDT_X86_SI, 1, 0 },
	{ "rdi", USDT_X86_DI, 8, 0 }, { "edi", USDT_X86_DI, 4, 0 }, { "di", USDT_X86_DI, 2, 0 },
	{ "dil", USDT_X86_DI, 1, 0 }, { "rbp", USDT_X86_BP, 8, 0 }, { "ebp", USDT_X86_BP, 4, 0 },
	{ "bp", USDT_X86_BP, 2, 0 },  { "bpl", USDT_X86_BP, 1, 0 }, { "rsp", USDT_X86_SP, 8, 0 },
	{ "esp", USDT_X86_SP, 4, 0 }, { "sp", USDT_X86_SP, 2, 0 },  { "spl", USDT_X86_SP, 1, 0 },
	{ "rip", USDT_X86_IP, 8, 0 }, { "eip", USDT_X86_IP, 4, 0 },
};

static const char *const x86_names[USDT_X86_NREGS] = {
	"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8",
	"r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip",
};

static const char *const a64_names[USDT_A64_NREGS] = {
	"x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",  "x8",  "x9",  "x10",
	"x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21",
	"x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp",
};

const char *usdt_reg_name(enum usdt_arch arch, int reg)
{
	if (arch == USDT_ARCH_X86_64)
		return reg >= 0 && reg < USDT_X86_NREGS ? x86_names[reg] : "?";
	return reg >= 0 && reg < USDT_A64_NREGS ? a64_names[reg] : "?";
}

/* Reads a register name of len bytes at s (without '%'): 0, or -EINVAL. */
static int x86_reg(const char *s, size_t len, int *reg, int *width, int *shift)
{
	for (size_t i = 0; i < sizeof(x86_regs) / sizeof(x86_regs[0]); i++) {
		if (strlen(x86_regs[i].name) == len && !memcmp(s, x86_regs[i].name, len)) {
			*reg = x86_regs[i].reg, *width = x86_regs[i].width, *shift = x86_regs[i].shift;
			return 0;
		}
	}
	/* r8-r15 with suffix: none (64), d (32), w (16), b or l (8). */
	if (len >= 2 && s[0] == 'r' && isdigit((unsigned char)s[1])) {
		char *end;
		long n = strtol(s + 1, &end, 10);
		size_t rest = len - (size_t)(end - s);
		if (n < 8 || n > 15 || rest > 1)
			return -EINVAL;
		int w = !rest ? 8 : *end == 'd' ? 4 : *end == 'w' ? 2 : *end == 'b' || *end == 'l' ? 1 : 0;
		if (!w)
			return -EINVAL;
		*reg = USDT_X86_R8 + (int)(n - 8), *width = w, *shift = 0;
		return 0;
	}
	return -EINVAL;
}

/* A signed decimal or 0x number at *p; advances *p. */
static int number(const char **p, int64_t *v)
{
	const char *s = *p;
	int neg = 0;
	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long u = strtoull(s, &end, 0);
	if (errno)
		return -EINVAL;
	*v = neg ? -(int64_t)u : (int64_t)u;
	*p = end;
	return 0;
}

static int x86_percent_reg(const char **p, int *reg, int *width, int *shift)
{
	const char *s = *p;
	if (*s != '%')
		return -EINVAL;
	s++;
	size_t len = 0;
	while (isalnum((unsigned char)s[len]))
		len++;
	if (x86_reg(s, len, reg, width, shift))
		return -EINVAL;
	*p = s + len;
	return 0;
}

static int parse_x86(const char *op, struct arena *arena, struct usdt_arg *a)
{
	const char *s = op;
	int width, shift;
	if (*s == '$') {
		s++;
		a->kind = USDT_ARG_CONST;
		return number(&s, &a->value) || *s ? -EINVAL : 0;
	}
	if (*s == '%') {
		a->kind = USDT_ARG_REG;
		return x86_percent_reg(&s, &a->reg, &a->reg_width, &a->reg_shift) || *s ? -EINVAL : 0;
	}
	a->kind = USDT_ARG_MEM;
	/* Displacement: [symbol][(+|-)number] or number, then an optional (base,index,scale). */
	if (isalpha((unsigned char)*s) || *s == '_' || *s == '.') {
		size_t len = 0;
		while (isalnum((unsigned char)s[len]) || s[len] == '_' || s[len] == '.')
			len++;
		a->symbol = arena_strndup(arena, s, len);
		if (!a->symbol)
			return -ENOMEM;
		s += len;
	}
	if (*s == '-' || *s == '+' || isdigit((unsigned char)*s))
		if (number(&s, &a->value))
			return -EINVAL;
	if (!*s)
		return a->symbol || a->value ? 0 : -EINVAL; /* an absolute address */
	if (*s++ != '(')
		return -EINVAL;
	if (*s == '%' && x86_percent_reg(&s, &a->reg, &a->reg_width, &shift))
		return -EINVAL;
	if (*s == ',') {
		s++;
		if (x86_percent_reg(&s, &a->index, &width, &shift))
			return -EINVAL;
		a->scale = 1;
		if (*s == ',') {
			s++;
			int64_t sc;
			if (number(&s, &sc) || (sc != 1 && sc != 2 && sc != 4 && sc != 8))
				return -EINVAL;
			a->scale = (int)sc;
		}
	}
	if (*s++ != ')' || *s)
		return -EINVAL;
	return a->reg == USDT_NO_REG && a->index == USDT_NO_REG ? -EINVAL : 0;
}

static int a64_reg(const char **p, int *reg, int *width)
{
	const char *s = *p;
	if (!strncmp(s, "sp", 2) && !isalnum((unsigned char)s[2])) {
		*reg = USDT_A64_SP, *width = 8, *p = s + 2;
		return 0;
	}
	if ((*s != 'x' && *s != 'w') || !isdigit((unsigned char)s[1]))
		return -EINVAL;
	char *end;
	long n = strtol(s + 1, &end, 10);
	if (n < 0 || n > 30 || isalnum((unsigned char)*end))
		return -EINVAL;
	*reg = (int)n, *width = *s == 'x' ? 8 : 4, *p = end;
	return 0;
}

static int parse_a64(const char *op, struct usdt_arg *a)
{
	const char *s = op;
	int width;
	if (*s == '#' || *s == '-' || isdigit((unsigned char)*s)) {
		s += *s == '#';
		a->kind = USDT_ARG_CONST;
		return number(&s, &a->value) || *s ? -EINVAL : 0;
	}
	if (*s != '[') {
		a->kind = USDT_ARG_REG;
		return a64_reg(&s, &a->reg, &a->reg_width) || *s ? -EINVAL : 0;
	}
	s++;
	a->kind = USDT_ARG_MEM;
	if (a64_reg(&s, &a->reg, &a->reg_width))
		return -EINVAL;
	if (*s == ',') {
		s++;
		while (*s == ' ')
			s++;
		if (*s == 'x' || *s == 'w') {
			if (a64_reg(&s, &a->index, &width))
				return -EINVAL;
			a->scale = 1;
		} else {
			s += *s == '#';
			if (number(&s, &a->value))
				return -EINVAL;
		}
	}
	return *s++ != ']' || *s ? -EINVAL : 0;
}

/* One "SIZE[f]@OPERAND" (or a bare operand, from notes older than v3). */
static int parse_one(const char *text, enum usdt_arch arch, struct arena *arena,
		     struct usdt_arg *a)
{
	memset(a, 0, sizeof(*a));
	a->reg = a->index = USDT_NO_REG;
	a->size = 8;
	const char *at = strchr(text, '@');
	const char *op = text;
	if (at) {
		const char *s = text;
		int64_t size;
		a->is_signed = *s == '-';
		if (number(&s, &size))
			return -EINVAL;
		if (*s == 'f')
			a->is_float = true, s++;
		if (s != at)
			return -EINVAL;
		size = size < 0 ? -size : size;
		if (size != 1 && size != 2 && size != 4 && size != 8 && size != 10 && size != 12 &&
		    size != 16)
			return -EINVAL;
		a->size = (int)size;
		op = at + 1;
	}
	if (!(a->text = arena_strdup(arena, op)))
		return -ENOMEM;
	return arch == USDT_ARCH_X86_64 ? parse_x86(op, arena, a) : parse_a64(op, a);
}

int usdt_parse_args(const char *text, enum usdt_arch arch, struct arena *arena,
		    struct usdt_arg **args, size_t *nargs)
{
	VEC(struct usdt_arg) v = { 0 };
	const char *s = text;
	int r = 0;
	while (*s) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		size_t len = 0;
		for (int depth = 0; s[len] && (depth || s[len] != ' '); len++)
			depth += s[len] == '[' ? 1 : s[len] == ']' ? -1 : 0;
		char *one = arena_strndup(arena, s, len);
		struct usdt_arg *a = vec_push(&v);
		if (!one || !a) {
			r = -ENOMEM;
			break;
		}
		if ((r = parse_one(one, arch, arena, a))) {
			if (r == -EINVAL)
				err_set(r, "arg%zu: cannot parse \"%s\" as an %s operand", v.n - 1, one,
					arch == USDT_ARCH_X86_64 ? "x86-64" : "aarch64");
			break;
		}
		s += len;
	}
	if (!r && v.n) {
		*args = arena_alloc(arena, v.n * sizeof(*v.v));
		if (*args)
			memcpy(*args, v.v, v.n * sizeof(*v.v));
		else
			r = -ENOMEM;
	}
	*nargs = r ? 0 : v.n;
	if (r || !v.n)
		*args = NULL;
	vec_free(&v);
	if (r == -ENOMEM)
		err_set(r, "out of memory");
	return r;
}

void usdt_arg_describe(const struct usdt_arg *a, enum usdt_arch arch, char *buf, size_t len)
{
	char type[8];
	snprintf(type, sizeof(type), "%c%d", a->is_float ? 'f' : a->is_signed ? 's' : 'u',
		 a->size * 8);
	switch (a->kind) {
	case USDT_ARG_CONST:
		snprintf(buf, len, "%s %" PRId64, type, a->value);
		break;
	case USDT_ARG_REG:
		if (a->reg_width < 8 || a->reg_shift)
			snprintf(buf, len, "%s reg %s[%d:%d]", type, usdt_reg_name(arch, a->reg),
				 a->reg_shift + a->reg_width * 8 - 1, a->reg_shift);
		else
			snprintf(buf, len, "%s reg %s", type, usdt_reg_name(arch, a->reg));
		break;
	case USDT_ARG_MEM: {
		char idx[32] = "";
		if (a->index != USDT_NO_REG)
			snprintf(idx, sizeof(idx), "+%s*%d", usdt_reg_name(arch, a->index), a->scale);
		snprintf(buf, len, "%s mem[%s%s%s%s%+" PRId64 "]", type, a->symbol ? a->symbol : "",
			 a->symbol && a->reg != USDT_NO_REG ? "+" : "",
			 a->reg != USDT_NO_REG ? usdt_reg_name(arch, a->reg) : "", idx, a->value);
		break;
	}
	}
}
