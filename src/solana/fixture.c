/*
 * Reading fixtures (fixture.h) with jansson. Every value is checked; errors read
 * "FILE: instruction.accounts[2].pubkey: ..." so a fixture author finds the field at once.
 * Byte strings are hex, or base64 after a "base64:" prefix; keys are base58.
 *
 * Programs named in "programs", the System program and the rent and clock sysvars exist in
 * every bank, so an instruction may name them without listing them in "accounts": they are
 * added as the runtime holds them (programs executable and owned by the upgradeable BPF
 * loader; the System program as a builtin of the native loader; sysvars owned by the
 * sysvar program, with the fixture's values).
 */
#include "solana/fixture.h"

#include <errno.h>
#include <jansson.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "sbpf/vm.h"
#include "solana/encoding.h"
#include "solana/syscalls.h"
#include "solana/system_program.h"

#define LOADER_ID "BPFLoaderUpgradeab1e11111111111111111111111"
#define SYSVAR_OWNER "Sysvar1111111111111111111111111111111111111"
#define CLOCK_ID "SysvarC1ock11111111111111111111111111111111"

struct ctx {
	const char *path;
	char field[128];
};

static int bad(const struct ctx *c, const char *what)
{
	return err_set(-EINVAL, "%s: %s: %s", c->path, c->field, what);
}

static json_t *member(struct ctx *c, json_t *obj, const char *key, const char *parent)
{
	snprintf(c->field, sizeof(c->field), "%s%s%s", parent, *parent ? "." : "", key);
	return json_object_get(obj, key);
}

static int get_key(struct ctx *c, json_t *v, uint8_t out[32])
{
	if (!json_is_string(v))
		return bad(c, "expected a base58 public key");
	if (sol_base58_decode(json_string_value(v), out, 32))
		return bad(c, "not a base58 public key of 32 bytes");
	return 0;
}

/* A JSON integer, or a string of decimal digits for the u64s JSON readers cannot hold
 * (a rent epoch of u64::MAX). */
