/* copier.h — the local copies of remote hits, written after the request has its kernel. A
 * remote hit's kernel is in hand once its entry is checked; writing it to this machine's disk
 * (for the node's next process) allocates inodes and takes the file system's journal, which a
 * busy disk can make a request wait for, milliseconds at a time. So one thread per context
 * writes the copies (pj_disk_cache_store_copy), in the order they came; ptxjit_close waits for
 * it, and so does anything that reads the disk cache as a whole (stats, clear, trim, export). */
#ifndef PTXJIT_CACHE_COPIER_H
#define PTXJIT_CACHE_COPIER_H

#include "cache/disk.h"

typedef struct pj_copier pj_copier;

/* A copier for disk, its thread started (copier.c says why now). NULL when out of memory (the
 * caller then writes its copies itself). */
pj_copier *pj_copier_new(pj_disk_cache *disk, const pj_logger *logger);
/* Queues key's entry; artifact is borrowed and must stay unchanged until pj_copier_flush or
 * pj_copier_free returns (a kernel's artifact lives until ptxjit_close). Without a thread (the
 * system refused one, out of memory, or a fork()ed child), writes it now. */
void pj_copier_add(pj_copier *copier, const char *key, const pj_artifact *artifact);
/* Returns once every copy queued so far is written (NULL is fine). On the copier's own thread
 * (an event callback that a copy's store set off) it returns at once: waiting there would wait
 * for itself. */
void pj_copier_flush(pj_copier *copier);
/* Whether the calling thread is copier's (NULL: 0): ptxjit_close refuses to run there, since it
 * joins that thread. */
int pj_copier_is_own_thread(const pj_copier *copier);
/* Flushes, stops the thread, frees (NULL is fine). */
void pj_copier_free(pj_copier *copier);

#endif
