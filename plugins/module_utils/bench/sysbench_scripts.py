# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scripts the sysbench Job runs (a ConfigMap mounted at /etc/storageperf): the shell that waits for the database,
prepares the tables and runs each test between markers, the Lua wrapper whose report hook prints sysbench's JSON
report (bench/sysbench_output.py reads it), and the ping that says when the database accepts connections."""


RUN_SH = r"""# storageperf.k8s: wait for the database, prepare the tables, run each test; one pod log for all of them.
# Environment: DB_HOST DB_PORT DB_USER DB_NAME MYSQL_PWD (from the Secret) TABLES TABLE_SIZE THREADS TIME WARMUP
# PERCENTILE TESTS (space separated) WAIT (seconds). Every test's output sits between
# "### storageperf-begin <test> ###" and "### storageperf-end <test> <exit code> ###".
w=/etc/storageperf/storageperf_sysbench.lua
set -- --db-driver=mysql --mysql-host="$DB_HOST" --mysql-port="$DB_PORT" --mysql-user="$DB_USER" \
  --mysql-password="$MYSQL_PWD" --mysql-db="$DB_NAME" --tables="$TABLES" --table-size="$TABLE_SIZE"
n=0
until sysbench /etc/storageperf/storageperf_ping.lua "$@" ping >/dev/null 2>&1; do
  n=$((n + 1))
  if [ "$n" -ge "$WAIT" ]; then
    echo "storageperf: the database at $DB_HOST:$DB_PORT did not accept connections within $WAIT s"
    sysbench /etc/storageperf/storageperf_ping.lua "$@" ping 2>&1 | tail -3
    exit 1
  fi
  sleep 1
done
first=${TESTS%% *}
echo "### storageperf-begin prepare ###"
p=$TABLES; [ "$p" -gt 8 ] && p=8
STORAGEPERF_SYSBENCH_TEST=$first sysbench "$w" "$@" --threads="$p" prepare
rc=$?
echo "### storageperf-end prepare $rc ###"
[ "$rc" -eq 0 ] || exit "$rc"
failed=0
for t in $TESTS; do
  if [ "$WARMUP" -gt 0 ]; then
    # sysbench 1.0 has no --warmup-time: a run whose figures are thrown away warms the buffer pool instead
    echo "storageperf: warming up with $t for $WARMUP s"
    STORAGEPERF_SYSBENCH_TEST=$t sysbench "$w" "$@" --threads="$THREADS" --time="$WARMUP" run >/dev/null 2>&1
  fi
  echo "### storageperf-begin $t ###"
  STORAGEPERF_SYSBENCH_TEST=$t sysbench "$w" "$@" --threads="$THREADS" --time="$TIME" \
    --percentile="$PERCENTILE" --histogram=on run
  rc=$?
  echo "### storageperf-end $t $rc ###"
  [ "$rc" -eq 0 ] || failed=$rc
done
exit "$failed"
"""

WRAPPER_LUA = r"""-- storageperf.k8s: run one of sysbench's tests and report machine-readable results.
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
"""

PING_LUA = r"""-- storageperf.k8s: `sysbench storageperf_ping.lua --db-driver=mysql <connection options> ping` exits 0 once the
-- database accepts a connection (a pod can be Running before mysqld listens), non-zero otherwise.
sysbench.cmdline.commands = {
  ping = {function()
    local con = sysbench.sql.driver():connect()
    con:disconnect()
    print("storageperf: database is up")
  end}
}
"""

# ConfigMap key -> script, as the shell calls them
CONFIGMAP = {"storageperf_sysbench.lua": WRAPPER_LUA, "storageperf_ping.lua": PING_LUA}
