"""The SDK's geometry module name, served by wsemu (IntVector for SdkLayout coordinates)."""
