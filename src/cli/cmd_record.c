/*
 * tally record: sample a command or running processes into perf.data.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "cli/cli.h"
#include "record/record.h"
#include "record/usdt.h"

static int run_record(int argc, char **argv);

const struct cli_cmd cli_cmd_record = {
	"record",
	"sample a command or processes, with user stacks for DWARF unwinding",
	"usage: tally record [-F HZ] [-c PERIOD] [-e EVENT] [--call-graph dwarf[,SIZE]|fp]\n"
	"                    [--off-cpu] [-o FILE] [--duration S] [--no-python]\n"
	"                    (-p PID[,PID...] | -- CMD [ARGS...] | -a [-- CMD [ARGS...]])\n"
	"\n"
	"Samples CMD (started with counting off until its exec, following its threads and\n"
	"children) or the running processes PID into FILE (default perf.data), in perf's\n"
	"format: `perf script -i FILE` reads it. Stops when CMD exits, or on SIGINT/SIGTERM\n"
	"(to tally alone, CMD runs on: tally finishes FILE, waits for CMD); tally exits with\n"
	"CMD's status.\n"
	"\n"
	"  -F HZ          samples per second (default 1000)\n"
	"  -c PERIOD      a sample every PERIOD events instead of a frequency\n"
	"  -e EVENT       cycles, instructions, cache-misses, branch-misses, cpu-clock,\n"
	"                 task-clock, with :u :k :p modifiers (default: cycles where the\n"
	"                 hardware counts them, else cpu-clock; never precise, see below)\n"
	"  -e usdt:PROVIDER:NAME  a sample at every hit of a USDT probe (globs allowed,\n"
	"                 usdt:PROVIDER for all its probes; -e repeats): reports then show\n"
	"                 where the probe fires from, weighted by hits. Probes of CMD's\n"
	"                 executable and the libraries it needs, or of every object PID maps.\n"
	"                 Not with -F, -c or another event; one -p PID. Stack copies default\n"
	"                 to 8192 bytes. See docs/tracepoints.md\n"
	"  --call-graph dwarf[,SIZE]  copy SIZE bytes of user stack per sample for DWARF\n"
	"                 unwinding (default, 32768; at most 65528)\n"
	"  --call-graph fp  frame pointers only: on code built without them (Debian's\n"
	"                 libraries) most stacks come out incomplete\n"
	"  --off-cpu      also where threads wait: every context switch of the followed\n"
	"                 threads (the sched:sched_switch tracepoint, with the stack the\n"
	"                 thread blocked in; no BPF; tracefs is mounted when it is not),\n"
	"                 the time until it runs again charged to that stack as metric\n"
	"                 off-cpu (nanoseconds; --metric off-cpu in every output). CPU\n"
	"                 samples then default to cpu-clock, so that cpu + off-cpu is each\n"
	"                 thread's wall-clock time (tally report --threads)\n"
	"  -o FILE        output file\n"
	"  -p PID,...     attach to running processes (all their threads)\n"
	"  -a             the whole machine: every process on every CPU (one ring per CPU),\n"
	"                 with the mappings and threads of what already runs, kernel frames\n"
	"                 included; while CMD runs when one is given, else for --duration\n"
	"                 or until SIGINT. Needs root, CAP_PERFMON or perf_event_paranoid\n"
	"                 at 0 or lower\n"
	"  --duration S   stop after S seconds (with -a or -p)\n"
	"  -q             no summary line\n"
	"  --no-python    no Python frames (see below)\n"
	"\n"
	"Python: the stacks of processes running CPython 3.11 (the executable or\n"
	"libpython3.11, with its debug information: python3.11-dbg) also get their Python\n"
	"frames, read by a BPF program at each sample (root, or CAP_BPF and CAP_PERFMON) and\n"
	"written as bpf-output samples beside the CPU samples. See docs/python.md\n"
	"\n"
	"A precise event (:p) with DWARF call graphs is refused on AMD CPUs: there IBS takes\n"
	"the ip and the kernel copies the stack at a later moment, so the stack does not\n"
	"belong to the ip.\n",
	run_record,
};

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || !*s || *end || v == 0)
		return -1;
	*out = v;
	return 0;
}

static int parse_pids(const char *s, struct rec_opts *o)
{
	for (const char *p = s; *p;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v <= 0 || (*end && *end != ','))
			return -1;
		int *n = realloc(o->pids, (o->npids + 1) * sizeof(*n));
		if (!n)
			return -1;
		o->pids = n;
		o->pids[o->npids++] = (int)v;
		p = *end ? end + 1 : end;
	}
	return o->npids ? 0 : -1;
}

static int parse_call_graph(const char *s, struct rec_opts *o)
{
	if (!strcmp(s, "fp")) {
		o->fp = true;
		return 0;
	}
	if (strncmp(s, "dwarf", 5))
		return -1;
	if (!s[5])
		return 0;
	uint64_t size;
	if (s[5] != ',' || parse_u64(s + 6, &size) || size > 65528 || size % 8)
		return -1;
	o->stack_size = (uint32_t)size;
	return 0;
}

/* A recording the disk stopped: said so; the command's status, else failure. */
static int stopped_early(const struct rec_opts *o, const struct rec_result *res)
{
	fprintf(stderr, "tally: %s: %s: recording stopped after %llu samples\n", o->output,
		strerror(res->write_error), (unsigned long long)res->samples);
	return o->argv ? res->exit_status : CLI_FAIL;
}

