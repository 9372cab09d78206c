/*
 * tally probes: list the USDT probes of a file or a process, and count their hits with
 * uprobes (no BPF). The work is in src/probes; this file parses options and prints.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "base/err.h"
#include "cli/cli.h"
#include "probes/attach.h"
#include "probes/session.h"
#include "probes/usdt.h"

static int parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*end || v <= 0 || v > 0x7fffffff)
		return -EINVAL;
	*pid = (pid_t)v;
	return 0;
}

static void print_object(const struct usdt_object *obj)
{
	const struct usdt_list *l = &obj->probes;
	printf("%s: %zu probe%s\n", obj->path, l->n, l->n == 1 ? "" : "s");
	if (!l->n)
		return;
	printf("  %-32s %-18s %-10s %-18s %-10s %s\n", "PROBE", "ADDRESS", "OFFSET", "SEMAPHORE",
	       "SEM-OFFSET", "ARGUMENTS");
	for (size_t i = 0; i < l->n; i++) {
		const struct usdt_probe *p = &l->v[i];
		char name[300], pc[24] = "-", off[24] = "-", sem[24] = "-", semoff[24] = "-";
		snprintf(name, sizeof(name), "%s:%s", p->provider, p->name);
		/* An object file's notes hold addresses only through relocations. */
		if (!l->relocatable) {
			snprintf(pc, sizeof(pc), "0x%" PRIx64, p->pc);
			snprintf(off, sizeof(off), "0x%" PRIx64, p->pc_offset);
		}
		if (p->semaphore)
			snprintf(sem, sizeof(sem), "0x%" PRIx64, p->semaphore);
		if (p->sem_offset)
			snprintf(semoff, sizeof(semoff), "0x%" PRIx64, p->sem_offset);
		printf("  %-32s %-18s %-10s %-18s %-10s %s\n", name, pc, off, sem, semoff,
		       p->args_text);
		for (size_t a = 0; a < p->nargs; a++) {
			char d[128];
			usdt_arg_describe(&p->args[a], l->arch, d, sizeof(d));
			printf("      arg%zu: %s\n", a, d);
		}
	}
}

static int probes_list(int argc, char **argv)
{
	struct usdt_objects objs = { 0 };
	int e;
	pid_t pid;
	if (argc == 3 && !strcmp(argv[1], "-p")) {
		if (parse_pid(argv[2], &pid))
			return cli_usage(&cli_cmd_probes, "not a process id: %s", argv[2]);
		e = usdt_objects_of_pid(&objs, pid, false);
		if (!e && !objs.n)
			printf("process %d maps no object with USDT probes\n", (int)pid);
	} else if (argc == 2 && argv[1][0] != '-') {
		e = usdt_objects_add_file(&objs, argv[1], argv[1]);
	} else {
		return cli_usage(&cli_cmd_probes, "usage: tally probes list FILE | -p PID");
	}
	for (size_t i = 0; !e && i < objs.n; i++)
		print_object(&objs.v[i]);
	usdt_objects_free(&objs);
	return e ? cli_fail_err() : CLI_OK;
}

static void print_counts(const struct usdt_count_result *res, bool args)
{
	size_t w = 0;
	for (size_t i = 0; i < res->n; i++)
		w = strlen(res->v[i].probe) > w ? strlen(res->v[i].probe) : w;
	for (size_t i = 0; i < res->n; i++) {
		const struct usdt_count_row *r = &res->v[i];
		printf("%-*s %" PRIu64 "\n", (int)w, r->probe, r->count);
		for (size_t a = 0; args && a < r->nargs; a++) {
			printf("    arg%zu:", a);
			for (size_t k = 0; k < r->ntop[a]; k++)
				printf("%s %s (%" PRIu64 ")", k ? "," : "", r->top[a][k].text,
				       r->top[a][k].count);
			printf("%s\n", r->ntop[a] ? "" : " -");
		}
	}
	if (args && res->lost)
		fprintf(stderr, "tally: %" PRIu64 " hits had their arguments dropped (ring buffer full)\n",
			res->lost);
}

