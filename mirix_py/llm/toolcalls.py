"""Tool calls that models write as text instead of through the tool-calling API.

Local and weak models reply with a JSON object, a fenced code block, Hermes-style
`<tool_call>…</tool_call>` tags, a Python-looking call, or slightly broken JSON (trailing commas,
single quotes, arguments encoded as a string, missing closing brackets). `parse_text_tool_calls`
recovers what can be recovered; what cannot is a `ToolCallParseError` whose message is fit to send
back to the model for its one correction round. Pure functions: no I/O.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence


@dataclass(frozen=True)
class ParsedCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


class ToolCallParseError(ValueError):
    pass


_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCED = re.compile(r"```(?:json|JSON|tool_call|python)?\s*(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_SMART = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'"})


def _walk_brackets(text: str, start: int = 0) -> tuple[list[str], bool, int | None]:
    """Scan JSON text from `start` (strings respected): the closers still open at the end, whether it
    ends inside a string, and the index just past the bracket that closed the first one (or None)."""
    stack: list[str] = []
    in_string = escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
            if not stack:
                return stack, False, i + 1
    return stack, in_string, None


def _close_brackets(text: str) -> str:
    """Append the closers a truncated JSON text is missing (strings respected)."""
    stack: list[str] = []
    in_string = False
    position = 0
    while position < len(text):  # past every complete top-level value
        stack, in_string, end = _walk_brackets(text, position)
        if end is None:
            break
        position = end
    return text + ('"' if in_string else "") + "".join(reversed(stack))


def loads_lenient(text: str) -> Any:
    """json.loads, then repairs: smart quotes, trailing commas, Python literals, missing closers."""
    text = text.strip().translate(_SMART)
    attempts = [text, _TRAILING_COMMA.sub(r"\1", text)]
    attempts.append(_close_brackets(attempts[-1]))
    for candidate in attempts:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            pass
    for candidate in attempts:
        try:
            return ast.literal_eval(candidate)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            pass
    raise ToolCallParseError(f"not valid JSON: {text[:120]!r}")


def _candidates(text: str) -> list[str]:
    tagged = _TAGGED.findall(text)
    if tagged:
        return tagged
    fenced = _FENCED.findall(text)
    if fenced:
        return fenced
    return [text]


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the bracket that closes the one at `start` (strings respected); None if unclosed."""
    return _walk_brackets(text, start)[2]


def json_values(text: str) -> list[Any]:
    """Every top-level JSON object or array in `text`, in order: several written one after another,
    one inside prose, or a last one cut short (closed by `loads_lenient`)."""
    values: list[Any] = []
    i = 0
    while True:
        starts = [j for j in (text.find("{", i), text.find("[", i)) if j >= 0]
        if not starts:
            return values
        start = min(starts)
        end = _balanced_end(text, start)
        chunk = text[start:end] if end is not None else text[start:]
        try:
            values.append(loads_lenient(chunk))
        except ToolCallParseError:
            if end is None:
                return values
        if end is None:
            return values
        i = end


_FUNCTIONS_NAME = re.compile(r"functions\.([A-Za-z_]\w*)\s*:?")


def _functions_prefixed(text: str) -> list[ParsedCall]:
    """`functions.NAME:` followed by its arguments as JSON (the chatml-function-calling format)."""
    marks = list(_FUNCTIONS_NAME.finditer(text))
    calls = []
    for k, mark in enumerate(marks):
        body = text[mark.end(): marks[k + 1].start() if k + 1 < len(marks) else len(text)]
        values = [v for v in json_values(body) if isinstance(v, dict)]
        arguments = values[0] if values else {}
        if isinstance(arguments.get("arguments"), dict) and arguments.get("name") == mark.group(1):
            arguments = arguments["arguments"]
        calls.append(ParsedCall(mark.group(1), arguments))
    return calls


