"""`benchmarks/local_model.py` reads what the server says it did from its verbose log."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from local_model import server_reading  # noqa: E402

LOG = """\
INFO:     127.0.0.1:1 - "POST /v1/chat/completions HTTP/1.1" 200 OK
Llama.generate: 19 prefix-match hit, remaining 669 prompt tokens to eval
llama_perf_context_print: prompt eval time =    7000.00 ms /   669 tokens (   10.46 ms per token,    95.56 tokens per second)
llama_perf_context_print:        eval time =     600.00 ms /    15 runs   (   40.00 ms per token,    25.00 tokens per second)
Llama.generate: 268 prefix-match hit, remaining 441 prompt tokens to eval
llama_perf_context_print: prompt eval time =    4000.00 ms /   441 tokens (    9.07 ms per token,   110.25 tokens per second)
llama_perf_context_print:        eval time =    4000.00 ms /   100 runs   (   40.00 ms per token,    25.00 tokens per second)
"""


def test_the_servers_log_gives_tokens_read_reused_and_written_with_their_speeds():
    reading = server_reading(LOG)
    assert reading["calls"] == 2
    assert reading["prompt_tokens_read"] == 669 + 441 and reading["prompt_tokens_reused"] == 19 + 268
    assert reading["prompt_seconds"] == 11.0 and reading["read_tokens_per_s"] == round(1110 / 11, 1)
    assert reading["completion_tokens"] == 115 and reading["completion_seconds"] == 4.6
    assert reading["write_tokens_per_s"] == 25.0


def test_a_log_without_calls_reads_as_nothing_done():
    reading = server_reading('INFO:     Uvicorn running on http://127.0.0.1:58082\n')
    assert reading["calls"] == 0 and reading["prompt_tokens_read"] == 0 and reading["read_tokens_per_s"] is None
