"""`mirix demo`: the main job on the embedded defaults, offline, in a few seconds."""

from __future__ import annotations

import shutil
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mirix_py.records import KnowledgeVaultMemory

CONVERSATION = [
    {"role": "user", "name": "Ada", "id": "chat-1", "content": "Hi! My name is Ada and I love hiking in the Alps."},
    {"role": "assistant", "name": "assistant", "id": "chat-2", "content": "Nice to meet you, Ada. Any trips planned?"},
    {"role": "user", "name": "Ada", "id": "chat-3",
     "content": "Yes, in June. My brother Tom is a pilot and he will fly us to Geneva."},
    {"role": "user", "name": "Ada", "id": "chat-4",
     "content": "For the record, my email is ada@example.org and my VPN password is hunter2-Xy9!"},
    {"role": "user", "name": "Ada", "id": "chat-5", "content": (
        "How I deploy the trail-map site:\n1. git pull origin main\n2. make build\n3. rsync -a dist/ web:/srv/maps")},
]

DOCUMENT = (
    "# Alpine hut etiquette\n\n"
    "Huts in the Alps expect guests to book ahead, bring a sleeping-bag liner and take their rubbish "
    "back down. Dinner is usually served at 18:30 and quiet hours begin at 22:00. "
) + "Most huts accept cash only, so carry enough Swiss francs for the whole trip. " * 12


def run_demo(console: Console, *, data_dir: Path | None = None, keep: bool = False) -> None:
    from mirix_py.engine import Mirix

    temp = data_dir is None
    folder = Path(data_dir) if data_dir is not None else Path(tempfile.mkdtemp(prefix="mirix-demo-"))
    try:
        with Mirix(folder) as mx:
            info = mx.describe()
            console.print(f"[bold]mirix-py demo[/] — mode: [yellow]{info['mode']}[/] (no LLM configured: "
                          f"deterministic rules), search: {info['search']}, embedder: {info['embedder']}, "
                          f"data: {info['data_dir']}")
            start = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
            result = mx.add(CONVERSATION, user_id="ada", occurred_at=start)
            doc = mx.add(DOCUMENT, user_id="ada", occurred_at=start + timedelta(days=1), source_id="hut-guide.md",
                         kind="document")
            counts: dict[str, int] = {}
            for change in [*result.changes, *doc.changes]:
                counts[change.memory_type.value] = counts.get(change.memory_type.value, 0) + 1
            console.print(f"ingested 5 messages and 1 document -> {sum(counts.values())} memories: {counts}")

            for query in ("what does Ada like to do outdoors?", "who is Tom?", "how do I deploy the site",
                          "when is dinner at the hut", "email address"):
                table = Table(title=f"search: {query!r}", expand=True)
                table.add_column("score", width=6)
                table.add_column("type", width=15)
                table.add_column("text", ratio=1, overflow="fold")
                table.add_column("sources", width=22, overflow="fold")
                for hit in mx.search(query, user_id="ada", limit=3):
                    table.add_row(f"{hit.score:.3f}", hit.memory.memory_type.value, escape(hit.text),
                                  ", ".join(hit.memory.source_ids))
                console.print(table)

            core = mx.core_memory(user_id="ada")["human"]
            console.print(f"[bold]core memory (human)[/]:\n{escape(core.value)}")
            vault = [m for m in mx.list(user_id="ada", memory_types=["knowledge_vault"])
                     if isinstance(m, KnowledgeVaultMemory)]
            for item in vault:
                console.print(f"vault {item.id}: {escape(item.caption)} -> {item.secret_value} (masked; reveal=True shows it)")
            semantic = mx.list(user_id="ada", memory_types=["semantic"])
            if semantic:
                target = semantic[0]
                mx.update(target.id, user_id="ada", details="Flies for a regional airline.")
                events = mx.history(target.id, user_id="ada")
                console.print(f"history of {target.id}: " + " -> ".join(f"{e.operation.value} by {e.actor}" for e in events))
            console.print(f"stats: {mx.stats(user_id='ada')['memories']}")
    finally:
        if temp and not keep:
            shutil.rmtree(folder, ignore_errors=True)
        elif temp:
            console.print(f"kept data in {folder}")
