/* stats.c — the remote tier's counters, in a small text file of the cache directory beside the
 * disk's own (cache/counters.c), or in memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/fileio.h"
#include "remote/stats.h"

static const char *const names[REMOTE_STAT_COUNT] = {
#define PJ_REMOTE_STAT_NAME(name) #name,
    PJ_REMOTE_STAT_LIST(PJ_REMOTE_STAT_NAME)
#undef PJ_REMOTE_STAT_NAME
};

ptxjit_status pj_remote_stats_init(pj_remote_stats *stats, const char *dir)
{
    memset(stats, 0, sizeof *stats);
    if (!dir)
        return PTXJIT_OK;
    struct stat st;
    stats->mode = stat(dir, &st) == 0 && (st.st_mode & S_IWGRP) ? 0660 : 0600;
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "%s/remote-stats", dir);
    stats->path = pj_sb_take(&sb);
    return stats->path ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

void pj_remote_stats_free(pj_remote_stats *stats)
{
    pj_remote_stats_merge(stats);
    free(stats->path);
    stats->path = NULL;
}

static void parse(const char *text, uint64_t values[REMOTE_STAT_COUNT])
{
    for (const char *line = text; *line;) {
        char name[32];
        unsigned long long value;
        if (sscanf(line, "%31s %llu", name, &value) == 2)
            for (int i = 0; i < REMOTE_STAT_COUNT; i++)
                if (strcmp(name, names[i]) == 0)
                    values[i] = value;
        const char *end = strchr(line, '\n');
        line = end ? end + 1 : line + strlen(line);
    }
}

/* The lock's wait: an update holds it for microseconds, and a holder that is stopped must not
 * stall requests. */
#define STATS_WAIT_MS 200

/* One locked read-modify-write (delta NULL: read only). */
static void update_file(pj_remote_stats *stats, const uint64_t *delta, uint64_t *totals)
{
    uint64_t values[REMOTE_STAT_COUNT] = {0};
    int fd = pj_fileio_open_shared_file(stats->path, (mode_t)stats->mode);
    if (fd >= 0 && pj_fileio_flock_within(fd, LOCK_EX, STATS_WAIT_MS) == 0) {
        char text[512];
        ssize_t n = pread(fd, text, sizeof text - 1, 0);
        text[n > 0 ? n : 0] = '\0';
        parse(text, values);
        if (delta) {
            size_t length = 0;
            for (int i = 0; i < REMOTE_STAT_COUNT; i++) {
                values[i] += delta[i];
                length += (size_t)snprintf(text + length, sizeof text - length, "%s %llu\n",
                                           names[i], (unsigned long long)values[i]);
            }
            if (pwrite(fd, text, length, 0) == (ssize_t)length)
                (void)!ftruncate(fd, (off_t)length);
        }
    }
    if (fd >= 0)
        pj_fileio_unlock_and_close(fd);
    if (totals)
        memcpy(totals, values, sizeof values);
}

void pj_remote_stats_add(pj_remote_stats *stats, const uint64_t delta[REMOTE_STAT_COUNT])
{
    for (int i = 0; i < REMOTE_STAT_COUNT; i++)
        if (delta[i])
            __atomic_fetch_add(&stats->pending[i], delta[i], __ATOMIC_RELAXED);
}

void pj_remote_stats_merge(pj_remote_stats *stats)
{
    if (!stats->path)
        return;
    uint64_t delta[REMOTE_STAT_COUNT];
    int any = 0;
    for (int i = 0; i < REMOTE_STAT_COUNT; i++)
        any |= (delta[i] = __atomic_exchange_n(&stats->pending[i], 0, __ATOMIC_RELAXED)) != 0;
    if (any)
        update_file(stats, delta, NULL);
}

void pj_remote_stats_read(pj_remote_stats *stats, uint64_t totals[REMOTE_STAT_COUNT])
{
    if (stats->path) {
        pj_remote_stats_merge(stats);
        update_file(stats, NULL, totals);
        return;
    }
    for (int i = 0; i < REMOTE_STAT_COUNT; i++)
        totals[i] = __atomic_load_n(&stats->pending[i], __ATOMIC_RELAXED);
}
