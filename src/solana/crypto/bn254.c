/*
 * BN254 on GMP's mpn layer (bn254.h says what each operation accepts). Points are affine
 * over Fp2 whichever group they are in (a G1 point has c1 = 0), so that one set of curve
 * formulas serves G1, G2 and the pairing's Miller loop; host speed matters little here (the
 * syscalls are metered), and affine formulas are the easiest to check.
 *
 * The pairing check computes the reduced Tate pairing f_{r,P}(psi(Q))^((p^12 - 1) / r),
 * psi untwisting Q from y^2 = x^3 + 3/xi to E(Fp12) as (x w^2, y w^3), and not arkworks'
 * optimal ate pairing: both are non-degenerate bilinear maps on G1 x G2, so one is a fixed
 * power, prime to r, of the other, and a product of pairings is one for both or for neither
 * -- the only thing the syscall reports. Vertical lines take values in Fp6, which the final
 * exponentiation sends to one, so the Miller loop leaves them out.
 */
#include <gmp.h>
#include <string.h>

#include "solana/crypto/bn254.h"

_Static_assert(GMP_NUMB_BITS == 64 && GMP_NAIL_BITS == 0, "the limbs are 64-bit words");

enum {
	LIMBS_MAX = 6, /* up to 384-bit moduli (BLS12-381's) */
	FLAG_INFINITY = 0x40,
	FLAG_NEGATIVE = 0x80,
	FLAGS = FLAG_INFINITY | FLAG_NEGATIVE,
};

typedef struct { mp_limb_t v[LIMBS_MAX]; } fp;
typedef struct { fp c0, c1; } fp2;
typedef struct { fp2 c0, c1, c2; } fp6;
typedef struct { fp6 c0, c1; } fp12;

/* The tower: Fp2 = Fp[u]/(u^2 - beta), Fp6 = Fp2[v]/(v^3 - xi), Fp12 = Fp6[w]/(w^2 - v). */
struct tower {
	mp_size_t n; /* limbs of p */
	fp p;
	fp beta;
	fp2 xi;
};

/* A curve y^2 = x^3 + b over Fp2, affine. */
struct curve {
	const struct tower *t;
	fp2 b;
};

struct point {
	fp2 x, y;
	bool inf;
};

/* BN254: p, r, beta = -1, xi = 9 + u. */
static const mp_limb_t BN254_P[4] = { 0x3c208c16d87cfd47, 0x97816a916871ca8d,
				      0xb85045b68181585d, 0x30644e72e131a029 };
static const mp_limb_t BN254_R[4] = { 0x43e1f593f0000001, 0x2833e84879b97091,
				      0xb85045b68181585d, 0x30644e72e131a029 };

/* ---- Fp ---- */

static void fp_set_ui(const struct tower *t, fp *r, mp_limb_t x)
{
	memset(r, 0, sizeof(*r));
	r->v[0] = x;
}

static bool fp_is_zero(const struct tower *t, const fp *a)
{
	return mpn_zero_p(a->v, t->n);
}

static int fp_cmp(const struct tower *t, const fp *a, const fp *b)
{
	return mpn_cmp(a->v, b->v, t->n);
}

static void fp_add(const struct tower *t, fp *r, const fp *a, const fp *b)
{
	mp_limb_t carry = mpn_add_n(r->v, a->v, b->v, t->n);
	if (carry || mpn_cmp(r->v, t->p.v, t->n) >= 0)
		mpn_sub_n(r->v, r->v, t->p.v, t->n);
}

static void fp_sub(const struct tower *t, fp *r, const fp *a, const fp *b)
{
	if (mpn_sub_n(r->v, a->v, b->v, t->n))
		mpn_add_n(r->v, r->v, t->p.v, t->n);
}

static void fp_neg(const struct tower *t, fp *r, const fp *a)
{
	fp zero;
	fp_set_ui(t, &zero, 0);
	fp_sub(t, r, &zero, a);
}

