/* test_compile_inputs.c — what goes into a compile: headers found from the template's own
 * directory and the -I dirs and hashed into the key, compile errors cited at the template's
 * own lines, the documented dtype-branch pattern, and compile options (validated, canonical,
 * in the key and the disk entry, refused for backend=llvm, shown by inspect). */
#include <dlfcn.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "request/route_llvm.h"
#include "request/directives.h"
#include "cache/disk.h"
#include "cache/entry.h"
#include "request/key.h"
#include "request/context.h"
#include "test_util.h"

/* ---- helpers ---- */

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *file = fopen(path, "w");
    ck_assert_msg(file != NULL, "cannot write %s", path);
    fputs(text, file);
    ck_assert_int_eq(fclose(file), 0);
}

static char *make_subdir(const char *dir, const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    return pj_strdup(path);
}

/* The last warning the context logged, and how many. */
typedef struct {
    int warnings;
    char last[4096];
} log_capture;

static void capture(void *user, ptxjit_log_level level, const char *message)
{
    log_capture *c = user;
    if (level != PTXJIT_LOG_WARNING)
        return;
    c->warnings++;
    snprintf(c->last, sizeof c->last, "%s", message);
}

/* A context for templates in template_dir (NULL: built-ins only), its disk cache in cache_dir
 * (NULL: none), with the given compile options (NULL: the default); includes confined or not
 * (then as $PTXJIT_CONFINE_INCLUDES says). */
static ptxjit_context *open_with(const char *template_dir, const char *cache_dir,
                                 const char *compile_options, log_capture *log, int confine)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.confine_includes = confine;
    options.template_path = template_dir;
    options.disk_cache = cache_dir != NULL;
    options.cache_dir = cache_dir;
    options.compile_options = compile_options;
    if (log) {
        options.log = capture;
        options.log_user = log;
    }
    ptxjit_context *context = NULL;
    ck_assert_msg(ptxjit_open(&context, &options) == PTXJIT_OK, "%s", ptxjit_last_error());
    return context;
}

static ptxjit_context *open_context(const char *template_dir, const char *cache_dir,
                                    const char *compile_options, log_capture *log)
{
    return open_with(template_dir, cache_dir, compile_options, log, 0);
}

static ptxjit_kernel *get(ptxjit_context *context, const char *family, const char *params,
                          const char *options, ptxjit_origin want)
{
    ptxjit_kernel *kernel = NULL;
    ptxjit_origin origin = PTXJIT_ORIGIN_MEMORY;
    ck_assert_msg(ptxjit_get_kernel_ex(&kernel, context, family, params, options, &origin) ==
                      PTXJIT_OK,
                  "%s %s [%s]: %s", family, params, options ? options : "",
                  ptxjit_last_error());
    ck_assert_msg(origin == want, "%s %s [%s]: origin %d, expected %d", family, params,
                  options ? options : "", origin, want);
    return kernel;
}

/* The key of family's default request in a fresh context (no disk cache), and optionally
 * whether its PTX holds needle. */
static void key_of(char out[33], const char *templates, const char *family, const char *options,
                   const char *needle)
{
    ptxjit_context *context = open_context(templates, NULL, NULL, NULL);
    ptxjit_kernel *kernel = get(context, family, "", options, PTXJIT_ORIGIN_COMPILED);
    snprintf(out, 33, "%s", ptxjit_kernel_key(kernel));
    if (needle)
        ck_assert_msg(strstr(ptxjit_kernel_ptx(kernel), needle), "the PTX lacks %s", needle);
    ptxjit_close(context);
}

/* The `scale` template: FACTOR times what helper.cuh (found from the template) defines. */
#define SCALE_TEMPLATE                                                                        \
    "//@ptxjit family scale\n//@ptxjit entry scale_kernel\n"                                  \
    "//@ptxjit param factor int(1..100) default=3\n"                                          \
    "#include \"helper.cuh\"\n"                                                               \
    "extern \"C\" __global__ void scale_kernel(int *x) { x[0] = FACTOR * HELPER_VALUE; }\n"

/* ---- includes ---- */

START_TEST(include_resolves_against_the_template_not_the_working_directory)
{
    char *templates = test_mkdtemp(), *elsewhere = test_mkdtemp(), cwd[4096];
    write_file(templates, "scale.cu", SCALE_TEMPLATE);
    write_file(templates, "helper.cuh", "enum { HELPER_VALUE = 1234 };\n");
    /* A decoy in the working directory: NVRTC would take it for a program named "scale.cu". */
    write_file(elsewhere, "helper.cuh", "enum { HELPER_VALUE = 999 };\n");
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(chdir(elsewhere), 0);
    char key[33];
    key_of(key, templates, "scale", NULL, "3702"); /* 3 * 1234 */
    ck_assert_int_eq(chdir(cwd), 0);
    test_rmtree(templates);
    test_rmtree(elsewhere);
    free(templates);
    free(elsewhere);
}
END_TEST

START_TEST(edited_header_changes_the_key_and_the_disk_cache_compiles_anew)
{
    char *templates = test_mkdtemp(), *cache = test_mkdtemp();
    write_file(templates, "scale.cu", SCALE_TEMPLATE);
    write_file(templates, "helper.cuh", "enum { HELPER_VALUE = 1234 };\n");
    ptxjit_context *context = open_context(templates, cache, NULL, NULL);
    char before[33];
    snprintf(before, sizeof before, "%s",
             ptxjit_kernel_key(get(context, "scale", "", NULL, PTXJIT_ORIGIN_COMPILED)));
    ptxjit_close(context);
    context = open_context(templates, cache, NULL, NULL); /* unchanged: a disk hit */
    get(context, "scale", "", NULL, PTXJIT_ORIGIN_DISK);
    ptxjit_close(context);
    write_file(templates, "helper.cuh", "enum { HELPER_VALUE = 1000 };\n");
    context = open_context(templates, cache, NULL, NULL);
    ptxjit_kernel *kernel = get(context, "scale", "", NULL, PTXJIT_ORIGIN_COMPILED);
    ck_assert_str_ne(ptxjit_kernel_key(kernel), before);
    ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(kernel), "3000"));
    ck_assert_ptr_null(strstr(ptxjit_kernel_ptx(kernel), "3702"));
    ptxjit_close(context);
    test_rmtree(templates);
    test_rmtree(cache);
    free(templates);
    free(cache);
}
END_TEST

/* In a live context the exact request seen before is answered from memory without reading
 * its headers again (the fast path), so an edited header reaches it only after
 * ptxjit_reload_templates; a request of another text goes through the pipeline, hashes the
 * headers and compiles with the edit (docs/EMBEDDING.md, "Includes"). */
START_TEST(a_live_context_serves_the_old_header_to_a_repeated_request_until_reload)
{
    char *templates = test_mkdtemp();
    write_file(templates, "scale.cu", SCALE_TEMPLATE);
    write_file(templates, "helper.cuh", "enum { HELPER_VALUE = 1234 };\n");
    ptxjit_context *context = open_context(templates, NULL, NULL, NULL);
    ptxjit_kernel *first = get(context, "scale", "", NULL, PTXJIT_ORIGIN_COMPILED);
    write_file(templates, "helper.cuh", "enum { HELPER_VALUE = 1000 };\n");
    ck_assert_ptr_eq(get(context, "scale", "", NULL, PTXJIT_ORIGIN_MEMORY), first);
    ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(first), "3702")); /* 3 * 1234: the old */
    ptxjit_kernel *other = get(context, "scale", "factor=3", NULL, PTXJIT_ORIGIN_COMPILED);
    ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(other), "3000")); /* 3 * 1000: the edit */
    ck_assert_str_ne(ptxjit_kernel_key(other), ptxjit_kernel_key(first));
    ck_assert_int_eq(ptxjit_reload_templates(context), PTXJIT_OK);
    ptxjit_kernel *again = get(context, "scale", "", NULL, PTXJIT_ORIGIN_MEMORY);
    ck_assert_str_eq(ptxjit_kernel_key(again), ptxjit_kernel_key(other));
    ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(first), "3702")); /* still valid */
    ptxjit_close(context);
    test_rmtree(templates);
    free(templates);
}
END_TEST

/* A template from memory has no directory, but may include a header by its absolute path,
 * which NVRTC opens as written: that header is in the key too. */
