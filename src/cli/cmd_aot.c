/* cmd_aot.c — `ptxjit aot FILE|- [-o kernels.c] [--arch sm_90a,sm_80] [--from-records]`: a
 * request list (warm's format) compiled for each architecture and written as one C file of
 * cubins and a ptxjit_aot_table (docs/AOT.md); `ptxjit aot --list kernels.c` prints the index
 * such a file carries. The file depends on nothing but the list, the templates and the
 * compiler: no dates, paths or host names, and a fixed order (the list's, then --arch's). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli_internal.h"

enum { AOT_OUTPUT, AOT_NAME, AOT_LIST, AOT_NO_PTX, AOT_WHERE_SUPPORTED, AOT_FROM_RECORDS };
const cli_option cli_aot_options[] = {
    [AOT_OUTPUT] = {"-o", "kernels.c", NULL},
    [AOT_NAME] = {"--name", "my_kernels", NULL},
    [AOT_LIST] = {"--list", NULL, NULL},
    [AOT_NO_PTX] = {"--no-ptx", NULL, NULL},
    [AOT_WHERE_SUPPORTED] = {"--where-supported", NULL, NULL},
    [AOT_FROM_RECORDS] = {"--from-records", NULL, NULL},
    {NULL, NULL, NULL},
};

#define AOT_MAX_ARCHS 16
#define AOT_INDEX_MARK "ptxjit-aot-index"

/* One request of the list: its line, where it came from, and its kernel for each arch. */
typedef struct {
    char *text;             /* "FAMILY key=value ..." as written */
    char *where;            /* "requests.txt:3", or "tuning record 2" */
    ptxjit_kernel *kernel[AOT_MAX_ARCHS]; /* NULL: refused for that arch (or a duplicate) */
    unsigned refused;       /* bit a: refused for arch a */
    char *message;          /* why, the first time */
} aot_request;

typedef struct {
    char *family, *backend, *problem, *fixed, *winner;
    int request; /* its winner's request */
} aot_record;

typedef struct {
    const char *archs[AOT_MAX_ARCHS];
    int arch_count;
    char *arch_words;       /* --arch's words, split at the commas (archs point in) */
    const char *arch_list;  /* as given: "sm_90a,sm_80" */
    ptxjit_context *contexts[AOT_MAX_ARCHS];
    aot_request *requests;
    int count, capacity;
    aot_record *records;
    int record_count;
} aot_job;

/* ---- the list ---- */

static int add_request(aot_job *job, const char *text, size_t length, const char *where)
{
    if (job->count == job->capacity) {
        int capacity = job->capacity ? 2 * job->capacity : 32;
        aot_request *grown = realloc(job->requests, (size_t)capacity * sizeof *grown);
        if (!grown)
            return CLI_FAIL;
        job->requests = grown;
        job->capacity = capacity;
    }
    aot_request *r = &job->requests[job->count];
    memset(r, 0, sizeof *r);
    r->text = strndup(text, length);
    r->where = strdup(where);
    if (!r->text || !r->where)
        return CLI_FAIL;
    job->count++;
    return CLI_OK;
}

static int read_list(aot_job *job, const char *path)
{
    FILE *in = strcmp(path, "-") ? fopen(path, "r") : stdin;
    const char *name = strcmp(path, "-") ? path : "stdin";
    if (!in) {
        fprintf(stderr, "ptxjit: cannot open %s: %s\n", path, strerror(errno));
        return CLI_FAIL;
    }
    char line[8192], where[4200];
    int number = 0, code = CLI_OK;
    while (code == CLI_OK && fgets(line, sizeof line, in)) {
        number++;
        line[strcspn(line, "#\r\n")] = '\0';
        const char *start = line + strspn(line, " \t");
        size_t length = strlen(start);
        while (length && (start[length - 1] == ' ' || start[length - 1] == '\t'))
            length--;
        snprintf(where, sizeof where, "%.4000s:%d", name, number);
        if (length && add_request(job, start, length, where) != CLI_OK) {
            fprintf(stderr, "ptxjit: out of memory\n");
            code = CLI_FAIL;
        }
    }
    if (code == CLI_OK && ferror(in)) {
        fprintf(stderr, "ptxjit: cannot read %s\n", name);
        code = CLI_FAIL;
    }
    if (in != stdin)
        fclose(in);
    return code;
}

