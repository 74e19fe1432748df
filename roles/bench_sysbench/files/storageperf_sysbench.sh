# storageperf.k8s: wait for the database, prepare the tables, run each test; one pod log for all of them.
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
