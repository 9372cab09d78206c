/*
 * The System program (system_program.h), written from agave's system_processor: the
 * instruction is bincode (a u32 variant, u64s little-endian, a String as a u64 length and
 * UTF-8 bytes, trailing bytes allowed) read within the 1232 bytes limited_deserialize
 * allows; every change to an account goes through the runtime's checks (serialize.h) with
 * the System program as the running program.
 */
#include "solana/system_program.h"

#include <errno.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/err.h"
#include "base/utf8.h"
#include "solana/encoding.h"
#include "solana/syscalls.h"

enum {
	PACKET_DATA_SIZE = 1232, /* limited_deserialize's limit */
	MAX_SEED_LEN = 32,
};

/* SystemError, as the runtime reports it: Custom(N). */
#define ACCOUNT_ALREADY_IN_USE "Custom(0)"
#define RESULT_WITH_NEGATIVE_LAMPORTS "Custom(1)"
#define INVALID_ACCOUNT_DATA_LENGTH "Custom(3)"
#define ADDRESS_WITH_SEED_MISMATCH "Custom(5)"
#define NONCE_BLOCKHASH_NOT_EXPIRED "Custom(7)"
/* PubkeyError, which reaches the runtime as Custom(N) too */
#define PUBKEY_MAX_SEED_LENGTH_EXCEEDED "Custom(0)"
#define PUBKEY_ILLEGAL_OWNER "Custom(2)"

enum variant {
	CREATE_ACCOUNT = 0,
	ASSIGN = 1,
	TRANSFER = 2,
	CREATE_ACCOUNT_WITH_SEED = 3,
	ADVANCE_NONCE_ACCOUNT = 4,
	WITHDRAW_NONCE_ACCOUNT = 5,
	INITIALIZE_NONCE_ACCOUNT = 6,
	AUTHORIZE_NONCE_ACCOUNT = 7,
	UPGRADE_NONCE_ACCOUNT = 12,
	ALLOCATE = 8,
	ALLOCATE_WITH_SEED = 9,
	ASSIGN_WITH_SEED = 10,
	TRANSFER_WITH_SEED = 11,
};

static const uint8_t SYSTEM_ID[32];

bool sol_is_system_program(const uint8_t id[32])
{
	return !memcmp(id, SYSTEM_ID, 32);
}

/* The instruction's fields, those its variant has. */
struct system_ix {
	uint32_t variant;
	uint64_t lamports, space;
	uint8_t base[32], owner[32], authority[32];
	const uint8_t *seed;
	uint64_t seed_len;
};

static void take_key(struct cur *c, uint8_t out[32])
{
	const uint8_t *p = cur_bytes(c, 32);
	if (p)
		memcpy(out, p, 32);
}

static void take_string(struct cur *c, const uint8_t **s, uint64_t *len)
{
	*len = cur_u64(c);
	*s = cur_bytes(c, *len); /* NULL once c is bad */
	if (*s && !utf8_valid(*s, *len))
		c->bad = true;
}

/* false: not a SystemInstruction (InvalidInstructionData). */
static bool decode(const uint8_t *data, size_t len, struct system_ix *ix)
{
	struct cur r = cur_make(data, len < PACKET_DATA_SIZE ? len : PACKET_DATA_SIZE, false);
	memset(ix, 0, sizeof(*ix));
	ix->variant = cur_u32(&r);
	switch (ix->variant) {
	case CREATE_ACCOUNT:
		ix->lamports = cur_u64(&r);
		ix->space = cur_u64(&r);
		take_key(&r, ix->owner);
		break;
	case ASSIGN:
		take_key(&r, ix->owner);
		break;
	case TRANSFER:
		ix->lamports = cur_u64(&r);
		break;
	case CREATE_ACCOUNT_WITH_SEED:
		take_key(&r, ix->base);
		take_string(&r, &ix->seed, &ix->seed_len);
		ix->lamports = cur_u64(&r);
		ix->space = cur_u64(&r);
		take_key(&r, ix->owner);
		break;
	case ALLOCATE:
		ix->space = cur_u64(&r);
		break;
	case ALLOCATE_WITH_SEED:
		take_key(&r, ix->base);
		take_string(&r, &ix->seed, &ix->seed_len);
		ix->space = cur_u64(&r);
		take_key(&r, ix->owner);
		break;
	case ASSIGN_WITH_SEED:
		take_key(&r, ix->base);
		take_string(&r, &ix->seed, &ix->seed_len);
		take_key(&r, ix->owner);
		break;
	case TRANSFER_WITH_SEED:
		ix->lamports = cur_u64(&r);
		take_string(&r, &ix->seed, &ix->seed_len);
		take_key(&r, ix->owner);
		break;
	case WITHDRAW_NONCE_ACCOUNT:
		ix->lamports = cur_u64(&r);
		break;
	case INITIALIZE_NONCE_ACCOUNT:
	case AUTHORIZE_NONCE_ACCOUNT:
		take_key(&r, ix->authority);
		break;
	case ADVANCE_NONCE_ACCOUNT:
	case UPGRADE_NONCE_ACCOUNT:
		break;
	default:
		return false;
	}
	return cur_ok(&r);
}