START_TEST(memory_template_absolute_include_is_in_the_key)
{
    char *headers = test_mkdtemp(), *cache = test_mkdtemp();
    char text[8192];
    snprintf(text, sizeof text,
             "//@ptxjit family scale\n//@ptxjit entry scale_kernel\n"
             "//@ptxjit param factor int(1..100) default=3\n"
             "#include \"%s/helper.cuh\"\n"
             "extern \"C\" __global__ void scale_kernel(int *x) { x[0] = FACTOR * "
             "HELPER_VALUE; }\n",
             headers);
    char keys[2][33];
    for (int round = 0; round < 2; round++) {
        write_file(headers, "helper.cuh", round ? "enum { HELPER_VALUE = 1000 };\n"
                                                : "enum { HELPER_VALUE = 1234 };\n");
        ptxjit_context *context = open_context(NULL, cache, NULL, NULL);
        ck_assert_int_eq(ptxjit_add_template(context, "scale.cu", text), PTXJIT_OK);
        ptxjit_kernel *kernel = get(context, "scale", "", NULL, PTXJIT_ORIGIN_COMPILED);
        snprintf(keys[round], 33, "%s", ptxjit_kernel_key(kernel));
        ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(kernel), round ? "3000" : "3702"));
        ptxjit_close(context);
    }
    ck_assert_str_ne(keys[0], keys[1]);
    test_rmtree(headers);
    test_rmtree(cache);
    free(headers);
    free(cache);
}
END_TEST

/* The template includes "outer.cuh" (its dir), which includes "nested.cuh" (next to it), and
 * <extra.cuh> from an -I dir, which includes "inner.cuh": found next to extra.cuh first, as
 * NVRTC finds it, though the template's dir has one too. */
START_TEST(nested_and_include_dir_headers_are_in_the_key)
{
    char *templates = test_mkdtemp(), *user = test_mkdtemp(), options[4200];
    write_file(templates, "nest.cu",
               "//@ptxjit family nest\n//@ptxjit entry nest_kernel\n"
               "#include \"outer.cuh\"\n#include <extra.cuh>\n"
               "extern \"C\" __global__ void nest_kernel(int *x)\n"
               "{\n    x[0] = OUTER;\n    x[1] = EXTRA;\n}\n");
    write_file(templates, "outer.cuh", "#include \"nested.cuh\"\nenum { OUTER = NESTED + 1 };\n");
    write_file(templates, "nested.cuh", "enum { NESTED = 4000 };\n");
    write_file(templates, "inner.cuh", "enum { INNER = 7 };\n"); /* shadowed for extra.cuh */
    write_file(user, "extra.cuh", "#include \"inner.cuh\"\nenum { EXTRA = INNER * 1000 };\n");
    write_file(user, "inner.cuh", "enum { INNER = 5 };\n");
    snprintf(options, sizeof options, "-I %s", user);
    char base[33], key[33];
    key_of(base, templates, "nest", options, "5000");
    key_of(key, templates, "nest", options, "4001");
    ck_assert_str_eq(key, base);
    write_file(templates, "nested.cuh", "enum { NESTED = 6000 };\n");
    key_of(key, templates, "nest", options, "6001");
    ck_assert_str_ne(key, base);
    snprintf(base, sizeof base, "%s", key);
    write_file(user, "inner.cuh", "enum { INNER = 8 };\n");
    key_of(key, templates, "nest", options, "8000");
    ck_assert_str_ne(key, base);
    /* The shadowed copy is not what NVRTC reads: not in the key either. */
    snprintf(base, sizeof base, "%s", key);
    write_file(templates, "inner.cuh", "enum { INNER = 9 };\n");
    key_of(key, templates, "nest", options, "8000");
    ck_assert_str_eq(key, base);
    test_rmtree(templates);
    test_rmtree(user);
    free(templates);
    free(user);
}
END_TEST

/* A header in a user -I dir, included by a built-in-like template without a directory: the
 * -I dir alone is searched. Here through a user template including <helper.cuh> from -I. */
START_TEST(angle_include_from_an_include_dir_is_in_the_key)
{
    char *templates = test_mkdtemp(), *user = test_mkdtemp(), options[4200];
    write_file(templates, "angle.cu",
               "//@ptxjit family angle\n//@ptxjit entry angle_kernel\n#include <helper.cuh>\n"
               "extern \"C\" __global__ void angle_kernel(int *x) { x[0] = HELPER_VALUE; }\n");
    write_file(user, "helper.cuh", "enum { HELPER_VALUE = 4321 };\n");
    snprintf(options, sizeof options, "-I%s", user);
    char before[33], after[33];
    key_of(before, templates, "angle", options, "4321");
    write_file(user, "helper.cuh", "enum { HELPER_VALUE = 4322 };\n");
    key_of(after, templates, "angle", options, "4322");
    ck_assert_str_ne(before, after);
    test_rmtree(templates);
    test_rmtree(user);
    free(templates);
    free(user);
}
END_TEST

static ptxjit_status get_status(ptxjit_context *context, const char *family, const char *params,
                                const char *options)
{
    ptxjit_kernel *kernel = NULL;
    return ptxjit_get_kernel_ex(&kernel, context, family, params, options, NULL);
}

START_TEST(include_scan_is_bounded_and_leaves_missing_headers_to_nvrtc)
{
    char *templates = test_mkdtemp(), name[64], text[256];
    /* deep.cu includes h0.cuh, which includes h1.cuh, ... h39.cuh. */
    write_file(templates, "deep.cu",
               "//@ptxjit family deep\n//@ptxjit entry k\n#include \"h0.cuh\"\n"
               "extern \"C\" __global__ void k(int *x) { x[0] = 1; }\n");
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "h%d.cuh", i);
        snprintf(text, sizeof text, "#pragma once\n#include \"h%d.cuh\"\n", i + 1);
        write_file(templates, name, i < 39 ? text : "#pragma once\n");
    }
    /* wide.cu includes 300 headers. */
    pj_strbuf wide;
    pj_sb_init(&wide);
    pj_sb_append(&wide, "//@ptxjit family wide\n//@ptxjit entry k\n");
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof name, "w%d.cuh", i);
        write_file(templates, name, "#pragma once\n");
        pj_sb_appendf(&wide, "#include \"w%d.cuh\"\n", i);
    }
    pj_sb_append(&wide, "extern \"C\" __global__ void k(int *x) { x[0] = 1; }\n");
    write_file(templates, "wide.cu", wide.data);
    pj_sb_free(&wide);
    write_file(templates, "missing.cu",
               "//@ptxjit family missing\n//@ptxjit entry k\n#include \"not_there.cuh\"\n"
               "extern \"C\" __global__ void k(int *x) { x[0] = 1; }\n");
    ptxjit_context *context = open_context(templates, NULL, NULL, NULL);
    ck_assert_int_eq(get_status(context, "deep", "", NULL), PTXJIT_ERR_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "nest deeper than 32"));
    ck_assert_int_eq(get_status(context, "wide", "", NULL), PTXJIT_ERR_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "more than 256 headers"));
    ck_assert_int_eq(get_status(context, "missing", "", NULL), PTXJIT_ERR_COMPILE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "not_there.cuh"));
    ptxjit_close(context);
    test_rmtree(templates);
    free(templates);
}
END_TEST

/* Two include sets that differ in a path or a content give different keys. */
START_TEST(key_covers_each_header_path_and_content)
{
    const char *options[] = {"-arch=sm_90a"};
    pj_include_file files[2] = {{"/a/helper.cuh", {1, 2}}, {"/a/other.cuh", {3, 4}}};
    pj_include_set set = {files, 2, 2, SIZE_MAX};
    pj_key_inputs in = {"f",    "p=1",   "text", "nvrtc", "nvrtc 13.0", "sm_90a",
                        options, 1,      3,      &set,    NULL,         NULL};
    pj_hash128 base, changed, none;
    ck_assert_int_eq(pj_cache_key(&base, &in), PTXJIT_OK);
    files[1].content.low = 5;
    ck_assert_int_eq(pj_cache_key(&changed, &in), PTXJIT_OK);
    ck_assert(changed.low != base.low || changed.high != base.high);
    files[1].content.low = 3;
    files[1].path = "/b/other.cuh";
    ck_assert_int_eq(pj_cache_key(&changed, &in), PTXJIT_OK);
    ck_assert(changed.low != base.low || changed.high != base.high);
    in.includes = NULL;
    ck_assert_int_eq(pj_cache_key(&none, &in), PTXJIT_OK);
    ck_assert(none.low != base.low || none.high != base.high);
}
END_TEST

/* What directives.c finds, each case as NVRTC 13.0 was seen to read it: the first directive
 * of text, its kind, form, name and line ("" for none found). */
