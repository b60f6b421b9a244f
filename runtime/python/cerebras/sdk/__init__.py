"""cerebras.sdk on wsemu: sdk_utils, runtime.sdkruntimepybind, debug.debug_util."""