/* One running System instruction. */
struct run {
	struct sol_account *accounts;
	const struct sol_ix_account *ix;
	size_t n;
	const struct sol_system_env *env;
	const struct sol_system_log *log;
	int rc; /* tally's failure: a log line that did not fit in memory */
};

static void msg(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void msg(struct run *r, const char *fmt, ...)
{
	char line[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!r->rc)
		r->rc = r->log->line(r->log->ctx, line);
}

static struct sol_account *account(const struct run *r, size_t i)
{
	return &r->accounts[r->ix[i].index];
}

static struct sol_borrow borrow(const struct run *r, size_t i)
{
	return (struct sol_borrow){ account(r, i), r->ix[i].is_writable, SYSTEM_ID };
}

static bool signer(const struct run *r, const uint8_t key[32])
{
	for (size_t i = 0; i < r->n; i++)
		if (r->ix[i].is_signer && !memcmp(account(r, i)->key, key, 32))
			return true;
	return false;
}

/* system_processor's Address: the account's key, and the base it was derived from. */
struct address {
	uint8_t key[32], base[32];
	bool seeded;
	char debug[200]; /* as Rust's {:?} prints it */
};

static bool address_signed(const struct run *r, const struct address *a)
{
	return signer(r, a->seeded ? a->base : a->key);
}

/* Pubkey::create_with_seed: sha256(base || seed || owner), refused for seeds over 32
 * bytes and for owners that end like a PDA's marker. */
static const char *create_with_seed(const uint8_t base[32], const uint8_t *seed, size_t len,
				    const uint8_t owner[32], uint8_t out[32])
{
	static const char marker[] = "ProgramDerivedAddress";
	if (len > MAX_SEED_LEN)
		return PUBKEY_MAX_SEED_LENGTH_EXCEEDED;
	if (!memcmp(owner + 32 - (sizeof(marker) - 1), marker, sizeof(marker) - 1))
		return PUBKEY_ILLEGAL_OWNER;
	crypto_hash_sha256_state st;
	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, base, 32);
	crypto_hash_sha256_update(&st, seed, len);
	crypto_hash_sha256_update(&st, owner, 32);
	crypto_hash_sha256_final(&st, out);
	return NULL;
}

/* Address::create: with a seed, the account's key must be the one derived from it. */
static const char *address_of(struct run *r, size_t i, const struct system_ix *ix, bool seeded,
			      struct address *out)
{
	char k58[48], b58[48];
	memcpy(out->key, account(r, i)->key, 32);
	out->seeded = seeded;
	sol_base58_encode(out->key, 32, k58, sizeof(k58));
	if (!seeded) {
		snprintf(out->debug, sizeof(out->debug), "Address { address: %s, base: None }", k58);
		return NULL;
	}
	uint8_t derived[32];
	const char *e = create_with_seed(ix->base, ix->seed, ix->seed_len, ix->owner, derived);
	if (e)
		return e;
	if (memcmp(derived, out->key, 32)) {
		char d58[64];
		sol_base58_encode(derived, 32, d58, sizeof(d58));
		msg(r, "Create: address %s does not match derived address %s", k58, d58);
		return ADDRESS_WITH_SEED_MISMATCH;
	}
	memcpy(out->base, ix->base, 32);
	sol_base58_encode(out->base, 32, b58, sizeof(b58));
	snprintf(out->debug, sizeof(out->debug), "Address { address: %s, base: Some(%s) }", k58,
		 b58);
	return NULL;
}

/* BorrowedAccount::set_data_length on an account the System program owns (allocate checked
 * that): only can_data_be_changed's checks are left, made even when the length stays. */
