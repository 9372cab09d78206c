/*
 * Starting a command held before its exec: forked, it waits on a pipe until released, so
 * that the caller can first open events on it (enable_on_exec) or trace it; released, it
 * sends exec's errno back on a second pipe, which a successful exec closes (both pipes are
 * close-on-exec), so the caller learns which happened. Every failure path closes what it
 * opened.
 */
#ifndef TALLY_BASE_SPAWN_H
#define TALLY_BASE_SPAWN_H

#include <sys/types.h>

struct spawn_opts {
	const char *path;   /* the file run; NULL: argv[0], looked up in PATH */
	char *const *argv;  /* argv[0] also names the command in messages */
	/* Run in the child once released, just before exec (signal dispositions, the mask):
	 * async-signal-safe calls only. NULL: none. */
	void (*before_exec)(void *arg);
	void *arg;
};

/* A command started held. The descriptors are the caller's until spawn_release or
 * spawn_close; the process is the caller's to wait for. */
struct spawn_cmd {
	pid_t pid;
	int go;         /* the pipe the command waits on (write end); -1 once closed */
	int failed;     /* exec's errno comes on it (read end); -1 once closed */
	int exec_errno; /* after spawn_release: exec's errno, 0 when it ran */
	const char *name;
};

#define SPAWN_CMD_NONE ((struct spawn_cmd){ .pid = -1, .go = -1, .failed = -1 })

/* Forks the command, held: 0, or a negative errno with the message set ("pipe: ...",
 * "fork: ...") and nothing left open. */
int spawn_start(const struct spawn_opts *o, struct spawn_cmd *out);
/* Releases the command and waits until its exec ran (0) or failed: then the negated errno,
 * in c->exec_errno too, with the message "NAME: why" (the command exits 127). A release
 * that fails ("starting NAME: why") leaves exec_errno 0. Both pipes are closed. */
int spawn_release(struct spawn_cmd *c);
/* Closes what is left open of the pipes: a command not released exits 127 unrun. */
void spawn_close(struct spawn_cmd *c);

#endif
