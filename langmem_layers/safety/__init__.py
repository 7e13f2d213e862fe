"""Safety: what every layer applies before text is stored or shown to a model.

* :func:`redact` / :class:`RedactionConfig`: secrets out before anything reaches long-term
  memory (:mod:`~langmem_layers.safety.redaction`);
* :mod:`~langmem_layers.safety.fences`: stored text rendered in a prompt as data that cannot
  pose as structure;
* :class:`OutputCaps` / :class:`CapStats`: caps on what a model writes into memory.
"""

from typing import TYPE_CHECKING

from langmem_layers._core.lazy import lazy_face

if TYPE_CHECKING:
    from langmem_layers.safety.caps import CapStats, OutputCaps
    from langmem_layers.safety.redaction import RedactionConfig, redact, redact_text

__all__ = ("CapStats", "OutputCaps", "RedactionConfig", "redact", "redact_text")

_dynamic_imports = {
    "CapStats": ".caps",
    "OutputCaps": ".caps",
    "RedactionConfig": ".redaction",
    "redact": ".redaction",
    "redact_text": ".redaction",
}

__getattr__, __dir__ = lazy_face(__name__, globals(), _dynamic_imports)
