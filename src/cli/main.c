/* main.c — ptxjit's command line: global options, then one command. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char usage[] =
    "usage: ptxjit [global options] COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  list                          kernel families and where their templates come from\n"
    "  info FAMILY                   parameters (types, allowed values, defaults, docs),\n"
    "                                constraints and entry points\n"
    "  ptx FAMILY [key=value ...]    specialize, compile (or take from the cache), print PTX\n"
    "  source FAMILY [key=value ...] print the specialized CUDA source (backend=llvm: the\n"
    "                                generated LLVM IR)\n"
    "  ir FAMILY [key=value ...]     print the LLVM IR that the llvm backend generates\n"
    "  inspect FAMILY [key=value ...] canonical params, cache key, origin, sizes, compiler\n"
    "                                log, and registers/shared/local memory with a GPU\n"
    "  run FAMILY [key=value ...] [n=N] [h=H w=W] [m=M n=N k=K] [runs=R]\n"
    "                                run on fresh random data (reduce: n elements;\n"
    "                                transpose: an h x w matrix, default 16384 x 16384;\n"
    "                                matmul: m x k times k x n, default 4096 each), check\n"
    "                                against the CPU reference (matmul: float64, relative\n"
    "                                error), print time and GB/s or GFLOP/s (needs a GPU)\n"
    "  bench reduce|transpose|matmul [n=N] [runs=R]\n"
    "                                the family's progression and a parameter sweep, against\n"
    "                                peers measured in the same run: the device-to-device\n"
    "                                copy, cuBLAS Sgeam (transpose), cuBLAS SGEMM, TF32 and\n"
    "                                GemmEx bf16 (matmul) (needs a GPU); transpose: fp32\n"
    "                                n x n, default 16384^2 and 32768^2; matmul: n^3,\n"
    "                                default 4096^3 fp32 and 8192^3 bf16\n"
    "  bench transpose|matmul [n=N] [runs=R] \"PARAMS\" ...\n"
    "                                the same, timing each PARAMS set (one quoted argument\n"
    "                                each) instead of the built-in sweep or progression\n"
    "  bench jit                     JIT costs: cold compile, disk hit in a fresh process,\n"
    "                                memory hit + launch against a bare cuLaunchKernel\n"
    "  bench backends reduce|transpose|matmul [n=N] [runs=R]\n"
    "                                each variant the llvm backend generates, through the\n"
    "                                family op with backend=nvrtc and backend=llvm in one\n"
    "                                process: GB/s of each and llvm/nvrtc (matmul: GFLOP/s\n"
    "                                at n^3, default 4096, fp32 and wgmma bf16, and the\n"
    "                                difference of the two results) (needs a GPU)\n"
    "  bench compile [FAMILY [key=value ...]] [samples=N]\n"
    "                                cold compiles (request -> cubin) of both backends in one\n"
    "                                process, median of N (10), time of each stage, CPU time,\n"
    "                                what each cubin holds (default: reduce variant=vectorized\n"
    "                                tpb=512 batch=8; no GPU needed; with one, also module\n"
    "                                loads and the compiles with the driver's compute cache)\n"
    "  jit-time FAMILY [key=value ...] time one context open and one request in this\n"
    "                                process (what `bench jit` runs in a fresh process)\n"
    "  cache path|stats|clear|trim   the disk cache: where it is, its counters, remove\n"
    "                                every entry, or evict down to the cap and sweep the\n"
    "                                temp files of killed writers\n"
    "\n"
    "global options:\n"
    "  --arch ARCH          target architecture (default: $PTXJIT_ARCH, the GPU's, sm_90a)\n"
    "  --backend NAME       compiler backend: nvrtc (default; CUDA templates through NVRTC)\n"
    "                       or llvm (IR generated in C, NVPTX, nvJitLink); a request's own\n"
    "                       backend=nvrtc|llvm parameter overrides it\n"
    "  --cache-dir DIR      disk cache root (default: $PTXJIT_CACHE_DIR, $XDG_CACHE_HOME/ptxjit,\n"
    "                       ~/.cache/ptxjit)\n"
    "  --no-disk-cache      keep compiled kernels in memory only\n"
    "  --templates DIRS     extra ':'-separated template directories (also\n"
    "                       $PTXJIT_TEMPLATE_PATH)\n"
    "  --device N           CUDA device ordinal (default 0)\n"
    "  --no-gpu             never touch the CUDA driver\n"
    "  -h, --help           this help (COMMAND --help: the same)\n"
    "  --version            print the version\n"
    "\n"
    "\n"
    "environment: PTXJIT_CACHE_DIR, PTXJIT_CACHE_MAX_BYTES (disk cache cap, default 1G),\n"
    "  PTXJIT_CACHE_SHARED=1 (trust a cache directory shared with its group), PTXJIT_ARCH,\n"
    "  PTXJIT_TEMPLATE_PATH, PTXJIT_NVRTC_LIBRARY, PTXJIT_CUDA_LIBRARY, CUDA_HOME\n"
    "\n"
    "exit status: 0 success, 1 failure, 2 usage error (unknown command, option or parameter)\n";

static const struct {
    const char *name;
    int (*run)(cli_args *);
} commands[] = {
    {"list", cmd_list},       {"info", cmd_info}, {"ptx", cmd_ptx},     {"source", cmd_source},
    {"ir", cmd_ir},
    {"inspect", cmd_inspect}, {"run", cmd_run},   {"bench", cmd_bench}, {"cache", cmd_cache},
    {"jit-time", cmd_jit_time},
};

static int wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
    return 0;
}

/* Consumes global options; returns the index of the command, or -1 after a usage error. */
static int parse_globals(cli_args *args, int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *option = argv[i];
        const char **slot = NULL;
        if (strcmp(option, "--arch") == 0)
            slot = &args->options.arch;
        else if (strcmp(option, "--backend") == 0)
            slot = &args->options.backend;
        else if (strcmp(option, "--cache-dir") == 0)
            slot = &args->options.cache_dir;
        else if (strcmp(option, "--templates") == 0)
            slot = &args->options.template_path;
        else if (strcmp(option, "--no-disk-cache") == 0) {
            args->options.disk_cache = 0;
            continue;
        } else if (strcmp(option, "--no-gpu") == 0) {
            args->options.use_gpu = 0;
            continue;
        } else if (strcmp(option, "--device") == 0 && i + 1 < argc) {
            args->options.device = atoi(argv[++i]);
            continue;
        } else if (strcmp(option, "-h") == 0 || strcmp(option, "--help") == 0) {
            fputs(usage, stdout);
            exit(CLI_OK);
        } else if (strcmp(option, "--version") == 0) {
            printf("ptxjit %s\n", PTXJIT_VERSION);
            exit(CLI_OK);
        }
        if (!slot || i + 1 >= argc) {
            fprintf(stderr, "ptxjit: unknown option or missing value: %s\n%s", option, usage);
            return -1;
        }
        *slot = argv[++i];
    }
    return i;
}

int main(int argc, char **argv)
{
    cli_args args;
    ptxjit_options_init(&args.options);
    int command = parse_globals(&args, argc, argv);
    if (command < 0)
        return CLI_USAGE;
    if (command >= argc) {
        fputs(usage, stderr);
        return CLI_USAGE;
    }
    args.argc = argc - command - 1;
    args.argv = argv + command + 1;
    if (wants_help(args.argc, args.argv)) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
        if (strcmp(argv[command], commands[c].name) == 0)
            return commands[c].run(&args);
    fprintf(stderr, "ptxjit: unknown command '%s'\n%s", argv[command], usage);
    return CLI_USAGE;
}
