"""The SDK's host API module name, served by wsemu (runtime/python/README.md)."""

from wsemu.sdk_runtime import MemcpyDataType, MemcpyOrder, SdkRuntime  # noqa: F401
from wsemu.errors import Error as SdkRuntimeError  # noqa: F401

__all__ = ["SdkRuntime", "MemcpyDataType", "MemcpyOrder"]
