/* test_inspect.c — a kernel's resources read from its cubin without a GPU (the parser on
 * real cubins, truncated and corrupt ones, the max-threads rule, spills from a ptxas -v
 * log), and the CLI that shows them: inspect, and sass through nvdisasm. */
#include <elf.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "request/context.h"
#include "binary/cubin.h"
#include "compilers/ptxas_log.h"
#include "inspect_util.h"

static ptxjit_kernel *get_kernel(ptxjit_context *context, const char *family, const char *params)
{
    ptxjit_kernel *kernel = NULL;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, family, params, NULL) == PTXJIT_OK,
                  "%s %s: %s", family, params, ptxjit_last_error());
    return kernel;
}

static ptxjit_kernel_resources static_resources(ptxjit_kernel *kernel, const char *entry)
{
    ptxjit_kernel_resources r;
    memset(&r, 0x5a, sizeof r);
    ck_assert_msg(ptxjit_kernel_resources_static(&r, kernel, entry) == PTXJIT_OK, "%s: %s",
                  ptxjit_kernel_params(kernel), ptxjit_last_error());
    return r;
}

/* Every entry of (family, params) has figures in range. */
static void check_sane(ptxjit_context *context, const char *family, const char *params)
{
    ptxjit_kernel *kernel = get_kernel(context, family, params);
    for (int i = 0; i < ptxjit_kernel_entry_count(kernel); i++) {
        ptxjit_kernel_resources r = static_resources(kernel, ptxjit_kernel_entry_name(kernel, i));
        const char *what = ptxjit_kernel_params(kernel);
        ck_assert_msg(r.registers >= 1 && r.registers <= 255, "%s %s: %d registers", family,
                      what, r.registers);
        ck_assert_msg(r.static_smem >= 0 && r.local_bytes >= 0, "%s %s", family, what);
        ck_assert_msg(r.max_threads >= 32 && r.max_threads <= 1024, "%s %s: %d", family, what,
                      r.max_threads);
        ck_assert_msg(r.param_bytes >= 8, "%s %s: %d parameter bytes", family, what,
                      r.param_bytes);
        /* Both routes ask ptxas -v: the spills are known (block_tiled's 8 x 8 per thread
         * spill 16 bytes; most spill none). */
        ck_assert_msg(r.spill_stores >= 0 && r.spill_loads >= 0 && r.spill_stores <= 4096,
                      "%s %s: spills %d / %d", family, what, r.spill_stores, r.spill_loads);
    }
}

/* Every family's defaults, and the other requests every test_sweep_stride()-th (under
 * valgrind a matmul compile takes seconds). */
START_TEST(builtin_kernels_have_sane_resources)
{
    ptxjit_context *context = test_open_offline(NULL);
    inspect_each_family(context, check_sane);
    for (size_t i = 0; i < PJ_ARRAY_SIZE(inspect_requests); i += (size_t)test_sweep_stride())
        if (!strstr(inspect_requests[i].params, "llvm") || test_llvm_or_skip("llvm kernels"))
            check_sane(context, inspect_requests[i].family, inspect_requests[i].params);
    ptxjit_close(context);
}
END_TEST

