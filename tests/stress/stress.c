/* stress.c — `make stress`: many processes share one disk cache while some are killed with
 * SIGKILL in the middle of writing an entry; afterwards every entry must verify, every kernel
 * any process got must equal a fresh compile of its request, and no temp file may outlive
 * the sweep. Passes on correctness; the figures it prints are for docs/RELIABILITY.md.
 *
 *   ptxjit_stress [-p PROCESSES] [-r REQUESTS] [-k KILLS] [-K RANDOM_KILLS] [-s SHARED_KEYS]
 *                 [-d DISTINCT_KEYS] [-m MAX_BYTES] [-t SECONDS]
 *
 * Each request opens a fresh context (as a new process would), asks for one reduce kernel,
 * checks it and closes the context, so that every request goes through the disk cache. Keys
 * come from a pool shared by all processes and from a few distinct to each process, half of
 * them compiled by NVRTC and half by the llvm backend (plugin and nvJitLink). Victims
 * (-k) arm a fault hook partway through and die by SIGKILL after the first piece of their
 * next entry reached its temp file; others (-K) are killed by the parent at a random moment. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache/disk.h"
#include "cache/scan.h"
#include "fileio_faults.h"
#include "ptxjit.h"

typedef struct {
    int processes, requests, kills, random_kills, shared_keys, distinct_keys, seconds;
    unsigned long long max_bytes;
} config;

typedef struct {
    pid_t pid;
    int victim, random_victim, status, exited;
} process;

static config cfg = {16, 1000, 4, 2, 12, 2, 900, 0};
static char cache_dir[4096], results_dir[4200];

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *format, const char *detail)
{
    fprintf(stderr, "stress: FAIL: ");
    fprintf(stderr, format, detail);
    fprintf(stderr, "\n");
    exit(1);
}

/* ---- keys ---- */

static int key_count(void)
{
    return cfg.shared_keys + cfg.processes * cfg.distinct_keys;
}

/* Request j: batched reduce kernels, all distinct (batch 1..64, then the other dtype); odd
 * ones through the llvm backend, whose entries (IR, PTX from LLVM, nvJitLink's cubin) share
 * the cache with NVRTC's. */
static void key_params(char *out, size_t size, int j)
{
    snprintf(out, size, "variant=batched batch=%d dtype=%s%s", j % 64 + 1,
             j / 64 % 2 ? "f32" : "i32", j % 2 ? " backend=llvm" : "");
}

/* The distinct key a victim dies writing: of either backend, as victims alternate. */
static int victim_key(int index)
{
    return cfg.shared_keys + index * cfg.distinct_keys + index % cfg.distinct_keys;
}

static void key_canonical(char *out, size_t size, int j)
{
    snprintf(out, size, "%sbatch=%d dtype=%s tpb=512 variant=batched", j % 2 ? "backend=llvm " : "",
             j % 64 + 1, j / 64 % 2 ? "f32" : "i32");
}

static pj_hash128 kernel_digest(const char *ptx, const void *cubin, size_t cubin_size)
{
    pj_hasher *hasher = pj_hasher_new();
    pj_hasher_field_str(hasher, "ptx", ptx);
    pj_hasher_field(hasher, "cubin", cubin, cubin_size);
    pj_hash128 digest = pj_hasher_digest(hasher);
    pj_hasher_free(hasher);
    return digest;
}

/* ---- a worker process ---- */

typedef struct {
    int index, victim, armed, writes_since_armed, corrupt_warnings;
    FILE *results;
} worker;

static worker self;

/* The victim's fault hook: the second write(2) of a store after arming is never made. The
 * first piece (4096 bytes, see pj_fileio_limit_writes below) is already in the temp file. */
static void kill_mid_write(fileio_op op)
{
    if (self.armed && op == FILEIO_WRITE && ++self.writes_since_armed == 2)
        raise(SIGKILL);
}

static void on_log(void *user, ptxjit_log_level level, const char *message)
{
    (void)user;
    if (level != PTXJIT_LOG_WARNING)
        return;
    if (strstr(message, "corrupt") || strstr(message, "another request"))
        self.corrupt_warnings++;
    fprintf(stderr, "stress: worker %d: warning: %s\n", self.index, message);
}

