/*
 * Counting USDT probe hits in a running process (-p PID) or a command started for the
 * purpose (-- CMD ...): every matching probe site of every object (the command's
 * executable and the libraries it needs, or everything the process maps) gets a uprobe
 * event per thread; the counts are summed per provider:name.
 */
#ifndef TALLY_PROBES_COUNT_H
#define TALLY_PROBES_COUNT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct usdt_count_opts {
	pid_t pid;               /* a running process, or 0 */
	char *const *cmd;        /* a command to run (argv, NULL-terminated), or NULL */
	char *const *patterns;   /* PROVIDER:NAME globs; none selects every probe */
	size_t npatterns;
	double duration;         /* seconds; 0: until the target ends or SIGINT/SIGTERM */
	bool args;               /* also sample the arguments of each hit */
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
