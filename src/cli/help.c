/* help.c — `ptxjit --help`: the commands, the families' lines and the options. The words that
 * depend on the families (the requests that bench compile and bench tune time, the run sizes
 * that tune takes, each family's own lines) are written from the family table at run time, so
 * that the help names no family here and stays true when the table changes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/family_cli.h"

/* A generated description starts in this column and its lines end by this one, as the
 * written ones do. */
#define HELP_INDENT 32
#define HELP_WIDTH 88

/* Up to bench backends. */
static const char usage_head[] =
    "usage: ptxjit [options] COMMAND [ARGS] [options]\n"
    "\n"
    "commands:\n"
    "  list                          kernel families and where their templates come from\n"
    "                                (templates that cannot be used: warnings on stderr)\n"
    "  info FAMILY                   parameters (types, allowed values, defaults, docs),\n"
    "                                constraints and entry points\n"
    "  ptx FAMILY [key=value ...]    specialize, compile (or take from the cache), print PTX\n"
    "  source FAMILY [key=value ...] print the specialized CUDA source (backend=llvm: the\n"
    "                                generated LLVM IR), without compiling it: also for a\n"
    "                                request that fails to compile\n"
    "  ir FAMILY [key=value ...]     print the LLVM IR that the llvm backend generates\n"
    "  inspect FAMILY [key=value ...] canonical params, cache key, origin, sizes, compiler\n"
    "                                log, and per entry registers, static shared and local\n"
    "                                memory, max threads per block, parameter bytes: the\n"
    "                                driver's with a GPU, else read from the cubin\n"
    "  sass FAMILY [key=value ...]   print the cubin's SASS, disassembled by the CUDA\n"
    "                                toolkit's nvdisasm (no GPU needed; exit status 3 when\n"
    "                                there is no nvdisasm)\n"
    "  run FAMILY [key=value ...] [SIZE=N ...] [runs=R]\n"
    "                                run on fresh random data, check against the CPU\n"
    "                                reference, print time and GB/s or GFLOP/s (needs a\n"
    "                                GPU); each family's sizes (and matmul's layout words,\n"
    "                                batch= lda= ... stride_c=) are below\n"
    "  run FAMILY [key=value ...] [SIZE=N ...] --plan\n"
    "                                print the request the family's op launches for that\n"
    "                                problem and why (no GPU needed): a variant the\n"
    "                                defaults cannot run the shape with is replaced by one\n"
    "                                that can; matmul's tile and softmax's threads per\n"
    "                                row are fitted to the shape\n"
    "  bench FAMILY [n=N] [runs=R] [\"PARAMS\" ...]\n"
    "                                the family's table against peers measured in the same\n"
    "                                run (needs a GPU); where the family takes them, each\n"
    "                                PARAMS set (one quoted argument) is timed instead of\n"
    "                                the built-in rows; --svg FILE also draws the tables\n"
    "                                as bar charts (one SVG; bench backends too)\n"
    "  bench jit                     JIT costs: cold compile; the lookup (a disk hit) in 31\n"
    "                                fresh processes without a GPU, with its stages; memory\n"
    "                                hits from 1 to 16 threads;\n"
    "                                with a GPU, the first use in 31 fresh processes (open,\n"
    "                                get, first launch, sync) beside a bare driver program's,\n"
    "                                and memory hit + launch and ptxjit_launch alone against\n"
    "                                a bare cuLaunchKernel (runs without a GPU too)\n"
    "  bench backends FAMILY [n=N] [runs=R]\n"
    "                                each variant the llvm backend generates, through the\n"
    "                                family op with backend=nvrtc and backend=llvm in one\n"
    "                                process: GB/s or GFLOP/s of each and llvm/nvrtc\n"
    "                                (needs a GPU)\n"
    ;

/* After bench compile, up to bench tune. */
static const char usage_multigpu[] =
    "  bench multigpu [FAMILY] [devices=N] [SIZE=N ...] [runs=R] [\"PARAMS\"]\n"
    "                                every GPU at once (or the first N), one context and\n"
    "                                thread each, each on its own data (each family's\n"
    "                                multigpu sizes: below; without FAMILY, the families\n"
    "                                below timed without one), against one GPU alone:\n"
    "                                aggregate GB/s / (N x one GPU's), results checked, and\n"
    "                                the compiles (once per key in the process); a size word\n"
    "                                sets that size of every family timed that takes it;\n"
    "                                PARAMS with its family replaces the family's defaults\n"
    "                                (needs a GPU)\n"
    ;

