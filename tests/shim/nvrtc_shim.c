/* nvrtc_shim.c — a test stand-in for libnvrtc.so: forwards every call to the real NVRTC and
 * counts the compiles in flight. The threads test loads it through PTXJIT_NVRTC_LIBRARY and
 * makes each compile wait until a number of them run at once, which can only happen when
 * ptxjit compiles distinct keys concurrently (a lock held across compiles would make the
 * first one wait in vain, and the test fail). A hook may also run inside each compile. */
#include <dlfcn.h>
#include <errno.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* How long a compile waits for the others before the barrier gives up (and says so). */
#define BARRIER_SECONDS 120

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int expected, released, timed_out, in_flight, most_in_flight, compiles;

void pjtest_shim_expect(int count);
void pjtest_shim_counts(int *total, int *most_at_once, int *gave_up);
void pjtest_shim_during_compile(void (*hook)(void *), void *user);

/* Called inside each compile, before the real one: the compile-inputs test edits a header
 * there, as a user might while a kernel compiles. */
static void (*during_compile)(void *);
static void *during_compile_user;

void pjtest_shim_during_compile(void (*hook)(void *), void *user)
{
    pthread_mutex_lock(&lock);
    during_compile = hook;
    during_compile_user = user;
    pthread_mutex_unlock(&lock);
}

/* From now on the first `count` compiles wait until all of them are in flight at once. */
void pjtest_shim_expect(int count)
{
    pthread_mutex_lock(&lock);
    expected = count;
    released = count <= 1;
    pthread_mutex_unlock(&lock);
}

void pjtest_shim_counts(int *total, int *most_at_once, int *gave_up)
{
    pthread_mutex_lock(&lock);
    *total = compiles;
    *most_at_once = most_in_flight;
    *gave_up = timed_out;
    pthread_mutex_unlock(&lock);
}

static void *real_handle;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;

static void open_real(void)
{
    const char *cuda = getenv("CUDA_HOME");
    char paths[5][512];
    int count = 0;
    snprintf(paths[count++], sizeof paths[0], "libnvrtc.so.13");
    snprintf(paths[count++], sizeof paths[0], "libnvrtc.so.12");
    if (cuda && *cuda)
        snprintf(paths[count++], sizeof paths[0], "%s/lib64/libnvrtc.so", cuda);
    snprintf(paths[count++], sizeof paths[0], "/usr/local/cuda/lib64/libnvrtc.so");
    snprintf(paths[count++], sizeof paths[0], "/usr/local/cuda/lib/libnvrtc.so");
    for (int i = 0; i < count && !real_handle; i++)
        real_handle = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
}

/* The real function called name; without one the test cannot go on. */
static void *real(const char *name)
{
    pthread_once(&real_once, open_real);
    void *function = real_handle ? dlsym(real_handle, name) : NULL;
    if (!function) {
        fprintf(stderr, "nvrtc_shim: no real %s (is NVRTC installed?)\n", name);
        abort();
    }
    return function;
}

#define FORWARD(type, name, params, args)                  \
    type name params                                       \
    {                                                      \
        type(*function) params = (type(*) params)real(#name); \
        return function args;                              \
    }

FORWARD(nvrtcResult, nvrtcVersion, (int *major, int *minor), (major, minor))
FORWARD(nvrtcResult, nvrtcCreateProgram,
        (nvrtcProgram * program, const char *source, const char *name, int headers,
         const char *const *header_sources, const char *const *header_names),
        (program, source, name, headers, header_sources, header_names))
FORWARD(nvrtcResult, nvrtcGetPTXSize, (nvrtcProgram program, size_t *size), (program, size))
FORWARD(nvrtcResult, nvrtcGetPTX, (nvrtcProgram program, char *ptx), (program, ptx))
FORWARD(nvrtcResult, nvrtcGetCUBINSize, (nvrtcProgram program, size_t *size), (program, size))
FORWARD(nvrtcResult, nvrtcGetCUBIN, (nvrtcProgram program, char *cubin), (program, cubin))
FORWARD(nvrtcResult, nvrtcGetProgramLogSize, (nvrtcProgram program, size_t *size),
        (program, size))
FORWARD(nvrtcResult, nvrtcGetProgramLog, (nvrtcProgram program, char *log), (program, log))
FORWARD(nvrtcResult, nvrtcDestroyProgram, (nvrtcProgram * program), (program))
FORWARD(const char *, nvrtcGetErrorString, (nvrtcResult result), (result))

/* Counts this compile in, then waits (bounded) for the expected number to be in flight. */
static void arrive(void)
{
    pthread_mutex_lock(&lock);
    compiles++;
    if (++in_flight > most_in_flight)
        most_in_flight = in_flight;
    if (in_flight >= expected)
        released = 1;
    pthread_cond_broadcast(&changed);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += BARRIER_SECONDS;
    while (!released)
        if (pthread_cond_timedwait(&changed, &lock, &deadline) == ETIMEDOUT) {
            timed_out = released = 1;
            pthread_cond_broadcast(&changed);
        }
    pthread_mutex_unlock(&lock);
}

static void leave(void)
{
    pthread_mutex_lock(&lock);
    in_flight--;
    pthread_mutex_unlock(&lock);
}

/* For a test that needs a compile in flight in another process (the CLI, given this library
 * as PTXJIT_NVRTC_LIBRARY): with $PJTEST_SHIM_HOLD set to a path, each compile creates that
 * file (it is in flight now), then waits until PATH.go exists, for up to BARRIER_SECONDS. The
 * test may kill the process meanwhile: a compiler that dies mid-compile. */
static void hold_if_asked(void)
{
    const char *hold = getenv("PJTEST_SHIM_HOLD");
    if (!hold || !*hold)
        return;
    char go[4200];
    snprintf(go, sizeof go, "%s.go", hold);
    FILE *f = fopen(hold, "w");
    if (f)
        fclose(f);
    for (int tries = 0; tries < BARRIER_SECONDS * 100; tries++) {
        FILE *g = fopen(go, "r");
        if (g) {
            fclose(g);
            return;
        }
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram program, int count, const char *const *options)
{
    nvrtcResult (*compile)(nvrtcProgram, int, const char *const *) =
        (nvrtcResult(*)(nvrtcProgram, int, const char *const *))real("nvrtcCompileProgram");
    hold_if_asked();
    arrive();
    pthread_mutex_lock(&lock);
    void (*hook)(void *) = during_compile;
    void *user = during_compile_user;
    pthread_mutex_unlock(&lock);
    if (hook)
        hook(user);
    nvrtcResult result = compile(program, count, options);
    leave();
    return result;
}
