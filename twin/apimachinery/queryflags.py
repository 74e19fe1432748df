"""Boolean query parameters (watch, follow, allowWatchBookmarks ...) as the apiserver decodes them.

runtime.Convert_Slice_string_To_bool: an absent parameter is false, "0" and "false" (in any case) are false, and
any other value, the empty string included, is true. Clients spell true differently: kubectl and the Python client
from 37 on send "true", the Python client before 37 sends "True" (str() of a bool), others "1".
"""
from __future__ import annotations

from typing import Any


def flag(query: Any, name: str) -> bool:
    """The first value of `name` in an aiohttp query (a MultiDict), decoded as the apiserver does."""
    values = query.getall(name, [])
    return bool(values) and values[0] != "0" and values[0].lower() != "false"