static void fp_mul(const struct tower *t, fp *r, const fp *a, const fp *b)
{
	mp_limb_t prod[2 * LIMBS_MAX], q[LIMBS_MAX + 1];
	mpn_mul_n(prod, a->v, b->v, t->n);
	mpn_tdiv_qr(q, r->v, 0, prod, 2 * t->n, t->p.v, t->n);
}

static void fp_from_mpz(const struct tower *t, fp *r, const mpz_t x)
{
	memset(r, 0, sizeof(*r));
	for (mp_size_t i = 0; i < t->n; i++)
		r->v[i] = mpz_getlimbn(x, i);
}

/* 1/a; a is not zero */
static void fp_inv(const struct tower *t, fp *r, const fp *a)
{
	mpz_t x, m, y;
	mpz_init(y);
	mpz_invert(y, mpz_roinit_n(x, a->v, t->n), mpz_roinit_n(m, t->p.v, t->n));
	fp_from_mpz(t, r, y);
	mpz_clear(y);
}

static void fp_pow(const struct tower *t, fp *r, const fp *a, const mpz_t e)
{
	fp acc;
	fp_set_ui(t, &acc, 1);
	for (size_t i = mpz_sizeinbase(e, 2); i-- > 0;) {
		fp_mul(t, &acc, &acc, &acc);
		if (mpz_tstbit(e, i))
			fp_mul(t, &acc, &acc, a);
	}
	*r = acc;
}

/* A square root of a, for p = 3 (mod 4): a^((p + 1) / 4); -1 when a is not a square. */
static int fp_sqrt(const struct tower *t, fp *r, const fp *a)
{
	mpz_t p, e;
	fp s, check;
	mpz_init(e);
	mpz_add_ui(e, mpz_roinit_n(p, t->p.v, t->n), 1);
	mpz_fdiv_q_2exp(e, e, 2);
	fp_pow(t, &s, a, e);
	mpz_clear(e);
	fp_mul(t, &check, &s, &s);
	if (fp_cmp(t, &check, a))
		return -1;
	*r = s;
	return 0;
}

/* Reads a field element of len bytes, little-endian; -1 when it is not below p. */
static int fp_read(const struct tower *t, fp *r, const uint8_t *b, size_t len)
{
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < len; i++)
		r->v[i / 8] |= (mp_limb_t)b[i] << (8 * (i % 8));
	return mpn_cmp(r->v, t->p.v, t->n) < 0 ? 0 : -1;
}

static void fp_write(uint8_t *b, const fp *a, size_t len)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(a->v[i / 8] >> (8 * (i % 8)));
}

/* ---- Fp2 ---- */

static bool fp2_is_zero(const struct tower *t, const fp2 *a)
{
	return fp_is_zero(t, &a->c0) && fp_is_zero(t, &a->c1);
}

static bool fp2_eq(const struct tower *t, const fp2 *a, const fp2 *b)
{
	return !fp_cmp(t, &a->c0, &b->c0) && !fp_cmp(t, &a->c1, &b->c1);
}

/* arkworks' order on Fp2: c1 first, then c0 */
static int fp2_cmp(const struct tower *t, const fp2 *a, const fp2 *b)
{
	int c = fp_cmp(t, &a->c1, &b->c1);
	return c ? c : fp_cmp(t, &a->c0, &b->c0);
}

static void fp2_add(const struct tower *t, fp2 *r, const fp2 *a, const fp2 *b)
{
	fp_add(t, &r->c0, &a->c0, &b->c0);
	fp_add(t, &r->c1, &a->c1, &b->c1);
}

static void fp2_sub(const struct tower *t, fp2 *r, const fp2 *a, const fp2 *b)
{
	fp_sub(t, &r->c0, &a->c0, &b->c0);
	fp_sub(t, &r->c1, &a->c1, &b->c1);
}

static void fp2_neg(const struct tower *t, fp2 *r, const fp2 *a)
{
	fp_neg(t, &r->c0, &a->c0);
	fp_neg(t, &r->c1, &a->c1);
}

