# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Result documents of storageperf.k8s benchmarks: schema, statistics, comparison, rendering.

Import the submodules directly (``...report.document``, ``...report.render``); this package
file holds no code, so that importing one part never pulls in matplotlib or jsonschema.

The files stand on floors (FLOORS below, lowest first). A file imports only from its own floor and
the floors below it, and no two files import each other, even through a function-level import
(tests/unit/test_architecture.py reads this table and holds both rules; a new file goes on a floor):

model     the result and fleet documents, their schemas, and what finalize() stores in a result:
          stats (spreads, percentiles, and how a number is written), schema, fleet_schema,
          sweep (the sweep block; it takes summarize_variant as an argument, document imports it),
          document (build, finalize, read summaries, write, load)
analysis  figures derived from documents, as data: steps (one step summary's label, ratio and
          cell), metrics (what each metric is, which way is better), compare (speedups, headline,
          tolerance verdicts), warning_events, fleet (the fleet document built from many results),
          history (every run of a reports directory in time order, its series and regressions),
          changepoint (change points in a series: E-Divisive means with a t-test, Apache Otava's algorithm),
          metric_families (a result document as Prometheus metric families, as data), seed_figures (the
          seeds' measured step times, the one table of them, and which one a step repeats; a twin's time scale),
          parameters (figures against a step parameter: a row per variant and value, gluster's handshake table)
render    words and formats: tables (table models), parameter_table (parameters.py's rows as a table model),
          render (Markdown, HTML), charts (PNG), links (relative links between the pages of a reports directory),
          summary (the facts / set_stats dict: texts and Markdown table lines), verdict_text,
          junit, fleet_render, fleet_charts, history_render, history_charts, advice_render (a cluster's tuning
          advice as console lines, advice.md and advice.html)
io        s3_upload (a report directory into a bucket), s3_results (result documents out of one),
          metrics_export (metric families into metrics.prom and a Prometheus Pushgateway)
modules   modules (what the report modules do: the glue of the floors below)
"""

FLOORS = (
    ("model", ("stats", "schema", "fleet_schema", "sweep", "document")),
    ("analysis", ("steps", "metrics", "compare", "warning_events", "fleet", "changepoint", "history", "metric_families",
                  "seed_figures", "parameters")),
    ("render", ("tables", "parameter_table", "render", "links", "charts", "summary", "verdict_text", "junit", "fleet_render",
                "fleet_charts", "history_render", "history_charts", "advice_render")),
    ("io", ("s3_upload", "s3_results", "metrics_export")),
    ("modules", ("modules",)),
)