/* -e usdt:...: every hit is a sample, so a sampling rate or event makes no sense. */
static int record_usdt(const struct rec_opts *o, char **patterns, size_t n)
{
	const struct cli_cmd *cmd = &cli_cmd_record;
	if (o->event || o->freq || o->period)
		return cli_usage(cmd, "-e usdt: records every hit of the probes: %s cannot be "
				      "combined with it", o->event ? o->event : o->freq ? "-F" : "-c");
	if (o->npids > 1)
		return cli_usage(cmd, "-e usdt: give one -p PID");
	if (o->all_cpus || o->off_cpu || o->duration)
		return cli_usage(cmd, "-e usdt: not with -a, --off-cpu or --duration");
	struct rec_result res;
	struct usdt_count_result hits;
	if (rec_usdt_run(o, patterns, n, &res, &hits))
		return cli_fail_err();
	if (res.write_error) {
		usdt_count_result_free(&hits);
		return stopped_early(o, &res);
	}
	if (!o->quiet) {
		fprintf(stderr, "tally record: %llu samples, %llu lost, %.1f MiB written to %s\n",
			(unsigned long long)res.samples, (unsigned long long)res.lost,
			res.bytes / 1048576.0, o->output);
		for (size_t i = 0; i < hits.n; i++)
			fprintf(stderr, "tally record: usdt:%s: %llu hits\n", hits.v[i].probe,
				(unsigned long long)hits.v[i].count);
	}
	usdt_count_result_free(&hits);
	return o->argv ? res.exit_status : CLI_OK;
}

/* What the command line asks for; usdt holds the -e usdt: patterns (owned). */
struct record_args {
	struct rec_opts o;
	VEC(char *) usdt;
};

static int event_option(struct record_args *r, const char *v)
{
	char pat[512];
	if (!rec_usdt_pattern(v, pat, sizeof(pat)))
		r->o.event = v;
	else if (!pat[0] || pat[0] == ':')
		return cli_usage(&cli_cmd_record, "-e %s: expected usdt:PROVIDER[:NAME]", v);
	else if (!vec_reserve(&r->usdt, 1) || !(r->usdt.v[r->usdt.n++] = strdup(pat)))
		return cli_fail("out of memory");
	return 0;
}

enum { OPT_CALL_GRAPH = 256, OPT_OFF_CPU, OPT_DURATION, OPT_NO_PYTHON };