static int get_u64(struct ctx *c, json_t *v, uint64_t *out)
{
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		char *end;
		errno = 0;
		unsigned long long x = strtoull(s, &end, 10);
		if (*s < '0' || *s > '9' || *end || errno)
			return bad(c, "expected a u64 in decimal digits");
		*out = x;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return bad(c, "expected a non-negative integer");
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_bool(struct ctx *c, json_t *v, bool *out)
{
	if (!v) {
		*out = false;
		return 0;
	}
	if (!json_is_boolean(v))
		return bad(c, "expected true or false");
	*out = json_is_true(v);
	return 0;
}

/* Hex, or base64 after "base64:". */
static int get_bytes(struct ctx *c, json_t *v, uint8_t **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	if (!v)
		return 0;
	if (!json_is_string(v))
		return bad(c, "expected a hex or \"base64:...\" string");
	const char *s = json_string_value(v);
	size_t slen = json_string_length(v);
	uint8_t *buf = malloc(slen / 2 + 1);
	if (!buf)
		return -ENOMEM;
	const char *end;
	int rc;
	if (!strncmp(s, "base64:", 7))
		rc = sodium_base642bin(buf, slen / 2 + 1, s + 7, slen - 7, " \n", len, &end,
				       sodium_base64_VARIANT_ORIGINAL);
	else
		rc = sodium_hex2bin(buf, slen / 2 + 1, s, slen, NULL, len, &end);
	if (rc || *end) {
		free(buf);
		return bad(c, strncmp(s, "base64:", 7) ? "not hex" : "not base64");
	}
	*out = buf;
	return 0;
}

static int array_of(struct ctx *c, json_t *v, bool required, size_t *n)
{
	*n = 0;
	if (!v)
		return required ? bad(c, "missing") : 0;
	if (!json_is_array(v))
		return bad(c, "expected an array");
	*n = json_array_size(v);
	return 0;
}

static int load_programs(struct ctx *c, json_t *root, struct sol_fixture *f)
{
	json_t *arr = member(c, root, "programs", "");
	int rc = array_of(c, arr, true, &f->nprograms);
	if (rc)
		return rc;
	f->programs = calloc(f->nprograms + 1, sizeof(*f->programs));
	if (!f->programs)
		return -ENOMEM;
	const char *slash = strrchr(f->path, '/');
	int dirlen = slash ? (int)(slash - f->path + 1) : 0;
	for (size_t i = 0; i < f->nprograms; i++) {
		char parent[48];
		snprintf(parent, sizeof(parent), "programs[%zu]", i);
		struct sol_fixture_program *p = &f->programs[i];
		json_t *o = json_array_get(arr, i);
		json_t *elf = member(c, o, "elf", parent);
		if (!json_is_string(elf))
			return bad(c, "expected the program's path");
		const char *e = json_string_value(elf);
		if (asprintf(&p->elf, "%.*s%s", e[0] == '/' ? 0 : dirlen, f->path, e) < 0)
			return -ENOMEM;
		if ((rc = get_key(c, member(c, o, "id", parent), p->id)))
			return rc;
		json_t *name = member(c, o, "name", parent);
		if (name && !json_is_string(name))
			return bad(c, "expected a string");
		p->name = strdup(name ? json_string_value(name)
				      : json_string_value(json_object_get(o, "id")));
		if (!p->name)
			return -ENOMEM;
	}
	return 0;
}

static int load_account(struct ctx *c, json_t *o, const char *parent, struct sol_account *a)
{
	int rc = get_key(c, member(c, o, "pubkey", parent), a->key);
	if (!rc)
		rc = get_key(c, member(c, o, "owner", parent), a->owner);
	if (!rc)
		rc = get_u64(c, member(c, o, "lamports", parent), &a->lamports);
	if (!rc)
		rc = get_bytes(c, member(c, o, "data", parent), &a->data, &a->len);
	if (!rc)
		rc = get_bool(c, member(c, o, "executable", parent), &a->executable);
	json_t *re = member(c, o, "rent_epoch", parent);
	if (!rc && re)
		rc = get_u64(c, re, &a->rent_epoch);
	return rc;
}

static long find_account(const struct sol_fixture *f, const uint8_t key[32])
{
	for (size_t i = 0; i < f->naccounts; i++)
		if (!memcmp(f->accounts[i].key, key, 32))
			return (long)i;
	return -1;
}

static int add_account(struct sol_fixture *f, const uint8_t key[32], const char *owner58,
		       const uint8_t *data, size_t len, bool executable)
{
	struct sol_account *v = realloc(f->accounts, (f->naccounts + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	f->accounts = v;
	struct sol_account *a = &v[f->naccounts];
	memset(a, 0, sizeof(*a));
	memcpy(a->key, key, 32);
	sol_base58_decode(owner58, a->owner, 32);
	a->lamports = 1;
	a->executable = executable;
	a->data = malloc(len ? len : 1);
	if (!a->data)
		return -ENOMEM;
	if (len)
		memcpy(a->data, data, len);
	a->len = len;
	f->naccounts++;
	return 0;
}

static int load_accounts(struct ctx *c, json_t *root, struct sol_fixture *f)
{
	json_t *arr = member(c, root, "accounts", "");
	size_t n;
	int rc = array_of(c, arr, false, &n);
	if (rc)
		return rc;
	f->accounts = calloc(n + 1, sizeof(*f->accounts));
	if (!f->accounts)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char parent[48];
		snprintf(parent, sizeof(parent), "accounts[%zu]", i);
		f->naccounts = i + 1;
		if ((rc = load_account(c, json_array_get(arr, i), parent, &f->accounts[i])))
			return rc;
		if (find_account(f, f->accounts[i].key) != (long)i) {
			snprintf(c->field, sizeof(c->field), "%s.pubkey", parent);
			return bad(c, "listed twice");
		}
	}
	f->nlisted = n;
	for (size_t i = 0; i < f->nprograms; i++)
		if (find_account(f, f->programs[i].id) < 0 &&
		    (rc = add_account(f, f->programs[i].id, LOADER_ID, NULL, 0, true)))
			return rc;
	return 0;
}

/* Clock (slot, epoch_start_timestamp, epoch, leader_schedule_epoch, unix_timestamp) and
 * Rent (lamports_per_byte_year, exemption_threshold, burn_percent): a field the fixture
 * leaves out keeps the runtime's default (syscalls.h). */
static int load_sysvars(struct ctx *c, json_t *root, struct sol_fixture *f)
{
	static const char *const clock_fields[] = { "slot", "epoch_start_timestamp", "epoch",
						    "leader_schedule_epoch", "unix_timestamp" };
	sol_default_clock(f->clock);
	sol_default_rent(f->rent);
	json_t *sv = member(c, root, "sysvars", "");
	json_t *clock = sv ? member(c, sv, "clock", "sysvars") : NULL;
	json_t *rent = sv ? member(c, sv, "rent", "sysvars") : NULL;
	int rc = 0;
	for (size_t i = 0; clock && !rc && i < 5; i++) {
		json_t *x = member(c, clock, clock_fields[i], "sysvars.clock");
		uint64_t v = x && json_is_integer(x) ? (uint64_t)json_integer_value(x) : 0;
		if (x && !json_is_integer(x))
			rc = bad(c, "expected an integer");
		else if (x)
			memcpy(f->clock + 8 * i, &v, 8);
	}
	json_t *x;
	uint64_t v;
	if (!rc && rent && (x = member(c, rent, "lamports_per_byte_year", "sysvars.rent")) &&
	    !(rc = get_u64(c, x, &v)))
		memcpy(f->rent, &v, 8);
	if (!rc && rent && (x = member(c, rent, "exemption_threshold", "sysvars.rent"))) {
		if (!json_is_number(x))
			return bad(c, "expected a number");
		double threshold = json_number_value(x);
		memcpy(f->rent + 8, &threshold, 8);
	}
	if (!rc && rent && (x = member(c, rent, "burn_percent", "sysvars.rent")) &&
	    !(rc = get_u64(c, x, &v))) {
		if (v > 100)
			return bad(c, "at most 100");
		f->rent[16] = (uint8_t)v;
	}
	return rc;
}

/* An instruction account absent from "accounts": a sysvar, or the fixture's mistake. */
static int implicit_account(struct ctx *c, struct sol_fixture *f, const uint8_t key[32])
{
	uint8_t rent_id[32], clock_id[32], recent_id[32], recent[SOL_RECENT_BLOCKHASHES_SIZE];
	sol_base58_decode(SOL_SYSVAR_RENT_ID, rent_id, 32);
	sol_base58_decode(CLOCK_ID, clock_id, 32);
	sol_base58_decode(SOL_SYSVAR_RECENT_BLOCKHASHES_ID, recent_id, 32);
	if (!memcmp(key, rent_id, 32))
		return add_account(f, key, SYSVAR_OWNER, f->rent, 17, false);
	if (!memcmp(key, clock_id, 32))
		return add_account(f, key, SYSVAR_OWNER, f->clock, 40, false);
	if (!memcmp(key, recent_id, 32)) {
		sol_default_recent_blockhashes(recent);
		return add_account(f, key, SYSVAR_OWNER, recent, sizeof(recent), false);
	}
	if (sol_is_system_program(key))
		return add_account(f, key, SOL_NATIVE_LOADER_ID,
				   (const uint8_t *)SOL_SYSTEM_PROGRAM_ACCOUNT_DATA,
				   strlen(SOL_SYSTEM_PROGRAM_ACCOUNT_DATA), true);
	char k58[64];
	sol_base58_encode(key, 32, k58, sizeof(k58));
	return err_set(-EINVAL, "%s: %s: account %s is not in \"accounts\"", c->path, c->field,
		       k58);
}

/* agave's reserved account keys (builtin programs, loaders, sysvars): a message cannot
 * write-lock them, so a writable flag on one is dropped (SanitizedMessage::is_writable). */
static const char *const reserved_keys[] = {
	"11111111111111111111111111111111",
	"AddressLookupTab1e1111111111111111111111111",
	"BPFLoader1111111111111111111111111111111111",
	"BPFLoader2111111111111111111111111111111111",
	"BPFLoaderUpgradeab1e11111111111111111111111",
	"ComputeBudget111111111111111111111111111111",
	"Config1111111111111111111111111111111111111",
	"Ed25519SigVerify111111111111111111111111111",
	"Feature111111111111111111111111111111111111",
	"LoaderV411111111111111111111111111111111111",
	"KeccakSecp256k11111111111111111111111111111",
	"Secp256r1SigVerify1111111111111111111111111",
	"Stake11111111111111111111111111111111111111",
	"StakeConfig11111111111111111111111111111111",
	"Vote111111111111111111111111111111111111111",
	"ZkE1Gama1Proof11111111111111111111111111111",
	"ZkTokenProof1111111111111111111111111111111",
	"NativeLoader1111111111111111111111111111111",
	"SysvarC1ock11111111111111111111111111111111",
	"SysvarEpochRewards1111111111111111111111111",
	"SysvarEpochSchedu1e111111111111111111111111",
	"SysvarFees111111111111111111111111111111111",
	"Sysvar1nstructions1111111111111111111111111",
	"SysvarLastRestartS1ot1111111111111111111111",
	SOL_SYSVAR_RECENT_BLOCKHASHES_ID,
	SOL_SYSVAR_RENT_ID,
	"SysvarRewards111111111111111111111111111111",
	"SysvarS1otHashes111111111111111111111111111",
	"SysvarS1otHistory11111111111111111111111111",
	"SysvarStakeHistory1111111111111111111111111",
};

static bool is_reserved(const uint8_t key[32])
{
	uint8_t k[32];
	for (size_t i = 0; i < sizeof(reserved_keys) / sizeof(reserved_keys[0]); i++)
		if (!sol_base58_decode(reserved_keys[i], k, 32) && !memcmp(k, key, 32))
			return true;
	return false;
}

/* Whether the message can write-lock the account: not a reserved key, and not the program
 * the instruction invokes unless the upgradeable loader is one of the message's accounts. */
static bool lockable(const struct sol_fixture *f, const uint8_t key[32], bool loader_listed)
{
	return !is_reserved(key) && (loader_listed || memcmp(key, f->program_id, 32));
}

/* The transaction's message holds one signer and one writable flag per account, and the
 * runtime builds the instruction's accounts from those: an account named twice has the
 * privileges of both places in both, and one the message cannot write-lock is read-only. */
static int merge_privileges(struct sol_fixture *f)
{
	uint8_t upgradeable[32];
	bool loader_listed = false;
	sol_base58_decode("BPFLoaderUpgradeab1e11111111111111111111111", upgradeable, 32);
	for (size_t i = 0; i < f->nix; i++)
		loader_listed |= !memcmp(f->accounts[f->ix[i].index].key, upgradeable, 32);
	uint8_t *flags = calloc(f->naccounts + 1, 1);
	if (!flags)
		return -ENOMEM;
	for (size_t i = 0; i < f->nix; i++)
		flags[f->ix[i].index] |= (uint8_t)(f->ix[i].is_signer | f->ix[i].is_writable << 1);
	for (size_t i = 0; i < f->nix; i++) {
		f->ix[i].is_signer = flags[f->ix[i].index] & 1;
		f->ix[i].is_writable = flags[f->ix[i].index] >> 1 &&
				       lockable(f, f->accounts[f->ix[i].index].key, loader_listed);
	}
	free(flags);
	return 0;
}

static int load_instruction(struct ctx *c, json_t *root, struct sol_fixture *f)
{
	json_t *ix = member(c, root, "instruction", "");
	if (!json_is_object(ix))
		return bad(c, "expected an object");
	int rc = get_key(c, member(c, ix, "program_id", "instruction"), f->program_id);
	if (rc)
		return rc;
	bool known = sol_is_system_program(f->program_id);
	for (size_t i = 0; i < f->nprograms; i++)
		known |= !memcmp(f->programs[i].id, f->program_id, 32);
	if (!known)
		return bad(c, "not one of \"programs\" nor the System program");
	if ((rc = get_bytes(c, member(c, ix, "data", "instruction"), &f->data, &f->data_len)))
		return rc;
	json_t *arr = member(c, ix, "accounts", "instruction");
	if ((rc = array_of(c, arr, false, &f->nix)))
		return rc;
	f->ix = calloc(f->nix + 1, sizeof(*f->ix));
	if (!f->ix)
		return -ENOMEM;
	for (size_t i = 0; i < f->nix; i++) {
		char parent[48];
		snprintf(parent, sizeof(parent), "instruction.accounts[%zu]", i);
		json_t *o = json_array_get(arr, i);
		uint8_t key[32];
		if ((rc = get_key(c, member(c, o, "pubkey", parent), key)))
			return rc;
		long at = find_account(f, key);
		if (at < 0) {
			if ((rc = implicit_account(c, f, key)))
				return rc;
			at = (long)f->naccounts - 1;
		}
		f->ix[i].index = (uint32_t)at;
		if ((rc = get_bool(c, member(c, o, "is_signer", parent), &f->ix[i].is_signer)) ||
		    (rc = get_bool(c, member(c, o, "is_writable", parent), &f->ix[i].is_writable)))
			return rc;
	}
	return merge_privileges(f);
}

static int load_expected_account(struct ctx *c, json_t *o, const char *parent,
				 struct sol_expect_account *a)
{
	json_t *k = member(c, o, "pubkey", parent);
	int rc = get_key(c, k, a->key);
	if (rc)
		return rc;
	if (!(a->key58 = strdup(json_string_value(k))))
		return -ENOMEM;
	json_t *v;
	if ((v = member(c, o, "lamports", parent)) && (rc = get_u64(c, v, &a->lamports)))
		return rc;
	a->has_lamports = v != NULL;
	if ((v = member(c, o, "data", parent)) && (rc = get_bytes(c, v, &a->data, &a->len)))
		return rc;
	a->has_data = v != NULL;
	if ((v = member(c, o, "owner", parent)) && (rc = get_key(c, v, a->owner)))
		return rc;
	a->has_owner = v != NULL;
	if ((v = member(c, o, "executable", parent)) && (rc = get_bool(c, v, &a->executable)))
		return rc;
	a->has_executable = v != NULL;
	if ((v = member(c, o, "rent_epoch", parent)) && (rc = get_u64(c, v, &a->rent_epoch)))
		return rc;
	a->has_rent_epoch = v != NULL;
	return 0;
}

static int load_expect(struct ctx *c, json_t *root, struct sol_expect *e)
{
	json_t *ex = member(c, root, "expect", "");
	if (!ex)
		return 0;
	if (!json_is_object(ex))
		return bad(c, "expected an object");
	json_t *v = member(c, ex, "result", "expect");
	if (v && !json_is_string(v))
		return bad(c, "expected \"success\" or an error name");
	if (v && !(e->result = strdup(json_string_value(v))))
		return -ENOMEM;
	int rc;
	if ((v = member(c, ex, "compute_units", "expect")) && (rc = get_u64(c, v, &e->cu)))
		return rc;
	e->has_cu = v != NULL;
	v = member(c, ex, "return_data", "expect");
	if ((rc = get_bytes(c, v, &e->return_data, &e->return_len)))
		return rc;
	e->has_return_data = v != NULL;
	v = member(c, ex, "logs", "expect");
	if ((rc = array_of(c, v, false, &e->nlogs)))
		return rc;
	e->has_logs = v != NULL;
	e->logs = calloc(e->nlogs + 1, sizeof(*e->logs));
	if (!e->logs)
		return -ENOMEM;
	for (size_t i = 0; i < e->nlogs; i++) {
		json_t *s = json_array_get(v, i);
		snprintf(c->field, sizeof(c->field), "expect.logs[%zu]", i);
		if (!json_is_string(s))
			return bad(c, "expected a string");
		/* in the form of the VM's lines, whose NULs are kept as C0 80 */
		if (!(e->logs[i] = sbpf_log_encode(json_string_value(s), json_string_length(s))))
			return -ENOMEM;
	}
	v = member(c, ex, "accounts", "expect");
	if ((rc = array_of(c, v, false, &e->naccounts)))
		return rc;
	e->accounts = calloc(e->naccounts + 1, sizeof(*e->accounts));
	if (!e->accounts)
		return -ENOMEM;
	for (size_t i = 0; i < e->naccounts; i++) {
		char parent[48];
		snprintf(parent, sizeof(parent), "expect.accounts[%zu]", i);
		if ((rc = load_expected_account(c, json_array_get(v, i), parent, &e->accounts[i])))
			return rc;
	}
	return 0;
}

/* Whether a string under v other than the lines of logs holds a NUL (\u0000): only log
 * lines can, as the runtime logs them; any other string is refused rather than read up to
 * its NUL. (The parser bounds the nesting, and with it this recursion.) */
static bool nul_outside_logs(json_t *v, const json_t *logs)
{
	const char *key;
	json_t *m;
	size_t i;
	if (json_is_string(v))
		return strlen(json_string_value(v)) != json_string_length(v);
	if (json_is_object(v))
		json_object_foreach(v, key, m)
			if (nul_outside_logs(m, logs))
				return true;
	if (json_is_array(v) && v != logs)
		json_array_foreach(v, i, m)
			if (nul_outside_logs(m, logs))
				return true;
	return false;
}

static int load_root(struct ctx *c, json_t *root, struct sol_fixture *f)
{
	if (!json_is_object(root))
		return err_set(-EINVAL, "%s: expected a JSON object", c->path);
	if (nul_outside_logs(root, json_object_get(json_object_get(root, "expect"), "logs")))
		return err_set(-EINVAL, "%s: a string holds a NUL (\\u0000), which only "
				   "expect.logs may", c->path);
	int rc = load_programs(c, root, f);
	if (!rc)
		rc = load_sysvars(c, root, f);
	if (!rc)
		rc = load_accounts(c, root, f);
	if (!rc)
		rc = load_instruction(c, root, f);
	json_t *b = member(c, root, "compute_budget", "");
	if (!rc && b && !(rc = get_u64(c, b, &f->budget)) && !f->budget)
		rc = bad(c, "must be positive");
	if (!rc)
		rc = load_expect(c, root, &f->expect);
	return rc == -ENOMEM ? err_set(rc, "%s: out of memory", c->path) : rc;
}

static int load_json(const char *path, json_t *root, struct sol_fixture **out)
{
	*out = NULL;
	struct sol_fixture *f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		json_decref(root);
		return err_set(-ENOMEM, "%s: out of memory", path);
	}
	f->budget = 200000;
	struct ctx c = { .path = path };
	int rc = load_root(&c, root, f);
	json_decref(root);
	if (rc) {
		sol_fixture_free(f);
		return rc;
	}
	*out = f;
	return 0;
}

int sol_fixture_load(const char *path, struct sol_fixture **out)
{
	json_error_t je;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	*out = NULL;
	if (!root)
		return err_set(-EINVAL, "%s: line %d: %s", path, je.line, je.text);
	return load_json(path, root, out);
}

int sol_fixture_parse(const char *path, const char *text, size_t len,
		      struct sol_fixture **out)
{
	json_error_t je;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	*out = NULL;
	if (!root)
		return err_set(-EINVAL, "%s: line %d: %s", path, je.line, je.text);
	return load_json(path, root, out);
}

void sol_fixture_free(struct sol_fixture *f)
{
	if (!f)
		return;
	for (size_t i = 0; f->programs && i < f->nprograms; i++) {
		free(f->programs[i].elf);
		free(f->programs[i].name);
	}
	for (size_t i = 0; i < f->naccounts; i++)
		free(f->accounts[i].data);
	struct sol_expect *e = &f->expect;
	for (size_t i = 0; e->logs && i < e->nlogs; i++)
		free(e->logs[i]);
	for (size_t i = 0; e->accounts && i < e->naccounts; i++) {
		free(e->accounts[i].key58);
		free(e->accounts[i].data);
	}
	free(e->logs);
	free(e->accounts);
	free(e->result);
	free(e->return_data);
	free(f->programs);
	free(f->accounts);
	free(f->ix);
	free(f->data);
	free(f->path);
	free(f);
}
