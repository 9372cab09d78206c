/*
 * Static tracepoints (USDT) that cost one predicted-not-taken branch until a tracer attaches.
 *
 *     #include <tally/trace.h>
 *     TALLY_TRACEPOINT(net, recv, fd, len);            // 0 to 12 arguments
 *     if (TALLY_TRACEPOINT_ACTIVE(net, dump)) {        // guard costly preparation
 *             char *s = describe(msg);
 *             TALLY_TRACEPOINT(net, dump, s);
 *             free(s);
 *     }
 *
 * Each probe site emits a systemtap v3 "stapsdt" ELF note (the format bpftrace, bcc, libbpf,
 * perf, gdb and `tally probes` read) and a nop where a tracer puts its breakpoint. Every
 * provider:name has one 16-bit semaphore in the `.probes` section; tracers raise it while
 * attached (the kernel does it for them when given ref_ctr_offset), and the arguments are
 * evaluated only while it is non-zero. Build with -DTALLY_NO_TRACEPOINTS to remove it all:
 * arguments are then only type-checked (in sizeof), never evaluated.
 *
 * The semaphore is defined here, by the assembler, at the probe site: a weak hidden symbol
 * `tally_sem.PROVIDER.NAME` alone in a COMDAT group of that name. COMDAT keeps one copy per
 * linked object however many translation units fire the probe; hidden keeps every shared
 * object's copy its own, so the address in each object's notes is the one its code reads.
 * A volatile read makes a tracer that attaches during a long loop take effect at once.
 *
 * Needs GCC or Clang and an ELF target; elsewhere the macros compile to nothing. No header
 * of systemtap is used: the note layout is re-stated here from the published format
 * (sourceware.org/systemtap/wiki/UserSpaceProbeImplementation), and a test checks that it
 * matches, byte for byte, what <sys/sdt.h> emits for the same probe.
 */
#ifndef TALLY_TRACE_H
#define TALLY_TRACE_H

/* Argument counting: TALLY_TRACEPOINT's own arguments always include provider and name, so
 * the variadic part is never empty (which ISO C before C23 and C++ before C++20 forbid). */
#define TALLY_TRACE_CAT_(a, b) a##b
#define TALLY_TRACE_CAT(a, b) TALLY_TRACE_CAT_(a, b)
#define TALLY_TRACE_PICK_(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, N, ...) N
#define TALLY_TRACE_NARGS(...) \
	TALLY_TRACE_PICK_(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, ~)
#define TALLY_TRACE_DISPATCH(stem, ...) \
	TALLY_TRACE_CAT(stem, TALLY_TRACE_NARGS(__VA_ARGS__))(__VA_ARGS__)

#if defined(TALLY_NO_TRACEPOINTS) || !defined(__ELF__) || !defined(__GNUC__)

/* Compiled out: each argument is only named inside sizeof, so it still type-checks and
 * keeps its variables "used", but nothing is evaluated and no code is emitted. */
#define TALLY_TRACE_OFF_(x) (void)sizeof(x);
#define TALLY_TRACE_OFF_0(p, n)
#define TALLY_TRACE_OFF_1(p, n, a) TALLY_TRACE_OFF_(a)
#define TALLY_TRACE_OFF_2(p, n, a, ...) TALLY_TRACE_OFF_(a) TALLY_TRACE_OFF_1(p, n, __VA_ARGS__)
#define TALLY_TRACE_OFF_3(p, n, a, ...) TALLY_TRACE_OFF_(a) TALLY_TRACE_OFF_2(p, n, __VA_ARGS__)
#define TALLY_TRACE_OFF_4(p, n, a, ...) TALLY_TRACE_OFF_(a) TALLY_TRACE_OFF_3(p, n, __VA_ARGS__)
#define TALLY_TRACE_OFF_5(p, n, a, ...) TALLY_TRACE_OFF_(a) TALLY_TRACE_OFF_4(p, n, __VA_ARGS__)
#define TALLY_TRACE_OFF_6(p, n, a, ...) TALLY_TRACE_OFF_(a) TALLY_TRACE_OFF_5(p, n, __VA_ARGS__)
#define TALLY_TRACE_OFF_7(p, n, a, ...) TALLY_TRACE_OFF_(a) TALLY_TRACE_OFF_6(p, n, __VA_ARGS__)
#define TALLY_TRACE_OFF_8(p, n, a, ...) TALLY_TRACE_OFF_(a) TALLY_TRACE_OFF_7(p, n, __VA_ARGS__)
#define TALLY_TRACE_OFF_9(p, n, a, ...) TALLY_TRACE_OFF_(a) TALLY_TRACE_OFF_8(p, n, __VA_ARGS__)
#define TALLY_TRACE_OFF_10(p, n, a, ...) TALLY_TRACE_OFF_(a) TALLY_TRACE_OFF_9(p, n, __VA_ARGS__)
#define TALLY_TRACE_OFF_11(p, n, a, ...) TALLY_TRACE_OFF_(a) TALLY_TRACE_OFF_10(p, n, __VA_ARGS__)
#define TALLY_TRACE_OFF_12(p, n, a, ...) TALLY_TRACE_OFF_(a) TALLY_TRACE_OFF_11(p, n, __VA_ARGS__)

