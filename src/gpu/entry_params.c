/* entry_params.c — the parameter lists of a kernel's entries, read once per kernel from
 * what both routes leave, no GPU needed: sizes, alignments and types from the PTX, offsets
 * from the cubin's parameter records, which are what the driver reads; and launches checked
 * against them: a wrong argument count or size is refused before anything touches the GPU,
 * naming the entry and the argument. */
#include <stdlib.h>

#include "request/context.h"
#include "binary/cubin_params.h"
#include "binary/ptx_params.h"

static int same_parameters(const pj_ptx_entry *ptx, const pj_cubin_param_list *cubin)
{
    if (ptx->count != cubin->count)
        return 0;
    for (int i = 0; i < ptx->count; i++)
        if (ptx->params[i].size != cubin->params[i].size)
            return 0;
    return 1;
}

/* The PTX's list with the cubin's offsets, where its records cover the same parameters; else
 * laid out from where the cubin says the buffer starts (from 0 without a cubin that says). A
 * parameter aligned to more than 16 bytes is where the difference shows: the buffer starts at
 * 0x210 on sm_90, so a CUtensorMap after 24 bytes of others is at 48, not 64. */
static ptxjit_status read_entry(pj_ptx_entry *out, const ptxjit_kernel *kernel,
                                const char *name)
{
    const pj_artifact *a = &kernel->artifact;
    ptxjit_status status = pj_ptx_entry_params(out, a->ptx, name);
    if (status != PTXJIT_OK)
        return status;
    pj_cubin_param_list cubin;
    status = pj_cubin_entry_params(&cubin, a->cubin, a->cubin_size, name);
    if (status == PTXJIT_ERR_OUT_OF_MEMORY) { /* not a layout to keep */
        pj_ptx_entry_free(out);
        return status;
    }
    if (status != PTXJIT_OK)
        return PTXJIT_OK;
    if (cubin.has_bank)
        pj_ptx_entry_layout(out, cubin.bank_offset);
    if (same_parameters(out, &cubin))
        for (int i = 0; i < out->count; i++)
            out->params[i].offset = cubin.params[i].offset;
    pj_cubin_param_list_free(&cubin);
    return PTXJIT_OK;
}

static ptxjit_status read_lists(pj_ptx_entry **out, const ptxjit_kernel *kernel)
{
    const int count = kernel->artifact.entry_count;
    pj_ptx_entry *lists = calloc((size_t)(count ? count : 1), sizeof *lists);
    if (!lists)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < count; i++) {
        ptxjit_status status = read_entry(&lists[i], kernel, kernel->artifact.entries[i]);
        if (status != PTXJIT_OK) {
            pj_ptx_entries_free(lists, count);
            return pj_error_wrap(status, "%s (%s)", kernel->schema->family, kernel->canonical);
        }
    }
    *out = lists;
    return PTXJIT_OK;
}

/* The parameters of entry number index. Threads that read the lists at once each read them;
 * the first to publish wins and the others free theirs. */
static ptxjit_status entry_list(const pj_ptx_entry **out, const ptxjit_kernel *k, int index)
{
    ptxjit_kernel *kernel = (ptxjit_kernel *)k; /* a cache of what the PTX says, not a change */
    pj_ptx_entry *lists = __atomic_load_n(&kernel->entry_params, __ATOMIC_ACQUIRE);
    if (!lists) {
        ptxjit_status status = read_lists(&lists, kernel);
        if (status != PTXJIT_OK)
            return status;
        pj_ptx_entry *expected = NULL;
        if (!__atomic_compare_exchange_n(&kernel->entry_params, &expected, lists, 0,
                                         __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            pj_ptx_entries_free(lists, kernel->artifact.entry_count);
            lists = expected;
        }
    }
    *out = &lists[index];
    return PTXJIT_OK;
}

/* The list of entry (NULL: the first), an unknown entry refused naming the kernel's. */
static ptxjit_status entry_params(const pj_ptx_entry **out, int *index,
                                  const ptxjit_kernel *kernel, const char *entry)
{
    ptxjit_status status = pj_kernel_entry_index(index, kernel, entry);
    return status == PTXJIT_OK ? entry_list(out, kernel, *index) : status;
}

ptxjit_status ptxjit_kernel_param_count(int *out, const ptxjit_kernel *kernel, const char *entry)
{
    if (!out || !kernel)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "ptxjit_kernel_param_count: out and kernel must not be NULL");
    const pj_ptx_entry *list;
    int index;
    ptxjit_status status = entry_params(&list, &index, kernel, entry);
    if (status == PTXJIT_OK)
        *out = list->count;
    return status;
}

ptxjit_status ptxjit_kernel_param_layout(ptxjit_param_layout *out, const ptxjit_kernel *kernel,
                                         const char *entry, int index)
{
    if (!out || !kernel)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "ptxjit_kernel_param_layout: out and kernel must not be NULL");
    const pj_ptx_entry *list;
    int entry_index;
    ptxjit_status status = entry_params(&list, &entry_index, kernel, entry);
    if (status != PTXJIT_OK)
        return status;
    if (index < 0 || index >= list->count)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "entry %s has %d parameters: index %d is out of range (0 to %d)",
                        kernel->artifact.entries[entry_index], list->count, index,
                        list->count - 1);
    const pj_ptx_param *param = &list->params[index];
    *out = (ptxjit_param_layout){param->offset, param->size, param->align};
    return PTXJIT_OK;
}

/* The count, then each argument's pointer and size. */
static ptxjit_status check_arguments(const ptxjit_kernel *kernel, const char *name,
                                     const pj_ptx_entry *list, int arg_count, void **args,
                                     const size_t *arg_sizes)
{
    if (arg_count != list->count)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "entry %s of %s takes %d argument%s, %d given; pass one pointer in args "
                        "and one size in arg_sizes for each parameter "
                        "(ptxjit_kernel_param_count)",
                        name, kernel->schema->family, list->count, list->count == 1 ? "" : "s",
                        arg_count);
    if (arg_count > 0 && (!args || !arg_sizes))
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "entry %s takes %d arguments but args or arg_sizes is NULL; pass both "
                        "arrays",
                        name, arg_count);
    for (int i = 0; i < arg_count; i++) {
        const pj_ptx_param *param = &list->params[i];
        if (!args[i])
            return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                            "argument %d of entry %s is NULL (args[%d]); it must point to the "
                            "value (%zu bytes, %s)",
                            i, name, i, param->size, param->type);
        if (arg_sizes[i] != param->size)
            return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                            "argument %d of entry %s is %zu bytes (%s), %zu given "
                            "(arg_sizes[%d]); pass a value of %zu bytes",
                            i, name, param->size, param->type, arg_sizes[i], i, param->size);
    }
    return PTXJIT_OK;
}

ptxjit_status ptxjit_launch_checked(ptxjit_kernel *kernel, const char *entry, ptxjit_dim3 grid,
                                    ptxjit_dim3 block, unsigned shared_bytes, void *stream,
                                    int arg_count, void **args, const size_t *arg_sizes)
{
    if (!kernel)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "ptxjit_launch_checked: kernel is NULL");
    const pj_ptx_entry *list;
    int index;
    ptxjit_status status = entry_params(&list, &index, kernel, entry);
    if (status == PTXJIT_OK)
        status = check_arguments(kernel, kernel->artifact.entries[index], list, arg_count, args,
                                 arg_sizes);
    if (status != PTXJIT_OK)
        return status;
    return ptxjit_launch(kernel, entry, grid, block, shared_bytes, stream, args);
}
