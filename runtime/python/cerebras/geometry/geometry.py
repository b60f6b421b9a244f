"""The SDK's `cerebras.geometry.geometry` names, served by wsemu."""

from wsemu.sdk_layout import IntRectangle, IntVector  # noqa: F401

__all__ = ["IntVector", "IntRectangle"]
