"""Reading the gateway's tool results in tests, as a client would."""

from __future__ import annotations

from collections.abc import Mapping
import json
from typing import Any


def result_data(result: Mapping[str, Any]) -> Any:
    """A gateway result's data. The gateway's own results carry it once, as compact JSON text;
    a backend's structuredContent rides along only when it says more than its text. Notes the
    gateway adds (an offline device) follow the data as further text parts."""
    if "structuredContent" in result:
        return result["structuredContent"]
    return json.loads(result["content"][0]["text"])
