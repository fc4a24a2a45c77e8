/* chart.c — see chart.h. The panels are kept as the bench prints them and drawn at the end,
 * when every value (and so each panel's scale) is known. Layout: a label column sized to the
 * longest label (monospace), bars to the right on a linear axis from 0 with round ticks, each
 * bar's value after it, reference lines dashed across the rows with their names in the
 * legend. Every row is a <g class="row"> of one <rect class="bar"> per series, so a reader (and
 * tests/test_chart.c) can count them against the printed table. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/chart.h"
#include "cli/cli.h"

typedef struct {
    char *label;
    double values[CLI_CHART_SERIES_MAX];
    double mark;
} chart_row;

typedef struct {
    char *label;
    double value;
} chart_reference;

typedef struct {
    char *title, *unit;
    char *series[CLI_CHART_SERIES_MAX];
    int series_count, named;
    chart_row *rows;
    int row_count, row_capacity;
    chart_reference references[8];
    int reference_count;
    char *mark_label; /* the legend of the rows' ticks; NULL: the write-up's figure */
} chart_panel;

static struct {
    int active, failed;
    char *path, *temp, *heading;
    FILE *file; /* temp, opened with the chart: a path that cannot be written is said before the
                   bench runs, not after */
    chart_panel *panels;
    int panel_count, panel_capacity;
} chart;

static void release(void);

static char *copy_text(const char *text)
{
    char *copy = strdup(text ? text : "");
    if (!copy)
        chart.failed = 1;
    return copy;
}

int cli_chart_open(const char *path, const char *heading)
{
    if (chart.active) {
        fprintf(stderr, "ptxjit: --svg is given once\n");
        return CLI_USAGE;
    }
    chart.path = copy_text(path);
    chart.heading = copy_text(heading);
    size_t length = strlen(path) + 32;
    chart.temp = chart.failed ? NULL : malloc(length);
    if (!chart.temp) {
        fprintf(stderr, "ptxjit: out of memory\n");
        release();
        return CLI_USAGE;
    }
    snprintf(chart.temp, length, "%s.tmp.%ld", path, (long)getpid());
    chart.file = fopen(chart.temp, "w");
    if (!chart.file) {
        fprintf(stderr, "ptxjit: cannot write the chart %s: %s; give --svg a path in a "
                        "writable directory\n",
                path, strerror(errno));
        release();
        return CLI_USAGE;
    }
    chart.active = 1;
    return CLI_OK;
}

int cli_chart_active(void)
{
    return chart.active;
}

static chart_panel *current(void)
{
    return chart.active && chart.panel_count ? &chart.panels[chart.panel_count - 1] : NULL;
}

void cli_chart_table(const char *title, const char *unit, const char *const *series)
{
    if (!chart.active)
        return;
    if (chart.panel_count == chart.panel_capacity) {
        int capacity = chart.panel_capacity ? 2 * chart.panel_capacity : 8;
        chart_panel *grown = realloc(chart.panels, (size_t)capacity * sizeof *grown);
        if (!grown) {
            chart.failed = 1;
            return;
        }
        chart.panels = grown;
        chart.panel_capacity = capacity;
    }
    chart_panel *p = &chart.panels[chart.panel_count++];
    memset(p, 0, sizeof *p);
    p->title = copy_text(title);
    p->unit = copy_text(unit);
    p->named = series != NULL;
    for (int i = 0; series && series[i] && i < CLI_CHART_SERIES_MAX; i++)
        p->series[p->series_count++] = copy_text(series[i]);
    if (!p->series_count)
        p->series[p->series_count++] = copy_text(unit);
}

void cli_chart_mark_label(const char *label)
{
    if (!chart.active || !chart.panel_count)
        return;
    chart_panel *p = &chart.panels[chart.panel_count - 1];
    free(p->mark_label);
    p->mark_label = copy_text(label);
}

void cli_chart_reference(const char *label, double value)
{
    chart_panel *p = current();
    if (!p || !(value > 0) || !isfinite(value) ||
        p->reference_count == (int)CLI_LENGTH(p->references))
        return;
    p->references[p->reference_count++] = (chart_reference){copy_text(label), value};
}

