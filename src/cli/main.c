/* main.c — ptxjit's command line: global options (anywhere on the line), the commands' own
 * options (taken anywhere too, refused to the other commands) and one command. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/family_cli.h"

/* json: the command prints JSON under --json (cache: `cache stats` only, which it checks);
 * options: the command's own, NULL-terminated (NULL: none). */
typedef struct {
    const char *name;
    int (*run)(cli_args *);
    int json;
    const cli_option *options;
} command;

static const command commands[] = {
    {"list", cmd_list, 1, NULL},          {"info", cmd_info, 1, NULL},
    {"ptx", cmd_ptx, 0, NULL},            {"source", cmd_source, 0, NULL},
    {"ir", cmd_ir, 0, NULL},              {"inspect", cmd_inspect, 1, NULL},
    {"run", cmd_run, 0, cli_run_options},            {"bench", cmd_bench, 1, cli_bench_options},
    {"cache", cmd_cache, 1, cli_cache_options},        {"jit-time", cmd_jit_time, 0, cli_jit_time_options},
    {"tune", cmd_tune, 1, cli_tune_options},
    {"sass", cmd_sass, 0, NULL},          {"compile-worker", cmd_compile_worker, 0, NULL},
    {"warm", cmd_warm, 1, cli_warm_options},
    {"aot", cmd_aot, 0, cli_aot_options},
    {"explain", cmd_explain, 0, NULL},
};

typedef enum {
    OPT_ARCH, OPT_BACKEND, OPT_CACHE_DIR, OPT_TEMPLATES, OPT_DEVICE, /* take a value */
    OPT_DEFINE, OPT_INCLUDE,
    OPT_NO_DISK_CACHE, OPT_NO_GPU, OPT_JSON, OPT_HELP, OPT_VERSION,   /* flags */
    OPT_LINEINFO, OPT_FAST_MATH, OPT_DEBUG, OPT_CONFINE_INCLUDES
} option_id;

/* The global options: every command takes them. */
static const struct {
    cli_option option;
    option_id id;
} options[] = {
    {{"--arch", "sm_90a", NULL}, OPT_ARCH},
    {{"--backend", "llvm", NULL}, OPT_BACKEND},
    {{"--cache-dir", "/tmp/ptxjit-cache", NULL}, OPT_CACHE_DIR},
    {{"--templates", "./templates", NULL}, OPT_TEMPLATES},
    {{"--device", "0", NULL}, OPT_DEVICE},
    {{"-D", "NAME=VALUE", NULL}, OPT_DEFINE},
    {{"--define", "NAME=VALUE", NULL}, OPT_DEFINE},
    {{"-I", "DIR", NULL}, OPT_INCLUDE},
    {{"--lineinfo", NULL, NULL}, OPT_LINEINFO},
    {{"--fast-math", NULL, NULL}, OPT_FAST_MATH},
    {{"-G", NULL, NULL}, OPT_DEBUG},
    {{"--no-disk-cache", NULL, NULL}, OPT_NO_DISK_CACHE},
    {{"--no-gpu", NULL, NULL}, OPT_NO_GPU},
    {{"--confine-includes", NULL, NULL}, OPT_CONFINE_INCLUDES},
    {{"--json", NULL, NULL}, OPT_JSON},
    {{"-h", NULL, NULL}, OPT_HELP},
    {{"--help", NULL, NULL}, OPT_HELP},
    {{"--version", NULL, NULL}, OPT_VERSION},
};

/* A command's own option met on the line, before the command is known: checked as it is
 * taken, given to the command or refused once the command is known. */
typedef struct {
    const command *owner; /* the first command whose table has it */
    const cli_option *option;
    const char *value; /* "" for a flag */
} own_option;

/* A compile option's word, as the library spells it: prefix and value ("-D" "NAME=V"). */
typedef struct {
    const char *prefix, *value;
} compile_word;

/* The command line once parsed: the command, its arguments and the global options. */
typedef struct {
    cli_args args;
    const char *command; /* NULL: none given */
    int help, version;
    compile_word *compile_words; /* room for one per word of the line */
    int compile_count;
    char *compile_options;       /* the words joined, after $PTXJIT_COMPILE_OPTIONS's */
    own_option *own;             /* room for one per word of the line */
    int own_count;
} command_line;

