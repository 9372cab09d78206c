/*
 * The hashing syscalls sol_sha256 and sol_keccak256, one routine as agave's SyscallHash is:
 * at most sha256_max_slices (20000) slices, sha256_base_cost (85) up front, then per slice
 * the larger of mem_op_base_cost (10) and sha256_byte_cost (1) per two bytes, charged after
 * the slice is translated. Keccak256 is charged with sha256's costs (agave reuses them).
 * SHA-256 is libsodium's. Keccak-256 is the original Keccak (pad byte 0x01, as Solana and
 * Ethereum use it), not SHA3-256 (0x06): nettle 3.8 offers only SHA3 proper and its
 * Keccak-f[1600] permutation, so the sponge around that permutation is here.
 *
 * sol_poseidon is agave's SyscallPoseidon over crypto/poseidon.c: the parameter set
 * (0, Bn254X5) and the endianness (0 big, 1 little) are checked first, then at most 12
 * inputs, each a VM error; then poseidon_cost_coefficient_a (61) * n^2 +
 * poseidon_cost_coefficient_c (542) is charged, the result and the inputs are mapped, and
 * an input hashv refuses (not 32 bytes, not below the modulus; no inputs at all) returns 1
 * with the result untouched.
 */
#include <errno.h>
#include <nettle/sha3.h>
#include <stdio.h>
#include <sodium.h>
#include <string.h>

#include "sbpf/syscall.h"
#include "sbpf/vm.h"
#include "solana/crypto/poseidon.h"

enum {
	SHA256_BASE_COST = 85,
	SHA256_BYTE_COST = 1,
	SHA256_MAX_SLICES = 20000,
	MEM_OP_BASE_COST = 10,
	HASH_BYTES = 32,
	KECCAK256_RATE = 136, /* 1600-bit state minus 2 * 256 bits of capacity, in bytes */
	POSEIDON_BN254_X5 = 0,
	POSEIDON_BIG_ENDIAN = 0,
	POSEIDON_LITTLE_ENDIAN = 1,
	POSEIDON_COST_A = 61,
	POSEIDON_COST_C = 542,
	SLICE_BYTES = 16, /* a VmSlice: address, length */
};

struct keccak256 {
	struct sha3_state st;
	uint8_t block[KECCAK256_RATE];
	size_t n;
};

union hash_state {
	crypto_hash_sha256_state sha256;
	struct keccak256 keccak;
};

struct hasher {
	const char *name; /* as agave's messages spell it */
	void (*init)(union hash_state *s);
	void (*update)(union hash_state *s, const uint8_t *p, size_t len);
	void (*final)(union hash_state *s, uint8_t out[HASH_BYTES]);
};

static void keccak_absorb(struct keccak256 *k)
{
	for (size_t i = 0; i < KECCAK256_RATE / 8; i++) {
		uint64_t lane = 0;
		for (size_t b = 0; b < 8; b++)
			lane |= (uint64_t)k->block[8 * i + b] << (8 * b);
		k->st.a[i] ^= lane;
	}
	sha3_permute(&k->st);
	k->n = 0;
}

static void keccak_init(union hash_state *s)
{
	memset(&s->keccak, 0, sizeof(s->keccak));
}

static void keccak_update(union hash_state *s, const uint8_t *p, size_t len)
{
	struct keccak256 *k = &s->keccak;
	while (len) {
		size_t take = KECCAK256_RATE - k->n < len ? KECCAK256_RATE - k->n : len;
		memcpy(k->block + k->n, p, take);
		k->n += take;
		p += take;
		len -= take;
		if (k->n == KECCAK256_RATE)
			keccak_absorb(k);
	}
}

/* Keccak's pad10*1 with the 0x01 domain byte; both ends land in one byte when n == 135. */
static void keccak_final(union hash_state *s, uint8_t out[HASH_BYTES])
{
	struct keccak256 *k = &s->keccak;
	memset(k->block + k->n, 0, KECCAK256_RATE - k->n);
	k->block[k->n] ^= 0x01;
	k->block[KECCAK256_RATE - 1] ^= 0x80;
	keccak_absorb(k);
	for (size_t i = 0; i < HASH_BYTES; i++)
		out[i] = (uint8_t)(k->st.a[i / 8] >> (8 * (i % 8)));
}

static void sha256_init(union hash_state *s)
{
	crypto_hash_sha256_init(&s->sha256);
}

static void sha256_update(union hash_state *s, const uint8_t *p, size_t len)
{
	crypto_hash_sha256_update(&s->sha256, p, len);
}

static void sha256_final(union hash_state *s, uint8_t out[HASH_BYTES])
{
	crypto_hash_sha256_final(&s->sha256, out);
}

static const struct hasher SHA256 = { "Sha256", sha256_init, sha256_update, sha256_final };
static const struct hasher KECCAK256 = { "Keccak256", keccak_init, keccak_update, keccak_final };

