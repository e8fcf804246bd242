#include "hset.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

uint64_t agc_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static uint64_t hash_bytes(const unsigned char *p, size_t n)
{
	return agc_fnv1a(AGC_FNV_BASIS, p, n);
}

static agc_hent **slot(const agc_hset *s, const void *k, size_t n, uint64_t h)
{
	agc_hent **e;

	if (!s->nb)
		return NULL;
	for (e = &s->b[h & (s->nb - 1)]; *e; e = &(*e)->next)
		if ((*e)->hash == h && (*e)->len == n && memcmp((*e)->key, k, n) == 0)
			return e;
	return NULL;
}

bool agc_hset_has(const agc_hset *s, const void *k, size_t n)
{
	return slot(s, k, n, hash_bytes(k, n)) != NULL;
}

int agc_hset_add(agc_hset *s, const void *k, size_t n)
{
	uint64_t h = hash_bytes(k, n);
	agc_hent *e;

	if (slot(s, k, n, h))
		return 0;
	if (s->n >= s->nb) {
		size_t nb = s->nb ? s->nb * 2 : 64, i;
		agc_hent **b = calloc(nb, sizeof(*b));

		if (!b)
			return agc_error_oom();
		for (i = 0; i < s->nb; i++)
			while (s->b[i]) {
				agc_hent *x = s->b[i];

				s->b[i] = x->next;
				x->next = b[x->hash & (nb - 1)];
				b[x->hash & (nb - 1)] = x;
			}
		free(s->b);
		s->b = b;
		s->nb = nb;
	}
	e = malloc(sizeof(*e) + n);
	if (!e)
		return agc_error_oom();
	e->hash = h;
	e->len = n;
	memcpy(e->key, k, n);
	e->next = s->b[h & (s->nb - 1)];
	s->b[h & (s->nb - 1)] = e;
	s->n++;
	return 0;
}

bool agc_hset_del(agc_hset *s, const void *k, size_t n)
{
	agc_hent **e = slot(s, k, n, hash_bytes(k, n)), *x;

	if (!e)
		return false;
	x = *e;
	*e = x->next;
	free(x);
	s->n--;
	return true;
}

const agc_hent *agc_hset_any(const agc_hset *s)
{
	size_t i;

	for (i = 0; i < s->nb; i++)
		if (s->b[i])
			return s->b[i];
	return NULL;
}

void agc_hset_release(agc_hset *s)
{
	size_t i;

	for (i = 0; i < s->nb; i++)
		while (s->b[i]) {
			agc_hent *x = s->b[i];

			s->b[i] = x->next;
			free(x);
		}
	free(s->b);
	memset(s, 0, sizeof(*s));
}
