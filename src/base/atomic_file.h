/*
 * Replacing a file only once it is complete. An output that is a regular file (or does not
 * exist yet) is written to a hidden temporary beside it, ".NAME.tally-PID-N", and renamed
 * over it on commit; an abort removes the temporary, so a failed run leaves whatever was at
 * the path untouched. A path that is not a regular file (a device, a FIFO, a socket,
 * /dev/stdout and /proc/self/fd/N) is written directly and never removed or replaced.
 * A symlink is followed: its final target is what is replaced, the link stays a link.
 */
#ifndef TALLY_BASE_ATOMIC_FILE_H
#define TALLY_BASE_ATOMIC_FILE_H

#include <stdbool.h>
#include <stdio.h>

/* An output being written; owns its descriptor, its stream and both paths. */
struct afile;

enum {
	/* fsync the temporary before the rename: for a recording, which cannot be made again,
	 * so that a crash after the rename never leaves an empty file where the old one was. */
	AFILE_SYNC = 1,
};

/* 0 and *out ready to write, or a negative code with the message set ("PATH: reason").
 * The replacement keeps the old file's permission bits; a new file gets 0666 less umask. */
int afile_open(const char *path, unsigned flags, struct afile **out);

/* The descriptor, and a stream on it made on first use (use one or the other). */
int afile_fd(const struct afile *a);
FILE *afile_stream(struct afile *a);

/* The file that is written or replaced: the path with its symlinks followed (its
 * directory is where the temporary lives, on the same file system). */
const char *afile_target(const struct afile *a);

/* Whether the path is written directly (not a regular file): nothing is renamed or removed. */
bool afile_is_direct(const struct afile *a);

/* Flushes, closes and renames the temporary into place; frees a. 0, or a negative code
 * with the message set ("PATH: write error: REASON"), and then the path is untouched. */
int afile_commit(struct afile *a);

/* Closes and removes the temporary (never the path itself); frees a. NULL is ignored. */
void afile_abort(struct afile *a);

/* The temporary a writer of path left behind, killed before its commit (its process is
 * gone), modified later than the file at path (any, when there is none), the newest if
 * there are several: 0 with *out (malloc'd), else a negative code (-ENOENT: none). */
int afile_leftover(const char *path, char **out);

#endif
