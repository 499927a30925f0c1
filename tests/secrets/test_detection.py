from dataclasses import FrozenInstanceError

import pytest

from mirix_py.secrets.detection import SecretMatch, find_secrets, redact


def kinds(text):
    return [(m.entry_type, m.value) for m in find_secrets(text)]


# ---------------------------------------------------------------- positives


def test_email_is_low_sensitivity():
    [m] = find_secrets("Write to alice.smith+news@example.co.uk when you can.")
    assert m.entry_type == "email"
    assert m.value == "alice.smith+news@example.co.uk"
    assert m.sensitivity == "low"


@pytest.mark.parametrize(
    "text, value",
    [
        ("Call me at (555) 123-4567 tomorrow", "(555) 123-4567"),
        ("my cell is 415-555-0123.", "415-555-0123"),
        ("office: 415.555.0123", "415.555.0123"),
        ("ring +44 20 7946 0958 after six", "+44 20 7946 0958"),
        ("+1 415-555-0123", "+1 415-555-0123"),
        ("my phone number is 4155550123", "4155550123"),
        ("1-800-555-0199 is the hotline", "1-800-555-0199"),
    ],
)
def test_phone_numbers(text, value):
    [m] = find_secrets(text)
    assert (m.entry_type, m.value, m.sensitivity) == ("phone", value, "medium")


@pytest.mark.parametrize(
    "token",
    [
        "sk-abcdefghijklmnopqrstuvwxyz0123456789",
        "sk-proj-Ab3dEfGh1jKlMnOpQrStUvWxYz_0123456789",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
        "xoxb-1234567890-abcdefghij",
        "xoxp-1234567890-abcdefghij",
        "AKIAIOSFODNN7EXAMPLE",
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    ],
)
def test_prefixed_api_keys(token):
    [m] = find_secrets(f"here you go: {token} - keep it safe")
    assert (m.entry_type, m.value, m.sensitivity) == ("api_key", token, "high")


def test_cued_api_key_requires_machine_like_token():
    [m] = find_secrets("The api key: a1b2c3d4e5f6g7h8i9j0 works for staging")
    assert (m.entry_type, m.value) == ("api_key", "a1b2c3d4e5f6g7h8i9j0")
    assert find_secrets("The api key is something we should rotate regularly") == []


@pytest.mark.parametrize(
    "text, secret",
    [
        ("my password is hunter2", "hunter2"),
        ("My password is swordfish.", "swordfish"),
        ("password: Tr0ub4dor&3", "Tr0ub4dor&3"),
        ("wifi pwd=s3cr3tPass", "s3cr3tPass"),
        ("the passcode is 918273", "918273"),
        ("Password for the router is 'correcthorse'", "correcthorse"),
        ("my PIN is 4821", "4821"),
        # a generated password of letters only, hyphen-grouped: its inner capitals mark it, not a digit
        ("the staging password is xvhfauPEzD-PxWy\n0e90e0", "xvhfauPEzD-PxWy"),
    ],
)
def test_passwords_capture_only_the_token(text, secret):
    [m] = find_secrets(text)
    assert (m.entry_type, m.value, m.sensitivity) == ("password", secret, "high")


def test_card_number_must_pass_luhn():
    [m] = find_secrets("Use card 4111 1111 1111 1111 for the test order")
    assert (m.entry_type, m.value, m.sensitivity) == ("card_number", "4111 1111 1111 1111", "high")
    assert kinds("card 4111-1111-1111-1111") == [("card_number", "4111-1111-1111-1111")]
    assert kinds("card 4111111111111111") == [("card_number", "4111111111111111")]
    assert find_secrets("card 4111 1111 1111 1112") == []


def test_ssn():
    [m] = find_secrets("SSN 123-45-6789 on file")
    assert (m.entry_type, m.value, m.sensitivity) == ("id_number", "123-45-6789", "high")
    assert find_secrets("ref 000-12-3456") == []


def test_iban_checks_mod97():
    [m] = find_secrets("IBAN: DE89 3704 0044 0532 0130 00, thanks")
    assert (m.entry_type, m.value, m.sensitivity) == ("bank_account", "DE89 3704 0044 0532 0130 00", "high")
    assert kinds("GB82WEST12345698765432") == [("bank_account", "GB82WEST12345698765432")]
    assert find_secrets("DE89 3704 0044 0532 0130 01") == []


