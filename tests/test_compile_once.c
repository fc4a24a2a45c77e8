/* test_compile_once.c — one compile per key when several processes, or several nodes of a
 * remote cache, miss it at once (cache/compile_lock.c, remote/lease.c): the others wait for its
 * entry; a holder that dies, a lock file left behind, or a holder that does not finish never
 * block anyone beyond a bound. The processes are the CLI ($PTXJIT_CLI); a compile is held in
 * flight with the stand-in NVRTC (tests/shim/nvrtc_shim.c, $PJTEST_SHIM_HOLD), so that the test
 * knows, rather than hopes, that the requests overlap. */
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "request/context.h"
#include "redis_server.h"
#include "test_util.h"

#define PARAMS "variant=two_pass tpb=128"

typedef struct {
    pid_t pid;
    char err[4300]; /* its stderr */
} cli_process;

static char *path_in(const char *dir, const char *name)
{
    char *path = malloc(4300);
    snprintf(path, 4300, "%s/%s", dir, name);
    return path;
}

/* The stand-in NVRTC, built next to the test runner. */
static void shim_path(char *out, size_t size)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    ck_assert_int_gt(n, 0);
    self[n] = '\0';
    snprintf(out, size, "%s/libpjtest_nvrtc_shim.so", dirname(self));
}

/* `ptxjit --no-gpu ptx reduce PARAMS` on cache_dir in the background; hold: a path, to make its
 * compile wait in flight (announced by that file) until hold.go exists; NULL: a plain one. */
static cli_process spawn_ptx(const char *cache_dir, const char *work, const char *name,
                             const char *hold)
{
    const char *cli = getenv("PTXJIT_CLI");
    ck_assert_msg(cli != NULL, "PTXJIT_CLI is not set (make test sets it)");
    cli_process p;
    snprintf(p.err, sizeof p.err, "%s/%s.err", work, name);
    char shim[4200];
    shim_path(shim, sizeof shim);
    p.pid = fork();
    ck_assert_int_ge(p.pid, 0);
    if (p.pid == 0) {
        setenv("PTXJIT_CACHE_DIR", cache_dir, 1);
        if (hold) {
            setenv("PTXJIT_NVRTC_LIBRARY", shim, 1);
            setenv("PJTEST_SHIM_HOLD", hold, 1);
        }
        int out = open("/dev/null", O_WRONLY);
        int err = open(p.err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(out, 1);
        dup2(err, 2);
        execl(cli, cli, "--no-gpu", "ptx", "reduce", PARAMS, (char *)NULL);
        _exit(127);
    }
    return p;
}

static void sleep_ms(int ms)
{
    nanosleep(&(struct timespec){ms / 1000, (long)(ms % 1000) * 1000000}, NULL);
}

static void wait_for_file(const char *path)
{
    struct stat st;
    for (int tries = 0; tries < 12000 && stat(path, &st) != 0; tries++) /* 120 s */
        sleep_ms(10);
    ck_assert_msg(stat(path, &st) == 0, "%s never appeared", path);
}

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
}