static int compare_records(const void *a, const void *b)
{
    const aot_record *x = a, *y = b;
    int c = strcmp(x->family, y->family);
    if (!c)
        c = strcmp(x->problem, y->problem);
    if (!c)
        c = strcmp(x->fixed, y->fixed);
    return c ? c : strcmp(x->backend, y->backend);
}

/* Every tuning record with a winner, in a fixed order, its winner added to the list. */
static int read_records(aot_job *job, ptxjit_context *context)
{
    ptxjit_tune_result **list;
    int count;
    ptxjit_status status = ptxjit_tune_list(&list, &count, context);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    job->records = calloc((size_t)count + 1, sizeof *job->records);
    int code = job->records ? CLI_OK : CLI_FAIL;
    for (int i = 0; i < count && code == CLI_OK; i++) {
        ptxjit_tune_info info;
        ptxjit_tune_result_info(&info, list[i]);
        if (!info.winner)
            continue;
        aot_record *r = &job->records[job->record_count++];
        r->family = strdup(info.family);
        r->problem = strdup(info.problem);
        r->fixed = strdup(info.fixed);
        r->winner = strdup(info.winner);
        r->backend = strdup(strstr(info.winner, "backend=llvm") ? "llvm" : "nvrtc");
        if (!r->family || !r->problem || !r->fixed || !r->winner || !r->backend)
            code = CLI_FAIL;
    }
    ptxjit_tune_list_free(list, count);
    if (code == CLI_OK)
        qsort(job->records, (size_t)job->record_count, sizeof *job->records, compare_records);
    for (int i = 0; i < job->record_count && code == CLI_OK; i++) {
        char text[8192], where[64];
        int length = snprintf(text, sizeof text, "%s %s", job->records[i].family,
                              job->records[i].winner);
        snprintf(where, sizeof where, "tuning record %d", i + 1);
        job->records[i].request = job->count;
        code = length > 0 && length < (int)sizeof text
                   ? add_request(job, text, (size_t)length, where)
                   : CLI_FAIL;
    }
    if (code != CLI_OK)
        fprintf(stderr, "ptxjit: out of memory\n");
    return code;
}

/* ---- compiling ---- */

