-- storageperf.k8s: `sysbench storageperf_ping.lua --db-driver=mysql <connection options> ping` exits 0 once the
-- database accepts a connection (a pod can be Running before mysqld listens), non-zero otherwise.
sysbench.cmdline.commands = {
  ping = {function()
    local con = sysbench.sql.driver():connect()
    con:disconnect()
    print("storageperf: database is up")
  end}
}
