/* chart.h — `ptxjit bench ... --svg FILE`: the tables a bench prints, drawn as one standalone
 * SVG of horizontal bar charts, one panel a table, one bar a row and series (stacked down the
 * file in the order printed). A bench calls these beside the printf of each table; where the
 * command line gave no --svg (cli_chart_open not called) every call does nothing, so the benches
 * call them unconditionally. One chart per process: the CLI runs one bench. */
#ifndef PTXJIT_CLI_CHART_H
#define PTXJIT_CLI_CHART_H

#define CLI_CHART_SERIES_MAX 4

/* Starts collecting for path (written by cli_chart_close); heading: the chart's first line (the
 * command). CLI_OK, or CLI_USAGE after saying why (a second chart, no memory). */
int cli_chart_open(const char *path, const char *heading);
/* Whether a chart is being collected. */
int cli_chart_active(void);
/* A new panel: its title, the unit of its values ("GB/s"), and its series' names (NULL-ended,
 * at most CLI_CHART_SERIES_MAX; NULL: one series, not named in the legend). */
void cli_chart_table(const char *title, const char *unit, const char *const *series);
/* The legend of the current panel's row ticks (default: "the write-up's figure"). */
void cli_chart_mark_label(const char *label);
/* A vertical line across the current panel at value: the copy's bandwidth, a peer's speed. */
void cli_chart_reference(const char *label, double value);
/* A row of the current panel: its label and one value per series; mark > 0 draws a tick at
 * that value on the row (the write-up's figure for the same step). */
void cli_chart_row(const char *label, const double *values, double mark);
/* The one-series row. */
void cli_chart_bar(const char *label, double value, double mark);
/* The rows drawn so far, over every panel. */
int cli_chart_rows(void);
/* Ends the chart without writing anything (a bench that failed before its first row). */
void cli_chart_abandon(void);
/* Writes the file (atomically: a temp file renamed) and ends the chart. CLI_OK; CLI_FAIL after
 * saying why (nothing drawn, the file not writable). No chart open: CLI_OK. */
int cli_chart_close(void);

#endif
