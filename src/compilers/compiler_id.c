/* compiler_id.c — remembers which compiler library (NVRTC; nvJitLink for the LLVM route) a
 * cache directory was filled with. The memo holds the library path dlopen chose, its size and
 * mtime, a fingerprint of what steers dlopen's choice (the override variables,
 * LD_LIBRARY_PATH, /etc/ld.so.cache), and the version it reported. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compilers/compiler_id.h"
#include "compilers/nvjitlink.h"
#include "compilers/nvrtc.h"

/* The memo's fields; as read, the strings point into the text of its file (memo_text). */
typedef struct {
    const char *library;
    long long size, mtime;
    const char *environment;
    const char *version;
} compiler_memo;

/* The memo file's text: a library path (at most PATH_MAX) and a few short lines. Only the
 * bytes read are touched: a fresh process's disk hit reads the memo on a cold stack, where a
 * zeroed buffer of pages would cost a page fault each. */
typedef struct {
    char bytes[4096 + 512];
} memo_text;

const pj_compiler_probe pj_compiler_nvrtc = {"PTXJIT_NVRTC_LIBRARY", pj_nvrtc_load,
                                          pj_nvrtc_version_string, pj_nvrtc_library_path};
const pj_compiler_probe pj_compiler_nvjitlink = {"PTXJIT_NVJITLINK_LIBRARY", pj_nvjitlink_load,
                                              pj_nvjitlink_version_string, pj_nvjitlink_library_path};

static void environment_fingerprint(char out[33], const pj_compiler_probe *probe)
{
    pj_hasher *hasher = pj_hasher_new();
    if (!hasher) {
        out[0] = '\0';
        return;
    }
    const char *names[] = {probe->override_variable, "LD_LIBRARY_PATH", "CUDA_HOME"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(names); i++)
        pj_hasher_field_str(hasher, names[i], getenv(names[i]));
    struct stat st;
    long long cache[2] = {0, 0};
    if (stat("/etc/ld.so.cache", &st) == 0)
        cache[0] = (long long)st.st_size, cache[1] = (long long)st.st_mtime;
    pj_hasher_field(hasher, "ld.so.cache", cache, sizeof cache);
    pj_hash128 hash = pj_hasher_digest(hasher);
    pj_hasher_free(hasher);
    pj_hash_hex(&hash, out);
}

static int file_identity(const char *path, long long *size, long long *mtime)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    *size = (long long)st.st_size;
    *mtime = (long long)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
    return 1;
}

/* "NAME VALUE\n" at *at: VALUE (up to the line's end, NUL-terminated in place) into *out,
 * *at past the line; 0 when the line is not NAME's or is empty. */
static int memo_line(char **at, const char *name, const char **out)
{
    size_t n = strlen(name);
    if (strncmp(*at, name, n) != 0 || (*at)[n] != ' ')
        return 0;
    char *value = *at + n + 1, *end = strchr(value, '\n');
    if (!end || end == value)
        return 0;
    *end = '\0';
    *out = value;
    *at = end + 1;
    return 1;
}

static int memo_number(char **at, const char *name, long long *out)
{
    const char *text;
    char *end;
    if (!memo_line(at, name, &text))
        return 0;
    errno = 0;
    *out = strtoll(text, &end, 10);
    return errno == 0 && end != text && *end == '\0';
}

/* One read(2) of the small memo file and a scan of its five lines, in order: a disk hit reads
 * it once per context, and stdio (its buffers, locks and scanf's machinery, the first time in
 * a process) costs more than the read. */
static int read_memo(compiler_memo *memo, memo_text *text, const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n;
    do
        n = read(fd, text->bytes, sizeof text->bytes - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n <= 0)
        return 0;
    text->bytes[n] = '\0';
    char *at = text->bytes;
    return memo_line(&at, "library", &memo->library) && memo_number(&at, "size", &memo->size) &&
           memo_number(&at, "mtime", &memo->mtime) &&
           memo_line(&at, "environment", &memo->environment) &&
           memo_line(&at, "version", &memo->version);
}

/* A new temp file for the memo, readable by the cache's group whatever the umask (a shared
 * cache's other users read it too). O_EXCL | O_NOFOLLOW: a link planted at this
 * predictable name is never followed; a leftover of a dead process with our pid (and the
 * same count) is removed once. */
static FILE *create_memo_temp(const char *temp)
{
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    int fd = open(temp, flags, 0644);
    if (fd < 0 && errno == EEXIST && unlink(temp) == 0)
        fd = open(temp, flags, 0644);
    if (fd < 0)
        return NULL;
    FILE *file = fchmod(fd, 0644) == 0 ? fdopen(fd, "w") : NULL;
    if (!file) {
        close(fd);
        unlink(temp);
    }
    return file;
}

/* Written whole or not at all (temp file + rename); a lost memo only costs a dlopen. */
static void write_memo(const compiler_memo *memo, const char *path)
{
    static unsigned long writes; /* threads of a process write memos at once: a name each */
    char temp[4200];
    snprintf(temp, sizeof temp, "%s.tmp.%ld.%lu", path, (long)getpid(),
             __atomic_add_fetch(&writes, 1, __ATOMIC_RELAXED));
    FILE *file = create_memo_temp(temp);
    if (!file)
        return;
    fprintf(file, "library %s\nsize %lld\nmtime %lld\nenvironment %s\nversion %s\n",
            memo->library, memo->size, memo->mtime, memo->environment, memo->version);
    if (fclose(file) != 0 || rename(temp, path) != 0)
        unlink(temp);
}

ptxjit_status pj_compiler_version_of(const pj_compiler_probe *probe, char *out, size_t size,
                                  const char *memo_path)
{
    char environment[33];
    environment_fingerprint(environment, probe);
    if (!environment[0]) /* out of memory: no fingerprint to compare, so no memo */
        memo_path = NULL;
    compiler_memo memo;
    memo_text text;
    long long now_size, now_mtime;
    if (memo_path && read_memo(&memo, &text, memo_path) &&
        strcmp(memo.environment, environment) == 0 &&
        file_identity(memo.library, &now_size, &now_mtime) && now_size == memo.size &&
        now_mtime == memo.mtime) {
        pj_copy_string(out, size, memo.version);
        return PTXJIT_OK;
    }
    ptxjit_status status = probe->load();
    if (status != PTXJIT_OK)
        return status;
    snprintf(out, size, "%s", probe->version());
    const char *library = probe->library();
    compiler_memo now = {library, 0, 0, environment, probe->version()};
    if (memo_path && library && strlen(library) < sizeof text.bytes - 512 &&
        !strchr(library, '\n') && file_identity(library, &now.size, &now.mtime))
        write_memo(&now, memo_path);
    return PTXJIT_OK;
}