/* What the templates declare, read back from the cubins. */
START_TEST(launch_bounds_and_shared_arrays_show_in_the_cubin)
{
    ptxjit_context *context = test_open_offline(NULL);
    /* __launch_bounds__(TPB): max_threads is the bound. */
    ck_assert_int_eq(static_resources(get_kernel(context, "reduce", "tpb=128"), NULL).max_threads,
                     128);
    ck_assert_int_eq(static_resources(get_kernel(context, "reduce", ""), NULL).max_threads, 512);
    /* wgmma: 128 threads per warpgroup, 2 consumers and the producer. */
    ck_assert_int_eq(
        static_resources(get_kernel(context, "matmul", "variant=wgmma"), NULL).max_threads, 384);
    /* tiled: __shared__ float As[32][32], Bs[32][32]. */
    ptxjit_kernel_resources tiled =
        static_resources(get_kernel(context, "matmul", "variant=tiled"), "matmul_kernel");
    ck_assert_int_eq(tiled.static_smem, 2 * 32 * 32 * 4);
    ck_assert_int_eq(tiled.max_threads, 1024);
    /* transpose smem: __shared__ float tile[64][65]. */
    ck_assert_int_eq(
        static_resources(get_kernel(context, "transpose", "variant=smem"), NULL).static_smem,
        64 * 65 * 4);
    /* naive declares no shared memory at all. */
    ck_assert_int_eq(
        static_resources(get_kernel(context, "matmul", "variant=naive"), NULL).static_smem, 0);
    /* reduce's parameters: input pointer, result pointer, n (a 64-bit count). */
    ck_assert_int_eq(static_resources(get_kernel(context, "reduce", ""), NULL).param_bytes, 24);
    ptxjit_close(context);
    /* Before sm_90 the system's 1 KiB is not in the cubin's section; the count is the same. */
    context = test_open_offline("sm_80");
    tiled = static_resources(get_kernel(context, "matmul", "variant=tiled"), NULL);
    ck_assert_int_eq(tiled.static_smem, 2 * 32 * 32 * 4);
    ptxjit_close(context);
}
END_TEST