static void fp2_mul(const struct tower *t, fp2 *r, const fp2 *a, const fp2 *b)
{
	fp a0b0, a1b1, a0b1, a1b0;
	fp_mul(t, &a0b0, &a->c0, &b->c0);
	fp_mul(t, &a1b1, &a->c1, &b->c1);
	fp_mul(t, &a0b1, &a->c0, &b->c1);
	fp_mul(t, &a1b0, &a->c1, &b->c0);
	fp_mul(t, &a1b1, &a1b1, &t->beta);
	fp_add(t, &r->c0, &a0b0, &a1b1);
	fp_add(t, &r->c1, &a0b1, &a1b0);
}

static void fp2_mul_fp(const struct tower *t, fp2 *r, const fp2 *a, const fp *k)
{
	fp_mul(t, &r->c0, &a->c0, k);
	fp_mul(t, &r->c1, &a->c1, k);
}

/* 1/a = conj(a) / (a0^2 - beta a1^2); a is not zero */
static void fp2_inv(const struct tower *t, fp2 *r, const fp2 *a)
{
	fp n0, n1;
	fp_mul(t, &n0, &a->c0, &a->c0);
	fp_mul(t, &n1, &a->c1, &a->c1);
	fp_mul(t, &n1, &n1, &t->beta);
	fp_sub(t, &n0, &n0, &n1);
	fp_inv(t, &n0, &n0);
	fp_mul(t, &r->c0, &a->c0, &n0);
	fp_mul(t, &r->c1, &a->c1, &n0);
	fp_neg(t, &r->c1, &r->c1);
}

/* A square root of a (any one: callers pick theirs by fp2_cmp); -1 when there is none.
 * x0 + x1 u squares to a when x0^2 + beta x1^2 = a0 and 2 x0 x1 = a1: x0^2 is
 * (a0 +- sqrt(norm a)) / 2, x1 = a1 / (2 x0), and with a1 = 0 one of x0, x1 is zero. */
static int fp2_sqrt(const struct tower *t, fp2 *r, const fp2 *a)
{
	fp2 s, check;
	memset(&s, 0, sizeof(s));
	if (fp_is_zero(t, &a->c1)) {
		fp q;
		fp_inv(t, &q, &t->beta);
		fp_mul(t, &q, &q, &a->c0);
		if (fp_sqrt(t, &s.c0, &a->c0) && fp_sqrt(t, &s.c1, &q))
			return -1;
	} else {
		fp n0, n1, root, half, two, d;
		fp_mul(t, &n0, &a->c0, &a->c0);
		fp_mul(t, &n1, &a->c1, &a->c1);
		fp_mul(t, &n1, &n1, &t->beta);
		fp_sub(t, &n0, &n0, &n1);
		if (fp_sqrt(t, &root, &n0))
			return -1;
		fp_set_ui(t, &two, 2);
		fp_inv(t, &half, &two);
		fp_add(t, &d, &a->c0, &root);
		fp_mul(t, &d, &d, &half);
		if (fp_sqrt(t, &s.c0, &d)) {
			fp_sub(t, &d, &a->c0, &root);
			fp_mul(t, &d, &d, &half);
			if (fp_sqrt(t, &s.c0, &d))
				return -1;
		}
		fp_add(t, &d, &s.c0, &s.c0);
		fp_inv(t, &d, &d);
		fp_mul(t, &s.c1, &a->c1, &d);
	}
	fp2_mul(t, &check, &s, &s);
	if (!fp2_eq(t, &check, a))
		return -1;
	*r = s;
	return 0;
}

/* ---- Fp6 and Fp12 (only what the pairing needs: products and powers) ---- */

static void fp6_add(const struct tower *t, fp6 *r, const fp6 *a, const fp6 *b)
{
	fp2_add(t, &r->c0, &a->c0, &b->c0);
	fp2_add(t, &r->c1, &a->c1, &b->c1);
	fp2_add(t, &r->c2, &a->c2, &b->c2);
}

