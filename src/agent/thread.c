/*
 * Interpreter threads, and fork. A thread state is a slot of the agent's array, taken and
 * given back under the agent's lock; the sampler sees a slot by its state word.
 *
 * Fork: the child has one thread, the one that forked, and no sampler thread. The agents
 * of the process are kept in one process-wide list (the only global state of the agent)
 * for a pthread_atfork handler: before the fork it takes the list's lock and every
 * agent's, so that no registration is half done; in the child it marks every agent
 * stopped, drops the parent's unwritten stream data and descriptors (the parent writes
 * them), and forgets every thread state but the forking thread's, which gets the child's
 * tid. tally_agent_start() in the child then starts a sampler of its own.
 */
#include "agent/agent_impl.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "profile/profile.h"

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tally_agent *live;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static pid_t forking_tid;

static void before_fork(void)
{
	pthread_mutex_lock(&live_lock);
	for (struct tally_agent *a = live; a; a = a->next_live)
		pthread_mutex_lock(&a->lock);
	forking_tid = gettid();
}

static void after_fork_parent(void)
{
	for (struct tally_agent *a = live; a; a = a->next_live)
		pthread_mutex_unlock(&a->lock);
	pthread_mutex_unlock(&live_lock);
}

static void child_agent(struct tally_agent *a)
{
	a->running = false;
	a->sampler_started = false;
	a->taking = 0;
	agent_wake_init(a);
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	a->len = 0;
	prof_free(a->sprof); /* the parent's samples: the parent writes them */
	a->sprof = NULL;
	if (a->perfmap_fd >= 0)
		close(a->perfmap_fd);
	a->perfmap_fd = -1;
	agent_jitdump_close(a); /* the parent's file: the child starts its own */
	a->jitdump_index = 0;
	agent_vmdump_close(a);
	/* The child's samples name its pid: its registry must be there under that pid too.
	 * Failing, they are counted as unregistered in the replay. */
	if (a->o.mode & TALLY_AGENT_MIXED)
		agent_vmdump_rewrite(a);
	for (uint32_t i = 0; i < a->o.max_threads; i++) {
		struct agent_thread *t = &a->threads[i];
		if (t->state != THREAD_ACTIVE)
			continue;
		if (t->tid == forking_tid) {
			t->tid = gettid();
			pthread_getcpuclockid(pthread_self(), &t->cpu_clock);
		} else {
			agent_exact_thread_free(t);
			t->state = THREAD_FREE;
		}
	}
}

static void after_fork_child(void)
{
	for (struct tally_agent *a = live; a; a = a->next_live) {
		child_agent(a);
		pthread_mutex_unlock(&a->lock);
	}
	pthread_mutex_unlock(&live_lock);
}

static void install_atfork(void)
{
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

void agent_live_add(struct tally_agent *a)
{
	pthread_once(&atfork_once, install_atfork);
	pthread_mutex_lock(&live_lock);
	a->next_live = live;
	live = a;
	pthread_mutex_unlock(&live_lock);
}

void agent_live_remove(struct tally_agent *a)
{
	pthread_mutex_lock(&live_lock);
	for (struct tally_agent **p = &live; *p; p = &(*p)->next_live)
		if (*p == a) {
			*p = a->next_live;
			break;
		}
	pthread_mutex_unlock(&live_lock);
}

int tally_agent_thread_register(struct tally_agent *a, struct tally_agent_thread **out)
{
	pthread_mutex_lock(&a->lock);
	uint32_t i = 0;
	while (i < a->o.max_threads && a->threads[i].state != THREAD_FREE)
		i++;
	int rc = 0;
	if (i == a->o.max_threads) {
		rc = err_set(-ENOSPC, "agent: more than %u threads registered", a->o.max_threads);
	} else {
		struct agent_thread *t = &a->threads[i];
		memset(t, 0, sizeof(*t));
		t->agent = a;
		t->tid = gettid();
		rc = pthread_getcpuclockid(pthread_self(), &t->cpu_clock);
		if (rc)
			rc = err_set(-rc, "agent: no CPU-time clock for this thread: %s", strerror(rc));
		t->pub.max_depth = a->o.max_depth;
		t->pub.frames = &a->frames[(size_t)i * a->o.max_depth];
		if (!rc && (a->o.mode & TALLY_AGENT_EXACT))
			rc = agent_exact_thread_init(t);
		if (!rc && a->o.caller_samples)
			rc = agent_ring_alloc(a, i);
		if (!rc) {
			__atomic_store_n(&t->state, THREAD_ACTIVE, __ATOMIC_RELEASE);
			*out = &t->pub;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return rc;
}

/* Its exact tree, if any, is kept until the profile is written: the thread's cost counts
 * even when it ended before the agent stopped. */
void tally_agent_thread_unregister(struct tally_agent *a, struct tally_agent_thread *pub)
{
	if (!pub)
		return;
	struct agent_thread *t = (struct agent_thread *)pub;
	pthread_mutex_lock(&a->lock);
	agent_exact_thread_retire(t);
	__atomic_store_n(&t->state, THREAD_FREE, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&a->lock);
}