/* Whether process pid has a compile lock file of cache_dir open. */
static int holds_lock_file(pid_t pid, const char *cache_dir)
{
    char fds[64];
    snprintf(fds, sizeof fds, "/proc/%ld/fd", (long)pid);
    DIR *dir = opendir(fds);
    int found = 0;
    for (struct dirent *e; dir && !found && (e = readdir(dir));) {
        char link[4300], target[4300];
        snprintf(link, sizeof link, "%s/%s", fds, e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        size_t length = strlen(target);
        found = strncmp(target, cache_dir, strlen(cache_dir)) == 0 && length > 37 &&
                strcmp(target + length - 5, ".lock") == 0 && target[length - 38] == '/';
    }
    if (dir)
        closedir(dir);
    return found;
}

/* Whether pid has exited (a zombie not yet waited for). */
static int exited(pid_t pid)
{
    char path[64], text[512] = "";
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (f) {
        (void)!fgets(text, sizeof text, f);
        fclose(f);
    }
    const char *state = strrchr(text, ')'); /* "pid (name) S ..." */
    return !f || (state && state[1] == ' ' && state[2] == 'Z');
}

/* Waits until pid opened a lock file of cache_dir: it missed every cache and now waits for
 * the holder (or, with a remote, is about to ask for the lease). */
static void wait_until_waiting(pid_t pid, const char *cache_dir)
{
    for (int tries = 0; tries < 12000 && !holds_lock_file(pid, cache_dir) && !exited(pid);
         tries++)
        sleep_ms(10);
    ck_assert_msg(holds_lock_file(pid, cache_dir), "process %ld never opened a lock file of %s",
                  (long)pid, cache_dir);
}

/* Waits for p, which must succeed; its summary line ("compiled", "disk cache hit", ...). */
static char *finish(cli_process *p)
{
    int status = 0;
    ck_assert_int_eq(waitpid(p->pid, &status, 0), p->pid);
    char *err = NULL;
    ck_assert_int_eq(pj_read_file(&err, NULL, p->err), PTXJIT_OK);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the CLI failed: %s", err);
    return err;
}

static void expect_origin(char *err, const char *origin)
{
    char needle[64];
    snprintf(needle, sizeof needle, ": %s in ", origin);
    ck_assert_msg(strstr(err, needle), "expected '%s' in: %s", origin, err);
    free(err);
}

static ptxjit_context *open_dir(const char *dir, int wait_ms)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.cache_dir = dir;
    options.compile_wait_ms = wait_ms;
    options.process_cache = 0; /* each context stands for a process or node of its own */
    ptxjit_context *context = NULL;
    ck_assert_msg(ptxjit_open(&context, &options) == PTXJIT_OK, "%s", ptxjit_last_error());
    return context;
}

static ptxjit_cache_stats stats_of(const char *dir)
{
    ptxjit_context *context = open_dir(dir, 0);
    ptxjit_cache_stats s;
    ck_assert_int_eq(ptxjit_cache_stats_get(&s, context), PTXJIT_OK);
    ptxjit_close(context);
    return s;
}

static ptxjit_kernel *get(ptxjit_context *context, ptxjit_origin expected)
{
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, "reduce", PARAMS, &origin) == PTXJIT_OK,
                  "%s", ptxjit_last_error());
    ck_assert_int_eq(origin, expected);
    return kernel;
}

/* The compile lock files of dir ("v1/<key>.lock"; evict.lock is eviction's). */
static int lock_files(const char *dir)
{
    char *v1 = path_in(dir, "v1");
    DIR *top = opendir(v1);
    int count = 0;
    for (struct dirent *e; top && (e = readdir(top));)
        count += strlen(e->d_name) == 32 + 5 && !strcmp(e->d_name + 32, ".lock");
    if (top)
        closedir(top);
    free(v1);
    return count;
}

START_TEST(processes_of_one_cache_dir_compile_a_cold_key_once)
{
    unsetenv("PTXJIT_REMOTE_CACHE");
    char *work = test_mkdtemp(), *dir = path_in(work, "cache"), *hold = path_in(work, "hold");
    char go[4400];
    snprintf(go, sizeof go, "%s.go", hold);
    cli_process first = spawn_ptx(dir, work, "first", hold);
    wait_for_file(hold); /* the first holds the key's lock, mid-compile */
    cli_process second = spawn_ptx(dir, work, "second", NULL);
    wait_until_waiting(second.pid, dir);
    touch(go);
    expect_origin(finish(&first), "compiled");
    expect_origin(finish(&second), "disk cache hit"); /* its entry, after waiting */
    ptxjit_cache_stats s = stats_of(dir);
    ck_assert_uint_eq(s.stores, 1);
    ck_assert_uint_eq(s.compile_waits, 1);
    ck_assert_uint_eq(s.compile_wait_timeouts, 0);
    ck_assert_int_eq(lock_files(dir), 0); /* the holder removed its lock file */
    test_rmtree(work);
    free(work), free(dir), free(hold);
}
END_TEST

