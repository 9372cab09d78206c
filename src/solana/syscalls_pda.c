/*
 * Program-derived addresses: sol_create_program_address and sol_try_find_program_address,
 * as agave implements them. An address is sha256(seeds..., program_id,
 * "ProgramDerivedAddress") and must not be on the ed25519 curve; at most 16 seeds of at
 * most 32 bytes (else BadSeeds). Each attempt costs create_program_address_units (1500);
 * try_find walks the bump seed down from 255 and charges again for every miss.
 */
#include <errno.h>
#include <sodium.h>
#include <string.h>

#include "sbpf/vm.h"
#include "solana/crypto/curve25519.h"
#include "solana/syscalls.h"

enum { CREATE_PROGRAM_ADDRESS_UNITS = 1500, MAX_SEEDS = 16, MAX_SEED_LEN = 32 };

struct seeds {
	const uint8_t *p[MAX_SEEDS + 1];
	uint64_t len[MAX_SEEDS + 1];
	size_t n;
	const uint8_t *program_id;
};

static int translate_seeds(struct sbpf_vm *vm, uint64_t addr, uint64_t n, uint64_t id_addr,
			   struct seeds *s)
{
	uint8_t *table, *id;
	if (n > MAX_SEEDS) {
		if (sbpf_vm_map(vm, addr, n <= UINT32_MAX / 16 ? n * 16 : UINT32_MAX, false, &table))
			return -EFAULT;
		return sbpf_vm_syscall_error(vm, "BadSeeds", "MaxSeedLengthExceeded");
	}
	if (sbpf_vm_map(vm, addr, n * 16, false, &table))
		return -EFAULT;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t a, len;
		memcpy(&a, table + i * 16, 8);
		memcpy(&len, table + i * 16 + 8, 8);
		if (len > MAX_SEED_LEN)
			return sbpf_vm_syscall_error(vm, "BadSeeds", "MaxSeedLengthExceeded");
		uint8_t *p;
		if (sbpf_vm_map(vm, a, len, false, &p))
			return -EFAULT;
		s->p[i] = p;
		s->len[i] = len;
	}
	if (sbpf_vm_map(vm, id_addr, 32, false, &id))
		return -EFAULT;
	s->n = n;
	s->program_id = id;
	return 0;
}

/* Pubkey::create_program_address: false for too many seeds or an on-curve hash. */
static bool derive(const struct seeds *s, uint8_t out[32])
{
	if (s->n > MAX_SEEDS)
		return false;
	crypto_hash_sha256_state st;
	crypto_hash_sha256_init(&st);
	for (size_t i = 0; i < s->n; i++)
		crypto_hash_sha256_update(&st, s->p[i] ? s->p[i] : (const uint8_t *)"", s->len[i]);
	crypto_hash_sha256_update(&st, s->program_id, 32);
	crypto_hash_sha256_update(&st, (const uint8_t *)"ProgramDerivedAddress", 21);
	crypto_hash_sha256_final(&st, out);
	return !sol_on_curve(out);
}

/* sol_create_program_address(seeds, n, program_id, address) -> 0, or 1 when on the curve */
static int sys_create(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	struct seeds s;
	uint8_t addr[32], *dst;
	if (sbpf_vm_consume(vm, CREATE_PROGRAM_ADDRESS_UNITS) ||
	    translate_seeds(vm, a[0], a[1], a[2], &s))
		return -1;
	if (!derive(&s, addr)) {
		*ret = 1;
		return 0;
	}
	if (sbpf_vm_map(vm, a[3], 32, true, &dst))
		return -EFAULT;
	memcpy(dst, addr, 32);
	*ret = 0;
	return 0;
}

/* sol_try_find_program_address(seeds, n, program_id, address, bump) -> 0, or 1 */
static int sys_try_find(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	struct seeds s;
	uint8_t addr[32], bump = 255, *dst, *bump_dst;
	if (sbpf_vm_consume(vm, CREATE_PROGRAM_ADDRESS_UNITS) ||
	    translate_seeds(vm, a[0], a[1], a[2], &s))
		return -1;
	s.p[s.n] = &bump;
	s.len[s.n] = 1;
	s.n++;
	for (int i = 0; i < 255; i++) {
		if (derive(&s, addr)) {
			if (sbpf_vm_map(vm, a[4], 1, true, &bump_dst) ||
			    sbpf_vm_map(vm, a[3], 32, true, &dst))
				return -EFAULT;
			if (a[4] >= a[3] && a[4] < a[3] + 32)
				return sbpf_vm_syscall_error(vm, "CopyOverlapping", "Overlapping copy");
			*bump_dst = bump;
			memcpy(dst, addr, 32);
			*ret = 0;
			return 0;
		}
		bump--;
		if (sbpf_vm_consume(vm, CREATE_PROGRAM_ADDRESS_UNITS))
			return -1;
	}
	*ret = 1;
	return 0;
}

int sol_syscalls_pda(struct sbpf_syscalls *s)
{
	int rc = sbpf_syscalls_add(s, "sol_create_program_address", sys_create);
	return rc ? rc : sbpf_syscalls_add(s, "sol_try_find_program_address", sys_try_find);
}
