/*
 * libFuzzer target for the curve syscalls' arithmetic (solana/crypto/curve25519.c): the
 * first byte picks Edwards or Ristretto, then a scalar and two point encodings, any 32
 * bytes each. Addition succeeds exactly when both inputs are points, subtraction undoes it,
 * and the scalar multiplication (libsodium's, or for Edwards points with a torsion part or
 * a non-canonical encoding the decomposition into prime-order and torsion parts) equals
 * double-and-add over the group's addition, for the scalar reduced below the group order; a
 * scalar at or above it is not canonical.
 */
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solana/crypto/curve25519.h"

struct group {
	const uint8_t *identity;
	bool (*valid)(const uint8_t p[32]);
	int (*add)(uint8_t r[32], const uint8_t p[32], const uint8_t q[32]);
	int (*sub)(uint8_t r[32], const uint8_t p[32], const uint8_t q[32]);
	int (*mul)(uint8_t r[32], const uint8_t k[32], const uint8_t p[32]);
};

static const struct group GROUPS[2] = {
	{ sol_edwards_identity, sol_on_curve, sol_edwards_add, sol_edwards_sub, sol_edwards_mul },
	{ sol_ristretto_identity, sol_ristretto_valid, sol_ristretto_add, sol_ristretto_sub,
	  sol_ristretto_mul },
};

static void check(int ok)
{
	if (!ok)
		abort();
}

/* k P by double-and-add from the top bit (P is a point) */
static void double_and_add(const struct group *g, uint8_t r[32], const uint8_t k[32], const uint8_t p[32])
{
	memcpy(r, g->identity, 32);
	for (int bit = 255; bit >= 0; bit--) {
		check(g->add(r, r, r) == 0);
		if (k[bit / 8] >> (bit % 8) & 1)
			check(g->add(r, r, p) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 97)
		return 0;
	const struct group *g = &GROUPS[data[0] & 1];
	const uint8_t *k = data + 1, *p = data + 33, *q = data + 65;
	uint8_t sum[32], back[32], canon[32], r[32], want[32], wide[64] = { 0 }, kc[32];
	bool points = g->valid(p) && g->valid(q);
	check((g->add(sum, p, q) == 0) == points);
	check((g->sub(back, p, q) == 0) == points);
	if (points) {
		check(g->sub(back, sum, q) == 0 && g->add(canon, p, g->identity) == 0);
		check(memcmp(back, canon, 32) == 0);
	}
	memcpy(wide, k, 32);
	crypto_core_ed25519_scalar_reduce(kc, wide);
	check(sol_scalar_canonical(kc));
	check(sol_scalar_canonical(k) == (memcmp(k, kc, 32) == 0));
	if (g->mul(r, kc, p) != 0) {
		check(!g->valid(p));
		return 0;
	}
	check(g->valid(p));
	double_and_add(g, want, kc, p);
	check(memcmp(r, want, 32) == 0);
	return 0;
}