/* After bench tune, up to tune FAMILY. */
static const char usage_middle[] =
    "  jit-time FAMILY [key=value ...] time one context open and one request in this\n"
    "                                process (what `bench jit` runs in a fresh process);\n"
    "                                --launch: with the GPU, then the first launch through\n"
    "                                the family's op and the sync; --bare CUBIN ENTRY: that\n"
    "                                first use as bare CUDA driver calls\n"
    "  explain FAMILY [key=value ...] the request's cache key and its components (template\n"
    "                                and header hashes, options, compiler, arch, backend);\n"
    "                                on a miss, the family's nearest entries on disk and on\n"
    "                                the remote tier and what differs (\"header helper.cuh\n"
    "                                changed\"); compiles nothing\n"
    "  cache path|stats|clear|trim   the disk cache: where it is, its counters, remove\n"
    "                                every entry, or evict down to the cap and sweep the\n"
    "                                temp files of killed writers (what clear and trim\n"
    "                                removed: on stderr)\n"
    "  cache export FILE [FAMILY ...] the disk cache's entries and tuning records (or those\n"
    "                                of the families) as a tar file (tar tf FILE lists it)\n"
    "  cache import FILE             every member checked as a disk load checks an entry,\n"
    "                                then published; bad members skipped and counted\n"
    "  cache stats --prometheus      the counters in Prometheus's text exposition format\n"
    "                                (hits and misses by tier, stores, evictions, remote\n"
    "                                errors, a histogram of compile times), for scraping\n"
    ;

/* After tune FAMILY's description. */
static const char usage_tail[] =
    "  tune --list | --clear         the tuning records in the cache, or remove them (how\n"
    "                                many: on stderr, or with --json {removed, path})\n"
    "  warm FILE|- | --from-records  compile the requests of FILE (- : stdin; one a line,\n"
    "                                FAMILY key=value ...; '#' starts a comment) into the\n"
    "                                cache at once, or the winner of every tuning record;\n"
    "                                a progress bar (terminal only), the summary and each\n"
    "                                refused request with the reason on stderr; exit status\n"
    "                                1 when one was refused\n"
    "  aot FILE|- [-o kernels.c]     compile the requests of FILE (warm's format) for each\n"
    "                                architecture of --arch (a list: sm_90a,sm_80; default\n"
    "                                $PTXJIT_ARCH, else sm_90a) into one C file (stdout\n"
    "                                without -o): the cubins and a ptxjit_aot_table that a\n"
    "                                program links and registers (ptxjit_register_aot), to\n"
    "                                serve them with no compiler at run time (docs/AOT.md).\n"
    "                                The same list gives the same bytes. Own options:\n"
    "                                --name NAME (the table's symbol; ptxjit_aot_kernels),\n"
    "                                --from-records (also every tuning record's winner, and\n"
    "                                the records, for PARAM=auto), --no-ptx (cubins only),\n"
    "                                --where-supported (a request an architecture refuses\n"
    "                                is left out there, not an error); exit status 1 when a\n"
    "                                request was refused\n"
    "  aot --list kernels.c          what a file of ptxjit aot holds: each kernel (arch,\n"
    "                                request, key, sizes) and record\n"
    "  compile-worker                the library's compile worker (started by tune and warm\n"
    "                                to compile in processes of their own): reads requests\n"
    "                                on stdin, compiles them into the disk cache\n"
    "\n"
    ;