START_TEST(a_local_array_is_a_stack_frame_and_registers_bound_blocks)
{
    char *dir = inspect_write_stack_template();
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.template_path = dir;
    ptxjit_context *context;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    ptxjit_kernel *kernel = get_kernel(context, "stack", "n=64");
    ptxjit_kernel_resources first = static_resources(kernel, NULL);
    ptxjit_kernel_resources stack = static_resources(kernel, "stack_kernel");
    ck_assert_int_eq(memcmp(&first, &stack, sizeof first), 0); /* NULL is the first entry */
    ck_assert_int_ge(stack.local_bytes, 64 * 4);
    ck_assert_int_eq(stack.max_threads, 128);
    ck_assert_int_eq(stack.param_bytes, 8 + 8 + 4);
    ptxjit_kernel_resources plain = static_resources(kernel, "plain_kernel");
    ck_assert_int_eq(plain.local_bytes, 0);
    ck_assert_int_eq(plain.max_threads, 1024); /* few registers, no bound */
    ck_assert_int_eq(plain.param_bytes, 8);
    /* ~110 registers: 16 warps (18 would fit the register file, but not rounded up to 4). */
    ptxjit_kernel_resources heavy =
        static_resources(get_kernel(context, "stack", "n=100"), "heavy_kernel");
    ck_assert_int_gt(heavy.registers, 96);
    ck_assert_int_le(heavy.registers, 128);
    ck_assert_int_eq(heavy.max_threads, 512);
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(an_unknown_entry_is_refused_naming_the_entries)
{
    ptxjit_context *context = test_open_offline(NULL);
    ptxjit_kernel *kernel = get_kernel(context, "reduce", "");
    ptxjit_kernel_resources r;
    ck_assert_int_eq(ptxjit_kernel_resources_static(&r, kernel, "reduce"),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ptxjit_last_error(), "has no entry 'reduce'; its entries: reduce_kernel"),
                  "%s", ptxjit_last_error());
    /* Without a GPU, _get refuses the entry the same way before it needs the GPU. */
    ck_assert_int_eq(ptxjit_kernel_resources_get(&r, kernel, "nope"),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "its entries: reduce_kernel"));
    ck_assert_int_eq(ptxjit_kernel_resources_get(&r, kernel, NULL), PTXJIT_ERR_NO_DRIVER);
    ck_assert_int_eq(ptxjit_kernel_resources_static(NULL, kernel, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_kernel_resources_static(&r, NULL, NULL), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_kernel_resources_get(NULL, kernel, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    /* The parser itself lists what the cubin holds. */
    size_t size;
    const void *cubin = ptxjit_kernel_cubin(kernel, &size);
    pj_cubin_entry facts;
    ck_assert_int_eq(pj_cubin_entry_read(&facts, cubin, size, "other_kernel"),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(
        strstr(ptxjit_last_error(), "the cubin has no entry 'other_kernel'; its entries: "
                                    "reduce_kernel"));
    ptxjit_close(context);
}
END_TEST

/* Every prefix of a real cubin is refused with a reason, and read nothing past its end
 * (ASan and valgrind runs of this suite would see it). */
START_TEST(truncated_cubins_are_refused_without_reading_past_them)
{
    ptxjit_context *context = test_open_offline(NULL);
    ptxjit_kernel *kernel = get_kernel(context, "reduce", "");
    size_t size;
    const unsigned char *cubin = ptxjit_kernel_cubin(kernel, &size);
    pj_cubin_entry facts;
    ck_assert_int_eq(pj_cubin_entry_read(&facts, cubin, size, "reduce_kernel"), PTXJIT_OK);
    for (size_t length = 0; length < size; length += length < 256 ? 1 : 7) {
        unsigned char *copy = malloc(length ? length : 1);
        memcpy(copy, cubin, length);
        ck_assert_msg(pj_cubin_entry_read(&facts, copy, length, "reduce_kernel") ==
                          PTXJIT_ERR_INVALID_ARGUMENT,
                      "%zu of %zu bytes were accepted", length, size);
        ck_assert_msg(strstr(ptxjit_last_error(), "cannot be read: "), "%zu: %s", length,
                      ptxjit_last_error());
        free(copy);
    }
    const char *ptx = ptxjit_kernel_ptx(kernel);
    ck_assert_int_eq(pj_cubin_entry_read(&facts, ptx, strlen(ptx), "reduce_kernel"),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "not an ELF file (PTX text?)"));
    ck_assert_int_eq(pj_cubin_entry_read(&facts, NULL, 0, "reduce_kernel"),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ptxjit_close(context);
}
END_TEST

/* Corrupt bytes anywhere (each byte in turn set to 0xff, then to 0x00): an answer or a
 * refusal, never a crash or a read outside the buffer; corrupting the records' sizes is
 * caught as such. */
START_TEST(corrupt_cubins_are_answered_or_refused)
{
    ptxjit_context *context = test_open_offline(NULL);
    ptxjit_kernel *kernel = get_kernel(context, "matmul", "variant=wgmma");
    size_t size;
    const unsigned char *cubin = ptxjit_kernel_cubin(kernel, &size);
    unsigned char *copy = malloc(size);
    pj_cubin_entry facts;
    int refused = 0;
    for (int fill = 0; fill < 2; fill++)
        for (size_t at = 0; at < size; at++) {
            memcpy(copy, cubin, size);
            copy[at] = fill ? 0x00 : 0xff;
            ptxjit_status status = pj_cubin_entry_read(&facts, copy, size, "matmul_kernel");
            ck_assert(status == PTXJIT_OK || status == PTXJIT_ERR_INVALID_ARGUMENT);
            refused += status != PTXJIT_OK;
        }
    ck_assert_int_gt(refused, 0);
    /* An .nv.info record whose payload claims more than its section holds. */
    memcpy(copy, cubin, size);
    Elf64_Ehdr header;
    memcpy(&header, copy, sizeof header);
    int found = 0;
    for (unsigned i = 0; i < header.e_shnum && !found; i++) {
        Elf64_Shdr section, names;
        memcpy(&section, copy + header.e_shoff + i * sizeof section, sizeof section);
        memcpy(&names, copy + header.e_shoff + header.e_shstrndx * sizeof names, sizeof names);
        if (strcmp((const char *)copy + names.sh_offset + section.sh_name, ".nv.info") == 0) {
            copy[section.sh_offset + 2] = 0xff; /* the first record's payload size */
            copy[section.sh_offset + 3] = 0x7f;
            found = 1;
        }
    }
    ck_assert(found);
    ck_assert_int_eq(pj_cubin_entry_read(&facts, copy, size, "matmul_kernel"),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ptxjit_last_error(), "payload runs past its section"), "%s",
                  ptxjit_last_error());
    /* A records section marked as having no contents in the file (SHT_NOBITS), its offset
     * far past the end: the file-wide one, then the entry's, refused either way. */
    static const char *const records[] = {".nv.info", ".nv.info.matmul_kernel"};
    for (size_t r = 0; r < PJ_ARRAY_SIZE(records); r++) {
        memcpy(copy, cubin, size);
        found = 0;
        for (unsigned i = 0; i < header.e_shnum && !found; i++) {
            Elf64_Shdr section, names;
            memcpy(&section, copy + header.e_shoff + i * sizeof section, sizeof section);
            memcpy(&names, copy + header.e_shoff + header.e_shstrndx * sizeof names,
                   sizeof names);
            if (strcmp((const char *)copy + names.sh_offset + section.sh_name, records[r]))
                continue;
            section.sh_type = SHT_NOBITS;
            section.sh_offset = (Elf64_Off)1 << 40;
            memcpy(copy + header.e_shoff + i * sizeof section, &section, sizeof section);
            found = 1;
        }
        ck_assert_msg(found, "no %s section", records[r]);
        ck_assert_int_eq(pj_cubin_entry_read(&facts, copy, size, "matmul_kernel"),
                         PTXJIT_ERR_INVALID_ARGUMENT);
        ck_assert_msg(strstr(ptxjit_last_error(), "no contents in the file"), "%s: %s",
                      records[r], ptxjit_last_error());
    }
    free(copy);
    ptxjit_close(context);
}
END_TEST

/* The driver's rule for a block's threads on compute capability 7.0+ (cubin.c). */
START_TEST(max_threads_follow_the_register_file)
{
    static const struct {
        int registers, bound, threads;
    } cases[] = {{255, 0, 256}, {168, 0, 384}, {128, 0, 512}, {96, 0, 640}, {80, 0, 768},
                 {72, 0, 896}, {64, 0, 1024}, {16, 0, 1024}, {32, 256, 256}, {255, 1024, 256},
                 {40, 100, 100}, {0, 0, 1024}};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        pj_cubin_entry entry = {.registers = cases[i].registers,
                                .bound_threads = cases[i].bound};
        ck_assert_msg(pj_cubin_max_threads(&entry) == cases[i].threads,
                      "%d registers, bound %d: %d threads, not %d", cases[i].registers,
                      cases[i].bound, pj_cubin_max_threads(&entry), cases[i].threads);
    }
}
END_TEST

/* A template whose 48 live values cannot fit the 32 registers that __launch_bounds__(1024, 2)
 * leaves a thread: ptxas spills, and the compile's own log says how much; its plain entry
 * spills nothing. */
static const char spilling_template[] =
    "//@ptxjit family spiller\n"
    "//@ptxjit entry spills\n"
    "//@ptxjit entry plain\n"
    "//@ptxjit param width int(1..64) default=48\n"
    "extern \"C\" __global__ void __launch_bounds__(1024, 2) spills(float *o, const float *in)\n"
    "{\n"
    "    float a[WIDTH];\n"
    "#pragma unroll\n"
    "    for (int t = 0; t < WIDTH; t++) a[t] = in[t * 1024 + threadIdx.x];\n"
    "    float s = 0;\n"
    "#pragma unroll\n"
    "    for (int t = 0; t < WIDTH; t++) s += a[t] * a[WIDTH - 1 - t] + a[(t * 5) % WIDTH] * s;\n"
    "    o[threadIdx.x] = s;\n"
    "}\n"
    "extern \"C\" __global__ void plain(float *o) { o[threadIdx.x] += 1.0f; }\n";

START_TEST(a_kernel_that_must_spill_says_so)
{
    ptxjit_context *context = test_open_offline(NULL);
    ck_assert_msg(ptxjit_add_template(context, "spiller.cu", spilling_template) == PTXJIT_OK,
                  "%s", ptxjit_last_error());
    ptxjit_kernel *kernel = get_kernel(context, "spiller", "");
    ptxjit_kernel_resources r = static_resources(kernel, "spills");
    ck_assert_msg(r.spill_stores > 0 && r.spill_loads > 0, "spills %d / %d, log:\n%s",
                  r.spill_stores, r.spill_loads, ptxjit_kernel_log(kernel));
    ck_assert_int_le(r.registers, 32);
    r = static_resources(kernel, "plain");
    ck_assert_int_eq(r.spill_stores, 0);
    ck_assert_int_eq(r.spill_loads, 0);
    /* few values fit the registers: no spills */
    r = static_resources(get_kernel(context, "spiller", "width=4"), "spills");
    ck_assert_int_eq(r.spill_stores, 0);
    ptxjit_close(context);
}
END_TEST

/* ptxas -v says how long it took: that line is dropped, so that two compiles of one key
 * leave the same entry, byte for byte. */
START_TEST(compile_logs_are_the_same_for_every_compile)
{
    char log[] = "ptxas info    : 0 bytes gmem\n"
                 "ptxas info    : Compile time = 102.546 ms\n"
                 "ptxas info    : Used 8 registers\n"
                 "ptxas info    : Compile time = 2.1 ms";
    pj_ptxas_log_settle(log);
    ck_assert_str_eq(log, "ptxas info    : 0 bytes gmem\nptxas info    : Used 8 registers\n");
    pj_ptxas_log_settle(NULL);
    char *first = NULL;
    for (int i = 0; i < 2; i++) {
        ptxjit_context *context = test_open_offline(NULL);
        ptxjit_kernel *kernel = get_kernel(context, "reduce", "tpb=128 batch=3");
        const char *text = ptxjit_kernel_log(kernel);
        ck_assert_msg(strstr(text, "spill stores") && !strstr(text, "Compile time"), "%s", text);
        if (!first)
            first = pj_strdup(text);
        else
            ck_assert_str_eq(text, first);
        ptxjit_close(context);
    }
    free(first);
}
END_TEST

/* The llvm route's nvJitLink info log carries ptxas -v's lines too. */
START_TEST(llvm_kernels_report_their_spills)
{
    if (!test_llvm_or_skip("llvm spills"))
        return;
    ptxjit_context *context = test_open_offline(NULL);
    ptxjit_kernel_resources r =
        static_resources(get_kernel(context, "reduce", "backend=llvm"), NULL);
    ck_assert_int_eq(r.spill_stores, 0);
    ck_assert_int_eq(r.spill_loads, 0);
    ptxjit_close(context);
}
END_TEST

/* ptxas -v's lines: the spills of the entry named, not of another function; the lines as
 * NVRTC and nvJitLink write them ("ptxas         .     N bytes ...") and as older logs did. */
START_TEST(spills_come_from_a_verbose_log)
{
    ptxjit_context *context = test_open_offline(NULL);
    ptxjit_kernel *kernel = get_kernel(context, "reduce", "");
    char *kept = kernel->artifact.log;
    kernel->artifact.log = (char *)
        "ptxas info    : Compiling entry function 'reduce_kernel_2' for 'sm_90a'\n"
        "ptxas info    : Function properties for reduce_kernel_2\n"
        "ptxas         .     8 bytes stack frame, 99 bytes spill stores, 98 bytes spill loads\n"
        "ptxas info    : Function properties for reduce_kernel\n"
        "ptxas         .     16 bytes stack frame, 12 bytes spill stores, 8 bytes spill loads\n"
        "ptxas info    : Used 255 registers, used 1 barriers, 64 bytes smem\n";
    ptxjit_kernel_resources r = static_resources(kernel, NULL);
    ck_assert_int_eq(r.spill_stores, 12);
    ck_assert_int_eq(r.spill_loads, 8);
    kernel->artifact.log = (char *)
        "ptxas info    : Function properties for reduce_kernel\n"
        "    16 bytes stack frame, 24 bytes spill stores, 20 bytes spill loads\n";
    r = static_resources(kernel, NULL);
    ck_assert_int_eq(r.spill_stores, 24);
    ck_assert_int_eq(r.spill_loads, 20);
    kernel->artifact.log = (char *)"";
    r = static_resources(kernel, NULL);
    ck_assert_int_eq(r.spill_stores, -1); /* an entry compiled without ptxas -v: unknown */
    kernel->artifact.log = kept;
    ptxjit_close(context);
}
END_TEST

/* ---- The CLI ---- */

/* Runs the CLI (from $PTXJIT_CLI) as `env CLI args` with its own cache dir; stdout into
 * *out and stderr into *err; returns the exit status. */
static int run_cli(char **out, char **err, const char *env, const char *args)
{
    const char *cli = getenv("PTXJIT_CLI");
    ck_assert_msg(cli != NULL, "PTXJIT_CLI is not set (make test sets it)");
    char *dir = test_mkdtemp(), command[8192], path[4200];
    snprintf(path, sizeof path, "%s/stderr", dir);
    snprintf(command, sizeof command, "%s PTXJIT_CACHE_DIR='%s/cache' '%s' %s 2>'%s'", env, dir,
             cli, args, path);
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    pj_strbuf sb;
    pj_sb_init(&sb);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, pipe)) > 0)
        pj_sb_append_n(&sb, chunk, n);
    int status = pclose(pipe);
    *out = pj_sb_take(&sb);
    ck_assert_int_eq(pj_read_file(err, NULL, path), PTXJIT_OK);
    test_rmtree(dir);
    free(dir);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