static int split_archs(aot_job *job, const char *words)
{
    job->arch_list = words;
    if (!(job->arch_words = strdup(words)))
        return CLI_FAIL;
    for (char *save = NULL, *arch = strtok_r(job->arch_words, ",", &save); arch;
         arch = strtok_r(NULL, ",", &save)) {
        for (int i = 0; i < job->arch_count; i++)
            if (!strcmp(job->archs[i], arch)) {
                fprintf(stderr, "ptxjit: --arch names %s twice\n", arch);
                return CLI_USAGE;
            }
        if (job->arch_count == AOT_MAX_ARCHS) {
            fprintf(stderr, "ptxjit: --arch takes at most %d architectures\n", AOT_MAX_ARCHS);
            return CLI_USAGE;
        }
        job->archs[job->arch_count++] = arch;
    }
    if (!job->arch_count) {
        fprintf(stderr, "ptxjit: --arch takes a list of architectures: sm_90a,sm_80\n");
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* The kernel of request r for arch a: compiled by the warm-up before, so a cache hit. */
static ptxjit_status get_kernel(ptxjit_kernel **out, ptxjit_context *context, const char *text)
{
    size_t length = strcspn(text, " \t");
    char family[256];
    if (length >= sizeof family)
        length = sizeof family - 1;
    memcpy(family, text, length);
    family[length] = '\0';
    return ptxjit_get_kernel(out, context, family, text + length, NULL);
}

/* 1 when an earlier request already holds this kernel for arch a. */
static int duplicate(const aot_job *job, int r, int a)
{
    const ptxjit_kernel *k = job->requests[r].kernel[a];
    for (int i = 0; i < r; i++)
        if (job->requests[i].kernel[a] == k)
            return 1;
    return 0;
}

/* Compiles the list for arch a (in parallel, warm's pool) and takes each kernel. A request
 * refused there keeps a NULL kernel, its bit in refused and the first reason. */
static int compile_arch(aot_job *job, int a)
{
    const char **lines = calloc((size_t)job->count + 1, sizeof *lines);
    if (!lines)
        return CLI_FAIL;
    for (int r = 0; r < job->count; r++)
        lines[r] = job->requests[r].text;
    ptxjit_warm_options options = {0};
    if (isatty(STDERR_FILENO))
        options.progress = cli_progress_bar;
    ptxjit_warm_result *result = NULL;
    ptxjit_status status = ptxjit_warm(&result, job->contexts[a], lines, job->count, &options);
    free(lines);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    for (int r = 0; r < job->count; r++) {
        aot_request *request = &job->requests[r];
        status = result->items[r].status;
        if (status == PTXJIT_OK)
            status = get_kernel(&request->kernel[a], job->contexts[a], request->text);
        if (status != PTXJIT_OK) {
            request->kernel[a] = NULL;
            const char *why = result->items[r].status != PTXJIT_OK ? result->items[r].message
                                                                    : ptxjit_last_error();
            request->refused |= 1u << a;
            if (!request->message && !(request->message = strdup(why)))
                return CLI_FAIL;
        } else if (duplicate(job, r, a)) {
            request->kernel[a] = NULL;
        }
    }
    ptxjit_warm_result_free(result);
    return CLI_OK;
}

/* Every request must have its kernel for every arch; --where-supported lets it miss archs
 * where it is refused, so long as it has one. */
static int check_refusals(const aot_job *job, int where_supported)
{
    int code = CLI_OK;
    for (int r = 0; r < job->count; r++) {
        const aot_request *request = &job->requests[r];
        if (!request->refused)
            continue;
        int everywhere = request->refused == (1u << job->arch_count) - 1;
        if (!everywhere && where_supported)
            continue;
        code = CLI_FAIL;
        fprintf(stderr, "ptxjit: %s: '%s' was refused for", request->where, request->text);
        for (int a = 0; a < job->arch_count; a++)
            if (request->refused & (1u << a))
                fprintf(stderr, " %s", job->archs[a]);
        fprintf(stderr, ": %s\n", request->message);
        if (!everywhere)
            fprintf(stderr, "  fix: the template does not support it there: leave those "
                            "architectures out of --arch, or pass --where-supported to leave "
                            "the request out for them alone\n");
        else
            fprintf(stderr, "  fix: correct or remove the line (ptxjit list names the "
                            "families, ptxjit info FAMILY their parameters)\n");
    }
    return code;
}

/* ---- writing ---- */

/* text as the body of a C string literal; a line of PTX (or 72 characters of other bytes)
 * per source line. '?' is escaped against trigraphs, octal escapes take three digits. */
static void put_literal(FILE *out, const unsigned char *bytes, size_t size, int lines)
{
    int column = 0;
    fputs("\n    \"", out);
    for (size_t i = 0; i < size; i++) {
        unsigned char c = bytes[i];
        if (column >= 72 || (lines && column >= 200)) {
            fputs("\"\n    \"", out);
            column = 0;
        }
        if (c == '\n' && lines) {
            fputs("\\n", out);
            if (i + 1 < size) {
                fputs("\"\n    \"", out);
                column = 0;
            }
            continue;
        }
        if (c == '"' || c == '\\' || c == '?')
            column += fprintf(out, "\\%c", c);
        else if (c >= 0x20 && c < 0x7f)
            column += fputc(c, out) != EOF;
        else
            column += fprintf(out, "\\%03o", c);
    }
    fputs("\"", out);
}

static void put_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const char *s = text; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\' || c == '?')
            fprintf(out, "\\%c", c);
        else if (c >= 0x20 && c < 0x7f)
            fputc(c, out);
        else
            fprintf(out, "\\%03o", c);
    }
    fputc('"', out);
}

/* text in a comment: "*" "/" cannot end it early. */
static void put_comment_text(FILE *out, const char *text)
{
    for (const char *s = text; *s; s++) {
        fputc(*s == '\n' ? ' ' : *s, out);
        if (*s == '*' && s[1] == '/')
            fputc(' ', out);
    }
}

static int kernel_count(const aot_job *job)
{
    int count = 0;
    for (int r = 0; r < job->count; r++)
        for (int a = 0; a < job->arch_count; a++)
            count += job->requests[r].kernel[a] != NULL;
    return count;
}

static int record_entry_count(const aot_job *job)
{
    int count = 0;
    for (int i = 0; i < job->record_count; i++)
        for (int a = 0; a < job->arch_count; a++)
            count += job->requests[job->records[i].request].kernel[a] != NULL;
    return count;
}

