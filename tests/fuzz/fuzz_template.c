/* fuzz_template.c — the template loader's file handling: the bytes as a *.cu file of a
 * template directory, read by ptxjit_open and again by a reload, under a size cap the first
 * byte chooses (64 to 16384 bytes, so that the cap is met often). What fuzz_schema does not
 * reach: the capped whole-file read, the NUL check, the byte order mark and CR handling, the
 * quick look for directives and a family name, and the registry's problem or family.
 * Properties: the open and the reload succeed; a file over the cap is a problem naming the
 * cap, one with a NUL byte (within it) a problem naming its offset; otherwise the file is a
 * family, a problem or a helper, exactly one; a reload of the same bytes gives the same. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "ptxjit.h"

static char dir[64], path[96];

static void remove_dir(void)
{
    unlink(path);
    rmdir(dir);
}

/* The harness's own directory, made once per process. */
static void make_dir(void)
{
    if (dir[0])
        return;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%.40s/ptxjit-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    fuzz_require(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/t.cu", dir);
    atexit(remove_dir);
}

static void quiet(void *user, ptxjit_log_level level, const char *message)
{
    (void)user, (void)level, (void)message;
}

/* What the registry made of the file: 1 a family from it, 2 a problem naming it (in
 * *problem), 0 neither (a helper file). */
static int outcome(ptxjit_context *context, const char **problem)
{
    int family = 0, problems = 0;
    for (int i = 0; i < ptxjit_family_count(context); i++)
        family += strcmp(ptxjit_family_origin(context, i), path) == 0;
    for (int i = 0; i < ptxjit_template_problem_count(context); i++)
        if (strstr(ptxjit_template_problem(context, i), path)) {
            *problem = ptxjit_template_problem(context, i);
            problems++;
        }
    fuzz_require(family + problems <= 1, "the file is one family, one problem or a helper");
    return family ? 1 : problems ? 2 : 0;
}

int fuzz_template(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    make_dir();
    uint64_t cap = 64 + (uint64_t)data[0] * 64;
    const uint8_t *text = data + 1;
    size_t length = size - 1;
    FILE *file = fopen(path, "wb");
    fuzz_require(file && fwrite(text, 1, length, file) == length && fclose(file) == 0,
                 "the template file is written");
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.remote_cache = "";
    options.template_path = dir;
    options.template_max_bytes = cap;
    options.log = quiet;
    ptxjit_context *context = NULL;
    fuzz_require(ptxjit_open(&context, &options) == PTXJIT_OK, "the open succeeds");
    const char *problem = NULL;
    int first = outcome(context, &problem);
    if (length > cap)
        fuzz_require(first == 2 && strstr(problem, "bytes allowed"), "over the cap: a problem");
    else if (memchr(text, '\0', length))
        fuzz_require(first == 2 && strstr(problem, "a NUL byte at offset"),
                     "a NUL byte: a problem naming its offset");
    char *before = problem ? strdup(problem) : NULL;
    fuzz_require(ptxjit_reload_templates(context) == PTXJIT_OK, "the reload succeeds");
    problem = NULL;
    fuzz_require(outcome(context, &problem) == first, "a reload of the same bytes: the same");
    fuzz_require((!before && !problem) || (before && problem && strcmp(before, problem) == 0),
                 "a reload of the same bytes: the same problem");
    free(before);
    ptxjit_close(context);
    return 0;
}