/* One request in a fresh context; one result line: key, origin, digest. */
static int request(int j)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.cache_dir = cache_dir;
    options.use_gpu = 0;
    options.log = on_log;
    options.cache_max_bytes = cfg.max_bytes;
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    char params[128], canonical[128];
    key_params(params, sizeof params, j);
    key_canonical(canonical, sizeof canonical, j);
    if (ptxjit_open(&context, &options) != PTXJIT_OK) {
        fprintf(stderr, "stress: worker %d: open: %s\n", self.index, ptxjit_last_error());
        return 0;
    }
    int ok = ptxjit_get_kernel(&kernel, context, "reduce", params, &origin) == PTXJIT_OK;
    if (!ok)
        fprintf(stderr, "stress: worker %d: %s: %s\n", self.index, params, ptxjit_last_error());
    ok = ok && strcmp(ptxjit_kernel_params(kernel), canonical) == 0 &&
         strstr(ptxjit_kernel_ptx(kernel), ".entry reduce_kernel(") != NULL;
    if (ok) {
        size_t size;
        const void *cubin = ptxjit_kernel_cubin(kernel, &size);
        pj_hash128 digest = kernel_digest(ptxjit_kernel_ptx(kernel), cubin, size);
        fprintf(self.results, "%d %d %016llx%016llx\n", j, (int)origin,
                (unsigned long long)digest.high, (unsigned long long)digest.low);
        fflush(self.results); /* a killed worker keeps every line it finished */
    }
    ptxjit_close(context);
    return ok;
}

/* Victims ask only for shared keys until kill_at, then for a distinct key of their own,
 * which nobody else has stored: they compile it and die writing it. */
static int run_worker(int index, int victim)
{
    self = (worker){index, victim, 0, 0, 0, NULL};
    char path[4300];
    snprintf(path, sizeof path, "%s/worker.%d", results_dir, index);
    self.results = fopen(path, "w");
    if (!self.results)
        return 2;
    srand((unsigned)index * 7919u + 17u);
    pj_fileio_limit_writes(4096);
    if (victim)
        pj_fileio_set_hook(kill_mid_write);
    int kill_at = cfg.requests / 10 + rand() % (cfg.requests / 2 + 1), failures = 0;
    int first_own = cfg.shared_keys + index * cfg.distinct_keys;
    for (int r = 0; r < cfg.requests; r++) {
        int own = cfg.distinct_keys > 0 && rand() % 4 == 0;
        int j = own ? first_own + rand() % cfg.distinct_keys : rand() % cfg.shared_keys;
        if (victim) {
            self.armed = r >= kill_at;
            j = self.armed ? victim_key(index) : rand() % cfg.shared_keys;
        }
        failures += !request(j);
    }
    fclose(self.results);
    if (self.corrupt_warnings)
        fprintf(stderr, "stress: worker %d saw %d corrupt or mixed entries\n", index,
                self.corrupt_warnings);
    return failures || self.corrupt_warnings ? 1 : 0;
}

/* ---- the parent ---- */

static void start_workers(process *procs)
{
    for (int p = 0; p < cfg.processes; p++) {
        procs[p] = (process){0, p < cfg.kills, p >= cfg.kills && p < cfg.kills + cfg.random_kills,
                             0, 0};
        fflush(NULL);
        procs[p].pid = fork();
        if (procs[p].pid < 0)
            die("fork: %s", strerror(errno));
        if (procs[p].pid == 0)
            _exit(run_worker(p, procs[p].victim));
    }
}

/* Waits for every worker; random victims get SIGKILL at a random moment of their first
 * 1.2 s (a worker answers some 200 requests a second). Gives up (and kills all) after
 * cfg.seconds. */
