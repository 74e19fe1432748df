"""A ServiceAccount of its own for a conformance test: its namespace, its token, and clients that use the token."""
from __future__ import annotations

import uuid

from kubernetes import client, config

from tests.support.twin import Twin


class Bot:
    """A ServiceAccount in a namespace of its own, its token, and kubectl / Python clients that use it."""

    def __init__(self, twin: Twin, tmp_path, name: str = "bot"):
        self.twin = twin
        self.ns = f"r-{uuid.uuid4().hex[:8]}"
        self.name = name
        self.user = f"system:serviceaccount:{self.ns}:{name}"
        twin.kubectl("create", "namespace", self.ns)
        twin.kubectl("-n", self.ns, "create", "serviceaccount", name)
        self.token = twin.kubectl("-n", self.ns, "create", "token", name).stdout.strip()
        self.kubeconfig = twin.kubeconfig_for(self.token, tmp_path / f"{name}.kubeconfig")

    def kubectl(self, *args: str, check: bool = False):
        return self.twin.kubectl("-n", self.ns, *args, check=check, kubeconfig=self.kubeconfig)

    def api(self) -> client.ApiClient:
        return config.new_client_from_config(config_file=str(self.kubeconfig))

    @property
    def groups(self) -> str:
        """The token's groups as the escalation message writes them (Go's %q of a []string)."""
        return f'["system:serviceaccounts" "system:serviceaccounts:{self.ns}" "system:authenticated"]'

    def grant(self, name: str, *rule: str) -> None:
        """A Role in the bot's namespace with the rule (kubectl create role flags), bound to the bot by the admin."""
        self.twin.kubectl("-n", self.ns, "create", "role", name, *rule)
        self.twin.kubectl("-n", self.ns, "create", "rolebinding", name, f"--role={name}",
                          f"--serviceaccount={self.ns}:{self.name}")
