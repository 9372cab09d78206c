/*
 * `tally sbpf test DIR --bench FILE.md`: each fixture's CU in a table of Mollusk's bencher
 * layout (solana/cu_bench.h), compared with the newest table FILE.md already holds. A CU
 * that grew past the threshold fails the run and leaves FILE.md as it was; otherwise a
 * table with the new deltas goes before the old ones (FILE.md replaced atomically), unless
 * no CU changed, which leaves it as it is, as Mollusk does.
 */
#ifndef TALLY_CLI_SBPF_BENCH_H
#define TALLY_CLI_SBPF_BENCH_H

#include <stdint.h>

#include "solana/cu_bench.h"

struct cli_sbpf_bench {
	const char *path;
	struct sol_bench_threshold threshold; /* default 0 CU: any growth fails */
	uint8_t *old;                        /* FILE.md's bytes; NULL when it did not exist */
	size_t old_len;
	struct sol_bench prev, now;
};

/* Reads and parses FILE.md (a missing file is no previous table): 0, or a negative code
 * with the message set ("FILE.md: line N: what"). */
int cli_sbpf_bench_open(struct cli_sbpf_bench *b, const char *path,
		    const struct sol_bench_threshold *threshold);
/* A fixture's CU, under its name: 0 or a negative code with the message set. */
int cli_sbpf_bench_record(struct cli_sbpf_bench *b, const char *name, uint64_t cu);
/* Compares and writes, printing what changed: CLI_OK or CLI_FAIL. */
int cli_sbpf_bench_finish(struct cli_sbpf_bench *b);
void cli_sbpf_bench_free(struct cli_sbpf_bench *b);

#endif
