"""nap-builder: next-action-preserving observation-compression datasets from agent logs."""

__version__ = "0.1.0"