/* After the families' lines. */
static const char usage_options[] =
    "global options (before or after the command and its arguments; a value follows as the\n"
    "next word or after '=', as in --arch=sm_90a):\n"
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
    "  --confine-includes   a template's includes must stay under its own directory,\n"
    "                       the -I directories and the toolkit's include directory;\n"
    "                       any other (an absolute path, a '..' or a link that leads\n"
    "                       out, a name through a macro) is refused (also\n"
    "                       PTXJIT_CONFINE_INCLUDES=1; docs/TEMPLATES.md)\n"
    "  -D NAME[=VALUE], --define NAME[=VALUE]\n"
    "                       compile option: define a macro (also -DNAME[=VALUE]; VALUE\n"
    "                       without spaces, quotes or backslashes)\n"
    "  -I DIR               compile option: an include directory, searched after the\n"
    "                       template's own and before the toolkit's (also -IDIR)\n"
    "  --lineinfo           compile option: line information for profilers (-lineinfo)\n"
    "  --fast-math          compile option: fast approximate math (-use_fast_math)\n"
    "  -G                   compile option: device debug information\n"
    "                       Compile options go to NVRTC (backend=nvrtc; llvm refuses them)\n"
    "                       for every kernel the command compiles (ptx, inspect, run,\n"
    "                       bench), after those of $PTXJIT_COMPILE_OPTIONS; they are part\n"
    "                       of the cache key, and inspect shows them\n"
    "  --json               list, info, inspect, cache stats, cache export, cache import,\n"
    "                       tune, warm and bench jit: print one JSON document instead of\n"
    "                       text, for programs (other commands refuse it)\n"
    "  --space, --retune, --compile-only, --bucket, --list, --clear\n"
    "                       tune's own (see tune above; --list aot's too; other commands\n"
    "                       refuse them)\n"
    "  --from-records       warm's and aot's own (see warm and aot above)\n"
    "  -o, --name, --no-ptx, --where-supported\n"
    "                       aot's own (see aot above)\n"
    "  --prometheus         cache stats' own (see cache above)\n"
    "  -h, --help           this help\n"
    "  --version            print the version\n"
    "  --                   end of options: the words after it are arguments even if they\n"
    "                       start with '-'\n"
    "\n"
    "ptx, sass, source and ir print only the artefact on stdout, the same bytes whether it was\n"
    "compiled or came from a cache; the line saying which (key, time) goes to stderr, as do\n"
    "errors.\n"
    "\n"
    "environment (what the library and this command read):\n"
    "  PTXJIT_CACHE_DIR          disk cache root (else $XDG_CACHE_HOME/ptxjit, else\n"
    "                            $HOME/.cache/ptxjit; no $HOME: no disk cache)\n"
    "  XDG_CACHE_HOME, HOME      where the disk cache goes without PTXJIT_CACHE_DIR\n"
    "  PTXJIT_CACHE_MAX_BYTES    disk cache cap: bytes, or with K, M, G, T (default 1G)\n"
    "  PTXJIT_CACHE_SHARED       1: trust a cache directory shared with its group\n"
    "  PTXJIT_ARCH               target architecture (else the GPU's, else sm_90a)\n"
    "  PTXJIT_TEMPLATE_PATH      ':'-separated folders of extra templates (*.cu files\n"
    "                            with a //@ptxjit family line)\n"
    "  PTXJIT_TEMPLATE_MAX_BYTES the largest template or header file read, in bytes (default\n"
    "                            16777216, 16 MiB); a larger one is a template problem\n"
    "  PTXJIT_COMPILE_OPTIONS    compile options for every request, in the library's\n"
    "                            words: -DNAME[=VALUE] -IDIR -lineinfo -use_fast_math -G\n"
    "  PTXJIT_CONFINE_INCLUDES   1: confine includes, as --confine-includes does (for a\n"
    "                            service compiling its users' templates)\n"
    "  PTXJIT_COMPILE_WORKER     the ptxjit program that tune and warm run as compile\n"
    "                            worker processes (this command sets its own path when\n"
    "                            the variable is unset; a program linked with libptxjit\n"
    "                            finds ptxjit beside the library, beside itself, then on\n"
    "                            PATH); \"none\": compile in threads only\n"
    "  PTXJIT_NVRTC_LIBRARY      path of libnvrtc.so, tried first\n"
    "  PTXJIT_NVJITLINK_LIBRARY  path of libnvJitLink.so (the llvm backend's PTX -> cubin)\n"
    "  PTXJIT_LLVM_LIBRARY       path of libptxjit_llvm.so (the llvm backend's plugin)\n"
    "                            (each of these three: none = never load it, as a program\n"
    "                            that serves only AOT tables may require; docs/AOT.md)\n"
    "  PTXJIT_CUDA_LIBRARY       path of libcuda.so.1 (the CUDA driver)\n"
    "  PTXJIT_VERBOSE            set: info messages to stderr too, not only warnings\n"
    "  PTXJIT_REMOTE_CACHE       a shared remote cache on Redis: redis://HOST:PORT[/DB] or\n"
    "                            unix:///PATH[?db=N] (docs/FLEET.md)\n"
    "  PTXJIT_REMOTE_CACHE_KEY_FILE  the fleet's signing key: a 0600 file of yours (without\n"
    "                            it the remote cache refuses to start)\n"
    "  PTXJIT_REMOTE_CACHE_UNSIGNED  1: no key, entries neither signed nor checked (a trusted\n"
    "                            network only)\n"
    "  PTXJIT_REMOTE_CACHE_PASSWORD_FILE  Redis AUTH password (a 0600 file)\n"
    "  PTXJIT_NETTLE_LIBRARY     path of libnettle.so.8 (signs remote entries; loaded only\n"
    "                            with a key file), tried alone\n"
    "  PTXJIT_REMOTE_CACHE_TIMEOUT_MS  with the connect timeout, the bound of each exchange\n"
    "                            with Redis, connecting and every reply byte included\n"
    "                            (default 200, so 300 ms in all)\n"
    "  PTXJIT_REMOTE_CACHE_CONNECT_TIMEOUT_MS  connecting (default 100)\n"
    "  PTXJIT_REMOTE_CACHE_BACKOFF_MS  the pause after 3 failures in a row (default 30000)\n"
    "  PTXJIT_REMOTE_CACHE_MAX_BYTES  the largest value sent or read (default 67108864,\n"
    "                            64 MiB): a larger reply is refused at its header\n"
    "  PTXJIT_REMOTE_CACHE_LEASE_MS  the compile lease of a key every node misses: its\n"
    "                            holder renews it while compiling; one that dies, or a lease\n"
    "                            nobody renews, delays the others this long at most\n"
    "                            (default 3000)\n"
    "  PTXJIT_COMPILE_WAIT_MS    how long a request waits for another process (same cache\n"
    "                            dir) or node (same remote cache) compiling its key, before\n"
    "                            compiling it itself (default 30000; 0: never wait)\n"
    "  CUDA_HOME                 CUDA toolkit root (default /usr/local/cuda): NVRTC's\n"
    "                            include folder, the libraries, bin/nvdisasm\n"
    "  LD_LIBRARY_PATH           where the libraries are searched by name (a change makes\n"
    "                            the compiler version be asked again)\n"
    "  PTXJIT_NVDISASM           sass: the nvdisasm program to run (else $CUDA_HOME/bin,\n"
    "                            /usr/local/cuda/bin, then $PATH)\n"
    "  PATH                      sass: where nvdisasm is looked for last\n"
    "  TMPDIR                    sass: where the cubin is written for nvdisasm (else /tmp)\n"
    "\n"
    "exit status: 0 success, 1 failure, 2 usage error (unknown command, option or parameter),\n"
    "3 a program the command runs is missing (sass: nvdisasm)\n";