static const char *set_data_length(struct sol_borrow *b, uint64_t space, bool *oom)
{
	*oom = false;
	if (b->a->executable)
		return "ExecutableDataModified";
	if (!b->writable)
		return "ReadonlyDataModified";
	if (space == b->a->len)
		return NULL;
	uint8_t *p = realloc(b->a->data, space ? space : 1);
	if (!p) {
		*oom = true;
		return NULL;
	}
	memset(p, 0, space);
	b->a->data = p;
	b->a->len = space;
	return NULL;
}

static const char *allocate(struct run *r, size_t i, const struct address *a, uint64_t space)
{
	struct sol_borrow b = borrow(r, i);
	if (!address_signed(r, a)) {
		msg(r, "Allocate: 'to' account %s must sign", a->debug);
		return "MissingRequiredSignature";
	}
	if (b.a->len || !sol_is_system_program(b.a->owner)) {
		msg(r, "Allocate: account %s already in use", a->debug);
		return ACCOUNT_ALREADY_IN_USE;
	}
	if (space > SOL_MAX_PERMITTED_DATA_LENGTH) {
		msg(r, "Allocate: requested %" PRIu64 ", max allowed %d", space,
		    SOL_MAX_PERMITTED_DATA_LENGTH);
		return INVALID_ACCOUNT_DATA_LENGTH;
	}
	bool oom;
	const char *e = set_data_length(&b, space, &oom);
	if (oom && !r->rc)
		r->rc = -ENOMEM;
	return e;
}

static const char *assign(struct run *r, size_t i, const struct address *a,
			  const uint8_t owner[32])
{
	struct sol_borrow b = borrow(r, i);
	if (!memcmp(b.a->owner, owner, 32))
		return NULL;
	if (!address_signed(r, a)) {
		msg(r, "Assign: account %s must sign", a->debug);
		return "MissingRequiredSignature";
	}
	return sol_account_set_owner(&b, owner);
}

static const char *allocate_and_assign(struct run *r, size_t i, const struct address *a,
				       const struct system_ix *ix)
{
	const char *e = allocate(r, i, a, ix->space);
	return e ? e : assign(r, i, a, ix->owner);
}

/* checked_sub_lamports on from (which has them), then checked_add_lamports on to. */
static const char *shift_lamports(struct run *r, size_t from, size_t to, uint64_t lamports)
{
	struct sol_borrow f = borrow(r, from), t = borrow(r, to);
	const char *e = sol_account_set_lamports(&f, f.a->lamports - lamports);
	if (e)
		return e;
	if (t.a->lamports > UINT64_MAX - lamports)
		return "ArithmeticOverflow";
	return sol_account_set_lamports(&t, t.a->lamports + lamports);
}

/* transfer_verified: from may hold no data and must have the lamports. */
static const char *move_lamports(struct run *r, size_t from, size_t to, uint64_t lamports)
{
	const struct sol_account *f = account(r, from);
	if (f->len) {
		msg(r, "Transfer: `from` must not carry data");
		return "InvalidArgument";
	}
	if (lamports > f->lamports) {
		msg(r, "Transfer: insufficient lamports %" PRIu64 ", need %" PRIu64, f->lamports,
		    lamports);
		return RESULT_WITH_NEGATIVE_LAMPORTS;
	}
	return shift_lamports(r, from, to, lamports);
}

static const char *transfer(struct run *r, size_t from, size_t to, uint64_t lamports)
{
	if (!r->ix[from].is_signer) {
		char k58[64];
		sol_base58_encode(account(r, from)->key, 32, k58, sizeof(k58));
		msg(r, "Transfer: `from` account %s must sign", k58);
		return "MissingRequiredSignature";
	}
	return move_lamports(r, from, to, lamports);
}

static const char *transfer_with_seed(struct run *r, const struct system_ix *ix)
{
	char k58[64], d58[64];
	if (!r->ix[1].is_signer) {
		sol_base58_encode(account(r, 1)->key, 32, k58, sizeof(k58));
		msg(r, "Transfer: 'from' account %s must sign", k58);
		return "MissingRequiredSignature";
	}
	uint8_t derived[32];
	const char *e = create_with_seed(account(r, 1)->key, ix->seed, ix->seed_len, ix->owner,
					 derived);
	if (e)
		return e;
	if (memcmp(derived, account(r, 0)->key, 32)) {
		sol_base58_encode(account(r, 0)->key, 32, k58, sizeof(k58));
		sol_base58_encode(derived, 32, d58, sizeof(d58));
		msg(r, "Transfer: 'from' address %s does not match derived address %s", k58, d58);
		return ADDRESS_WITH_SEED_MISMATCH;
	}
	return move_lamports(r, 0, 2, ix->lamports);
}

