import pytest

from mirix_py.agents.offline.rules.core import MAX_FACT_CHARS, extract_self_statements as facts, is_job_word


# ---------------------------------------------------------------- names


@pytest.mark.parametrize(
    "text, expected",
    [
        ("My name is Alice.", ["name: Alice"]),
        ("my name's Bob Smith, nice to meet you", ["name: Bob Smith"]),
        ("Hi, I'm Alice, nice to meet you.", ["name: Alice"]),
        ("Hello! I'm Caroline.", ["name: Caroline"]),
        ("I'm Caroline", ["name: Caroline"]),
        ("You can call me Liz.", ["name: Liz"]),
    ],
)
def test_names(text, expected):
    assert facts(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Hey Mel! Good to see you! I'm swamped with the kids & work.",
        "I'm so happy for you!",
        "I'm Good!",
        "I'm fine, thanks",
        "Honestly I'm Sorry.",
        "I'm not sure, Caroline.",
        "I'm excited, Mel!",
        "Am I Alice?",
        "I'm going to Paris.",
        "I'm American, so yes.",
    ],
)
def test_not_names(text):
    assert not any(f.startswith("name:") for f in facts(text))


# ---------------------------------------------------------------- preferences


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I like hiking in the mountains.", ["likes hiking in the mountains"]),
        ("I love painting because it calms me", ["loves painting"]),
        ("I really enjoy reading books too.", ["enjoys reading books"]),
        ("I prefer tea over coffee", ["prefers tea over coffee"]),
        ("I hate the cold.", ["hates the cold"]),
        ("I dislike crowds", ["dislikes crowds"]),
        ("I don't like spicy food", ["dislikes spicy food"]),
        ("I can't stand loud music!", ["can't stand loud music"]),
        ("I'm a huge fan of jazz music.", ["is a fan of jazz music"]),
        ("my favorite color is blue", ["favorite color: blue"]),
        ("My favourite band is Radiohead!", ["favorite band: Radiohead"]),
        ("Harry Potter is my favorite book. It's so immersive!", ["favorite book: Harry Potter"]),
        ("My favorite book: Dune by Frank Herbert.", ["favorite book: Dune by Frank Herbert"]),  # a colon for "is"
        ("I love coconut milk, but I also enjoy chocolate.", ["loves coconut milk", "enjoys chocolate"]),
        ("I love camping trips with my family.", ["loves camping trips with their family"]),
        ("That's why I love volunteering!", ["loves volunteering"]),
    ],
)
def test_preferences(text, expected):
    assert facts(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I love that!",
        "I love you guys",
        "I love it, thanks Mel!",
        "I like to think so.",
        "I love how you did that.",
        "I love the self-acceptance and love theme in this one.",
        "I love his tech and that sarcastic humor.",
        "I also like holding them.",
        "Yeah, I love to.",
        "Being my own boss and doing something I love is awesome.",
        "I'm grateful to have a job I enjoy every day.",
        "Do you like painting?",
        "I'd like to go there.",
        "I feel like it's time.",
        "Glad you like it.",
        "They love learning about animals.",
        "My favorite part was the ending.",
        "My favorite one is this.",
    ],
)
def test_not_preferences(text):
    assert facts(text) == []


# ---------------------------------------------------------------- identity


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I'm a teacher at Lincoln High, and I love it.", ["is a teacher at Lincoln High"]),
        ("I am a software engineer.", ["is a software engineer"]),
        ("now that I'm an assistant manager- it's like a stepping stone", ["is an assistant manager"]),
        ("I'm a transgender woman", ["is a transgender woman"]),
        ("I'm a shooting guard for the team and our season opener is next week", ["is a shooting guard for the team"]),
        ("I work at Acme Corp.", ["works at Acme Corp"]),
        ("I work as a nurse at the local hospital.", ["works as a nurse at the local hospital"]),
        ("I've been working for Google since 2019", ["works for Google"]),
        ("I live in Berlin with my partner.", ["lives in Berlin with their partner"]),
        ("I'm from Sweden originally", ["is from Sweden"]),
        ("I'm allergic to peanuts!", ["is allergic to peanuts"]),
        ("I'm allergic to most reptiles and animals with fur.", ["is allergic to most reptiles and animals with fur"]),
        ("My birthday is on May 5th.", ["birthday: May 5th"]),
        ("My name is Bob Smith and I live in Berlin.", ["name: Bob Smith", "lives in Berlin"]),
    ],
)
def test_identity(text, expected):
    assert facts(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I'm a bit tired today",
        "I'm a little worried about it",
        "I'm a mess right now",
        "I'm a big believer in self-care",
        "I'm a bit of a homebody",
        "I work at my own pace",
        "I work at it every day",
        "I live in fear of spiders",
        "I live in the moment",
        "Where do I live in this story?",
        "My birthday is coming up soon",
        "I'm from work, so tired",
    ],
)
def test_not_identity(text):
    assert facts(text) == []


# ---------------------------------------------------------------- shape


def test_deduplicates_and_keeps_text_order():
    text = "I love jazz. I love jazz! My name is Ann. I work at Acme."
    assert facts(text) == ["loves jazz", "name: Ann", "works at Acme"]


def test_facts_are_capped():
    text = "I love " + " ".join(["very long phrase"] * 60)
    [fact] = facts(text)
    assert len(fact) <= len("loves ") + MAX_FACT_CHARS


def test_empty():
    assert facts("") == []
    assert facts("   ") == []


@pytest.mark.parametrize(
    "text",
    [
        "Hey Caroline! Good to see you! I'm swamped with the kids & work. What's up with you? Anything new?",
        "I went to a LGBTQ support group yesterday and it was so powerful.",
        "Wow, Caroline, that's gorgeous! How does art help you with your self-discovery?",
        "Thanks, Mel! That's so sweet of you.",
    ],
)
def test_ordinary_chat_yields_nothing(text):
    assert facts(text) == []


@pytest.mark.parametrize("word", ["headteacher", "head-teacher", "schoolteacher", "copilot", "songwriter",
                                  "translator", "inspector", "professor", "zookeeper", "bartender", "pharmacist"])
def test_a_job_word_by_its_form(word):
    assert is_job_word(word)


@pytest.mark.parametrize("word", ["visitor", "brother", "winner", "beginner", "partner", "monster", "weather", "fan"])
def test_words_of_those_forms_that_name_no_job(word):
    assert not is_job_word(word)


def test_a_compound_job_is_read_about_the_speaker():
    assert facts("I'm a headteacher now.") == ["is a headteacher"]
