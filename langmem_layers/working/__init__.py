"""Working memory: token-budgeted message window, running summary, task scratchpad.

Example:
    >>> from langmem_layers.working import WorkingMemoryState, create_window_node
    >>> node = create_window_node(max_tokens=2000)
    >>> sorted(WorkingMemoryState.__annotations__)
    ['messages', 'scratchpad', 'summary']

"""

from langmem_layers.working.node import create_window_node
from langmem_layers.working.state import (
    CLEAR_KEY,
    Scratchpad,
    WorkingMemoryState,
    clear_scratchpad,
    format_scratchpad,
    merge_scratchpad,
)
from langmem_layers.working.summarizer import (
    DEFAULT_SUMMARY_TOKENS,
    ExtractiveSummarizer,
    LLMSummarizer,
    Summarizer,
    resolve_summarizer,
)
from langmem_layers.working.window import (
    MIN_MAX_TOKENS,
    SUMMARY_PREFIX,
    WindowPlan,
    build_model_messages,
    compute_window,
    default_summary_tokens,
)

__all__ = [
    "CLEAR_KEY",
    "DEFAULT_SUMMARY_TOKENS",
    "MIN_MAX_TOKENS",
    "SUMMARY_PREFIX",
    "ExtractiveSummarizer",
    "LLMSummarizer",
    "Scratchpad",
    "Summarizer",
    "WindowPlan",
    "WorkingMemoryState",
    "build_model_messages",
    "clear_scratchpad",
    "compute_window",
    "create_window_node",
    "default_summary_tokens",
    "format_scratchpad",
    "merge_scratchpad",
    "resolve_summarizer",
]