/* "-x" and "--x" are options; "-" alone is an ordinary word (`warm -` reads its list from
 * stdin). */
static int is_option(const char *word)
{
    return word[0] == '-' && word[1] != '\0';
}

static int parse_device(int *out, const char *text)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || value < 0 || value > INT_MAX) {
        fprintf(stderr, "ptxjit: --device takes a CUDA device ordinal (0, 1, ...), not '%s'\n",
                text);
        return CLI_USAGE;
    }
    *out = (int)value;
    return CLI_OK;
}

/* One compile option word, as the library spells it ("-DNAME=V", "-IDIR", "-G"). A value
 * holding a space would reach the library as two words: said here, with the option's name. */
static int add_compile_word(command_line *line, const char *prefix, const char *value)
{
    if (value && value[strcspn(value, " \t\n")]) {
        fprintf(stderr, "ptxjit: the compile option %s '%s' holds a space; compile options are "
                        "single words\n",
                prefix, value);
        return CLI_USAGE;
    }
    line->compile_words[line->compile_count++] = (compile_word){prefix, value ? value : ""};
    return CLI_OK;
}

static int apply_option(command_line *line, option_id id, const char *value)
{
    ptxjit_options *o = &line->args.options;
    switch (id) {
    case OPT_DEFINE:
        return add_compile_word(line, "-D", value);
    case OPT_INCLUDE:
        return add_compile_word(line, "-I", value);
    case OPT_LINEINFO:
        return add_compile_word(line, "-lineinfo", NULL);
    case OPT_FAST_MATH:
        return add_compile_word(line, "-use_fast_math", NULL);
    case OPT_DEBUG:
        return add_compile_word(line, "-G", NULL);
    case OPT_ARCH:
        o->arch = value;
        break;
    case OPT_BACKEND:
        if (strcmp(value, "nvrtc") != 0 && strcmp(value, "llvm") != 0) {
            fprintf(stderr, "ptxjit: --backend takes nvrtc or llvm, not '%s'\n", value);
            return CLI_USAGE;
        }
        o->backend = value;
        break;
    case OPT_CACHE_DIR:
        o->cache_dir = value;
        break;
    case OPT_TEMPLATES:
        o->template_path = value;
        break;
    case OPT_DEVICE:
        return parse_device(&o->device, value);
    case OPT_NO_DISK_CACHE:
        o->disk_cache = 0;
        break;
    case OPT_NO_GPU:
        o->use_gpu = 0;
        break;
    case OPT_CONFINE_INCLUDES:
        o->confine_includes = 1;
        break;
    case OPT_JSON:
        line->args.json = 1;
        break;
    case OPT_HELP:
        line->help = 1;
        break;
    case OPT_VERSION:
        line->version = 1;
        break;
    }
    return CLI_OK;
}

/* A command's own option, kept until the command is known; its value checked now, so that a
 * bad one is said wherever it stands on the line. */
static int take_own(command_line *line, const command *owner, const cli_option *option,
                    const char *value)
{
    int code = value && option->check ? option->check(value) : CLI_OK;
    if (code == CLI_OK)
        line->own[line->own_count++] = (own_option){owner, option, value ? value : ""};
    return code;
}

/* The option named by word's first length bytes: a global one (*global set), else the first
 * command's own (*owner set); NULL when none is. */
static const cli_option *find_option(const char *word, size_t length, option_id *global,
                                     const command **owner)
{
    for (size_t k = 0; k < CLI_LENGTH(options); k++)
        if (strlen(options[k].option.name) == length &&
            strncmp(options[k].option.name, word, length) == 0) {
            *global = options[k].id;
            *owner = NULL;
            return &options[k].option;
        }
    for (size_t c = 0; c < CLI_LENGTH(commands); c++)
        for (const cli_option *o = commands[c].options; o && o->name; o++)
            if (strlen(o->name) == length && strncmp(o->name, word, length) == 0) {
                *owner = &commands[c];
                return o;
            }
    return NULL;
}

