/*
 * sol_poseidon, one call per case, its arguments in the instruction data; the results come
 * back as return data (the syscall's u64 result, then the 32-byte result buffer, filled
 * with 0xaa before the call so that an untouched buffer shows), so tally and LiteSVM can be
 * compared byte for byte (tests/solana/poseidon.test.sh). Instruction data:
 *   [0]       flags: 1 the result in read-only memory, 2 the input list at address 8,
 *             4 the input list 4 bytes off its alignment
 *   [1..9]    parameters (u64 LE)   [9..17] endianness (u64 LE)   [17..25] n, passed as is
 *   [25]      m, the slices built (at most 16; the list holds 16, zeroed past m)
 *   [26..26+m] each slice's length; 0xff is 32 bytes at address 8
 *   then the slices' bytes, one after the other
 * The list is at the heap's start (the stack has no room for it next to struct input).
 */
#include "../cpi/solana_rt.h"

typedef struct {
	const u8 *addr;
	u64 len;
} SolBytes;

extern u64 sol_poseidon(u64 parameters, u64 endianness, const SolBytes *bytes, u64 n,
			u8 *result);

#define HEAP_START 0x300000000ul

enum { MAX_SLICES = 16, HEADER = 26, BAD_SLICE = 0xff };

static const u8 read_only[32] = { 1 };

static u64 get64(const u8 *p)
{
	u64 v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void put64(u8 *p, u64 v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (u8)(v >> (8 * i));
}

u64 entrypoint(u8 *in)
{
	struct input ix;
	if (deserialize(in, &ix) || ix.data_len < HEADER)
		return 1;
	const u8 *d = ix.data;
	u64 m = d[25];
	if (m > MAX_SLICES || ix.data_len < HEADER + m)
		return 2;
	SolBytes *slices = (SolBytes *)(HEAP_START + (d[0] & 4 ? 4 : 0));
	const u8 *bytes = d + HEADER + m;
	for (u64 i = 0; i < MAX_SLICES; i++) {
		SolBytes s = { 0, 0 };
		if (i < m && d[HEADER + i] == BAD_SLICE) {
			s.addr = (const u8 *)8;
			s.len = 32;
		} else if (i < m) {
			s.addr = bytes;
			s.len = d[HEADER + i];
			bytes += s.len;
		}
		__builtin_memcpy(&slices[i], &s, sizeof(s));
	}
	if (bytes > d + ix.data_len)
		return 2;
	u8 out[40];
	for (int i = 8; i < 40; i++)
		out[i] = 0xaa;
	u8 *result = d[0] & 1 ? (u8 *)read_only : out + 8;
	const SolBytes *list_addr = d[0] & 2 ? (const SolBytes *)8 : slices;
	put64(out, sol_poseidon(get64(d + 1), get64(d + 9), list_addr, get64(d + 17), result));
	sol_set_return_data(out, sizeof(out));
	return 0;
}
