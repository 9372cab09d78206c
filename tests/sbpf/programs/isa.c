/*
 * Many instruction forms in one program (every ALU operation in 64 and 32 bits, signed and
 * unsigned compares, stores of every width, byte swaps), for checking the disassembler
 * against llvm-objdump and the interpreter against the host. 32-bit values stay below 2^31
 * (see docs/sbpf.md on alu32).
 */
#include "solana.h"

typedef unsigned int u32;
typedef long i64;
typedef int i32;
typedef unsigned short u16;

__attribute__((noinline)) u64 mix(u64 a, u64 b)
{
	u64 r = a * 31 + b;
	r ^= r >> 7;
	r |= a << 3;
	r &= ~(b << 17);
	r -= b / 3;
	r += a % 7 + (b % (a | 1));
	r += (u64)((i64)(a - 100) >> 2);
	r += (u64)(-(i64)b);
	return r;
}

__attribute__((noinline)) u32 mix32(u32 a, u32 b)
{
	u32 r = (a & 0xffff) * 3 + (b & 0xff);
	r ^= r >> 3;
	r |= 1u << (a & 7);
	r -= (b & 0xff) / 5;
	r += (a & 0xffff) % 11;
	return r & 0x7fffffff;
}

__attribute__((noinline)) u64 compare(i64 a, i64 b, u64 c)
{
	u64 n = 0;
	n += a < b;
	n += a <= b ? 2 : 0;
	n += a > 5 ? 4 : 0;
	n += a >= -3 ? 8 : 0;
	n += c > 1000 ? 16 : 0;
	n += c < 9 ? 32 : 0;
	n += (c & 4) ? 64 : 0;
	n += (i32)a == 7 ? 128 : 0;
	n += (u32)c != 3 ? 256 : 0;
	return n;
}

u64 entrypoint(const u8 *input)
{
	volatile u8 b8[8];
	volatile u16 b16[4];
	volatile u32 b32[2];
	volatile u64 b64 = 0;
	u64 a = input[0], b = input[1];
	b8[0] = 1;
	b8[1] = (u8)a;
	b16[0] = 0x1234;
	b16[1] = (u16)b;
	b32[0] = 0x01020304;
	b32[1] = (u32)(a + b);
	b64 = __builtin_bswap64(a | b << 8);
	u64 r = mix(a + 1, b + 2) + mix32((u32)a, (u32)b);
	r += compare((i64)a - 10, (i64)b - 10, a * b);
	r += __builtin_bswap16((u16)(a << 8 | b)) + __builtin_bswap32((u32)(a << 8 | b));
	r += b8[0] + b8[1] + b16[0] + b16[1] + b32[0] + b32[1] + b64;
	sol_log_64_(r, a, b, 0, 0);
	return r;
}
