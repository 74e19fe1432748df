"""The cluster twin: a local Kubernetes API server, storage controllers and cloud endpoints.

Test and demo infrastructure for storageperf.k8s; never shipped in the collection build.
"""
