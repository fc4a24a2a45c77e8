/* main.c — the Check test runner: every suite in suites.h, or those $PTXJIT_TEST_SUITES
 * chooses. The GPU suites run only where a GPU is usable; elsewhere the runner says once why
 * they were left out, so the summary line counts only tests that really ran. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "request/route_llvm.h"
#include "test_util.h"

/* Asks a child process whether a GPU is usable: a CUDA context must not exist in the parent,
 * whose children (one per test) need their own. */
static int gpu_usable(char *reason, size_t size)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 0;
    pid_t child = fork();
    if (child == 0) {
        close(fds[0]);
        ptxjit_options options;
        ptxjit_options_init(&options);
        options.disk_cache = 0;
        ptxjit_context *context = NULL;
        int ok = ptxjit_open(&context, &options) == PTXJIT_OK &&
                 ptxjit_gpu_status(context) == PTXJIT_OK;
        const char *why = ok ? "" : ptxjit_last_error();
        ssize_t written = write(fds[1], why, strlen(why));
        (void)written;
        ptxjit_close(context);
        _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    ssize_t n = child > 0 ? read(fds[0], reason, size - 1) : 0;
    reason[n > 0 ? n : 0] = '\0';
    close(fds[0]);
    int status = 1;
    if (child > 0)
        waitpid(child, &status, 0);
    return child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Whether a word is in a list of words separated by spaces or commas. */
static int in_list(const char *list, const char *word)
{
    size_t length = strlen(word);
    for (const char *s = list; *s;) {
        size_t n = strcspn(s, " ,");
        if (n == length && strncmp(s, word, n) == 0)
            return 1;
        s += n + (s[n] != '\0');
    }
    return 0;
}

/* $PTXJIT_TEST_SUITES names the suites to run ("llvm llvm_reduce"), and
 * $PTXJIT_TEST_SUITES_EXCLUDE those to leave out: `make valgrind` runs the suites that compile
 * through the llvm backend apart, each half with the compilers it uses warmed
 * (tests/warm_compilers.c). */
static int suite_selected(const char *function)
{
    const char *name = function + strlen("suite_");
    /* A build without LLVM has no llvm route to test: main() says so once. */
    if (!pj_llvm_built() && strncmp(name, "llvm", 4) == 0)
        return 0;
    const char *only = getenv("PTXJIT_TEST_SUITES"), *skip = getenv("PTXJIT_TEST_SUITES_EXCLUDE");
    return (!only || in_list(only, name)) && !(skip && in_list(skip, name));
}

int main(void)
{
    if (getenv("PTXJIT_TEST_WARM_COMPILERS"))
        test_warm_compilers();
    char reason[2048];
    int gpu = gpu_usable(reason, sizeof reason); /* before the runner: the child owns nothing */
    if (!pj_llvm_built())
        printf("llvm suites not run (this build has no LLVM: install llvm-19-dev with make deps "
               "and rebuild)\n");
    SRunner *runner = srunner_create(NULL);
#define PJ_SUITE_ADD(name)                                                                 \
    if (suite_selected(#name))                                                             \
        srunner_add_suite(runner, name());
#define PJ_FAMILY_SUITE_ADD(name) PJ_SUITE_ADD(suite_##name)
#define PJ_FAMILY_GPU_SUITE_ADD(name) PJ_SUITE_ADD(suite_##name##_gpu)
    PJ_TEST_SUITES(PJ_SUITE_ADD)
    PJ_FAMILY_LIST(PJ_FAMILY_SUITE_ADD)
    if (gpu) {
        PJ_FAMILY_LIST(PJ_FAMILY_GPU_SUITE_ADD)
        PJ_GPU_TEST_SUITES(PJ_SUITE_ADD)
    } else {
        printf("GPU suites not run (no usable GPU: %s)\n", reason);
    }
#undef PJ_SUITE_ADD
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