START_TEST(nodes_sharing_redis_compile_a_cold_key_once)
{
    test_redis r = {0};
    if (!test_redis_start(&r, "nodes_sharing_redis_compile_a_cold_key_once"))
        return;
    char *a = path_in(r.dir, "a"), *b = path_in(r.dir, "b"), *hold = path_in(r.dir, "hold");
    char go[4400];
    snprintf(go, sizeof go, "%s.go", hold);
    cli_process node_a = spawn_ptx(a, r.dir, "a", hold);
    wait_for_file(hold); /* A missed Redis, took the lease and compiles */
    cli_process node_b = spawn_ptx(b, r.dir, "b", NULL);
    wait_until_waiting(node_b.pid, b); /* B missed Redis too: it finds the lease taken */
    touch(go);
    expect_origin(finish(&node_a), "compiled");
    expect_origin(finish(&node_b), "remote cache hit");
    ptxjit_cache_stats sa = stats_of(a), sb = stats_of(b);
    ck_assert_uint_eq(sa.lease_wins, 1);
    ck_assert_uint_eq(sa.remote_publishes, 1);
    ck_assert_uint_eq(sb.lease_waits, 1);
    ck_assert_uint_eq(sb.lease_timeouts, 0);
    ck_assert_uint_eq(sb.lease_wins, 0);
    ck_assert_uint_eq(sb.remote_hits, 1);
    /* Both nodes hold the same bytes, each from its own disk now. */
    ptxjit_context *ca = open_dir(a, 0), *cb = open_dir(b, 0);
    size_t size_a, size_b;
    const void *cubin_a = ptxjit_kernel_cubin(get(ca, PTXJIT_ORIGIN_DISK), &size_a);
    const void *cubin_b = ptxjit_kernel_cubin(get(cb, PTXJIT_ORIGIN_DISK), &size_b);
    ck_assert_uint_eq(size_a, size_b);
    ck_assert_int_eq(memcmp(cubin_a, cubin_b, size_a), 0);
    ptxjit_close(ca);
    ptxjit_close(cb);
    free(a), free(b), free(hold);
    test_redis_stop(&r);
}
END_TEST

/* A node killed while it holds the lease (mid-compile) costs the others its lease's TTL: the
 * waiter takes the lease over when it expires, compiles, and answers. */
START_TEST(killed_lease_holder_delays_the_fleet_only_until_its_lease_expires)
{
    test_redis r = {0};
    if (!test_redis_start(&r, "killed_lease_holder_delays_the_fleet_only_until_its_lease_expires"))
        return;
    setenv("PTXJIT_REMOTE_CACHE_LEASE_MS", "2000", 1);
    char *a = path_in(r.dir, "a"), *b = path_in(r.dir, "b"), *hold = path_in(r.dir, "hold");
    cli_process node_a = spawn_ptx(a, r.dir, "a", hold);
    wait_for_file(hold);
    /* B gets ready first (its compiler memo, the family's schema), so that its request reaches
     * the lease well within the TTL even under valgrind. */
    ptxjit_context *node_b = open_dir(b, 0);
    char version[64], *source = NULL;
    ck_assert_int_eq(pj_context_compiler_version(node_b, PJ_BACKEND_NVRTC, version), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_specialize(&source, node_b, "reduce", PARAMS), PTXJIT_OK);
    free(source);
    kill(node_a.pid, SIGKILL); /* the lease stays behind, unrenewed */
    waitpid(node_a.pid, NULL, 0);
    ck_assert_ptr_nonnull(ptxjit_kernel_ptx(get(node_b, PTXJIT_ORIGIN_COMPILED)));
    ptxjit_close(node_b);
    ptxjit_cache_stats sb = stats_of(b);
    ck_assert_uint_eq(sb.lease_waits, 1);
    ck_assert_uint_eq(sb.lease_timeouts, 1); /* taken over, not handed an entry */
    ck_assert_uint_eq(sb.remote_publishes, 1);
    unsetenv("PTXJIT_REMOTE_CACHE_LEASE_MS");
    free(a), free(b), free(hold);
    test_redis_stop(&r);
}
END_TEST

