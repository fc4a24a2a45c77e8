/* ptxas_log.h — the compile log as a cache entry keeps it: ptxas -v's lines (the spills that
 * gpu/resources.c reads), without the ones that change from one compile to the next. */
#ifndef PTXJIT_COMPILERS_PTXAS_LOG_H
#define PTXJIT_COMPILERS_PTXAS_LOG_H

/* Removes, in place, every line of log that names a compile's duration ("ptxas info    :
 * Compile time = 102.546 ms"): two compiles of one key must leave the same entry, byte for
 * byte (the remote cache and the tests compare them), and a duration says nothing of the
 * code. NULL is left alone. */
void pj_ptxas_log_settle(char *log);

#endif
