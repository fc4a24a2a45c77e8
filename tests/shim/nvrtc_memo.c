/* nvrtc_memo.c — for `make valgrind`: a stand-in for libnvrtc.so that answers a compile it has
 * made before from a directory ($PJTEST_NVRTC_MEMO) — the same result, log, PTX and cubin —
 * and hands the others to the real NVRTC, keeping what it answered. Under memcheck NVRTC runs
 * its own code some fifty times slower (a small kernel: 10-20 s), and the suite compiles the
 * same few requests in test after test, each test a fresh process with fresh caches; ptxjit's
 * side of each compile (its options, the sizes and buffers it reads, the log) runs as before,
 * and memcheck still checks it. A compile is the same one when its source, name, headers and
 * options are, and the files under its include directories (all but the toolkit's, which no
 * test changes) and the files it includes by absolute path: a test that edits a header gets
 * a fresh compile. */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the real NVRTC ---- */

static struct {
    int loaded;
    nvrtcResult (*Version)(int *, int *);
    nvrtcResult (*CreateProgram)(nvrtcProgram *, const char *, const char *, int,
                                 const char *const *, const char *const *);
    nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*GetPTXSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetPTX)(nvrtcProgram, char *);
    nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetCUBIN)(nvrtcProgram, char *);
    nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetProgramLog)(nvrtcProgram, char *);
    nvrtcResult (*DestroyProgram)(nvrtcProgram *);
    const char *(*GetErrorString)(nvrtcResult);
} real;

static void load_real(void)
{
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12",
                                        "/usr/local/cuda/lib64/libnvrtc.so"};
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return;
#define REAL(name) *(void **)&real.name = dlsym(lib, "nvrtc" #name)
    REAL(Version), REAL(CreateProgram), REAL(CompileProgram), REAL(GetPTXSize), REAL(GetPTX);
    REAL(GetCUBINSize), REAL(GetCUBIN), REAL(GetProgramLogSize), REAL(GetProgramLog);
    REAL(DestroyProgram), REAL(GetErrorString);
#undef REAL
    real.loaded = real.Version && real.CreateProgram && real.CompileProgram &&
                  real.DestroyProgram && real.GetErrorString;
}

static int have_real(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load_real);
    return real.loaded;
}

/* ---- the key: two FNV-1a hashes of everything the compile reads ---- */

typedef struct {
    uint64_t a, b;
} hasher;

static void hash_bytes(hasher *h, const void *data, size_t size)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < size; i++) {
        h->a = (h->a ^ p[i]) * 0x100000001b3ull;
        h->b = (h->b ^ p[i]) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
    }
}

/* A string and its end, so that "ab" "c" and "a" "bc" differ. */
static void hash_string(hasher *h, const char *text)
{
    hash_bytes(h, text ? text : "(null)", strlen(text ? text : "(null)") + 1);
}

static void hash_file(hasher *h, const char *path)
{
    hash_string(h, path);
    FILE *file = fopen(path, "rb");
    if (!file) {
        hash_string(h, "(absent)");
        return;
    }
    char buffer[65536];
    size_t got;
    while ((got = fread(buffer, 1, sizeof buffer, file)) > 0)
        hash_bytes(h, buffer, got);
    fclose(file);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file under dir, in name order, to a few levels (test and template dirs). */
static void hash_tree(hasher *h, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d || depth > 4) {
        if (d)
            closedir(d);
        return;
    }
    char **names = NULL;
    size_t count = 0, capacity = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        if (count == capacity) {
            capacity = capacity ? 2 * capacity : 32;
            char **grown = realloc(names, capacity * sizeof *names);
            if (!grown)
                break;
            names = grown;
        }
        names[count++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, count, sizeof *names, by_name);
    for (size_t i = 0; i < count; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            hash_tree(h, path, depth + 1);
        else if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            hash_file(h, path);
        free(names[i]);
    }
    free(names);
}