/* A holder killed mid-compile leaves its lock file: the next request takes it without waiting.
 * A holder that is alive but never finishes is waited for up to the bound, then compiled
 * around. */
START_TEST(stale_lock_file_does_not_block_and_a_stuck_holder_is_waited_for_a_bounded_time)
{
    unsetenv("PTXJIT_REMOTE_CACHE");
    char *work = test_mkdtemp(), *dir = path_in(work, "cache"), *stuck = path_in(work, "stuck");
    char *hold = path_in(work, "hold"), *hold2 = path_in(work, "hold2");
    cli_process dead = spawn_ptx(dir, work, "dead", hold);
    wait_for_file(hold);
    kill(dead.pid, SIGKILL);
    waitpid(dead.pid, NULL, 0);
    ck_assert_int_eq(lock_files(dir), 1); /* left behind */
    ptxjit_context *context = open_dir(dir, 0);
    get(context, PTXJIT_ORIGIN_COMPILED);
    ptxjit_close(context);
    ptxjit_cache_stats s = stats_of(dir);
    ck_assert_uint_eq(s.compile_waits, 0); /* taken at once: nobody held it */
    ck_assert_int_eq(lock_files(dir), 0);

    cli_process alive = spawn_ptx(stuck, work, "alive", hold2);
    wait_for_file(hold2); /* holds the lock, and will not finish until told */
    context = open_dir(stuck, 300);
    get(context, PTXJIT_ORIGIN_COMPILED);
    ptxjit_close(context);
    s = stats_of(stuck);
    ck_assert_uint_eq(s.compile_waits, 1);
    ck_assert_uint_eq(s.compile_wait_timeouts, 1);
    char go[4400];
    snprintf(go, sizeof go, "%s.go", hold2);
    touch(go);
    expect_origin(finish(&alive), "compiled");
    test_rmtree(work);
    free(work), free(dir), free(stuck), free(hold), free(hold2);
}
END_TEST

/* The settings: a malformed lease TTL fails the open (a remote misconfigured is loud); one out
 * of range in the options too; a malformed wait bound only warns. */
START_TEST(lease_and_wait_settings_are_checked)
{
    char *dir = test_mkdtemp();
    char *key = path_in(dir, "key");
    FILE *f = fopen(key, "w");
    fputs("0123456789abcdef0123456789abcdef", f);
    fclose(f);
    chmod(key, 0600);
    setenv("PTXJIT_REMOTE_CACHE", "unix:///nonexistent/redis.sock", 1);
    setenv("PTXJIT_REMOTE_CACHE_KEY_FILE", key, 1);
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    ptxjit_context *context = NULL;
    setenv("PTXJIT_REMOTE_CACHE_LEASE_MS", "soon", 1);
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_ERR_CACHE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "PTXJIT_REMOTE_CACHE_LEASE_MS"));
    unsetenv("PTXJIT_REMOTE_CACHE_LEASE_MS");
    options.remote_lease_ms = 5;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "remote_lease_ms"));
    options.remote_lease_ms = 0;
    setenv("PTXJIT_COMPILE_WAIT_MS", "forever", 1);
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    ptxjit_close(context);
    unsetenv("PTXJIT_COMPILE_WAIT_MS");
    unsetenv("PTXJIT_REMOTE_CACHE");
    unsetenv("PTXJIT_REMOTE_CACHE_KEY_FILE");
    free(key);
    test_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_compile_once(void)
{
    Suite *s = suite_create("compile_once");
    TCase *tc = tcase_create("compile_once");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, processes_of_one_cache_dir_compile_a_cold_key_once);
    tcase_add_test(tc, nodes_sharing_redis_compile_a_cold_key_once);
    tcase_add_test(tc, killed_lease_holder_delays_the_fleet_only_until_its_lease_expires);
    tcase_add_test(tc,
                   stale_lock_file_does_not_block_and_a_stuck_holder_is_waited_for_a_bounded_time);
    tcase_add_test(tc, lease_and_wait_settings_are_checked);
    suite_add_tcase(s, tc);
    return s;
}
