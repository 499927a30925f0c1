"""The vault rules on the labelled secrets corpus (issue 17): recall >= 0.98 with precision >= 0.95, and
no secret survives in a caption or in redacted text."""

from pathlib import Path

import pytest

from mirix_py.eval.secret_eval import Example, parse_corpus, score
from mirix_py.secrets.detection import find_secrets, redact

CORPUS_PATH = Path(__file__).resolve().parents[1] / "fixtures" / "secrets_corpus.jsonl"
CORPUS = parse_corpus(CORPUS_PATH.read_text(encoding="utf-8").splitlines())
POSITIVES = [e for e in CORPUS if e.secrets]


def _id(example: Example) -> str:
    return example.text[:40]


def test_corpus_is_large_and_covers_every_kind_and_source():
    assert len(CORPUS) >= 150
    kinds = {kind for e in CORPUS for kind, _ in e.secrets}
    assert {"password", "api_key", "card_number", "card_cvv", "card_expiry", "bank_account",
            "recovery_code"} <= kinds
    assert {e.source for e in POSITIVES} == {"chat", "ocr", "document"}
    assert sum(1 for e in CORPUS if not e.secrets) >= 60  # near misses
    assert sum(1 for e in CORPUS if len(e.secrets) >= 2) >= 20  # several secrets in one text


def test_recall_and_precision_on_the_corpus():
    result = score(CORPUS, find_secrets)
    report = "\n".join(f"{e['text']!r}: missed {e['missed']}, false positives {e['false_positives']}"
                       for e in result.errors)
    assert result.recall() >= 0.98, report
    assert result.precision() >= 0.95, report


@pytest.mark.parametrize("example", POSITIVES, ids=_id)
def test_a_caption_never_holds_a_secret(example):
    matches = find_secrets(example.text)
    for match in matches:
        for _, value in example.secrets:
            assert value not in match.caption
        assert match.value not in match.caption
        assert "[secret]" in match.caption and len(match.caption) <= 200


@pytest.mark.parametrize("example", POSITIVES, ids=_id)
def test_redacted_text_holds_no_labelled_secret(example):
    matches = find_secrets(example.text)
    out = redact(example.text, matches)
    found = {m.value for m in matches}
    for _, value in example.secrets:
        if value in found:  # a value the rules detect must be gone everywhere in the text
            assert value not in out


# ---------------------------------------------------------------- the cases from issue 17


def kinds(text):
    return [(m.entry_type, m.value) for m in find_secrets(text)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("My bank PIN is 4921 and the wifi password at home is CorrectHorse!42",
         [("password", "4921"), ("password", "CorrectHorse!42")]),
        ("The wifi password at home is CorrectHorse!42", [("password", "CorrectHorse!42")]),
        ("The password for the staging db is Stag!ng2024 and for prod it is Pr0d#Vault77",
         [("password", "Stag!ng2024"), ("password", "Pr0d#Vault77")]),
        ("login: ada / pass: tr0ub4dor&3", [("password", "tr0ub4dor&3")]),
        ("Door code: 7781", [("password", "7781")]),
        ("cvv 123", [("card_cvv", "123")]),
        ("The passphrase for the backup drive is: correct horse battery staple",
         [("password", "correct horse battery staple")]),
    ],
)
def test_the_cases_reported_in_the_issue(text, expected):
    assert kinds(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "my password manager is great",
        "I forgot my password again",
        "Order number 20394857 will arrive Tuesday",
        "We met on 05/08/2023 and again on 12/09/2023.",
        "The offer expires 12/31",
        "Upgrade to version 2.13.0 of torch",
        "The zip code is 94110",
        "It costs $4,921.00 plus tax",
    ],
)
def test_near_misses(text):
    assert find_secrets(text) == []


def test_placeholders_are_not_secrets_again():
    # text that was redacted once must come out of the rules unchanged (doctor --secrets scans it)
    text = "My bank PIN is 4921 and the wifi password at home is CorrectHorse!42"
    once = redact(text, find_secrets(text), lambda m: "[vault:kv_0123abcd]")
    assert find_secrets(once) == []
    assert find_secrets("password: [redacted]") == [] and find_secrets("Password: ********") == []


def test_a_value_repeated_without_its_cue_is_found_there_too():
    text = "The alarm code is 2468. Again: 2468, not 24689."
    matches = find_secrets(text)
    assert [(m.entry_type, m.value) for m in matches] == [("password", "2468")] * 2
    assert redact(text, matches) == "The alarm code is [redacted]. Again: [redacted], not 24689."


def test_card_cvv_and_expiry_need_a_card_nearby():
    assert kinds("my card is 5555 5555 5555 4444, exp 11/26, cvv 737") == [
        ("card_number", "5555 5555 5555 4444"), ("card_expiry", "11/26"), ("card_cvv", "737")]
    assert kinds("The milk expires 04/27") == []
    assert kinds("CID 4821 was assigned to the cluster") == []


def test_sensitivities_of_the_new_kinds():
    by_kind = {m.entry_type: m.sensitivity for m in find_secrets(
        "Visa 4111111111111111 expires 08/2028 security code 492; backup code: 5521-8890; "
        "account number 12345678")}
    assert by_kind == {"card_number": "high", "card_expiry": "medium", "card_cvv": "high",
                       "recovery_code": "high", "bank_account": "high"}


def test_caption_guard_when_the_secret_spells_part_of_the_description():
    [m] = find_secrets('the password is "mentioned"')  # the caption starts "password mentioned: "
    assert m.value == "mentioned" and "mentioned" not in m.caption


def test_many_secrets_in_a_long_text_stay_fast_and_captions_short():
    import time

    text = " ".join(f"line {i}: password: Ab{i}!x" for i in range(3000))
    t0 = time.perf_counter()
    matches = find_secrets(text)
    assert time.perf_counter() - t0 < 10  # linear per match; the old captions were quadratic
    assert len(matches) == 3000
    assert all(len(m.caption) <= 200 and m.value not in m.caption for m in matches[:50])


def test_parse_corpus_rejects_a_label_that_is_not_in_the_text():
    with pytest.raises(ValueError):
        parse_corpus(['{"text": "PIN 1234", "secrets": [{"type": "password", "value": "9999"}]}'])


def test_score_counts_per_type():
    examples = [Example("PIN 1234", (("password", "1234"),)), Example("nothing here", ()),
                Example("cvv 123 and pin 9876", (("card_cvv", "123"),))]
    result = score(examples, find_secrets)
    assert (result.tp["password"], result.fp["password"], result.fn["password"]) == (1, 1, 0)
    assert result.recall() == 1.0 and result.precision() == 2 / 3
    assert [r["type"] for r in result.rows()] == ["card_cvv", "password", "all"]


def test_the_corpus_benchmark_runs_at_full_size(tmp_path):
    """`benchmarks/secrets_corpus.py` (the whole corpus is small): its JSON agrees with the scoring here."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "secrets.json"
    run = subprocess.run([sys.executable, str(root / "benchmarks" / "secrets_corpus.py"), "--out", str(out)],
                         capture_output=True, text=True, timeout=300, cwd=root)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "all" in run.stdout and out.exists() and json.loads(out.read_text())