def test_multiple_secrets_in_order_without_overlap():
    text = "Email bob@example.com, call (555) 123-4567, password: pa55word!"
    matches = find_secrets(text)
    assert [m.entry_type for m in matches] == ["email", "phone", "password"]
    spans = [(m.start, m.end) for m in matches]
    assert spans == sorted(spans)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    assert all(text[m.start:m.end] == m.value for m in matches)


def test_overlap_prefers_more_specific_kind():
    # The digits inside the key must not also come out as a phone or card number.
    text = "token sk-proj-4155550123abcdefghijklmnopqrstuv"
    assert [m.entry_type for m in find_secrets(text)] == ["api_key"]


# ---------------------------------------------------------------- other scripts and invisible characters

KEY = "sk-live-7Hq2Xe4Rt6Yu8Io0Pa2Sd4Fg6"
AWS = "AKIAQ3EGT6LMNOP4RSTU"
GITHUB = "ghp_Q3eGt6LmNoP4rStU8vWxY2zA5bC7dE9fG1hJ"


@pytest.mark.parametrize(
    "text, key",
    [
        (f"我的API密钥是{KEY}请记住。", KEY),  # Chinese writes no space around it
        (f"APIキーは{KEY}です。", KEY),
        (f"제 API 키는 {KEY}입니다.", KEY),  # a Korean particle straight after it
        (f"المفتاح{KEY}شكرا", KEY),
        (f"המפתח שלי{KEY}תודה", KEY),
        (f"Ключ:{KEY}спасибо", KEY),
        (f"La clé est {KEY}é merci", KEY),
        (f"AWS密钥{AWS}不要告诉别人", AWS),
        (f"GitHub令牌{GITHUB}在这里", GITHUB),
        ("Slack токенxoxb-1234567890-abcdefghijспасибо", "xoxb-1234567890-abcdefghij"),
        ("JWT是eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhbUJ请",
         "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhbUJ"),
    ],
)
def test_a_key_next_to_letters_of_another_script_is_found_whole(text, key):
    [m] = find_secrets(text)
    assert (m.entry_type, m.value, text[m.start:m.end]) == ("api_key", key, key)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("请求头Bearer abcdefghij0123456789XYZ请", ("api_key", "abcdefghij0123456789XYZ")),
        ("邮箱是alice.smith@example.com请回复", ("email", "alice.smith@example.com")),
        ("电话+44 20 7946 0958谢谢", ("phone", "+44 20 7946 0958")),
        ("电话(555) 123-4567谢谢", ("phone", "(555) 123-4567")),
        ("bank account number 12345678请", ("bank_account", "12345678")),
        ("routing number 021000021请", ("bank_account", "021000021")),
        ("sort code 12-34-56请", ("bank_account", "12-34-56")),
        ("配置DB_PASSWORD=hunter22 然后", ("password", "hunter22")),
        ("连接postgres://ada:s3cretPw@db.example.com/x", ("password", "s3cretPw")),
        ("运行mysql -u root -ps3cretPw 然后", ("password", "s3cretPw")),
        ("邮箱password: Tr0ub4dor&3x", ("password", "Tr0ub4dor&3x")),
        ("登录pass: Tr0ub4dor&3x", ("password", "Tr0ub4dor&3x")),
        ("备份recovery code: 8f3k-29dj请", ("recovery_code", "8f3k-29dj")),
        ("钱包seed phrase: abandon ability able about above absent absorb abstract absurd abuse access accident请",
         ("recovery_code", "abandon ability able about above absent absorb abstract absurd abuse access accident")),
    ],
)
def test_every_shape_is_found_next_to_chinese(text, expected):
    assert kinds(text) == [expected]


def test_a_token_still_ends_only_where_its_ascii_run_ends():
    assert find_secrets(f"id {AWS}x7 and x{AWS}") == []  # part of a longer token: no AWS key
    assert find_secrets(f"my_{KEY}") == []


def test_no_cue_or_address_is_cut_out_of_a_latin_word():
    """Letters of other scripts end a word; accented Latin letters do not."""
    assert find_secrets("We stayed at the Hôtel Lutetia, booking 482913756, lovely place.") == []  # no cue "tel"
    assert find_secrets("Ho\u0302tel Lutetia, booking 482913756") == []  # the accent a combining mark
    assert "ller@example.com" not in [m.value for m in find_secrets("Écrivez à müller@example.com si besoin")]


