/* cubin.h — what a kernel's binary says about itself, read without a GPU: whether it is a
 * CUDA ELF of SASS (or PTX text the driver would still compile), and per entry the resources
 * that the driver reports once the module is loaded (registers, shared and local memory, the
 * launch bound), taken from the ELF's .nv.info records and section sizes. */
#ifndef PTXJIT_CUBIN_H
#define PTXJIT_CUBIN_H

#include <stddef.h>

#include "internal.h"

/* One entry's facts as ptxas wrote them into the cubin. */
typedef struct {
    unsigned sm;          /* the SM the cubin is for: 90 for sm_90 and sm_90a */
    int registers;        /* per thread (EIATTR_REGCOUNT) */
    int shared_bytes;     /* the kernel's static shared memory per block: the size of
                             .nv.shared.ENTRY, less the system's 1 KiB that ptxas places
                             there from sm_90 on */
    int frame_bytes;      /* the entry's stack frame per thread (EIATTR_FRAME_SIZE): spills and
                             local arrays, what the driver reports as its local memory */
    int min_stack_bytes;  /* EIATTR_MIN_STACK_SIZE: the frames of the deepest call chain */
    int param_bytes;      /* the entry's parameters (EIATTR_CBANK_PARAM_SIZE) */
    int bound_threads;    /* the launch bound, threads per block (EIATTR_MAX_THREADS, or
                             EIATTR_REQNTID, x·y·z); 0: none declared */
    int max_registers;    /* the cap ptxas compiled under (EIATTR_MAXREG_COUNT); 0: none */
} pj_cubin_entry;

/* Reads entry's facts from a cubin of bytes bytes. PTXJIT_ERR_INVALID_ARGUMENT, with what is
 * wrong, when the bytes are not a whole CUDA ELF (PTX text, truncated, a length or offset
 * that points outside the file), or when it holds no entry of that name (the message lists
 * the entries it holds). Reads every field with bounds checked: any bytes are safe to pass. */
ptxjit_status pj_cubin_entry_read(pj_cubin_entry *out, const void *cubin, size_t bytes,
                                  const char *entry);

/* One .nv.info record: a format byte, an attribute byte, then 16 bits that are the value
 * (EIFMT_HVAL; EIFMT_BVAL in the low byte; nothing for EIFMT_NVAL) or the size of a payload
 * that follows (EIFMT_SVAL). */
enum { PJ_EIFMT_NVAL = 1, PJ_EIFMT_BVAL = 2, PJ_EIFMT_HVAL = 3, PJ_EIFMT_SVAL = 4 };
typedef struct {
    unsigned format, attribute;
    unsigned value;               /* HVAL/BVAL: the value; SVAL: the payload's size */
    const unsigned char *payload; /* SVAL only, value bytes, inside the cubin */
} pj_nv_record;

/* Returns nonzero to stop the walk. */
typedef int pj_nv_visitor(void *user, const pj_nv_record *record);

/* Calls visit with each record of entry's own section (.nv.info.ENTRY), in order. NULL when
 * the walk ended (every record visited, or visit stopped it); else what is wrong: not a whole
 * CUDA ELF, no such section, or a record cut short or of an unknown format. */
const char *pj_cubin_entry_records(const void *cubin, size_t bytes, const char *entry,
                                   pj_nv_visitor *visit, void *user);

/* The most threads per block that a launch of the entry may have, as the driver's
 * CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK reports it (cubin.c says how it is derived). */
int pj_cubin_max_threads(const pj_cubin_entry *entry);
/* The same for a device whose blocks may have block_registers registers (the driver's
 * CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK; PJ_CUBIN_BLOCK_REGISTERS on every GPU of
 * compute capability 7.0 and later). */
#define PJ_CUBIN_BLOCK_REGISTERS 65536
int pj_cubin_max_threads_for(const pj_cubin_entry *entry, int block_registers);

/* Describes a kernel's binary into out ("7648 bytes, CUDA ELF for sm_90: SASS ..."); returns
 * 1 when it is a CUDA ELF holding SASS, 0 otherwise (PTX text, empty, other). */
int pj_cubin_describe(char *out, size_t size, const void *data, size_t bytes);

#endif
