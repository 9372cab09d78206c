/*
 * tally record: sample a command or running processes into perf.data.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/vec.h"
#include "cli/cli.h"
#include "record/live.h"
#include "record/record.h"
#include "record/usdt.h"

static int run_record(int argc, char **argv);

const struct cli_cmd cli_cmd_record = {
	"record",
	"sample a command or processes, user stacks unwound by DWARF CFI as they come",
	"usage: tally record [-F HZ] [-c PERIOD] [-e EVENT] [--call-graph dwarf[,SIZE]|fp]\n"
	"                    [--off-cpu] [--stacks=unwound|raw | --keep-stacks] [-o FILE]\n"
	"                    [--duration S] [--no-python] [--no-ruby] [--no-lua]\n"
	"                    [--rotate SECONDS|SIZE [--keep N]]\n"
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
	"  --stacks=unwound|raw  what the file keeps of each sample's user stack.\n"
	"                 unwound (the default): tally unwinds each copy while recording,\n"
	"                 with the unwinder and rules a later report would use, against the\n"
	"                 mappings of the sample's instant (records are put back in time\n"
	"                 order first), and stores the chain alone, as the kernel's\n"
	"                 callchain (8 bytes a frame), with how the walk ended, so that perf\n"
	"                 script, perf report and tally report read the same stacks and\n"
	"                 tally report the same unwind figures. Some samples keep their\n"
	"                 copies, for a report to read them (libtally's VM frames; JIT code\n"
	"                 whose unwinding information is in a jitdump; threads that outlive\n"
	"                 their process's main thread): the closing line counts them.\n"
	"                 raw: every sample keeps the registers and the stack copy,\n"
	"                 unwound when the file is read (about 33 KB a sample): to unwind\n"
	"                 again with a later tally, or with perf report --call-graph dwarf.\n"
	"                 With --call-graph fp there is nothing to unwind: the kernel's\n"
	"                 chains are stored. See docs/native-sampling.md\n"
	"  --keep-stacks  the same as --stacks=raw\n"
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
	"  --rotate SECONDS|SIZE  a series of files instead of one: FILE.TIME, where TIME\n"
	"                 is the UTC time the file began, YYYYMMDDTHHMMSS.mmmZ (so that\n"
	"                 `ls FILE.*Z` lists them in time order), the next begun every\n"
	"                 SECONDS (at least 1; or with s, m, h: 90s, 15m, 1h) or once a\n"
	"                 file holds SIZE bytes (with K, M, G: 512M, 2G; at least 1M; as\n"
	"                 in perf's --switch-output, m is minutes and M mebibytes). Each\n"
	"                 is a complete recording that `tally report` and `perf script`\n"
	"                 read alone, with FILE.TIME.jit beside it when processes had\n"
	"                 perf maps\n"
	"  --keep N       with --rotate: only the N newest files are kept, older ones (of\n"
	"                 this recording) deleted as new ones are finished\n"
	"  -q             no summary line\n"
	"  --no-python    no Python frames (see below)\n"
	"  --no-ruby      no Ruby frames (see below)\n"
	"  --no-lua       no Lua frames (see below)\n"
	"\n"
	"Python: the stacks of processes running CPython 3.8 to 3.13 (a release\n"
	"build as shipped, or any build with its debug information) also get their Python\n"
	"frames, read by a BPF program at each sample (root, or CAP_BPF and CAP_PERFMON) and\n"
	"written as bpf-output samples beside the CPU samples. Without those privileges,\n"
	"in ptrace mode, for your own processes: tally samples them itself, stopping each\n"
	"sampled thread while it reads its registers, stack and Python frames (slower for\n"
	"the target; the message says which mode is used). See docs/python.md\n"
	"\n"
	"Ruby: the stacks of processes running Ruby 3.1 (libruby as shipped, stripped or\n"
	"not) also get their Ruby frames, always in ptrace mode (root or not, for the\n"
	"processes you may trace). See docs/ruby.md\n"
	"\n"
	"Lua: the stacks of processes running Lua 5.4 (lua5.4, or a program linking liblua5.4,\n"
	"stripped or not) also get their Lua frames, in ptrace mode likewise, with no change\n"
	"to the script. See docs/lua.md\n"
	"\n"
	"However long it runs, tally holds bounded memory (docs/native-sampling.md, \"Long\n"
	"recordings\"); the files grow by the samples: --rotate with --keep bounds the disk.\n"
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

/* What a sample cost: the bytes of the file, and tally's CPU time (its own, all its
 * threads, since it started: not the command's). */
static void print_costs(const struct rec_result *res)
{
	struct rusage ru;
	if (!res->samples || getrusage(RUSAGE_SELF, &ru))
		return;
	double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	double n = (double)res->samples;
	fprintf(stderr, "tally record: a sample: %.1f KiB written, %.1f us of tally's CPU "
			"(%.3f s in all)\n", (double)res->bytes / 1024.0 / n, cpu * 1e6 / n, cpu);
}

/* What unwinding while recording did: the samples stored unwound and those that kept their
 * copies, by reason (record/live.h). */
