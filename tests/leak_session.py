"""Plant labelled secrets through every entry point, then look for them in every byte and every answer.

`run_leak_session(make_engine, workdir)` takes a factory (data dir -> `Mirix`), so the same session
runs offline (`tests/test_secret_leaks.py`) and with an engine configured for a model. It plants 30
texts of the labelled corpus (`tests/fixtures/secrets_corpus.jsonl`: chat lines, documents, screen
text rendered into images and read back by Tesseract) through the SDK (`add`, queued `add`, message
lists, documents, `add_screenshot`, `chat`), REST on a live uvicorn server (memories, documents,
screenshot upload, chat, core append, PATCH) and MCP (streamable HTTP on the same server: add,
chat). It then reads everything back (search, chat, context, list, get, history, inputs, core,
export, MCP tools) and greps each answer, and every file under the data dir (the SQLite database with
its -wal and -shm, Chroma's files, thumbnails) while the engine runs and after it closed, for each
secret value as a whole token. Texts whose labelled values the rules do not all find are left out:
the session tests the paths, `benchmarks/secrets_corpus.py` measures detection.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from mirix_py.eval.secret_eval import Example, parse_corpus
from mirix_py.secrets.detection import find_secrets

CORPUS = Path(__file__).resolve().parent / "fixtures" / "secrets_corpus.jsonl"
USER = "leak-user"
WHEN = "2024-05-01T10:00:00+00:00"

# Screen texts rendered into images: ones Tesseract reads back character for character here.
SCREEN_TEXTS = (
    "Wi-Fi Settings  Network: Cafe_Luna  Password: espresso4life  Show password",
    "SSID: NETGEAR42\nPassword: fuzzyzebra512",
    "Bank of America\nUsername: ada_l\nPassword: Qz7#pL2!vR\nWebsite: bankofamerica.com",
    "Your verification settings\nPIN: 4417\nChange PIN",
    "Account holder: Ada Lovelace\nIBAN: GB82 WEST 1234 5698 7654 32\nBIC: WESTGB2L",
    "$ export GITHUB_TOKEN=ghp_ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210\n$ gh repo list",
)


@dataclass
class Plan:
    chat: list[Example]
    documents: list[Example]
    screens: list[Example]

    def examples(self) -> list[Example]:
        return [*self.chat, *self.documents, *self.screens]

    def values(self) -> list[str]:
        return sorted({v for e in self.examples() for _, v in e.secrets}, key=len, reverse=True)


def leak_plan(n_chat: int = 18, n_documents: int = 6) -> Plan:
    """30 positives: chat lines spread over the entry types, documents, and the screen texts."""
    examples = parse_corpus(CORPUS.read_text(encoding="utf-8").splitlines())

    def usable(e: Example) -> bool:
        found = {m.value for m in find_secrets(e.text)}
        return bool(e.secrets) and all(len(v) >= 4 and v in found for _, v in e.secrets)

    by_type: dict[str, list[Example]] = {}
    for e in examples:
        if e.source == "chat" and usable(e):
            by_type.setdefault(e.secrets[0][0], []).append(e)
    chat: list[Example] = []
    while len(chat) < n_chat and any(by_type.values()):  # round robin over entry types
        for kind in sorted(by_type):
            if by_type[kind] and len(chat) < n_chat:
                chat.append(by_type[kind].pop(0))
    documents = [e for e in examples if e.source == "document" and usable(e)][:n_documents]
    screens = [e for e in examples if e.source == "ocr" and e.text in SCREEN_TEXTS]
    assert len(screens) == len(SCREEN_TEXTS), "a screen text is missing from the corpus"
    return Plan(chat=chat, documents=documents, screens=screens)


def render(text: str) -> bytes:
    """A screen holding `text` in a large monospace font, as PNG bytes."""
    from PIL import Image, ImageDraw, ImageFont

    from mirix_synth.screens import find_font

    lines = text.split("\n")
    path = find_font(mono=True)
    font = ImageFont.truetype(str(path), 30) if path else ImageFont.load_default(30)
    width = 60 + 19 * max(len(line) for line in lines)
    image = Image.new("RGB", (max(width, 700), 80 + 48 * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((30, 40 + 48 * i), line, fill="black", font=font)
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


@dataclass
class LeakReport:
    planted: list[str]
    entry_points: dict[str, int] = field(default_factory=dict)
    responses: int = 0
    response_bytes: int = 0
    files_scanned: int = 0
    file_bytes: int = 0
    in_responses: list[tuple[str, str]] = field(default_factory=list)  # (where, value)
    in_files: list[tuple[str, str]] = field(default_factory=list)
    not_vaulted: list[str] = field(default_factory=list)
    input_statuses: dict[str, int] = field(default_factory=dict)  # the input log at the end: processed, degraded...

    @property
    def clean(self) -> bool:
        return not self.in_responses and not self.in_files


def _token(value: str) -> re.Pattern[str]:
    """`value` as a whole token; not the decimals of a number (a timing of 3.1946 s is not the code 1946)."""
    return re.compile(r"(?<![A-Za-z0-9])(?<![0-9][.,])" + re.escape(value) + r"(?![A-Za-z0-9])")


def token_in(value: str, text: str) -> bool:
    """Whether `value` occurs in `text` as a whole token (not inside a longer word or number)."""
    return bool(_token(value).search(text))


# A random UUID (Chroma names its collections and segments by one) holds four-hex-digit groups
# between hyphens, so a four-digit PIN turns up inside one about once in a few thousand runs.
_UUID = re.compile(rb"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def scan_bytes(root: Path, values: list[str]) -> tuple[list[tuple[str, str]], int, int]:
    """(file, value) for each value found as a whole token in a file under `root`, UUIDs aside;
    files; bytes."""
    patterns = [(v, re.compile(_token(v).pattern.encode())) for v in values]
    hits: list[tuple[str, str]] = []
    files = size = 0
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        blob = path.read_bytes()
        files, size = files + 1, size + len(blob)
        blob = _UUID.sub(lambda m: b"u" * len(m.group(0)), blob)
        hits += [(str(path.relative_to(root)), v) for v, p in patterns if p.search(blob)]
    return hits, files, size


def run_leak_session(make_engine: Callable[[Path], Any], workdir: Path, plan: Plan | None = None) -> LeakReport:
    import anyio
    import httpx

    from mirix_py.records import to_jsonable
    from mirix_py.server import KeyStore, create_app
    from mirix_py.server.thread import ServerThread

    plan = plan or leak_plan()
    data = workdir / "data"
    report = LeakReport(planted=plan.values())
    answers: list[tuple[str, str]] = []

    def seen(where: str, body: Any) -> Any:
        text = body if isinstance(body, str) else json.dumps(to_jsonable(body), default=str)
        answers.append((where, text))
        return body

    def count(entry: str) -> None:
        report.entry_points[entry] = report.entry_points.get(entry, 0) + 1

    mx = make_engine(data)
    keys = KeyStore(mx.engine)
    key = keys.create([USER], name="leaks").key
    chat = iter(plan.chat)
    with ServerThread(create_app(mx, keys=keys, mcp=True)) as server:
        rest = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=600)
        base = f"/v1/users/{USER}"

        def rest_call(method: str, path: str, **kw: Any) -> Any:
            r = rest.request(method, base + path, **kw)
            assert r.status_code < 300, (method, path, r.status_code, r.text[:300])
            return seen(f"REST {method} {path}", r.text) and r.json()

        # ---------------------------------------------------------- SDK
        for _ in range(4):
            seen("SDK add", mx.add(next(chat).text, user_id=USER, occurred_at=WHEN)); count("sdk add")
        for _ in range(2):
            seen("SDK add (queued)", mx.add(next(chat).text, user_id=USER, wait=False)); count("sdk add queued")
        mx.flush()
        pair = [next(chat), next(chat)]
        seen("SDK add messages", mx.add([{"role": "user", "content": e.text} for e in pair], user_id=USER))
        count("sdk messages"); count("sdk messages")
        seen("SDK chat", mx.chat(next(chat).text, user_id=USER)); count("sdk chat")
        mx.flush()
        for e in plan.documents[:3]:
            seen("SDK add document", mx.add(e.text, user_id=USER, kind="document")); count("sdk document")
        for i, e in enumerate(plan.screens[:3]):
            seen("SDK add_screenshot", mx.add_screenshot(render(e.text), user_id=USER, captured_at=f"2024-05-01T10:0{i}:00+00:00",
                                                         app="Settings", window_title=f"Screen {i}"))
            count("sdk screenshot")

        # ---------------------------------------------------------- REST
        for _ in range(3):
            rest_call("POST", "/memories", json={"content": next(chat).text, "wait": True}); count("rest add")
        rest_call("POST", "/memories", json={"content": next(chat).text}); count("rest add queued")
        for e in plan.documents[3:]:
            rest_call("POST", "/memories", json={"content": e.text, "kind": "document", "wait": True})
            count("rest document")
        for i, e in enumerate(plan.screens[3:]):
            rest_call("POST", "/screenshots", files={"image": (f"s{i}.png", render(e.text), "image/png")},
                      data={"captured_at": f"2024-05-01T11:0{i}:00+00:00", "app": "Browser",
                            "window_title": f"Page {i}", "wait": "true"})
            count("rest screenshot")
        rest_call("POST", "/chat", json={"message": next(chat).text}); count("rest chat")
        rest_call("POST", "/core/human/append", json={"text": next(chat).text}); count("rest core append")
        episode = next(m for m in mx.list(user_id=USER, memory_types=["episodic"]))
        rest_call("PATCH", f"/memories/{episode.id}", json={"fields": {"details": next(chat).text}})
        count("rest patch")

        # ---------------------------------------------------------- errors that quote the request
        quoted = plan.chat[0].text
        for path, body in ((f"/memories/{episode.id}", {"fields": {"event_type": {"said": quoted}}}),
                           ("/memories", {"content": "hello", "occurred_at": quoted}),
                           ("/search", {"query": "x", "start": quoted})):
            r = rest.request("PATCH" if "/memories/" in path else "POST", base + path, json=body)
            assert r.status_code == 422, (path, r.status_code, r.text[:300])
            seen(f"REST error {path}", r.text)
        for call in (lambda: mx.add("hello", user_id=USER, occurred_at=quoted),
                     lambda: mx.update(episode.id, user_id=USER, event_type={"said": quoted})):
            try:
                call()
            except ValueError as exc:  # InvalidInput
                seen("SDK error", str(exc))
            else:
                raise AssertionError("bad input was accepted")

        # ---------------------------------------------------------- MCP (streamable HTTP, same server)
        remaining = list(chat)

        async def mcp_session() -> None:
            import httpx2
            from mcp import Client
            from mcp.client.streamable_http import streamable_http_client

            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=600)
            async with Client(streamable_http_client(server.url + "/mcp/", http_client=http)) as client:
                for e in remaining[:-1]:
                    result = await client.call_tool("add_memory", {"content": e.text})
                    seen("MCP add_memory", " ".join(getattr(c, "text", "") for c in result.content))
                    count("mcp add")
                result = await client.call_tool("chat_with_memory", {"message": remaining[-1].text})
                seen("MCP chat_with_memory", " ".join(getattr(c, "text", "") for c in result.content))
                count("mcp chat")
                result = await client.call_tool("add_memory", {"content": "hello", "occurred_at": quoted})
                assert result.is_error
                seen("MCP error add_memory", " ".join(getattr(c, "text", "") for c in result.content))
                for tool, args in (("search_memory", {"query": "password"}), ("search_memory", {"query": "api key token"}),
                                   ("list_memories", {"limit": 100}), ("get_core_memory", {}),
                                   ("chat_with_memory", {"message": "what is my wifi password?", "remember": False})):
                    result = await client.call_tool(tool, args)
                    seen(f"MCP {tool}", " ".join(getattr(c, "text", "") for c in result.content))

        anyio.run(mcp_session)
        mx.flush()

        # ---------------------------------------------------------- read everything back
        queries = ["password", "wifi password", "PIN code", "api key token", "bank account IBAN", "recovery codes",
                   "card number", "passphrase", "login", "secret key", *[" ".join(e.text.split()[:4]) for e in plan.examples()]]
        for q in queries:
            rest_call("POST", "/search", json={"query": q, "limit": 20})
            seen("SDK search", mx.search(q, user_id=USER, limit=20))
        for q in ("what is my wifi password?", "which PIN do I use?", "what is my api key?", "bank details"):
            rest_call("POST", "/chat", json={"message": q, "remember": False})
            rest_call("POST", "/context", json={"message": q})
            seen("SDK chat", mx.chat(q, user_id=USER, remember=False))
        listed = rest_call("GET", "/memories", params={"limit": 500})
        items = listed if isinstance(listed, list) else listed.get("memories", listed.get("items", []))
        inputs: set[str] = set()
        for item in items:
            memory_id = item["id"] if isinstance(item, dict) else item
            rest_call("GET", f"/memories/{memory_id}")
            rest_call("GET", f"/memories/{memory_id}/history")
            seen("SDK history", mx.history(memory_id, user_id=USER))
            inputs.update(s for s in (item.get("source_ids") or []) if s.startswith("in"))
        for input_id in sorted(inputs):
            r = rest.get(f"{base}/inputs/{input_id}")
            if r.status_code == 200:
                seen(f"REST GET /inputs/{input_id}", r.text)
        rest_call("GET", "/core")
        rest_call("GET", "/stats")
        seen("SDK list", mx.list(user_id=USER, limit=500))
        seen("SDK core_memory", mx.core_memory(user_id=USER))
        out = io.StringIO()
        mx.export(out, user_id=USER)
        seen("SDK export", out.getvalue())
        vault = {mx.get(v.id, user_id=USER, reveal=True).secret_value
                 for v in mx.list(user_id=USER, memory_types=["knowledge_vault"], limit=1000)}
        report.not_vaulted = [v for v in report.planted if v not in vault]
        from mirix_py.records import InputStatus
        report.input_statuses = {s.value: n for s in InputStatus
                                 if (n := len(mx.inputs.by_status(s, user_id=USER)))}
        rest.close()
        hits, files, size = scan_bytes(data, report.planted)  # the engine is running: WAL and -shm exist
        report.in_files += [(f"{path} (engine running)", v) for path, v in hits]
    mx.close()
    hits, files, size = scan_bytes(data, report.planted)
    report.in_files += [(f"{path} (after close)", v) for path, v in hits]
    report.files_scanned, report.file_bytes = files, size
    patterns = [(v, _token(v)) for v in report.planted]
    for where, text in answers:
        report.in_responses += [(where, v) for v, p in patterns if p.search(text)]
    report.responses, report.response_bytes = len(answers), sum(len(t) for _, t in answers)
    return report
