import pytest
from langchain_core.tools import tool
from pydantic import BaseModel

from langmem_layers.testing import FakeChatModel, structured_reply, tool_call


class Person(BaseModel):
    name: str
    age: int


def test_scripted_sequence_and_recording():
    model = FakeChatModel(responses=["one", tool_call("t", {"x": 1})])
    assert model.invoke("a").content == "one"
    assert model.invoke("b").tool_calls[0]["args"] == {"x": 1}
    assert [m[0].content for m in model.calls] == ["a", "b"]
    with pytest.raises(IndexError, match="ran out"):
        model.invoke("c")


def test_default_cycle_callable_and_exception():
    assert FakeChatModel(responses=[], default="d").invoke("x").content == "d"
    cyc = FakeChatModel(responses=["a", "b"], cycle=True)
    assert [cyc.invoke("x").content for _ in range(3)] == ["a", "b", "a"]
    echo = FakeChatModel(responses=[lambda msgs: "echo " + msgs[-1].content])
    assert echo.invoke("hi").content == "echo hi"
    with pytest.raises(RuntimeError, match="boom"):
        FakeChatModel(responses=[RuntimeError("boom")]).invoke("x")


def test_bind_tools_records_names():
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    model = FakeChatModel(responses=["x"])
    assert model.bind_tools([add]) is model
    assert model.bound_tools == ["add"]


async def test_structured_output_sync_async_and_invalid():
    good = structured_reply(Person, {"name": "Ada", "age": 36})
    model = FakeChatModel(responses=[good, good])
    assert model.with_structured_output(Person).invoke("q") == Person(name="Ada", age=36)
    assert await model.with_structured_output(Person).ainvoke("q") == Person(name="Ada", age=36)
    bad = FakeChatModel(responses=[structured_reply(Person, {"name": "Ada", "age": "old"})])
    with pytest.raises(Exception, match="age"):
        bad.with_structured_output(Person).invoke("q")
    raw = FakeChatModel(responses=[structured_reply(Person, {"name": "A"})])
    out = raw.with_structured_output(Person, include_raw=True).invoke("q")
    assert out["parsed"] is None and out["parsing_error"] is not None