/* What reading the interpreters' frames took: per sample, the BPF program's time, or in
 * ptrace mode the time a sampled thread was held stopped (and tally's CPU time). */
static void print_interps(const struct rec_result *res)
{
	double n = res->ptrace_samples ? (double)res->ptrace_samples : 1;
	if (res->py_procs)
		fprintf(stderr, "tally record: Python: %llu process%s, %llu stacks, %llu code "
				"objects, %llu lost, %.1f us per sample reading them\n",
			(unsigned long long)res->py_procs, res->py_procs == 1 ? "" : "es",
			(unsigned long long)res->py_stacks, (unsigned long long)res->py_codes,
			(unsigned long long)res->py_lost,
			res->py_ptrace ? res->ptrace_stopped_ns / 1e3 / n
			: res->py_runs ? res->py_run_ns / 1e3 / (double)res->py_runs : 0.0);
	if (res->interp_procs)
		fprintf(stderr, "tally record: other interpreters: %llu process%s, %.1f us per "
				"sample reading them\n",
			(unsigned long long)res->interp_procs, res->interp_procs == 1 ? "" : "es",
			res->ptrace_stopped_ns / 1e3 / n);
	if ((res->py_ptrace || res->interp_procs) && res->ptrace_samples)
		fprintf(stderr, "tally record: ptrace mode: each sampled thread held stopped for "
				"that read, %.1f us of tally's CPU per sample\n",
			res->ptrace_cpu_ns / 1e3 / n);
}

static void print_unwound(const struct rec_live_result *l)
{
	uint64_t n = l->complete + l->truncated;
	char raw[200] = "";
	if (l->raw_agent || l->raw_jitdump || l->raw_exited)
		snprintf(raw, sizeof(raw), "; kept raw: %llu with libtally's VM frames, %llu in "
					   "JIT code with a jitdump, %llu of threads that outlived "
					   "their main thread",
			 (unsigned long long)l->raw_agent, (unsigned long long)l->raw_jitdump,
			 (unsigned long long)l->raw_exited);
	fprintf(stderr, "tally record: unwound while recording: %llu samples (%llu dropped%s), "
			"%.1f%% complete, %.1f us of CPU a walk, reorder queue peak %.1f MiB%s\n",
		(unsigned long long)l->samples, (unsigned long long)l->dropped, raw,
		n ? 100.0 * (double)l->complete / (double)n : 0.0,
		n ? (double)l->unwind_ns / 1e3 / (double)n : 0.0,
		(double)l->peak_bytes / 1048576.0,
		l->forced ? " (full: some records went out before their round)" : "");
}

/* A recording the disk stopped: said so; the command's status, else failure. */
static int stopped_early(const struct rec_opts *o, const struct rec_result *res)
{
	fprintf(stderr, "tally: %s: %s: recording stopped after %llu samples\n",
		res->last[0] ? res->last : o->output, /* with --rotate: the file that filled */
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
	if (o->all_cpus || o->off_cpu || o->duration || o->rotate_secs > 0 || o->rotate_bytes)
		return cli_usage(cmd, "-e usdt: not with -a, --off-cpu, --duration or --rotate");
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
		print_costs(&res);
		if (o->unwound)
			print_unwound(&res.live);
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
	const char *unwind_file; /* --unwind-file RAW (for tests, not in --help) */
	bool stacks_given;       /* --stacks or --keep-stacks */
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

enum { OPT_CALL_GRAPH = 256, OPT_OFF_CPU, OPT_DURATION, OPT_NO_PYTHON, OPT_NO_RUBY, OPT_NO_LUA, OPT_STACKS,
       OPT_KEEP_STACKS, OPT_UNWIND_FILE, OPT_ROTATE, OPT_KEEP };

/* --rotate: seconds (s, m, h) or a size (K, M, G), as perf's --switch-output takes them. */
static int parse_rotate(const char *v, struct rec_opts *o)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (errno || end == v || !(x > 0) || x > 1e12 || (end[0] && end[1]))
		return -1;
	double secs = 0, bytes = 0;
	switch (*end) {
	case 0: case 's': secs = x; break;
	case 'm': secs = x * 60; break;
	case 'h': secs = x * 3600; break;
	case 'K': bytes = x * 1024; break;
	case 'M': bytes = x * 1048576; break;
	case 'G': bytes = x * 1073741824.0; break;
	default: return -1;
	}
	if (secs ? secs < 1 || secs > 1e9 : bytes < 1048576 || bytes > 1e15)
		return -1;
	o->rotate_secs = secs;
	o->rotate_bytes = (uint64_t)bytes;
	return 0;
}

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
	case OPT_NO_RUBY: r->o.no_ruby = true; return 0;
	case OPT_NO_LUA: r->o.no_lua = true; return 0;
	case OPT_STACKS:
		if (strcmp(v, "raw") && strcmp(v, "unwound"))
			return cli_usage(cmd, "--stacks: expected unwound or raw: %s", v);
		r->o.unwound = !strcmp(v, "unwound");
		r->stacks_given = true;
		return 0;
	case OPT_KEEP_STACKS:
		r->o.unwound = false;
		r->stacks_given = true;
		return 0;
	case OPT_UNWIND_FILE: r->unwind_file = v; return 0;
	case OPT_ROTATE:
		if (parse_rotate(v, &r->o))
			return cli_usage(cmd, "--rotate: expected seconds (at least 1; or with s, m, "
					      "h) or a size with K, M or G (at least 1M): %s", v);
		return 0;
	case OPT_KEEP: {
		uint64_t n;
		if (parse_u64(v, &n) || n > 10000)
			return cli_usage(cmd, "--keep: expected a number of files from 1 to "
					      "10000: %s", v);
		r->o.keep = (unsigned)n;
		return 0;
	}
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
		{ "no-ruby", no_argument, NULL, OPT_NO_RUBY },
		{ "no-lua", no_argument, NULL, OPT_NO_LUA },
		{ "stacks", required_argument, NULL, OPT_STACKS },
		{ "keep-stacks", no_argument, NULL, OPT_KEEP_STACKS },
		{ "unwind-file", required_argument, NULL, OPT_UNWIND_FILE },
		{ "rotate", required_argument, NULL, OPT_ROTATE },
		{ "keep", required_argument, NULL, OPT_KEEP },
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
	/* With frame pointers the kernel's chain is what is stored: nothing to unwind. */
	if (r->o.fp && !r->stacks_given)
		r->o.unwound = false;
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
	if (o->unwound && o->fp)
		return cli_usage(cmd, "--stacks=unwound: --call-graph fp records no stack copies "
				      "to unwind (the kernel's chain is stored as it is)");
	if (o->keep && !(o->rotate_secs > 0 || o->rotate_bytes))
		return cli_usage(cmd, "--keep: keeps the newest files of --rotate, which is not "
				      "given");
	return 0;
}

