"""Shims that let an unmodified Cerebras SDK run script import wsemu under the SDK's module names."""
