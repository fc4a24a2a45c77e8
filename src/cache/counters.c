/* counters.c — the shared counters file: "name value" lines, rewritten whole under an
 * exclusive flock so that concurrent processes lose no update. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/counters.h"
#include "cache/fileio.h"

static const char *const names[COUNTER_COUNT] = {
#define PJ_COUNTER_NAME(name) #name,
    PJ_COUNTER_LIST(PJ_COUNTER_NAME)
#undef PJ_COUNTER_NAME
};

/* Parses what it can, line by line; returns how many counters the text held. */
static int parse(const char *text, unsigned long long values[COUNTER_COUNT])
{
    int seen[COUNTER_COUNT] = {0}, found = 0;
    for (const char *line = text; *line;) {
        char name[32];
        unsigned long long value;
        if (sscanf(line, "%31s %llu", name, &value) == 2)
            for (int i = 0; i < COUNTER_COUNT; i++)
                if (!seen[i] && strcmp(name, names[i]) == 0) {
                    values[i] = value;
                    seen[i] = 1;
                    found++;
                }
        const char *end = strchr(line, '\n');
        line = end ? end + 1 : line + strlen(line);
    }
    return found;
}

static void apply(unsigned long long values[COUNTER_COUNT], const int64_t *delta)
{
    for (int i = 0; i < COUNTER_COUNT; i++) {
        if (!delta)
            values[i] = 0;
        else if (delta[i] < 0 && (unsigned long long)-(delta[i] + 1) >= values[i])
            values[i] = 0;
        else
            values[i] += (unsigned long long)delta[i];
    }
}

static void rewrite(int fd, const unsigned long long values[COUNTER_COUNT])
{
    char text[1024];
    size_t length = 0;
    for (int i = 0; i < COUNTER_COUNT; i++)
        length += (size_t)snprintf(text + length, sizeof text - length, "%s %llu\n", names[i],
                                   values[i]);
    if (pwrite(fd, text, length, 0) == (ssize_t)length)
        (void)!ftruncate(fd, (off_t)length);
}

int pj_counters_update(const char *path, mode_t mode, const int64_t *delta, uint64_t *totals)
{
    unsigned long long values[COUNTER_COUNT] = {0};
    int found = -1, changed = !delta;
    int fd = pj_fileio_open_shared_file(path, mode);
    if (fd < 0 || pj_fileio_flock_within(fd, LOCK_EX, PJ_COUNTERS_WAIT_MS) != 0)
        goto done;
    char text[512];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    found = parse(text, values);
    for (int i = 0; delta && i < COUNTER_COUNT; i++)
        changed |= delta[i] != 0;
    apply(values, delta);
    if (changed) /* a read leaves a file with missing counters as it is: see the return */
        rewrite(fd, values);
done:
    if (fd >= 0)
        pj_fileio_unlock_and_close(fd);
    for (int i = 0; totals && i < COUNTER_COUNT; i++)
        totals[i] = values[i];
    return found < 0 ? -1 : found == COUNTER_COUNT;
}
