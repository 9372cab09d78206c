/*
 * Attaching to USDT probes without BPF: one uprobe perf event (the kernel's "uprobe" PMU)
 * per probe site and thread, counting hits. The semaphore's file offset goes in as
 * ref_ctr_offset so the kernel raises it in every process it installs the probe in, and
 * lowers it on close, even if tally dies. Kernels without ref_ctr_offset (before 4.20)
 * get the semaphore raised by writing /proc/PID/mem instead.
 */
#ifndef TALLY_PROBES_ATTACH_H
#define TALLY_PROBES_ATTACH_H

#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "probes/probes.h"
#include "probes/usdt.h"

/* An ELF object of the target with its probes. For a running process, map_start and
 * map_pgoff of each mapping locate the semaphores in its memory. */
struct usdt_object {
	char *path;        /* as the target names it (/proc/PID/maps, or the command) */
	char *open_path;   /* as tally opens it (/proc/PID/root/... for a process) */
	struct usdt_list probes;
	struct usdt_mapping {
		uint64_t start, end, pgoff;
	} *maps;
	size_t nmaps;
};

struct usdt_objects {
	struct usdt_object *v;
	size_t n, cap;
};

/* Reads the probes of one file (objects->n grows by one, even when it has no probes). */
int usdt_objects_add_file(struct usdt_objects *o, const char *path, const char *open_path);
/* Every ELF file mapped by process pid, with its probes; files without probes are kept
 * only when keep_empty. */
int usdt_objects_of_pid(struct usdt_objects *o, pid_t pid, bool keep_empty);
/* Adds the executable's DT_NEEDED libraries, found the way the dynamic loader would
 * (DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, the system directories), with their probes. */
int usdt_objects_add_needed(struct usdt_objects *o, const char *exe);
void usdt_objects_free(struct usdt_objects *o);

/* What a sampling uprobe records at each hit (NULL: count only). */
struct uprobe_sampling {
	uint64_t regs_mask;   /* perf_event_attr.sample_regs_user */
	uint32_t stack_bytes; /* user stack copied from the stack pointer */
};

/* Opens a uprobe on path at file offset for the one task tid. ref_ctr_offset 0 leaves
 * semaphores alone. With on_exec the event starts disabled and is enabled when tid calls
 * exec. Never inherited: the kernel re-reads the path through attr.config1 when it copies
 * an event into a new task, in the new task's address space, where tally's pointer means
 * nothing: the clone() then fails with EFAULT (pthread_create says "Bad address"). New
 * threads are followed with ptrace instead (follow.c). */
int uprobe_open(const struct uprobe_pmu *pmu, const char *path, uint64_t offset,
		uint64_t ref_ctr_offset, pid_t tid, bool on_exec,
		const struct uprobe_sampling *sampling, int *fd);
/* The same from a caller's template (sampling fields, side-band records): the uprobe
 * fields (type, config, config1, config2) are filled in here. */
struct perf_event_attr;
int uprobe_open_attr(const struct uprobe_pmu *pmu, struct perf_event_attr *attr,
		     const char *path, uint64_t offset, uint64_t ref_ctr_offset, pid_t tid, int *fd);
/* The hit count of an event opened by uprobe_open. */
int uprobe_count(int fd, uint64_t *count);

/* Following a target's tasks with ptrace (PTRACE_SEIZE: the target is not stopped), so
 * that a new thread or child process gets its events before its first instruction. */
struct usdt_follow {
	pid_t main;                              /* its end ends the session */
	int (*on_task)(pid_t tid, void *ctx);    /* a new task, stopped until this returns */
	void (*on_exec)(pid_t tid, void *ctx);   /* a followed task called exec (stopped) */
	void (*on_exit)(pid_t tid, void *ctx);   /* a followed task other than main ended */
	/* A followed task is ending (stopped, its memory still mapped: PTRACE_O_TRACEEXIT,
	 * asked for only when this is set). */
	void (*on_exiting)(pid_t tid, void *ctx);
	/* A signal on its way to a task (stopped): true suppresses it, for signals tally's
	 * own events send (session.c). NULL: every signal is delivered. */
	bool (*on_signal)(pid_t tid, const siginfo_t *si, void *ctx);
	void *ctx;
	pid_t *tasks;                            /* seized, events opened */
	size_t ntasks, cap;
	bool main_ended;
	int main_status;                         /* wait status of main, once ended */
	int error;                               /* first failure of on_task */
};
/* Seizes tid and calls on_task for it (unless known). */
int usdt_follow_seize(struct usdt_follow *f, pid_t tid);
/* Handles every pending ptrace stop and exit, without blocking. */
void usdt_follow_poll(struct usdt_follow *f);
/* Lets every followed task go (interrupting each to detach it) within about a second. */
void usdt_follow_detach(struct usdt_follow *f);
void usdt_follow_free(struct usdt_follow *f);

/* The fallback: adds delta to the 16-bit semaphore at file offset sem_offset of obj in
 * process pid, through /proc/PID/mem. -ESRCH when obj is not mapped there (yet). */
int usdt_semaphore_add(pid_t pid, const struct usdt_object *obj, uint64_t sem_offset,
		       int delta);
/* Reloads obj->maps from /proc/PID/maps (after an exec, say). */
int usdt_object_load_maps(struct usdt_object *obj, pid_t pid);

#endif
