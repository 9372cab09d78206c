/*
 * The Solana runtime's syscalls, registered into a VM syscall table (sbpf/syscall.h): the
 * standard set that every program may call, charged as agave charges them, one part per
 * file: syscalls_log.c, _memory.c, _return.c, _sysvar.c, _context.c, _pda.c, _hash.c,
 * _crypto.c, _curve.c and _bn254.c (syscalls.c lists them).
 */
#ifndef TALLY_SOLANA_SYSCALLS_H
#define TALLY_SOLANA_SYSCALLS_H

#include <stddef.h>
#include <stdint.h>

#include "sbpf/syscall.h"

enum {
	/* The reference VM's test syscall `log(ptr, len)`, 0 CU, for the conformance ELFs.
	 * Only for bare ELF runs: the Solana runtime has no such syscall. */
	SOL_SYSCALLS_TEST_LOG = 1u << 0,
};
/* Registers the syscalls tally implements (sol_log_ and friends, memory, return data,
 * abort/panic, the heap allocator, sysvars, hashes, curves...), plus the optional ones. */
int sol_syscalls_standard(struct sbpf_syscalls *s, unsigned flags);

/* The parts of the standard set, each registered by the file that implements it. */
int sol_syscalls_log(struct sbpf_syscalls *s, unsigned flags);
/* sol_memcpy_, _memmove_, _memset_, _memcmp_ and the heap allocator sol_alloc_free_. */
int sol_syscalls_memory(struct sbpf_syscalls *s);
/* Return data, abort and sol_panic_. */
int sol_syscalls_return(struct sbpf_syscalls *s);
/* The sysvar syscalls; also the runtime syscalls tally lacks: most fail when called
 * (UnsupportedSyscall); those with fn NULL make a program that calls them fail to load. */
int sol_syscalls_sysvars(struct sbpf_syscalls *s);
/* The stack height, sibling instructions and epoch stake. */
int sol_syscalls_context(struct sbpf_syscalls *s);
int sol_syscalls_pda(struct sbpf_syscalls *s);
/* sol_sha256, sol_keccak256 and sol_poseidon. */
int sol_syscalls_hash(struct sbpf_syscalls *s);
/* sol_secp256k1_recover. */
int sol_syscalls_crypto(struct sbpf_syscalls *s);
/* sol_curve_validate_point, sol_curve_group_op, sol_curve_multiscalar_mul on curve25519's
 * Edwards and Ristretto forms. */
int sol_syscalls_curve(struct sbpf_syscalls *s);
/* sol_alt_bn128_group_op and sol_alt_bn128_compression. */
int sol_syscalls_bn254(struct sbpf_syscalls *s);

/* One entry of a part's table, and registering a whole table (stops at the first
 * failure: 0 or sbpf_syscalls_add's error). */
struct sol_syscall_def {
	const char *name;
	sbpf_syscall_fn fn;
};
int sol_syscalls_add_all(struct sbpf_syscalls *s, const struct sol_syscall_def *defs, size_t n);

/* What every sol_get_*_sysvar does: charges the runtime's base cost plus one CU per byte,
 * then writes the sysvar's bytes at addr, which must be aligned as the struct is (align).
 * 0, -1 when the budget ran out or addr is unaligned, -EFAULT when addr is not writable. */
int sol_sysvar_copy(struct sbpf_vm *vm, uint64_t addr, const uint8_t *bytes, size_t len,
		    size_t align);
/* The addresses, in base58, of the sysvar accounts more than one part of the runtime
 * names (the System program's nonce instructions read both). */
#define SOL_SYSVAR_RENT_ID "SysvarRent111111111111111111111111111111111"
#define SOL_SYSVAR_RECENT_BLOCKHASHES_ID "SysvarRecentB1ockHashes11111111111111111111"
/* The sysvars a bank starts with, as LiteSVM 1.5 sets them up on mainnet's feature set:
 * Clock at slot 447552000 (the last feature activation it knows), the rest zero; Rent after
 * SIMD-0194 (6960 lamports per byte, threshold 1.0, burn 50%), in their repr(C) layouts. */
enum { SOL_DEFAULT_SLOT = 447552000 };
void sol_default_clock(uint8_t clock[40]);
void sol_default_rent(uint8_t rent[24]);
void sol_default_epoch_schedule(uint8_t schedule[40]);
/* The blockhash a transaction runs under, LiteSVM 1.5's at start (its latestBlockhash,
 * CmpNeggWJ4JaWJeJ8YKN1Zypmk7uvQq3PECGUCAEMbky), its fee per signature, and the
 * RecentBlockhashes sysvar's data as LiteSVM holds it: that one blockhash, with a fee of 0
 * (a u64 count, then per entry the hash and a u64). */
enum { SOL_DEFAULT_LAMPORTS_PER_SIGNATURE = 5000, SOL_RECENT_BLOCKHASHES_SIZE = 48 };
extern const uint8_t sol_default_blockhash[32];
void sol_default_recent_blockhashes(uint8_t data[SOL_RECENT_BLOCKHASHES_SIZE]);
/* Rent::minimum_balance of an account of len bytes under the sysvar's values. */
uint64_t sol_rent_minimum(const uint8_t rent[24], size_t len);
/* 0 when the n bytes at p are UTF-8; otherwise fails the syscall with agave's
 * InvalidString, worded as agave's log shows it (Rust's Utf8Error, then the bytes). */
int sol_check_utf8(struct sbpf_vm *vm, const uint8_t *p, size_t n);

#endif
