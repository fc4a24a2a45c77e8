/* error.c — status names, the thread-local last-error message, and warnings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Large enough for a compiler log with source excerpts; longer messages are cut. */
static _Thread_local char last_error[16384];

const char *ptxjit_status_name(ptxjit_status status)
{
    switch (status) {
#define PJ_STATUS_CASE(name, value, text) \
    case name:                            \
        return #name;
        PTXJIT_STATUS_LIST(PJ_STATUS_CASE)
#undef PJ_STATUS_CASE
    }
    return "PTXJIT_ERR_UNKNOWN";
}

const char *ptxjit_last_error(void)
{
    return last_error;
}

void pj_error_clear(void)
{
    last_error[0] = '\0';
}

ptxjit_status pj_error(ptxjit_status status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(last_error, sizeof last_error, format, args);
    va_end(args);
    return status;
}

ptxjit_status pj_error_wrap(ptxjit_status status, const char *format, ...)
{
    char prefix[1024], previous[sizeof last_error];
    va_list args;
    va_start(args, format);
    vsnprintf(prefix, sizeof prefix, format, args);
    va_end(args);
    memcpy(previous, last_error, sizeof previous);
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "%s: %s", prefix, previous);
    if (sb.data) /* an over-long message is cut to the buffer */
        snprintf(last_error, sizeof last_error, "%s", sb.data);
    pj_sb_free(&sb);
    return status;
}

void pj_log(const pj_logger *logger, ptxjit_log_level level, const char *format, ...)
{
    char message[2048];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    if (logger && logger->fn) {
        logger->fn(logger->user, level, message);
        return;
    }
    if (level != PTXJIT_LOG_WARNING && !getenv("PTXJIT_VERBOSE"))
        return; /* by default only warnings reach stderr */
    fprintf(stderr, "ptxjit: %s: %s\n", level == PTXJIT_LOG_WARNING ? "warning" : "info",
            message);
}

void pj_notify(const pj_logger *logger, ptxjit_event event)
{
    if (!logger || !logger->on_event)
        return;
    const char **strings[] = {&event.family, &event.params, &event.options, &event.key,
                              &event.detail};
    for (size_t i = 0; i < sizeof strings / sizeof *strings; i++)
        if (!*strings[i])
            *strings[i] = "";
    logger->on_event(logger->event_user, &event);
}
