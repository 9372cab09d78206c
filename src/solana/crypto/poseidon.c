/*
 * Poseidon (Grassi et al., "Poseidon: A New Hash Function for Zero-Knowledge Proof Systems")
 * on BN254's scalar field, as light-poseidon 0.4's circom instance hashes: the state is a zero
 * domain tag then the inputs, the output is the state's first element. Arithmetic is GMP's.
 *
 * The constants are not a table copied from another project: they are drawn here the way
 * the paper's parameter script (generate_parameters_grain.sage, which light-poseidon and
 * circomlib ran) draws them, from an 80-bit Grain LFSR seeded with the instance (prime
 * field, x^5, n = 254 bits, t, R_F = 8, R_P): (R_F + R_P) * t round constants by rejection
 * sampling below the modulus, then an MDS matrix 1 / (x_i + y_j) from 2t further draws
 * reduced modulo p. That script also runs its security checks (its algorithms 1 to 3) on
 * the matrix and draws again on failure; for every width here the first matrix passes
 * them (the one light-poseidon has; tests/solana/poseidon.test.sh compares every width
 * with LiteSVM), so the checks are not repeated. A width's constants are drawn at its
 * first use (under 1 ms of CPU for t = 2, about 5 ms for t = 13) and kept for the process.
 */
#include <errno.h>
#include <gmp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "solana/crypto/poseidon.h"

enum {
	MIN_WIDTH = 2,
	MAX_WIDTH = SOL_POSEIDON_MAX_INPUTS + 1,
	FIELD_BITS = 254,
	GRAIN_BITS = 80,
	GRAIN_WARMUP = 160, /* outputs the script discards before the first draw */
};

/* BN254's scalar field order r. */
static const char MODULUS_HEX[] =
	"30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001";

/* circomlib's partial rounds for t = 2..13: the paper's round numbers for 128-bit
 * security, rounded up to a multiple of t. */
static const unsigned PARTIAL_ROUNDS[MAX_WIDTH - MIN_WIDTH + 1] = { 56, 57, 56, 60, 60, 63,
								    64, 63, 60, 66, 60, 65 };

struct width_params {
	size_t t, rounds;
	mpz_t *rc;  /* rounds * t, round-major */
	mpz_t *mds; /* t * t, row-major */
};

/* Drawn under the lock, each width on its first use; never freed. */
static pthread_mutex_t widths_lock = PTHREAD_MUTEX_INITIALIZER;
static bool have_modulus;
static mpz_t modulus;
static struct width_params widths[MAX_WIDTH - MIN_WIDTH + 1];

/* The script's LFSR: b[i+80] = b[i+62] ^ b[i+51] ^ b[i+38] ^ b[i+23] ^ b[i+13] ^ b[i], the
 * 80 bits b[i..i+79] kept as b[i+k] = bit k of lo (k < 64), of hi (k >= 64). */
struct grain {
	uint64_t lo, hi;
};

static unsigned grain_step(struct grain *g)
{
	uint64_t lo = g->lo;
	unsigned b = (unsigned)((lo >> 62 ^ lo >> 51 ^ lo >> 38 ^ lo >> 23 ^ lo >> 13 ^ lo) & 1);
	g->lo = lo >> 1 | (g->hi & 1) << 63;
	g->hi = g->hi >> 1 | (uint64_t)b << (GRAIN_BITS - 64 - 1);
	return b;
}

/* Bits filled b[0] first: field (1 = prime), S-box (0 = x^alpha), n, t, R_F, R_P, each
 * most significant bit first, then thirty ones. */
static void grain_seed(struct grain *g, size_t t, unsigned rf, unsigned rp)
{
	const struct {
		unsigned value, width;
	} fields[] = {
		{ 1, 2 }, { 0, 4 }, { FIELD_BITS, 12 }, { (unsigned)t, 12 }, { rf, 10 }, { rp, 10 },
	};
	unsigned k = 0;
	g->lo = g->hi = 0;
	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
		for (unsigned i = fields[f].width; i-- > 0; k++)
			if ((fields[f].value >> i) & 1)
				*(k < 64 ? &g->lo : &g->hi) |= 1ull << (k % 64);
	for (; k < GRAIN_BITS; k++)
		*(k < 64 ? &g->lo : &g->hi) |= 1ull << (k % 64);
	for (int i = 0; i < GRAIN_WARMUP; i++)
		grain_step(g);
}

