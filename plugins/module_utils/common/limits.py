# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The maximum of every size and count a user can give, and why: one table for modules and roles.

Ansible's argument specs (module and role) check types but have no maximum, so a typo such as
volumes=100000000 used to start a benchmark that built a hundred million names. Each maximum below comes
from the real system it protects (docs/limits.md lists them with their sources); minimums stay with the
checks that already name them (volumes must be at least 1 ...).

- modules: StoragePerfModule(limits={option: LIMIT}) refuses a value above its maximum before run();
- roles: their first task asserts `{var: value} | storageperf.k8s.limit_problems` is empty, through
  ROLE_VARIABLES below, before anything is written.

tests/unit/plugins/module_utils/test_limits.py checks that every int, float and size option of the modules
and roles has a maximum here and that its documentation states it.
"""
from __future__ import annotations

import re
from typing import Any, Mapping


class Limit:
    """The largest value an option may take: a number, a quantity of bytes (`size`) or a list length."""

    __slots__ = ("maximum", "why", "kind", "each")

    def __init__(self, maximum: float, why: str, kind: str = "number", each: Limit | None = None) -> None:
        self.maximum = maximum
        self.why = why
        self.kind = kind  # number | size (a Kubernetes quantity, in bytes) | fio_size (10G = 10 GiB) | list
        self.each = each  # list: the Limit of every element

    def shown(self) -> str:
        """The maximum as the docs write it (5000, 100Ti)."""
        return _bytes_text(self.maximum) if self.kind in ("size", "fio_size") else str(self.maximum)

    def problem(self, name: str, value: Any) -> str | None:
        """None when `value` is within the maximum (or is not a number: the type checks report that)."""
        if value is None or isinstance(value, bool):
            return None
        if self.kind == "list":
            items = value.split(",") if isinstance(value, str) else value
            if not isinstance(items, (list, tuple)):
                return None
            if len(items) > self.maximum:
                return ("%s has %d entries, more than its maximum %d (%s): give at most %d"
                        % (name, len(items), self.maximum, self.why, self.maximum))
            for item in items:
                found = self.each.problem("%s entry" % name, item) if self.each else None
                if found:
                    return found
            return None
        number = parse_bytes(value, fio=self.kind == "fio_size") if self.kind in ("size", "fio_size") else _number(value)
        if number is None or number <= self.maximum:
            return None
        return ("%s=%s is above its maximum %s (%s): give at most %s"
                % (name, value if not isinstance(value, str) else value.strip(), self.shown(), self.why, self.shown()))


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)):
        return value
    try:
        return float(str(value).strip())
    except ValueError:
        return None


# Kubernetes quantities (1Gi, 500M, 1e3) and fio sizes (10G, 256m, 4k: fio counts k/m/g in 1024s)
_SIZE = re.compile(r"^\s*(\d+\.?\d*|\.\d+)\s*([kKmMgGtTpPeE]i?[bB]?|[eE][+-]?\d+)?\s*$")
_POWERS = "kmgtpe"


def parse_bytes(value: Any, fio: bool = False) -> float | None:
    """Bytes of a Kubernetes quantity or fio size; None for anything else (a % of a device, bad text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    m = _SIZE.match(str(value))
    if not m:
        return None
    number, suffix = float(m.group(1)), m.group(2) or ""
    if suffix[:1] in "eE" and suffix[1:2] not in ("", "i", "b", "B"):
        return number * 10 ** int(suffix[1:])
    if not suffix:
        return number
    power = _POWERS.index(suffix[0].lower()) + 1
    binary = fio or suffix[1:2] == "i"
    return number * ((1024 if binary else 1000) ** power)


def _bytes_text(n: float) -> str:
    for unit, power in (("Pi", 5), ("Ti", 4), ("Gi", 3), ("Mi", 2), ("Ki", 1)):
        if n >= 1024 ** power and n % (1024 ** power) == 0:
            return "%d%s" % (n // 1024 ** power, unit)
    return str(n)


TI = 1024 ** 4
DAY = 86400

# --- what a benchmark creates ---------------------------------------------------------------------------
VOLUMES = Limit(5000, "5x seed 002's largest run of 1000; the run makes as many clones and snapshots again, and "
                      "each ontap-nas volume is a FlexVol, of which an ONTAP node holds 1000 to 2500")
SWEEP = Limit(10, "sizes of one sweep, each a whole lifecycle run", kind="list", each=VOLUMES)
DISKS_PER_NODE = Limit(64, "the most data disks an ECS instance takes (DescribeInstanceTypes DiskQuantity; "
                           "ecs.g7se.16xlarge 56) and above any CSINode attach limit of the clouds' disk drivers")
PODS_PER_NODE = Limit(64, "every pod mounts at least one disk and a node takes at most 64")
ONTAP_VOLUME_SIZE = Limit(100 * TI, "ONTAP's largest FlexVol on most platforms (300Ti needs large-volume "
                                    "support); Trident makes one FlexVol or LUN per ontap-nas/-san volume",
                          kind="size")
CLOUD_DISK_SIZE = Limit(64 * TI, "Alibaba Cloud's largest ESSD / cloud_auto disk, 65536 GiB", kind="size")
REPEAT = Limit(20, "repetitions of a variant; 20 give a stable median, more only lengthen the run")
# --- how hard a run or a tuning pushes the API server ---------------------------------------------------
CONCURRENCY = Limit(200, "kube-apiserver's default --max-mutating-requests-inflight; more only queue or get 429")
WORKER_THREADS = Limit(500, "5x the CSI sidecars' largest default (csi-provisioner 100); each worker is a "
                            "goroutine holding API requests")
KUBE_API_QPS = Limit(5000, "50x Trident's own default of 100 and above what the API server's 600 requests in "
                           "flight serve at sub-second latency")
KUBE_API_BURST = Limit(10000, "twice the largest kube_api_qps, client-go's usual burst ratio")
WARNINGS = Limit(100, "Warning events of one object; Kubernetes aggregates repeated events")
ALIBABA_CONCURRENCY = Limit(32, "Alibaba Cloud throttles an account's calls per API; more only adds Throttling "
                                "retries")
API_RETRIES = Limit(20, "attempts per request; with capped backoff 20 already wait several minutes")
DISK_WARNING = Limit(64, "the most data disks an ECS instance takes")
# --- how long to wait ----------------------------------------------------------------------------------
TIMEOUT = Limit(DAY, "a day; a benchmark step or rollout that takes longer has failed")
REQUEST_TIMEOUT = Limit(3600, "an hour for one API request")
UNREACHABLE_AFTER = Limit(600, "ten minutes of a server answering nothing")
INTERVAL = Limit(600, "ten minutes between two progress lines or polls")
# --- fio and sysbench (seed 001) -----------------------------------------------------------------------
PVC_SIZE = Limit(64 * TI, "Alibaba Cloud's largest disk (65536 GiB); a PMEM node has at most a few TiB",
                 kind="size")
FIO_SIZE = Limit(64 * TI, "the file fio writes must fit the PVC, at most 64Ti", kind="fio_size")
FIO_JOBS = Limit(16, "fio jobs run one after another in one pod; the seed runs 3", kind="list")
STORAGE_CLASSES = Limit(8, "StorageClasses measured side by side, one after another; the seed compares 2",
                        kind="list")
SYSBENCH_TESTS = Limit(10, "sysbench tests run one after another; the seed runs 2", kind="list")
SYSBENCH_TABLES = Limit(1000, "sysbench prepares every table before the run; the seed uses 32")
SYSBENCH_TABLE_SIZE = Limit(100000000, "rows per table; 32 tables of 100 million rows are about 700 GB")
SYSBENCH_THREADS = Limit(1000, "one MySQL connection each; the seed runs 150 against max_connections 151")
PERCENTILE = Limit(99, "sysbench's --percentile takes 1 to 99")
PORT = Limit(65535, "the largest TCP port")
# --- GlusterFS (seed 003) and ONTAP --------------------------------------------------------------------
GLUSTER_VOLUMES = Limit(5000, "2.5x the seed's 2000 volumes, where glusterd's handshake stalled; Heketi caps a "
                              "cluster at 1000")
GLUSTER_START_INDEX = Limit(1000000, "volume names stay short (<prefix><index>)")
GLUSTER_REPLICA = Limit(16, "bricks per replica set; GlusterFS supports replica 2 and 3 (and arbiter)")
GLUSTER_PARALLEL = Limit(32, "gluster CLI calls at once; glusterd serialises volume operations behind its lock")
GLUSTER_VOLUME_COUNTS = Limit(10, "points of one handshake benchmark", kind="list", each=GLUSTER_VOLUMES)
GLUSTER_PEERS = Limit(128, "peers of one trusted storage pool")
MAX_BRICKS_PER_PROCESS = Limit(1000, "4x glusterd's default of 250 bricks per brick process")
VOL_COUNT_PER_THREAD = Limit(200, "glusterd.vol_count_per_thread takes 5 to 200")
ONTAP_PAGE = Limit(10000, "records per ONTAP page (max_records); larger pages only slow each answer")
# --- reports -------------------------------------------------------------------------------------------
HISTORY_PVALUE = Limit(0.5, "a change point's significance; past one half the t-test calls chance a change")
MIN_EFFECT_PCT = Limit(1000, "a step eleven times as slow; the twin's worst fault made one about five times")
BASELINE_RUNS = Limit(50, "the option is ignored now (history finds change points), but still bounded")
EXPECTED_SPEEDUP = Limit(100, "the seeds' largest gain is 8.4x; a speedup past 100 is a typo")
GAIN_FRACTION = Limit(1, "a share of the expected gain; 1 asks for all of it")
CONFIDENCE = Limit(0.999, "past 99.9 percent a probe's few repetitions can never show a gain")
TOLERANCE_PCT = Limit(1000, "a step ten times slower than its baseline is broken, not slower")
ROUNDS = Limit(20, "rounds of one probe before and after a change; a gain 20 rounds have not shown is not there")
WARMUP = Limit(10, "a warm-up longer than that is a change that has not settled; wait for it instead")
PERCENT = Limit(100, "a share in percent")
FIRST_WAVE = Limit(1000, "waves of one rollout: a fleet of 1000 clusters one at a time")
BASELINE_AGE = Limit(7 * DAY, "a week; an older baseline no longer stands for the cluster")
LEASE_TTL = Limit(3600, "an hour: the lease of a killed run keeps its rollout from a rerun at most that long")

# Role variables -> their Limit (the filter storageperf.k8s.limit_problems reads this table)
ROLE_VARIABLES = {
    "ack_parallel_attach_concurrency": ALIBABA_CONCURRENCY,
    "ack_parallel_attach_wait_timeout": TIMEOUT,
    "ack_parallel_attach_disk_quantity_warning": DISK_WARNING,
    "bench_attach_stress_replicas": PODS_PER_NODE,
    "bench_attach_stress_volumes_per_pod": DISKS_PER_NODE,
    "bench_attach_stress_size": CLOUD_DISK_SIZE,
    "bench_attach_stress_disk_limit": DISKS_PER_NODE,
    "bench_attach_stress_repeat": REPEAT,
    "bench_attach_stress_step_timeout": TIMEOUT,
    "bench_attach_stress_give_up_after_warnings": WARNINGS,
    "bench_attach_stress_cleanup_timeout": TIMEOUT,
    "bench_csi_lifecycle_volumes": VOLUMES,
    "bench_csi_lifecycle_sweep": SWEEP,
    "bench_csi_lifecycle_pvcs_per_pod": DISKS_PER_NODE,
    "bench_csi_lifecycle_size": ONTAP_VOLUME_SIZE,
    "bench_csi_lifecycle_snapshot_worker_threads": WORKER_THREADS,
    "bench_csi_lifecycle_snapshot_kube_api_qps": KUBE_API_QPS,
    "bench_csi_lifecycle_snapshot_kube_api_burst": KUBE_API_BURST,
    "bench_csi_lifecycle_repeat": REPEAT,
    "bench_csi_lifecycle_concurrency": CONCURRENCY,
    "bench_csi_lifecycle_step_timeout": TIMEOUT,
    "bench_csi_lifecycle_give_up_after_warnings": WARNINGS,
    "bench_csi_lifecycle_cleanup_timeout": TIMEOUT,
    "bench_fio_storage_classes": STORAGE_CLASSES,
    "bench_fio_jobs": FIO_JOBS,
    "bench_fio_size": FIO_SIZE,
    "bench_fio_runtime": TIMEOUT,
    "bench_fio_pvc_size": PVC_SIZE,
    "bench_fio_timeout": TIMEOUT,
    "bench_fio_cleanup_timeout": TIMEOUT,
    "bench_sysbench_storage_classes": STORAGE_CLASSES,
    "bench_sysbench_tests": SYSBENCH_TESTS,
    "bench_sysbench_tables": SYSBENCH_TABLES,
    "bench_sysbench_table_size": SYSBENCH_TABLE_SIZE,
    "bench_sysbench_threads": SYSBENCH_THREADS,
    "bench_sysbench_time": TIMEOUT,
    "bench_sysbench_warmup_time": TIMEOUT,
    "bench_sysbench_percentile": PERCENTILE,
    "bench_sysbench_db_port": PORT,
    "bench_sysbench_pvc_size": PVC_SIZE,
    "bench_sysbench_db_timeout": TIMEOUT,
    "bench_sysbench_timeout": TIMEOUT,
    "bench_sysbench_cleanup_timeout": TIMEOUT,
    "gluster_volume_scale_count": GLUSTER_VOLUMES,
    "gluster_volume_scale_replica": GLUSTER_REPLICA,
    "gluster_volume_scale_parallel": GLUSTER_PARALLEL,
    "gluster_volume_scale_max_bricks_per_process": MAX_BRICKS_PER_PROCESS,
    "gluster_volume_scale_vol_count_per_thread": VOL_COUNT_PER_THREAD,
    "gluster_volume_scale_bench_volume_counts": GLUSTER_VOLUME_COUNTS,
    "gluster_volume_scale_bench_timeout": TIMEOUT,
    "gluster_volume_scale_bench_poll_interval": INTERVAL,
    "rollout_min_gain_fraction": GAIN_FRACTION,
    "rollout_confidence": CONFIDENCE,
    "rollout_tolerance_pct": TOLERANCE_PCT,
    "rollout_drift_pct": PERCENT,
    "rollout_step_timeout": TIMEOUT,
    "snapshot_controller_tuning_worker_threads": WORKER_THREADS,
    "snapshot_controller_tuning_kube_api_qps": KUBE_API_QPS,
    "snapshot_controller_tuning_kube_api_burst": KUBE_API_BURST,
    "snapshot_controller_tuning_wait_timeout": TIMEOUT,
    "trident_concurrency_k8s_api_qps": KUBE_API_QPS,
    "trident_concurrency_wait_timeout": TIMEOUT,
}

# The connection options StoragePerfModule adds (auth="k8s" / "alibaba")
AUTH_OPTIONS = {
    "request_timeout": REQUEST_TIMEOUT,
    "api_retries": API_RETRIES,
    "api_unreachable_after": UNREACHABLE_AFTER,
    "api_timeout": REQUEST_TIMEOUT,
    "concurrency": ALIBABA_CONCURRENCY,
}


def problems(values: Mapping[str, Any], limits: Mapping[str, Limit]) -> list[str]:
    """What is above its maximum in `values` ({name: value}), one message per name, by `limits` ({name: Limit})."""
    out = []
    for name in sorted(values):
        limit = limits.get(name)
        found = limit.problem(name, values[name]) if limit else None
        if found:
            out.append(found)
    return out


def param_problems(params: Mapping[str, Any], limits: Mapping[str, Limit]) -> list[str]:
    """problems() of module parameters; `a.b` names suboption b of the dict option a, or of every dict in the list
    option a."""
    values = {}
    for name in limits:
        head, _, field = name.partition(".")
        if not field:
            values[name] = params.get(name)
            continue
        if isinstance(params.get(head), dict):
            values[name] = params[head].get(field)
            continue
        for i, item in enumerate(params.get(head) or ()):
            if isinstance(item, dict):
                values["%s[%d].%s" % (head, i, field)] = item.get(field)
    return problems(values, {k: limits[_unindexed(k)] for k in values})


def _unindexed(name: str) -> str:
    return re.sub(r"\[\d+\]", "", name)


def role_problems(values: Mapping[str, Any]) -> list[str]:
    """problems() of role variables; a name missing from ROLE_VARIABLES is a mistake in the role."""
    unknown = sorted(set(values) - set(ROLE_VARIABLES))
    if unknown:
        raise KeyError("no maximum declared for %s in module_utils/common/limits.py" % ", ".join(unknown))
    return problems(values, ROLE_VARIABLES)
