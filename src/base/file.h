/*
 * Reading a whole regular file into memory, for inputs small enough to hold (programs,
 * raw input buffers; large files are mapped by their readers instead), and the limits
 * and ends of descriptors.
 */
#ifndef TALLY_BASE_FILE_H
#define TALLY_BASE_FILE_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

/* 0 and a malloc'd copy of path's bytes (*len of them), or a negative code with the
 * message set ("PATH: not a regular file", "PATH: cannot read the file"). */
int file_read(const char *path, uint8_t **out, size_t *len);

/* The whole of path read to its end, malloc'd and NUL-terminated (*len bytes before the
 * NUL), for files whose size stat does not tell (/proc's); NULL, *len 0, when it cannot be
 * opened or memory runs out. */
char *file_read_text(const char *path, size_t *len);

/* A /proc stat file (proc(5): /proc/PID/stat, /proc/PID/task/TID/stat) read into buf, at
 * most size bytes: a pointer to its field n (counted from 1, n >= 3: the fields after the
 * command name, counted from its closing parenthesis, as the name may hold spaces and
 * parentheses), or NULL when it cannot be read or has fewer fields. */
const char *file_proc_stat(const char *path, int n, char *buf, size_t size);

/* mkdir -p with mode for the directories it makes: 0 or a negative errno. path is
 * written to while it works and restored before it returns. */
int file_mkdirs(char *path, unsigned mode);

/* Descriptors: file_raise_fd_limit lifts the soft limit of open files to the hard one
 * (attaching to a process takes one per thread and CPU, or per thread and probe);
 * file_fd_limit is the limit now, for a message when it is reached anyway. */
void file_raise_fd_limit(void);
unsigned long long file_fd_limit(void);

/* Whether fd is a pipe or socket whose reader is gone (`tally report F | head` once head
 * has quit): writes to it fail with EPIPE, and kill the writer when SIGPIPE is not
 * ignored. */
bool file_reader_gone(int fd);
/* A write-only stream on fd that keeps in *err the errno of its first failed write, which
 * stdio itself forgets (a full disk would read "write error" with no reason); closing
 * the stream leaves fd open. NULL when out of memory. */
FILE *file_stream_keeping_errno(int fd, int *err);
/* Ends the process as SIGPIPE's default action does, quietly (a shell says 141), also when
 * the disposition it inherited ignores SIGPIPE: git's answer to EPIPE. */
_Noreturn void file_die_of_sigpipe(void);

#endif
