/* directory.h — where the disk cache lives, making its directories, and whether to trust
 * them: a cache holds code that ptxjit loads into the process, so whoever can write the
 * directory can run code as us. */
#ifndef PTXJIT_CACHE_DIRECTORY_H
#define PTXJIT_CACHE_DIRECTORY_H

#include <sys/types.h>

#include "internal.h"

/* Modes of what the cache creates: private to the user, or shared with the directory's
 * group (set-group-ID, so that new directories keep the group). */
#define PJ_PRIVATE_DIR_MODE 0700
#define PJ_PRIVATE_FILE_MODE 0600
#define PJ_SHARED_DIR_MODE 02770
#define PJ_SHARED_FILE_MODE 0660

/* The root: root if not NULL or empty, else $PTXJIT_CACHE_DIR, else $XDG_CACHE_HOME/ptxjit,
 * else $HOME/.cache/ptxjit; without trailing slashes; caller frees. No $HOME is an error
 * rather than a guessable shared path such as /tmp. */
ptxjit_status pj_directory_resolve_root(char **out, const char *root);

/* mkdir of one level with mode (exactly: the umask does not apply); an existing directory
 * is fine and kept as it is. -1 with errno otherwise (ENOTDIR for an existing non-directory,
 * a symbolic link included: the cache's own directories are never links). */
int pj_directory_make(const char *path, mode_t mode);
/* mkdir -p with mode for every level it creates; existing levels may be links (a root
 * under a linked home directory is ordinary). */
int pj_directory_make_all(const char *path, mode_t mode);

/* PTXJIT_OK when path is a directory we may take code from: owned by us and writable by
 * nobody else, or (shared) writable by its group but never by every user. Otherwise
 * PTXJIT_ERR_CACHE naming the directory, what is wrong and the fix. */
ptxjit_status pj_directory_check_trust(const char *path, int shared);
/* The same for the stat of path already taken (an open directory's fstat), for the effective
 * user euid. */
struct stat;
ptxjit_status pj_directory_check_trust_stat(const char *path, const struct stat *stat_of_path,
                                            int shared, uid_t euid);

#endif
