/*
 * The alt_bn128 (BN254) syscalls as agave runs them (solana-bn254 over arkworks):
 *   sol_alt_bn128_group_op(op, input, len, result) -> 0, or 1 when the input is refused
 *   sol_alt_bn128_compression(op, input, len, result) -> 0, or 1 likewise
 * Group ops: G1 addition (0), G1 multiplication (2), the pairing check (3), G2 addition
 * (4) and G2 multiplication (6); compression ops: G1 compress (0) and decompress (1), G2
 * compress (2) and decompress (3). Each is big-endian (EIP-197) as it is and little-endian
 * (arkworks' order) with 0x80 set (SIMD-0284); any other op, subtraction (1, 5) included,
 * is InvalidAttribute before anything is charged. Each charges its cost, then maps the
 * result (its whole output, writable) and the input (an access violation ends the run),
 * computes, and writes the result only on success.
 *
 * Input lengths are solana-bn254's: big-endian G1 addition and multiplication take at
 * most 128 and 96 bytes, a shorter input read as padded with zeroes; the little-endian ones,
 * G2's, and compression take exactly their size; the pairing takes whole 192-byte pairs.
 * The result of a pairing check is 1 or 0 as a 32-byte integer in the op's byte order.
 *
 * The arithmetic is in crypto/bn254.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sbpf/vm.h"
#include "solana/crypto/bn254.h"
#include "solana/syscalls.h"

enum {
	LITTLE_ENDIAN_OP = 0x80,
	G1_ADD = 0,
	G1_MUL = 2,
	PAIRING = 3,
	G2_ADD = 4,
	G2_MUL = 6,
	G1_COMPRESS = 0,
	G1_DECOMPRESS = 1,
	G2_COMPRESS = 2,
	G2_DECOMPRESS = 3,
	FP = SOL_BN254_FIELD_BYTES,
	G1 = SOL_BN254_G1_BYTES,
	G2 = SOL_BN254_G2_BYTES,
	SCALAR = SOL_BN254_SCALAR_BYTES,
	PAIR = SOL_BN254_PAIR_BYTES,
	PAIRING_OUT = 32,
	INPUT_MAX = 2 * G2, /* the longest fixed-size input, G2 addition's */
	REFUSED = 1,
};

/* agave's execution costs (LiteSVM 1.5's ComputeBudget) */
enum {
	SYSCALL_BASE_COST = 100,
	SHA256_BASE_COST = 85,
	G1_ADD_COST = 334,
	G2_ADD_COST = 535,
	G1_MUL_COST = 3840,
	G2_MUL_COST = 15670,
	PAIRING_FIRST_COST = 36364,
	PAIRING_OTHER_COST = 12121,
	G1_COMPRESS_COST = 30,
	G1_DECOMPRESS_COST = 398,
	G2_COMPRESS_COST = 86,
	G2_DECOMPRESS_COST = 13610,
};

/* One fixed-size operation: its input and output sizes, how many bytes each field
 * element (and, for a multiplication, the scalar after the point) takes in big-endian
 * order, and whether a big-endian input may be shorter. */
struct fixed_op {
	uint64_t cost;
	size_t in, out, chunk, scalar_at;
	bool pads;
	int (*run)(uint8_t *r, const uint8_t *in);
};

static int g1_add(uint8_t *r, const uint8_t *in)
{
	return sol_bn254_g1_add(r, in, in + G1);
}

static int g1_mul(uint8_t *r, const uint8_t *in)
{
	return sol_bn254_g1_mul(r, in, in + G1);
}

static int g2_add(uint8_t *r, const uint8_t *in)
{
	return sol_bn254_g2_add(r, in, in + G2);
}

static int g2_mul(uint8_t *r, const uint8_t *in)
{
	return sol_bn254_g2_mul(r, in, in + G2);
}

static const struct fixed_op G1_ADD_OP = { G1_ADD_COST, 2 * G1, G1, FP, 0, true, g1_add };
static const struct fixed_op G1_MUL_OP = { G1_MUL_COST, G1 + SCALAR, G1, FP, G1, true, g1_mul };
static const struct fixed_op G2_ADD_OP = { G2_ADD_COST, 2 * G2, G2, 2 * FP, 0, false, g2_add };
static const struct fixed_op G2_MUL_OP = { G2_MUL_COST, G2 + SCALAR, G2, 2 * FP, G2, false,
					   g2_mul };

static const struct fixed_op G1_COMPRESS_OP = { SYSCALL_BASE_COST + G1_COMPRESS_COST, G1, FP,
						FP, 0, false, sol_bn254_g1_compress };
static const struct fixed_op G1_DECOMPRESS_OP = { SYSCALL_BASE_COST + G1_DECOMPRESS_COST, FP,
						  G1, FP, 0, false, sol_bn254_g1_decompress };
static const struct fixed_op G2_COMPRESS_OP = { SYSCALL_BASE_COST + G2_COMPRESS_COST, G2,
						2 * FP, 2 * FP, 0, false, sol_bn254_g2_compress };
static const struct fixed_op G2_DECOMPRESS_OP = { SYSCALL_BASE_COST + G2_DECOMPRESS_COST,
						  2 * FP, G2, 2 * FP, 0, false,
						  sol_bn254_g2_decompress };

/* Turns big-endian field elements of chunk bytes into little-endian ones, in place. */
static void reverse_chunks(uint8_t *b, size_t len, size_t chunk)
{
	for (size_t at = 0; at + chunk <= len; at += chunk)
		for (size_t i = 0, j = chunk - 1; i < j; i++, j--) {
			uint8_t x = b[at + i];
			b[at + i] = b[at + j];
			b[at + j] = x;
		}
}