static const char *create_account(struct run *r, const struct system_ix *ix, bool seeded)
{
	struct address to;
	const char *e = address_of(r, 1, ix, seeded, &to);
	if (e)
		return e;
	if (account(r, 1)->lamports) {
		msg(r, "Create Account: account %s already in use", to.debug);
		return ACCOUNT_ALREADY_IN_USE;
	}
	e = allocate_and_assign(r, 1, &to, ix);
	return e ? e : transfer(r, 0, 1, ix->lamports);
}

/*
 * Durable nonces (agave's system_instruction.rs). A nonce account's data starts with
 * solana_nonce's Versions in bincode: a u32 version (0 Legacy, 1 Current), a u32 state
 * (0 Uninitialized, 1 Initialized), then when initialized the authority, the durable nonce
 * (sha256 of "DURABLE_NONCE" and a blockhash) and the fee per signature: 80 bytes. The
 * runtime reads the prefix and writes it back, leaving the rest of the data as it was.
 */
struct nonce_state {
	uint32_t version;
	bool initialized;
	uint8_t authority[32], durable_nonce[32];
	uint64_t lamports_per_signature;
};

enum { NONCE_INITIALIZED_SIZE = 80, NONCE_UNINITIALIZED_SIZE = 8 };

/* get_state: false when the data does not start with a state (InvalidAccountData). */
static bool nonce_read(const struct sol_account *a, struct nonce_state *s)
{
	struct cur r = cur_make(a->data, a->len, false);
	memset(s, 0, sizeof(*s));
	s->version = cur_u32(&r);
	uint32_t state = cur_u32(&r);
	s->initialized = state == 1;
	if (s->initialized) {
		take_key(&r, s->authority);
		take_key(&r, s->durable_nonce);
		s->lamports_per_signature = cur_u64(&r);
	}
	return cur_ok(&r) && s->version <= 1 && state <= 1;
}

/* set_state: the data may be changed by the System program and has room for the state. */
static const char *nonce_write(struct run *r, size_t i, const struct nonce_state *s)
{
	struct sol_borrow b = borrow(r, i);
	struct sol_account *a = b.a;
	const char *e = sol_account_data_error(&b, a->len);
	if (e)
		return e;
	if (a->len < (s->initialized ? NONCE_INITIALIZED_SIZE : NONCE_UNINITIALIZED_SIZE))
		return "AccountDataTooSmall";
	store_u32(a->data, s->version, false);
	store_u32(a->data + 4, s->initialized, false);
	if (s->initialized) {
		memcpy(a->data + 8, s->authority, 32);
		memcpy(a->data + 40, s->durable_nonce, 32);
		store_u64(a->data + 72, s->lamports_per_signature, false);
	}
	return NULL;
}

/* DurableNonce::from_blockhash */
static void durable_nonce(const uint8_t blockhash[32], uint8_t out[32])
{
	crypto_hash_sha256_state st;
	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, (const uint8_t *)"DURABLE_NONCE", 13);
	crypto_hash_sha256_update(&st, blockhash, 32);
	crypto_hash_sha256_final(&st, out);
}

/* The state Versions::new makes: Current, with the transaction's blockhash and fee. */
static void nonce_current(const struct run *r, const uint8_t authority[32],
			  struct nonce_state *s)
{
	s->version = 1;
	s->initialized = true;
	memcpy(s->authority, authority, 32);
	durable_nonce(r->env->blockhash, s->durable_nonce);
	s->lamports_per_signature = r->env->lamports_per_signature;
}

/* get_sysvar_with_account_check: instruction account i must be the sysvar. The runtime's
 * RecentBlockhashes (LiteSVM's) always holds a blockhash, so "recent blockhash list is
 * empty" cannot happen here. */
static const char *sysvar_at(const struct run *r, size_t i, const char *id58)
{
	uint8_t id[32];
	if (i >= r->n)
		return "MissingAccount";
	sol_base58_decode(id58, id, 32);
	return memcmp(account(r, i)->key, id, 32) ? "InvalidArgument" : NULL;
}