/* The shrinking output: of each pair of steps, the second when the first is 1. */
static unsigned grain_bit(struct grain *g)
{
	for (;;) {
		unsigned keep = grain_step(g);
		unsigned b = grain_step(g);
		if (keep)
			return b;
	}
}

/* n = 254 output bits, the first the most significant. */
static void grain_draw(struct grain *g, mpz_t x)
{
	uint8_t be[SOL_POSEIDON_BYTES] = { 0 };
	for (unsigned pos = FIELD_BITS; pos-- > 0;)
		be[SOL_POSEIDON_BYTES - 1 - pos / 8] |= (uint8_t)(grain_bit(g) << (pos % 8));
	mpz_import(x, sizeof(be), 1, 1, 1, 0, be);
}

static mpz_t *new_elements(size_t n)
{
	mpz_t *v = malloc(n * sizeof(*v));
	if (!v)
		abort(); /* as GMP does when it runs out */
	for (size_t i = 0; i < n; i++)
		mpz_init(v[i]);
	return v;
}

/* 2t draws, all distinct and with no x_i + y_j = 0, as the script redraws them. */
static void draw_cauchy(struct grain *g, size_t t, mpz_t *xy, mpz_t sum)
{
	for (;;) {
		bool ok = true;
		for (size_t i = 0; i < 2 * t; i++) {
			grain_draw(g, xy[i]);
			mpz_mod(xy[i], xy[i], modulus);
		}
		for (size_t i = 0; ok && i < 2 * t; i++)
			for (size_t j = 0; ok && j < i; j++)
				ok = mpz_cmp(xy[i], xy[j]) != 0;
		for (size_t i = 0; ok && i < t; i++)
			for (size_t j = 0; ok && j < t; j++) {
				mpz_add(sum, xy[i], xy[t + j]);
				ok = mpz_divisible_p(sum, modulus) == 0;
			}
		if (ok)
			return;
	}
}

static void draw_width(struct width_params *w, size_t t, unsigned rp)
{
	struct grain g;
	w->t = t;
	w->rounds = SOL_POSEIDON_FULL_ROUNDS + rp;
	w->rc = new_elements(w->rounds * t);
	w->mds = new_elements(t * t);
	grain_seed(&g, t, SOL_POSEIDON_FULL_ROUNDS, rp);
	for (size_t i = 0; i < w->rounds * t; i++)
		do
			grain_draw(&g, w->rc[i]);
		while (mpz_cmp(w->rc[i], modulus) >= 0);

	mpz_t *xy = new_elements(2 * t), sum;
	mpz_init(sum);
	draw_cauchy(&g, t, xy, sum);
	for (size_t i = 0; i < t; i++)
		for (size_t j = 0; j < t; j++) {
			mpz_add(sum, xy[i], xy[t + j]);
			mpz_invert(w->mds[i * t + j], sum, modulus);
		}
	mpz_clear(sum);
	for (size_t i = 0; i < 2 * t; i++)
		mpz_clear(xy[i]);
	free(xy);
}

static const struct width_params *width_params(size_t t)
{
	if (t < MIN_WIDTH || t > MAX_WIDTH)
		return NULL;
	struct width_params *w = &widths[t - MIN_WIDTH];
	pthread_mutex_lock(&widths_lock);
	if (!have_modulus)
		mpz_init_set_str(modulus, MODULUS_HEX, 16);
	have_modulus = true;
	if (!w->t)
		draw_width(w, t, PARTIAL_ROUNDS[t - MIN_WIDTH]);
	pthread_mutex_unlock(&widths_lock);
	return w;
}

unsigned sol_poseidon_partial_rounds(size_t t)
{
	return t < MIN_WIDTH || t > MAX_WIDTH ? 0 : PARTIAL_ROUNDS[t - MIN_WIDTH];
}

/* The 32 bytes as a field element: -ERANGE unless below the modulus. */
static int get_element(mpz_t x, const uint8_t *bytes, bool little_endian)
{
	mpz_import(x, SOL_POSEIDON_BYTES, little_endian ? -1 : 1, 1, 1, 0, bytes);
	return mpz_cmp(x, modulus) < 0 ? 0 : -ERANGE;
}