/* text's words, wrapped to HELP_WIDTH columns, every line indented to HELP_INDENT. */
static void print_wrapped(FILE *out, const char *text)
{
    int column = 0;
    for (text += strspn(text, " "); *text; text += strspn(text, " ")) {
        int length = (int)strcspn(text, " ");
        if (column && column + 1 + length > HELP_WIDTH) {
            fputc('\n', out);
            column = 0;
        }
        column += column ? fprintf(out, " %.*s", length, text)
                         : fprintf(out, "%*s%.*s", HELP_INDENT, "", length, text);
        text += length;
    }
    if (column)
        fputc('\n', out);
}

/* A description that write composes from the family table, wrapped. */
static void print_generated(FILE *out, void (*write)(FILE *text))
{
    char *text = NULL;
    size_t size = 0;
    FILE *stream = open_memstream(&text, &size);
    if (!stream)
        return; /* out of memory: the help goes without this description */
    write(stream);
    if (fclose(stream) == 0)
        print_wrapped(out, text);
    free(text);
}

/* What comes before item i of count in "A, B and C", before the space that precedes it. */
static const char *joiner(int i, int count)
{
    return i == 0 ? "" : i + 1 == count ? " and" : ",";
}

/* The requests that bench compile times without a FAMILY, and those of a FAMILY alone. */
static void write_bench_compile(FILE *text)
{
    fputs("cold compiles (request -> cubin) of both backends in one process, median of N (10), "
          "time of each stage, CPU time, what each cubin holds; without FAMILY:", text);
    const cli_family *f;
    const cli_compile_target *t;
    int count = 0;
    while (cli_compile_target_at((size_t)count, &f))
        count++;
    for (int i = 0; (t = cli_compile_target_at((size_t)i, &f)); i++)
        fprintf(text, "%s %s %s", joiner(i, count), f->name, t->params);
    fputs(", then the table of issue 15's targets (nvrtc ms, llvm / nvrtc of each); a FAMILY "
          "alone: its defaults", text);
    int n = 0;
    for (int i = 0; cli_families[i]; i++)
        if (cli_families[i]->compile_params)
            fprintf(text, "%s%s: %s", n++ ? "; " : " (", cli_families[i]->name,
                    cli_families[i]->compile_params);
    fputs(n ? ")" : "", text);
    fputs("; one the llvm backend does not build, e.g. from --templates: nvrtc only; no GPU "
          "needed; with one, also module loads and the compiles with the driver's compute "
          "cache; ofc=LEVEL: NVRTC with -Ofc=LEVEL, and on a GPU each target request run with "
          "and without it (R runs, 20)", text);
}

