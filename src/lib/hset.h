/* A set of byte strings (a chained hash table): membership in constant time where a run over
 * many items would otherwise compare each with every other. */
#ifndef AGC_HSET_H
#define AGC_HSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct agc_hent {
	struct agc_hent *next;
	uint64_t hash;
	size_t len;
	unsigned char key[];
} agc_hent;

typedef struct agc_hset {
	agc_hent **b;
	size_t nb, n;
} agc_hset;

/* FNV-1a of n bytes at p, going on from h (AGC_FNV_BASIS to begin): the hash of the sets, and
 * the identity of a listed process (proc.h). */
#define AGC_FNV_BASIS 1469598103934665603ULL
uint64_t agc_fnv1a(uint64_t h, const void *p, size_t n);

bool agc_hset_has(const agc_hset *s, const void *k, size_t n);
/* Add k (n bytes, copied) once. Returns 0 or -1 (out of memory, error set). */
int agc_hset_add(agc_hset *s, const void *k, size_t n);
/* Remove k; true when it was there. */
bool agc_hset_del(agc_hset *s, const void *k, size_t n);
/* Any one element, or NULL. */
const agc_hent *agc_hset_any(const agc_hset *s);
void agc_hset_release(agc_hset *s);

#endif