static void put_element(uint8_t out[SOL_POSEIDON_BYTES], const mpz_t x, bool little_endian)
{
	uint8_t le[SOL_POSEIDON_BYTES] = { 0 };
	mpz_export(le, NULL, -1, 1, 1, 0, x); /* x < modulus: at most 32 bytes */
	for (size_t i = 0; i < SOL_POSEIDON_BYTES; i++)
		out[i] = little_endian ? le[i] : le[SOL_POSEIDON_BYTES - 1 - i];
}

/* x^5, in x; tmp is scratch */
static void sbox(mpz_t x, mpz_t tmp)
{
	mpz_mul(tmp, x, x);
	mpz_mod(tmp, tmp, modulus);
	mpz_mul(tmp, tmp, tmp);
	mpz_mod(tmp, tmp, modulus);
	mpz_mul(x, x, tmp);
	mpz_mod(x, x, modulus);
}

/* Rounds of add-round-constants, S-boxes (all of them in the R_F / 2 full rounds at each
 * end, the first alone in the partial rounds between), then the MDS matrix. */
static void permute(const struct width_params *w, mpz_t *s, mpz_t *tmp)
{
	size_t t = w->t, half = SOL_POSEIDON_FULL_ROUNDS / 2;
	for (size_t r = 0; r < w->rounds; r++) {
		bool full = r < half || r >= w->rounds - half;
		for (size_t i = 0; i < t; i++) {
			mpz_add(s[i], s[i], w->rc[r * t + i]);
			if (full || i == 0)
				sbox(s[i], tmp[0]);
		}
		for (size_t i = 0; i < t; i++) {
			mpz_set_ui(tmp[i], 0);
			for (size_t j = 0; j < t; j++)
				mpz_addmul(tmp[i], w->mds[i * t + j], s[j]);
		}
		for (size_t i = 0; i < t; i++)
			mpz_mod(s[i], tmp[i], modulus);
	}
}

struct state {
	mpz_t s[MAX_WIDTH], tmp[MAX_WIDTH];
};

static void state_init(struct state *st)
{
	for (size_t i = 0; i < MAX_WIDTH; i++) {
		mpz_init(st->s[i]);
		mpz_init(st->tmp[i]);
	}
}

static void state_clear(struct state *st)
{
	for (size_t i = 0; i < MAX_WIDTH; i++) {
		mpz_clear(st->s[i]);
		mpz_clear(st->tmp[i]);
	}
}

int sol_poseidon_hash(uint8_t out[SOL_POSEIDON_BYTES], const struct sol_poseidon_input *in,
		      size_t n, bool little_endian)
{
	const struct width_params *w = n ? width_params(n + 1) : NULL;
	if (!w)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (in[i].len != SOL_POSEIDON_BYTES)
			return -EINVAL;
	struct state st;
	state_init(&st);
	int rc = 0;
	for (size_t i = 0; !rc && i < n; i++)
		rc = get_element(st.s[i + 1], in[i].bytes, little_endian);
	if (!rc) {
		permute(w, st.s, st.tmp);
		put_element(out, st.s[0], little_endian);
	}
	state_clear(&st);
	return rc;
}

int sol_poseidon_permute(uint8_t *state, size_t t)
{
	const struct width_params *w = width_params(t);
	if (!w)
		return -EINVAL;
	struct state st;
	state_init(&st);
	int rc = 0;
	for (size_t i = 0; !rc && i < t; i++)
		rc = get_element(st.s[i], state + i * SOL_POSEIDON_BYTES, false);
	if (!rc) {
		permute(w, st.s, st.tmp);
		for (size_t i = 0; i < t; i++)
			put_element(state + i * SOL_POSEIDON_BYTES, st.s[i], false);
	}
	state_clear(&st);
	return rc;
}

int sol_poseidon_round_constant(size_t t, size_t i, uint8_t out[SOL_POSEIDON_BYTES])
{
	const struct width_params *w = width_params(t);
	if (!w || i >= w->rounds * t)
		return -EINVAL;
	put_element(out, w->rc[i], false);
	return 0;
}

int sol_poseidon_mds(size_t t, size_t row, size_t col, uint8_t out[SOL_POSEIDON_BYTES])
{
	const struct width_params *w = width_params(t);
	if (!w || row >= t || col >= t)
		return -EINVAL;
	put_element(out, w->mds[row * t + col], false);
	return 0;
}