def _as_arguments(raw: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    if isinstance(raw, str):
        raw = loads_lenient(raw) if raw.strip() else {}
    if isinstance(raw, list) and len(raw) == 1 and isinstance(raw[0], dict):
        raw = raw[0]  # `"arguments": [{...}]`, as the local model writes it
    if not isinstance(raw, dict):
        raise ToolCallParseError("tool call arguments must be a JSON object")
    return raw


def _normalise(obj: Any) -> list[ParsedCall]:
    if isinstance(obj, list):
        return [call for item in obj for call in _normalise(item)]
    if not isinstance(obj, dict):
        raise ToolCallParseError("expected a JSON object naming a tool")
    for key in ("tool_calls", "calls", "actions"):
        if isinstance(obj.get(key), list):
            return _normalise(obj[key])
    if isinstance(obj.get("function"), dict):
        fn = obj["function"]
        return [ParsedCall(str(fn.get("name", "")), _as_arguments(fn.get("arguments", fn.get("parameters"))))]
    name = obj.get("name") or obj.get("tool") or obj.get("tool_name") or obj.get("function")
    if not isinstance(name, str) or not name:
        raise ToolCallParseError("a tool call needs a 'name'")
    for key in ("arguments", "args", "parameters", "input", "tool_input"):
        if key in obj:
            return [ParsedCall(name, _as_arguments(obj[key]))]
    rest = {k: v for k, v in obj.items() if k not in ("name", "tool", "tool_name", "function", "type", "id")}
    return [ParsedCall(name, rest)]


def _python_calls(text: str, known: set[str]) -> list[ParsedCall] | None:
    """`insert_semantic(name="Tom", summary="...")` lines, with literal keyword arguments only."""
    calls = []
    for line in text.strip().splitlines():
        line = line.strip().rstrip(";")
        if not line:
            continue
        match = re.match(r"([A-Za-z_]\w*)\s*\(", line)
        if not match or match.group(1) not in known:
            return None
        try:
            node = ast.parse(line, mode="eval").body
        except SyntaxError as exc:
            raise ToolCallParseError(f"could not parse call {line[:80]!r}") from exc
        if not isinstance(node, ast.Call) or node.args:
            raise ToolCallParseError(f"use keyword arguments only: {line[:80]!r}")
        try:
            arguments = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
        except ValueError as exc:
            raise ToolCallParseError(f"arguments must be literals: {line[:80]!r}") from exc
        calls.append(ParsedCall(match.group(1), arguments))
    return calls


def _looks_like_call(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_looks_like_call(v) for v in value)
    return isinstance(value, dict) and any(k in value for k in ("name", "tool", "tool_name", "function", "tool_calls",
                                                                "calls", "actions"))


def parse_text_tool_calls(text: str, known_tools: Iterable[str]) -> list[ParsedCall]:
    """Tool calls found in a text reply; [] when the reply is plain prose with no call in it.

    Reads what models write: a JSON object or list, several objects one after another, a call
    inside prose, `<tool_call>` tags, fenced blocks, `functions.NAME: {...}`, Python-looking calls.
    """
    known = set(known_tools)
    if not text or not text.strip():
        return []
    fenced = _FENCED.findall(text)
    python = _python_calls(fenced[0] if fenced else text, known)
    if python:
        calls = python
    else:
        calls = []
        for candidate in _candidates(text):
            if _FUNCTIONS_NAME.search(candidate) and not _looks_like_call(next(iter(json_values(candidate)), None)):
                calls.extend(_functions_prefixed(candidate))
                continue
            values = json_values(candidate)
            if not values and candidate.strip()[:1] in "{[":
                loads_lenient(candidate)  # raises the reason it cannot be read
            shaped = [v for v in values if _looks_like_call(v)]
            if values and not shaped:
                raise ToolCallParseError("expected a JSON object naming a tool, e.g. "
                                         '{"name": "<tool>", "arguments": {...}}')
            for value in shaped:
                calls.extend(_normalise(value))
    unknown = sorted({c.name for c in calls if c.name not in known})
    if unknown:
        raise ToolCallParseError(f"unknown tool(s) {unknown}; available: {sorted(known)}")
    return calls


def tool_calls_schema(tools: Sequence[Any], *, max_calls: int = 8) -> dict[str, Any]:
    """The JSON schema of `{"tool_calls": [{"name", "arguments"}, ...]}` over these tools, for servers
    that constrain a reply to a schema (a grammar): every reply then names a real tool with arguments
    of the right shape. `tools` are autogen tools (their `.schema`) or tool schemas."""
    variants = []
    for tool in tools:
        schema = tool.schema if hasattr(tool, "schema") else tool
        parameters = dict(schema.get("parameters") or {"type": "object", "properties": {}})
        parameters.setdefault("type", "object")
        variants.append({"type": "object", "properties": {"name": {"type": "string", "enum": [schema["name"]]},
                                                           "arguments": parameters},
                         "required": ["name", "arguments"]})
    items = variants[0] if len(variants) == 1 else {"anyOf": variants}
    return {"type": "object", "required": ["tool_calls"],
            "properties": {"tool_calls": {"type": "array", "items": items, "minItems": 1, "maxItems": max_calls}}}
