"""Several workers draining one input log: each input is processed once."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

from cryptography.fernet import Fernet

from mirix_py.engine import Mirix
from mirix_py.records import InputKind, InputRecord, Message, utcnow
from mirix_py.settings import Settings
from mirix_py.store.inputs import new_worker_id

ROOT = Path(__file__).resolve().parents[2]


def _pending_inputs(mx: Mirix, user_id: str, count: int) -> list[str]:
    records = [InputRecord(user_id=user_id, kind=InputKind.text, occurred_at=utcnow(),
                           messages=[Message(content=f"Worker test note {i}: Anna lives in Oslo.")]) for i in range(count)]
    mx.inputs.append(records)
    return [r.id for r in records]


def _episodes_per_input(mx: Mirix, user_id: str) -> Counter:
    return Counter(i for m in mx.list(user_id=user_id, memory_types=["episodic"], limit=10_000)
                   for i in m.source_ids if i.startswith("in_"))


def test_claims_are_exclusive_between_threads(mx_sqlite, user_id):
    ids = _pending_inputs(mx_sqlite, user_id, 40)
    taken: list[list[str]] = [[], []]

    def claimer(slot: int) -> None:
        worker = new_worker_id() + f"-{slot}"
        while True:
            got = mx_sqlite.inputs.claim(worker, limit=3)
            if not got:
                return
            taken[slot].extend(r.id for r in got)

    threads = [threading.Thread(target=claimer, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(taken[0] + taken[1]) == sorted(ids)
    assert not set(taken[0]) & set(taken[1])


def test_two_worker_processes_on_postgres_do_each_input_once(tmp_path, embedder, pg_schema_url, chroma_url, user_id):
    key = Fernet.generate_key().decode()
    settings = Settings(data_dir=tmp_path / "producer", database_url=pg_schema_url, chroma_url=chroma_url, vault_key=key)
    with Mirix(settings=settings, embedder=embedder, resume=False) as mx:
        ids = _pending_inputs(mx, user_id, 48)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MIRIX_DATABASE_URL": pg_schema_url, "MIRIX_CHROMA_URL": chroma_url,
           "MIRIX_VAULT_KEY": key, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    workers = [subprocess.Popen([sys.executable, "-m", "mirix_py.cli", "worker", "--once",
                                 "--data-dir", str(tmp_path / f"w{i}")], env=env, cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for i in range(2)]
    outputs = [w.communicate(timeout=300)[0] for w in workers]
    assert all(w.returncode == 0 for w in workers), outputs
    counts = [int(re.search(r"processed (\d+) input", o.strip().splitlines()[-1]).group(1)) for o in outputs]
    assert sum(counts) == len(ids)  # no input taken by both
    with Mirix(settings=settings, embedder=embedder, resume=False) as mx:
        per_input = _episodes_per_input(mx, user_id)
        assert set(per_input) == set(ids) and set(per_input.values()) == {1}
        assert all(mx.input_status(i).status.value == "processed" for i in ids)
        semantic = mx.list(user_id=user_id, memory_types=["semantic"])
        assert [m.name for m in semantic] == ["Anna"] or len(semantic) <= 2  # concurrent upserts of one name
        mx.delete_user(user_id)
