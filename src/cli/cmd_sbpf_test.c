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
#include "cli/sbpf_bench.h"
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
			cli_sbpf_log_print(stdout, o->logs[i], true);
		}
		printf("], \"return_data\": \"");
		print_hex(o->return_data, o->return_len);
		printf("\"");
		print_accounts(fx);
		printf("}\n");
		return;
	}
	for (size_t i = 0; i < o->nlogs; i++) {
		fputs("log: ", stdout);
		cli_sbpf_log_print(stdout, o->logs[i], false);
		putchar('\n');
	}
	printf("result: %s%s%s\ncompute units: %" PRIu64 "\nreturn data: ", o->result,
	       o->detail[0] ? ": " : "", o->detail, o->cu);
	for (size_t i = 0; i < o->return_len; i++)
		printf("%02x", o->return_data[i]);
	printf("%s\n", o->return_len ? "" : "(none)");
}

/* 0: ran and every expectation held; 1: it differed; -1: the fixture could not run (or its
 * profile could not be written). *cu (may be NULL): what the instruction consumed. */
static int run_one(const char *path, bool print, bool json, FILE *diff,
		   const struct cli_sbpf_outputs *outs, uint64_t *cu)
{
	struct sol_fixture *fx;
	struct sol_outcome o;
	struct cuprof_watch watch;
	bool profiling = outs && cli_sbpf_outputs_any(outs);
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
	if (cu)
		*cu = o.cu;
	int rc = profiling && cli_sbpf_outputs_write(outs, watch.profile) ? -1 : 0;
	prof_free(watch.profile);
	sol_outcome_free(&o);
	sol_fixture_free(fx);
	return rc ? rc : bad ? 1 : 0;
}

int cli_sbpf_run_fixture(const char *path, bool json, const struct cli_sbpf_outputs *outs)
{
	int rc = run_one(path, true, json, json ? stderr : stdout, outs, NULL);
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

/* test's arguments: DIR [--bench FILE.md [--bench-threshold N|N%]] */
struct test_opts {
	const char *dir, *bench;
	struct sol_bench_threshold threshold;
};

static int parse_test_opts(int argc, char **argv, struct test_opts *o)
{
	bool has_threshold = false;
	memset(o, 0, sizeof(*o));
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "--bench") || !strcmp(arg, "--bench-threshold")) {
			if (i + 1 == argc)
				return cli_usage(&cli_cmd_sbpf, "%s needs a value", arg);
			if (arg[7] == '\0')
				o->bench = argv[++i];
			else if (sol_bench_threshold_parse(argv[++i], &o->threshold))
				return cli_usage(&cli_cmd_sbpf, "%s", err_msg());
			else
				has_threshold = true;
		} else if (arg[0] == '-' || o->dir) {
			return cli_usage(&cli_cmd_sbpf, "test: unexpected %s", arg);
		} else {
			o->dir = arg;
		}
	}
	if (!o->dir)
		return cli_usage(&cli_cmd_sbpf, "expected one DIR");
	if (has_threshold && !o->bench)
		return cli_usage(&cli_cmd_sbpf, "--bench-threshold needs --bench FILE.md");
	return 0;
}

/* A fixture's name in the table: its path below DIR, without ".json". */
static void bench_name(const char *dir, const char *path, char *buf, size_t size)
{
	size_t n = strlen(dir);
	if (!strncmp(path, dir, n))
		path += n;
	while (*path == '/')
		path++;
	snprintf(buf, size, "%.*s", (int)(strlen(path) - 5), path);
}

int cli_sbpf_test(int argc, char **argv)
{
	struct test_opts o;
	struct cli_sbpf_bench bench = { 0 };
	int rc = parse_test_opts(argc, argv, &o);
	if (rc)
		return rc;
	if (o.bench && cli_sbpf_bench_open(&bench, o.bench, &o.threshold)) {
		cli_sbpf_bench_free(&bench);
		return cli_fail_err();
	}
	if (nftw(o.dir, collect, 16, FTW_PHYS)) {
		vec_free(&found);
		cli_sbpf_bench_free(&bench);
		return cli_fail("%s: cannot read the directory", o.dir);
	}
	qsort(found.v, found.n, sizeof(char *), by_name);
	size_t passed = 0, failed = 0;
	for (size_t i = 0; i < found.n; i++) {
		uint64_t cu = 0;
		char name[4096];
		rc = run_one(found.v[i], false, false, stdout, NULL, &cu);
		if (rc < 0)
			printf("tally: %s\n", err_msg());
		bench_name(o.dir, found.v[i], name, sizeof(name));
		if (!rc && o.bench && cli_sbpf_bench_record(&bench, name, cu)) {
			printf("tally: %s: %s\n", o.bench, err_msg());
			rc = 1;
		}
		printf("%s %s\n", rc ? "FAIL" : "ok  ", found.v[i]);
		rc ? failed++ : passed++;
		free(found.v[i]);
	}
	vec_free(&found);
	printf("%zu passed, %zu failed\n", passed, failed);
	if (!passed && !failed)
		rc = cli_fail("%s: no fixtures (*.json) found", o.dir);
	else if (failed)
		rc = CLI_FAIL;
	else
		rc = o.bench ? cli_sbpf_bench_finish(&bench) : CLI_OK;
	if (o.bench && failed)
		printf("%s: left as it was (a fixture failed)\n", o.bench);
	cli_sbpf_bench_free(&bench);
	return rc;
}
