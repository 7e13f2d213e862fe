from langchain_core.tools import BaseTool, tool
from langchain_tests.unit_tests import ToolsUnitTests
from langgraph.store.memory import InMemoryStore

from langmem_layers.procedural import ProceduralMemory, RecordedTool


@tool
def convert(value: float, unit: str) -> str:
    """Convert a length in metres to the given unit (cm or mm)."""
    factor = {"cm": 100, "mm": 1000}[unit]
    return f"{value * factor} {unit}"


class TestRecordedToolStandard(ToolsUnitTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return RecordedTool(tool=convert, memory=ProceduralMemory(InMemoryStore()))

    @property
    def tool_invoke_params_example(self) -> dict:
        return {"value": 1.5, "unit": "cm"}


def test_wrapped_schema_matches_original():
    wrapped = RecordedTool(tool=convert, memory=ProceduralMemory(InMemoryStore()))
    assert (
        wrapped.get_input_schema().model_json_schema()
        == convert.get_input_schema().model_json_schema()
    )