START_TEST(directives_are_read_as_the_preprocessor_reads_them)
{
    static const struct {
        const char *text;
        pj_directive_kind kind;
        pj_name_form form;
        const char *name;
        int line;
    } cases[] = {
        {"#include \"a.h\"\n", PJ_DIRECTIVE_INCLUDE, PJ_NAME_QUOTED, "a.h", 1},
        {"x\n  #  include <a.h>\n", PJ_DIRECTIVE_INCLUDE, PJ_NAME_ANGLED, "a.h", 2},
        {"%:include \"a.h\"\n", PJ_DIRECTIVE_INCLUDE, PJ_NAME_QUOTED, "a.h", 1},
        {"# /* c */ include \"a.h\"\n", PJ_DIRECTIVE_INCLUDE, PJ_NAME_QUOTED, "a.h", 1},
        {"#/*\n*/include \"a.h\"\n", PJ_DIRECTIVE_INCLUDE, PJ_NAME_QUOTED, "a.h", 1},
        {"#\\\ninclude \"a.h\"\n", PJ_DIRECTIVE_INCLUDE, PJ_NAME_QUOTED, "a.h", 1},
        {"#inc\\\r\nlude \"a\\\n.h\"\n", PJ_DIRECTIVE_INCLUDE, PJ_NAME_QUOTED, "a.h", 1},
        {"\f#\vinclude\r\"a.h\"\n", PJ_DIRECTIVE_INCLUDE, PJ_NAME_QUOTED, "a.h", 1},
        {"int a; /*\n*/ #include \"a.h\"\n", PJ_DIRECTIVE_INCLUDE, PJ_NAME_QUOTED, "a.h", 2},
        {"#include <a/*b>\n", PJ_DIRECTIVE_INCLUDE, PJ_NAME_ANGLED, "a/*b", 1},
        {"#define H \"a.h\"\n#include H\n", PJ_DIRECTIVE_INCLUDE, PJ_NAME_COMPUTED, NULL, 2},
        {"#include \"a.h\n", PJ_DIRECTIVE_INCLUDE, PJ_NAME_COMPUTED, NULL, 1},
        {"#include_next <a.h>\n", PJ_DIRECTIVE_INCLUDE_NEXT, PJ_NAME_ANGLED, "a.h", 1},
        {"#import \"a.h\"\n", PJ_DIRECTIVE_IMPORT, PJ_NAME_QUOTED, "a.h", 1},
        {"#embed \"a.bin\"\n", PJ_DIRECTIVE_EMBED, PJ_NAME_QUOTED, "a.bin", 1},
        {"#if __has_include( <a.h> )\n", PJ_DIRECTIVE_HAS_INCLUDE, PJ_NAME_ANGLED, "a.h", 1},
        {"#if __has_include(H)\n", PJ_DIRECTIVE_HAS_INCLUDE, PJ_NAME_COMPUTED, NULL, 1},
        {"#define P __has_include\n", PJ_DIRECTIVE_HAS_INCLUDE, PJ_NAME_COMPUTED, NULL, 1},
        {"#if __has_include_next(\"a\")\n", PJ_DIRECTIVE_HAS_INCLUDE_NEXT, PJ_NAME_QUOTED, "a", 1},
        /* Comments, literals and numbers hide nothing they do not hide from the compiler. */
        {"int c = 1'000; /* x */\n#include \"a.h\"\n", PJ_DIRECTIVE_INCLUDE, PJ_NAME_QUOTED,
         "a.h", 2},
        {"char c = '\"';\n#include \"a.h\"\n", PJ_DIRECTIVE_INCLUDE, PJ_NAME_QUOTED, "a.h", 2},
        {"auto s = LR\"(/*)\";\n#include \"a.h\"\n", PJ_DIRECTIVE_INCLUDE, PJ_NAME_QUOTED, "a.h",
         2},
        {"auto f = 0x1p-3 + 1e+5;\n#include \"a.h\"\n", PJ_DIRECTIVE_INCLUDE, PJ_NAME_QUOTED,
         "a.h", 2},
        /* A line that reads as an include is found in a comment too (as before: spare). */
        {"/*\n#include \"a.h\"\n*/\n", PJ_DIRECTIVE_INCLUDE, PJ_NAME_QUOTED, "a.h", 2},
        /* Found by neither: not directives NVRTC reads. */
        {"#ifdef __has_include\n#if defined(__has_include)\n", 0, 0, "", 0},
        {"#\\u0069nclude \"a.h\"\n", 0, 0, "", 0},
        {"#inc\\ \nlude \"a.h\"\n", 0, 0, "", 0},
        {"// #include \"a.h\"\n", 0, 0, "", 0},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        pj_directives found;
        ck_assert_int_eq(pj_directives_find(&found, cases[i].text, strlen(cases[i].text)), 0);
        const char *name = cases[i].name;
        if (name && !*name) {
            ck_assert_msg(found.count == 0, "case %zu: %d found", i, found.count);
        } else {
            ck_assert_msg(found.count >= 1, "case %zu: nothing found", i);
            const pj_directive *d = &found.items[0];
            ck_assert_msg(d->kind == cases[i].kind && d->form == cases[i].form &&
                              d->line == cases[i].line,
                          "case %zu: kind %d form %d line %d", i, d->kind, d->form, d->line);
            ck_assert_msg(name ? d->name && strcmp(d->name, name) == 0 : !d->name,
                          "case %zu: name '%s'", i, d->name ? d->name : "(none)");
        }
        pj_directives_free(&found);
    }
    /* What the lexer cannot read as every compiler does is reported; #line renumbers. */
    const char nul[] = "int a;\n\0\n#include \"a.h\"\n";
    pj_directives found;
    ck_assert_int_eq(pj_directives_find(&found, nul, sizeof nul - 1), 0);
    ck_assert_int_eq(found.nul_line, 2);
    ck_assert_int_eq(found.count, 1); /* read past the NUL, as NVRTC reads a header */
    pj_directives_free(&found);
    const char *raw = "auto s = R\"x(\n)x\\\n\" /* )x\";\n#include \"a.h\"\n// */\n";
    ck_assert_int_eq(pj_directives_find(&found, raw, strlen(raw)), 0);
    ck_assert_int_eq(found.raw_splice_line, 1);
    ck_assert_int_eq(found.count, 1); /* the line's include, found as text */
    pj_directives_free(&found);
    const char *numbered = "x\n#line 10 \"f.cu\"\n#include \"a.h\"\n";
    ck_assert_int_eq(pj_directives_find(&found, numbered, strlen(numbered)), 0);
    ck_assert_int_eq(pj_directives_line(&found, found.items[0].line), 10);
    pj_directives_free(&found);
}
END_TEST

/* An include spelled as the preprocessor also reads it (a digraph, a comment or a
 * backslash-newline inside the directive) is found, so its header is in the key. */
START_TEST(includes_in_any_spelling_are_in_the_key)
{
    const char *spellings[] = {"%:include \"helper.cuh\"", "# /* c */ include \"helper.cuh\"",
                               "#inc\\\nlude \"helper.cuh\""};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(spellings); i++) {
        char *templates = test_mkdtemp(), text[1024], before[33], after[33];
        snprintf(text, sizeof text,
                 "//@ptxjit family spelled\n//@ptxjit entry k\n%s\n"
                 "extern \"C\" __global__ void k(int *x) { x[0] = HELPER_VALUE; }\n",
                 spellings[i]);
        write_file(templates, "spelled.cu", text);
        write_file(templates, "helper.cuh", "enum { HELPER_VALUE = 1234 };\n");
        key_of(before, templates, "spelled", NULL, "1234");
        write_file(templates, "helper.cuh", "enum { HELPER_VALUE = 4321 };\n");
        key_of(after, templates, "spelled", NULL, "4321");
        ck_assert_msg(strcmp(before, after) != 0, "%s: the header is not in the key",
                      spellings[i]);
        test_rmtree(templates);
        free(templates);
    }
}
END_TEST

/* ---- a header edited while the kernel compiles (the stand-in NVRTC edits it) ---- */

static void *load_shim(char *path, size_t size)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    ck_assert_int_gt(n, 0);
    self[n] = '\0';
    snprintf(path, size, "%s/libpjtest_nvrtc_shim.so", dirname(self));
    void *shim = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(shim != NULL, "%s (make builds it with the test runner)", dlerror());
    return shim;
}

static void edit_helper(void *dir)
{
    write_file(dir, "helper.cuh", "enum { HELPER_VALUE = 2000 };\n");
}