/* schoolbook, with v^3 = xi */
static void fp6_mul(const struct tower *t, fp6 *r, const fp6 *a, const fp6 *b)
{
	const fp2 *x[3] = { &a->c0, &a->c1, &a->c2 }, *y[3] = { &b->c0, &b->c1, &b->c2 };
	fp2 c[5], term;
	memset(c, 0, sizeof(c));
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++) {
			fp2_mul(t, &term, x[i], y[j]);
			fp2_add(t, &c[i + j], &c[i + j], &term);
		}
	fp2_mul(t, &c[3], &c[3], &t->xi);
	fp2_mul(t, &c[4], &c[4], &t->xi);
	fp2_add(t, &r->c0, &c[0], &c[3]);
	fp2_add(t, &r->c1, &c[1], &c[4]);
	r->c2 = c[2];
}

/* a v: (c0, c1, c2) -> (xi c2, c0, c1) */
static void fp6_mul_v(const struct tower *t, fp6 *r, const fp6 *a)
{
	fp2 top;
	fp2_mul(t, &top, &a->c2, &t->xi);
	r->c2 = a->c1;
	r->c1 = a->c0;
	r->c0 = top;
}

static void fp12_set_one(const struct tower *t, fp12 *r)
{
	memset(r, 0, sizeof(*r));
	fp_set_ui(t, &r->c0.c0.c0, 1);
}

static bool fp12_is_one(const struct tower *t, const fp12 *a)
{
	fp12 one;
	fp12_set_one(t, &one);
	const fp2 *x[6] = { &a->c0.c0, &a->c0.c1, &a->c0.c2, &a->c1.c0, &a->c1.c1, &a->c1.c2 };
	const fp2 *y[6] = { &one.c0.c0, &one.c0.c1, &one.c0.c2, &one.c1.c0, &one.c1.c1, &one.c1.c2 };
	for (int i = 0; i < 6; i++)
		if (!fp2_eq(t, x[i], y[i]))
			return false;
	return true;
}

/* (a0 + a1 w)(b0 + b1 w) with w^2 = v */
static void fp12_mul(const struct tower *t, fp12 *r, const fp12 *a, const fp12 *b)
{
	fp6 a0b0, a1b1, a0b1, a1b0;
	fp6_mul(t, &a0b0, &a->c0, &b->c0);
	fp6_mul(t, &a1b1, &a->c1, &b->c1);
	fp6_mul(t, &a0b1, &a->c0, &b->c1);
	fp6_mul(t, &a1b0, &a->c1, &b->c0);
	fp6_mul_v(t, &a1b1, &a1b1);
	fp6_add(t, &r->c0, &a0b0, &a1b1);
	fp6_add(t, &r->c1, &a0b1, &a1b0);
}

static void fp12_pow(const struct tower *t, fp12 *r, const fp12 *a, const mpz_t e)
{
	fp12 acc;
	fp12_set_one(t, &acc);
	for (size_t i = mpz_sizeinbase(e, 2); i-- > 0;) {
		fp12_mul(t, &acc, &acc, &acc);
		if (mpz_tstbit(e, i))
			fp12_mul(t, &acc, &acc, a);
	}
	*r = acc;
}

/* ---- the curves ---- */

static void bn254_tower(struct tower *t)
{
	memset(t, 0, sizeof(*t));
	t->n = 4;
	memcpy(t->p.v, BN254_P, sizeof(BN254_P));
	fp_set_ui(t, &t->beta, 1);
	fp_neg(t, &t->beta, &t->beta);
	fp_set_ui(t, &t->xi.c0, 9);
	fp_set_ui(t, &t->xi.c1, 1);
}

/* G1: y^2 = x^3 + 3 */
static void bn254_g1(struct curve *c, const struct tower *t)
{
	c->t = t;
	memset(&c->b, 0, sizeof(c->b));
	fp_set_ui(t, &c->b.c0, 3);
}

/* G2, the sextic twist: y^2 = x^3 + 3/xi */
static void bn254_g2(struct curve *c, const struct tower *t)
{
	fp three;
	c->t = t;
	fp_set_ui(t, &three, 3);
	fp2_inv(t, &c->b, &t->xi);
	fp2_mul_fp(t, &c->b, &c->b, &three);
}

