/* dynlib.c — finds and loads an optional library (see dynlib.h for the order of candidates)
 * and resolves its entry points. Fixed buffers only: the out-of-memory tests fail ptxjit's
 * allocations on purpose, and a compiler must not stay unloadable for the whole process
 * because the first request happened to run out of memory. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dynlib.h"

#define CUDA_DEFAULT_ROOT "/usr/local/cuda"

/* One pj_dynlib_open: what it looks for, and the candidates that failed so far. */
typedef struct {
    pj_dynlib *lib;
    const pj_dynlib_spec *spec;
    char tried[2048];
} attempt;

static void appendf(char *buffer, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends to a NUL-terminated buffer; what does not fit is cut. */
static void appendf(char *buffer, size_t size, const char *format, ...)
{
    size_t length = strlen(buffer);
    if (length + 1 >= size)
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(buffer + length, size - length, format, args);
    va_end(args);
}

/* dlerror's text for a candidate, less the "candidate: " it starts with; NULL when the
 * candidate itself does not exist, which its bare name in the list already says. A missing
 * dependency names the dependency, not the candidate, and so is kept. */
static const char *failure_reason(const char *candidate, const char *error)
{
    if (!error)
        return "dlopen failed";
    size_t n = strlen(candidate);
    if (strncmp(error, candidate, n) != 0 || strncmp(error + n, ": ", 2) != 0)
        return error;
    if (strstr(error + n, "No such file or directory"))
        return NULL;
    return error + n + 2;
}

static void note_failure(attempt *a, const char *candidate, const char *why_prefix,
                         const char *why)
{
    appendf(a->tried, sizeof a->tried, "%s%s", a->tried[0] ? ", " : "", candidate);
    if (why)
        appendf(a->tried, sizeof a->tried, " (%s%s)", why_prefix, why);
}

static void keep(pj_dynlib *lib, void *handle, const char *candidate)
{
    struct link_map *map = NULL;
    const char *name = candidate;
    /* The file a soname resolved to, which is what the compiler's memo must remember. */
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
        name = map->l_name;
    lib->handle = handle;
    snprintf(lib->path, sizeof lib->path, "%s", name);
}

/* 1 when candidate loaded and was accepted (it is then lib's); else noted in a->tried. */
static int try_candidate(attempt *a, const char *candidate)
{
    void *handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        note_failure(a, candidate, "", failure_reason(candidate, dlerror()));
        return 0;
    }
    const char *refused = a->spec->check ? a->spec->check(handle, a->spec->check_user) : NULL;
    if (refused) {
        note_failure(a, candidate, "refused: ", refused);
        dlclose(handle);
        return 0;
    }
    keep(a->lib, handle, candidate);
    return 1;
}

/* folder/subfolder/spec->file. */
static int try_in_folder(attempt *a, const char *folder, const char *subfolder)
{
    char path[PJ_DYNLIB_PATH_MAX];
    int n = snprintf(path, sizeof path, "%s%s/%s", folder, subfolder, a->spec->file);
    if (n < 0 || (size_t)n >= sizeof path) {
        note_failure(a, folder, "", "path too long");
        return 0;
    }
    return try_candidate(a, path);
}

/* Beside an installed libptxjit the library lies in the same folder; beside a program in
 * bin/, in ../lib. */
static int try_beside(attempt *a, const char *folder)
{
    return try_in_folder(a, folder, "") || try_in_folder(a, folder, "/../lib");
}

static int try_toolkit(attempt *a, const char *root)
{
    return try_in_folder(a, root, "/lib64") || try_in_folder(a, root, "/lib");
}