/* An include directory of the options: -I<dir>, -I <dir>, --include-path=<dir>,
 * --include-path <dir>; NULL for another option. *skip: the next option is the dir. */
static const char *include_dir(const char *option, const char *next, int *skip)
{
    *skip = 0;
    if (strncmp(option, "-I", 2) == 0 && option[2])
        return option + 2;
    if (strncmp(option, "--include-path=", 15) == 0)
        return option + 15;
    if ((strcmp(option, "-I") == 0 || strcmp(option, "--include-path") == 0) && next) {
        *skip = 1;
        return next;
    }
    return NULL;
}

/* The toolkit's include directory holds cuda.h; no test writes there. */
static int is_toolkit(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/cuda.h", dir);
    return access(path, F_OK) == 0;
}

/* Files the source includes by absolute path (#include "/..." or <...>). */
static void hash_absolute_includes(hasher *h, const char *source)
{
    for (const char *at = source; (at = strstr(at, "#include"));) {
        at += 8;
        while (*at == ' ' || *at == '\t')
            at++;
        if ((*at != '"' && *at != '<') || at[1] != '/')
            continue;
        const char close = *at == '"' ? '"' : '>';
        const char *end = strchr(at + 1, close);
        if (!end || end - at > 4000)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%.*s", (int)(end - at - 1), at + 1);
        hash_file(h, path);
    }
}

/* ---- programs ---- */

enum { OUT_LOG, OUT_PTX, OUT_CUBIN, OUTS };

typedef struct {
    int32_t size_code, data_code; /* what GetXSize and GetX returned */
    uint64_t size;
    char *data;
} output;

typedef struct {
    char *source, *name;
    int headers;
    char **header_sources, **include_names;
    int compiled;
    int32_t result;
    output out[OUTS];
} program;

static char *copy(const char *text)
{
    return text ? strdup(text) : NULL;
}

nvrtcResult nvrtcVersion(int *major, int *minor)
{
    return have_real() ? real.Version(major, minor) : NVRTC_ERROR_INTERNAL_ERROR;
}

const char *nvrtcGetErrorString(nvrtcResult result)
{
    return have_real() ? real.GetErrorString(result) : "NVRTC_ERROR (the memo found no NVRTC)";
}

nvrtcResult nvrtcCreateProgram(nvrtcProgram *out, const char *source, const char *name,
                               int headers, const char *const *header_sources,
                               const char *const *include_names)
{
    if (!out || !source || headers < 0)
        return NVRTC_ERROR_INVALID_INPUT;
    program *p = calloc(1, sizeof *p);
    if (!p)
        return NVRTC_ERROR_OUT_OF_MEMORY;
    p->source = copy(source);
    p->name = copy(name);
    p->headers = headers;
    p->header_sources = calloc((size_t)headers + 1, sizeof(char *));
    p->include_names = calloc((size_t)headers + 1, sizeof(char *));
    for (int i = 0; i < headers && p->header_sources && p->include_names; i++) {
        p->header_sources[i] = copy(header_sources ? header_sources[i] : NULL);
        p->include_names[i] = copy(include_names ? include_names[i] : NULL);
    }
    *out = (nvrtcProgram)p;
    return NVRTC_SUCCESS;
}

nvrtcResult nvrtcDestroyProgram(nvrtcProgram *handle)
{
    if (!handle || !*handle)
        return NVRTC_ERROR_INVALID_PROGRAM;
    program *p = (program *)*handle;
    for (int i = 0; i < p->headers; i++) {
        free(p->header_sources ? p->header_sources[i] : NULL);
        free(p->include_names ? p->include_names[i] : NULL);
    }
    free(p->header_sources);
    free(p->include_names);
    for (int i = 0; i < OUTS; i++)
        free(p->out[i].data);
    free(p->source);
    free(p->name);
    free(p);
    *handle = NULL;
    return NVRTC_SUCCESS;
}