/* The tower and the curve of G1 (d = 1) or G2 (d = 2); c points into t. */
struct group {
	struct tower t;
	struct curve c;
};

static const struct curve *bn254_group(struct group *g, int d)
{
	bn254_tower(&g->t);
	if (d == 1)
		bn254_g1(&g->c, &g->t);
	else
		bn254_g2(&g->c, &g->t);
	return &g->c;
}

/* x^3 + b */
static void curve_rhs(const struct curve *c, fp2 *r, const fp2 *x)
{
	fp2 x3;
	fp2_mul(c->t, &x3, x, x);
	fp2_mul(c->t, &x3, &x3, x);
	fp2_add(c->t, r, &x3, &c->b);
}

static bool on_curve(const struct curve *c, const struct point *p)
{
	fp2 yy, rhs;
	if (p->inf)
		return true;
	fp2_mul(c->t, &yy, &p->y, &p->y);
	curve_rhs(c, &rhs, &p->x);
	return fp2_eq(c->t, &yy, &rhs);
}

/* The point on the line of slope l through p, at its other intersection with the curve
 * (q's x), reflected: x3 = l^2 - x1 - x2, y3 = l (x1 - x3) - y1. */
static void chord(const struct tower *t, struct point *r, const fp2 *l, const struct point *p,
		  const fp2 *x2)
{
	fp2 x3, y3;
	fp2_mul(t, &x3, l, l);
	fp2_sub(t, &x3, &x3, &p->x);
	fp2_sub(t, &x3, &x3, x2);
	fp2_sub(t, &y3, &p->x, &x3);
	fp2_mul(t, &y3, &y3, l);
	fp2_sub(t, &y3, &y3, &p->y);
	r->x = x3;
	r->y = y3;
	r->inf = false;
}

/* The tangent's slope 3 x^2 / 2 y at p (y not zero). */
static void tangent(const struct tower *t, fp2 *l, const struct point *p)
{
	fp2 num, den;
	fp2_mul(t, &num, &p->x, &p->x);
	fp2_add(t, &den, &num, &num);
	fp2_add(t, &num, &den, &num);
	fp2_add(t, &den, &p->y, &p->y);
	fp2_inv(t, &den, &den);
	fp2_mul(t, l, &num, &den);
}

/* The slope (y2 - y1) / (x2 - x1) (x1 != x2). */
static void secant(const struct tower *t, fp2 *l, const struct point *p, const struct point *q)
{
	fp2 num, den;
	fp2_sub(t, &num, &q->y, &p->y);
	fp2_sub(t, &den, &q->x, &p->x);
	fp2_inv(t, &den, &den);
	fp2_mul(t, l, &num, &den);
}

static void point_double(const struct tower *t, struct point *r, const struct point *p)
{
	fp2 l;
	if (p->inf || fp2_is_zero(t, &p->y)) {
		r->inf = true;
		return;
	}
	tangent(t, &l, p);
	chord(t, r, &l, p, &p->x);
}

static void point_add(const struct tower *t, struct point *r, const struct point *p,
		      const struct point *q)
{
	fp2 l;
	if (p->inf || q->inf) {
		*r = p->inf ? *q : *p;
		return;
	}
	if (fp2_eq(t, &p->x, &q->x)) {
		if (fp2_eq(t, &p->y, &q->y))
			point_double(t, r, p);
		else
			r->inf = true;
		return;
	}
	secant(t, &l, p, q);
	chord(t, r, &l, p, &q->x);
}

/* k p for the len-byte little-endian k */
static void point_mul(const struct tower *t, struct point *r, const struct point *p,
		      const uint8_t *k, size_t len)
{
	struct point acc = { .inf = true };
	for (size_t i = 8 * len; i-- > 0;) {
		point_double(t, &acc, &acc);
		if (k[i / 8] >> (i % 8) & 1)
			point_add(t, &acc, &acc, p);
	}
	*r = acc;
}