/* Takes the option at argv[*i] (and its value: "--name=value" or the next word, which moves
 * *i past it). A next word that starts with "--" is not taken as a value: `ptx reduce --arch
 * --no-gpu` is far more likely a forgotten value than an architecture so named (--arch=--x
 * still says it on purpose); "-1" is taken, for --device to say what is wrong with it. */
static int take_option(command_line *line, int argc, char **argv, int *i)
{
    const char *word = argv[*i], *equals = strncmp(word, "--", 2) == 0 ? strchr(word, '=') : NULL;
    /* -DNAME=V and -IDIR, the compilers' own spelling, with the value attached. */
    if ((strncmp(word, "-D", 2) == 0 || strncmp(word, "-I", 2) == 0) && word[2])
        return apply_option(line, word[1] == 'D' ? OPT_DEFINE : OPT_INCLUDE, word + 2);
    size_t length = equals ? (size_t)(equals - word) : strlen(word);
    option_id global = OPT_ARCH;
    const command *owner = NULL;
    const cli_option *option = find_option(word, length, &global, &owner);
    if (!option) {
        fprintf(stderr, "ptxjit: unknown option '%.*s'; 'ptxjit --help' lists the options (put "
                        "'--' before an argument that starts with '-')\n",
                (int)length, word);
        return CLI_USAGE;
    }
    const char *value = equals ? equals + 1 : NULL;
    if (!option->example && value) {
        fprintf(stderr, "ptxjit: %s takes no value; write it alone, not '%s'\n", option->name,
                word);
        return CLI_USAGE;
    }
    if (option->example && !value && *i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0)
        value = argv[++*i];
    if (option->example && (!value || !*value)) {
        fprintf(stderr, "ptxjit: %s needs a value, e.g. %s %s\n", option->name, option->name,
                option->example);
        return CLI_USAGE;
    }
    return owner ? take_own(line, owner, option, value) : apply_option(line, global, value);
}

/* Global options may come anywhere before `--`. The other words keep their order and are
 * moved to the front of argv (after argv[0]): the command, then its arguments, so that
 * quoted parameter sets (`bench transpose "variant=tma tile=64"`) reach it unchanged. */
static int parse_line(command_line *line, int argc, char **argv)
{
    int words = 0, options_ended = 0;
    for (int i = 1; i < argc; i++) {
        if (options_ended || !is_option(argv[i])) {
            argv[1 + words++] = argv[i];
        } else if (strcmp(argv[i], "--") == 0) {
            options_ended = 1;
        } else {
            int code = take_option(line, argc, argv, &i);
            if (code != CLI_OK)
                return code;
        }
    }
    line->command = words ? argv[1] : NULL;
    line->args.argc = words ? words - 1 : 0;
    line->args.argv = argv + 2;
    return CLI_OK;
}

/* A result cut short (full disk, closed pipe) must not end in success. */
static int finish_output(int code)
{
    int flush_failed = fflush(stdout) != 0;
    if (!flush_failed && !ferror(stdout))
        return code;
    fprintf(stderr, "ptxjit: writing the result to stdout failed%s%s; check the file or pipe "
                    "it goes to\n",
            flush_failed ? ": " : "", flush_failed ? strerror(errno) : "");
    return code == CLI_OK ? CLI_FAIL : code;
}

/* name's index in the command's own options, or -1 when it owns no such option. */
static int own_index(const command *c, const char *name)
{
    for (int i = 0; c->options && c->options[i].name && i < CLI_OWN_MAX; i++)
        if (strcmp(c->options[i].name, name) == 0)
            return i;
    return -1;
}

/* "--a, --b and --c are tune's options, not 'list''s; leave them out": every option of the
 * owner, in its table's order. */
static int refuse_own_options(const command *owner, const command *c)
{
    int count = 0;
    while (owner->options[count].name)
        count++;
    fprintf(stderr, "ptxjit: ");
    for (int n = 0; n < count; n++)
        fprintf(stderr, "%s%s", n == 0 ? "" : n == count - 1 ? " and " : ", ",
                owner->options[n].name);
    fprintf(stderr, " %s %s's option%s, not '%s''s; leave %s out\n", count == 1 ? "is" : "are",
            owner->name, count == 1 ? "" : "s", c->name, count == 1 ? "it" : "them");
    return CLI_USAGE;
}

