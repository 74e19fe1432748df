# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The systems a module can authenticate to, registered by the systems themselves.

common/ stands below every system package and imports none of them: k8s/client.py, ack/aliyun.py and
trident/ontap.py call register() when they are imported, giving their connection options and how to build a client
from a module.
A module with auth="k8s" therefore imports k8s/client.py (it does anyway to speak to Kubernetes), which is
also what makes Ansible ship that file with the module; a module that speaks to one system never loads the
other's code or SDK.
"""
from __future__ import annotations

from typing import Any, Callable

SYSTEMS = ("k8s", "alibaba", "ontap")
HOMES = {"k8s": "plugins/module_utils/k8s/client.py", "alibaba": "plugins/module_utils/ack/aliyun.py",
         "ontap": "plugins/module_utils/trident/ontap.py"}

_REGISTERED = {}  # type: dict  # system -> (auth argument spec, client factory)


def register(system: str, arg_spec: dict[str, Any], client_from_module: Callable[..., Any]) -> None:
    """Called once by a system's client module at import: its auth argument spec and its client factory."""
    if system not in SYSTEMS:
        raise ValueError("auth system %r is not one of %s" % (system, ", ".join(SYSTEMS)))
    _REGISTERED[system] = (arg_spec, client_from_module)


def system(name: str) -> tuple[dict[str, Any], Callable[..., Any]]:
    """(argument spec, client factory) of a system; ValueError naming the fix when it is unknown or not imported."""
    if name not in SYSTEMS:
        raise ValueError("auth must name one of %s, not %r" % (", ".join(SYSTEMS), name))
    if name not in _REGISTERED:
        raise ValueError("auth=%r: the module must import %s, which registers its connection options and client"
                         % (name, HOMES[name]))
    return _REGISTERED[name]