#define TALLY_TRACEPOINT(...) \
	do { \
		TALLY_TRACE_DISPATCH(TALLY_TRACE_OFF_, __VA_ARGS__) \
	} while (0)
#define TALLY_TRACEPOINT_ACTIVE(provider, name) 0

#else

#define TALLY_TRACE_STR_(x) #x
#define TALLY_TRACE_STR(x) TALLY_TRACE_STR_(x)
#define TALLY_TRACE_SEM_SYM(p, n) tally_sem.p.n

#if __SIZEOF_POINTER__ == 8
#define TALLY_TRACE_ADDR ".8byte "
#else
#define TALLY_TRACE_ADDR ".4byte "
#endif

/* Per argument, one constant (GCC allows at most 30 asm operands, so there is room for two
 * per argument): its size in bytes, negated for a signed integer, as <sys/sdt.h> writes it
 * ("-4@", "8@"); for a floating-point argument 1000 + size, which the note spells "8f@".
 * Arrays (and functions) are passed as pointers. In C the type class comes from
 * __builtin_classify_type (1-4 are integer, char, enum, bool; 5 pointer; 8 real; 14 array);
 * in C++ from the decayed type. */
#ifdef __cplusplus
#include <type_traits>
namespace tally_trace_detail {
template <typename T> struct arg {
	typedef typename std::decay<T>::type D;
	enum {
		size = static_cast<int>(sizeof(D)),
		is_signed = std::is_integral<D>::value && std::is_signed<D>::value,
		code = std::is_floating_point<D>::value ? 1000 + size : is_signed ? -size : size
	};
};
} /* namespace tally_trace_detail */
#define TALLY_TRACE_CODE(x) (tally_trace_detail::arg<decltype(x)>::code)
#else
#define TALLY_TRACE_CLASS(x) __builtin_classify_type(x)
#define TALLY_TRACE_ISINT(x) (TALLY_TRACE_CLASS(x) >= 1 && TALLY_TRACE_CLASS(x) <= 4)
#define TALLY_TRACE_ISPTR(x) (TALLY_TRACE_CLASS(x) == 5 || TALLY_TRACE_CLASS(x) == 14)
/* The argument's own type when it is an integer, else unsigned int (never signed). */
#define TALLY_TRACE_ITYPE(x) __typeof__(__builtin_choose_expr(TALLY_TRACE_ISINT(x), (x), 0U))
/* "< 1", not "< 0": GCC warns (-Wtype-limits) on an unsigned "< 0" even between constants. */
#define TALLY_TRACE_SIGNED(x) ((TALLY_TRACE_ITYPE(x))-1 < 1)
#define TALLY_TRACE_SIZE(x) (TALLY_TRACE_ISPTR(x) ? (int)sizeof(void *) : (int)sizeof(x))
#define TALLY_TRACE_CODE(x) \
	(TALLY_TRACE_CLASS(x) == 8    ? 1000 + TALLY_TRACE_SIZE(x) \
	 : TALLY_TRACE_SIGNED(x) ? -TALLY_TRACE_SIZE(x) \
				 : TALLY_TRACE_SIZE(x))