static int probes_count(int argc, char **argv)
{
	struct usdt_count_opts o = { .log = stderr };
	char **patterns = calloc((size_t)argc, sizeof(*patterns));
	if (!patterns)
		return cli_fail("out of memory");
	int i;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			o.cmd = argv + i + 1;
			break;
		} else if (!strcmp(a, "-p") && i + 1 < argc) {
			if (parse_pid(argv[++i], &o.pid))
				return free(patterns), cli_usage(&cli_cmd_probes, "not a process id: %s", argv[i]);
		} else if (!strcmp(a, "--duration") && i + 1 < argc) {
			char *end;
			o.duration = strtod(argv[++i], &end);
			if (*end || !(o.duration > 0))
				return free(patterns),
				       cli_usage(&cli_cmd_probes, "--duration wants seconds > 0: %s", argv[i]);
		} else if (!strcmp(a, "--args")) {
			o.args = true;
		} else if (a[0] == '-') {
			return free(patterns), cli_usage(&cli_cmd_probes, "unknown option: %s", a);
		} else {
			patterns[o.npatterns++] = argv[i];
		}
	}
	o.patterns = patterns;
	if (!o.pid == !(o.cmd && o.cmd[0]))
		return free(patterns),
		       cli_usage(&cli_cmd_probes, "count needs either -p PID or -- CMD [ARGS...]");
	struct usdt_count_result res;
	int e = usdt_count(&o, &res);
	free(patterns);
	if (e) {
		usdt_count_result_free(&res);
		return cli_fail_err();
	}
	print_counts(&res, o.args);
	int st = res.cmd_status;
	usdt_count_result_free(&res);
	if (o.cmd && WIFEXITED(st) && WEXITSTATUS(st))
		fprintf(stderr, "tally: %s exited with status %d\n", o.cmd[0], WEXITSTATUS(st));
	return CLI_OK;
}

static int probes_run(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage(&cli_cmd_probes, "probes needs a subcommand: list or count");
	if (!strcmp(argv[1], "list"))
		return probes_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "count"))
		return probes_count(argc - 1, argv + 1);
	return cli_usage(&cli_cmd_probes, "no such probes subcommand: %s", argv[1]);
}

const struct cli_cmd cli_cmd_probes = {
	.name = "probes",
	.summary = "list USDT probes, count their hits with uprobes (no BPF)",
	.help =
		"usage: tally probes list FILE | -p PID\n"
		"       tally probes count [PATTERN ...] [--duration S] [--args] (-p PID | -- CMD ...)\n"
		"\n"
		"USDT probes are the systemtap \"stapsdt\" notes that <sys/sdt.h> and tally/trace.h\n"
		"emit (Python, PostgreSQL, libc, your own code...).\n"
		"\n"
		"list FILE     every probe of FILE: provider:name, address, file offset, semaphore\n"
		"              address and file offset, argument specs, raw and decoded\n"
		"list -p PID   the same for every object process PID maps\n"
		"\n"
		"count         attaches a uprobe to every probe matching a PATTERN (PROVIDER:NAME with\n"
		"              shell globs, e.g. 'python:function__*'; none means every probe) and prints\n"
		"              one line per probe, 'provider:name count', when the target ends, when\n"
		"              --duration runs out or on Ctrl-C\n"
		"  -p PID        count in a running process (every object it maps)\n"
		"  -- CMD ...    run CMD and count from its exec (its executable and the libraries it\n"
		"                needs)\n"
		"  --duration S  stop after S seconds (a command is then sent SIGTERM)\n"
		"  --args        also decode the arguments of every hit and print the most frequent\n"
		"                values (a pointer to a C string is shown as the string)\n"
		"\n"
		"Threads and child processes are counted: tally follows them with ptrace, so a\n"
		"debugger cannot attach to the target while it counts.\n"
		"Counting needs root or CAP_PERFMON. While attached, the kernel raises each probe's\n"
		"semaphore (uprobe ref_ctr_offset, Linux 4.20+); on older kernels tally raises it\n"
		"through /proc/PID/mem instead and says so.\n",
	.run = probes_run,
};