START_TEST(cli_inspect_without_a_gpu_shows_the_cubins_resources)
{
    char *out, *err;
    ck_assert_int_eq(run_cli(&out, &err, "", "inspect --no-gpu reduce tpb=256"), 0);
    ck_assert_msg(strstr(out, "entry       reduce_kernel: ") &&
                      strstr(out, "at most 256 threads per block, 24 B of parameters, spills 0 "
                                  "B stored and 0 B loaded (from the cubin; no figures from the "
                                  "driver: the GPU was turned off"),
                  "%s", out);
    free(out), free(err);
    ck_assert_int_eq(run_cli(&out, &err, "", "--json inspect --no-gpu matmul variant=tiled"), 0);
    static const char *const facts[] = {"\"resources\": null", "\"cubin_resources\": {",
                                        "\"max_threads\": 1024", "\"param_bytes\": 528",
                                        "\"spill_stores\": 0", "\"spill_loads\": 0",
                                        "\"cubin_resources_error\": null"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(facts); i++)
        ck_assert_msg(strstr(out, facts[i]), "no %s in %s", facts[i], out);
    free(out), free(err);
}
END_TEST

/* 1 when $PTXJIT_NVDISASM, $CUDA_HOME/bin, /usr/local/cuda/bin or $PATH has nvdisasm. */
static int nvdisasm_here(void)
{
    char *out, *err;
    int status = run_cli(&out, &err, "", "sass --no-gpu --no-disk-cache reduce");
    free(out), free(err);
    return status != 3;
}

