import importlib

import langmem_layers

EXPECTED = [
    "ArchiveDecision",
    "CapStats",
    "ConfigurationError",
    "Episode",
    "EpisodeStore",
    "EpisodicRetriever",
    "ExtractiveSummarizer",
    "ForgetResult",
    "Identity",
    "LLMProfileExtractor",
    "LLMSummarizer",
    "LangchainEmbeddingFunction",
    "LangmemError",
    "LocalE5Embeddings",
    "LogLimits",
    "MemoryConfig",
    "MemoryContext",
    "MemoryGraphState",
    "MemoryLayers",
    "MemoryMiddleware",
    "MissingUserIdError",
    "OfflineProfileExtractor",
    "OutcomeRecord",
    "OutputCaps",
    "ProceduralMemory",
    "ProceduralMiddleware",
    "Profile",
    "ProfileSchema",
    "ProfileStore",
    "ProfileUpdate",
    "ProfileUpdater",
    "RecordedTool",
    "RedactionConfig",
    "RunScope",
    "Scratchpad",
    "SessionEndReport",
    "Storage",
    "StorageError",
    "Summarizer",
    "ThreadOwnershipError",
    "TokenCounter",
    "ToolOutcome",
    "ToolTips",
    "UnknownThreadError",
    "WindowPlan",
    "WorkingMemoryState",
    "WritePolicy",
    "aend_session",
    "aexpire_idle_sessions",
    "build_memory_graph",
    "build_model_messages",
    "clear_scratchpad",
    "compute_window",
    "create_archive_node",
    "create_memory_graph_builder",
    "create_profile_extraction_node",
    "create_profile_injection_node",
    "create_recall_node",
    "create_tips_node",
    "create_window_node",
    "decode_label",
    "default_embeddings",
    "encode_label",
    "end_session",
    "expire_idle_sessions",
    "format_scratchpad",
    "merge_scratchpad",
    "message_text",
    "normalize_user_id",
    "record_tool",
    "redact",
    "render_profile",
    "render_recalled",
    "resolve_chat_model",
    "resolve_embeddings",
    "resolve_identity",
    "session_transcript",
    "user_namespace",
    "wilson_lower_bound",
]


def test_public_api_is_pinned():
    assert sorted(langmem_layers.__all__) == EXPECTED


def test_every_public_name_resolves_to_its_defining_module():
    for name in langmem_layers.__all__:
        value = getattr(langmem_layers, name)
        module = importlib.import_module(langmem_layers._EXPORTS[name])
        assert getattr(module, name) is value, name


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
