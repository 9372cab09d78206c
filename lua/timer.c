/*
 * The Lua module's timer mode, which costs the program nothing per call or instruction: a
 * timer of the process (CLOCK_MONOTONIC, SIGPROF to the Lua thread) arms a one-shot hook
 * with lua_sethook from the signal handler, which Lua allows (lua.c does it on SIGINT); at
 * the next instruction, call or return the hook publishes the stack it walks as the
 * thread's shadow stack and takes one sample of it (tally_agent_sample).
 */
#include <signal.h>
#include <unistd.h>

#include "ltally.h"

/* The one-shot hook: this instant's stack, published as the thread's shadow stack with
 * the innermost frame's current line (0 in a C function) as its pc, is the sample. */
static void sample_hook(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	struct ltally *s = ltally_state();
	lua_sethook(L, NULL, 0, 0);
	/* A coroutine made while the hook was armed inherits it (lua_newthread copies the
	 * hook): its stack alone is not the thread's, and the main state takes the sample. */
	if (!s->agent || L != __atomic_load_n(&s->timer.armed, __ATOMIC_RELAXED))
		return;
	size_t n = ltally_shadow_collect(s, L);
	ltally_shadow_clear(s);
	for (size_t i = n; i-- > 0;)
		ltally_shadow_enter(s, s->walk[i], 0);
	lua_Debug top;
	if (lua_getstack(L, 0, &top) && lua_getinfo(L, "l", &top))
		TALLY_AGENT_PC(s->shadow, top.currentline > 0 ? (uint64_t)top.currentline : 0);
	/* -EAGAIN, a dropped sample, is counted by the agent */
	tally_agent_sample(s->shadow);
}

static void on_tick(int sig)
{
	(void)sig;
	lua_State *L = __atomic_load_n(&ltally_state()->timer.armed, __ATOMIC_RELAXED);
	if (L)
		lua_sethook(L, sample_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

/* SIGPROF to this thread every 1/hz s; NULL or a message. Hooks are per lua_State: the
 * main state's is armed, so time inside a coroutine is charged to the resume that ran it.
 * The samples (opts.caller_samples) go through the agent's sampler thread into the same
 * stream as sample mode's, so a crash leaves them readable up to the last flush. */
const char *ltally_timer_start(struct ltally_timer *tm, lua_State *L, uint32_t hz)
{
	lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
	lua_State *main = lua_tothread(L, -1);
	lua_pop(L, 1);
	struct sigaction sa = { .sa_handler = on_tick, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGPROF };
	ev._sigev_un._tid = gettid();
	long ns = 1000000000L / (hz ? hz : 999);
	struct itimerspec every = { { ns / 1000000000L, ns % 1000000000L },
				    { ns / 1000000000L, ns % 1000000000L } };
	__atomic_store_n(&tm->armed, main, __ATOMIC_RELAXED);
	if (sigaction(SIGPROF, &sa, &tm->old_prof))
		return "tally: cannot handle SIGPROF";
	if (timer_create(CLOCK_MONOTONIC, &ev, &tm->timer)) {
		sigaction(SIGPROF, &tm->old_prof, NULL);
		return "tally: cannot create the sampling timer";
	}
	tm->made = true;
	timer_settime(tm->timer, 0, &every, NULL);
	return NULL;
}

/* A signal sent before the timer was deleted may still come: the handler stays unless
 * the program had one of its own (SIG_DFL would end the process), ignoring it. */
void ltally_timer_stop(struct ltally_timer *tm)
{
	__atomic_store_n(&tm->armed, NULL, __ATOMIC_RELAXED);
	if (!tm->made)
		return;
	timer_delete(tm->timer);
	tm->made = false;
	if (tm->old_prof.sa_handler == SIG_DFL && !(tm->old_prof.sa_flags & SA_SIGINFO))
		signal(SIGPROF, SIG_IGN);
	else
		sigaction(SIGPROF, &tm->old_prof, NULL);
}