START_TEST(cli_sass_prints_the_kernels_sass)
{
    if (!nvdisasm_here()) {
        printf("SKIP cli_sass_prints_the_kernels_sass: no nvdisasm here (install the CUDA "
               "toolkit's cuda-nvdisasm, or set PTXJIT_NVDISASM)\n");
        return;
    }
    char *out, *err;
    ck_assert_int_eq(run_cli(&out, &err, "", "sass --no-gpu reduce variant=one_pass"), 0);
    ck_assert_msg(strstr(out, ".text.reduce_kernel") && strstr(out, "reduce_kernel:"), "%s", out);
    /* SASS, not PTX: instruction offsets and opcodes only the hardware has. */
    ck_assert_msg(strstr(out, "/*0000*/") && strstr(out, "EXIT") && strstr(out, "S2R") &&
                      !strstr(out, ".entry"),
                  "%s", out);
    ck_assert_msg(strstr(err, "// ptxjit: reduce ") && !strstr(out, "// ptxjit"), "%s", err);
    free(out), free(err);
    /* A temporary copy of the cubin was written and removed. */
    char *dir = test_mkdtemp(), env[4200];
    snprintf(env, sizeof env, "TMPDIR='%s'", dir);
    ck_assert_int_eq(run_cli(&out, &err, env, "sass --no-gpu reduce"), 0);
    free(out), free(err);
    ck_assert_int_eq(rmdir(dir), 0); /* empty */
    free(dir);
}
END_TEST

