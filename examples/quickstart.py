"""Quickstart: remember a conversation offline, search it, look at a memory's history.

    python examples/quickstart.py [DATA_DIR]
"""

import sys
import tempfile
from datetime import datetime, timezone

from mirix_py import Mirix


def main(data_dir: str) -> None:
    mx = Mirix(data_dir)
    print("mode:", mx.mode)
    mx.add(
        [
            {"role": "user", "name": "Sam", "id": "m1", "content": "My name is Sam and I prefer window seats."},
            {"role": "user", "name": "Sam", "id": "m2", "content": "My manager Priya is a marathon runner."},
            {"role": "user", "name": "Sam", "id": "m3", "content": "Our office door code is 4417#, password: K1ngfisher!"},
        ],
        user_id="sam",
        occurred_at=datetime(2024, 6, 3, 9, 30, tzinfo=timezone.utc),
    )
    for hit in mx.search("who is Priya?", user_id="sam", limit=3):
        print(f"{hit.score:.3f}  {hit.memory.memory_type.value:15}  {hit.text}  <- {hit.memory.source_ids}")
    print("core:", mx.core_memory(user_id="sam")["human"].value.replace("\n", " | "))
    secret = mx.list(user_id="sam", memory_types=["knowledge_vault"])[0]
    print("vault (masked):", secret.caption, secret.secret_value)
    semantic = mx.list(user_id="sam", memory_types=["semantic"])[0]
    mx.update(semantic.id, user_id="sam", details="Ran Berlin in 2023.")
    print("history:", [(e.operation.value, e.actor) for e in mx.history(semantic.id, user_id="sam")])
    mx.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="mirix-quickstart-"))