#endif

/* Operands of argument i: its size code, and the value wherever the
 * compiler has it ("nor": a constant, an offsettable memory operand or a register, the
 * constraint <sys/sdt.h> uses, so both give the same operand strings). */
#define TALLY_TRACE_OPS_(i, x) \
	[tally_s##i] "n"(TALLY_TRACE_CODE(x)), [tally_a##i] "nor"(x)
#define TALLY_TRACE_OPS_0(p, n)
#define TALLY_TRACE_OPS_1(p, n, a) TALLY_TRACE_OPS_(1, a)
#define TALLY_TRACE_OPS_2(p, n, a, b) TALLY_TRACE_OPS_1(p, n, a), TALLY_TRACE_OPS_(2, b)
#define TALLY_TRACE_OPS_3(p, n, a, b, c) TALLY_TRACE_OPS_2(p, n, a, b), TALLY_TRACE_OPS_(3, c)
#define TALLY_TRACE_OPS_4(p, n, a, b, c, d) \
	TALLY_TRACE_OPS_3(p, n, a, b, c), TALLY_TRACE_OPS_(4, d)
#define TALLY_TRACE_OPS_5(p, n, a, b, c, d, e) \
	TALLY_TRACE_OPS_4(p, n, a, b, c, d), TALLY_TRACE_OPS_(5, e)
#define TALLY_TRACE_OPS_6(p, n, a, b, c, d, e, f) \
	TALLY_TRACE_OPS_5(p, n, a, b, c, d, e), TALLY_TRACE_OPS_(6, f)
#define TALLY_TRACE_OPS_7(p, n, a, b, c, d, e, f, g) \
	TALLY_TRACE_OPS_6(p, n, a, b, c, d, e, f), TALLY_TRACE_OPS_(7, g)
#define TALLY_TRACE_OPS_8(p, n, a, b, c, d, e, f, g, h) \
	TALLY_TRACE_OPS_7(p, n, a, b, c, d, e, f, g), TALLY_TRACE_OPS_(8, h)
#define TALLY_TRACE_OPS_9(p, n, a, b, c, d, e, f, g, h, i) \
	TALLY_TRACE_OPS_8(p, n, a, b, c, d, e, f, g, h), TALLY_TRACE_OPS_(9, i)
#define TALLY_TRACE_OPS_10(p, n, a, b, c, d, e, f, g, h, i, j) \
	TALLY_TRACE_OPS_9(p, n, a, b, c, d, e, f, g, h, i), TALLY_TRACE_OPS_(10, j)
#define TALLY_TRACE_OPS_11(p, n, a, b, c, d, e, f, g, h, i, j, k) \
	TALLY_TRACE_OPS_10(p, n, a, b, c, d, e, f, g, h, i, j), TALLY_TRACE_OPS_(11, k)
#define TALLY_TRACE_OPS_12(p, n, a, b, c, d, e, f, g, h, i, j, k, l) \
	TALLY_TRACE_OPS_11(p, n, a, b, c, d, e, f, g, h, i, j, k), TALLY_TRACE_OPS_(12, l)

/* The argument string of the note: "SIZE[f]@OPERAND" per argument, space-separated.
 * %c prints a constant without the '$' or '#' an instruction operand would carry. The
 * assembler cannot print a computed number without .altmacro (a mode that would leak into
 * the rest of the file), so floating-point sizes are spelled out, in an assembler macro
 * defined and purged within each probe's asm (Clang parses each asm statement apart) to
 * keep the string under the 4095 characters ISO C guarantees. */
#define TALLY_TRACE_SIZE_MACRO \
	".macro tally_trace_size code\n" \
	".if \\code < 1000\n.ascii \"\\code\"\n" \
	".elseif \\code == 1002\n.ascii \"2f\"\n" \
	".elseif \\code == 1004\n.ascii \"4f\"\n" \
	".elseif \\code == 1008\n.ascii \"8f\"\n" \
	".elseif \\code == 1010\n.ascii \"10f\"\n" \
	".elseif \\code == 1012\n.ascii \"12f\"\n" \
	".elseif \\code == 1016\n.ascii \"16f\"\n" \
	".else\n.error \"tally/trace.h: unsupported floating-point argument size\"\n" \
	".endif\n" \
	".endm\n"
#define TALLY_TRACE_FMT_(i) \
	"tally_trace_size %c[tally_s" #i "]\n.ascii \"@%[tally_a" #i "]\"\n"
#define TALLY_TRACE_FMT_SEP ".ascii \" \"\n"
#define TALLY_TRACE_FMT_0 ""
#define TALLY_TRACE_FMT_1 TALLY_TRACE_FMT_(1)
#define TALLY_TRACE_FMT_2 TALLY_TRACE_FMT_1 TALLY_TRACE_FMT_SEP TALLY_TRACE_FMT_(2)
#define TALLY_TRACE_FMT_3 TALLY_TRACE_FMT_2 TALLY_TRACE_FMT_SEP TALLY_TRACE_FMT_(3)
#define TALLY_TRACE_FMT_4 TALLY_TRACE_FMT_3 TALLY_TRACE_FMT_SEP TALLY_TRACE_FMT_(4)
#define TALLY_TRACE_FMT_5 TALLY_TRACE_FMT_4 TALLY_TRACE_FMT_SEP TALLY_TRACE_FMT_(5)
#define TALLY_TRACE_FMT_6 TALLY_TRACE_FMT_5 TALLY_TRACE_FMT_SEP TALLY_TRACE_FMT_(6)
#define TALLY_TRACE_FMT_7 TALLY_TRACE_FMT_6 TALLY_TRACE_FMT_SEP TALLY_TRACE_FMT_(7)
#define TALLY_TRACE_FMT_8 TALLY_TRACE_FMT_7 TALLY_TRACE_FMT_SEP TALLY_TRACE_FMT_(8)
#define TALLY_TRACE_FMT_9 TALLY_TRACE_FMT_8 TALLY_TRACE_FMT_SEP TALLY_TRACE_FMT_(9)
#define TALLY_TRACE_FMT_10 TALLY_TRACE_FMT_9 TALLY_TRACE_FMT_SEP TALLY_TRACE_FMT_(10)
#define TALLY_TRACE_FMT_11 TALLY_TRACE_FMT_10 TALLY_TRACE_FMT_SEP TALLY_TRACE_FMT_(11)
#define TALLY_TRACE_FMT_12 TALLY_TRACE_FMT_11 TALLY_TRACE_FMT_SEP TALLY_TRACE_FMT_(12)

/* The semaphore, defined once per assembly file (.ifndef) and once per linked object
 * (COMDAT). Written in assembler because a macro used inside a function cannot define a
 * file-scope variable in C. */
#define TALLY_TRACE_SEM_DEF(p, n) \
	".ifndef " TALLY_TRACE_STR(TALLY_TRACE_SEM_SYM(p, n)) "\n" \
	".pushsection .probes,\"awG\",\"progbits\"," \
	TALLY_TRACE_STR(TALLY_TRACE_SEM_SYM(p, n)) ",comdat\n" \
	".weak " TALLY_TRACE_STR(TALLY_TRACE_SEM_SYM(p, n)) "\n" \
	".hidden " TALLY_TRACE_STR(TALLY_TRACE_SEM_SYM(p, n)) "\n" \
	".type " TALLY_TRACE_STR(TALLY_TRACE_SEM_SYM(p, n)) ",%%object\n" \
	".size " TALLY_TRACE_STR(TALLY_TRACE_SEM_SYM(p, n)) ",2\n" \
	".balign 2\n" \
	TALLY_TRACE_STR(TALLY_TRACE_SEM_SYM(p, n)) ":\n" \
	".2byte 0\n" \
	".popsection\n" \
	".endif\n"

/* The note (systemtap v3): namesz, descsz, type 3, "stapsdt", then the probe address, the
 * address of .stapsdt.base (lets a reader detect prelink-style moves), the semaphore
 * address, provider, name and the argument string. The note section joins the group of
 * the function's own section ("?") so that it is dropped with a discarded COMDAT copy of
 * an inline function. _.stapsdt.base is shared with <sys/sdt.h> probes by name. */
#define TALLY_TRACE_NOTE(p, n, fmt) \
	TALLY_TRACE_SEM_DEF(p, n) \
	"990: nop\n" \
	".pushsection .note.stapsdt,\"?\",\"note\"\n" \
	".balign 4\n" \
	".4byte 992f-991f, 994f-993f, 3\n" \
	"991: .asciz \"stapsdt\"\n" \
	"992: .balign 4\n" \
	"993: " TALLY_TRACE_ADDR "990b\n" \
	TALLY_TRACE_ADDR "_.stapsdt.base\n" \
	TALLY_TRACE_ADDR TALLY_TRACE_STR(TALLY_TRACE_SEM_SYM(p, n)) "\n" \
	".asciz \"" #p "\"\n" \
	".asciz \"" #n "\"\n" \
	TALLY_TRACE_SIZE_MACRO \
	fmt \
	".purgem tally_trace_size\n" \
	".byte 0\n" \
	"994: .balign 4\n" \
	".popsection\n" \
	".ifndef _.stapsdt.base\n" \
	".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n" \
	".weak _.stapsdt.base\n" \
	".hidden _.stapsdt.base\n" \
	"_.stapsdt.base: .space 1\n" \
	".size _.stapsdt.base,1\n" \
	".popsection\n" \
	".endif\n"

/* The C view of the semaphore. The asm label gives it the assembler's name whatever
 * namespace (C++) the probe sits in; hidden makes the read PC-relative, with no GOT. */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__cplusplus)
