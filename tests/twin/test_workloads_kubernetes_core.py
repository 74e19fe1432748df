"""kubernetes.core's waiters (k8s wait, k8s_scale wait) accept the twin's workload status as a real cluster's."""
from __future__ import annotations

import textwrap

PLAYBOOK = textwrap.dedent("""\
    - hosts: localhost
      gather_facts: false
      module_defaults:
        group/kubernetes.core.k8s:
          kubeconfig: "{{ lookup('env', 'K8S_AUTH_KUBECONFIG') }}"
          namespace: default
      tasks:
        - name: statefulset with claims, waited for
          kubernetes.core.k8s:
            wait: true
            wait_timeout: 120
            wait_sleep: 1
            definition:
              apiVersion: apps/v1
              kind: StatefulSet
              metadata: {name: db}
              spec:
                replicas: 2
                podManagementPolicy: Parallel
                serviceName: db
                selector: {matchLabels: {app: db}}
                template:
                  metadata: {labels: {app: db}}
                  spec:
                    containers:
                      - {name: db, image: "busybox:1.36", command: [sleep, inf],
                         volumeMounts: [{name: data, mountPath: /var/lib/mysql}]}
                volumeClaimTemplates:
                  - metadata: {name: data}
                    spec:
                      accessModes: [ReadWriteOnce]
                      storageClassName: alicloud-disk-topology
                      resources: {requests: {storage: 1Gi}}
        - name: scaled through the scale subresource, waited for
          kubernetes.core.k8s_scale:
            api_version: apps/v1
            kind: StatefulSet
            name: db
            replicas: 4
            wait: true
            wait_timeout: 120
            wait_sleep: 1
        - name: deployment, waited for
          kubernetes.core.k8s:
            wait: true
            wait_timeout: 120
            wait_sleep: 1
            definition:
              apiVersion: apps/v1
              kind: Deployment
              metadata: {name: web}
              spec:
                replicas: 3
                selector: {matchLabels: {app: web}}
                template:
                  metadata: {labels: {app: web}}
                  spec: {containers: [{name: web, image: "nginx:1.25"}]}
    """)


def test_kubernetes_core_waits_for_statefulset_scale_and_deployment(twin, tmp_path):
    book = tmp_path / "workloads.yml"
    book.write_text(PLAYBOOK)
    run = twin.playbook(book)
    assert run.rc == 0, run.stdout + run.stderr

    sts = run.task("statefulset with claims")["result"]["result"]
    assert sts["status"]["readyReplicas"] == 2 and sts["status"]["currentRevision"] == sts["status"]["updateRevision"]
    scaled = twin.kubectl_json("get", "sts", "db")
    assert (scaled["spec"]["replicas"], scaled["status"]["readyReplicas"], scaled["status"]["updatedReplicas"]) == (4, 4, 4)
    assert sorted(p["metadata"]["name"] for p in twin.kubectl_json("get", "pvc", "-l", "app=db")["items"]) == \
        [f"data-db-{i}" for i in range(4)]
    dep = run.task("deployment, waited for")["result"]["result"]
    assert dep["status"]["availableReplicas"] == 3 and dep["status"]["observedGeneration"] == 1