/* Option c with value v: 0, or the exit status after the message. */
static int option(struct record_args *r, int c, const char *v, char **argv)
{
	const struct cli_cmd *cmd = &cli_cmd_record;
	switch (c) {
	case 'q': r->o.quiet = true; return 0;
	case OPT_OFF_CPU: r->o.off_cpu = true; return 0;
	case 'a': r->o.all_cpus = true; return 0;
	case OPT_DURATION: {
		char *end;
		r->o.duration = strtod(v, &end);
		if (*end || end == v || !(r->o.duration > 0 && r->o.duration < 1e9))
			return cli_usage(cmd, "--duration: not a number of seconds: %s", v);
		return 0;
	}
	case OPT_NO_PYTHON: r->o.no_python = true; return 0;
	case 'o': r->o.output = v; return 0;
	case 'e': return event_option(r, v);
	case 'F':
		return parse_u64(v, &r->o.freq) ? cli_usage(cmd, "-F: not a frequency: %s", v) : 0;
	case 'c':
		return parse_u64(v, &r->o.period) ? cli_usage(cmd, "-c: not a period: %s", v) : 0;
	case 'p':
		return parse_pids(v, &r->o) ? cli_usage(cmd, "-p: not a list of process ids: %s", v) : 0;
	case OPT_CALL_GRAPH:
		if (parse_call_graph(v, &r->o))
			return cli_usage(cmd, "--call-graph: expected dwarf, dwarf,SIZE (a multiple "
					      "of 8 up to 65528) or fp: %s", v);
		return 0;
	default:
		return cli_bad_option(cmd, c, argv);
	}
}

/* Options stop at the command ('+'), with or without "--" before it. */
static int parse_args(int argc, char **argv, struct record_args *r)
{
	static const struct option longopts[] = {
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "no-python", no_argument, NULL, OPT_NO_PYTHON },
		{ NULL, 0, NULL, 0 },
	};
	optind = 1;
	opterr = 0;
	for (int c; (c = getopt_long(argc, argv, "+:F:ac:e:o:p:q", longopts, NULL)) != -1;) {
		int rc = option(r, c, optarg, argv);
		if (rc)
			return rc;
	}
	if (optind < argc)
		r->o.argv = argv + optind;
	return 0;
}

/* The combinations no single option can refuse. */
static int check_args(const struct rec_opts *o)
{
	const struct cli_cmd *cmd = &cli_cmd_record;
	if (o->all_cpus && o->npids)
		return cli_usage(cmd, "-a records every process: give -a or -p, not both");
	if (!o->all_cpus && !o->argv == !o->npids)
		return cli_usage(cmd, o->argv ? "give either -p or a command, not both"
					     : "nothing to record: give -p PID, -- CMD or -a");
	if (o->duration && o->argv)
		return cli_usage(cmd, "--duration: the command's end stops the recording");
	if (!strcmp(o->output, "-"))
		return cli_usage(cmd, "-o -: perf.data is written with a seek back to its header, "
				      "not to a pipe");
	if (o->freq && o->period)
		return cli_usage(cmd, "give either -F or -c, not both");
	return 0;
}

static int record(const struct rec_opts *o)
{
	struct rec_result res;
	if (rec_run(o, &res)) {
		int rc = cli_fail_err();
		return res.exec_errno ? 127 : rc; /* a command that cannot run: as a shell says */
	}
	if (res.write_error)
		return stopped_early(o, &res);
	if (!o->quiet)
		fprintf(stderr, "tally record: %llu samples, %llu lost, %llu throttled, %.1f MiB "
				"written to %s\n",
			(unsigned long long)res.samples, (unsigned long long)res.lost,
			(unsigned long long)res.throttled, res.bytes / 1048576.0, o->output);
	if (!o->quiet && res.py_procs)
		fprintf(stderr, "tally record: Python: %llu process%s, %llu stacks, %llu code "
				"objects, %llu lost, %.1f us per sample reading them\n",
			(unsigned long long)res.py_procs, res.py_procs == 1 ? "" : "es",
			(unsigned long long)res.py_stacks, (unsigned long long)res.py_codes,
			(unsigned long long)res.py_lost,
			res.py_runs ? res.py_run_ns / 1e3 / (double)res.py_runs : 0.0);
	return o->argv ? res.exit_status : CLI_OK;
}

static int run_record(int argc, char **argv)
{
	struct record_args r = { .o = { .output = "perf.data" } };
	int rc = parse_args(argc, argv, &r);
	if (!rc)
		rc = check_args(&r.o);
	if (!rc)
		rc = r.usdt.n ? record_usdt(&r.o, r.usdt.v, r.usdt.n) : record(&r.o);
	free(r.o.pids);
	for (size_t k = 0; k < r.usdt.n; k++)
		free(r.usdt.v[k]);
	vec_free(&r.usdt);
	return rc;
}
