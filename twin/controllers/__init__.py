"""Controllers of the twin, each a watch-driven loop like its real counterpart.

CONTROLLER_MODULES lists "module:Class" entries that twin.fleet.cluster starts, in order.
Add one line per controller; keep the list free of logic.
"""
CONTROLLER_MODULES = [
    "garbage_collector:GarbageCollector",
    "namespace:NamespaceController",
    "serviceaccounts:ServiceAccountsController",
    "root_ca_publisher:RootCACertPublisher",
    "serviceaccount_tokens:TokensController",
    "apiservices:APIServiceRegistration",
    "statefulset:StatefulSetController",
    "daemonset:DaemonSetController",
    "deployment:DeploymentController",
    "replicaset:ReplicaSetController",
    "replicationcontroller:ReplicationManager",
    "job:JobController",
    "cronjob:CronJobController",
    "scheduler:Scheduler",
    "taint_eviction:TaintEvictionController",
    "kubelet:Kubelet",
    "csi_drivers:CSIDrivers",
    "trident:Trident",
    "pv_controller:PVController",
    "provisioner:ExternalProvisioner",
    "attach_detach:AttachDetachController",
    "snapshot:SnapshotController",
    "snapshot:CSISnapshotter",
]


def all_controllers() -> list[type]:
    import importlib

    out = []
    for entry in CONTROLLER_MODULES:
        mod, cls = entry.split(":")
        out.append(getattr(importlib.import_module(f"{__name__}.{mod}"), cls))
    return out