static void wait_workers(process *procs, double started)
{
    double kill_time[256];
    for (int p = 0; p < cfg.processes; p++)
        kill_time[p] = procs[p].random_victim ? started + 0.2 + (rand() % 1000) / 1000.0 : -1;
    for (int left = cfg.processes; left > 0;) {
        for (int p = 0; p < cfg.processes; p++) {
            if (!procs[p].exited && kill_time[p] > 0 && now_s() >= kill_time[p]) {
                kill(procs[p].pid, SIGKILL);
                kill_time[p] = -1;
            }
            if (!procs[p].exited && waitpid(procs[p].pid, &procs[p].status, WNOHANG) > 0) {
                procs[p].exited = 1;
                left--;
            }
        }
        if (now_s() - started > cfg.seconds) {
            for (int p = 0; p < cfg.processes; p++)
                if (!procs[p].exited)
                    kill(procs[p].pid, SIGKILL);
            die("%s", "time limit reached before the workers finished");
        }
        usleep(2000);
    }
}

typedef struct {
    int requests, compiled, disk, memory;
    int killed_mid_write, killed_randomly, finished;
} tally;

/* Every worker exited cleanly, except victims, which must have died by SIGKILL. */
static void check_exits(const process *procs, tally *t)
{
    for (int p = 0; p < cfg.processes; p++) {
        int status = procs[p].status;
        int killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
        char what[64];
        snprintf(what, sizeof what, "worker %d", p);
        if (procs[p].victim && !killed)
            die("%s was to die writing an entry but did not", what);
        if (!killed && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
            die("%s failed (see its messages above)", what);
        t->killed_mid_write += procs[p].victim;
        t->killed_randomly += killed && !procs[p].victim;
        t->finished += !killed;
    }
}

static char (*reference_keys)[33]; /* the cache key of each request */

/* What a fresh compile of every key gives, with no cache: the standard of "right". */
static pj_hash128 *reference_digests(void)
{
    reference_keys = calloc((size_t)key_count(), sizeof *reference_keys);
    pj_hash128 *digests = calloc((size_t)key_count(), sizeof *digests);
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.remote_cache = ""; /* the standard comes from the compiler, never a server */
    ptxjit_context *context;
    if (!digests || ptxjit_open(&context, &options) != PTXJIT_OK)
        die("reference context: %s", ptxjit_last_error());
    for (int j = 0; j < key_count(); j++) {
        char params[128];
        key_params(params, sizeof params, j);
        ptxjit_kernel *kernel;
        if (ptxjit_get_kernel(&kernel, context, "reduce", params, NULL) != PTXJIT_OK)
            die("reference compile: %s", ptxjit_last_error());
        size_t size;
        const void *cubin = ptxjit_kernel_cubin(kernel, &size);
        digests[j] = kernel_digest(ptxjit_kernel_ptx(kernel), cubin, size);
        snprintf(reference_keys[j], 33, "%s", ptxjit_kernel_key(kernel));
    }
    ptxjit_close(context);
    return digests;
}

/* Every result line of every worker names the reference digest of its key. */
static void check_results(const pj_hash128 *reference, tally *t)
{
    for (int p = 0; p < cfg.processes; p++) {
        char path[4300], line[256];
        snprintf(path, sizeof path, "%s/worker.%d", results_dir, p);
        FILE *file = fopen(path, "r");
        if (!file)
            die("no results from %s", path);
        while (fgets(line, sizeof line, file)) {
            int j, origin;
            char digest[33], want[33];
            if (sscanf(line, "%d %d %32s", &j, &origin, digest) != 3 || j < 0 ||
                j >= key_count())
                die("malformed result line: %s", line);
            pj_hash_hex(&reference[j], want);
            if (strcmp(digest, want) != 0)
                die("a worker got a kernel that differs from a fresh compile: %s", line);
            t->requests++;
            t->compiled += origin == PTXJIT_ORIGIN_COMPILED;
            t->disk += origin == PTXJIT_ORIGIN_DISK;
            t->memory += origin == PTXJIT_ORIGIN_MEMORY;
        }
        fclose(file);
    }
}

typedef struct {
    int entries, temps, stale_temps;
    unsigned long long bytes;
    char keys[1024][33];
    char temp_paths[256][64];
} disk_census;

static void census_visit(int top_fd, const char *path, scan_kind kind, const struct stat *st,
                         void *user)
{
    (void)top_fd;
    disk_census *c = user;
    if (kind == SCAN_ENTRY && c->entries < 1024) {
        snprintf(c->keys[c->entries++], 33, "%s", strchr(path, '/') + 1);
        c->bytes += (unsigned long long)st->st_size;
    }
    if (kind == SCAN_TEMP) {
        if (c->temps < 256)
            snprintf(c->temp_paths[c->temps], 64, "%s", path);
        c->temps++;
        c->stale_temps += st->st_mtime < time(NULL) - PJ_TEMP_SWEEP_SECONDS;
    }
}

static void take_census(disk_census *c, const char *dir)
{
    memset(c, 0, sizeof *c);
    if (pj_scan_cache(dir, census_visit, c) != 0)
        die("cannot scan %s", dir);
}

static ptxjit_cache_stats final_stats;

static int key_index(const char *key)
{
    for (int j = 0; j < key_count(); j++)
        if (strcmp(reference_keys[j], key) == 0)
            return j;
    return -1;
}

/* Loads every entry through the disk cache's own reader: each must verify (checksum, key,
 * lengths) and hold exactly the reference kernel of its key. Every shared key must be there;
 * the key each victim died writing must not (a partial write is never an entry). */
static void verify_entries(const disk_census *c, const pj_hash128 *reference)
{
    pj_disk_cache *disk;
    int present[128] = {0};
    if (pj_disk_cache_open(&disk, &(pj_disk_options){cache_dir, 0, 0}, NULL) != PTXJIT_OK)
        die("open: %s", ptxjit_last_error());
    for (int i = 0; i < c->entries; i++) {
        pj_artifact a;
        int found = 0, j = key_index(c->keys[i]);
        if (j < 0)
            die("entry %s is for no key that was asked for", c->keys[i]);
        if (pj_disk_cache_load(disk, c->keys[i], &a, &found) != PTXJIT_OK || !found)
            die("entry %s does not verify", c->keys[i]);
        pj_hash128 digest = kernel_digest(a.ptx, a.cubin, a.cubin_size);
        if (digest.low != reference[j].low || digest.high != reference[j].high)
            die("entry %s holds a kernel that differs from a fresh compile", c->keys[i]);
        present[j] = 1;
        pj_artifact_free(&a);
    }
    for (int j = 0; j < cfg.shared_keys && !cfg.max_bytes; j++) /* a cap may evict them */
        if (!present[j])
            die("shared key %s has no entry", reference_keys[j]);
    for (int p = 0; p < cfg.kills; p++)
        if (present[victim_key(p)])
            die("%s", "a key whose writer was killed mid-write has an entry");
    pj_disk_cache_stats(disk, &final_stats);
    if (final_stats.corrupt)
        die("%s", "the cache counted corrupt entries: a mixed or partial entry was seen");
    pj_disk_cache_close(disk);
}

/* Ages the temp files that killed writers left, then lets trim sweep them. */
static int sweep_leftovers(disk_census *c, char *dir)
{
    int top = open(dir, O_RDONLY | O_DIRECTORY);
    struct timespec old[2];
    clock_gettime(CLOCK_REALTIME, &old[0]);
    old[0].tv_sec -= PJ_TEMP_SWEEP_SECONDS + 60;
    old[1] = old[0];
    for (int i = 0; i < c->temps && i < 256; i++)
        if (utimensat(top, c->temp_paths[i], old, AT_SYMLINK_NOFOLLOW) != 0)
            die("cannot age %s", c->temp_paths[i]);
    close(top);
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.cache_dir = cache_dir;
    options.cache_max_bytes = cfg.max_bytes; /* the trim keeps the run's cap, not the default */
    options.use_gpu = 0;
    ptxjit_context *context;
    uint64_t evicted = 0, swept = 0;
    if (ptxjit_open(&context, &options) != PTXJIT_OK ||
        ptxjit_cache_trim(context, &evicted, &swept) != PTXJIT_OK)
        die("trim: %s", ptxjit_last_error());
    ptxjit_close(context);
    return (int)swept;
}

static void parse_args(int argc, char **argv)
{
    for (int opt; (opt = getopt(argc, argv, "p:r:k:K:s:d:m:t:")) != -1;) {
        long value = strtol(optarg, NULL, 10);
        switch (opt) {
        case 'p': cfg.processes = (int)value; break;
        case 'r': cfg.requests = (int)value; break;
        case 'k': cfg.kills = (int)value; break;
        case 'K': cfg.random_kills = (int)value; break;
        case 's': cfg.shared_keys = (int)value; break;
        case 'd': cfg.distinct_keys = (int)value; break;
        case 'm': cfg.max_bytes = strtoull(optarg, NULL, 10); break;
        case 't': cfg.seconds = (int)value; break;
        default: exit(2);
        }
    }
    if (cfg.processes < 1 || cfg.processes > 256 || cfg.requests < 1 || cfg.shared_keys < 1 ||
        cfg.distinct_keys < 1 || cfg.kills + cfg.random_kills > cfg.processes ||
        key_count() > 128)
        die("%s", "bad arguments: 1..256 processes, kills within them, at most 128 keys");
}

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    const char *base = getenv("TMPDIR");
    snprintf(cache_dir, sizeof cache_dir, "%s/ptxjit-stress-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(cache_dir))
        die("mkdtemp: %s", strerror(errno));
    snprintf(results_dir, sizeof results_dir, "%s/results", cache_dir);
    mkdir(results_dir, 0700);
    printf("stress: %d processes x %d requests on %s; %d shared keys, %d distinct per process "
           "(odd keys through the llvm backend); %d killed mid-write, %d killed at random\n",
           cfg.processes, cfg.requests, cache_dir, cfg.shared_keys, cfg.distinct_keys,
           cfg.kills, cfg.random_kills);
    fflush(stdout);
    process procs[256];
    double started = now_s();
    start_workers(procs);
    wait_workers(procs, started);
    double elapsed = now_s() - started;
    tally t = {0};
    check_exits(procs, &t);
    pj_hash128 *reference = reference_digests();
    check_results(reference, &t);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/v%d", cache_dir, PJ_DISK_FORMAT_VERSION);
    disk_census before, after;
    take_census(&before, dir);
    if (before.stale_temps)
        die("%s", "temp files older than the sweep age were left");
    if (before.temps < cfg.kills)
        die("%s", "a victim left no partial temp file: it was not killed mid-write");
    verify_entries(&before, reference);
    int swept = sweep_leftovers(&before, dir);
    take_census(&after, dir);
    if (after.temps || swept != before.temps)
        die("%s", "the sweep did not remove every aged temp file");
    verify_entries(&after, reference);
    if (!cfg.max_bytes && after.entries != before.entries)
        die("%s", "the sweep removed entries");
    if (cfg.max_bytes && after.bytes > cfg.max_bytes)
        die("%s", "the cache is over its cap after trim");
    printf("stress: %.1f s; %d requests answered (%d compiled, %d from disk, %d from memory), "
           "all equal to a fresh compile\n",
           elapsed, t.requests, t.compiled, t.disk, t.memory);
    printf("stress: %d processes finished, %d killed mid-write, %d killed at random moments\n",
           t.finished, t.killed_mid_write, t.killed_randomly);
    printf("stress: %d entries on disk, every one verified against a fresh compile; %d temp "
           "files left by killed writers, none older than %d s, all %d swept once aged\n",
           after.entries, before.temps, PJ_TEMP_SWEEP_SECONDS, swept);
    if (cfg.max_bytes)
        printf("stress: cap %llu bytes: %llu entries evicted on the way; %llu bytes in %d "
               "entries at the end\n",
               cfg.max_bytes, (unsigned long long)final_stats.evicted, after.bytes,
               after.entries);
    printf("stress: PASS\n");
    free(reference);
    char command[4400];
    snprintf(command, sizeof command, "rm -rf '%s'", cache_dir);
    return system(command) == 0 ? 0 : 1;
}
