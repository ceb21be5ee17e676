/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A circular doubly linked list with the links inside the element (like the kernel's list_head):
 * entries sit on several lists at once with no allocation. */
#ifndef NFSD_UC_BC_LIST_H
#define NFSD_UC_BC_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct bc_list {
	struct bc_list *prev, *next;
};

#define bc_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

static inline void bc_list_init(struct bc_list *h)
{
	h->prev = h->next = h;
}

static inline bool bc_list_empty(const struct bc_list *h)
{
	return h->next == h;
}

static inline void bc_list_add_tail(struct bc_list *h, struct bc_list *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

/* Leaves n linked to itself, so deleting it twice is harmless. */
static inline void bc_list_del(struct bc_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	bc_list_init(n);
}

#endif
