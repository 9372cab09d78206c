/*
 * The Lua module's profiling session: the one state of the process, starting the agent
 * and the hooks (or the timer) of a mode, and stopping them, which writes the profile.
 * os.exit() without closing the state runs no finalizer, so an atexit handler writes it
 * then, from the agent's own data only (no Lua call).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ltally.h"

static struct ltally state;

struct ltally *ltally_state(void)
{
	return &state;
}

static void stop_hooks(struct ltally *s, lua_State *L)
{
	ltally_timer_stop(&s->timer);
	lua_sethook(L, NULL, 0, 0);
	tally_agent_free(s->agent);
	s->agent = NULL;
	s->t = NULL;
	s->shadow = NULL;
	s->co.cur = NULL;
	ltally_fn_table_free(&s->fns);
	free(s->walk);
	free(s->objs);
	s->walk = NULL;
	s->objs = NULL;
	s->walk_cap = s->objs_cap = 0;
}

static void at_exit(void)
{
	ltally_timer_stop(&state.timer);
	if (state.agent && tally_agent_stop(state.agent))
		fprintf(stderr, "tally: %s\n", tally_errmsg());
}

/* Registers at_exit once, with the module pinned in memory (RTLD_NODELETE): lua_close
 * unloads C modules, and an exit handler must not point into an unmapped library. */
static void hook_exit(void)
{
	static bool done;
	Dl_info di;
	if (done || !dladdr((void *)at_exit, &di) ||
	    !dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE))
		return;
	done = !atexit(at_exit);
}

/* The agent of config c, started; NULL or a message (in tally_errmsg()). */
static const char *start_agent(struct ltally *s, const struct ltally_config *c)
{
	TALLY_OPTS(tally_agent_opts, o, .mode = c->mode, .output = c->output,
		   .exact_output = c->exact_output, .freq_hz = c->hz, .omit_thread = true,
		   .jit_dir = c->registry_dir);
	if (c->mode & LTALLY_MODE_TIMER) {
		o.mode = TALLY_AGENT_SAMPLE;
		o.caller_samples = true;
	}
	if (tally_agent_new(&o, &s->agent))
		return tally_errmsg();
	bool registered = o.mode & (TALLY_AGENT_SAMPLE | TALLY_AGENT_EXACT);
	if ((registered && tally_agent_thread_register(s->agent, &s->t)) ||
	    tally_agent_start(s->agent)) {
		tally_agent_free(s->agent);
		s->agent = NULL;
		return tally_errmsg();
	}
	return NULL;
}

/* Starts profiling L; NULL or a message (static or in tally_errmsg()). */
const char *ltally_start(struct ltally *s, lua_State *L, const struct ltally_config *c)
{
	if (s->agent)
		return "tally: already profiling";
	s->failed = 0;
	const char *err = start_agent(s, c);
	if (err)
		return err;
	hook_exit();
	s->exact = c->mode & TALLY_AGENT_EXACT;
	s->mixed = c->mode & TALLY_AGENT_MIXED;
	s->spare = (struct tally_agent_thread){ .max_depth = LTALLY_SHADOW_FRAMES,
						.frames = s->spare_frames };
	s->shadow = s->t ? s->t : &s->spare;
	if (c->mode & LTALLY_MODE_TIMER) {
		err = ltally_timer_start(&s->timer, L, c->hz);
		if (err)
			stop_hooks(s, L);
		return err;
	}
	s->co = (struct ltally_coroutines){ .cur = NULL }; /* the first hook rebuilds the shadow stack */
	lua_sethook(L, ltally_hook, LUA_MASKCALL | LUA_MASKRET | (s->exact ? LUA_MASKCOUNT : 0),
		    s->exact);
	return NULL;
}

/* Stops and writes; NULL or a message. */
const char *ltally_stop(struct ltally *s, lua_State *L)
{
	static char msg[512];
	if (!s->agent)
		return "tally: not profiling";
	int rc = tally_agent_stop(s->agent);
	if (rc)
		snprintf(msg, sizeof(msg), "tally: %s", tally_errmsg());
	else if (s->failed)
		snprintf(msg, sizeof(msg), "tally: a hook failed (%s): the profile misses events",
			 strerror(-s->failed));
	bool bad = rc || s->failed;
	stop_hooks(s, L);
	return bad ? msg : NULL;
}