/* sol_<hash>(slices: &[&[u8]], n, result: *mut [u8; 32]) -> 0 */
static int hash_syscall(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret,
			const struct hasher *h)
{
	*ret = 0;
	/* agave logs the numbers, then fails with the error's own text */
	if (a[1] > SHA256_MAX_SLICES) {
		char line[128];
		int n = snprintf(line, sizeof(line),
				 "%s Hashing %llu sequences in one syscall is over the limit %d",
				 h->name, (unsigned long long)a[1], SHA256_MAX_SLICES);
		if (sbpf_vm_log(vm, line, (size_t)n))
			return -ENOMEM;
		return sbpf_vm_syscall_error(vm, "TooManySlices", "Hashing too many sequences");
	}
	if (sbpf_vm_consume(vm, SHA256_BASE_COST))
		return -1;
	uint8_t *out, *slices = NULL;
	if (sbpf_vm_map(vm, a[2], HASH_BYTES, true, &out))
		return -EFAULT;
	if (a[1] && a[0] % 8)
		return sbpf_vm_syscall_error(vm, "UnalignedPointer", "Unaligned pointer");
	if (sbpf_vm_map(vm, a[0], a[1] * 16, false, &slices))
		return -EFAULT;
	union hash_state st;
	h->init(&st);
	for (uint64_t i = 0; i < a[1]; i++) {
		uint64_t addr, len;
		memcpy(&addr, slices + i * 16, 8);
		memcpy(&len, slices + i * 16 + 8, 8);
		uint8_t *p;
		if (sbpf_vm_map(vm, addr, len, false, &p))
			return -EFAULT;
		uint64_t cost = SHA256_BYTE_COST * (len / 2);
		if (sbpf_vm_consume(vm, cost > MEM_OP_BASE_COST ? cost : MEM_OP_BASE_COST))
			return -1;
		h->update(&st, p, len);
	}
	h->final(&st, out);
	return 0;
}

static int sys_sha256(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	return hash_syscall(vm, a, ret, &SHA256);
}

static int sys_keccak256(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	return hash_syscall(vm, a, ret, &KECCAK256);
}

/* sol_poseidon(parameters, endianness, inputs: &[&[u8]], n, result: *mut [u8; 32]) */
static int sys_poseidon(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	*ret = 0;
	if (a[0] != POSEIDON_BN254_X5)
		return sbpf_vm_syscall_error(vm, "InvalidParameters", "Invalid parameters.");
	if (a[1] != POSEIDON_BIG_ENDIAN && a[1] != POSEIDON_LITTLE_ENDIAN)
		return sbpf_vm_syscall_error(vm, "InvalidEndianness", "Invalid endianness.");
	if (a[3] > SOL_POSEIDON_MAX_INPUTS) {
		char line[96];
		int n = snprintf(line, sizeof(line), "Poseidon hashing %llu sequences is not supported",
				 (unsigned long long)a[3]);
		if (sbpf_vm_log(vm, line, (size_t)n))
			return -ENOMEM;
		return sbpf_vm_syscall_error(vm, "InvalidLength", "InvalidLength");
	}
	if (sbpf_vm_consume(vm, POSEIDON_COST_A * a[3] * a[3] + POSEIDON_COST_C))
		return -1;
	uint8_t *out, *slices = NULL;
	if (sbpf_vm_map(vm, a[4], SOL_POSEIDON_BYTES, true, &out))
		return -EFAULT;
	if (a[3] && a[2] % 8)
		return sbpf_vm_syscall_error(vm, "UnalignedPointer", "Unaligned pointer");
	if (sbpf_vm_map(vm, a[2], a[3] * SLICE_BYTES, false, &slices))
		return -EFAULT;
	struct sol_poseidon_input in[SOL_POSEIDON_MAX_INPUTS];
	for (uint64_t i = 0; i < a[3]; i++) {
		uint64_t addr;
		memcpy(&addr, slices + i * SLICE_BYTES, 8);
		memcpy(&in[i].len, slices + i * SLICE_BYTES + 8, 8);
		uint8_t *p;
		if (sbpf_vm_map(vm, addr, in[i].len, false, &p))
			return -EFAULT;
		in[i].bytes = p;
	}
	uint8_t hash[SOL_POSEIDON_BYTES];
	if (sol_poseidon_hash(hash, in, a[3], a[1] == POSEIDON_LITTLE_ENDIAN)) {
		*ret = 1;
		return 0;
	}
	memcpy(out, hash, sizeof(hash));
	return 0;
}

int sol_syscalls_hash(struct sbpf_syscalls *s)
{
	int rc = sbpf_syscalls_add(s, "sol_sha256", sys_sha256);
	if (!rc)
		rc = sbpf_syscalls_add(s, "sol_keccak256", sys_keccak256);
	return rc ? rc : sbpf_syscalls_add(s, "sol_poseidon", sys_poseidon);
}
