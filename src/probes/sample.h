/*
 * --args: every hit of a sampling uprobe records the user registers and the top of the
 * stack; the arguments are decoded from those (memory elsewhere is read from the process
 * when the sample is processed, a few milliseconds later) and tallied per probe and
 * argument. One ring buffer per followed task, which the events of all sites on that task
 * write into (PERF_EVENT_IOC_SET_OUTPUT).
 */
#ifndef TALLY_PROBES_SAMPLE_H
#define TALLY_PROBES_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "probes/attach.h"
#include "probes/session.h"

struct usdt_hist;

struct usdt_sampler {
	struct uprobe_sampling cfg;
	enum usdt_arch arch;
	struct sampler_site {
		struct usdt_object *obj;
		struct usdt_probe *probe;
		size_t row;
	} *sites;
	size_t nsites;
	struct sampler_ring {
		int fd;
		pid_t tid;
		uint8_t *base;
		size_t size; /* data area */
	} *rings;
	size_t nrings;
	struct sampler_id {
		uint64_t id;
		size_t site;
	} *ids;
	size_t nids;
	struct usdt_hist *hists; /* per row and argument, grown as rows appear */
	size_t nhists;
	uint64_t lost;
};

int usdt_sampler_init(struct usdt_sampler *s, const struct usdt_objects *objs, size_t nsites,
		      size_t nrows);
const struct uprobe_sampling *usdt_sampler_config(const struct usdt_sampler *s);
void usdt_sampler_set_site(struct usdt_sampler *s, size_t i, struct usdt_object *obj,
			   struct usdt_probe *probe, size_t row);
/* Whether decoding p's arguments reads process memory beyond the stack copy (a global,
 * memory through a register): then the task must be stopped at each hit until its
 * sample is decoded, or the value read would be a later one. */
bool usdt_sampler_needs_stop(const struct usdt_sampler *s, const struct usdt_probe *p);
/* Registers an opened sampling event of site i on task tid. */
int usdt_sampler_add(struct usdt_sampler *s, int fd, pid_t tid, size_t site);
/* Decodes and tallies whatever the rings hold. */
void usdt_sampler_drain(struct usdt_sampler *s);
/* Fills the top values of each row's arguments. */
void usdt_sampler_finish(struct usdt_sampler *s, struct usdt_count_result *res);
void usdt_sampler_free(struct usdt_sampler *s);

#endif
