"""What a model may write, judged against its batch (mirix_py/agents/grounding.py)."""

import pytest

from mirix_py.agents.grounding import (
    copied_description, held_together, lead_name, misattributed, near_duplicate, offered_memory_types, same_name_repeat, ungrounded_problem, vault_value_candidates, vault_value_problem, vocabulary,
)
from mirix_py.records import MemoryType

LOCOMO_GREETING = ["Hey Mel! Good to see you! How have you been?",
                   "Hey Caroline! Good to see you! I'm swamped with the kids & work. What's up with you?",
                   "I went to a LGBTQ support group yesterday and it was so powerful."]


def test_small_talk_offers_no_vault_value_and_no_vault():
    assert vault_value_candidates(LOCOMO_GREETING) == []
    assert MemoryType.knowledge_vault not in offered_memory_types(LOCOMO_GREETING)
    # chat turns feed no procedure and no document either: only core, episodic and semantic are offered
    assert offered_memory_types(LOCOMO_GREETING) == [MemoryType.core, MemoryType.episodic, MemoryType.semantic]


def test_one_input_offers_no_episode_to_sum_up():
    # each input is kept word for word as its own episode: an episode across inputs needs two
    assert MemoryType.episodic not in offered_memory_types(LOCOMO_GREETING[:1])
    assert MemoryType.episodic in offered_memory_types(LOCOMO_GREETING[:2])
    assert MemoryType.episodic in offered_memory_types(["Inbox: 3 unread"], ["screenshot"])


def test_words_that_only_start_like_step_words_offer_no_procedure():
    assert MemoryType.procedural not in offered_memory_types(["It feels like stepping into another world."] * 2)
    assert MemoryType.procedural in offered_memory_types(["First, preheat the oven, then bake it for an hour."] * 2)
    assert MemoryType.procedural in offered_memory_types(["Two recipes from grandma for the weekend."] * 2)


def test_steps_and_documents_offer_procedural_and_resource():
    steps = "To reset it:\n1. unplug the router\n2. hold the button for ten seconds"
    assert MemoryType.procedural in offered_memory_types([steps])
    assert MemoryType.resource not in offered_memory_types([steps])
    assert MemoryType.resource in offered_memory_types(["Quarterly report"], ["document"])
    assert MemoryType.resource in offered_memory_types([" ".join(["word"] * 90)])
    # a long message written without spaces is long too (it counted as one word)
    note = "我们在上海的办公室下周一开始装修，所有员工请在周五之前把个人物品搬到三楼的会议室。" * 3
    assert MemoryType.resource in offered_memory_types([note])
    assert MemoryType.resource not in offered_memory_types(["我明天去上海。"])


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
    assert problem is not None and "Priya" in problem and "nothing_to_record" in problem
    problem = ungrounded_problem(["Deploy the trail-map site", "export the sales report"], shown)
    assert problem is not None and "deploy" in problem


def test_a_paraphrase_and_short_texts_are_grounded():
    shown = vocabulary(["[id=D1:3] 2023-05-08T13:56 Caroline (text): " + LOCOMO_GREETING[2]])
    assert ungrounded_problem(["Caroline attended a support group meeting and found it powerful."], shown) is None
    assert ungrounded_problem(["has a cat"], shown) is None  # too few content words to judge


@pytest.mark.parametrize("entry_type, value, fits", [
    ("password", "preferences/needs", False),  # a phrase from the chat the local model filed as a password
    ("password", "C++", False),
    ("password", "tr0ub4dor&3", True),
    ("password", "4417", True),  # a PIN
    ("card_number", "4111 1111 1111 1111", True),
    ("card_number", "4111 1111 1111 1112", False),  # fails Luhn
    ("phone", "+1-555-0100", False),  # too few digits for a phone
    ("phone", "+44 20 7946 0958", True),
    ("email", "ana.lee@acme.com", True),
    ("email", "ana.lee", False),
    ("address", "12 Rue de Rivoli, Paris", True),
    ("address", "Paris", False),
    ("no_such_type", "tr0ub4dor&3", False),
])
def test_a_vault_value_must_have_its_entry_types_shape(entry_type, value, fits):
    texts = [f"here it is: {value}"]
    problem = vault_value_problem(value, "", texts, entry_type)
    assert (problem is None) is fits, problem


def test_the_vault_is_not_offered_for_values_no_entry_type_fits():
    assert MemoryType.knowledge_vault not in offered_memory_types(["I learned C++ and preferences/needs matter"])


def test_a_name_the_batch_never_gave_is_not_grounded():
    shown = vocabulary(["[id=D1:3] 2023-05-08T13:56 Caroline (text): " + LOCOMO_GREETING[2]])
    problem = ungrounded_problem(["Caroline went to a support group with Jessica in May"], shown)
    assert problem is not None and "Jessica" in problem and "May" not in problem


def test_a_near_repeat_of_a_turn_or_a_listed_memory_is_found():
    turns = [("D1:3", LOCOMO_GREETING[2]), ("D1:2", LOCOMO_GREETING[1])]
    assert near_duplicate("Caroline went to an LGBTQ support group yesterday", turns) == "D1:3"
    assert near_duplicate("Caroline found the LGBTQ group powerful and plans to become a counselor", turns) is None


def test_held_facts_joined_into_one_line_are_held_together():
    lines = [("the human block", "John: is a shooting guard for the team"), ("the human block", "John: likes cities")]
    assert held_together("John is a shooting guard for the team and likes cities", lines, "the blocks") == "the blocks"
    assert held_together("John is a shooting guard who moved to Boston recently", lines, "the blocks") is None


