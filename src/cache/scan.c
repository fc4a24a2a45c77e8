/* scan.c — walks <dir>/<shard>/<name> with openat and fstatat(AT_SYMLINK_NOFOLLOW), so that
 * a link planted in the cache is never followed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cache/entry.h"
#include "cache/scan.h"

#define HEX "0123456789abcdef"

/* A writer's temp file: ".tmp.<pid>.<n>" in a shard, "<name>.tmp.<pid>.<n>" for the memo. */
static int is_temp_name(const char *name)
{
    return strstr(name, ".tmp.") != NULL;
}

/* A tuning record: "<key>.tune", its key in this shard. */
static int is_record_name(const char *name, const char *shard)
{
    char key[33];
    if (strlen(name) != 32 + strlen(PJ_RECORD_SUFFIX) || strcmp(name + 32, PJ_RECORD_SUFFIX))
        return 0;
    memcpy(key, name, 32);
    key[32] = '\0';
    return pj_entry_key_valid(key) && strncmp(name, shard, 2) == 0;
}

static void visit_file(int top_fd, const char *path, scan_kind kind, scan_visitor *visit,
                       void *user)
{
    struct stat st;
    if (fstatat(top_fd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
        visit(top_fd, path, kind, &st, user);
}

int pj_scan_shard(int top_fd, const char *shard, scan_visitor *visit, void *user)
{
    int fd = openat(top_fd, shard, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    for (struct dirent *e; (e = readdir(dir));) {
        char path[sizeof e->d_name + 4];
        int entry = pj_entry_key_valid(e->d_name) && strncmp(e->d_name, shard, 2) == 0;
        int record = is_record_name(e->d_name, shard);
        if ((!entry && !record && !is_temp_name(e->d_name)) || strlen(e->d_name) > 40)
            continue;
        snprintf(path, sizeof path, "%s/%s", shard, e->d_name);
        visit_file(top_fd, path, entry ? SCAN_ENTRY : record ? SCAN_RECORD : SCAN_TEMP, visit,
                   user);
    }
    closedir(dir); /* closes fd */
    return 0;
}

int pj_scan_cache(const char *dir, scan_visitor *visit, void *user)
{
    DIR *top = opendir(dir);
    if (!top)
        return -1;
    int result = 0, error = 0;
    for (struct dirent *e; (e = readdir(top));) {
        if (strlen(e->d_name) == 2 && strspn(e->d_name, HEX) == 2 &&
            pj_scan_shard(dirfd(top), e->d_name, visit, user) != 0 && errno != ENOENT &&
            errno != ELOOP && errno != ENOTDIR) {
            /* Not gaps: a shard a concurrent clear removed, and a link or a file where a
             * shard would be, which holds nothing of ours and must not block eviction. */
            result = -1;
            error = errno;
        }
        else if (is_temp_name(e->d_name) && strlen(e->d_name) < 64)
            visit_file(dirfd(top), e->d_name, SCAN_TEMP, visit, user);
    }
    closedir(top);
    errno = error;
    return result;
}
