/* JIT code for the agent's perf map and jitdump: x86-64 machine code for a counting loop
 * (mov ecx, N; 1: dec ecx; jnz 1b; ret) copied into an executable page, registered with
 * the agent as "jit_spin" and called for about a second of CPU time. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <tally/agent.h>

static const unsigned char spin[] = { 0xb9, 0x40, 0x42, 0x0f, 0x00, /* mov ecx, 1000000 */
				      0xff, 0xc9,		    /* dec ecx */
				      0x75, 0xfc,		    /* jnz -4 */
				      0xc3 };			    /* ret */

int main(void)
{
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	memcpy(code, spin, sizeof(spin));
	TALLY_OPTS(tally_agent_opts, o, .jitdump = true);
	struct tally_agent *a;
	if (tally_agent_new(&o, &a) || tally_agent_register_jit(a, "jit_spin", code, sizeof(spin))) {
		fprintf(stderr, "jit_prog: %s\n", tally_errmsg());
		return 1;
	}
	void (*fn)(void) = (void (*)(void))(void *)code;
	struct timespec ts;
	do {
		for (int i = 0; i < 100; i++)
			fn();
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	} while (ts.tv_sec < 1);
	tally_agent_free(a);
	return 0;
}
