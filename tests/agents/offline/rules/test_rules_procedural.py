from dataclasses import FrozenInstanceError

import pytest

from mirix_py.agents.offline.rules.procedural import ProcedureDraft, extract_procedure


def test_numbered_list_with_heading():
    text = "How to deploy the app:\n1. Build the image\n2. Push it to the registry\n3. Apply the manifest"
    draft = extract_procedure(text)
    assert draft == ProcedureDraft(
        summary="How to deploy the app",
        steps=["Build the image", "Push it to the registry", "Apply the manifest"],
        entry_type="workflow",
    )


@pytest.mark.parametrize(
    "text",
    [
        "1) Preheat the oven\n2) Mix the batter\n3) Bake for 20 minutes",
        "Step 1: Preheat the oven\nStep 2: Mix the batter\nStep 3: Bake for 20 minutes",
        "step 1 - Preheat the oven\nstep 2 - Mix the batter\nstep 3 - Bake for 20 minutes",
        "- Preheat the oven\n- Mix the batter\n- Bake for 20 minutes",
        "* Preheat the oven\n* Mix the batter\n* Bake for 20 minutes",
        "• Preheat the oven\n• Mix the batter\n• Bake for 20 minutes",
    ],
)
def test_list_styles(text):
    draft = extract_procedure(text)
    assert draft is not None
    assert draft.steps == ["Preheat the oven", "Mix the batter", "Bake for 20 minutes"]
    assert draft.summary == "Steps: Preheat the oven"
    assert draft.entry_type == "workflow"


def test_two_items_are_enough():
    draft = extract_procedure("1. Open the lid\n2. Pour")
    assert draft is not None and draft.steps == ["Open the lid", "Pour"]


def test_heading_is_the_line_right_before_the_list():
    text = "Thanks for asking!\nMy morning routine:\n\n- stretch\n- coffee\n- journal\n\nThat's it."
    draft = extract_procedure(text)
    assert draft.summary == "My morning routine"
    assert draft.steps == ["stretch", "coffee", "journal"]


def test_markdown_heading_is_cleaned():
    draft = extract_procedure("## Release checklist:\n1. Tag\n2. Publish")
    assert draft.summary == "Release checklist"


def test_script_when_most_steps_are_commands():
    text = "Setup:\n1. git clone https://example.com/repo.git\n2. cd repo\n3. pip install -e .\n4. make test"
    draft = extract_procedure(text)
    assert draft.entry_type == "script"
    assert draft.steps[0] == "git clone https://example.com/repo.git"


def test_script_from_shell_prompt_lines():
    draft = extract_procedure("Run these:\n$ docker compose up -d\n$ curl localhost:8080/health")
    assert draft.entry_type == "script"
    assert draft.steps == ["$ docker compose up -d", "$ curl localhost:8080/health"]


def test_commands_in_a_minority_stay_a_workflow():
    draft = extract_procedure("1. Write the release notes\n2. Ask Bob to review\n3. git push")
    assert draft.entry_type == "workflow"


@pytest.mark.parametrize("heading", ["Guide to sourdough:", "Tips for sleeping well:", "Some advice:"])
def test_guide_when_heading_says_so(heading):
    draft = extract_procedure(f"{heading}\n- no screens after 10\n- keep the room dark")
    assert draft.entry_type == "guide"


def test_inline_first_then_finally():
    draft = extract_procedure("To make tea: first boil water, then add the leaves, finally steep for 3 minutes.")
    assert draft == ProcedureDraft(
        summary="To make tea", steps=["boil water", "add the leaves", "steep for 3 minutes"], entry_type="workflow"
    )


def test_inline_without_heading_uses_first_step():
    draft = extract_procedure("Sure! First, open settings, then tap Privacy, and finally turn off tracking.")
    assert draft.summary == "Steps: open settings"
    assert draft.steps == ["open settings", "tap Privacy", "turn off tracking"]


def test_inline_with_several_thens():
    draft = extract_procedure("First sand the board, then prime it, then paint it, and finally seal it.")
    assert draft.steps == ["sand the board", "prime it", "paint it", "seal it"]


def test_numbered_list_must_be_consecutive_from_one():
    assert extract_procedure("5) no\n6) yes") is None
    draft = extract_procedure("1. a step\n2. b step\n4. skipped")
    assert draft.steps == ["a step", "b step"]


@pytest.mark.parametrize(
    "text",
    [
        "Hey Mel! Good to see you! I'm swamped with the kids & work.",
        "I went to a LGBTQ support group yesterday and it was so powerful.",
        "First I went to the store, then I went home, and finally I cooked dinner.",
        "First we hiked up the hill, then we had lunch, and finally we drove back.",
        "It was my first time there, then it rained, finally it cleared up.",
        "At first it was hard, then it got easier.",
        "first, then",
        "- just one bullet",
        "1. only one numbered line",
        "The score was 1. Then 2.",
        "Thanks! I finished the painting last week and then framed it.",
        "",
        "   ",
    ],
)
def test_ordinary_chat_is_not_a_procedure(text):
    assert extract_procedure(text) is None


def test_draft_is_frozen():
    draft = extract_procedure("1. a\n2. b")
    with pytest.raises(FrozenInstanceError):
        draft.summary = "x"  # type: ignore[misc]
    assert draft.summary != "x"