@pytest.mark.parametrize(
    "mark",
    ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff", "\u200e"],
    ids=["zero-width space", "zero-width non-joiner", "zero-width joiner", "word joiner", "soft hyphen",
         "byte order mark", "left-to-right mark"],
)
def test_a_format_character_inside_a_key_is_read_through(mark):
    written = KEY[:16] + mark + KEY[16:]
    text = f"My API key is {written} ok."
    [m] = find_secrets(text)
    assert (m.entry_type, m.value, text[m.start:m.end]) == ("api_key", KEY, written)
    assert redact(text, [m]) == "My API key is [redacted] ok."  # no part of it is left


def test_format_characters_outside_a_secret_stay_where_they_are():
    text = f"\u200bAWS\u200b key {AWS}\u200b, card 4111\u200b1111\u200b1111\u200b1111."
    matches = find_secrets(text)
    assert [(m.entry_type, m.value) for m in matches] == [("api_key", AWS), ("card_number", "4111111111111111")]
    assert redact(text, matches) == "\u200bAWS\u200b key [redacted]\u200b, card [redacted]."
    assert all("\u200b" not in m.caption and "[secret]" in m.caption for m in matches)


# ---------------------------------------------------------------- captions


def test_caption_hides_every_secret():
    text = "My password is hunter2 and my email is bob@example.com"
    matches = find_secrets(text)
    assert len(matches) == 2
    for m in matches:
        assert "hunter2" not in m.caption
        assert "bob@example.com" not in m.caption
        assert "[secret]" in m.caption
    assert matches[0].caption.startswith("password mentioned: '")
    assert matches[1].caption.startswith("email address mentioned: '")


def test_caption_is_truncated_around_the_secret():
    text = "blah " * 100 + "my password is hunter2 " + "more " * 100
    [m] = find_secrets(text)
    assert len(m.caption) <= 200
    assert "[secret]" in m.caption
    assert "hunter2" not in m.caption


# ---------------------------------------------------------------- negatives (ordinary chat)


@pytest.mark.parametrize(
    "text",
    [
        "Hey Mel! Good to see you! I'm swamped with the kids & work.",
        "I went to a LGBTQ support group yesterday and it was so powerful.",
        "We met on 2023-05-08 and again on 8 May 2023.",
        "I ran 10000 steps and 5 miles in 2023, burning 1234567890 calories lol",
        "The years 1999 2000 2001 were wild.",
        "My password is hard to remember",
        "the new password is well-known to everyone",
        "the password is JavaScript and TypeScript",
        "I forgot my password again, ugh",
        "Password: make sure you pick a strong one",
        "The pin is broken on my backpack",
        "My score was 98-76 and then 12-34-56",
        "Call me later at home!",
        "The population is 331,449,281 people",
        "Send it to @mel on twitter",
        "We need 12 3456 7890 things",
        "the token is lost, we need a new one",
        "I scored 4111 points in 1111 games",
    ],
)
def test_ordinary_chat_has_no_secrets(text):
    assert find_secrets(text) == []


def test_empty_text():
    assert find_secrets("") == []


# ---------------------------------------------------------------- redact


def test_redact_default_placeholder():
    text = "mail bob@example.com or call 415-555-0123"
    assert redact(text, find_secrets(text)) == "mail [redacted] or call [redacted]"


def test_redact_callable_placeholder():
    text = "mail bob@example.com or call 415-555-0123"
    out = redact(text, find_secrets(text), lambda m: f"<{m.entry_type}>")
    assert out == "mail <email> or call <phone>"


def test_redact_handles_unsorted_and_overlapping_matches():
    text = "abcdefghij"
    a = SecretMatch("x", "bcd", 1, 4, "high", "c")
    b = SecretMatch("x", "cde", 2, 5, "high", "c")
    c = SecretMatch("x", "hi", 7, 9, "high", "c")
    assert redact(text, [c, b, a], "#") == "a#efg#j"


def test_redact_no_matches_returns_text():
    assert redact("nothing here", []) == "nothing here"


def test_match_is_frozen():
    [m] = find_secrets("bob@example.com")
    with pytest.raises(FrozenInstanceError):
        m.value = "x"  # type: ignore[misc]
    assert m.value == "bob@example.com"


def test_caption_hides_repeated_secret_value():
    text = "password: Xy7!pass99 -- again, that was Xy7!pass99"
    matches = find_secrets(text)
    assert [m.value for m in matches][:1] == ["Xy7!pass99"]
    assert all("Xy7!pass99" not in m.caption for m in matches)