static void order_bytes(uint8_t r[SOL_BN254_SCALAR_BYTES])
{
	for (size_t i = 0; i < SOL_BN254_SCALAR_BYTES; i++)
		r[i] = (uint8_t)(BN254_R[i / 8] >> (8 * (i % 8)));
}

static bool in_subgroup(const struct curve *c, const struct point *p)
{
	uint8_t r[SOL_BN254_SCALAR_BYTES];
	struct point rp;
	order_bytes(r);
	point_mul(c->t, &rp, p, r, sizeof(r));
	return rp.inf;
}

/* ---- encodings: degree 1 (G1, coordinates in Fp) or 2 (G2, in Fp2) ---- */

static bool all_zero(const uint8_t *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (b[i])
			return false;
	return true;
}

/* An Fp2 element of degree d (c1 = 0 for 1); when flags is not NULL its last field element
 * carries the flag bits, returned there (both set is invalid). */
static int element_read(const struct tower *t, fp2 *r, const uint8_t *b, int d, unsigned *flags)
{
	uint8_t last[SOL_BN254_FIELD_BYTES];
	const uint8_t *top = b + (d - 1) * SOL_BN254_FIELD_BYTES;
	memset(r, 0, sizeof(*r));
	if (d == 2 && fp_read(t, &r->c0, b, SOL_BN254_FIELD_BYTES))
		return -1;
	memcpy(last, top, sizeof(last));
	if (flags) {
		*flags = last[SOL_BN254_FIELD_BYTES - 1] & FLAGS;
		last[SOL_BN254_FIELD_BYTES - 1] &= (uint8_t)~FLAGS;
		if (*flags == FLAGS)
			return -1;
	}
	return fp_read(t, d == 2 ? &r->c1 : &r->c0, last, sizeof(last));
}

static void element_write(uint8_t *b, const fp2 *a, int d)
{
	fp_write(b, &a->c0, SOL_BN254_FIELD_BYTES);
	if (d == 2)
		fp_write(b + SOL_BN254_FIELD_BYTES, &a->c1, SOL_BN254_FIELD_BYTES);
}

/* An uncompressed point (arkworks' deserialize, before any check): all zeroes or the
 * infinity flag is the point at infinity, the sign flag is ignored. */
static int point_read(const struct tower *t, struct point *p, const uint8_t *b, int d)
{
	unsigned flags;
	memset(p, 0, sizeof(*p));
	p->inf = all_zero(b, 2 * (size_t)d * SOL_BN254_FIELD_BYTES);
	if (p->inf)
		return 0;
	if (element_read(t, &p->x, b, d, NULL) ||
	    element_read(t, &p->y, b + d * SOL_BN254_FIELD_BYTES, d, &flags))
		return -1;
	p->inf = flags & FLAG_INFINITY;
	return 0;
}

static void point_write(uint8_t *b, const struct point *p, int d)
{
	size_t half = (size_t)d * SOL_BN254_FIELD_BYTES;
	if (p->inf) {
		memset(b, 0, 2 * half);
		return;
	}
	element_write(b, &p->x, d);
	element_write(b + half, &p->y, d);
}

/* A point on c, and with subgroup true in its prime-order subgroup. */
static int point_read_checked(const struct curve *c, struct point *p, const uint8_t *b, int d,
			      bool subgroup)
{
	if (point_read(c->t, p, b, d) || !on_curve(c, p) || (subgroup && !in_subgroup(c, p)))
		return -1;
	return 0;
}

static int group_add(const struct curve *c, int d, uint8_t *r, const uint8_t *pb,
		     const uint8_t *qb)
{
	struct point p, q;
	if (point_read_checked(c, &p, pb, d, false) || point_read_checked(c, &q, qb, d, false))
		return -1;
	point_add(c->t, &p, &p, &q);
	point_write(r, &p, d);
	return 0;
}