static void key_of(char hex[33], const program *p, int count, const char *const *options)
{
    hasher h = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
    hash_string(&h, p->name);
    hash_string(&h, p->source);
    for (int i = 0; i < p->headers; i++) {
        hash_string(&h, p->include_names[i]);
        hash_string(&h, p->header_sources[i]);
    }
    for (int i = 0; i < count; i++)
        hash_string(&h, options[i]);
    for (int i = 0; i < count; i++) {
        int skip;
        const char *dir = include_dir(options[i], i + 1 < count ? options[i + 1] : NULL, &skip);
        if (dir && !is_toolkit(dir))
            hash_tree(&h, dir, 0);
        i += skip;
    }
    hash_absolute_includes(&h, p->source);
    snprintf(hex, 33, "%016llx%016llx", (unsigned long long)h.a, (unsigned long long)h.b);
}

/* The memo's file: a header line, the result, then each output's codes, size and bytes. */
static int load_memo(program *p, const char *path)
{
    FILE *file = fopen(path, "rb");
    if (!file)
        return 0;
    char magic[8];
    int ok = fread(magic, 1, 8, file) == 8 && memcmp(magic, "PJMEMO1\n", 8) == 0 &&
             fread(&p->result, sizeof p->result, 1, file) == 1;
    for (int i = 0; i < OUTS && ok; i++) {
        output *o = &p->out[i];
        ok = fread(&o->size_code, sizeof o->size_code, 1, file) == 1 &&
             fread(&o->data_code, sizeof o->data_code, 1, file) == 1 &&
             fread(&o->size, sizeof o->size, 1, file) == 1 && o->size < (1ull << 30);
        o->data = ok ? malloc(o->size ? o->size : 1) : NULL;
        ok = ok && o->data && fread(o->data, 1, o->size, file) == o->size;
    }
    fclose(file);
    return ok;
}

/* Written whole or not at all: a temp file renamed into place (threads and worker processes
 * compile side by side). */
static void store_memo(const program *p, const char *dir, const char *hex)
{
    char path[4096], temp[4200];
    snprintf(path, sizeof path, "%s/%s", dir, hex);
    snprintf(temp, sizeof temp, "%s.%ld.%lx.tmp", path, (long)getpid(), (unsigned long)pthread_self());
    FILE *file = fopen(temp, "wb");
    if (!file)
        return;
    int ok = fwrite("PJMEMO1\n", 1, 8, file) == 8 &&
             fwrite(&p->result, sizeof p->result, 1, file) == 1;
    for (int i = 0; i < OUTS && ok; i++) {
        const output *o = &p->out[i];
        ok = fwrite(&o->size_code, sizeof o->size_code, 1, file) == 1 &&
             fwrite(&o->data_code, sizeof o->data_code, 1, file) == 1 &&
             fwrite(&o->size, sizeof o->size, 1, file) == 1 &&
             (!o->size || fwrite(o->data, 1, o->size, file) == o->size);
    }
    ok = fclose(file) == 0 && ok;
    if (!ok || rename(temp, path) != 0)
        unlink(temp);
}

/* One output of a compiled real program. */
static void take(output *o, nvrtcProgram real_program, nvrtcResult (*size_of)(nvrtcProgram, size_t *),
                 nvrtcResult (*get)(nvrtcProgram, char *))
{
    size_t size = 0;
    o->size_code = size_of ? (int32_t)size_of(real_program, &size) : NVRTC_ERROR_INVALID_INPUT;
    o->size = o->size_code == NVRTC_SUCCESS ? size : 0;
    o->data = malloc(o->size ? o->size : 1);
    o->data_code = o->data && o->size && get ? (int32_t)get(real_program, o->data) : o->size_code;
}