static void put_index(FILE *out, const aot_job *job, int with_ptx)
{
    fprintf(out, " * " AOT_INDEX_MARK " (ptxjit aot --list reads these lines):\n");
    int n = 0;
    for (int r = 0; r < job->count; r++)
        for (int a = 0; a < job->arch_count; a++) {
            ptxjit_kernel *k = job->requests[r].kernel[a];
            if (!k)
                continue;
            size_t cubin = 0;
            ptxjit_kernel_cubin(k, &cubin);
            fprintf(out, " * kernel %d %s ", n++, job->archs[a]);
            put_comment_text(out, ptxjit_kernel_family(k));
            fputc(' ', out);
            put_comment_text(out, ptxjit_kernel_params(k));
            fprintf(out, " | key %s | cubin %zu bytes | ptx %zu bytes\n", ptxjit_kernel_key(k),
                    cubin, with_ptx ? strlen(ptxjit_kernel_ptx(k)) : (size_t)0);
        }
    n = 0;
    for (int i = 0; i < job->record_count; i++)
        for (int a = 0; a < job->arch_count; a++) {
            const aot_record *rec = &job->records[i];
            if (!job->requests[rec->request].kernel[a])
                continue;
            fprintf(out, " * record %d %s %s problem '", n++, job->archs[a], rec->family);
            put_comment_text(out, rec->problem);
            fputs("' fixed '", out);
            put_comment_text(out, rec->fixed);
            fputs("' winner ", out);
            put_comment_text(out, rec->winner);
            fputc('\n', out);
        }
}

static void put_kernel_data(FILE *out, ptxjit_kernel *k, int n, int with_ptx)
{
    size_t size = 0;
    const void *cubin = ptxjit_kernel_cubin(k, &size);
    /* One byte more than the cubin for the literal's NUL; cubin_size says how many count. */
    fprintf(out, "static const unsigned char cubin_%d[%zu] __attribute__((aligned(16))) =",
            n, size + 1);
    put_literal(out, cubin, size, 0);
    fputs(";\n", out);
    if (with_ptx) {
        fprintf(out, "static const char ptx_%d[] =", n);
        const char *ptx = ptxjit_kernel_ptx(k);
        put_literal(out, (const unsigned char *)ptx, strlen(ptx), 1);
        fputs(";\n", out);
    }
    fprintf(out, "static const char *const entries_%d[] = {", n);
    for (int e = 0; e < ptxjit_kernel_entry_count(k); e++) {
        fputs(e ? ", " : "", out);
        put_string(out, ptxjit_kernel_entry_name(k, e));
    }
    fputs("};\n\n", out);
}

static int put_kernel_row(FILE *out, ptxjit_kernel *k, const char *request, const char *arch,
                          int n, int with_ptx)
{
    char hash[33], compiler[64];
    const char *backend;
    if (pj_aot_kernel_identity(hash, compiler, &backend, k) != PTXJIT_OK)
        return cli_fail(PTXJIT_ERR_INVALID_ARGUMENT);
    size_t size = 0;
    ptxjit_kernel_cubin(k, &size);
    const char *texts[] = {request, ptxjit_kernel_family(k), ptxjit_kernel_params(k),
                           ptxjit_kernel_compile_options(k), arch, backend,
                           ptxjit_kernel_key(k), hash, compiler};
    fputs("    {", out);
    for (size_t i = 0; i < CLI_LENGTH(texts); i++) {
        put_string(out, texts[i]);
        fputs(i == 2 || i == 6 ? ",\n     " : ", ", out);
    }
    fprintf(out, "%d, entries_%d, cubin_%d, %zu, ", ptxjit_kernel_entry_count(k), n, n, size);
    if (with_ptx)
        fprintf(out, "ptx_%d},\n", n);
    else
        fputs("NULL},\n", out);
    return CLI_OK;
}

static int put_records(FILE *out, const aot_job *job)
{
    fputs("static const ptxjit_aot_record records[] = {\n", out);
    for (int i = 0; i < job->record_count; i++)
        for (int a = 0; a < job->arch_count; a++) {
            const aot_record *rec = &job->records[i];
            ptxjit_kernel *k = job->requests[rec->request].kernel[a];
            char hash[33], compiler[64];
            const char *backend;
            if (!k)
                continue;
            if (pj_aot_kernel_identity(hash, compiler, &backend, k) != PTXJIT_OK)
                return cli_fail(PTXJIT_ERR_INVALID_ARGUMENT);
            const char *texts[] = {rec->family, rec->backend, job->archs[a], rec->problem,
                                   rec->fixed, rec->winner, hash};
            fputs("    {", out);
            for (size_t t = 0; t < CLI_LENGTH(texts); t++) {
                put_string(out, texts[t]);
                fputs(t + 1 < CLI_LENGTH(texts) ? ", " : "},\n", out);
            }
        }
    fputs("};\n\n", out);
    return CLI_OK;
}