/* The checks every nonce instruction but Upgrade starts with, worded with its name. */
static const char *nonce_open(struct run *r, const char *what, struct nonce_state *s)
{
	char k58[64];
	sol_base58_encode(account(r, 0)->key, 32, k58, sizeof(k58));
	if (!r->ix[0].is_writable) {
		msg(r, "%s nonce account: Account %s must be writeable", what, k58);
		return "InvalidArgument";
	}
	return nonce_read(account(r, 0), s) ? NULL : "InvalidAccountData";
}

static const char *nonce_invalid(struct run *r, const char *what)
{
	char k58[64];
	sol_base58_encode(account(r, 0)->key, 32, k58, sizeof(k58));
	msg(r, "%s nonce account: Account %s state is invalid", what, k58);
	return "InvalidAccountData";
}

static const char *nonce_unsigned(struct run *r, const char *what, const char *verb,
				  const uint8_t key[32])
{
	char k58[64];
	sol_base58_encode(key, 32, k58, sizeof(k58));
	msg(r, "%s nonce account: Account %s must %s", what, k58, verb);
	return "MissingRequiredSignature";
}

static const char *advance_nonce(struct run *r)
{
	struct nonce_state s;
	const char *e = sysvar_at(r, 1, SOL_SYSVAR_RECENT_BLOCKHASHES_ID);
	if (e || (e = nonce_open(r, "Advance", &s)))
		return e;
	if (!s.initialized)
		return nonce_invalid(r, "Advance");
	if (!signer(r, s.authority))
		return nonce_unsigned(r, "Advance", "be a signer", s.authority);
	struct nonce_state next;
	nonce_current(r, s.authority, &next);
	if (!memcmp(next.durable_nonce, s.durable_nonce, 32)) {
		msg(r, "Advance nonce account: nonce can only advance once per slot");
		return NONCE_BLOCKHASH_NOT_EXPIRED;
	}
	return nonce_write(r, 0, &next);
}

static const char *withdraw_insufficient(struct run *r, uint64_t need)
{
	msg(r, "Withdraw nonce account: insufficient lamports %" PRIu64 ", need %" PRIu64,
	    account(r, 0)->lamports, need);
	return "InsufficientFunds";
}

/* Who must sign a withdrawal of lamports: the account itself while it is uninitialized,
 * else its authority; a withdrawal of everything uninitializes it, one of part must leave
 * it rent-exempt. NULL when it cannot be made (*e says why). */
static const uint8_t *withdraw_signer(struct run *r, uint64_t lamports, struct nonce_state *s,
				      const char **e)
{
	const struct sol_account *from = account(r, 0);
	if (!s->initialized) {
		*e = lamports > from->lamports ? withdraw_insufficient(r, lamports) : NULL;
		return from->key;
	}
	if (lamports == from->lamports) {
		uint8_t now[32];
		durable_nonce(r->env->blockhash, now);
		if (!memcmp(now, s->durable_nonce, 32)) {
			msg(r, "Withdraw nonce account: nonce can only advance once per slot");
			*e = NONCE_BLOCKHASH_NOT_EXPIRED;
			return NULL;
		}
		const struct nonce_state none = { .version = 1 };
		*e = nonce_write(r, 0, &none);
		return s->authority;
	}
	uint64_t min = sol_rent_minimum(r->env->rent, from->len);
	if (lamports > UINT64_MAX - min)
		*e = "InsufficientFunds";
	else if (lamports + min > from->lamports)
		*e = withdraw_insufficient(r, lamports + min);
	return s->authority;
}

static const char *withdraw_nonce(struct run *r, uint64_t lamports)
{
	struct nonce_state s;
	const char *e = sysvar_at(r, 2, SOL_SYSVAR_RECENT_BLOCKHASHES_ID);
	if (e || (e = sysvar_at(r, 3, SOL_SYSVAR_RENT_ID)) || (e = nonce_open(r, "Withdraw", &s)))
		return e;
	const uint8_t *who = withdraw_signer(r, lamports, &s, &e);
	if (e)
		return e;
	if (!signer(r, who))
		return nonce_unsigned(r, "Withdraw", "sign", who);
	return shift_lamports(r, 0, 1, lamports);
}

static const char *initialize_nonce(struct run *r, const uint8_t authority[32])
{
	struct nonce_state s;
	const char *e = sysvar_at(r, 1, SOL_SYSVAR_RECENT_BLOCKHASHES_ID);
	if (e || (e = sysvar_at(r, 2, SOL_SYSVAR_RENT_ID)) || (e = nonce_open(r, "Initialize", &s)))
		return e;
	if (s.initialized)
		return nonce_invalid(r, "Initialize");
	const struct sol_account *a = account(r, 0);
	uint64_t min = sol_rent_minimum(r->env->rent, a->len);
	if (a->lamports < min) {
		msg(r, "Initialize nonce account: insufficient lamports %" PRIu64 ", need %" PRIu64,
		    a->lamports, min);
		return "InsufficientFunds";
	}
	nonce_current(r, authority, &s);
	return nonce_write(r, 0, &s);
}

