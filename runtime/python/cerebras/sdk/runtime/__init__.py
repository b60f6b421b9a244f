"""cerebras.sdk.runtime on wsemu."""