static int group_mul(const struct curve *c, int d, uint8_t *r, const uint8_t *pb,
		     const uint8_t *k)
{
	struct point p;
	if (point_read_checked(c, &p, pb, d, d == 2))
		return -1;
	point_mul(c->t, &p, &p, k, SOL_BN254_SCALAR_BYTES);
	point_write(r, &p, d);
	return 0;
}

int sol_bn254_g1_add(uint8_t r[SOL_BN254_G1_BYTES], const uint8_t p[SOL_BN254_G1_BYTES],
		 const uint8_t q[SOL_BN254_G1_BYTES])
{
	struct group g;
	return group_add(bn254_group(&g, 1), 1, r, p, q);
}

int sol_bn254_g1_mul(uint8_t r[SOL_BN254_G1_BYTES], const uint8_t p[SOL_BN254_G1_BYTES],
		 const uint8_t k[SOL_BN254_SCALAR_BYTES])
{
	struct group g;
	return group_mul(bn254_group(&g, 1), 1, r, p, k);
}

int sol_bn254_g2_add(uint8_t r[SOL_BN254_G2_BYTES], const uint8_t p[SOL_BN254_G2_BYTES],
		 const uint8_t q[SOL_BN254_G2_BYTES])
{
	struct group g;
	return group_add(bn254_group(&g, 2), 2, r, p, q);
}

int sol_bn254_g2_mul(uint8_t r[SOL_BN254_G2_BYTES], const uint8_t p[SOL_BN254_G2_BYTES],
		 const uint8_t k[SOL_BN254_SCALAR_BYTES])
{
	struct group g;
	return group_mul(bn254_group(&g, 2), 2, r, p, k);
}

/* ---- the pairing ---- */

/* The line of slope l through t (over Fp), at psi(q): q.y w^3 - t.y - l (q.x w^2 - t.x). */
static void line_at(const struct tower *tw, fp12 *r, const fp2 *l, const struct point *t,
		    const struct point *q)
{
	fp2 lx;
	memset(r, 0, sizeof(*r));
	fp2_mul(tw, &lx, l, &t->x);
	fp2_sub(tw, &r->c0.c0, &lx, &t->y);
	fp2_mul(tw, &r->c0.c1, l, &q->x);
	fp2_neg(tw, &r->c0.c1, &r->c0.c1);
	r->c1.c1 = q->y;
}

/* f *= f_{r,p}(psi(q)), by Miller's double-and-add over the bits of r. */
static void miller_loop(const struct tower *tw, fp12 *f, const struct point *p,
			const struct point *q)
{
	uint8_t r[SOL_BN254_SCALAR_BYTES];
	struct point t = *p;
	fp12 acc, line;
	fp2 l;
	order_bytes(r);
	fp12_set_one(tw, &acc);
	size_t top = 8 * sizeof(r) - 1;
	while (!(r[top / 8] >> (top % 8) & 1))
		top--;
	for (size_t i = top; i-- > 0;) {
		fp12_mul(tw, &acc, &acc, &acc);
		tangent(tw, &l, &t);
		line_at(tw, &line, &l, &t, q);
		fp12_mul(tw, &acc, &acc, &line);
		chord(tw, &t, &l, &t, &t.x);
		/* the last addition, (r - 1) p + p, is vertical */
		if (r[i / 8] >> (i % 8) & 1 && !fp2_eq(tw, &t.x, &p->x)) {
			secant(tw, &l, &t, p);
			line_at(tw, &line, &l, &t, q);
			fp12_mul(tw, &acc, &acc, &line);
			chord(tw, &t, &l, &t, &p->x);
		}
	}
	fp12_mul(tw, f, f, &acc);
}

