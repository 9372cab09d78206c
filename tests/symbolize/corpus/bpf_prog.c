/*
 * Symbolizer corpus, eBPF: built with `clang -target bpf -g -O2 -c` into a relocatable
 * object whose .debug_* sections need R_BPF_64_* relocations applied before they mean
 * anything. Everything stays in .text (no SEC() attributes), so an address names one place.
 * Plain C, no system headers: the bpf target has no libc.
 */
typedef unsigned long long u64;
typedef unsigned int u32;

#define ALWAYS_INLINE inline __attribute__((always_inline))

struct packet {
	u32 len;
	u32 proto;
	u64 data[8];
};

static ALWAYS_INLINE u64 mix(u64 h, u64 v)
{
	h ^= v;
	h *= 0x100000001b3ull;
	return h ^ (h >> 29);
}

static ALWAYS_INLINE u64 mix_all(const struct packet *p)
{
	u64 h = 0xcbf29ce484222325ull;
	for (int i = 0; i < 8; i++)
		h = mix(h, p->data[i]);
	return h;
}

static __attribute__((noinline)) u64 classify(const struct packet *p)
{
	if (p->proto == 6)
		return mix_all(p) & 0xff;
	if (p->proto == 17)
		return mix(p->len, p->proto);
	return 0;
}

static ALWAYS_INLINE u64 account(const struct packet *p, u64 *counter)
{
	u64 c = classify(p);
	*counter += c + p->len;
	return c;
}

u64 bpf_entry(struct packet *p, u64 *counter)
{
	if (p->len > 1500)
		return 1;
	return account(p, counter) ^ classify(p);
}

u64 bpf_second(struct packet *p, u64 *counter)
{
	u64 r = 0;
	for (int i = 0; i < 4; i++)
		r += mix(r, p->data[i]);
	*counter = r;
	return account(p, counter);
}
