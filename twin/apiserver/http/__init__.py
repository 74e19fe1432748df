"""HTTP serving as kube-apiserver does it: TLS, the request's authorization attributes, Accept and boolean query
parameters."""
