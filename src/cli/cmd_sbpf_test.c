/*
 * `tally sbpf run FIXTURE.json` and `tally sbpf test DIR`: Solana instructions described
 * by fixtures (src/solana/fixture.h) run in tally's runtime, checked against their `expect`.
 */
#include "cli/cmd_sbpf_test.h"

#include <ftw.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/json.h"
#include "base/vec.h"
#include "cli/cli.h"
#include "cli/sbpf_out.h"
#include "cuprof/runtime_watch.h"
#include "profile/profile.h"
#include "solana/encoding.h"
#include "solana/fixture.h"

static void print_hex(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
}

static bool is_program(const struct sol_fixture *fx, const uint8_t key[32])
{
	for (size_t i = 0; i < fx->nprograms; i++)
		if (!memcmp(fx->programs[i].id, key, 32))
			return true;
	return false;
}

/* The post-state of the accounts the fixture lists, but its programs. */
static void print_accounts(const struct sol_fixture *fx)
{
	const char *sep = "";
	printf(", \"accounts\": [");
	for (size_t i = 0; i < fx->nlisted; i++) {
		const struct sol_account *a = &fx->accounts[i];
		if (is_program(fx, a->key))
			continue;
		const struct sol_account *s = sol_fixture_post_state(a);
		char key[64], owner[64];
		sol_base58_encode(a->key, 32, key, sizeof(key));
		sol_base58_encode(s->owner, 32, owner, sizeof(owner));
		printf("%s{\"pubkey\": \"%s\", \"owner\": \"%s\", \"lamports\": %" PRIu64
		       ", \"data\": \"", sep, key, owner, s->lamports);
		print_hex(s->data, s->len);
		printf("\", \"executable\": %s, \"rent_epoch\": %" PRIu64 "}",
		       s->executable ? "true" : "false", s->rent_epoch);
		sep = ", ";
	}
	printf("]");
}

static void print_outcome(const struct sol_fixture *fx, const struct sol_outcome *o, bool json)
{
	if (json) {
		printf("{\"result\": ");
		json_print_string(stdout, o->result);
		printf(", \"compute_units\": %" PRIu64 ", \"logs\": [", o->cu);
		for (size_t i = 0; i < o->nlogs; i++) {
			fputs(i ? ", " : "", stdout);
			json_print_string(stdout, o->logs[i]);
		}
		printf("], \"return_data\": \"");
		print_hex(o->return_data, o->return_len);
		printf("\"");
		print_accounts(fx);
		printf("}\n");
		return;
	}
	for (size_t i = 0; i < o->nlogs; i++)
		printf("log: %s\n", o->logs[i]);
	printf("result: %s%s%s\ncompute units: %" PRIu64 "\nreturn data: ", o->result,
	       o->detail[0] ? ": " : "", o->detail, o->cu);
	for (size_t i = 0; i < o->return_len; i++)
		printf("%02x", o->return_data[i]);
	printf("%s\n", o->return_len ? "" : "(none)");
}

/* 0: ran and every expectation held; 1: it differed; -1: the fixture could not run (or its
 * profile could not be written). */
static int run_one(const char *path, bool print, bool json, FILE *diff,
		   const struct sbpf_outputs *outs)
{
	struct sol_fixture *fx;
	struct sol_outcome o;
	struct cuprof_watch watch;
	bool profiling = outs && sbpf_outputs_any(outs);
	if (sol_fixture_load(path, &fx))
		return -1;
	cuprof_watch_init(&watch);
	if (sol_fixture_run(fx, &o, profiling ? &watch.observer : NULL)) {
		cuprof_watch_release(&watch);
		prof_free(watch.profile);
		sol_fixture_free(fx);
		return -1;
	}
	if (print)
		print_outcome(fx, &o, json);
	size_t bad = sol_fixture_check(fx, &o, diff);
	int rc = profiling && sbpf_outputs_write(outs, watch.profile) ? -1 : 0;
	prof_free(watch.profile);
	sol_outcome_free(&o);
	sol_fixture_free(fx);
	return rc ? rc : bad ? 1 : 0;
}

int sbpf_cli_run_fixture(const char *path, bool json, const struct sbpf_outputs *outs)
{
	int rc = run_one(path, true, json, json ? stderr : stdout, outs);
	if (rc < 0)
		return cli_fail_err();
	return rc ? CLI_FAIL : CLI_OK;
}

static VEC(char *) found;

static int collect(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	size_t n = strlen(path);
	if (type == FTW_F && n > 5 && !strcmp(path + n - 5, ".json")) {
		char **slot = vec_push(&found);
		if (!slot || !(*slot = strdup(path)))
			return -1;
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int sbpf_cli_test(int argc, char **argv)
{
	if (argc != 2)
		return cli_usage(&cli_cmd_sbpf, "expected one DIR");
	if (nftw(argv[1], collect, 16, FTW_PHYS)) {
		vec_free(&found);
		return cli_fail("%s: cannot read the directory", argv[1]);
	}
	qsort(found.v, found.n, sizeof(char *), by_name);
	size_t passed = 0, failed = 0;
	for (size_t i = 0; i < found.n; i++) {
		int rc = run_one(found.v[i], false, false, stdout, NULL);
		if (rc < 0)
			printf("tally: %s\n", err_msg());
		printf("%s %s\n", rc ? "FAIL" : "ok  ", found.v[i]);
		rc ? failed++ : passed++;
		free(found.v[i]);
	}
	vec_free(&found);
	printf("%zu passed, %zu failed\n", passed, failed);
	if (!passed && !failed)
		return cli_fail("%s: no fixtures (*.json) found", argv[1]);
	return failed ? CLI_FAIL : CLI_OK;
}