/* The runner itself, with stand-ins for nvdisasm: echo shows the command line it is given
 * (code sections only, a private temporary copy of the cubin, removed afterwards); false
 * is a disassembler that fails. */
START_TEST(cli_sass_runs_nvdisasm_on_a_temporary_copy)
{
    char *dir = test_mkdtemp(), env[4400], *out, *err;
    snprintf(env, sizeof env, "TMPDIR='%s' PTXJIT_NVDISASM=/bin/echo", dir);
    ck_assert_int_eq(run_cli(&out, &err, env, "sass --no-gpu reduce"), 0);
    char prefix[4200];
    snprintf(prefix, sizeof prefix, "-c %s/ptxjit-sass-", dir);
    ck_assert_msg(strncmp(out, prefix, strlen(prefix)) == 0, "%s", out);
    out[strcspn(out, "\n")] = '\0';
    ck_assert_int_ne(access(out + 3, F_OK), 0); /* removed */
    free(out), free(err);
    ck_assert_int_eq(rmdir(dir), 0);
    free(dir);
    ck_assert_int_eq(run_cli(&out, &err, "PTXJIT_NVDISASM=/bin/false", "sass --no-gpu reduce"),
                     1);
    ck_assert_msg(strstr(err, "/bin/false failed on the cubin (exit status 1"), "%s", err);
    free(out), free(err);
    /* A usage error stays one, nvdisasm or not. */
    ck_assert_int_eq(run_cli(&out, &err, "PTXJIT_NVDISASM=/nonexistent", "sass"), 2);
    free(out), free(err);
}
END_TEST

