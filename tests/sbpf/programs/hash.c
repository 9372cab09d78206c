/*
 * The hashing syscalls: hashes input[8 .. 8 + len) as two slices split at input[1] and
 * returns the digest as return data. input[0]: 0 sol_sha256, 1 sol_keccak256, 2 keccak256
 * with 20001 slices (over the limit), 3 keccak256 with a misaligned slice table.
 * input[2..3]: len, little-endian. Straight-line code, so the instructions executed do not
 * depend on the data and the CU a run costs differs between inputs only by the syscall.
 */
typedef unsigned long u64;
typedef unsigned char u8;

struct slice {
	const u8 *p;
	u64 len;
};

extern u64 sol_sha256(const struct slice *vals, u64 n, u8 *out);
extern u64 sol_keccak256(const struct slice *vals, u64 n, u8 *out);
extern void sol_set_return_data(const u8 *data, u64 len);

u64 entrypoint(const u8 *input)
{
	u64 len = input[2] | (u64)input[3] << 8;
	u64 split = input[1]; /* at most len: a larger one makes the second slice huge */
	struct slice s[3] = { { input + 8, split }, { input + 8 + split, len - split }, { 0, 0 } };
	u8 hash[32];
	if (input[0] == 0)
		sol_sha256(s, 2, hash);
	else if (input[0] == 1)
		sol_keccak256(s, 2, hash);
	else if (input[0] == 2)
		sol_keccak256(s, 20001, hash);
	else
		sol_keccak256((const struct slice *)((const u8 *)s + 4), 2, hash);
	sol_set_return_data(hash, 32);
	return 0;
}
