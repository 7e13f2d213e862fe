"""Credential screen of the semantic layer: profiles never hold secrets (private).

A profile value is a fact to remember across sessions; a credential is never
one. An update whose value (or ``replaces``) redaction would change, whose
field or key names a secret (``password``, ``wifi_password``, ``api_key``), or
whose value sits inside a part of its evidence that redaction removes ("my
password is hunter2" -> ``hunter2``) is dropped, not stored redacted; so is a
value that holds what redaction left of a secret (``[REDACTED]``: the extractor read
redacted messages). The evidence of the updates kept is redacted.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from langmem_layers.safety.redaction import REDACTED, RedactionConfig, is_credential, redact_text
from langmem_layers.semantic.schema import ProfileUpdate

logger = logging.getLogger("langmem_layers.semantic")


def holds_credential(update: ProfileUpdate, config: RedactionConfig | None = None) -> bool:
    """Whether ``update`` names or carries a credential (then it must not be stored)."""
    if config is not None and not config.enabled:
        return False
    if is_credential(update.field, config=config) or is_credential(
        update.field, key=update.field, config=config
    ):
        return True
    if update.key is not None and is_credential(update.key, key=update.key, config=config):
        return True
    if update.replaces and is_credential(update.replaces, config=config):
        return True
    if REDACTED in update.value or (update.key is not None and REDACTED in update.key):
        return True
    return is_credential(update.value, context=update.evidence, config=config)


def screen_updates(
    updates: Iterable[ProfileUpdate], config: RedactionConfig | None = None
) -> list[ProfileUpdate]:
    """The updates without credentials, their evidence redacted (see the module docstring)."""
    kept: list[ProfileUpdate] = []
    for u in updates:
        if holds_credential(u, config):
            logger.info("dropped a profile update for field %r: it holds a credential", u.field)
            continue
        evidence = redact_text(u.evidence, config)
        kept.append(u if evidence == u.evidence else u.model_copy(update={"evidence": evidence}))
    return kept