/* The family of bench tune's cold problem, and the pool's family and space. */
static void write_bench_tune(FILE *text)
{
    const cli_family *cold, *pool = cli_family_tune_pool();
    cli_tune_cold(&cold);
    fprintf(text, "the tuner's figures. search [FAMILY]: each problem of the family (of every "
                  "family without one) compiled into the cache first, then tuned in a fresh "
                  "context (wall time; candidates pruned, timed, per round), an exhaustive sweep "
                  "of its space and the tuned winner's time against the sweep's best (there, "
                  "then, where they differ, the two head to head in alternating rounds), five "
                  "tunings' winners, and the targets (<= 2000 ms, >= 0.99, the same winner); "
                  "sweep [FAMILY]: the tuning and the sweep alone; repeat [FAMILY]: five "
                  "tunings alone; cold: the %s space tuned cold and its record in a fresh "
                  "process; pool: the cold compiles of the %s space %s serially, on the pool's "
                  "threads and on its compile worker processes. None: search, cold and pool "
                  "(needs a GPU, except pool)",
            cold->name, pool->name, pool->tune_pool->space);
}

/* Each family's run sizes, which tune takes as the problem. */
static void write_tune(FILE *text)
{
    fputs("tune the family for a problem (its run sizes:", text);
    for (int i = 0; cli_families[i]; i++) {
        fprintf(text, "%s %s", i ? "," : "", cli_families[i]->name);
        for (const char *const *size = cli_families[i]->sizes; *size; size++)
            fprintf(text, " %s=", *size);
    }
    fputs("; a user family: problem=\"TEXT\", with --compile-only only: the command cannot "
          "launch a user kernel), the key=value words fixed: every point of the "
          "template's tune lines and the request the family's op fits to the problem (or "
          "--space, which replaces the values of the parameters it names, and adds no fitted "
          "request) compiled in parallel; a candidate that cannot launch, spills where others "
          "do not, or cannot beat a measured time by the family's lower bound is pruned; the "
          "others checked against the fixed parameters' defaults and timed by successive "
          "halving (one run each, two where it takes under 0.2 ms, the close ones 3 more, the "
          "finalists the full runs); "
          "the table and the record's path on stderr, the winner's params on stdout. A record "
          "is reused (nothing timed) unless --retune; run and bench take PARAM=auto for the "
          "tuned value (without a record, the defaults a request without it gets, fitted to "
          "run's shape). --compile-only: compile the space, no GPU needed (warms the cache). "
          "--bucket pow2: keep the record for the problem's bucket (each size rounded up to a "
          "power of two), which auto uses for any problem in it without a record (--bucket "
          "exact, the default: the problem alone)", text);
}

void cli_print_usage(FILE *out)
{
    fputs(usage_head, out);
    fputs("  bench compile [FAMILY [key=value ...]] [samples=N] [ofc=min|mid|max [runs=R]]\n",
          out);
    print_generated(out, write_bench_compile);
    fputs(usage_multigpu, out);
    fputs("  bench tune [search|sweep|cold|pool|repeat] [FAMILY]\n", out);
    print_generated(out, write_bench_tune);
    fputs(usage_middle, out);
    fputs("  tune FAMILY [SIZE=N ...] [key=value ...] [--space \"P=V,V P=LO..HI\"] [--retune]\n"
          "                                [--compile-only] [--bucket pow2|exact]\n",
          out);
    print_generated(out, write_tune);
    fputs(usage_tail, out);
    fputs("families (run: their sizes; bench: what it times; multigpu: bench multigpu's "
          "sizes):\n", out);
    for (int i = 0; cli_families[i]; i++)
        fprintf(out, "  %-10s %s\n", cli_families[i]->name, cli_families[i]->help);
    fputs("\n", out);
    fputs(usage_options, out);
}