/* Hands the command its own options, by their index in its table; an option of another
 * command's is refused (the owners in the command table's order). */
static int give_own_options(command_line *line, const command *c)
{
    for (size_t o = 0; o < CLI_LENGTH(commands); o++)
        for (int k = 0; k < line->own_count; k++)
            if (line->own[k].owner == &commands[o] && own_index(c, line->own[k].option->name) < 0)
                return refuse_own_options(&commands[o], c);
    for (int k = 0; k < line->own_count; k++)
        line->args.own[own_index(c, line->own[k].option->name)] = line->own[k].value;
    return CLI_OK;
}

static int run_command(command_line *line)
{
    for (size_t c = 0; c < CLI_LENGTH(commands); c++) {
        if (strcmp(line->command, commands[c].name) != 0)
            continue;
        if (line->args.json && !commands[c].json)
            return cli_json_refused(line->command);
        int code = give_own_options(line, &commands[c]);
        return code == CLI_OK ? commands[c].run(&line->args) : code;
    }
    fprintf(stderr, "ptxjit: unknown command '%s'\n", line->command);
    cli_print_usage(stderr);
    return CLI_USAGE;
}

/* The command line's compile options become the context's, after $PTXJIT_COMPILE_OPTIONS's
 * (which the library reads only when the option is not given). */
static int set_compile_options(command_line *line)
{
    if (!line->compile_count)
        return CLI_OK;
    const char *env = getenv("PTXJIT_COMPILE_OPTIONS");
    size_t size = (env ? strlen(env) : 0) + 1;
    for (int i = 0; i < line->compile_count; i++)
        size += 1 + strlen(line->compile_words[i].prefix) + strlen(line->compile_words[i].value);
    char *joined = malloc(size);
    if (!joined) {
        fprintf(stderr, "ptxjit: out of memory\n");
        return CLI_FAIL;
    }
    size_t used = (size_t)snprintf(joined, size, "%s", env && *env ? env : "");
    for (int i = 0; i < line->compile_count; i++)
        used += (size_t)snprintf(joined + used, size - used, "%s%s%s", used ? " " : "",
                                 line->compile_words[i].prefix, line->compile_words[i].value);
    line->compile_options = joined;
    line->args.options.compile_options = joined;
    return CLI_OK;
}

/* Compile workers (tune, warm) are this program, unless $PTXJIT_COMPILE_WORKER names one. */
static void set_compile_worker(cli_args *args)
{
    static char self[PATH_MAX];
    if (getenv("PTXJIT_COMPILE_WORKER"))
        return;
    ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (length > 0) {
        self[length] = '\0';
        args->options.compile_worker = self;
    }
}

static int run(command_line *line, int argc, char **argv)
{
    if (!cli_families_check())
        return CLI_FAIL;
    ptxjit_options_init(&line->args.options);
    set_compile_worker(&line->args);
    line->compile_words = calloc((size_t)argc, sizeof *line->compile_words);
    line->own = calloc((size_t)argc, sizeof *line->own);
    if (!line->compile_words || !line->own) {
        fprintf(stderr, "ptxjit: out of memory\n");
        return CLI_FAIL;
    }
    int code = parse_line(line, argc, argv);
    if (code == CLI_OK)
        code = set_compile_options(line);
    if (code != CLI_OK)
        return code;
    if (line->help) {
        cli_print_usage(stdout);
        return finish_output(CLI_OK);
    }
    if (line->version) {
        printf("ptxjit %s\n", PTXJIT_VERSION);
        return finish_output(CLI_OK);
    }
    if (!line->command) {
        cli_print_usage(stderr);
        return CLI_USAGE;
    }
    return finish_output(run_command(line));
}

int main(int argc, char **argv)
{
    command_line line = {0};
    int code = run(&line, argc, argv);
    free(line.compile_words);
    free(line.own);
    free(line.compile_options);
    return code;
}
