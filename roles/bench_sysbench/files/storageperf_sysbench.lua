-- storageperf.k8s: run one of sysbench's tests and report machine-readable results.
--
-- sysbench /etc/storageperf/storageperf_sysbench.lua <sysbench options> prepare|run|cleanup
-- with STORAGEPERF_SYSBENCH_TEST=oltp_insert (or oltp_point_select, oltp_read_write ... any
-- script on sysbench's Lua path). The cumulative report is sysbench's own JSON report
-- (sysbench.report_json); one more line, {"storageperf": {...}}, adds what that report leaves
-- out: latency min/avg/max, the event count, the exact run time and the percentile asked for.
-- The storageperf.k8s.sysbench_summary filter reads both.
local test = os.getenv("STORAGEPERF_SYSBENCH_TEST")
if test == nil or test == "" then
  error("set STORAGEPERF_SYSBENCH_TEST to the sysbench test to run, for example oltp_insert")
end
require(test)

sysbench.hooks.report_cumulative = function(stat)
  sysbench.report_json(stat)
  io.write(string.format(
    '\n{"storageperf": {"test": "%s", "latency_min_ms": %.6f, "latency_avg_ms": %.6f, "latency_max_ms": %.6f, ' ..
    '"events": %u, "time_total": %.6f, "percentile": %s, "threads": %u}}\n',
    test, stat.latency_min * 1000, stat.latency_avg * 1000, stat.latency_max * 1000,
    stat.events, stat.time_total, sysbench.opt.percentile, sysbench.opt.threads))
end