static int write_table(FILE *out, const aot_job *job, const char *name, int with_ptx)
{
    int kernels = kernel_count(job), records = record_entry_count(job);
    fprintf(out, "/* Generated by `ptxjit aot` (ptxjit %s, AOT table format %d): the table %s, "
                 "%d kernels for %s, %d tuning records.\n"
                 " * Compile it into the program and register the table with its contexts\n"
                 " * (ptxjit_register_aot(context, &%s), or ptxjit_options.aot_tables;\n"
                 " * docs/AOT.md). Regenerate it from its request list; do not edit it.\n *\n",
            PTXJIT_VERSION, PTXJIT_AOT_FORMAT, name, kernels, job->arch_list, records, name);
    put_index(out, job, with_ptx);
    fputs(" */\n#include <stddef.h>\n\n#include <ptxjit.h>\n\n", out);
    int n = 0;
    for (int r = 0; r < job->count; r++)
        for (int a = 0; a < job->arch_count; a++)
            if (job->requests[r].kernel[a])
                put_kernel_data(out, job->requests[r].kernel[a], n++, with_ptx);
    if (kernels) {
        fputs("static const ptxjit_aot_kernel kernels[] = {\n", out);
        n = 0;
        for (int r = 0; r < job->count; r++)
            for (int a = 0; a < job->arch_count; a++) {
                ptxjit_kernel *k = job->requests[r].kernel[a];
                if (k && put_kernel_row(out, k, job->requests[r].text, job->archs[a], n++,
                                        with_ptx) != CLI_OK)
                    return CLI_FAIL;
            }
        fputs("};\n\n", out);
    }
    if (records && put_records(out, job) != CLI_OK)
        return CLI_FAIL;
    fprintf(out, "const ptxjit_aot_table %s = {%d, \"%s\", %d, %s, %d, %s};\n", name,
            PTXJIT_AOT_FORMAT, name, kernels, kernels ? "kernels" : "NULL", records,
            records ? "records" : "NULL");
    return CLI_OK;
}

/* ---- output: stdout, or -o written whole then renamed into place ---- */

typedef struct {
    const char *path;    /* NULL: stdout */
    char *temp;          /* path's temporary sibling */
    FILE *file;
} aot_output;

/* Made before anything compiles, so that an unwritable -o fails at once. */
static int output_open(aot_output *out, const char *path)
{
    memset(out, 0, sizeof *out);
    out->path = path;
    if (!path) {
        out->file = stdout;
        return CLI_OK;
    }
    if (asprintf(&out->temp, "%s.tmp.XXXXXX", path) < 0)
        return CLI_FAIL;
    int fd = mkstemp(out->temp);
    mode_t mask = umask(0);
    umask(mask);
    if (fd >= 0) /* a source file as any other, not mkstemp's 0600 */
        (void)fchmod(fd, 0666 & ~mask);
    if (fd < 0 || !(out->file = fdopen(fd, "w"))) {
        fprintf(stderr, "ptxjit: cannot write %s: %s\n  fix: -o must name a file in a "
                        "directory that exists and that you can write\n",
                path, strerror(errno));
        if (fd >= 0)
            close(fd);
        free(out->temp);
        out->temp = NULL;
        return CLI_FAIL;
    }
    return CLI_OK;
}

static int output_close(aot_output *out, int code)
{
    if (!out->path)
        return fflush(stdout) == 0 ? code : CLI_FAIL;
    if (!out->file)
        return code;
    int failed = ferror(out->file) | (fclose(out->file) != 0);
    if (code == CLI_OK && (failed || rename(out->temp, out->path) != 0)) {
        fprintf(stderr, "ptxjit: cannot write %s: %s\n", out->path, strerror(errno));
        code = CLI_FAIL;
    }
    if (code != CLI_OK)
        unlink(out->temp);
    free(out->temp);
    return code;
}

/* ---- --list ---- */