#define TALLY_TRACE_NOWARN_PUSH \
	_Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wnested-externs\"") \
		_Pragma("GCC diagnostic ignored \"-Wredundant-decls\"")
#define TALLY_TRACE_NOWARN_POP _Pragma("GCC diagnostic pop")
#elif defined(__GNUC__) && !defined(__clang__)
#define TALLY_TRACE_NOWARN_PUSH \
	_Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wredundant-decls\"")
#define TALLY_TRACE_NOWARN_POP _Pragma("GCC diagnostic pop")
#else
#define TALLY_TRACE_NOWARN_PUSH
#define TALLY_TRACE_NOWARN_POP
#endif
/* Block-scope extern declarations of one name all denote one object, so the C name is
 * made per probe too (provider and name joined by "__"). */
#define TALLY_TRACE_SEM_VAR(p, n) tally_sem__##p##__##n
#define TALLY_TRACE_SEM_DECL(p, n) \
	TALLY_TRACE_NOWARN_PUSH \
	extern volatile unsigned short TALLY_TRACE_SEM_VAR(p, n) \
		__asm__(TALLY_TRACE_STR(TALLY_TRACE_SEM_SYM(p, n))) \
		__attribute__((visibility("hidden"))); \
	TALLY_TRACE_NOWARN_POP