START_TEST(header_edited_during_the_compile_keeps_the_kernel_off_disk)
{
    char shim_path[4200];
    void *shim = load_shim(shim_path, sizeof shim_path);
    void (*during)(void (*)(void *), void *) =
        (void (*)(void (*)(void *), void *))dlsym(shim, "pjtest_shim_during_compile");
    ck_assert_ptr_nonnull(during);
    setenv("PTXJIT_NVRTC_LIBRARY", shim_path, 1);
    char *templates = test_mkdtemp(), *cache = test_mkdtemp();
    write_file(templates, "scale.cu", SCALE_TEMPLATE);
    write_file(templates, "helper.cuh", "enum { HELPER_VALUE = 1234 };\n");
    during(edit_helper, templates);
    log_capture log = {0};
    ptxjit_context *context = open_context(templates, cache, NULL, &log);
    get(context, "scale", "", NULL, PTXJIT_ORIGIN_COMPILED); /* compiled from the edit */
    during(NULL, NULL);
    ck_assert_int_eq(log.warnings, 1);
    ck_assert_ptr_nonnull(strstr(log.last, "helper.cuh changed"));
    ck_assert_ptr_nonnull(strstr(log.last, "not saved to the disk cache"));
    ptxjit_cache_stats stats;
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, context), PTXJIT_OK);
    ck_assert_uint_eq(stats.stores, 0);
    ptxjit_close(context);
    /* The next context hashes the header as it is now and compiles its own kernel. */
    context = open_context(templates, cache, NULL, NULL);
    ptxjit_kernel *kernel = get(context, "scale", "", NULL, PTXJIT_ORIGIN_COMPILED);
    ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(kernel), "6000"));
    ptxjit_close(context);
    unsetenv("PTXJIT_NVRTC_LIBRARY");
    test_rmtree(templates);
    test_rmtree(cache);
    free(templates);
    free(cache);
}
END_TEST

/* ---- compile errors at the template's own lines ---- */

START_TEST(compile_error_cites_the_template_file_and_line)
{
    char *templates = test_mkdtemp();
    write_file(templates, "broken.cu",
               "//@ptxjit family broken\n"              /* 1 */
               "//@ptxjit entry broken_kernel\n"        /* 2 */
               "//@ptxjit param factor int(1..9) default=2\n" /* 3 */
               "\n"                                     /* 4 */
               "extern \"C\" __global__ void broken_kernel(int *x)\n" /* 5 */
               "{\n"                                    /* 6 */
               "    x[0] = FACTOR * not_declared;\n"    /* 7 */
               "}\n");
    ptxjit_context *context = open_context(templates, NULL, NULL, NULL);
    ck_assert_int_eq(get_status(context, "broken", "factor=4", NULL), PTXJIT_ERR_COMPILE);
    const char *message = ptxjit_last_error();
    ck_assert_msg(strstr(message, "broken.cu(7)"), "%s", message);
    ck_assert_ptr_nonnull(strstr(message, "broken.cu around line 7:"));
    ck_assert_ptr_nonnull(strstr(message, "    7 |     x[0] = FACTOR * not_declared;"));
    ck_assert_ptr_nonnull(strstr(message, "    5 | extern \"C\""));
    /* Embedders are pointed at calls, not at the command line. */
    ck_assert_ptr_nonnull(strstr(message, "ptxjit_last_compile_source()"));
    ck_assert_ptr_nonnull(strstr(message, "ptxjit_specialize()"));
    ck_assert_ptr_null(strstr(message, "ptxjit source"));
    /* An error in the prelude (a define that clashes with a parameter's name) is cited as the
     * prelude's, with the generated lines. */
    ck_assert_int_eq(get_status(context, "broken", "", "-DFACTOR=5"), PTXJIT_ERR_COMPILE);
    message = ptxjit_last_error();
    ck_assert_msg(strstr(message, "ptxjit prelude("), "%s", message);
    ck_assert_ptr_nonnull(strstr(message, "the generated prelude around line"));
    ck_assert_ptr_nonnull(strstr(message, "compile options -DFACTOR=5"));
    ptxjit_close(context);
    test_rmtree(templates);
    free(templates);
}
END_TEST

/* ---- the dtype-branch patterns of docs/TEMPLATES.md ---- */

/* As documented: type-specific calls branch inside a function template (the discarded
 * branches are never instantiated, so nothing but the prelude is included), and code written
 * through DTYPE alone (a conversion) needs no branch at all. */
#define DTYPE_TEMPLATE                                                                        \
    "//@ptxjit family convert\n//@ptxjit entry convert_kernel\n"                              \
    "//@ptxjit param dtype dtype(i32,f32,f64,f16,bf16) default=f32\n"                         \
    "template <typename T> __device__ float to_float(T v)\n{\n"                               \
    "    if constexpr (DTYPE_ID == DTYPE_BF16)\n        return __bfloat162float(v);\n"        \
    "    else if constexpr (DTYPE_ID == DTYPE_F16)\n        return __half2float(v);\n"        \
    "    else\n        return static_cast<float>(v);\n}\n"                                    \
    "extern \"C\" __global__ void convert_kernel(const DTYPE *in, float *out)\n{\n"            \
    "    out[threadIdx.x] = to_float(in[threadIdx.x]) + static_cast<float>(in[0]);\n}\n"

/* What the documentation warns of: outside a template the discarded branch is still
 * compiled, so at f32 it names a function no header declared. */
#define DTYPE_COUNTER_EXAMPLE                                                                 \
    "//@ptxjit family convert\n//@ptxjit entry convert_kernel\n"                              \
    "//@ptxjit param dtype dtype(f32,bf16) default=f32\n"                                      \
    "extern \"C\" __global__ void convert_kernel(const DTYPE *in, float *out)\n{\n"            \
    "    if constexpr (DTYPE_ID == DTYPE_BF16)\n"                                              \
    "        out[0] = __bfloat162float(in[0]);\n    else\n        out[0] = in[0];\n}\n"

START_TEST(dtype_branch_pattern_compiles_at_every_dtype)
{
    char *templates = test_mkdtemp();
    write_file(templates, "convert.cu", DTYPE_TEMPLATE);
    ptxjit_context *context = open_context(templates, NULL, NULL, NULL);
    const char *dtypes[] = {"dtype=i32", "dtype=f32", "dtype=f64", "dtype=f16", "dtype=bf16"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(dtypes); i++)
        ck_assert_ptr_nonnull(strstr(
            ptxjit_kernel_ptx(get(context, "convert", dtypes[i], NULL, PTXJIT_ORIGIN_COMPILED)),
            ".entry convert_kernel("));
    ptxjit_close(context);
    write_file(templates, "convert.cu", DTYPE_COUNTER_EXAMPLE);
    context = open_context(templates, NULL, NULL, NULL);
    get(context, "convert", "dtype=bf16", NULL, PTXJIT_ORIGIN_COMPILED);
    ck_assert_int_eq(get_status(context, "convert", "dtype=f32", NULL), PTXJIT_ERR_COMPILE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_compile_log(), "__bfloat162float"));
    ptxjit_close(context);
    test_rmtree(templates);
    free(templates);
}
END_TEST

/* ---- compile options ---- */

START_TEST(each_allowed_option_is_accepted_in_canonical_form)
{
    char *dir = test_mkdtemp(), *one = make_subdir(dir, "one"), *two = make_subdir(dir, "two");
    char options[8400], expected[8400];
    snprintf(options, sizeof options,
             "  -G -DPJ_A -DPJ_B=2\t-I %s -I%s -DPJ_A --use_fast_math -lineinfo -I %s "
             "-DPJ_C=x+1 ",
             one, two, one);
    snprintf(expected, sizeof expected,
             "-DPJ_A -DPJ_B=2 -DPJ_C=x+1 -I%s -I%s -lineinfo -use_fast_math -G", one, two);
    ptxjit_context *context = open_context(NULL, NULL, NULL, NULL);
    ptxjit_kernel *kernel = get(context, "reduce", "variant=one_pass", options,
                                PTXJIT_ORIGIN_COMPILED);
    ck_assert_str_eq(ptxjit_kernel_compile_options(kernel), expected);
    kernel = get(context, "reduce", "variant=one_pass", "-use_fast_math",
                 PTXJIT_ORIGIN_COMPILED);
    ck_assert_str_eq(ptxjit_kernel_compile_options(kernel), "-use_fast_math");
    kernel = get(context, "reduce", "variant=one_pass", NULL, PTXJIT_ORIGIN_COMPILED);
    ck_assert_str_eq(ptxjit_kernel_compile_options(kernel), "");
    ck_assert_ptr_null(ptxjit_kernel_compile_options(NULL));
    ptxjit_close(context);
    test_rmtree(dir);
    free(one), free(two), free(dir);
}
END_TEST

