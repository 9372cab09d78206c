/*
 * What other modules use of probes: the USDT counting session, which also records a sample
 * at every hit for tally record -e usdt (session.h), and whether this kernel has the uprobe
 * PMU that session needs. Parsing notes, attaching and following tasks stay behind it.
 */
#ifndef TALLY_PROBES_H
#define TALLY_PROBES_H

#include "probes/session.h"

/* Kernel support: the uprobe PMU's type and the bit where ref_ctr_offset goes in
 * attr.config (-1 when the kernel has no ref_ctr support). -ENOENT without a uprobe PMU. */
struct uprobe_pmu {
	int type;
	int ref_ctr_shift;
};
int uprobe_pmu_probe(struct uprobe_pmu *pmu);

#endif
