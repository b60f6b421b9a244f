"""The SDK's host API module name, served by wsemu (runtime/python/README.md)."""

from wsemu.sdk_runtime import MemcpyDataType, MemcpyOrder, SdkRuntime  # noqa: F401
from wsemu.sdk_layout import (  # noqa: F401
    Color, Edge, Route, RoutingPosition, SdkLayout, SdkTarget, SimfabConfig, get_edge_routing, get_platform)
from wsemu.errors import Error as SdkRuntimeError  # noqa: F401

__all__ = ["SdkRuntime", "MemcpyDataType", "MemcpyOrder", "SdkLayout", "SdkTarget", "SimfabConfig", "get_platform",
           "Color", "Edge", "Route", "RoutingPosition", "get_edge_routing"]
