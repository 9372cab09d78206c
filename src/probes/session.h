/*
 * Counting USDT probe hits in a running process (-p PID) or a command started for the
 * purpose (-- CMD ...): every matching probe site of every object (the command's
 * executable and the libraries it needs, or everything the process maps) gets a uprobe
 * event per thread; the counts are summed per provider:name. The same session records a
 * sample at every hit for tally record -e usdt (struct usdt_recorder).
 */
#ifndef TALLY_PROBES_SESSION_H
#define TALLY_PROBES_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct perf_event_attr;

/* Recording instead of counting (tally record -e usdt:...): every site's event is opened
 * from attr, a template of sampling fields and side-band bits (mmap, comm, task: kept on
 * each task's first event only, so that those records are not repeated per site), and
 * handed to event(), which maps or redirects its output (first: the task's first event).
 * capacity() says how many samples the task's ring holds once its first event is in.
 * drain() is called every few milliseconds, whenever a task has filled half its ring (the
 * task waits meanwhile), and once more before the events are closed; a negative return
 * ends the session with that error, a positive one (the recorder can write no more: its
 * disk is full) stops it as SIGINT does. The hit counts are still read. */
struct usdt_recorder {
	const struct perf_event_attr *attr;
	int (*event)(void *ctx, int fd, pid_t tid, bool first);
	uint64_t (*capacity)(void *ctx, pid_t tid);
	void (*task_done)(void *ctx, pid_t tid); /* tid ended, its records drained */
	int (*drain)(void *ctx);
	void *ctx;
};

struct usdt_count_opts {
	pid_t pid;               /* a running process, or 0 */
	char *const *cmd;        /* a command to run (argv, NULL-terminated), or NULL */
	char *const *patterns;   /* PROVIDER:NAME globs; none selects every probe */
	size_t npatterns;
	double duration;         /* seconds; 0: until the target ends or SIGINT/SIGTERM
				  * (after which a command runs on to its end) */
	bool args;               /* also sample the arguments of each hit */
	const struct usdt_recorder *recorder; /* or NULL */
	FILE *log;               /* remarks for the user (semaphore fallback), or NULL */
};

/* The most frequent values of one argument of a probe. */
struct usdt_value_count {
	char text[48];
	uint64_t count;
};

struct usdt_count_row {
	char *probe;             /* "provider:name" */
	uint64_t count;
	size_t nargs;            /* with --args: per argument, the top values */
	struct usdt_value_count top[12][5];
	size_t ntop[12];
	uint64_t samples;        /* hits whose arguments were decoded */
};

struct usdt_count_result {
	struct usdt_count_row *v; /* sorted by probe */
	size_t n, cap;
	int cmd_status;          /* the command's wait status */
	uint64_t lost;           /* --args samples the kernel dropped */
};

int usdt_count(const struct usdt_count_opts *o, struct usdt_count_result *res);
void usdt_count_result_free(struct usdt_count_result *res);

#endif
