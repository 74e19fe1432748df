"""ReplicationController controller: the ReplicaSet controller on core/v1 ReplicationControllers.

Upstream runs the same code for both (pkg/controller/replication wraps pkg/controller/replicaset, converting each
ReplicationController to a ReplicaSet and back); only the selector differs, a plain label map here, which the pods'
controller references make irrelevant to which pods are owned. Status: replicas, fullyLabeledReplicas,
readyReplicas, availableReplicas, observedGeneration and the ReplicaFailure condition, as for a ReplicaSet.
"""
from __future__ import annotations

from .replicaset import ReplicaSetController


class ReplicationManager(ReplicaSetController):
    name = "replication-controller"
    owns = ("", "v1", "replicationcontrollers")
    owner_kind = "ReplicationController"