void cli_chart_row(const char *label, const double *values, double mark)
{
    chart_panel *p = current();
    if (!p)
        return;
    if (p->row_count == p->row_capacity) {
        int capacity = p->row_capacity ? 2 * p->row_capacity : 16;
        chart_row *grown = realloc(p->rows, (size_t)capacity * sizeof *grown);
        if (!grown) {
            chart.failed = 1;
            return;
        }
        p->rows = grown;
        p->row_capacity = capacity;
    }
    chart_row *r = &p->rows[p->row_count++];
    r->label = copy_text(label);
    for (int i = 0; i < CLI_CHART_SERIES_MAX; i++)
        r->values[i] = i < p->series_count && isfinite(values[i]) && values[i] > 0 ? values[i]
                                                                                   : 0;
    r->mark = isfinite(mark) && mark > 0 ? mark : 0;
}

void cli_chart_bar(const char *label, double value, double mark)
{
    double values[CLI_CHART_SERIES_MAX] = {value};
    cli_chart_row(label, values, mark);
}

/* ---- drawing ---- */

#define WIDTH 1000
#define CHAR_PX 6.6      /* a 11px monospace character */
#define LABEL_CHARS 72   /* longer labels are cut (the whole label is the row's <title>) */
#define BAR_PX 12
#define ROW_GAP_PX 6
#define VALUE_PX 70      /* room after the longest bar for its value */

static const char *const palette[CLI_CHART_SERIES_MAX] = {"#4e79a7", "#f28e2b", "#59a14f",
                                                          "#b07aa1"};
/* The references' colours, by their order in the panel (the copy first, then the peers). */
static const char *const reference_colours[] = {"#e15759", "#76b7b2", "#9c755f", "#edc948"};

static const char *reference_colour(int i)
{
    return reference_colours[i % (int)CLI_LENGTH(reference_colours)];
}

/* The length of the well-formed UTF-8 character at c that XML allows (1 to 4), or 0: a stray
 * or cut byte, an overlong form, a surrogate, U+FFFE/U+FFFF or past U+10FFFF. */
static int utf8_length(const unsigned char *c)
{
    if (c[0] < 0x80)
        return 1;
    int length = c[0] >= 0xc2 && c[0] <= 0xdf ? 2 : c[0] >= 0xe0 && c[0] <= 0xef ? 3
               : c[0] >= 0xf0 && c[0] <= 0xf4 ? 4 : 0;
    for (int i = 1; i < length; i++)
        if ((c[i] & 0xc0) != 0x80)
            return 0;
    if ((c[0] == 0xe0 && c[1] < 0xa0) || (c[0] == 0xed && c[1] >= 0xa0) || /* overlong, UTF-16 */
        (c[0] == 0xef && c[1] == 0xbf && c[2] >= 0xbe) ||                 /* U+FFFE, U+FFFF */
        (c[0] == 0xf0 && c[1] < 0x90) || (c[0] == 0xf4 && c[1] >= 0x90))
        return 0;
    return length;
}

/* text as XML character data or an attribute value: the five special characters escaped, bytes
 * below 0x20 (never in a label) as spaces, and what is not UTF-8 as '?', since the file says
 * it is UTF-8 and XML 1.0 allows neither. At most `most` characters (never a character cut in
 * two), then "..." where text goes on. */
static void put_text(FILE *out, const char *text, size_t most)
{
    const unsigned char *c = (const unsigned char *)text;
    for (size_t n = 0; *c && n < most; n++) {
        int length = utf8_length(c);
        switch (length ? *c : 0) {
        case 0: fputc('?', out); length = 1; break;
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&apos;", out); break;
        default:
            if (*c < 0x20)
                fputc(' ', out);
            else
                fwrite(c, 1, (size_t)length, out);
        }
        c += length;
    }
    if (*c)
        fputs("...", out);
}

/* The axis: from 0 to a round step times the tick count, holding max. */
static void axis(double max, double *top, double *step)
{
    if (!(max > 0))
        max = 1;
    double raw = max / 5, power = pow(10, floor(log10(raw))), fraction = raw / power;
    *step = (fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10) * power;
    *top = ceil(max / *step) * *step;
}

static double panel_max(const chart_panel *p)
{
    double max = 0;
    for (int i = 0; i < p->row_count; i++) {
        for (int s = 0; s < p->series_count; s++)
            max = fmax(max, p->rows[i].values[s]);
        max = fmax(max, p->rows[i].mark);
    }
    for (int i = 0; i < p->reference_count; i++)
        max = fmax(max, p->references[i].value);
    return max;
}

