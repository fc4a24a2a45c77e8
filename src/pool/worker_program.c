/* worker_program.c — which program runs as a compile worker, found at run time so that an
 * install anywhere (make install PREFIX=X, a copied tree, a package) finds its own ptxjit
 * instead of a path baked in at build time.
 *
 * The order, first found wins:
 *   1. options.compile_worker, then $PTXJIT_COMPILE_WORKER: a choice someone made explicitly
 *      beats any guess, as $PTXJIT_NVRTC_LIBRARY does for the loader (util/dynlib.h); "" or
 *      "none" turns workers off, a path that is not an executable file is reported;
 *   2. beside the library: the file holding this code (dladdr: libptxjit.so, or the program
 *      that linked libptxjit.a), its folder's ../bin/ptxjit (an installed lib/libptxjit.so),
 *      then ptxjit in that folder itself;
 *   3. ptxjit beside the calling program (/proc/self/exe), unless that is the folder above;
 *   4. ptxjit in each folder of $PATH.
 * A program found by guessing may be another version: the worker's greeting (version and
 * target, worker_process.c) refuses it, and the pool compiles in this process. */
#include <limits.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pool/pool.h"

static int is_program(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* folder/name into program, resolved (the log names the file, not lib/../bin), if that is an
 * executable file. */
static int try_in(char program[PATH_MAX], const char *folder, const char *name)
{
    char path[PATH_MAX];
    int length = snprintf(path, sizeof path, "%s/%s", folder, name);
    return length > 0 && length < PATH_MAX && is_program(path) && realpath(path, program);
}

/* Cuts path to its folder, made absolute (dladdr may name "./prog"); 0 if that fails. */
static int folder_of(char folder[PATH_MAX], const char *path)
{
    char resolved[PATH_MAX];
    if (!realpath(path, resolved))
        return 0;
    char *slash = strrchr(resolved, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    snprintf(folder, PATH_MAX, "%s", *resolved ? resolved : "/");
    return 1;
}

static int beside_library(char program[PATH_MAX], char folder[PATH_MAX])
{
    Dl_info info;
    if (!dladdr((const void *)beside_library, &info) || !info.dli_fname ||
        !folder_of(folder, info.dli_fname))
        return 0;
    return try_in(program, folder, "../bin/ptxjit") || try_in(program, folder, "ptxjit");
}

static int beside_program(char program[PATH_MAX], const char *library_folder)
{
    char folder[PATH_MAX];
    return folder_of(folder, "/proc/self/exe") && strcmp(folder, library_folder) != 0 &&
           try_in(program, folder, "ptxjit");
}

static int on_path(char program[PATH_MAX])
{
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t length = strcspn(path, ":");
        char folder[PATH_MAX];
        /* An empty entry is the current folder, as for execvp. */
        snprintf(folder, sizeof folder, "%.*s", length ? (int)length : 1, length ? path : ".");
        if (length < sizeof folder && try_in(program, folder, "ptxjit"))
            return 1;
        path += length + (path[length] == ':');
    }
    return 0;
}

/* An explicit choice: used as given, or reported. */
static int explicit_program(char program[PATH_MAX], const char *choice, const char *where,
                            const char **why)
{
    static _Thread_local char reason[PATH_MAX + 128];
    if (!*choice || !strcmp(choice, "none")) {
        *why = "compile workers are turned off";
        return 0;
    }
    if (strlen(choice) >= PATH_MAX || !is_program(choice)) {
        snprintf(reason, sizeof reason, "the compile worker %s (%s) is not an executable file",
                 choice, where);
        *why = reason;
        return 0;
    }
    snprintf(program, PATH_MAX, "%s", choice);
    return 1;
}

int pj_worker_program(char program[PATH_MAX], const char *option, const char **why)
{
    const char *env = getenv("PTXJIT_COMPILE_WORKER");
    if (option)
        return explicit_program(program, option, "options.compile_worker", why);
    if (env)
        return explicit_program(program, env, "$PTXJIT_COMPILE_WORKER", why);
    char library_folder[PATH_MAX] = "";
    if (beside_library(program, library_folder) || beside_program(program, library_folder) ||
        on_path(program))
        return 1;
    *why = "no ptxjit program beside libptxjit, beside this program or on $PATH to run as a "
           "compile worker (set $PTXJIT_COMPILE_WORKER or options.compile_worker)";
    return 0;
}