/* A fixed_op's arguments in the op's byte order, and its result in it. */
static int run_fixed(const struct fixed_op *op, bool le, const uint8_t *input, uint64_t len,
		     uint8_t *out)
{
	uint8_t in[INPUT_MAX] = { 0 };
	if (len > op->in || (len < op->in && (le || !op->pads)))
		return -1;
	if (len) /* an empty input maps to no memory at all */
		memcpy(in, input, len);
	if (!le) {
		size_t point = op->scalar_at ? op->scalar_at : op->in;
		reverse_chunks(in, point, op->chunk);
		if (op->scalar_at)
			reverse_chunks(in + point, SCALAR, SCALAR);
	}
	if (op->run(out, in))
		return -1;
	if (!le)
		reverse_chunks(out, op->out, op->chunk);
	return 0;
}

/* Maps the result, then the input, as agave does; computes; writes the result on success
 * (*ret 0) or leaves it (*ret 1). */
static int map_and_run(struct sbpf_vm *vm, const uint64_t a[5], size_t out_len,
		       int (*run)(const void *op, bool le, const uint8_t *in, uint64_t len,
				  uint8_t *out),
		       const void *op, uint64_t *ret)
{
	uint8_t *result, *input, out[G2];
	if (sbpf_vm_map(vm, a[3], out_len, true, &result) ||
	    sbpf_vm_map(vm, a[1], a[2], false, &input))
		return -EFAULT;
	int rc = run(op, a[0] & LITTLE_ENDIAN_OP, input, a[2], out);
	if (rc == -ENOMEM)
		return rc;
	*ret = rc ? REFUSED : 0;
	if (!rc)
		memcpy(result, out, out_len);
	return 0;
}

static int fixed(const void *op, bool le, const uint8_t *in, uint64_t len, uint8_t *out)
{
	return run_fixed(op, le, in, len, out);
}

/* Whole pairs only; each pair's G1 and G2 points are converted as a G1 and a G2 point. */
static int pairing(const void *op, bool le, const uint8_t *input, uint64_t len, uint8_t *out)
{
	bool one;
	if (len % PAIR)
		return -1;
	uint8_t *pairs = calloc(1, len ? len : 1);
	if (!pairs)
		return -ENOMEM;
	if (len)
		memcpy(pairs, input, len);
	for (uint64_t at = 0; !le && at < len; at += PAIR) {
		reverse_chunks(pairs + at, G1, FP);
		reverse_chunks(pairs + at + G1, G2, 2 * FP);
	}
	int rc = sol_bn254_pairing_is_one(pairs, len / PAIR, &one);
	free(pairs);
	if (rc)
		return -1;
	memset(out, 0, PAIRING_OUT);
	out[le ? 0 : PAIRING_OUT - 1] = one;
	return 0;
}

static int invalid_attribute(struct sbpf_vm *vm)
{
	return sbpf_vm_syscall_error(vm, "InvalidAttribute", "InvalidAttribute");
}

/* The operation without its endianness bit, or -1 for any other bit. */
static int64_t base_op(uint64_t op)
{
	return (op & ~(uint64_t)LITTLE_ENDIAN_OP) < LITTLE_ENDIAN_OP ? (int64_t)(op & 0x7f) : -1;
}

/* first + other per pair after the first, plus the hashing agave charges on top */
static uint64_t pairing_cost(uint64_t len)
{
	uint64_t pairs = len / PAIR;
	uint64_t cost = PAIRING_FIRST_COST + PAIRING_OTHER_COST * (pairs ? pairs - 1 : 0) +
			SHA256_BASE_COST + PAIRING_OUT;
	return len > UINT64_MAX - cost ? UINT64_MAX : cost + len;
}

/* sol_alt_bn128_group_op(op, input, len, result) */
static int sys_group_op(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	const struct fixed_op *op;
	*ret = 0;
	switch (base_op(a[0])) {
	case G1_ADD: op = &G1_ADD_OP; break;
	case G1_MUL: op = &G1_MUL_OP; break;
	case G2_ADD: op = &G2_ADD_OP; break;
	case G2_MUL: op = &G2_MUL_OP; break;
	case PAIRING:
		if (sbpf_vm_consume(vm, pairing_cost(a[2])))
			return -1;
		return map_and_run(vm, a, PAIRING_OUT, pairing, NULL, ret);
	default:
		return invalid_attribute(vm);
	}
	if (sbpf_vm_consume(vm, op->cost))
		return -1;
	return map_and_run(vm, a, op->out, fixed, op, ret);
}

/* sol_alt_bn128_compression(op, input, len, result) */
static int sys_compression(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	const struct fixed_op *op;
	*ret = 0;
	switch (base_op(a[0])) {
	case G1_COMPRESS: op = &G1_COMPRESS_OP; break;
	case G1_DECOMPRESS: op = &G1_DECOMPRESS_OP; break;
	case G2_COMPRESS: op = &G2_COMPRESS_OP; break;
	case G2_DECOMPRESS: op = &G2_DECOMPRESS_OP; break;
	default:
		return invalid_attribute(vm);
	}
	if (sbpf_vm_consume(vm, op->cost))
		return -1;
	return map_and_run(vm, a, op->out, fixed, op, ret);
}

int sol_syscalls_bn254(struct sbpf_syscalls *s)
{
	int rc = sbpf_syscalls_add(s, "sol_alt_bn128_group_op", sys_group_op);
	return rc ? rc : sbpf_syscalls_add(s, "sol_alt_bn128_compression", sys_compression);
}