/* The context's options (or $PTXJIT_COMPILE_OPTIONS when there are none) come first. */
START_TEST(context_options_and_environment_come_before_the_request)
{
    ptxjit_context *context = open_context(NULL, NULL, "-DCTX=1 -lineinfo", NULL);
    ptxjit_kernel *kernel = get(context, "reduce", "", "-DREQ=2", PTXJIT_ORIGIN_COMPILED);
    ck_assert_str_eq(ptxjit_kernel_compile_options(kernel), "-DCTX=1 -DREQ=2 -lineinfo");
    ck_assert_int_eq(get_status(context, "reduce", "", "-DCTX=2"), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "defines CTX again"));
    ptxjit_close(context);
    setenv("PTXJIT_COMPILE_OPTIONS", "-DENV=3", 1);
    context = open_context(NULL, NULL, NULL, NULL);
    kernel = get(context, "reduce", "", NULL, PTXJIT_ORIGIN_COMPILED);
    ck_assert_str_eq(ptxjit_kernel_compile_options(kernel), "-DENV=3");
    ptxjit_close(context);
    context = open_context(NULL, NULL, "", NULL); /* given, though empty: no environment */
    kernel = get(context, "reduce", "", NULL, PTXJIT_ORIGIN_COMPILED);
    ck_assert_str_eq(ptxjit_kernel_compile_options(kernel), "");
    ptxjit_close(context);
    setenv("PTXJIT_COMPILE_OPTIONS", "-o /tmp/x", 1);
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "$PTXJIT_COMPILE_OPTIONS"));
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "'-o'"));
    unsetenv("PTXJIT_COMPILE_OPTIONS");
    options.compile_options = "-Xcompiler";
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "'-Xcompiler'"));
}
END_TEST

START_TEST(keys_differ_by_options_and_the_fast_path_holds_them)
{
    char *dir = test_mkdtemp(), options[4200], attached[4200];
    snprintf(options, sizeof options, "-I %s", dir);
    snprintf(attached, sizeof attached, "-I%s", dir);
    const char *sets[] = {NULL,        "-DPJ_X=1",       "-DPJ_X=2", "-DPJ_X",
                          "-lineinfo", "-use_fast_math", options};
    char keys[PJ_ARRAY_SIZE(sets)][33];
    ptxjit_context *context = open_context(NULL, NULL, NULL, NULL);
    ptxjit_kernel *kernels[PJ_ARRAY_SIZE(sets)];
    for (size_t i = 0; i < PJ_ARRAY_SIZE(sets); i++) {
        kernels[i] = get(context, "reduce", "variant=one_pass", sets[i], PTXJIT_ORIGIN_COMPILED);
        snprintf(keys[i], 33, "%s", ptxjit_kernel_key(kernels[i]));
        for (size_t j = 0; j < i; j++)
            ck_assert_str_ne(keys[i], keys[j]);
    }
    /* The same request again: the fast path, per options text. */
    ck_assert_ptr_eq(get(context, "reduce", "variant=one_pass", "-DPJ_X=2", PTXJIT_ORIGIN_MEMORY),
                     kernels[2]);
    ck_assert_ptr_eq(get(context, "reduce", "variant=one_pass", "", PTXJIT_ORIGIN_MEMORY),
                     kernels[0]);
    /* Another spelling of the same options: the same key, the same kernel. */
    ck_assert_ptr_eq(get(context, "reduce", "variant=one_pass", attached, PTXJIT_ORIGIN_MEMORY),
                     kernels[6]);
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(option_injection_is_refused)
{
    const char *refused[][2] = {
        {"-DX=1 --some-flag", "'--some-flag' is not allowed"},
        {"-D X;rm", "'-D' is not allowed"},
        {"-DX;rm", "not a C identifier"},
        {"-I/nonexistent", "/nonexistent"},
        {"-I", "needs a directory"},
        {"-Xcompiler", "'-Xcompiler' is not allowed"},
        {"-o x", "'-o' is not allowed"},
        {"-arch=sm_80", "'-arch=sm_80' is not allowed"},
        {"--std=c++20", "is not allowed"},
        {"-DX=\"a\"", "without spaces, quotes or backslashes"},
        {"-DX='a'", "without spaces, quotes or backslashes"},
        {"-DX=a\\b", "without spaces, quotes or backslashes"},
        {"-D1X=2", "not a C identifier"},
        {"-DX=1 -DX=2", "defines X again with another value"},
        {"-DX -DX=1", "defines X again"},
    };
    ptxjit_context *context = open_context(NULL, NULL, NULL, NULL);
    for (size_t i = 0; i < PJ_ARRAY_SIZE(refused); i++) {
        ck_assert_msg(get_status(context, "reduce", "", refused[i][0]) ==
                          PTXJIT_ERR_INVALID_ARGUMENT,
                      "'%s' was accepted", refused[i][0]);
        ck_assert_msg(strstr(ptxjit_last_error(), refused[i][1]), "'%s': '%s' lacks '%s'",
                      refused[i][0], ptxjit_last_error(), refused[i][1]);
    }
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "give each name one value"));
    get_status(context, "reduce", "", "-Xcompiler");
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "allowed: -DNAME"));
    ptxjit_close(context);
    /* Options made to pass through the disk-cache file name or the key: none is possible,
     * since nothing but the closed list gets through. Too many is refused too. */
    pj_strbuf many;
    pj_sb_init(&many);
    for (int i = 0; i < 60; i++)
        pj_sb_appendf(&many, "-DN%d ", i);
    context = open_context(NULL, NULL, NULL, NULL);
    ck_assert_int_eq(get_status(context, "reduce", "", many.data), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "more than 48 compile options"));
    pj_sb_free(&many);
    ptxjit_close(context);
}
END_TEST

/* Refused before any compiler loads: with no plugin to be found, a load would say so. */
START_TEST(llvm_refuses_compile_options_before_loading_anything)
{
    setenv("PTXJIT_LLVM_LIBRARY", "/nonexistent/libptxjit_llvm.so", 1);
    setenv("PTXJIT_NVJITLINK_LIBRARY", "/nonexistent/libnvJitLink.so", 1);
    ptxjit_context *context = open_context(NULL, NULL, NULL, NULL);
    ck_assert_int_eq(get_status(context, "reduce", "backend=llvm", "-DX=1"),
                     PTXJIT_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "compile options apply to backend=nvrtc"));
    ptxjit_close(context);
    context = open_context(NULL, NULL, "-lineinfo", NULL); /* the context's count too */
    ck_assert_int_eq(get_status(context, "reduce", "backend=llvm", NULL), PTXJIT_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "'-lineinfo'"));
    char *source = NULL; /* and what the llvm route would compile is not made either */
    ck_assert_int_eq(ptxjit_specialize(&source, context, "reduce", "backend=llvm"),
                     PTXJIT_ERR_UNSUPPORTED);
    ptxjit_close(context);
    unsetenv("PTXJIT_LLVM_LIBRARY");
    unsetenv("PTXJIT_NVJITLINK_LIBRARY");
}
END_TEST

START_TEST(defines_reach_the_code)
{
    char *templates = test_mkdtemp();
    write_file(templates, "scaled.cu",
               "//@ptxjit family scaled\n//@ptxjit entry scaled_kernel\n"
               "#ifndef SCALE\n#error SCALE must be defined (-DSCALE=N)\n#endif\n"
               "extern \"C\" __global__ void scaled_kernel(int *x) { x[0] = SCALE * 7; }\n");
    ptxjit_context *context = open_context(templates, NULL, NULL, NULL);
    ptxjit_kernel *kernel = get(context, "scaled", "", "-DSCALE=6", PTXJIT_ORIGIN_COMPILED);
    ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(kernel), "42"));
    kernel = get(context, "scaled", "", "-DSCALE=(100+3)", PTXJIT_ORIGIN_COMPILED);
    ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(kernel), "721"));
    ck_assert_int_eq(get_status(context, "scaled", "", NULL), PTXJIT_ERR_COMPILE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "SCALE must be defined"));
    ptxjit_close(context);
    test_rmtree(templates);
    free(templates);
}
END_TEST