/* The version stays: the durable nonce of a Legacy state is not one Current would have. */
static const char *authorize_nonce(struct run *r, const uint8_t authority[32])
{
	struct nonce_state s;
	const char *e = nonce_open(r, "Authorize", &s);
	if (e)
		return e;
	if (!s.initialized)
		return nonce_invalid(r, "Authorize");
	if (!signer(r, s.authority))
		return nonce_unsigned(r, "Authorize", "sign", s.authority);
	memcpy(s.authority, authority, 32);
	return nonce_write(r, 0, &s);
}

/* A Legacy state, whose durable nonce was the blockhash itself, becomes Current. */
static const char *upgrade_nonce(struct run *r)
{
	struct nonce_state s;
	if (!sol_is_system_program(account(r, 0)->owner))
		return "InvalidAccountOwner";
	if (!r->ix[0].is_writable)
		return "InvalidArgument";
	if (!nonce_read(account(r, 0), &s))
		return "InvalidAccountData";
	if (s.version != 0 || !s.initialized)
		return "InvalidArgument";
	uint8_t blockhash[32];
	memcpy(blockhash, s.durable_nonce, 32);
	durable_nonce(blockhash, s.durable_nonce);
	s.version = 1;
	return nonce_write(r, 0, &s);
}

/* The instruction's own work, once it is decoded and has its accounts. */
static const char *execute(struct run *r, const struct system_ix *ix)
{
	struct address a;
	const char *e;
	switch (ix->variant) {
	case CREATE_ACCOUNT:
		return create_account(r, ix, false);
	case CREATE_ACCOUNT_WITH_SEED:
		return create_account(r, ix, true);
	case TRANSFER:
		return transfer(r, 0, 1, ix->lamports);
	case TRANSFER_WITH_SEED:
		return transfer_with_seed(r, ix);
	case ASSIGN:
	case ASSIGN_WITH_SEED:
		e = address_of(r, 0, ix, ix->variant == ASSIGN_WITH_SEED, &a);
		return e ? e : assign(r, 0, &a, ix->owner);
	case ALLOCATE:
		e = address_of(r, 0, ix, false, &a);
		return e ? e : allocate(r, 0, &a, ix->space);
	case ALLOCATE_WITH_SEED:
		e = address_of(r, 0, ix, true, &a);
		return e ? e : allocate_and_assign(r, 0, &a, ix);
	case ADVANCE_NONCE_ACCOUNT:
		return advance_nonce(r);
	case WITHDRAW_NONCE_ACCOUNT:
		return withdraw_nonce(r, ix->lamports);
	case INITIALIZE_NONCE_ACCOUNT:
		return initialize_nonce(r, ix->authority);
	case AUTHORIZE_NONCE_ACCOUNT:
		return authorize_nonce(r, ix->authority);
	default: /* UPGRADE_NONCE_ACCOUNT */
		return upgrade_nonce(r);
	}
}

static size_t accounts_needed(uint32_t variant)
{
	switch (variant) {
	case CREATE_ACCOUNT:
	case CREATE_ACCOUNT_WITH_SEED:
	case TRANSFER:
	case WITHDRAW_NONCE_ACCOUNT:
		return 2;
	case TRANSFER_WITH_SEED:
		return 3;
	default:
		return 1;
	}
}

int sol_system_program_run(struct sol_account *accounts, const struct sol_ix_account *ix,
			   size_t n, const uint8_t *data, size_t data_len,
			   const struct sol_system_env *env, const struct sol_system_log *log,
			   const char **error)
{
	struct system_ix sx;
	struct run r = { accounts, ix, n, env, log, 0 };
	*error = NULL;
	if (!decode(data, data_len, &sx)) {
		*error = "InvalidInstructionData";
		return 0;
	}
	/* check_number_of_instruction_accounts: MissingAccount in today's runtime */
	if (n < accounts_needed(sx.variant)) {
		*error = "MissingAccount";
		return 0;
	}
	*error = execute(&r, &sx);
	return r.rc == -ENOMEM ? err_set(r.rc, "out of memory") : r.rc;
}