/* k is the number of probe arguments; the variadic part holds provider, name and them. */
#define TALLY_TRACE_ON_(p, n, k, ...) \
	do { \
		TALLY_TRACE_SEM_DECL(p, n) \
		if (__builtin_expect(TALLY_TRACE_SEM_VAR(p, n) != 0, 0)) \
			__asm__ __volatile__( \
				TALLY_TRACE_NOTE(p, n, TALLY_TRACE_CAT(TALLY_TRACE_FMT_, k)) \
				: \
				: TALLY_TRACE_CAT(TALLY_TRACE_OPS_, k)(__VA_ARGS__)); \
	} while (0)
#define TALLY_TRACE_FIRST_(a, ...) a
#define TALLY_TRACE_SECOND_(a, b, ...) b

#define TALLY_TRACEPOINT(...) \
	TALLY_TRACE_ON_(TALLY_TRACE_FIRST_(__VA_ARGS__, ~), TALLY_TRACE_SECOND_(__VA_ARGS__, ~), \
			TALLY_TRACE_NARGS(__VA_ARGS__), __VA_ARGS__)

#define TALLY_TRACEPOINT_ACTIVE(p, n) \
	__extension__({ \
		TALLY_TRACE_SEM_DECL(p, n) \
		__asm__ __volatile__(TALLY_TRACE_SEM_DEF(p, n)::); \
		__builtin_expect(TALLY_TRACE_SEM_VAR(p, n) != 0, 0); \
	})

#endif
#endif