/* An entry recorded for other options is not taken for ours, whatever its key says. */
START_TEST(disk_entry_records_the_options)
{
    char *cache = test_mkdtemp();
    log_capture log = {0};
    ptxjit_context *context = open_context(NULL, cache, NULL, &log);
    ptxjit_kernel *one = get(context, "reduce", "variant=one_pass", "-DPJ_X=1",
                             PTXJIT_ORIGIN_COMPILED);
    ptxjit_kernel *two = get(context, "reduce", "variant=one_pass", "-DPJ_X=2",
                             PTXJIT_ORIGIN_COMPILED);
    char *from = pj_disk_cache_entry_path(context->disk, ptxjit_kernel_key(one));
    char *to = pj_disk_cache_entry_path(context->disk, ptxjit_kernel_key(two));
    /* Not a key's collision: PJ_X=1's entry copied under PJ_X=2's key, its checksum intact. */
    char *data = NULL;
    size_t size = 0;
    ck_assert_int_eq(pj_read_file(&data, &size, from), PTXJIT_OK);
    memcpy(data + 16, ptxjit_kernel_key(two), 32);
    pj_artifact artifact;
    const char *why = NULL;
    pj_hash128 sum = pj_hash(data, size - 16);
    memcpy(data + size - 16, &sum.low, 8);
    memcpy(data + size - 8, &sum.high, 8);
    ck_assert_int_eq(pj_entry_decode(&artifact, &why, data, size, ptxjit_kernel_key(two)),
                     PTXJIT_OK);
    ck_assert_str_eq(artifact.options, "-DPJ_X=1");
    pj_artifact_free(&artifact);
    FILE *file = fopen(to, "wb");
    ck_assert_ptr_nonnull(file);
    ck_assert_uint_eq(fwrite(data, 1, size, file), size);
    ck_assert_int_eq(fclose(file), 0);
    ptxjit_close(context);
    context = open_context(NULL, cache, NULL, &log);
    get(context, "reduce", "variant=one_pass", "-DPJ_X=2", PTXJIT_ORIGIN_COMPILED);
    ck_assert_ptr_nonnull(strstr(log.last, "holds another request"));
    ck_assert_ptr_nonnull(strstr(log.last, "-DPJ_X=1"));
    get(context, "reduce", "variant=one_pass", "-DPJ_X=1", PTXJIT_ORIGIN_DISK);
    ptxjit_close(context);
    free(data);
    free(from);
    free(to);
    test_rmtree(cache);
    free(cache);
}
END_TEST

/* The CLI's -D/-I/--lineinfo/--fast-math/-G, shown by inspect as text and JSON. */
static int run_cli(char **output, const char *cache_dir, const char *args)
{
    return test_run_cli(output, cache_dir, "", args, NULL);
}

START_TEST(cli_inspect_shows_the_compile_options)
{
    char *dir = test_mkdtemp(), *out, args[4400];
    snprintf(args, sizeof args,
             "--no-gpu inspect reduce -D SCALE=2 --define FLAG -I '%s' --lineinfo --fast-math",
             dir);
    ck_assert_int_eq(run_cli(&out, dir, args), 0);
    char expected[4400];
    snprintf(expected, sizeof expected,
             "options     -DSCALE=2 -DFLAG -I%s -lineinfo -use_fast_math", dir);
    ck_assert_msg(strstr(out, expected), "%s", out);
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "--no-gpu --json inspect reduce -DSCALE=3 -G"), 0);
    ck_assert_msg(strstr(out, "\"compile_options\": \"-DSCALE=3 -G\""), "%s", out);
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "--no-gpu inspect reduce"), 0);
    ck_assert_ptr_nonnull(strstr(out, "options     (none)"));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "--no-gpu ptx reduce -I /nonexistent"), 2);
    ck_assert_ptr_nonnull(strstr(out, "not an existing directory"));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "--no-gpu ptx reduce -D 'X;rm'"), 2);
    ck_assert_ptr_nonnull(strstr(out, "not a C identifier"));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "--help"), 0);
    ck_assert_ptr_nonnull(strstr(out, "PTXJIT_COMPILE_OPTIONS"));
    ck_assert_ptr_nonnull(strstr(out, "--fast-math"));
    free(out);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* ---- include confinement (ptxjit_options.confine_includes, $PTXJIT_CONFINE_INCLUDES) ---- */

/* What a service serves from: root/templates (the template directory), root/common (an -I
 * directory) and root/outside, which no include may reach: secret.cuh, whose text a compile
 * log would quote (the marker), and value.cuh, a header that compiles. */
typedef struct {
    char *root, *templates, *common, *outside;
} served;

#define SECRET_MARKER "SECRET_7f3a9c"

static served make_served(void)
{
    served s;
    s.root = test_mkdtemp();
    s.templates = make_subdir(s.root, "templates");
    s.common = make_subdir(s.root, "common");
    s.outside = make_subdir(s.root, "outside");
    write_file(s.outside, "secret.cuh", SECRET_MARKER " is not code;\n");
    write_file(s.outside, "value.cuh", "enum { VALUE = 7 };\n");
    return s;
}

static void free_served(served *s)
{
    test_rmtree(s->root);
    free(s->root), free(s->templates), free(s->common), free(s->outside);
}

/* A template of family whose third line on is includes; its kernel stores VALUE. */
static void write_including(const char *dir, const char *family, const char *includes)
{
    char name[256], text[8192];
    snprintf(name, sizeof name, "%s.cu", family);
    snprintf(text, sizeof text,
             "//@ptxjit family %s\n//@ptxjit entry k\n%s\n"
             "extern \"C\" __global__ void k(int *x) { x[0] = VALUE; }\n",
             family, includes);
    write_file(dir, name, text);
}

/* The request is refused before any compile (status), the message holding each needle, and
 * neither it nor the compile log quoting the outside header. */
static void expect_confined(ptxjit_context *context, const char *family, const char *options,
                            ptxjit_status status, const char *needle, const char *also)
{
    ck_assert_msg(get_status(context, family, "", options) == status, "%s: %s", family,
                  ptxjit_last_error());
    const char *message = ptxjit_last_error();
    ck_assert_msg(strstr(message, needle), "%s: '%s' lacks '%s'", family, message, needle);
    ck_assert_msg(!also || strstr(message, also), "%s: '%s' lacks '%s'", family, message, also);
    ck_assert_msg(!strstr(message, SECRET_MARKER), "%s: %s", family, message);
    ck_assert_msg(!strstr(ptxjit_last_compile_log(), SECRET_MARKER), "%s: %s", family,
                  ptxjit_last_compile_log());
}

/* Unconfined, the outside header is read and its text quoted in the compile log: what a
 * service compiling its users' templates must not allow. Confined, an absolute path and a
 * ".." that leads out are refused, naming the file and line, from a template file or from
 * memory (which has no directory: only the -I dirs and the toolkit's are allowed). */
START_TEST(confined_includes_refuse_absolute_paths_and_dotdot_that_leaves)
{
    served s = make_served();
    char line[4400];
    snprintf(line, sizeof line, "#include \"%s/secret.cuh\"", s.outside);
    write_including(s.templates, "absolute", line);
    snprintf(line, sizeof line, "#include <%s/secret.cuh>", s.outside);
    write_including(s.templates, "absolute_angled", line);
    write_including(s.templates, "dotdot", "#include \"../outside/secret.cuh\"");
    write_including(s.templates, "dotdot_angled", "#include <../outside/secret.cuh>");
    write_including(s.templates, "dotdot_deep", "#include \"sub/../../outside/secret.cuh\"");
    ptxjit_context *context = open_with(s.templates, NULL, NULL, NULL, 1);
    char where[4400];
    snprintf(where, sizeof where, "%s/absolute.cu:3: #include \"%s/secret.cuh\"", s.templates,
             s.outside);
    expect_confined(context, "absolute", NULL, PTXJIT_ERR_TEMPLATE, where, "an absolute path");
    expect_confined(context, "absolute_angled", NULL, PTXJIT_ERR_TEMPLATE, "an absolute path",
                    "PTXJIT_CONFINE_INCLUDES");
    expect_confined(context, "dotdot", NULL, PTXJIT_ERR_TEMPLATE,
                    "dotdot.cu:3: #include \"../outside/secret.cuh\"", "leads out");
    expect_confined(context, "dotdot_angled", NULL, PTXJIT_ERR_TEMPLATE,
                    "#include <../outside/secret.cuh>", "leads out");
    expect_confined(context, "dotdot_deep", NULL, PTXJIT_ERR_TEMPLATE, "leads out", NULL);
    char text[4400];
    snprintf(text, sizeof text,
             "//@ptxjit family from_memory\n//@ptxjit entry k\n#include \"%s/secret.cuh\"\n"
             "extern \"C\" __global__ void k(int *x) { x[0] = VALUE; }\n",
             s.outside);
    ck_assert_int_eq(ptxjit_add_template(context, "from_memory.cu", text), PTXJIT_OK);
    expect_confined(context, "from_memory", NULL, PTXJIT_ERR_TEMPLATE,
                    "memory:from_memory.cu:3", "an absolute path");
    ck_assert_int_eq(ptxjit_add_template(context, "climb.cu",
                                         "//@ptxjit family climb\n//@ptxjit entry k\n"
                                         "#include <../../../../../../../../etc/hostname>\n"
                                         "extern \"C\" __global__ void k(int *x) {}\n"),
                     PTXJIT_OK);
    expect_confined(context, "climb", NULL, PTXJIT_ERR_TEMPLATE, "memory:climb.cu:3",
                    "leads out"); /* through the toolkit's directory, the one left to it */
    ptxjit_close(context);
    /* Last: the thread's compile log then holds what a confined context never shows. */
    context = open_context(s.templates, NULL, NULL, NULL);
    ck_assert_int_eq(get_status(context, "absolute", "", NULL), PTXJIT_ERR_COMPILE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_compile_log(), SECRET_MARKER));
    ptxjit_close(context);
    free_served(&s);
}
END_TEST

