import ast
import importlib
import importlib.util
from pathlib import Path

import langmem_layers

EXPECTED = [
    "ConfigurationError",
    "Episode",
    "EpisodeStore",
    "EpisodicRetriever",
    "LangmemError",
    "MemoryConfig",
    "MemoryContext",
    "MemoryGraphState",
    "MemoryItem",
    "MemoryLayers",
    "MemoryMiddleware",
    "MemoryState",
    "MissingUserIdError",
    "ProceduralMemory",
    "ProceduralMiddleware",
    "Profile",
    "ProfileSchema",
    "ProfileStore",
    "RedactionConfig",
    "OutputCaps",
    "SessionEndReport",
    "Storage",
    "StorageError",
    "ThreadOwnershipError",
    "UnknownThreadError",
    "WorkingMemoryState",
    "WritePolicy",
    "aend_session",
    "aexpire_idle_sessions",
    "amemory_messages",
    "build_memory_graph",
    "create_memory_graph_builder",
    "create_memory_tools",
    "end_session",
    "expire_idle_sessions",
    "memory_messages",
    "record_tool",
]


def test_public_api_is_pinned() -> None:
    """A literal ``__all__`` (no code builds it) and a lazy map with exactly its names."""
    assert sorted(langmem_layers.__all__) == sorted(EXPECTED)
    assert isinstance(langmem_layers.__all__, tuple)
    assert sorted(langmem_layers._dynamic_imports) == sorted(EXPECTED)
    source = Path(langmem_layers.__file__).read_text(encoding="utf-8")
    tree = ast.parse(source)
    literal = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    ]
    assert len(literal) == 1 and isinstance(literal[0], ast.Tuple)
    assert all(isinstance(e, ast.Constant) for e in literal[0].elts)


PACKAGE_FACES = [
    "langmem_layers",
    "langmem_layers.agent",
    "langmem_layers.episodic",
    "langmem_layers.procedural",
    "langmem_layers.safety",
    "langmem_layers.semantic",
    "langmem_layers.storage",
    "langmem_layers.testing",
    "langmem_layers.working",
]


def test_every_public_name_resolves_to_its_defining_module() -> None:
    for package_name in PACKAGE_FACES:
        package = importlib.import_module(package_name)
        lazy = getattr(package, "_dynamic_imports", {})
        for name in package.__all__:
            value = getattr(package, name)
            if name in lazy:
                module = importlib.import_module(lazy[name], package_name)
                assert getattr(module, name) is value, (package_name, name)


def test_the_type_checking_imports_match_the_lazy_map() -> None:
    """What IDEs and mypy read (``if TYPE_CHECKING``) is what runs (``_dynamic_imports``)."""
    for package_name in PACKAGE_FACES:
        package = importlib.import_module(package_name)
        lazy = getattr(package, "_dynamic_imports", None)
        if lazy is None:
            continue
        tree = ast.parse(Path(package.__file__).read_text(encoding="utf-8"))
        typed: dict[str, str] = {}
        for node in tree.body:
            if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
                for stmt in node.body:
                    assert isinstance(stmt, ast.ImportFrom) and stmt.module
                    typed.update((a.name, stmt.module) for a in stmt.names)
        resolved = {
            name: importlib.util.resolve_name(module, package_name) for name, module in lazy.items()
        }
        assert typed == resolved, package_name


def test_no_forwarding_twins_on_procedural_memory() -> None:
    """The approach log is reached as ``memory.approaches``, with no forwarding methods."""
    from langmem_layers.procedural import ApproachLog, ProceduralMemory

    forwarded = {
        name
        for name in dir(ApproachLog)
        if not name.startswith("_") and callable(getattr(ApproachLog, name))
    } & {name for name in vars(ProceduralMemory) if not name.startswith("_")}
    assert forwarded == set(), f"ProceduralMemory forwards ApproachLog methods: {forwarded}"


def test_unknown_attribute_is_an_attribute_error():
    try:
        langmem_layers.not_a_thing  # noqa: B018
    except AttributeError as e:
        assert "not_a_thing" in str(e)
    else:
        raise AssertionError("expected AttributeError")


def test_import_is_lazy():
    import subprocess
    import sys

    code = "import sys, langmem_layers; print('chromadb' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


TESTING_EXPECTED = [
    "DeterministicEmbeddings",
    "FakeChatModel",
    "LoopGuardStore",
    "LoopStrict",
    "LoopStrictEmbeddings",
    "OfflineDemoModel",
    "get_weather",
    "on_event_loop",
    "structured_reply",
    "tool_call",
]


def test_testing_api_is_pinned():
    import langmem_layers.testing as testing

    assert sorted(testing.__all__) == TESTING_EXPECTED
    for name in testing.__all__:
        assert getattr(testing, name) is not None, name
