"""The SDK's sdk_utils module name, served by wsemu (wsemu/sdk_utils.py)."""

from wsemu.sdk_utils import (calculate_cycles, float_to_hex, input_array_to_u32, make_u48,  # noqa: F401
                             memcpy_view, sub_ts)

__all__ = ["memcpy_view", "input_array_to_u32", "calculate_cycles", "sub_ts", "make_u48", "float_to_hex"]