/* A link in the template's directory, to a header or to a directory outside, is refused
 * without saying where it leads; so is one a header includes. */
START_TEST(confined_includes_refuse_a_link_that_leads_out)
{
    served s = make_served();
    char link[4400], target[4400];
    snprintf(link, sizeof link, "%s/link.cuh", s.templates);
    snprintf(target, sizeof target, "%s/secret.cuh", s.outside);
    ck_assert_int_eq(symlink(target, link), 0);
    snprintf(link, sizeof link, "%s/linked", s.templates);
    ck_assert_int_eq(symlink(s.outside, link), 0);
    write_file(s.templates, "nested.cuh", "enum { VALUE = 1 };\n#include \"link.cuh\"\n");
    write_including(s.templates, "file_link", "#include \"link.cuh\"");
    write_including(s.templates, "dir_link", "#include <linked/secret.cuh>");
    write_including(s.templates, "nested_link", "#include \"nested.cuh\"");
    ptxjit_context *context = open_with(s.templates, NULL, NULL, NULL, 1);
    expect_confined(context, "file_link", NULL, PTXJIT_ERR_TEMPLATE,
                    "file_link.cu:3: #include \"link.cuh\"", "symbolic link");
    ck_assert_ptr_null(strstr(ptxjit_last_error(), s.outside));
    expect_confined(context, "dir_link", NULL, PTXJIT_ERR_TEMPLATE, "#include <linked/secret.cuh>",
                    "symbolic link");
    snprintf(target, sizeof target, "%s/nested.cuh:2: #include \"link.cuh\"", s.templates);
    expect_confined(context, "nested_link", NULL, PTXJIT_ERR_TEMPLATE, target, "symbolic link");
    ptxjit_close(context);
    free_served(&s);
}
END_TEST

/* What the scan cannot follow, it cannot prove to stay inside: refused, each saying why. */
START_TEST(confined_includes_refuse_what_the_scan_cannot_check)
{
    served s = make_served();
    static const struct {
        const char *family, *includes, *needle;
    } cases[] = {
        {"computed", "#define HEADER \"value.cuh\"\n#include HEADER",
         "computed.cu:4: #include with a macro"},
        {"next", "#include_next <value.cuh>", "#include_next <value.cuh>: it searches on"},
        {"import", "#import \"value.cuh\"", "names a file the scan does not follow"},
        {"embed", "#embed \"value.cuh\"", "#embed \"value.cuh\""},
        {"probe_macro", "#define H <value.cuh>\n#if __has_include(H)\n#endif",
         "__has_include(...)"},
        {"probe_next", "#if __has_include_next(<value.cuh>)\n#endif", "__has_include_next(<"},
        {"probe_absolute", "#if __has_include(\"/etc/hostname\")\n#endif", "an absolute path"},
        {"probe_alias", "#define PROBE __has_include\n#if PROBE(\"/etc/hostname\")\n#endif",
         "probe_alias.cu:3: __has_include(...)"},
        {"raw",
         "__device__ const char *s = R\"x(\n)x\\\n\" /* )x\";\n#include \"value.cuh\"\n// */",
         "raw.cu:3: a raw string literal with a backslash-newline"},
        {"nul", "#include \"nul.cuh\"", "nul.cuh:2: a NUL byte"},
    };
    char path[4400];
    snprintf(path, sizeof path, "%s/nul.cuh", s.templates);
    FILE *file = fopen(path, "wb");
    ck_assert_ptr_nonnull(file);
    char nul[4400]; /* NVRTC reads past the NUL; the scan once stopped there */
    int length = snprintf(nul, sizeof nul, "enum { VALUE = 1 };\n%c\n#include \"%s/secret.cuh\"\n",
                          0, s.outside);
    ck_assert_int_eq((int)fwrite(nul, 1, (size_t)length, file), length);
    ck_assert_int_eq(fclose(file), 0);
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++)
        write_including(s.templates, cases[i].family, cases[i].includes);
    write_including(s.templates, "plain", "#include \"plain.cuh\"\n#if PROBE\n#endif");
    write_file(s.templates, "plain.cuh", "enum { VALUE = 1 };\n");
    ptxjit_context *context = open_with(s.templates, NULL, NULL, NULL, 1);
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++)
        expect_confined(context, cases[i].family, NULL, PTXJIT_ERR_TEMPLATE, cases[i].needle,
                        "includes are confined");
    /* A define that asks about a file (-DPROBE=__has_include(</x>), then `#if PROBE`). */
    expect_confined(context, "plain", "-DPROBE=__has_include(</etc/hostname>)",
                    PTXJIT_ERR_INVALID_ARGUMENT, "a define that asks about a file", NULL);
    ptxjit_close(context);
    free_served(&s);
}
END_TEST

/* The spellings a preprocessor reads as an include, each refused as the plain one is. */
START_TEST(confined_includes_see_through_every_spelling)
{
    served s = make_served();
    const char *spellings[] = {
        "# /* c */ include \"%s/secret.cuh\"", "#\\\ninclude \"%s/secret.cuh\"",
        "#inc\\\nlude \"%s/secret.cuh\"",      "%%:include \"%s/secret.cuh\"",
        "#/*\n*/include \"%s/secret.cuh\"",    "int a; /*\n*/ #include \"%s/secret.cuh\"",
        "\f#\vinclude\t\"%s/secret.cuh\"",     "#inc\\\r\nlude \"%s/secret.cuh\"",
        "#include \"%s/sec\\\nret.cuh\"",
    };
    char family[64], includes[4400], expected[4400];
    for (size_t i = 0; i < PJ_ARRAY_SIZE(spellings); i++) {
        snprintf(family, sizeof family, "spelling%zu", i);
        snprintf(includes, sizeof includes, spellings[i], s.outside);
        write_including(s.templates, family, includes);
    }
    ptxjit_context *context = open_with(s.templates, NULL, NULL, NULL, 1);
    snprintf(expected, sizeof expected, "#include \"%s/secret.cuh\": an absolute path", s.outside);
    for (size_t i = 0; i < PJ_ARRAY_SIZE(spellings); i++) {
        snprintf(family, sizeof family, "spelling%zu", i);
        expect_confined(context, family, NULL, PTXJIT_ERR_TEMPLATE, expected, family);
    }
    ptxjit_close(context);
    free_served(&s);
}
END_TEST

/* Confined, what stays inside compiles as before and to the same key: the template's own
 * headers (nested, through "..", through a link inside), the -I dirs' (reached by "..", too),
 * the toolkit's, __has_include of a name inside, and a #line that names another file (it
 * reads none). A header found nowhere is left to NVRTC, whose message names it alone. */
START_TEST(confined_includes_within_the_allowed_dirs_still_compile)
{
    served s = make_served();
    char *nested = make_subdir(s.templates, "nested"), options[4400], link[4400];
    write_file(s.templates, "helper.cuh",
               "#pragma once\n#include \"nested/inner.cuh\"\nenum { VALUE = INNER + 1 };\n");
    write_file(nested, "inner.cuh", "#include \"../base.cuh\"\nenum { INNER = BASE * 10 };\n");
    write_file(s.templates, "base.cuh", "enum { BASE = 4 };\n");
    write_file(s.common, "extra.cuh", "#pragma once\nenum { EXTRA = 2 };\n");
    snprintf(link, sizeof link, "%s/alias.cuh", s.templates);
    ck_assert_int_eq(symlink("helper.cuh", link), 0);
    write_file(s.templates, "inside.cu",
               "//@ptxjit family inside\n//@ptxjit entry k\n"
               "#include \"helper.cuh\"\n#include \"alias.cuh\"\n#include <extra.cuh>\n"
               "#include \"../common/extra.cuh\"\n#include <cuda_fp16.h>\n"
               "#if __has_include(\"helper.cuh\") && !__has_include(<missing.cuh>)\n"
               "#define HAS 1\n#endif\n"
               "extern \"C\" __global__ void k(int *x) { x[0] = VALUE * 100 + EXTRA * HAS; }\n"
               "#line 1 \"/elsewhere/named.cu\"\n");
    write_including(s.templates, "missing", "#include \"missing.cuh\"");
    snprintf(options, sizeof options, "-I%s", s.common);
    ptxjit_context *context = open_with(s.templates, NULL, options, NULL, 1);
    ptxjit_kernel *kernel = get(context, "inside", "", NULL, PTXJIT_ORIGIN_COMPILED);
    ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(kernel), "4102")); /* 41 * 100 + 2 */
    char confined[33];
    snprintf(confined, sizeof confined, "%s", ptxjit_kernel_key(kernel));
    ck_assert_int_eq(get_status(context, "missing", "", NULL), PTXJIT_ERR_COMPILE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "missing.cuh"));
    ptxjit_close(context);
    context = open_with(s.templates, NULL, options, NULL, 0);
    kernel = get(context, "inside", "", NULL, PTXJIT_ORIGIN_COMPILED);
    ck_assert_str_eq(ptxjit_kernel_key(kernel), confined); /* the same code: the same key */
    ptxjit_close(context);
    free(nested);
    free_served(&s);
}
END_TEST