int sol_bn254_pairing_is_one(const uint8_t *pairs, size_t n, bool *one)
{
	struct tower t;
	struct curve g1, g2;
	fp12 f;
	bn254_tower(&t);
	bn254_g1(&g1, &t);
	bn254_g2(&g2, &t);
	fp12_set_one(&t, &f);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *pair = pairs + i * SOL_BN254_PAIR_BYTES;
		struct point p, q;
		if (point_read_checked(&g1, &p, pair, 1, true) ||
		    point_read_checked(&g2, &q, pair + SOL_BN254_G1_BYTES, 2, true))
			return -1;
		if (!p.inf && !q.inf)
			miller_loop(&t, &f, &p, &q);
	}
	mpz_t p, r, e;
	mpz_init(e);
	mpz_pow_ui(e, mpz_roinit_n(p, t.p.v, t.n), 12);
	mpz_sub_ui(e, e, 1);
	mpz_divexact(e, e, mpz_roinit_n(r, BN254_R, 4));
	fp12_pow(&t, &f, &f, e);
	mpz_clear(e);
	*one = fp12_is_one(&t, &f);
	return 0;
}

/* ---- compression ---- */

static int compress(const struct curve *c, int d, uint8_t *r, const uint8_t *b)
{
	size_t len = (size_t)d * SOL_BN254_FIELD_BYTES;
	struct point p;
	fp2 neg;
	memset(r, 0, len);
	if (all_zero(b, 2 * len))
		return 0;
	if (point_read(c->t, &p, b, d))
		return -1;
	if (p.inf) {
		r[len - 1] = FLAG_INFINITY;
		return 0;
	}
	element_write(r, &p.x, d);
	fp2_neg(c->t, &neg, &p.y);
	if (fp2_cmp(c->t, &p.y, &neg) > 0)
		r[len - 1] |= FLAG_NEGATIVE;
	return 0;
}

/* A square root in the coordinates' field: Fp for degree 1 (a G1 coordinate has no u part,
 * even where the root in Fp2 would), Fp2 for 2. */
static int coordinate_sqrt(const struct tower *t, int d, fp2 *r, const fp2 *a)
{
	if (d == 2)
		return fp2_sqrt(t, r, a);
	memset(r, 0, sizeof(*r));
	return fp_sqrt(t, &r->c0, &a->c0);
}

static int decompress(const struct curve *c, int d, uint8_t *r, const uint8_t *b)
{
	size_t len = (size_t)d * SOL_BN254_FIELD_BYTES;
	struct point p = { .inf = false };
	unsigned flags;
	fp2 rhs, neg;
	if (all_zero(b, len)) {
		memset(r, 0, 2 * len);
		return 0;
	}
	if (element_read(c->t, &p.x, b, d, &flags))
		return -1;
	p.inf = flags & FLAG_INFINITY;
	if (!p.inf) {
		curve_rhs(c, &rhs, &p.x);
		if (coordinate_sqrt(c->t, d, &p.y, &rhs))
			return -1;
		fp2_neg(c->t, &neg, &p.y);
		/* no flag: the smaller root */
		if ((fp2_cmp(c->t, &p.y, &neg) > 0) != !!(flags & FLAG_NEGATIVE))
			p.y = neg;
	}
	point_write(r, &p, d);
	return 0;
}

int sol_bn254_g1_compress(uint8_t r[SOL_BN254_G1_COMPRESSED_BYTES],
			  const uint8_t p[SOL_BN254_G1_BYTES])
{
	struct group g;
	return compress(bn254_group(&g, 1), 1, r, p);
}

int sol_bn254_g1_decompress(uint8_t r[SOL_BN254_G1_BYTES],
			    const uint8_t b[SOL_BN254_G1_COMPRESSED_BYTES])
{
	struct group g;
	return decompress(bn254_group(&g, 1), 1, r, b);
}

int sol_bn254_g2_compress(uint8_t r[SOL_BN254_G2_COMPRESSED_BYTES],
			  const uint8_t p[SOL_BN254_G2_BYTES])
{
	struct group g;
	return compress(bn254_group(&g, 2), 2, r, p);
}

int sol_bn254_g2_decompress(uint8_t r[SOL_BN254_G2_BYTES],
			    const uint8_t b[SOL_BN254_G2_COMPRESSED_BYTES])
{
	struct group g;
	return decompress(bn254_group(&g, 2), 2, r, b);
}
