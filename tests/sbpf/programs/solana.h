/*
 * The few Solana syscalls the test programs call, declared for both builds: upstream clang
 * (-target bpf), where they stay undefined and become sBPF syscalls, and the native build,
 * where native.c defines them so the same source runs on the host as an oracle.
 */
#ifndef TEST_SOLANA_H
#define TEST_SOLANA_H

typedef unsigned long u64;
typedef unsigned char u8;

extern void sol_log_(const char *msg, u64 len);
extern void sol_log_64_(u64 a, u64 b, u64 c, u64 d, u64 e);
extern void sol_memcpy_(void *dst, const void *src, u64 n);

u64 entrypoint(const u8 *input);

#endif
