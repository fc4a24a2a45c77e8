/* directory.c — the cache root, its directories, and the trust check on them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/directory.h"
#include "cache/fileio.h"

ptxjit_status pj_directory_resolve_root(char **out, const char *root)
{
    const char *env = getenv("PTXJIT_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    pj_strbuf sb;
    pj_sb_init(&sb);
    if (root && *root)
        pj_sb_append(&sb, root);
    else if (env && *env)
        pj_sb_append(&sb, env);
    else if (xdg && *xdg)
        pj_sb_appendf(&sb, "%s/ptxjit", xdg);
    else if (home && *home)
        pj_sb_appendf(&sb, "%s/.cache/ptxjit", home);
    else
        return pj_error(PTXJIT_ERR_CACHE, "no cache directory: HOME is not set; set "
                                          "PTXJIT_CACHE_DIR or disable the disk cache");
    char *path = pj_sb_take(&sb);
    if (!path)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t n = strlen(path); n > 1 && path[n - 1] == '/'; n--)
        path[n - 1] = '\0';
    *out = path;
    return PTXJIT_OK;
}

/* Sets the mode of the directory just made at path, which mkdir's umask may have narrowed.
 * Through a descriptor opened without following links, and only on a directory of ours: in
 * a shared cache another member could have put a link in its place, and a chmod by name
 * would then widen whatever the link points to. */
static int set_mode(const char *path, mode_t mode)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    int result = fstat(fd, &st);
    if (result == 0 && st.st_uid != geteuid()) {
        errno = EPERM;
        result = -1;
    }
    if (result == 0)
        result = fchmod(fd, mode);
    int error = errno;
    close(fd);
    errno = error;
    return result;
}

static int make_one(const char *path, mode_t mode, int follow)
{
    if (pj_fileio_mkdir(path, mode) == 0)
        return set_mode(path, mode);
    int error = errno;
    struct stat st;
    if ((follow ? stat(path, &st) : lstat(path, &st)) == 0 && S_ISDIR(st.st_mode))
        return 0;
    errno = error == EEXIST ? ENOTDIR : error;
    return -1;
}

int pj_directory_make(const char *path, mode_t mode)
{
    return make_one(path, mode, 0);
}

/* The usual case, a directory that is already there, costs one stat; a missing one is made
 * with one mkdir when its parent exists, and only otherwise parent by parent. */
int pj_directory_make_all(const char *path, mode_t mode)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    if (make_one(path, mode, 1) == 0)
        return 0;
    if (errno != ENOENT)
        return -1;
    char *copy = pj_strdup(path);
    if (!copy) {
        errno = ENOMEM;
        return -1;
    }
    int result = 0;
    for (char *slash = strchr(copy + 1, '/'); slash && result == 0;
         slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        result = make_one(copy, mode, 1);
        *slash = '/';
    }
    if (result == 0)
        result = make_one(copy, mode, 1);
    int error = errno;
    free(copy);
    errno = error;
    return result;
}

ptxjit_status pj_directory_check_trust(const char *path, int shared)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return pj_error(PTXJIT_ERR_CACHE, "cannot use cache directory %s: %s", path,
                        strerror(errno));
    return pj_directory_check_trust_stat(path, &st, shared, geteuid());
}

ptxjit_status pj_directory_check_trust_stat(const char *path, const struct stat *stat_of_path,
                                            int shared, uid_t euid)
{
    static const char *const share = "or set PTXJIT_CACHE_SHARED=1 to share it with its "
                                     "group on purpose (docs/RELIABILITY.md)";
    const struct stat st = *stat_of_path;
    unsigned mode = (unsigned)st.st_mode & 07777;
    if (!S_ISDIR(st.st_mode))
        return pj_error(PTXJIT_ERR_CACHE, "cache directory %s is not a directory", path);
    if (st.st_mode & S_IWOTH)
        return pj_error(PTXJIT_ERR_CACHE,
                        "cache directory %s is writable by every user (mode %04o), who could "
                        "put code into this process; not even a shared cache may be: chmod o-w "
                        "%s, or use another directory (PTXJIT_CACHE_DIR)",
                        path, mode, path);
    if (shared)
        return PTXJIT_OK;
    if (st.st_uid != euid)
        return pj_error(PTXJIT_ERR_CACHE,
                        "cache directory %s belongs to user %ld, not to you (user %ld), who "
                        "could put code into this process; use a directory of your own "
                        "(PTXJIT_CACHE_DIR), %s",
                        path, (long)st.st_uid, (long)euid, share);
    if (st.st_mode & S_IWGRP)
        return pj_error(PTXJIT_ERR_CACHE,
                        "cache directory %s is writable by its group (mode %04o), who could "
                        "put code into this process; chmod g-w %s, %s",
                        path, mode, path, share);
    return PTXJIT_OK;
}