static int list_file(const char *path)
{
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "ptxjit: cannot open %s: %s\n", path, strerror(errno));
        return CLI_FAIL;
    }
    char line[16384];
    int in_index = 0, found = 0;
    while (fgets(line, sizeof line, in)) {
        if (strstr(line, AOT_INDEX_MARK)) {
            in_index = found = 1;
            continue;
        }
        if (in_index && strncmp(line, " * ", 3) != 0)
            break;
        if (in_index)
            fputs(line + 3, stdout);
    }
    fclose(in);
    if (!found) {
        fprintf(stderr, "ptxjit: %s holds no index of ptxjit aot (a file it wrote starts with "
                        "one): was it generated by ptxjit aot?\n", path);
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* ---- the command ---- */

static int usage(void)
{
    fprintf(stderr, "ptxjit: usage: ptxjit aot FILE|- [-o kernels.c] [--arch sm_90a,sm_80] "
                    "[--name NAME] [--from-records] [--no-ptx] [--where-supported], or "
                    "ptxjit aot --list kernels.c\n");
    return CLI_USAGE;
}

static int check_name(const char *name)
{
    int ok = *name && !(*name >= '0' && *name <= '9');
    for (const char *s = name; *s && ok; s++)
        ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
             (*s >= '0' && *s <= '9') || *s == '_';
    if (!ok)
        fprintf(stderr, "ptxjit: --name takes a C identifier (the table's symbol), not '%s'\n",
                name);
    return ok ? CLI_OK : CLI_USAGE;
}

static void free_job(aot_job *job)
{
    for (int a = 0; a < job->arch_count; a++)
        ptxjit_close(job->contexts[a]);
    for (int r = 0; r < job->count; r++) {
        free(job->requests[r].text);
        free(job->requests[r].where);
        free(job->requests[r].message);
    }
    for (int i = 0; i < job->record_count; i++) {
        aot_record *r = &job->records[i];
        free(r->family), free(r->backend), free(r->problem), free(r->fixed), free(r->winner);
    }
    free(job->records);
    free(job->requests);
    free(job->arch_words);
}

static int open_contexts(aot_job *job, cli_args *args)
{
    for (int a = 0; a < job->arch_count; a++) {
        ptxjit_options options = args->options;
        options.arch = job->archs[a];
        options.use_gpu = 0; /* compiling for an arch needs no GPU */
        ptxjit_status status = ptxjit_open(&job->contexts[a], &options);
        if (status != PTXJIT_OK)
            return cli_fail(status);
    }
    return CLI_OK;
}

static int generate(aot_job *job, cli_args *args, const char *name)
{
    int code = args->argc == 1 ? read_list(job, args->argv[0]) : CLI_OK;
    if (code == CLI_OK)
        code = open_contexts(job, args);
    if (code == CLI_OK && args->own[AOT_FROM_RECORDS])
        code = read_records(job, job->contexts[0]);
    if (code == CLI_OK && !job->count) {
        fprintf(stderr, "ptxjit: the list holds no request (and no tuning record was asked "
                        "for): nothing to compile\n");
        code = CLI_FAIL;
    }
    for (int a = 0; a < job->arch_count && code == CLI_OK; a++)
        code = compile_arch(job, a);
    if (code == CLI_OK)
        code = check_refusals(job, args->own[AOT_WHERE_SUPPORTED] != NULL);
    aot_output out;
    if (code == CLI_OK)
        code = output_open(&out, args->own[AOT_OUTPUT]);
    if (code != CLI_OK)
        return code;
    code = write_table(out.file, job, name, !args->own[AOT_NO_PTX]);
    code = output_close(&out, code);
    if (code == CLI_OK)
        fprintf(stderr, "%d kernels for %s, %d tuning records: %s\n", kernel_count(job),
                job->arch_list, record_entry_count(job),
                out.path ? out.path : "(stdout)");
    return code;
}

int cmd_aot(cli_args *args)
{
    if (args->own[AOT_LIST])
        return args->argc == 1 ? list_file(args->argv[0]) : usage();
    int from_records = args->own[AOT_FROM_RECORDS] != NULL;
    if (args->argc > 1 || (!from_records && args->argc != 1))
        return usage();
    const char *name = args->own[AOT_NAME] ? args->own[AOT_NAME] : "ptxjit_aot_kernels";
    if (check_name(name) != CLI_OK)
        return CLI_USAGE;
    /* -o is checked before anything compiles: a typo costs nothing. */
    if (args->own[AOT_OUTPUT]) {
        aot_output probe;
        if (output_open(&probe, args->own[AOT_OUTPUT]) != CLI_OK)
            return CLI_FAIL;
        output_close(&probe, CLI_FAIL);
    }
    aot_job job = {0};
    const char *archs = args->options.arch ? args->options.arch : getenv("PTXJIT_ARCH");
    int code = split_archs(&job, archs && *archs ? archs : "sm_90a");
    if (code == CLI_OK)
        code = generate(&job, args, name);
    free_job(&job);
    return code;
}
