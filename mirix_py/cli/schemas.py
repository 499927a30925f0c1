"""JSON Schema files generated from the pydantic records (`mirix schemas export`)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from mirix_py.records import PUBLIC_MODELS


def all_schemas() -> dict[str, dict]:
    out = {}
    for name, model in PUBLIC_MODELS.items():
        schema = model.model_json_schema() if isinstance(model, type) and issubclass(model, BaseModel) else \
            model.json_schema()  # type: ignore[union-attr]
        out[name] = schema
    from mirix_py.server.models import REST_MODELS  # REST bodies (pydantic only; no web framework needed)

    for name, rest_model in REST_MODELS.items():
        out[name] = rest_model.model_json_schema()
    return out


def render(schema: dict) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def default_schema_dir() -> Path:
    checkout = Path(__file__).resolve().parents[2]
    return checkout / "schemas" if (checkout / "pyproject.toml").exists() else Path.cwd() / "schemas"


def write_schemas(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in all_schemas().items():
        path = folder / f"{name}.schema.json"
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    path = folder / TOOLS_FILE
    path.write_text(render(tool_schemas()), encoding="utf-8")
    written.append(path)
    return written


TOOLS_FILE = "tools.json"


def tool_schemas() -> dict:
    """What models see: the agents' tools and the MCP server's (needs the llm and server extras)."""
    from mirix_py.agents.tool_schemas import model_tool_schemas
    from mirix_py.integrations.mcp_server import mcp_tool_schemas

    return {"model_tools": model_tool_schemas(), "mcp_tools": mcp_tool_schemas()}



