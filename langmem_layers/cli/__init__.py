"""``langmem-layers``, the command line: demo, chat, inspect, import, forget and export."""

from langmem_layers.cli.main import main

__all__ = ["main"]
