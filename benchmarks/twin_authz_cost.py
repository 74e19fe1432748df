"""What authorization adds to each API request of the twin, in process (no HTTP): authentication, request
attributes and the RBAC decision, for a cache hit (every request after the first of its kind) and a miss
(the first, or the first after any RBAC object changed), with B extra RoleBindings in the namespace.

    .venv/bin/python benchmarks/twin_authz_cost.py [--bindings 50] [--n 20000]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path
import sys

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from multidict import CIMultiDict  # noqa: E402

from twin.apiserver.auth import authorization  # noqa: E402
from twin.apiserver.auth.authentication import Authenticator  # noqa: E402
from twin.apiserver.http.requestinfo import request_info  # noqa: E402
from twin.store import Store  # noqa: E402

RBAC = "rbac.authorization.k8s.io"


def per_call_us(fn, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bindings", type=int, default=50, help="RoleBindings for other subjects in the namespace")
    ap.add_argument("--n", type=int, default=20000, help="calls per figure")
    a = ap.parse_args()
    store = Store()
    authorization.bootstrap(store)
    store.create(store.rt("", "v1", "namespaces"), None, {"metadata": {"name": "work"}})
    store.create(store.rt(RBAC, "v1", "roles"), "work", {"metadata": {"name": "r"}, "rules": [
        {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}]})
    for i in range(a.bindings):
        store.create(store.rt(RBAC, "v1", "rolebindings"), "work", {
            "metadata": {"name": f"b{i:04d}"}, "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "r"},
            "subjects": [{"kind": "User", "apiGroup": RBAC, "name": f"user-{i}"}]})
    authn = Authenticator(store, "admin-token")
    authz = authorization.Authorizer(store)
    headers = CIMultiDict({"Authorization": "Bearer admin-token"})
    path, query = "/api/v1/namespaces/work/configmaps/cm-1", {}

    def request() -> None:  # what ApiServer._authorize does for the admin token
        who = authn.authenticate(headers["Authorization"])
        attrs, resource = request_info("GET", path, query)
        authz.check(who, attrs, resource)

    def miss() -> None:
        authz.cache.clear()
        request()

    last = authorization.Identity(f"user-{a.bindings - 1}", ("system:authenticated",))
    attrs, _ = request_info("GET", path, query)

    def miss_last_binding() -> None:  # every binding visited: the worst case of a miss
        authz.cache.clear()
        authz.check(last, attrs)

    hit_us = per_call_us(request, a.n)
    miss_us = per_call_us(miss, max(1, a.n // 20))
    worst_us = per_call_us(miss_last_binding, max(1, a.n // 200))
    before = per_call_us(lambda: headers["Authorization"] == "Bearer admin-token", a.n)  # the former token check
    print(f"{a.bindings} RoleBindings in the namespace; per request: former token check {before:.2f} us, "
          f"authorization with a cached decision {hit_us:.2f} us, uncached {miss_us:.1f} us "
          f"(admin), uncached and allowed by the last RoleBinding {worst_us:.0f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