static int label_px(void)
{
    size_t longest = 8;
    for (int i = 0; i < chart.panel_count; i++)
        for (int r = 0; r < chart.panels[i].row_count; r++) {
            size_t n = strlen(chart.panels[i].rows[r].label);
            longest = n > longest ? n : longest;
        }
    if (longest > LABEL_CHARS + 3)
        longest = LABEL_CHARS + 3;
    return (int)(longest * CHAR_PX) + 16;
}

static int row_px(const chart_panel *p)
{
    return p->series_count * BAR_PX + ROW_GAP_PX;
}

/* The legend under the title: the named series' swatches, the references, the mark. */
static void draw_legend(FILE *out, const chart_panel *p, int y)
{
    int x = 10;
    for (int s = 0; p->named && s < p->series_count; s++) {
        fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>", x,
                y - 9, palette[s]);
        fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"legend\">", x + 14, y);
        put_text(out, p->series[s], 40);
        fputs("</text>\n", out);
        x += 24 + (int)(strlen(p->series[s]) * 6.6);
    }
    for (int i = 0; i < p->reference_count; i++) {
        fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
                     "class=\"reference\"/>",
                x, y - 4, x + 18, y - 4, reference_colour(i));
        fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"legend\">", x + 22, y);
        put_text(out, p->references[i].label, 60);
        fprintf(out, " %.1f ", p->references[i].value);
        put_text(out, p->unit, 20);
        fputs("</text>\n", out);
        x += 120 + (int)((strlen(p->references[i].label) + strlen(p->unit)) * 6.6);
    }
    int marked = 0;
    for (int r = 0; r < p->row_count; r++)
        marked |= p->rows[r].mark > 0;
    if (marked) {
        fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"mark\"/>"
                     "<text x=\"%d\" y=\"%d\" class=\"legend\">",
                x + 4, y - 10, x + 4, y + 1, x + 12, y);
        put_text(out, p->mark_label ? p->mark_label : "the write-up's figure", 80);
        fputs("</text>\n", out);
    }
}

static void draw_row(FILE *out, const chart_panel *p, const chart_row *r, int y, int x0,
                     double px_per_unit)
{
    fputs("<g class=\"row\"><title>", out);
    put_text(out, r->label, 4096);
    fputs("</title>\n", out);
    fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"label\">", x0 - 8,
            y + row_px(p) / 2 + 1);
    put_text(out, r->label, LABEL_CHARS);
    fputs("</text>\n", out);
    for (int s = 0; s < p->series_count; s++) {
        int top = y + s * BAR_PX;
        double width = r->values[s] * px_per_unit;
        fprintf(out, "<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
                     "fill=\"%s\"/>",
                x0, top, width, BAR_PX - 1, palette[s]);
        fprintf(out, "<text x=\"%.1f\" y=\"%d\" class=\"value\">%.1f</text>\n",
                x0 + width + 4, top + BAR_PX - 2, r->values[s]);
    }
    if (r->mark > 0) {
        double x = x0 + r->mark * px_per_unit;
        fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"mark\"/>\n", x,
                y - 1, x, y + p->series_count * BAR_PX);
    }
    fputs("</g>\n", out);
}

/* One panel from y; returns the y below it. */
static int draw_panel(FILE *out, const chart_panel *p, int y, int x0)
{
    double top, step;
    axis(panel_max(p), &top, &step);
    const int x1 = WIDTH - VALUE_PX;
    const double px_per_unit = (x1 - x0) / top;
    fputs("<g class=\"panel\">\n<text x=\"10\" y=\"", out);
    fprintf(out, "%d\" class=\"title\">", y + 14);
    put_text(out, p->title, 160);
    fputs("</text>\n", out);
    y += 22;
    if (p->named || p->reference_count) {
        draw_legend(out, p, y + 10);
        y += 18;
    }
    const int rows_top = y + 4, rows_bottom = rows_top + p->row_count * row_px(p);
    for (double t = 0; t <= top * (1 + 1e-9); t += step) {
        double x = x0 + t * px_per_unit;
        fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"grid\"/>"
                     "<text x=\"%.1f\" y=\"%d\" class=\"tick\">%g</text>\n",
                x, rows_top, x, rows_bottom, x, rows_bottom + 12, t);
    }
    fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"unit\">", x1 + 22, rows_bottom + 12);
    put_text(out, p->unit, 20);
    fputs("</text>\n", out);
    for (int r = 0; r < p->row_count; r++)
        draw_row(out, p, &p->rows[r], rows_top + r * row_px(p) + ROW_GAP_PX / 2, x0,
                 px_per_unit);
    for (int i = 0; i < p->reference_count; i++) {
        double x = x0 + p->references[i].value * px_per_unit;
        fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" "
                     "class=\"reference\"/>\n",
                x, rows_top - 2, x, rows_bottom, reference_colour(i));
    }
    fputs("</g>\n", out);
    return rows_bottom + 34;
}

