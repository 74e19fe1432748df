"""Built-in kinds gathered one module per kind (issue 29): everything a kind brings, in its Kind (base.py).

The kinds that predate this package are still spread by concern (see twin/README.md); a new built-in kind is one
module here, listed in KINDS."""
from __future__ import annotations

from . import apiservice, cronjob, endpointslice, ingress, networkpolicy, replicationcontroller
from .base import Kind

KINDS: tuple[Kind, ...] = (replicationcontroller.KIND, cronjob.KIND, ingress.KIND, ingress.CLASS, networkpolicy.KIND,
                           endpointslice.KIND, apiservice.KIND)
BY_KIND: dict[str, Kind] = {k.kind: k for k in KINDS}
