/* scan.h — walking a cache directory: its entries (<shard>/<key>) and the temporary files
 * that writers leave while they work, or forever when they are killed. */
#ifndef PTXJIT_CACHE_SCAN_H
#define PTXJIT_CACHE_SCAN_H

#include <sys/stat.h>

/* SCAN_RECORD: a tuning record, "<key>.tune" beside the kernels (tune/record.h). */
typedef enum { SCAN_ENTRY, SCAN_TEMP, SCAN_RECORD } scan_kind;
#define PJ_RECORD_SUFFIX ".tune"

/* Called for each regular file found; path is relative to top_fd ("ab/<key>",
 * "ab/.tmp.123.4", or ".tmp..." and "compiler.tmp.123" at the top). Symbolic links,
 * directories and other names are not visited. */
typedef void scan_visitor(int top_fd, const char *path, scan_kind kind, const struct stat *st,
                          void *user);

/* Visits dir (the versioned cache directory). 0 when every shard was read; -1 with errno
 * when dir itself, or one of its shards, could not be (the others are still visited): the
 * caller then knows that what it counted is not the whole cache. */
int pj_scan_cache(const char *dir, scan_visitor *visit, void *user);
/* Visits one shard only (shard: "ab"); top_fd is dir's. */
int pj_scan_shard(int top_fd, const char *shard, scan_visitor *visit, void *user);

#endif
