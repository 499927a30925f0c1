"""What a model may write, judged against its batch (mirix_py/agents/grounding.py)."""

import pytest

from mirix_py.agents.grounding import (
    offered_memory_types, ungrounded_problem, vault_value_candidates, vault_value_problem, vocabulary,
)
from mirix_py.records import MemoryType

LOCOMO_GREETING = ["Hey Mel! Good to see you! How have you been?",
                   "Hey Caroline! Good to see you! I'm swamped with the kids & work. What's up with you?",
                   "I went to a LGBTQ support group yesterday and it was so powerful."]


def test_small_talk_offers_no_vault_value_and_no_vault():
    assert vault_value_candidates(LOCOMO_GREETING) == []
    assert MemoryType.knowledge_vault not in offered_memory_types(LOCOMO_GREETING)
    assert len(offered_memory_types(LOCOMO_GREETING)) == len(MemoryType) - 1


@pytest.mark.parametrize("text", [
    "We met on 2023-05-07 at 8:30pm, my 1st time, it cost $50 and 50% of us came in the 90s, in 2022.",
    "Kids & work, 2 jobs, 10k steps, 5km run on 7/5.",
])
def test_dates_times_amounts_and_counts_are_no_vault_values(text):
    assert vault_value_candidates([text]) == []


def test_values_shaped_like_secrets_are_candidates_card_groups_joined():
    text = "card 4111 1111 1111 1111, pw tr0ub4dor&3, mail ana.lee@acme.com, call +1-555-0100."
    candidates = vault_value_candidates([text])
    assert {"4111 1111 1111 1111", "tr0ub4dor&3", "ana.lee@acme.com", "+1-555-0100"} <= set(candidates)
    assert MemoryType.knowledge_vault in offered_memory_types([text])


@pytest.mark.parametrize("value, caption, why", [
    ("your_secret_password_for_caroline", "", "does not occur in this batch"),
    ("climbing", "", "plain words"),
    ("2023-05-07", "", "a date"),
    ("[vault:kv_1]", "", "already stored"),
    ("7781-kestrel", "cabin wifi 7781-kestrel", "caption contains"),
    ("  ", "", "empty"),
])
def test_vault_values_that_cannot_be_stored_say_why(value, caption, why):
    texts = ["The wifi code at the cabin is 7781-kestrel, we go climbing on 2023-05-07. [vault:kv_1]"]
    problem = vault_value_problem(value, caption, texts)
    assert problem is not None and why in problem


def test_a_value_copied_from_the_batch_is_accepted():
    assert vault_value_problem("7781-kestrel", "cabin wifi", ["The wifi code at the cabin is 7781-kestrel."]) is None


def test_a_copied_prompt_example_is_not_grounded():
    """The local model stored the procedural prompt's own example for a LoCoMo greeting."""
    shown = vocabulary(["[id=D1:3] 2023-05-08T13:56 Caroline (text): " + LOCOMO_GREETING[2]])
    problem = ungrounded_problem(["Deploy the trail-map site", "export the sales report", "email it to Priya"], shown)
    assert problem is not None and "deploy" in problem and "nothing_to_record" in problem


def test_a_paraphrase_and_short_texts_are_grounded():
    shown = vocabulary(["[id=D1:3] 2023-05-08T13:56 Caroline (text): " + LOCOMO_GREETING[2]])
    assert ungrounded_problem(["Caroline attended a support group meeting and found it powerful."], shown) is None
    assert ungrounded_problem(["has a cat"], shown) is None  # too few content words to judge
