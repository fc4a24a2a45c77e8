/* resources.c — an entry's resources without a GPU: what its cubin records (cubin.c) and
 * what its compile log says about spills. */
#include <stdio.h>
#include <string.h>

#include "request/context.h"
#include "binary/cubin.h"

/* ptxas -v writes, per function (NVRTC's log and nvJitLink's info log alike):
 *   ptxas info    : Function properties for reduce_kernel
 *   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 * (older logs indent the second line with spaces alone). Leaves -1 where the log has no such
 * lines for entry: an entry compiled before ptxjit asked for them. */
static void spills_from_log(int *stores, int *loads, const char *log, const char *entry)
{
    static const char marker[] = "Function properties for ";
    *stores = *loads = -1;
    size_t length = strlen(entry);
    for (const char *at = log ? strstr(log, marker) : NULL; at; at = strstr(at + 1, marker)) {
        const char *name = at + strlen(marker);
        if (strncmp(name, entry, length) != 0 || (name[length] != '\n' && name[length] != '\r'))
            continue;
        const char *line = strchr(name, '\n');
        int frame, s, l;
        /* Whatever precedes the first number ("ptxas         .     ") is skipped. */
        if (line && sscanf(line + 1, "%*[^0-9\n]%d bytes stack frame, %d bytes spill stores, "
                                     "%d bytes spill loads", &frame, &s, &l) == 3) {
            *stores = s;
            *loads = l;
        } else if (line && sscanf(line + 1, " %d bytes stack frame, %d bytes spill stores, "
                                            "%d bytes spill loads", &frame, &s, &l) == 3) {
            *stores = s;
            *loads = l;
        }
        return;
    }
}

ptxjit_status ptxjit_kernel_resources_static(ptxjit_kernel_resources *out,
                                             const ptxjit_kernel *kernel, const char *entry)
{
    if (!out || !kernel)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "ptxjit_kernel_resources_static: %s is NULL", out ? "kernel" : "out");
    int index;
    ptxjit_status status = pj_kernel_entry_index(&index, kernel, entry);
    if (status != PTXJIT_OK)
        return status;
    const pj_artifact *a = &kernel->artifact;
    pj_cubin_entry facts;
    status = pj_cubin_entry_read(&facts, a->cubin, a->cubin_size, a->entries[index]);
    if (status != PTXJIT_OK)
        return pj_error_wrap(status, "%s (%s), entry %s", kernel->schema->family,
                             kernel->canonical, a->entries[index]);
    out->registers = facts.registers;
    out->static_smem = facts.shared_bytes;
    out->local_bytes = facts.frame_bytes;
    out->max_threads = pj_cubin_max_threads(&facts);
    out->param_bytes = facts.param_bytes;
    spills_from_log(&out->spill_stores, &out->spill_loads, a->log, a->entries[index]);
    return PTXJIT_OK;
}