static nvrtcResult compile_for_real(program *p, int count, const char *const *options)
{
    nvrtcProgram r = NULL;
    nvrtcResult result =
        real.CreateProgram(&r, p->source, p->name, p->headers,
                           (const char *const *)p->header_sources,
                           (const char *const *)p->include_names);
    if (result != NVRTC_SUCCESS)
        return result;
    p->result = (int32_t)real.CompileProgram(r, count, options);
    take(&p->out[OUT_LOG], r, real.GetProgramLogSize, real.GetProgramLog);
    take(&p->out[OUT_PTX], r, real.GetPTXSize, real.GetPTX);
    take(&p->out[OUT_CUBIN], r, real.GetCUBINSize, real.GetCUBIN);
    real.DestroyProgram(&r);
    return NVRTC_SUCCESS;
}

/* One byte appended to dir/hits or dir/misses: what the memo saved, for `make valgrind`'s
 * log. */
static void tally(const char *dir, const char *which)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, which);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
        if (write(fd, ".", 1) != 1) { /* a lost tally costs nothing */
        }
        close(fd);
    }
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram handle, int count, const char *const *options)
{
    program *p = (program *)handle;
    if (!p || count < 0)
        return NVRTC_ERROR_INVALID_INPUT;
    if (!have_real())
        return NVRTC_ERROR_INTERNAL_ERROR;
    const char *dir = getenv("PJTEST_NVRTC_MEMO");
    char hex[33], path[4096];
    key_of(hex, p, count, options);
    snprintf(path, sizeof path, "%s/%s", dir ? dir : "", hex);
    for (int i = 0; i < OUTS; i++) { /* a program compiled twice keeps the last */
        free(p->out[i].data);
        memset(&p->out[i], 0, sizeof p->out[i]);
    }
    const int hit = dir && *dir && load_memo(p, path);
    if (dir && *dir)
        tally(dir, hit ? "hits" : "misses");
    if (!hit) {
        for (int i = 0; i < OUTS; i++) {
            free(p->out[i].data);
            memset(&p->out[i], 0, sizeof p->out[i]);
        }
        nvrtcResult made = compile_for_real(p, count, options);
        if (made != NVRTC_SUCCESS)
            return made;
        if (dir && *dir)
            store_memo(p, dir, hex);
    }
    p->compiled = 1;
    return (nvrtcResult)p->result;
}

static nvrtcResult size_of(nvrtcProgram handle, int which, size_t *size)
{
    const program *p = (const program *)handle;
    if (!p || !size)
        return NVRTC_ERROR_INVALID_INPUT;
    if (!p->compiled)
        return NVRTC_ERROR_INVALID_PROGRAM;
    *size = (size_t)p->out[which].size;
    return (nvrtcResult)p->out[which].size_code;
}

static nvrtcResult data_of(nvrtcProgram handle, int which, char *buffer)
{
    const program *p = (const program *)handle;
    if (!p || !buffer)
        return NVRTC_ERROR_INVALID_INPUT;
    if (!p->compiled)
        return NVRTC_ERROR_INVALID_PROGRAM;
    memcpy(buffer, p->out[which].data, p->out[which].size);
    return (nvrtcResult)p->out[which].data_code;
}

nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram p, size_t *size)
{
    return size_of(p, OUT_LOG, size);
}

nvrtcResult nvrtcGetProgramLog(nvrtcProgram p, char *log)
{
    return data_of(p, OUT_LOG, log);
}

nvrtcResult nvrtcGetPTXSize(nvrtcProgram p, size_t *size)
{
    return size_of(p, OUT_PTX, size);
}

nvrtcResult nvrtcGetPTX(nvrtcProgram p, char *ptx)
{
    return data_of(p, OUT_PTX, ptx);
}

nvrtcResult nvrtcGetCUBINSize(nvrtcProgram p, size_t *size)
{
    return size_of(p, OUT_CUBIN, size);
}

nvrtcResult nvrtcGetCUBIN(nvrtcProgram p, char *cubin)
{
    return data_of(p, OUT_CUBIN, cubin);
}