def test_a_fact_about_the_same_name_is_a_repeat_when_it_says_nothing_new():
    held = [("sem_1", "Tom: Tom is Ada's brother, a pilot for a regional airline"), ("sem_2", "Ines: a pilot")]
    assert same_name_repeat("Tom", "Tom is a pilot", held) == "sem_1"
    assert same_name_repeat("tom", "a pilot for a regional airline", held) == "sem_1"
    assert same_name_repeat("Tom", "Tom moved to Oslo", held) is None  # something new about him
    assert same_name_repeat("Ada", "a pilot", held) is None  # another one


def test_a_short_text_is_a_repeat_only_of_nearly_the_same_words():
    held = [("D1:1", "Yesterday I went climbing with my brother Tom."), ("sem_1", "Tom: Tom is Ada's brother")]
    assert near_duplicate("Tom Tom is Ada's brother", held) == "sem_1"
    assert near_duplicate("has a brother, Tom", held) is None  # a short line inside a longer turn is new
    assert near_duplicate("brother", held) is None


def test_arguments_have_character_references_decoded_but_a_secret_is_left_as_sent():
    from mirix_py.agents.runner import unescaped

    args = {"text": "It&#39;s so rewarding &amp; fun", "steps": ["mix &quot;well&quot;"], "n": 3,
            "secret_value": "p&#39;ss&amp;1", "plain": "no entity"}
    assert unescaped(args) == {"text": "It's so rewarding & fun", "steps": ['mix "well"'], "n": 3,
                               "secret_value": "p&#39;ss&amp;1", "plain": "no entity"}


def test_within_limit_keeps_the_form_offered_types_and_leaves_core_out_first():
    from mirix_py.agents.model_extractor import within_limit

    core, episodic, semantic, procedural = (MemoryType.core, MemoryType.episodic, MemoryType.semantic,
                                            MemoryType.procedural)
    assert within_limit([core, episodic, semantic, procedural], 3) == ([episodic, semantic, procedural], [core])
    assert within_limit([core, episodic, semantic], 3) == ([core, episodic, semantic], [])
    assert within_limit([semantic, core, semantic], 1) == ([semantic], [core])


def test_a_letter_the_batch_never_held_is_not_grounded():
    """The local model wrote "support\\u3927s" for "support's" (conv-30): a broken copy of a turn."""
    shown = vocabulary(["[id=D13:21] 2023-06-13T20:29 Jon (text): Thanks, Gina! Your support's really been awesome."])
    problem = ungrounded_problem(["Jon (messages): Thanks, Gina! Your support\u3927s really been awesome."], shown)
    assert problem is not None and "\u3927" in problem and "nothing_to_record" in problem
    assert ungrounded_problem(["Jon thanks Gina for her support, awesome!"], shown) is None
    accented = vocabulary(["[id=D2:1] 2023-06-13T20:29 Zoë (text): the café on the corner was lovely"])
    assert ungrounded_problem(["Zoë liked the café on the corner"], accented) is None


def test_a_text_copying_a_tools_description_is_named_unless_a_message_says_it():
    described = ["One sentence: who did what, in the words of the messages.", "When it happened, ISO 8601."]
    assert copied_description(["Who did what, in the words of the messages."], described) == described[0]
    assert copied_description(["Nate won his first video game tournament."], described) is None
    assert copied_description(["When it happened"], described) == described[1]
    assert copied_description(["Who did?"], described) is None  # too short to judge
    said = ["Ada: who did what, in the words of the messages? I asked the editor."]
    assert copied_description(["Who did what, in the words of the messages."], described, said) is None


SCREENPLAY = [("Joanna", "I finally finished my first full screenplay and printed it last Friday!"),
              ("Nate", "Wow, congrats! I won my first video game tournament last week.")]


def test_one_speakers_news_filed_under_the_other_is_misattributed():
    """conv-42's run filed "Nate finished his screenplay" where Joanna said it of herself."""
    who, words = misattributed("Nate", "Nate finished his first full screenplay and printed it.", SCREENPLAY)
    assert who == "Joanna" and {"screenplay", "printed"} <= set(words)
    assert misattributed("Joanna", "Joanna finished her first full screenplay and printed it.", SCREENPLAY) is None
    assert misattributed("Nate", "Nate won a video game tournament last week.", SCREENPLAY) is None


def test_what_others_say_of_the_subject_may_be_filed_under_the_subject():
    turns = [("Joanna", "You dyed your hair? It looks great!"), ("Nate", "Thanks! I wanted something bold and bright.")]
    assert misattributed("Nate", "Nate dyed his hair something bold and bright", turns) is None
    # a name nobody in the batch speaks as, one speaker only, or too few words: not judged
    assert misattributed("Tom", "Tom finished his first full screenplay", SCREENPLAY) is None
    assert misattributed("Nate", "Nate finished screenplay printed", SCREENPLAY[:1]) is None
    assert misattributed("Nate", "Nate finished it", SCREENPLAY) is None


def test_the_subject_is_one_named_person_opening_the_text():
    people = ["Nate", "Joanna"]
    assert lead_name("Nate finished his screenplay", people) == "Nate"
    assert lead_name("nate finished his screenplay", people) == "Nate"
    assert lead_name("Nate and Joanna went hiking", people) is None
    assert lead_name("Nate's turtles are calm", people) is None
    assert lead_name("They went hiking", people) is None
