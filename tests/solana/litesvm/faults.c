/*
 * How a program can fail, for comparing the runtime's verdicts with tally's: run without
 * accounts, so the input is the account count (0), the data's length, then the data; its
 * first byte picks the ending. 0 succeeds, 1 aborts, 2 panics, 3 loads from an address no
 * region holds (an access violation), 4 divides by zero, 5 logs bytes that are not UTF-8,
 * 6 returns a custom error, 7 recurses until the CU run out, 8 logs from an address no
 * region holds (the access violation is then the syscall's); 9 logs bytes that hold NULs
 * (the runtime keeps them).
 */
typedef unsigned long u64;
typedef unsigned char u8;

extern void sol_log_(const char *msg, u64 len);
extern void abort(void);
extern void sol_panic_(const char *file, u64 len, u64 line, u64 column);

static u64 deep(volatile u64 n)
{
	return n ? deep(n + 1) + 1 : 0;
}

u64 entrypoint(const u8 *input)
{
	volatile u64 zero = 0;
	u8 how = input[16];
	sol_log_("faults", 6);
	switch (how) {
	case 1: abort(); break;
	case 2: sol_panic_("faults.c", 8, 42, 7); break;
	case 3: return *(volatile u64 *)0x500000000;
	case 4: return 10 / zero;
	case 5: sol_log_("\xff\xfe", 2); break;
	case 6: return 17;
	case 7: return deep(1);
	case 8: sol_log_((const char *)0x500000000, 4); break;
	case 9: sol_log_("ab\0cd", 5), sol_log_("\0", 1); break;
	}
	return 0;
}