static int total_height(void)
{
    int height = 40;
    for (int i = 0; i < chart.panel_count; i++) {
        const chart_panel *p = &chart.panels[i];
        height += 22 + (p->named || p->reference_count ? 18 : 0) + 4 +
                  p->row_count * row_px(p) + 34;
    }
    return height;
}

static void draw(FILE *out)
{
    const int height = total_height(), x0 = label_px();
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                 "viewBox=\"0 0 %d %d\">\n",
            WIDTH, height, WIDTH, height);
    fputs("<style>\n"
          "text { font-family: sans-serif; font-size: 11px; fill: #222; }\n"
          ".title { font-size: 14px; font-weight: bold; }\n"
          ".label { font-family: monospace; text-anchor: end; dominant-baseline: middle; }\n"
          ".value, .tick { font-size: 10px; fill: #444; }\n"
          ".tick { text-anchor: middle; }\n"
          ".grid { stroke: #ddd; stroke-width: 1; }\n"
          ".unit { font-size: 10px; fill: #444; }\n"
          ".reference { stroke-width: 2; stroke-dasharray: 6 3; }\n"
          ".mark { stroke: #222; stroke-width: 2; }\n"
          "</style>\n"
          "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
          out);
    fputs("<text x=\"10\" y=\"20\" class=\"title\">", out);
    put_text(out, chart.heading, (WIDTH - 20) / 10); /* 14px bold: under 10px a character */
    fputs("</text>\n", out);
    int y = 36;
    for (int i = 0; i < chart.panel_count; i++)
        y = draw_panel(out, &chart.panels[i], y, x0);
    fputs("</svg>\n", out);
}

static void release(void)
{
    for (int i = 0; i < chart.panel_count; i++) {
        chart_panel *p = &chart.panels[i];
        free(p->title);
        free(p->unit);
        free(p->mark_label);
        for (int s = 0; s < p->series_count; s++)
            free(p->series[s]);
        for (int r = 0; r < p->row_count; r++)
            free(p->rows[r].label);
        for (int r = 0; r < p->reference_count; r++)
            free(p->references[r].label);
        free(p->rows);
    }
    free(chart.panels);
    if (chart.file) { /* not written: nothing is left behind */
        fclose(chart.file);
        unlink(chart.temp);
    }
    free(chart.temp);
    free(chart.path);
    free(chart.heading);
    memset(&chart, 0, sizeof chart);
}

/* Draws into the temp file opened with the chart and renames it to the path. */
static int write_file(void)
{
    FILE *out = chart.file;
    chart.file = NULL;
    errno = 0;
    draw(out);
    int failed = ferror(out), error = 0;
    if (fclose(out) != 0 || failed)
        error = errno ? errno : EIO;
    else if (rename(chart.temp, chart.path) != 0)
        error = errno;
    if (error) {
        fprintf(stderr, "ptxjit: cannot write the chart %s: %s; check the file system's free "
                        "space and the directory's permissions\n",
                chart.path, strerror(error));
        unlink(chart.temp);
        return CLI_FAIL;
    }
    return CLI_OK;
}

int cli_chart_rows(void)
{
    int rows = 0;
    for (int i = 0; i < chart.panel_count; i++)
        rows += chart.panels[i].row_count;
    return rows;
}

void cli_chart_abandon(void)
{
    release();
}

int cli_chart_close(void)
{
    if (!chart.active)
        return CLI_OK;
    int rows = cli_chart_rows();
    int code;
    if (chart.failed) {
        fprintf(stderr, "ptxjit: out of memory drawing the chart; %s not written\n", chart.path);
        code = CLI_FAIL;
    } else if (!rows) {
        fprintf(stderr, "ptxjit: the bench printed no row to draw; %s not written\n", chart.path);
        code = CLI_FAIL;
    } else {
        code = write_file();
    }
    release();
    return code;
}
