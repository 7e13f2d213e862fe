"""Shared fixtures of the integration tests: PostgreSQL availability and throwaway schemas.

PostgreSQL runs on 127.0.0.1:5432 (database ``test``, user ``postgres``) on every
development machine and in CI. When it cannot be reached (or its driver is missing),
a test that needs it is skipped locally but FAILS when the environment variable
``CI`` is ``"true"`` (``.ci/run`` runs with ``CI=true``): an integration test that
silently skips in CI proves nothing.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import NoReturn

import pytest

POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"


def in_ci() -> bool:
    """True when running under CI (``CI=true``), where missing services are failures."""
    return os.environ.get("CI", "").strip().lower() == "true"


def _unavailable(reason: str) -> NoReturn:
    if in_ci():
        pytest.fail(f"{reason} (CI=true: a missing service is a failure, not a skip)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The PostgreSQL URL, once it answers; skips locally / fails under ``CI=true`` if not."""
    try:
        import psycopg
    except ImportError as e:
        _unavailable(f"psycopg is not installed ({e}); install the 'dev' or 'postgres' extra")
    try:
        with psycopg.connect(POSTGRES_URL, connect_timeout=5) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as e:
        _unavailable(f"PostgreSQL not reachable at {POSTGRES_URL}: {e}")
    return POSTGRES_URL


def schema_dsn(url: str, schema: str) -> str:
    """``url`` with ``search_path`` set to ``schema`` (every table lands in that schema)."""
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options=-csearch_path%3D{schema}"


@pytest.fixture
def postgres_schema(postgres_url: str) -> Iterator[str]:
    """A DSN whose ``search_path`` is a fresh schema, dropped (with its tables) afterwards."""
    import psycopg

    name = f"langmem_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    try:
        yield schema_dsn(postgres_url, name)
    finally:
        with psycopg.connect(postgres_url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP SCHEMA "{name}" CASCADE')
