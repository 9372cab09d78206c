/*
 * The curve25519 syscalls as agave runs them (solana-curve25519 over curve25519-dalek):
 *   sol_curve_validate_point(curve, point, _) -> 0 valid, 1 not
 *   sol_curve_group_op(curve, op, left, right, result) -> 0, or 1 when an input is not a
 *       point (or, for MUL, the scalar in left is not canonical: not below the group order)
 *   sol_curve_multiscalar_mul(curve, scalars, points, n, result) -> 0, or 1 likewise
 * for the curves CURVE25519_EDWARDS (0, compressed Edwards y with x's sign in bit 255) and
 * CURVE25519_RISTRETTO (1). Each charges its cost first, then maps its inputs (an access
 * violation ends the run), computes, and maps the 32-byte result only on success: a failed
 * operation never faults on its result pointer. An unknown curve or op is InvalidAttribute
 * (abort_on_invalid_curve), more than 512 points InvalidLength before anything else.
 * BLS12-381 (SIMD-0388), which the runtime also offers through the first two, is not
 * implemented: a call on its curves fails UnsupportedSyscall.
 *
 * The arithmetic (libsodium's, with dalek's rules) is in crypto/curve25519.c.
 */
#include <errno.h>
#include <string.h>

#include "sbpf/vm.h"
#include "solana/crypto/curve25519.h"
#include "solana/syscalls.h"

enum {
	CURVE25519_EDWARDS = 0,
	CURVE25519_RISTRETTO = 1,
	BLS12_381_G1 = 5,
	BLS12_381_G2 = 6,
	GROUP_OP_ADD = 0,
	GROUP_OP_SUB = 1,
	GROUP_OP_MUL = 2,
	MSM_MAX_POINTS = 512,
	POINT_BYTES = SOL_CURVE_POINT_BYTES,
	NOT_A_POINT = 1,
};

struct curve {
	/* agave's execution costs (LiteSVM 1.5's ComputeBudget) */
	uint64_t validate_cost, add_cost, sub_cost, mul_cost, msm_base_cost, msm_incremental_cost;
	const uint8_t *identity;
	bool (*valid)(const uint8_t p[POINT_BYTES]);
	/* 0, or -1 when an input is not a point; k is canonical */
	int (*add)(uint8_t r[POINT_BYTES], const uint8_t p[POINT_BYTES], const uint8_t q[POINT_BYTES]);
	int (*sub)(uint8_t r[POINT_BYTES], const uint8_t p[POINT_BYTES], const uint8_t q[POINT_BYTES]);
	int (*mul)(uint8_t r[POINT_BYTES], const uint8_t k[POINT_BYTES], const uint8_t p[POINT_BYTES]);
};

static const struct curve EDWARDS = { 159, 473, 475, 2177, 2273, 758, sol_edwards_identity,
				      sol_on_curve, sol_edwards_add, sol_edwards_sub, sol_edwards_mul };
static const struct curve RISTRETTO = { 169, 521, 519, 2208, 2303, 788, sol_ristretto_identity,
					sol_ristretto_valid, sol_ristretto_add, sol_ristretto_sub,
					sol_ristretto_mul };

static const struct curve *curve_of(uint64_t id)
{
	return id == CURVE25519_EDWARDS ? &EDWARDS : id == CURVE25519_RISTRETTO ? &RISTRETTO : NULL;
}

static int invalid_attribute(struct sbpf_vm *vm)
{
	return sbpf_vm_syscall_error(vm, "InvalidAttribute", "InvalidAttribute");
}

/* An unknown curve for validation and group operations. BLS12-381's G1 and G2 (SIMD-0388:
 * curves 5 and 6, | 0x80 for big-endian) are the runtime's too; tally does not implement
 * them and says so. */
static int unknown_curve(struct sbpf_vm *vm, uint64_t id)
{
	const char *name = sbpf_vm_current_syscall(vm);
	if ((id & ~0x80ull) == BLS12_381_G1 || (id & ~0x80ull) == BLS12_381_G2)
		return sbpf_vm_syscall_error(vm, "UnsupportedSyscall",
					     "%s on BLS12-381 (curve %llu) is not implemented by tally",
					     name ? name : "this syscall", (unsigned long long)id);
	return invalid_attribute(vm);
}

/* Writes a computed point to the program's result pointer (mapped only now, as agave maps
 * it), or returns 1 when the operation failed. */
