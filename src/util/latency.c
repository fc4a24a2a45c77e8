/* latency.c — the stage timings' switch (latency.h). */
#include "latency.h"

_Thread_local double *pj_latency_probe;
