/*
 * Calls through function pointers (callx), linked by `tally sbpf link` as v0 (the table's
 * words are R_BPF_64_RELATIVE for agave's loader) and as v3 (addresses resolved; callx's
 * register moved to dst), run in tally and in LiteSVM by litesvm.test.sh. Run without accounts; for each data byte b the program applies
 * ops[b % 3] from a table, then one of two pointers chosen by the data's length, and logs
 * the result. Data ff XX YY first calls a pointer XX | YY << 8 bytes past the first
 * function: into a function's body, off the instruction grid, or past the text's end.
 */
typedef unsigned long u64;
typedef unsigned char u8;

extern void sol_log_64_(u64 a, u64 b, u64 c, u64 d, u64 e);

typedef u64 (*op_fn)(u64, u64);

__attribute__((noinline)) static u64 add(u64 a, u64 b)
{
	return a + b;
}

__attribute__((noinline)) static u64 mul(u64 a, u64 b)
{
	return a * b + 1;
}

__attribute__((noinline)) static u64 sub(u64 a, u64 b)
{
	return a - b;
}

static op_fn const ops[3] = { add, mul, sub };

u64 entrypoint(const u8 *input)
{
	u64 n = *(const u64 *)(input + 8);
	const u8 *d = input + 16;
	u64 h = 7;
	if (n >= 3 && d[0] == 0xff) {
		op_fn f = (op_fn)((u64)ops[0] + (d[1] | (u64)d[2] << 8));
		h = f(h, n);
	}
	for (u64 i = 0; i < n; i++)
		h = ops[d[i] % 3](h, d[i]);
	op_fn last = n & 1 ? add : sub;
	h = last(h, n);
	sol_log_64_(h, n, 0, 0, 0);
	return 0;
}