static int put_result(struct sbpf_vm *vm, uint64_t addr, int failed, const uint8_t r[POINT_BYTES],
		      uint64_t *ret)
{
	uint8_t *out;
	if (failed) {
		*ret = NOT_A_POINT;
		return 0;
	}
	if (sbpf_vm_map(vm, addr, POINT_BYTES, true, &out))
		return -EFAULT;
	memcpy(out, r, POINT_BYTES);
	*ret = 0;
	return 0;
}

/* sol_curve_validate_point(curve, point, _) */
static int sys_validate_point(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	const struct curve *c = curve_of(a[0]);
	uint8_t *p;
	*ret = 0;
	if (!c)
		return unknown_curve(vm, a[0]);
	if (sbpf_vm_consume(vm, c->validate_cost))
		return -1;
	if (sbpf_vm_map(vm, a[1], POINT_BYTES, false, &p))
		return -EFAULT;
	*ret = c->valid(p) ? 0 : NOT_A_POINT;
	return 0;
}

/* sol_curve_group_op(curve, op, left, right, result); for MUL left is the scalar */
static int sys_group_op(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	const struct curve *c = curve_of(a[0]);
	uint8_t *left, *right, r[POINT_BYTES];
	*ret = 0;
	if (!c)
		return unknown_curve(vm, a[0]);
	if (a[1] > GROUP_OP_MUL)
		return invalid_attribute(vm);
	uint64_t cost = a[1] == GROUP_OP_ADD ? c->add_cost : a[1] == GROUP_OP_SUB ? c->sub_cost : c->mul_cost;
	if (sbpf_vm_consume(vm, cost))
		return -1;
	if (sbpf_vm_map(vm, a[2], POINT_BYTES, false, &left) ||
	    sbpf_vm_map(vm, a[3], POINT_BYTES, false, &right))
		return -EFAULT;
	int failed;
	if (a[1] == GROUP_OP_ADD)
		failed = c->add(r, left, right);
	else if (a[1] == GROUP_OP_SUB)
		failed = c->sub(r, left, right);
	else
		failed = !sol_scalar_canonical(left) || c->mul(r, left, right);
	return put_result(vm, a[4], failed, r, ret);
}

/* The sum of k_i P_i; -1 when a scalar is not canonical or a point not a point. */
static int multiscalar_mul(const struct curve *c, const uint8_t *scalars, const uint8_t *points,
			   uint64_t n, uint8_t r[POINT_BYTES])
{
	uint8_t term[POINT_BYTES];
	for (uint64_t i = 0; i < n; i++)
		if (!sol_scalar_canonical(scalars + i * POINT_BYTES))
			return -1;
	memcpy(r, c->identity, POINT_BYTES);
	for (uint64_t i = 0; i < n; i++)
		if (c->mul(term, scalars + i * POINT_BYTES, points + i * POINT_BYTES) || c->add(r, r, term))
			return -1;
	return 0;
}

/* sol_curve_multiscalar_mul(curve, scalars, points, n, result): base + incremental per
 * point after the first */
static int sys_multiscalar_mul(struct sbpf_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	uint8_t *scalars, *points, r[POINT_BYTES];
	uint64_t n = a[3];
	*ret = 0;
	if (n > MSM_MAX_POINTS)
		return sbpf_vm_syscall_error(vm, "InvalidLength", "InvalidLength");
	const struct curve *c = curve_of(a[0]);
	if (!c)
		return invalid_attribute(vm);
	if (sbpf_vm_consume(vm, c->msm_base_cost + c->msm_incremental_cost * (n ? n - 1 : 0)))
		return -1;
	if (sbpf_vm_map(vm, a[1], n * POINT_BYTES, false, &scalars) ||
	    sbpf_vm_map(vm, a[2], n * POINT_BYTES, false, &points))
		return -EFAULT;
	return put_result(vm, a[4], multiscalar_mul(c, scalars, points, n, r), r, ret);
}

int sol_syscalls_curve(struct sbpf_syscalls *s)
{
	int rc = sbpf_syscalls_add(s, "sol_curve_validate_point", sys_validate_point);
	if (!rc)
		rc = sbpf_syscalls_add(s, "sol_curve_group_op", sys_group_op);
	return rc ? rc : sbpf_syscalls_add(s, "sol_curve_multiscalar_mul", sys_multiscalar_mul);
}
