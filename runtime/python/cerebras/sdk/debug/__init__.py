"""cerebras.sdk.debug on wsemu."""
