/* ir_target.c — the NVPTX target: the module optimized with the standard O3 pipeline and
 * printed as PTX. Target machines are kept for the process and lent to one compile at a time,
 * so that compiles may run in parallel. */
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compilers/llvm_plugin.h"
#include "ir.h"

#define IR_TRIPLE "nvptx64-nvidia-cuda"

static pthread_once_t target_once = PTHREAD_ONCE_INIT;

static void initialize_target(void)
{
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
}

/* The processors LLVM 19's NVPTX backend knows that PTX 8.0 covers. */
int ir_arch_supported(const char *arch)
{
    static const char *const known[] = {"sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62",
                                        "sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87",
                                        "sm_89", "sm_90", "sm_90a"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(arch, known[i]) == 0)
            return 1;
    return 0;
}

/* A target machine costs about 0.8 M instructions to create (0.15-0.3 ms) and holds nothing
 * of a compile once it is done, so each is kept and reused. It is not safe to use from two
 * threads at once: a compile takes one for its architecture from the idle list (or creates
 * one), and gives it back; concurrent compiles get one each. The idle list only grows to the
 * number of compiles that ever ran at once. */
typedef struct idle_machine {
    char arch[16];
    LLVMTargetMachineRef machine;
    struct idle_machine *next;
} idle_machine;

static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static idle_machine *idle_machines;

static idle_machine *machine_take(const char *arch, LLVMTargetRef target)
{
    pthread_mutex_lock(&idle_lock);
    for (idle_machine **p = &idle_machines; *p; p = &(*p)->next) {
        if (strcmp((*p)->arch, arch) == 0) {
            idle_machine *found = *p;
            *p = found->next;
            pthread_mutex_unlock(&idle_lock);
            return found;
        }
    }
    pthread_mutex_unlock(&idle_lock);
    idle_machine *fresh = calloc(1, sizeof *fresh);
    if (!fresh)
        return NULL;
    snprintf(fresh->arch, sizeof fresh->arch, "%s", arch);
    fresh->machine = LLVMCreateTargetMachine(
        target, IR_TRIPLE, arch, PJ_LLVM_PTX_FEATURES, (LLVMCodeGenOptLevel)PJ_LLVM_CODEGEN_LEVEL,
        LLVMRelocDefault, LLVMCodeModelDefault);
    if (!fresh->machine) {
        free(fresh);
        return NULL;
    }
    return fresh;
}

static void machine_give_back(idle_machine *lent)
{
    pthread_mutex_lock(&idle_lock);
    lent->next = idle_machines;
    idle_machines = lent;
    pthread_mutex_unlock(&idle_lock);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static char *message(const char *what, const char *detail)
{
    size_t size = strlen(what) + strlen(detail) + 4;
    char *text = malloc(size);
    if (text)
        snprintf(text, size, "%s: %s", what, detail);
    return text;
}

static char *copy_buffer(LLVMMemoryBufferRef buffer)
{
    size_t size = LLVMGetBufferSize(buffer);
    char *text = malloc(size + 1);
    if (text) {
        memcpy(text, LLVMGetBufferStart(buffer), size);
        text[size] = '\0';
    }
    return text;
}

static char *optimize(ir_builder *ir, LLVMTargetMachineRef machine)
{
    LLVMPassBuilderOptionsRef options = LLVMCreatePassBuilderOptions();
    LLVMErrorRef error = LLVMRunPasses(ir->module, PJ_LLVM_PASSES, machine, options);
    LLVMDisposePassBuilderOptions(options);
    if (!error)
        return NULL;
    char *detail = LLVMGetErrorMessage(error);
    char *text = message("optimization failed", detail);
    LLVMDisposeErrorMessage(detail);
    return text;
}

static char *emit(ir_builder *ir, LLVMTargetMachineRef machine, char **ptx)
{
    char *detail = NULL;
    LLVMMemoryBufferRef buffer = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(machine, ir->module, LLVMAssemblyFile, &detail,
                                            &buffer)) {
        char *text = message("PTX emission failed", detail ? detail : "?");
        LLVMDisposeMessage(detail);
        return text;
    }
    *ptx = copy_buffer(buffer);
    LLVMDisposeMemoryBuffer(buffer);
    return *ptx ? NULL : message("out of memory", "PTX");
}

char *ir_emit_ptx(ir_builder *ir, const char *arch, char **ptx, double *optimize_ms,
                  double *emit_ms)
{
    *ptx = NULL;
    if (strlen(arch) >= sizeof((idle_machine *)0)->arch || !ir_arch_supported(arch))
        return message("architecture not supported by the llvm backend (LLVM 19 targets "
                       "sm_50 to sm_90a)", arch);
    pthread_once(&target_once, initialize_target);
    char *detail = NULL;
    LLVMTargetRef target;
    if (LLVMGetTargetFromTriple(IR_TRIPLE, &target, &detail)) {
        char *text = message("no NVPTX target in this LLVM", detail ? detail : "?");
        LLVMDisposeMessage(detail);
        return text;
    }
    idle_machine *lent = machine_take(arch, target);
    if (!lent)
        return message("cannot create an NVPTX target machine for", arch);
    LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(lent->machine);
    LLVMSetModuleDataLayout(ir->module, layout);
    LLVMDisposeTargetData(layout);
    double start = now_ms();
    char *error = optimize(ir, lent->machine);
    *optimize_ms = now_ms() - start;
    start = now_ms();
    if (!error)
        error = emit(ir, lent->machine, ptx);
    *emit_ms = now_ms() - start;
    machine_give_back(lent);
    return error;
}