START_TEST(cli_sass_without_nvdisasm_says_where_it_looked)
{
    char *out, *err;
    ck_assert_int_eq(run_cli(&out, &err, "PTXJIT_NVDISASM=/nonexistent/nvdisasm",
                             "sass --no-gpu reduce"),
                     3);
    ck_assert_str_eq(out, "");
    ck_assert_msg(strstr(err, "$PTXJIT_NVDISASM=/nonexistent/nvdisasm") &&
                      strstr(err, "cuda-nvdisasm"),
                  "%s", err);
    free(out), free(err);
    if (access("/usr/local/cuda/bin/nvdisasm", X_OK) == 0) {
        printf("cli_sass_without_nvdisasm_says_where_it_looked: /usr/local/cuda/bin/nvdisasm "
               "exists, so PATH and CUDA_HOME pointing nowhere still find it: not checked\n");
        return;
    }
    ck_assert_int_eq(run_cli(&out, &err, "PTXJIT_NVDISASM= PATH=/nonexistent "
                                         "CUDA_HOME=/nonexistent",
                             "sass --no-gpu reduce"),
                     3);
    ck_assert_msg(strstr(err, "sass needs nvdisasm") &&
                      strstr(err, "/nonexistent/bin/nvdisasm ($CUDA_HOME)") &&
                      strstr(err, "/usr/local/cuda/bin/nvdisasm") && strstr(err, "$PATH") &&
                      strstr(err, "cuda-nvdisasm"),
                  "%s", err);
    free(out), free(err);
}
END_TEST

Suite *suite_inspect(void)
{
    Suite *s = suite_create("inspect");
    TCase *tc = tcase_create("cubin");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, truncated_cubins_are_refused_without_reading_past_them);
    tcase_add_test(tc, corrupt_cubins_are_answered_or_refused);
    tcase_add_test(tc, max_threads_follow_the_register_file);
    tcase_add_test(tc, spills_come_from_a_verbose_log);
    tcase_add_test(tc, a_kernel_that_must_spill_says_so);
    tcase_add_test(tc, llvm_kernels_report_their_spills);
    tcase_add_test(tc, compile_logs_are_the_same_for_every_compile);
    suite_add_tcase(s, tc);
    TCase *cli = tcase_create("cli");
    tcase_set_timeout(cli, 120);
    tcase_add_test(cli, cli_inspect_without_a_gpu_shows_the_cubins_resources);
    tcase_add_test(cli, cli_sass_prints_the_kernels_sass);
    tcase_add_test(cli, cli_sass_runs_nvdisasm_on_a_temporary_copy);
    tcase_add_test(cli, cli_sass_without_nvdisasm_says_where_it_looked);
    suite_add_tcase(s, cli);
    TCase *many = test_many_compiles_case(s, 240);
    tcase_add_test(many, launch_bounds_and_shared_arrays_show_in_the_cubin);
    tcase_add_test(many, builtin_kernels_have_sane_resources);
    tcase_add_test(many, an_unknown_entry_is_refused_naming_the_entries);
    tcase_add_test(many, a_local_array_is_a_stack_frame_and_registers_bound_blocks);
    return s;
}
