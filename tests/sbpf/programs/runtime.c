/*
 * The runtime syscalls: sha256 of part of the input (logged as hex, checked against
 * sha256sum), return data, the heap allocator, and abort/panic on request.
 * input[0]: how many bytes after input[1] to hash; input[1]: 1 = abort, 2 = panic.
 */
typedef unsigned long u64;
typedef unsigned char u8;

struct slice {
	const u8 *p;
	u64 len;
};

extern void sol_log_(const char *msg, u64 len);
extern void sol_log_64_(u64 a, u64 b, u64 c, u64 d, u64 e);
extern u64 sol_sha256(const struct slice *vals, u64 n, u8 *out);
extern void sol_set_return_data(const u8 *data, u64 len);
extern u64 sol_get_return_data(u8 *data, u64 len, u8 *program_id);
extern void *sol_alloc_free_(u64 size, void *free_ptr);
extern void abort(void);
extern void sol_panic_(const char *file, u64 len, u64 line, u64 column);

u64 entrypoint(const u8 *input)
{
	static const char hex[] = "0123456789abcdef";
	struct slice s = { input + 2, input[0] };
	u8 hash[32];
	char text[64];
	sol_sha256(&s, 1, hash);
	for (int i = 0; i < 32; i++) {
		text[2 * i] = hex[hash[i] >> 4];
		text[2 * i + 1] = hex[hash[i] & 15];
	}
	sol_log_(text, 64);
	void *a = sol_alloc_free_(100, 0);
	void *b = sol_alloc_free_(8, 0);
	void *c = sol_alloc_free_(1 << 20, 0);
	sol_log_64_((u64)a, (u64)b, (u64)c, 0, 0);
	sol_set_return_data((const u8 *)"tally", 5);
	u8 back[8], id[32];
	u64 n = sol_get_return_data(back, sizeof(back), id);
	sol_log_64_(n, back[0], back[4], 0, 0);
	if (input[1] == 1)
		abort();
	if (input[1] == 2)
		sol_panic_("runtime.c", 9, 42, 7);
	return n;
}
