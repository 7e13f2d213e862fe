"""The graph that langgraph.json points to imports, compiles and keeps its data in LANGMEM_HOME."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[3]


def test_langgraph_json_points_to_a_compiled_graph(tmp_path: Path) -> None:
    spec = json.loads((ROOT / "langgraph.json").read_text())
    path, attr = spec["graphs"]["memory_agent"].split(":")
    assert (ROOT / path).is_file()
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["LANGMEM_HOME"] = str(tmp_path / "home")
    code = (
        "import langmem_layers.studio as s; "
        f"g = s.{attr}; print(sorted(n for n in g.get_graph().nodes if not n.startswith('__')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "['agent', 'load_memory', 'tools', 'update_memory']" in out.stdout
    assert (tmp_path / "home" / "chroma").is_dir()
    assert not (tmp_path / ".langmem").exists()
