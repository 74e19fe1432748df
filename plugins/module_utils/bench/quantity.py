# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes resource quantities (k8s.io/apimachinery resource.Quantity), checked before any write.

Grammar (apimachinery pkg/api/resource/quantity.go):
  <quantity> ::= <signedNumber><suffix>
  <number>   ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
  <suffix>   ::= Ki | Mi | Gi | Ti | Pi | Ei | m | "" | k | M | G | T | P | E | (e|E)<signedNumber>
"""
from __future__ import annotations

import re

_QUANTITY = re.compile(r"^([+-]?)(\d+\.?\d*|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?\d+)?$")


def quantity_problem(field: str, value: object, positive: bool = True) -> str | None:
    """None when value is a Kubernetes quantity (and > 0 when positive), else what is wrong and the fix."""
    text = str(value if value is not None else "").strip()
    m = _QUANTITY.match(text)
    if not m:
        return ("%s %r is not a Kubernetes quantity: give a number with an optional suffix, e.g. 1Gi, 500Mi, 20G "
                "(binary Ki Mi Gi Ti Pi Ei, decimal k M G T P E)" % (field, value))
    if positive and (m.group(1) == "-" or not re.search(r"[1-9]", m.group(2))):
        return "%s %r must be larger than 0, e.g. 1Gi" % (field, value)
    return None
