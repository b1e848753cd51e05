/* util_prng — SplitMix64, the one PRNG of the project (BENCH.md defines the
 * benchmark workloads with it; the simulator and tests use it for seeds). */
#ifndef UBIKIT_UTIL_PRNG_H
#define UBIKIT_UTIL_PRNG_H
#include <stdint.h>

struct util_prng {
	uint64_t state;
};

static inline void util_prng_seed(struct util_prng *r, uint64_t seed)
{
	r->state = seed;
}

static inline uint64_t util_prng_next(struct util_prng *r)
{
	uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform-enough integer in [0, n): output modulo n, as BENCH.md defines it. */
static inline uint64_t util_prng_below(struct util_prng *r, uint64_t n)
{
	return n ? util_prng_next(r) % n : 0;
}

/* Fill buf with pseudo-random (incompressible) bytes. */
static inline void util_prng_fill(struct util_prng *r, void *buf, uint64_t len)
{
	uint8_t *p = buf;
	while (len >= 8) {
		uint64_t v = util_prng_next(r);
		for (int i = 0; i < 8; i++)
			p[i] = (uint8_t)(v >> (8 * i));
		p += 8;
		len -= 8;
	}
	if (len) {
		uint64_t v = util_prng_next(r);
		for (uint64_t i = 0; i < len; i++)
			p[i] = (uint8_t)(v >> (8 * i));
	}
}

#endif