/* Cuts a file's path to its folder; 0 if it has none. */
static int to_folder(char *path)
{
    char *slash = strrchr(path, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    return 1;
}

/* The folder of the file (program or shared library) whose code holds address. */
static int folder_of_code(char folder[PJ_DYNLIB_PATH_MAX], const void *address)
{
    Dl_info info;
    if (!address || !dladdr(address, &info) || !info.dli_fname)
        return 0;
    snprintf(folder, PJ_DYNLIB_PATH_MAX, "%s", info.dli_fname);
    return to_folder(folder);
}

static int folder_of_program(char folder[PJ_DYNLIB_PATH_MAX])
{
    ssize_t length = readlink("/proc/self/exe", folder, PJ_DYNLIB_PATH_MAX - 1);
    if (length <= 0)
        return 0;
    folder[length] = '\0';
    return to_folder(folder);
}

/* Whether two folders are one: dladdr names the main program as it was started ("./ptxjit"),
 * /proc/self/exe by its absolute path. */
static int same_place(const char *folder, const char *other)
{
    char resolved[PATH_MAX];
    return strcmp(folder, other) == 0 ||
           (realpath(folder, resolved) && strcmp(resolved, other) == 0);
}

static int try_next_to_code(attempt *a)
{
    unsigned places = a->spec->places;
    char self[PJ_DYNLIB_PATH_MAX], program[PJ_DYNLIB_PATH_MAX];
    int have_self = (places & PJ_DYNLIB_NEXT_TO_SELF) && folder_of_code(self, a->spec->self);
    if (have_self && try_beside(a, self))
        return 1;
    /* A program linked with libptxjit.a is the file holding its code: looked at once. */
    int have_program = (places & PJ_DYNLIB_NEXT_TO_EXE) && folder_of_program(program);
    return have_program && !(have_self && same_place(self, program)) &&
           try_beside(a, program);
}

static int try_sonames(attempt *a)
{
    for (const char *const *name = a->spec->sonames; name && *name; name++)
        if (try_candidate(a, *name))
            return 1;
    return 0;
}

/* Whether two folder names are the same string, but for trailing slashes. */
static int same_folder(const char *x, const char *y)
{
    size_t nx = strlen(x), ny = strlen(y);
    while (nx > 1 && x[nx - 1] == '/')
        nx--;
    while (ny > 1 && y[ny - 1] == '/')
        ny--;
    return nx == ny && strncmp(x, y, nx) == 0;
}

static int try_toolkits(attempt *a)
{
    unsigned places = a->spec->places;
    const char *home = getenv("CUDA_HOME");
    int have_home = (places & PJ_DYNLIB_CUDA_HOME) && home && *home;
    if (have_home && try_toolkit(a, home))
        return 1;
    return (places & PJ_DYNLIB_CUDA_DEFAULT) &&
           !(have_home && same_folder(home, CUDA_DEFAULT_ROOT)) &&
           try_toolkit(a, CUDA_DEFAULT_ROOT);
}

static int try_all(attempt *a)
{
    const pj_dynlib_spec *spec = a->spec;
    const char *override = spec->override ? getenv(spec->override) : NULL;
    if (override && *override) {
        if (try_candidate(a, override))
            return 1;
        if (spec->places & PJ_DYNLIB_OVERRIDE_ALONE)
            return 0;
    }
    return try_next_to_code(a) || try_sonames(a) || (spec->file && try_toolkits(a));
}

int pj_dynlib_open(pj_dynlib *lib, const pj_dynlib_spec *spec)
{
    attempt a = {.lib = lib, .spec = spec};
    lib->handle = NULL;
    lib->path[0] = lib->error[0] = '\0';
    const char *override = spec->override ? getenv(spec->override) : NULL;
    if (override && strcmp(override, "none") == 0) {
        snprintf(lib->error, sizeof lib->error, "%s is turned off ($%s=none): nothing was "
                 "loaded; unset %s to let ptxjit find it", spec->what, spec->override,
                 spec->override);
        return 0;
    }
    if (try_all(&a))
        return 1;
    if (a.tried[0])
        snprintf(lib->error, sizeof lib->error, "cannot load %s (tried %s); %s", spec->what,
                 a.tried, spec->fix);
    else
        snprintf(lib->error, sizeof lib->error, "cannot load %s (no candidate to try); %s",
                 spec->what, spec->fix);
    return 0;
}

void pj_dynlib_close(pj_dynlib *lib)
{
    if (lib->handle)
        dlclose(lib->handle);
    lib->handle = NULL;
    lib->path[0] = '\0';
}

const char *pj_dynlib_resolve(void *handle, const pj_dynlib_symbol *symbols, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        *symbols[i].slot = dlsym(handle, symbols[i].name);
        if (!*symbols[i].slot)
            return symbols[i].name;
    }
    return NULL;
}

void *pj_dynlib_versioned_symbol(void *handle, const char *name, const char *const *suffixes)
{
    for (const char *const *suffix = suffixes; *suffix; suffix++) {
        char symbol[256];
        snprintf(symbol, sizeof symbol, "__%s_%s", name, *suffix);
        void *address = dlsym(handle, symbol);
        if (address)
            return address;
    }
    return NULL;
}

const char *pj_dynlib_resolve_versioned(void *handle, const pj_dynlib_symbol *symbols,
                                        size_t count, const char *const *suffixes)
{
    for (size_t i = 0; i < count; i++) {
        *symbols[i].slot = pj_dynlib_versioned_symbol(handle, symbols[i].name, suffixes);
        if (!*symbols[i].slot)
            return symbols[i].name;
    }
    return NULL;
}
