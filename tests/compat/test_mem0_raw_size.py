"""mirix_py.compat.mem0: an add with `infer=False` is held to `max_input_chars` as an inferred one is:
it kept a 250,000-character message whole where the inferred add (and `Mirix.add`) refused it."""

from __future__ import annotations

import pytest

from mirix_py.compat.mem0 import Memory
from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.settings import Settings


def test_a_verbatim_add_over_max_input_chars_is_refused_and_writes_nothing(tmp_path, embedder):
    with Mirix(settings=Settings(data_dir=tmp_path / "d", max_input_chars=100), embedder=embedder) as mx:
        m = Memory(mx=mx)
        messages = [{"role": "user", "content": "a" * 60}, {"role": "assistant", "content": "b" * 41}]
        for infer in (True, False):
            with pytest.raises(InvalidInput, match="input is 101 characters, over the limit of 100"):
                m.add(messages, user_id="ada", infer=infer, metadata={"password": "Tr0ub4dor&3q"})
        assert m.get_all(user_id="ada") == {"results": []}
        kept = m.add(messages[:1], user_id="ada", infer=False)["results"]
        assert [r["memory"] for r in kept] == ["a" * 60]