/* --unwind-file RAW: RAW's samples through the live unwinder into -o, as tally record
 * would have stored them (tests compare it with a replay of RAW). */
static int unwind_file(const char *raw, const struct rec_opts *o)
{
	struct rec_live_stats st;
	if (rec_live_file(raw, o->output, &st))
		return cli_fail_err();
	if (!o->quiet)
		fprintf(stderr, "tally record: %s: %llu samples unwound (%llu dropped), %.1f bytes "
				"a sample unwound against %.1f raw, %.1f us of CPU a sample, queue "
				"peak %.1f MiB\n",
			o->output, (unsigned long long)st.samples, (unsigned long long)st.dropped,
			st.samples ? (double)st.bytes_out / (double)st.samples : 0.0,
			st.samples ? (double)st.bytes_in / (double)st.samples : 0.0,
			st.samples ? (double)st.unwind_ns / 1e3 / (double)st.samples : 0.0,
			(double)st.peak_bytes / 1048576.0);
	return CLI_OK;
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
	bool rotated = o->rotate_secs > 0 || o->rotate_bytes;
	if (!o->quiet && !rotated) {
		fprintf(stderr, "tally record: %llu samples, %llu lost, %llu throttled, %.1f MiB "
				"written to %s\n",
			(unsigned long long)res.samples, (unsigned long long)res.lost,
			(unsigned long long)res.throttled, res.bytes / 1048576.0, o->output);
		print_costs(&res);
	} else if (!o->quiet) {
		char kept[64] = "";
		if (o->keep && res.files > o->keep)
			snprintf(kept, sizeof(kept), " (the newest %u kept)", o->keep);
		fprintf(stderr, "tally record: %llu samples, %llu lost, %llu throttled, %.1f MiB "
				"written to %llu files %s.*Z%s, the last %s\n",
			(unsigned long long)res.samples, (unsigned long long)res.lost,
			(unsigned long long)res.throttled, res.bytes / 1048576.0,
			(unsigned long long)res.files, o->output, kept, res.last);
		print_costs(&res);
	}
	if (!o->quiet && o->unwound)
		print_unwound(&res.live);
	if (res.modules_dropped)
		fprintf(stderr, "tally record: warning: %llu mapped files past the %d a file "
				"holds: their build-ids are not in it (reports read them by path)\n",
			(unsigned long long)res.modules_dropped, REC_MODULES_MAX);
	if (res.jit_dropped)
		fprintf(stderr, "tally record: warning: %llu processes past the %d a file holds: "
				"their perf maps are not kept with it\n",
			(unsigned long long)res.jit_dropped, REC_JITMAPS_MAX);
	if (!o->quiet)
		print_interps(&res);
	return o->argv ? res.exit_status : CLI_OK;
}

static int run_record(int argc, char **argv)
{
	struct record_args r = { .o = { .output = "perf.data", .unwound = true } };
	int rc = parse_args(argc, argv, &r);
	if (!rc && r.unwind_file)
		rc = unwind_file(r.unwind_file, &r.o);
	else if (!rc)
		rc = check_args(&r.o);
	if (!rc && !r.unwind_file)
		rc = r.usdt.n ? record_usdt(&r.o, r.usdt.v, r.usdt.n) : record(&r.o);
	free(r.o.pids);
	for (size_t k = 0; k < r.usdt.n; k++)
		free(r.usdt.v[k]);
	vec_free(&r.usdt);
	return rc;
}