/* The option, else $PTXJIT_CONFINE_INCLUDES (1 on, 0 off; another word confines, warning);
 * neither turns the other's on off; by default off, and unconfined nothing changes. */
START_TEST(confinement_comes_from_the_option_or_the_environment)
{
    served s = make_served();
    char line[4400];
    snprintf(line, sizeof line, "#include \"%s/value.cuh\"", s.outside);
    write_including(s.templates, "outside", line);
    ptxjit_options defaults;
    ptxjit_options_init(&defaults);
    ck_assert_int_eq(defaults.confine_includes, 0);
    static const struct {
        const char *env; /* NULL: unset */
        int option, confined, warned;
    } cases[] = {
        {NULL, 0, 0, 0},  {"0", 0, 0, 0},   {"1", 0, 1, 0},     {"yes", 0, 1, 0},
        {NULL, 1, 1, 0},  {"0", 1, 1, 0},   {"maybe", 0, 1, 1},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        if (cases[i].env)
            setenv("PTXJIT_CONFINE_INCLUDES", cases[i].env, 1);
        else
            unsetenv("PTXJIT_CONFINE_INCLUDES");
        log_capture log = {0};
        ptxjit_context *context = open_with(s.templates, NULL, NULL, &log, cases[i].option);
        ptxjit_status status = get_status(context, "outside", "", NULL);
        ck_assert_msg(status == (cases[i].confined ? PTXJIT_ERR_TEMPLATE : PTXJIT_OK),
                      "case %zu: %d: %s", i, status, ptxjit_last_error());
        ck_assert_int_eq(log.warnings, cases[i].warned);
        if (cases[i].warned)
            ck_assert_ptr_nonnull(strstr(log.last, "neither 1 nor 0; includes are confined"));
        ptxjit_close(context);
    }
    unsetenv("PTXJIT_CONFINE_INCLUDES");
    free_served(&s);
}
END_TEST

/* The include check comes before every cache: a kernel an unconfined context compiled from an
 * outside header, on disk or held by another context of the process, is never served to a
 * confined one. */
START_TEST(confined_context_refuses_what_an_unconfined_one_cached)
{
    served s = make_served();
    char *cache = test_mkdtemp(), line[4400];
    snprintf(line, sizeof line, "#include \"%s/value.cuh\"", s.outside);
    write_including(s.templates, "outside", line);
    ptxjit_context *open = open_context(s.templates, cache, NULL, NULL);
    get(open, "outside", "", NULL, PTXJIT_ORIGIN_COMPILED);
    ptxjit_context *confined = open_with(s.templates, cache, NULL, NULL, 1); /* disk, shared */
    expect_confined(confined, "outside", NULL, PTXJIT_ERR_TEMPLATE, "outside.cu:3",
                    "an absolute path");
    ptxjit_close(confined);
    confined = open_with(s.templates, NULL, NULL, NULL, 1); /* the process's kernels alone */
    expect_confined(confined, "outside", NULL, PTXJIT_ERR_TEMPLATE, "an absolute path", NULL);
    ptxjit_close(confined);
    ptxjit_close(open);
    open = open_context(s.templates, cache, NULL, NULL); /* unconfined: still a disk hit */
    get(open, "outside", "", NULL, PTXJIT_ORIGIN_DISK);
    ptxjit_close(open);
    test_rmtree(cache);
    free(cache);
    free_served(&s);
}
END_TEST

START_TEST(cli_confines_includes_with_a_flag_or_the_environment)
{
    served s = make_served();
    char line[4400], args[4400], *out;
    snprintf(line, sizeof line, "#include \"%s/value.cuh\"", s.outside);
    write_including(s.templates, "outside", line);
    snprintf(args, sizeof args, "--no-gpu --no-disk-cache --templates '%s' ptx outside",
             s.templates);
    ck_assert_int_eq(test_run_cli(&out, NULL, "PTXJIT_CONFINE_INCLUDES=0", args, NULL), 0);
    free(out);
    snprintf(args, sizeof args,
             "--no-gpu --no-disk-cache --templates '%s' --confine-includes ptx outside",
             s.templates);
    ck_assert_int_eq(test_run_cli(&out, NULL, "", args, NULL), 1);
    ck_assert_msg(strstr(out, "outside.cu:3: #include") && strstr(out, "includes are confined"),
                  "%s", out);
    free(out);
    snprintf(args, sizeof args, "--no-gpu --no-disk-cache --templates '%s' ptx outside",
             s.templates);
    ck_assert_int_eq(test_run_cli(&out, NULL, "PTXJIT_CONFINE_INCLUDES=1", args, NULL), 1);
    free(out);
    ck_assert_int_eq(test_run_cli(&out, NULL, "", "--help", NULL), 0);
    ck_assert_ptr_nonnull(strstr(out, "--confine-includes"));
    ck_assert_ptr_nonnull(strstr(out, "PTXJIT_CONFINE_INCLUDES"));
    free(out);
    free_served(&s);
}
END_TEST

Suite *suite_compile_inputs(void)
{
    Suite *suite = suite_create("compile_inputs");
    TCase *tc = tcase_create("includes");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, include_resolves_against_the_template_not_the_working_directory);
    tcase_add_test(tc, edited_header_changes_the_key_and_the_disk_cache_compiles_anew);
    tcase_add_test(tc, a_live_context_serves_the_old_header_to_a_repeated_request_until_reload);
    tcase_add_test(tc, nested_and_include_dir_headers_are_in_the_key);
    tcase_add_test(tc, memory_template_absolute_include_is_in_the_key);
    tcase_add_test(tc, angle_include_from_an_include_dir_is_in_the_key);
    tcase_add_test(tc, include_scan_is_bounded_and_leaves_missing_headers_to_nvrtc);
    tcase_add_test(tc, key_covers_each_header_path_and_content);
    tcase_add_test(tc, directives_are_read_as_the_preprocessor_reads_them);
    tcase_add_test(tc, includes_in_any_spelling_are_in_the_key);
    tcase_add_test(tc, header_edited_during_the_compile_keeps_the_kernel_off_disk);
    suite_add_tcase(suite, tc);
    tc = tcase_create("errors_and_dtypes");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, compile_error_cites_the_template_file_and_line);
    suite_add_tcase(suite, tc);
    tc = tcase_create("options");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, option_injection_is_refused);
    tcase_add_test(tc, llvm_refuses_compile_options_before_loading_anything);
    tcase_add_test(tc, defines_reach_the_code);
    tcase_add_test(tc, disk_entry_records_the_options);
    tcase_add_test(tc, cli_inspect_shows_the_compile_options);
    suite_add_tcase(suite, tc);
    tc = tcase_create("confinement");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, confined_includes_refuse_absolute_paths_and_dotdot_that_leaves);
    tcase_add_test(tc, confined_includes_refuse_a_link_that_leads_out);
    tcase_add_test(tc, confined_includes_refuse_what_the_scan_cannot_check);
    tcase_add_test(tc, confined_includes_see_through_every_spelling);
    tcase_add_test(tc, confined_includes_within_the_allowed_dirs_still_compile);
    tcase_add_test(tc, confinement_comes_from_the_option_or_the_environment);
    tcase_add_test(tc, confined_context_refuses_what_an_unconfined_one_cached);
    tcase_add_test(tc, cli_confines_includes_with_a_flag_or_the_environment);
    suite_add_tcase(suite, tc);
    TCase *many = test_many_compiles_case(suite, 120);
    tcase_add_test(many, context_options_and_environment_come_before_the_request);
    tcase_add_test(many, dtype_branch_pattern_compiles_at_every_dtype);
    tcase_add_test(many, keys_differ_by_options_and_the_fast_path_holds_them);
    tcase_add_test(many, each_allowed_option_is_accepted_in_canonical_form);
    return suite;
}
