/* nvdisasm.c — `ptxjit sass`'s disassembler: a kernel's cubin through nvdisasm, the CUDA
 * toolkit's (SASS encodings are undocumented: ptxjit does not decode them itself). The cubin
 * goes to a private temporary file that nvdisasm reads, run without a shell, its output
 * straight to our stdout; the file is removed whatever happens. */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/nvdisasm.h"

extern char **environ;

#define NVDISASM_DEFAULT "/usr/local/cuda/bin/nvdisasm"

static int executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Each folder of $PATH in turn; 1 with the first nvdisasm found in out. */
static int find_on_path(char *out, size_t size)
{
    const char *path = getenv("PATH");
    for (const char *at = path; at && *at;) {
        size_t length = strcspn(at, ":");
        if (length > 0 && (size_t)snprintf(out, size, "%.*s/nvdisasm", (int)length, at) < size &&
            executable(out))
            return 1;
        at += length + (at[length] == ':');
    }
    return 0;
}

/* $PTXJIT_NVDISASM alone when set; else $CUDA_HOME/bin/nvdisasm, the default toolkit's, and
 * $PATH. 0 with where it looked in tried when there is none. */
static int find_nvdisasm(char *out, size_t size, char *tried, size_t tried_size)
{
    const char *chosen = getenv("PTXJIT_NVDISASM"), *home = getenv("CUDA_HOME");
    if (chosen && *chosen) {
        snprintf(out, size, "%s", chosen);
        snprintf(tried, tried_size, "$PTXJIT_NVDISASM=%s (not an executable file)", chosen);
        return executable(out);
    }
    char home_path[4096] = "";
    if (home && *home) {
        snprintf(home_path, sizeof home_path, "%s/bin/nvdisasm", home);
        snprintf(out, size, "%s", home_path);
        if (executable(out))
            return 1;
    }
    snprintf(out, size, "%s", NVDISASM_DEFAULT);
    if (executable(out) || find_on_path(out, size))
        return 1;
    if (strcmp(home_path, NVDISASM_DEFAULT) == 0)
        home_path[0] = '\0'; /* $CUDA_HOME is the default toolkit: name it once */
    snprintf(tried, tried_size, "%s%s%s, every folder of $PATH", home_path,
             *home_path ? " ($CUDA_HOME), " : "", NVDISASM_DEFAULT);
    return 0;
}

/* A private (0600) copy of the cubin in $TMPDIR or /tmp; 1 with its name in path. */
static int write_temp(char *path, size_t size, const void *cubin, size_t bytes)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, size, "%s/ptxjit-sass-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        fprintf(stderr, "ptxjit: cannot create a temporary file for the cubin in %s: %s; set "
                        "TMPDIR to a writable folder\n",
                dir && *dir ? dir : "/tmp", strerror(errno));
        return 0;
    }
    const char *at = cubin;
    size_t left = bytes;
    while (left > 0) {
        ssize_t n = write(fd, at, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        at += n;
        left -= (size_t)n;
    }
    int failed = left > 0 || close(fd) != 0;
    if (failed) {
        fprintf(stderr, "ptxjit: writing the cubin to %s failed: %s; check the space in its "
                        "folder (or set TMPDIR)\n",
                path, strerror(errno));
        unlink(path);
    }
    return !failed;
}

/* Runs nvdisasm -c (code sections only) on path; its exit status, or -1 after saying why. */
static int run_nvdisasm(const char *program, const char *path)
{
    char *argv[] = {(char *)"nvdisasm", (char *)"-c", (char *)path, NULL};
    fflush(stdout); /* what we printed comes before nvdisasm's output */
    pid_t child;
    int error = posix_spawn(&child, program, NULL, NULL, argv, environ);
    if (error) {
        fprintf(stderr, "ptxjit: cannot run %s: %s\n", program, strerror(error));
        return -1;
    }
    int status;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "ptxjit: waiting for %s failed: %s\n", program, strerror(errno));
            return -1;
        }
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "ptxjit: %s was killed by signal %d\n", program, WTERMSIG(status));
        return -1;
    }
    return WEXITSTATUS(status);
}

int cli_nvdisasm_find(char *program, size_t size)
{
    char tried[8192];
    if (find_nvdisasm(program, size, tried, sizeof tried))
        return CLI_OK;
    fprintf(stderr,
            "ptxjit: sass needs nvdisasm, the CUDA toolkit's disassembler, and found none "
            "(looked at %s); install the toolkit's cuda-nvdisasm package (e.g. apt-get install "
            "cuda-nvdisasm-13-0), or set CUDA_HOME to a toolkit that has bin/nvdisasm, or "
            "PTXJIT_NVDISASM to the program\n",
            tried);
    return CLI_NO_TOOL;
}

int cli_disassemble(const char *program, const void *cubin, size_t bytes)
{
    char path[4096];
    if (!write_temp(path, sizeof path, cubin, bytes))
        return CLI_FAIL;
    int status = run_nvdisasm(program, path);
    unlink(path);
    if (status > 0)
        fprintf(stderr, "ptxjit: %s failed on the cubin (exit status %d; its message is "
                        "above)\n",
                program, status);
    return status == 0 ? CLI_OK : CLI_FAIL;
}
