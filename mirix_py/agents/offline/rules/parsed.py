"""Whole facts read from a dependency parse: the phrasings no pattern list holds.

The pattern rules (`claims`) read the phrasings they were written for; each new set of sentences
brings phrasings they miss ("Jo's relocated to Denver", "My stepmum, Ruth, is a GP in Harrogate",
"Monzo's where I work now"). A parse names the subject, the verb and what hangs off it whatever the
word order, so this module reads a fact from those roles: who (the speaker, a name, "my <relation>"
with or without a name, a pronoun for the last name), which verb or copula, and which object or
preposition carries the value. It is pure over a parsed text (`Doc`, spaCy's), so the parser is
passed in where claims are read (`extract_claims(..., parser=)`).

What says nothing here, as in the pattern rules: questions, make-believe, quotes, wishes and plans
(a modal, "if", "want to"), and clauses whose subject is nobody the text or memory names.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator, Mapping, Protocol, Sequence

from mirix_py.agents.offline.rules import frames
from mirix_py.agents.offline.rules import people as relations
from mirix_py.agents.offline.rules import semantic as entity_rules
from mirix_py.agents.offline.rules.claim import Claim, is_profession
from mirix_py.agents.offline.rules.core import is_job_word
from mirix_py.agents.offline.rules.factset import NOT_JOBS

__all__ = ["ClauseParser", "PreParsed", "read_claims", "worth_parsing"]

Doc = Any  # spacy.tokens.Doc: spaCy is an optional dependency
Token = Any  # spacy.tokens.Token


class ClauseParser(Protocol):
    """What reads texts into sentences of tokens with part-of-speech tags and dependency roles (many
    at once: a parser is faster on a batch)."""

    def parse(self, texts: Sequence[str]) -> list[Doc]: ...


class PreParsed:
    """A parser that answers from texts parsed ahead (a whole batch's sentences in one call) and
    parses the rest itself."""

    def __init__(self, parser: ClauseParser, texts: Iterable[str]) -> None:
        self._parser = parser
        wanted = list(dict.fromkeys(texts))
        self._docs = dict(zip(wanted, parser.parse(wanted)))

    def parse(self, texts: Sequence[str]) -> list[Doc]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._docs]
        if missing:
            self._docs.update(zip(missing, self._parser.parse(missing)))
        return [self._docs[t] for t in texts]


# a sentence is parsed only when it holds a word of the predicates read here: most sentences of a chat hold none,
# and the parse is most of the rules' cost
_WORTH_PARSING = re.compile(
    r"(?i)\b(?:work(?:s|ed|ing)?|live[sd]?|living|mov(?:e|ed|es|ing)|relocat\w*|based|(?:re)?settled|allerg\w*|calls?\s+me|"
    r"name['’]s|favou?rite|rent(?:s|ed|ing)?|hails?|recruited|headhunted|poached|employed|obsessed|hooked|follow(?:s|ed)?|support(?:s|ed)?|abide|intoleran\w*|co?eliac|grew|raised|born|"
    r"teach(?:es|ing)?|stud(?:y|ies|ying)|hired|join(?:s|ed)?|jobs?|lov(?:e|es)|lik(?:e|es)|enjoys?|adores?|hates?|"
    r"dislikes?|detests?|loathes?|prefers?|stand|stomach|retir(?:e|ed|es|ing)|left|leaves?|quit|fan|allergic|vegan|"
    r"vegetarian|pescatarian|where|from|into|lured|tempted|wooed|sucker|birthday|defected|transferred|(?:re)?qualified|retrained|became|becoming|signed\s+on|signed\s+(?:my|a|the|his|her)\s+(?:new\s+)?contract|roots|turn(?:ed|s|ing)?\s+(?:\d+|\w+ty|\w+teen|ten|eleven|twelve))\b"
    r"|\b(?:is|am|are|['’](?:s|m|re))\s+(?:now\s+|still\s+|officially\s+)?(?:a|an|my|our)\b"
    r"|\b(?:start(?:ed|s|ing)?|began|begun)\s+as\b|^\W*as\s+an?\b|\bbeen\s+an?\b|,\s*(?:my|our)\s|\bthe\s+\w+\s+i\s+[^.!?]*\b(?:most|first|best|more\s+than\s+any)\b"
    r"|\bfor\s+(?:the\s+)?(?-i:[A-Z])|\bdoing\s+(?:my|a|an|his|her|their)\b|\bhome\s+is\s+(?-i:[A-Z])|\b(?:set\s+up|made)\s+(?:a\s+)?home\b|^\W*been\s+an?\b"
    r"|\b(?:start(?:ed|s|ing)?|began|begun|doing|studying)\s+(?:my|his|her|their|a|an)\s+(?:\w+\s+)?(?:phd|masters?|master['’]s|"
    r"degree|doctorate|diploma|course|apprenticeship|residency|internship|bachelor['’]?s?|mba)\b"
    r"|\bfinds?\s+[^.!?]{1,40}\b(?:boring|tedious|unbearable|excruciating|dull|tiresome|slimy|disgusting|gross|revolting|annoying|"
    r"relaxing|fascinating|soothing|therapeutic)\b"
    r"|\bbeen\s+in\s+(?-i:[A-Z])|\b(?:office|offices|headquarters|hq)\b|\b(?:called|named)\s+(?-i:[A-Z])"
    r"|\b(?:stopped|stops|quit)\s+being\b|\bpassionate\b|\bmy\s+(?:love|passion)\s+(?:of|for)\b|\bbecome\s+my\b|\breading\s+\w+(?:\s+\w+)?\s+at\b"
    r"|\bas\s+an?\s+\w+(?:\s+\w+)?\s*[.,!]|\blove\s+how\b|\bmy\s+(?:drink|tipple|poison|ride|brew)\b"
    r"|\b\w+s(?:,[^,]{1,30},)?\s+are\s+(?:\w+\s+)?(?:delicious|amazing|brilliant|wonderful|incredible|addictive|disgusting|gross|vile|revolting|overrated|horrible|awful)\b|\b(?:friend|mate|pal|buddy|bestie)\s+now\b|\bbeen\s+in\s+\w+\s+(?:since|for|now)\b|\b(?:faves?|favs?|go-to|top\s+pick|happy\s+place)\b|\bis\s+(?:\w+\s+)?my\s+(?:\w+\s+)?(?:passion|obsession)\b"
    r"|\bmakes?\s+me\s+(?:\w+\s+)?(?:happy|calm|relaxed|content|joyful|alive|smile|peaceful)\b"
    r"|\bbrings?\s+me\s+(?:\w+\s+){0,2}(?:joy|peace|happiness|comfort|calm)\b|\bfirst\s+(?:day|week|month|shift)\s+at\b"
    r"|\b(?:landed|got|took|accepted|started|offered)\s+(?:a|an|the|my|his|her)\s+(?:\w+\s+)?(?:post|role|position|gig)\b"
    r"|\b(?:bought|buy|signed|got|found|purchased)\b.*\b(?:flat|house|place|apartment|home|cottage|condo|studio)\b"
)


@lru_cache(maxsize=16384)
def worth_parsing(sentence: str) -> bool:
    """True when a sentence holds a word of a predicate `read_claims` reads."""
    return bool(_WORTH_PARSING.search(sentence))


_RELATION_WORDS = frozenset(entity_rules._RELATIONS.split("|")) | {"stepmum", "stepmom", "stepdad", "uncle", "aunt",
                                                                  "cousin", "neighbour", "neighbor", "boss", "flatmate",
                                                                  "roommate", "housemate", "colleague", "coworker"}
_DIETS = frozenset({"vegan", "vegetarian", "pescatarian", "pescetarian"})
_MODALS = frozenset({"would", "could", "might", "may", "should", "shall", "will", "must", "'d", "’d", "'ll", "’ll", "wo"})
_WISH_VERBS = frozenset({"want", "wish", "hope", "plan", "think", "consider", "dream", "imagine", "ask", "wonder",
                         "pretend", "suppose", "say", "tell", "announce", "claim", "translate", "write", "doubt", "reckon"})
_ENDED = frozenset({"anymore", "longer", "more"})  # "not … anymore", "no longer", "not … any more"
_LIKE = {"love": "likes", "like": "likes", "enjoy": "likes", "adore": "likes", "hate": "dislikes",
         "dislike": "dislikes", "detest": "dislikes", "loathe": "dislikes", "prefer": "prefers"}
# verbs of a state: in the simple past they say how things were ("I was a waitress"); verbs of an
# event ("moved", "took a job") say how things came to be
_STATES = frozenset({"be", "live", "reside", "work", "love", "like", "enjoy", "adore", "hate", "dislike", "detest",
                     "loathe", "prefer", "teach", "study"})
_HIRED = frozenset({"hire", "recruit", "headhunt", "headhunte", "poach", "employ", "sign", "take", "lure", "tempt", "woo"})  # "headhunte": the lemmatizer's
_NEAR = frozenset({"in", "near", "outside", "above", "by", "on"})  # "a wooden house above Zakopane"
_HOMES = frozenset({"flat", "house", "apartment", "room", "place", "studio", "cottage", "condo", "home", "bungalow",
                    "farmhouse", "villa", "cabin"})
_SHIFTS = frozenset({"nights", "days", "weekends", "shifts", "evenings", "mornings", "nightshifts"})
_JOB_NOUNS = frozenset({"job", "role", "position", "post", "gig", "career"})
_ACQUIRE = frozenset({"buy", "sign", "get", "find", "purchase"})  # a home bought or let: where one lives
_COURSES = frozenset({"year", "degree", "phd", "masters", "master", "doctorate", "diploma", "course", "apprenticeship",
                      "residency", "internship", "placement", "bachelor", "bachelors", "ba", "bsc", "msc", "ma", "mba"})
# verbs with "for <organisation>" that say no work for it ("votes for Labour", "roots for the Yankees")
_NOT_FOR_WORK = frozenset({"vote", "root", "cheer", "pray", "wait", "ask", "apply", "look", "search", "shop", "pay",
                           "campaign", "stand", "care", "fall", "go", "come", "buy", "save", "thank", "call", "sign",
                           "queue", "audition", "interview", "compete", "fight", "argue", "speak", "be", "have"})
_QUOTES = ('"', "“", "”")
_SELF = frozenset({"i"})
_FRIENDS = frozenset({"friend", "mate", "pal", "buddy", "bestie"})
_NOTHING = frozenset({"anything", "everything", "nothing", "something", "it", "that", "this", "them"})
_QUANTIFIERS = frozenset({"most", "many", "all", "some", "few", "several", "both", "no", "every", "lots", "plenty"})
_HE_SHE = frozenset({"he", "she"})
_MAX_VALUE_TOKENS = 8
_MAX_ACTIVITY_WORDS = 5


def read_claims(docs: Sequence[Doc], speaker: str, *, people: Mapping[str, str] | None = None,
                self_statements: bool = True, skip: Callable[[str], bool] = lambda _: False,
                named: Sequence[str] = ()) -> list[Claim]:
    """Claims of a text's parsed sentences by `speaker`, in order. `people` maps a relation head
    ("sister") to the one person memory holds under it; `skip` says which sentences state nothing (a
    question, make-believe): the same test the pattern rules use. `named` are the people the text
    names in sentences not parsed (as the patterns read them), in order: "he" in a parsed sentence
    may go on about the last of them ("My nephew Rhys just turned twenty. He's an electrician")."""
    people = dict(people or {})
    out: list[Claim] = []
    last: list[str] = list(named)  # the last person named: "he"/"she" goes on about them
    unnamed: list[str] = []  # "my new neighbour" said without a name: who a later "her name's Agnieszka" names
    for sent in (sent for doc in docs for sent in doc.sents):
        text = sent.text.strip()
        if not text or skip(text) or any(q in text for q in _QUOTES):
            continue
        last += _named_before_pronoun(sent)
        if self_statements:
            for name in _names_given(sent):
                if unnamed:
                    out.append(Claim(entity=name, attribute="relation", value=unnamed.pop(), owner=speaker))
                last.append(name)
        for head in _clause_heads(sent):
            out += _clause_claims(head, speaker, people, last, self_statements)
        out += _relative_claims(sent, speaker, people, last, self_statements)
        last += _titled_objects(sent)
        unnamed += _unnamed_relations(sent) if self_statements else []
        out += _where_claims(sent, speaker, people, last, self_statements)
        out += _noun_claims(sent, speaker, people, last, self_statements)
    return out


_ALLERGY_SEVERITY = frozenset({"severe", "serious", "bad", "mild", "slight", "nasty", "deadly", "life-threatening", "real",
                               "food", "seasonal", "terrible", "awful", "horrible", "strong"})
_ALLERGY_NOUNS = frozenset({"allergy", "allergies", "intolerance"})
_ALLERGY_CUES = frozenset({"allergic", "allergy", "intolerant", "intolerance", "coeliac", "celiac", "anaphylactic"})


def _noun_claims(sent: Any, speaker: str, people: Mapping[str, str], last: list[str],
                 self_statements: bool) -> list[Claim]:
    """Facts said by a noun phrase wherever it stands: "my sesame allergy", "everyone calls me Sid",
    "the name's Siddharth", and "can't eat gluten" where the sentence names an allergy."""
    out: list[Claim] = []
    allergy_said = any(t.lower_ in _ALLERGY_CUES for t in sent)
    for token in sent:
        if token.dep_ == "appos" and self_statements and token.head.dep_ in ("dobj", "pobj", "conj", "attr", "dative") \
                and _relation_of(token) and _name_of(token.head):
            # "… and add Saoirse, my wife": a name, then who they are to the speaker (a subject's is read with its clause)
            out.append(Claim(entity=_name_of(token.head) or "", attribute="relation", value=_relation_of(token) or "",
                             owner=speaker))
        if token.lower_ in _ALLERGY_NOUNS:
            what = [c for c in token.children if c.dep_ in ("compound", "amod", "nmod") and c.pos_ in ("NOUN", "PROPN")
                    or c.dep_ == "amod" and c.pos_ == "ADJ" and c.lower_ not in _ALLERGY_SEVERITY]
            owner = next((c for c in token.children if c.dep_ == "poss"), None)
            main_subject = _subject(sent.root)
            if owner is None and any(c.dep_ == "det" and c.lower_ in ("a", "an") for c in token.children) \
                    and main_subject is not None and main_subject.lower_ in _SELF:
                # "I read every label because of a sulphite allergy": the speaker's
                who = _Who(speaker, True) if self_statements else None
            elif owner is None and token.dep_ == "dobj" and token.head.lemma_ == "have" and not _unreal(token.head):
                owner = _subject(token.head)  # "My husband Oskar has a serious mustard allergy"
                who = _resolve(owner, speaker, people, last, self_statements) if owner is not None else None
            else:
                who = _owner(owner, speaker, people, last, self_statements) if owner is not None else None
            if what and who is not None:
                out.append(_claim(who, "allergy", _phrase(what[0])))
        elif token.tag_ == "NNS" and self_statements and any(c.lower_ in ("favorite", "favourite") for c in token.children) \
                and any(c.dep_ == "poss" and c.lower_ == "my" for c in token.children) and token.dep_ != "nsubj":
            # "a bookshelf filled with my favorite fantasy novels": what the speaker likes
            words = [t.text for t in token.subtree if t.i <= token.i and t.dep_ in ("compound", "amod") and t.lower_ not in (
                "favorite", "favourite")] + [token.text]
            out.append(_claim(_Who(speaker, True), "likes", " ".join(words)))
        elif token.lemma_ in ("love", "passion") and token.pos_ == "NOUN" and self_statements \
                and any(c.dep_ == "poss" and c.lower_ == "my" for c in token.children):
            out += [_claim(_Who(speaker, True), "likes", _phrase(o)) for p, o in _preps(token) if p in ("of", "for")
                    and o.pos_ in ("NOUN", "PROPN") and o.lower_ not in _NOTHING][:1]  # "share my love of gaming"
        elif token.lemma_ in ("day", "week", "month", "shift") and any(c.lower_ == "first" for c in token.children):
            # "today was my first day at Lonza": where the owner works now
            owner = next((c for c in token.children if c.dep_ == "poss"), None)
            who = _owner(owner, speaker, people, last, self_statements) if owner is not None else None
            if who is not None:
                out += [_claim(who, "employer", _phrase(o)) for p, o in _preps(token) if p == "at" and _proper(o)][:1]
        elif token.lemma_ == "call" and self_statements and any(c.dep_ == "dobj" and c.lower_ == "me" for c in token.children):
            out += [_claim(_Who(speaker, True), "name", _phrase(c)) for c in token.children
                    if c.dep_ in ("oprd", "xcomp", "ccomp", "attr") and _proper(c) and not _unreal(token)]
        elif token.lower_ == "name" and token.dep_ == "nsubj" and token.head.lemma_ == "be" and self_statements and any(
                c.dep_ == "det" and c.lower_ == "the" for c in token.children) and not _unreal(token.head):
            out += [_claim(_Who(speaker, True), "name", _phrase(c)) for c in token.head.children
                    if c.dep_ == "attr" and _proper(c)]
        elif token.lemma_ == "eat" and allergy_said and _negated(token) and not _unreal(token):
            subject = _subject(token)
            who = _resolve(subject, speaker, people, last, self_statements) if subject is not None else None
            if who is not None:
                out += [_claim(who, "allergy", _phrase(o)) for o in token.children if o.dep_ == "dobj" and o.pos_ == "NOUN"]
    return out


def _owner(owner: Token, speaker: str, people: Mapping[str, str], last: list[str], self_statements: bool) -> _Who | None:
    """Whose a possessed noun is: "my" -> the speaker, "Harper's" -> Harper."""
    if owner.lower_ in ("my", "our"):
        return _Who(speaker, True) if self_statements else None
    if owner.lower_ in ("his", "her"):
        return _Who(last[-1], False) if last else None
    return _resolve(owner, speaker, people, last, self_statements)


def _where_claims(sent: Any, speaker: str, people: Mapping[str, str], last: list[str],
                  self_statements: bool) -> list[Claim]:
    """"Monzo's where I work now", "Leeds is where my sister lives": a place named, then who works or
    lives there."""
    out: list[Claim] = []
    for clause in sent:
        if clause.dep_ not in ("relcl", "advcl", "ccomp") or clause.lemma_ not in ("work", "live"):
            continue
        if not any(c.dep_ == "advmod" and c.lower_ == "where" for c in clause.children) or _unreal(clause):
            continue
        place = clause.head if _proper(clause.head) else next(
            (c for c in clause.head.children if c.dep_ in ("nsubj", "attr") and _proper(c)), None)
        subject = _subject(clause)
        if place is None or subject is None or subject == place:
            continue
        who = _resolve(subject, speaker, people, last, self_statements)
        if who is not None:
            attribute = "employer" if clause.lemma_ == "work" else "location"
            out.append(_claim(who, attribute, _phrase(place), negated=_ended(clause)))
    return out


def _named_before_pronoun(sent: Any) -> list[str]:
    """"Kaveh's contract with Vestas wasn't renewed, but he's landed …", "Had lunch with Dario, my old flatmate
    — he's …": a person named before "he"/"she" in the same sentence other than as a subject (a subject is noted
    with its clause): as an owner, or with a title or a relation beside the name."""
    pronoun = next((t.i for t in sent if t.lower_ in _HE_SHE and t.dep_ in ("nsubj", "nsubjpass")), None)
    if pronoun is None:
        return []
    out = []
    for token in sent:
        if token.i >= pronoun or token.dep_ in ("nsubj", "nsubjpass") or not _proper(token):
            continue
        related = any(c.dep_ == "appos" and _relation_of(c) for c in token.children) or any(
            c.dep_ == "compound" and c.lower_ in _RELATION_WORDS for c in token.children)
        owner = token.dep_ == "poss" and token.head.dep_ in ("nsubj", "nsubjpass", "dep") and not _relation_of(token.head)
        name = _name_of(token) if related or owner else None
        if name and not frames.is_organisation(name):
            out.append(name)
    return out


def _unnamed_relations(sent: Any) -> list[str]:
    """"Met my new neighbour today": relations of the speaker's the sentence names no one for."""
    return [relation for token in sent for relation in [_relation_of(token)] if relation
            and not any(c.dep_ in ("appos", "compound", "npadvmod") and _name_of(c) for c in token.children)
            and not (token.head.pos_ == "PROPN" and token.dep_ == "compound")]


def _names_given(sent: Any) -> list[str]:
    """"Her name's Agnieszka", "his name is Raj": the name of someone the text spoke of before."""
    out = []
    for token in sent:
        if token.lower_ != "name" or not any(c.dep_ == "poss" and c.lower_ in ("his", "her") for c in token.children):
            continue
        if token.dep_ == "nsubj" and token.head.lemma_ == "be":  # "His name is Raj" (a name the tagger may call an adjective)
            values = [c for c in token.head.children if c.dep_ in ("attr", "acomp") and c.text[:1].isupper()]
        else:  # "Her name's Agnieszka" parsed as a possessive of the name
            values = [token.head] if token.dep_ == "poss" and any(c.lower_ in ("'s", "’s") for c in token.children) else []
        out += [v.text for v in values if v.text[:1].isupper() and v.text.isalpha() and v.lower_ not in _RELATION_WORDS]
    return out


def _titled_objects(sent: Any) -> list[str]:
    """"Just got off the phone with Uncle Bolat. He …": a person named with a title anywhere but as a subject
    (a subject is noted with its clause) is one a following "he"/"she" may be about."""
    return [name for token in sent if token.dep_ not in ("nsubj", "nsubjpass") and token.pos_ == "PROPN"
            and any(c.dep_ == "compound" and c.lower_ in _RELATION_WORDS for c in token.children)
            for name in [_name_of(token)] if name]


def _relative_claims(sent: Any, speaker: str, people: Mapping[str, str], last: list[str],
                     self_statements: bool) -> list[Claim]:
    """"my old school friend Thabo, who's moved back to Kimberley, …": a relative clause opened by
    "who" says a fact about the person it hangs on."""
    out: list[Claim] = []
    for clause in sent:
        subject = _subject(clause) if clause.dep_ == "relcl" else None
        if subject is None or subject.lower_ != "who" or _unreal(clause):
            continue
        name = _name_of(clause.head)
        # the person must be one the speaker names as theirs or talks about ("my friend Thabo, who …",
        # "Thabo, who …, is driving up"), not one a story opens on ("Chapter two opens on Inspector Haldane, who …")
        if name is None or not (clause.head.dep_ in ("nsubj", "nsubjpass") or name in last or name in people.values()
                                or clause.head.dep_ == "appos" and _relation_of(clause.head.head)):
            continue
        ended = _ended(clause)
        if clause.tag_ == "VBD" and clause.lemma_.lower() in _STATES and not ended:
            continue  # "who lived in Rome": how things were
        who = _Who(name, False)
        found = _copula_claims(clause, who, ended) if clause.lemma_ == "be" else _verb_claims(clause, who, ended)
        out += [c for c in found if c.value or c.negated]
    return out


def _clause_heads(sent: Any) -> Iterator[Token]:
    """The verbs of the sentence's clauses that say how things are, in text order (a name before "he"
    is the one "he" goes on about): the main verb, the verbs joined to it, and any other verb with a
    subject of its own ("Quick intro: Dagny is my stepmum, Leif is my half-brother"), but not one said,
    thought or wished (under "say", "think", "want"), nor a relative or adverbial clause ("who lives in
    Leeds", "when I lived in Paris")."""
    root = sent.root
    for token in sent:
        if token == root:
            yield token
        elif token.pos_ in ("VERB", "AUX") and (token.dep_ not in ("relcl", "advcl", "acl", "pcomp", "csubj", "xcomp")
                                                or _result(token)) \
                and (token.dep_ in ("conj", "parataxis", "ccomp") or _subject(token) is not None) \
                and not any(a.lemma_ in _WISH_VERBS or a.dep_ in ("relcl", "advcl", "acl", "pcomp") and not _result(a)
                            for a in token.ancestors):
            yield token


def _result(clause: Token) -> bool:
    """"…, so Lachlan is my ex now", "… on dessert duty since she's a pastry chef": a clause of what follows
    or of why states how things are, as a main clause does ("so that …" is a purpose, "since 2019" a time, and
    say nothing; so does a clause in the past: "since I was a child")."""
    marks = [c.lower_ for c in clause.children if c.dep_ == "mark"]
    if clause.dep_ != "advcl" or "that" in marks:
        return False
    return "so" in marks or any(m in ("because", "cause", "'cause", "since") for m in marks) and clause.tag_ in ("VBZ", "VBP") \
        and not any(c.dep_ == "aux" and c.tag_ == "VBD" for c in clause.children)


def _unreal(head: Token) -> bool:
    """A wish, a plan, a condition or a question word: the clause says nothing of how things are ("we might sell
    up and move to the Dordogne": a joined verb without its own subject goes with the first one's modal)."""
    if head.lemma_ in _WISH_VERBS:
        return True
    if head.dep_ == "conj" and head.head.pos_ in ("VERB", "AUX") and not any(
            c.dep_ in ("nsubj", "nsubjpass", "aux") for c in head.children) and _unreal(head.head):
        return True
    if head.tag_ == "VBG" and head.dep_ == "ROOT" and not any(c.dep_ == "aux" for c in head.children):
        return True  # a fragment ("Moving to Leeds?"), not "has been working as"
    for child in head.children:
        if child.dep_ == "aux" and child.lower_ in _MODALS:
            return True
        if child.dep_ == "mark" and child.lower_ in ("if", "unless", "whether"):
            return True
        if child.dep_ == "advcl" and any(c.dep_ == "mark" and c.lower_ == "if" for c in child.children):
            return True
    return False


def _ended(head: Token) -> bool:
    """"isn't a chef anymore", "no longer lives in", "doesn't … any more": the fact stops holding."""
    marks = [c for c in head.children if c.dep_ in ("advmod", "npadvmod") and c.lower_ in _ENDED]
    no_longer = any(m.lower_ == "longer" and any(c.lower_ == "no" for c in m.children) for m in marks)
    return no_longer or _negated(head) and any(m.lower_ in ("anymore", "longer", "more") for m in marks)


def _negated(head: Token) -> bool:
    return any(c.dep_ == "neg" for c in head.children)


def _subject(head: Token) -> Token | None:
    for child in head.children:
        if child.dep_ in ("nsubj", "nsubjpass") or child.dep_ == "csubj" and head.lemma_ == "be":
            return child
    if head.dep_ == "conj":
        return _subject(head.head)
    return None


def _name_of(token: Token) -> str | None:
    """A person's name at a proper-noun token, with the proper nouns before it ("Jean-Luc Picard")."""
    if not token.text[:1].isupper() or token.pos_ != "PROPN" and not (
            token.pos_ == "NOUN" and token.i > token.sent.start and token.nbor(-1).text not in (".", "!", "?")):
        return None  # a name, or a capitalised noun the tagger took for a common one ("… a lot: Dagny is my stepmum")
    words = [c for c in token.children if c.dep_ == "compound" and c.pos_ == "PROPN" and c.i < token.i
             and c.lower_ not in _RELATION_WORDS]
    span = token.doc[words[0].i if words else token.i: token.i + 1]
    name = span.text  # as written: "Anne-Marie", "D'Arcy", "Mr. O'Neill"
    if name.endswith(("'s", "’s")):
        name = name[:-2]
    if not name or any(w in entity_rules._EXCLUDED for w in name.split()):
        return None
    if name.lower() in _RELATION_WORDS or name.lower() in relations._KIN_FORMS:
        return None
    return name


class _Who:
    """The resolved subject of a clause."""

    def __init__(self, entity: str, about_speaker: bool, relation: str = "", owner: str = "",
                 homes_only: bool = False) -> None:
        self.entity, self.about_speaker, self.relation, self.owner = entity, about_speaker, relation, owner
        self.homes_only = homes_only


def _relation_of(token: Token) -> str | None:
    """"my (older) sister", "our daughter", "my half-brother": the relation words of a noun owned by the
    speaker, as written."""
    left = [t for t in token.subtree if t.i < token.i]
    owner = [t for t in left if t.dep_ == "poss" and t.lower_ in ("my", "our")]
    if not owner:
        return None
    # "my dentist", "my personal trainer": someone whose job serves the speaker is a relation too
    if token.lower_ not in _RELATION_WORDS and token.lemma_.lower() not in _RELATION_WORDS and not (
            token.pos_ == "NOUN" and is_job_word(token.lower_) and token.lower_ not in NOT_JOBS):
        return None
    words = token.doc[owner[-1].i + 1: token.i]
    if any(t.dep_ not in ("amod", "compound", "punct", "advmod") for t in words):
        return None  # "my sister's boss": not a relation of the speaker's
    return f"{words.text_with_ws}{_as_written(token)}".strip().lower()


def _hyphenated(token: Token) -> str:
    """A word with what is joined to it by hyphens on both sides: "step-grandmother", "sister-in-law"."""
    start = token.i
    while start >= 2 and token.doc[start - 1].text == "-" and token.doc[start - 2].whitespace_ == "" \
            and token.doc[start - 1].whitespace_ == "":
        start -= 2
    return token.doc[start: token.i].text + _as_written(token)


def _as_written(token: Token) -> str:
    """A word with what is joined to it by hyphens: "sister-in-law", not "sister"."""
    end = token.i
    while end + 2 < len(token.doc) and token.doc[end].whitespace_ == "" and token.doc[end + 1].text == "-":
        end += 2
    return token.doc[token.i: end + 1].text


def _resolve(subject: Token, speaker: str, people: Mapping[str, str], last: list[str],
             self_statements: bool) -> _Who | None:
    word = subject.lower_
    if word in _SELF:
        return _Who(speaker, True) if self_statements else None
    if word == "we":  # "we've resettled in Victoria": the speaker's home, and nothing else of theirs
        return _Who(speaker, True, homes_only=True) if self_statements else None
    if word in _HE_SHE:
        return _Who(last[-1], False) if last else None
    relation = _relation_of(subject)
    if relation is not None:
        named = [c for c in subject.children if c.dep_ == "appos" and _name_of(c)]
        if named:
            name = _name_of(named[0]) or ""
            last.append(name)
            return _Who(name, False, relation=relation, owner=speaker)
        held = people.get(relations.relation_head(relation))
        return _Who(held, False) if held else None
    kin = relations._KIN_FORMS.get(word, word if word in ("mother", "father") else "")
    if kin and subject.text[:1].isupper() and not any(c.dep_ == "poss" for c in subject.children):
        held = people.get(kin)  # "Mom sold the house": the person held as the speaker's mother
        if held:
            last.append(held)  # "Dad … he's been working at Kaufland"
        return _Who(held, False) if held else None
    if any(c.lower_ in _QUANTIFIERS for c in subject.children if c.dep_ in ("det", "amod", "nummod")):
        return None  # "Most Canadians are mad about hockey": a group, not a person
    if subject.pos_ == "PROPN" or _name_of(subject):
        titles = [_hyphenated(c).lower() for c in subject.children if c.dep_ == "compound" and c.lower_ in _RELATION_WORDS]
        proper = _name_of(subject)
        if proper is None:
            return None
        last.append(proper)
        apposed = [r for r in map(_relation_of, (c for c in subject.children if c.dep_ == "appos")) if r]
        if apposed:  # "Anne-Marie, my goddaughter, …"
            return _Who(proper, False, relation=apposed[0], owner=speaker)  # "Aunt Jude": a relation said as a title
        return _Who(proper, False, relation=titles[0] if titles else "", owner=speaker if titles else "")
    return None


def _phrase(token: Token, *, conj: bool = False) -> str:
    """The words of a noun phrase at `token`: its modifiers and compounds, not its article, clauses or
    prepositions ("a driving instructor" -> "driving instructor"); with `conj`, names joined to it by
    "&"/"and" ("Harland & Wolff")."""
    left = [t for t in token.lefts if t.dep_ in ("compound", "amod", "nmod", "nummod", "poss", "quantmod", "advmod")
            and t.lower_ not in ("my", "our", "his", "her", "their")]
    start = min([t.left_edge.i for t in left] + [token.i])
    end = token.i + 1
    for t in token.rights:
        if t.dep_ in ("flat", "compound", "case") or t.dep_ == "appos" and t.pos_ == "PROPN" and t.i == end + 1:
            end = t.right_edge.i + 1
        elif t.dep_ == "prep" and t.lower_ == "of" and t.i == end and _proper(token) \
                and all(_proper(o) for o in t.children if o.dep_ == "pobj") and any(o.dep_ == "pobj" for o in t.children):
            end = t.right_edge.i + 1  # "the Port of Durban", "the University of Otago": one name
        elif conj and t.dep_ in ("cc", "conj") and t.i == end:
            end = t.right_edge.i + 1 if t.dep_ != "cc" else t.i + 1
        else:
            break
    words = [t.text for t in token.doc[start:end] if t.dep_ != "det" and t.lower_ not in ("the", "a", "an")]
    while words and words[-1] in (",", "'s", "’s"):
        words.pop()
    return " ".join(words[:_MAX_VALUE_TOKENS]).replace(" 's", "'s").replace(" ’s", "’s").replace(" ,", ",")


def _preps(token: Token) -> Iterable[tuple[str, Token]]:
    """(preposition, its object) under a token: ("in", Harrogate)."""
    for child in token.children:
        if child.dep_ in ("prep", "agent", "dative"):
            for obj in child.children:
                if obj.dep_ == "pobj":
                    yield child.lower_, obj


def _proper(token: Token) -> bool:
    """A name: capitalised, or one the parser marked as a name though typed in lowercase (`parser.names_as_proper`)."""
    return token.pos_ == "PROPN" and (token.text[:1].isupper() or token.tag_ == "NNP" and token.text.isalpha())


def _claim(who: _Who, attribute: str, value: str, *, negated: bool = False) -> Claim:
    return Claim(entity=who.entity, attribute=attribute, value=value, about_speaker=who.about_speaker, negated=negated)


def _place_claims(head: Token, who: _Who, attribute: str, preps: Iterable[str], ended: bool) -> list[Claim]:
    # "moved back to Kimberley", "moved out to Perth": the place may hang off the adverb
    around = [head, *(c for c in head.children if c.dep_ == "advmod" and c.lower_ in ("back", "out", "over", "away", "down", "up"))]
    found = [(p, o) for w in around for p, o in _preps(w)]
    # "lives in the house in Shiraz", "moved into a flat in Leith": the place the home is in
    found += [(p, o) for p, home in list(found) if home.lemma_ in _HOMES for q, o in _preps(home) if q in _NEAR
              for p in [p if p in preps else "in"] if p in preps]
    # "is living by the Caspian in Rasht now": the town named after what the home is by
    found += [("in", o) for p, near in list(found) if p in ("by", "near", "on", "outside") and "in" in preps
              for q, o in _preps(near) if q == "in"]
    for prep, obj in found:
        if prep in preps and _proper(obj) and not frames.is_time_name(_phrase(obj)):  # "got her own place in March"
            value = _phrase(obj)
            if attribute == "location" and frames.is_organisation(value):
                return [_claim(who, "employer", value, negated=ended)]
            return [_claim(who, attribute, value, negated=ended)]
    return []


def _job_claims(noun: Token, who: _Who, ended: bool, *, role: bool = False) -> list[Claim]:
    """"a pilot", "a nurse at St Mary's": the job, and the employer named with it. A noun someone
    owns ("my co-founder", "his wife") is a relation, not a job; "a GP", "a DJ" (an acronym the job
    words do not hold) is who a named person is."""
    if any(c.dep_ == "poss" for c in noun.children) or noun.i > 0 and noun.nbor(-1).text == "-":
        return []
    if any(c.dep_ == "det" and c.lower_ == "no" for c in noun.children):
        return []  # "I'm no writer like you"
    job = _phrase(noun)
    if noun.lower_ in _DIETS:
        return [_claim(who, "occupation", noun.lower_, negated=ended)]
    employers = [o for prep, o in _preps(noun) if prep in ("at", "for", "with") and o.pos_ == "PROPN"]
    indefinite = any(c.dep_ == "det" and c.lower_ in ("a", "an") for c in noun.children)
    # `role`: the verb says the noun is a job ("recruited as a buyer"); else a noun the job words lack is one where
    # it names its employer ("a welder at Harland & Wolff")
    if not is_profession(job) and not ((employers or role) and indefinite and noun.pos_ == "NOUN"
                                       and noun.lower_ not in NOT_JOBS | _NO_ROLE and not _relation_of(noun)):
        # "a welder at Harland & Wolff": a noun the job words lack is a job where it names its employer
        acronym = noun.text.isupper() and 2 <= len(noun.text) <= 4
        if who.about_speaker or not acronym:
            return []
        return [_claim(who, "is", f"{'an' if job[:1] in 'AEFHILMNORSX' else 'a'} {job}", negated=ended)]  # "an MP"
    out = [_claim(who, "occupation", job, negated=ended)]
    if ended:
        return out
    out += [_claim(who, "employer", _phrase(o, conj=True)) for o in employers]
    # "a seismologist from Maribor", "a retired tugboat captain from Bilbao": where the person is from
    out += [_claim(who, "origin", _phrase(o)) for prep, o in _preps(noun) if prep == "from" and _proper(o)
            and not frames.is_organisation(_phrase(o))][:1]
    return out


# nouns after "works as a" that are no role ("works as a team", "works as a charm")
_NO_ROLE = frozenset({"team", "unit", "pair", "group", "whole", "charm", "treat", "result", "way", "kind", "sort", "part",
                      "bit", "favour", "favor", "reminder", "distraction", "escape", "hobby", "break"})


def _role(noun: Token) -> bool:
    """What someone works or started as: a job word, or any other noun with "a"/"an" ("as a tour guide"):
    "work as" names a role whatever the noun."""
    if is_profession(_phrase(noun)):
        return True
    indefinite = any(c.dep_ == "det" and c.lower_ in ("a", "an") for c in noun.children)
    return indefinite and noun.pos_ == "NOUN" and noun.lower_ not in NOT_JOBS | _NO_ROLE and not _relation_of(noun) \
        and not any(c.dep_ == "poss" for c in noun.children)


_WORKPLACES = frozenset({"office", "offices", "headquarters", "hq", "branch", "lab", "plant", "factory", "site", "campus",
                         "studio", "warehouse", "depot", "store", "shop", "clinic", "hospital", "school"})
_FIRM_NOUNS = frozenset({"startup", "start-up", "company", "firm", "fintech", "agency", "charity", "bank", "consultancy",
                         "studio", "nonprofit", "business", "brand", "outfit", "place"})


def _firm_at(prep: Token) -> str | None:
    """Who one is with, said by where: "at Nintendo's Kyoto office" (a workplace owned by a name), "at a tiny
    fintech called Paystack" (a firm named after it)."""
    for obj in (o for o in prep.children if o.dep_ == "pobj"):
        owner = next((c for c in obj.children if c.dep_ == "poss" and _proper(c)), None)
        if obj.lower_ in _WORKPLACES and owner is not None:
            return _phrase(owner)
        if obj.lower_ in _FIRM_NOUNS or obj.lemma_.lower() in _FIRM_NOUNS:
            named = [n for c in obj.children if c.dep_ == "acl" and c.lemma_ in ("call", "name")
                     for n in c.children if n.dep_ in ("oprd", "attr", "xcomp", "dobj") and _proper(n)]
            if named:
                return _phrase(named[0])
    return None


def _copula_claims(head: Token, who: _Who, ended: bool) -> list[Claim]:
    out: list[Claim] = []
    for child in head.children:
        if child.dep_ == "attr":
            relation = _relation_of(child)
            befriended = child.lower_ in _FRIENDS and any(c.dep_ == "det" and c.lower_ in ("a", "an") for c in child.children)
            if relation and not who.about_speaker:
                out.append(Claim(entity=who.entity, attribute="relation", value=relation, owner="user", negated=ended))
            elif befriended and not who.about_speaker and not _negated(head):  # "she's a proper friend now"
                out.append(Claim(entity=who.entity, attribute="relation", value=child.lower_, owner="user"))
            elif child.lower_ == "sucker" and not _negated(head):  # "a total sucker for pastéis de nata"
                out += [_claim(who, "likes", _phrase(obj)) for prep, obj in _preps(child) if prep == "for"]
            elif child.lower_ == "fan":
                for prep, obj in _preps(child):
                    if prep == "of" and obj.lower_ not in _NOTHING:
                        out.append(_claim(who, "dislikes" if _negated(head) and not ended else "likes", _phrase(obj),
                                          negated=ended))
            elif child.lemma_ == "resident" and not _negated(head):  # "is officially a resident of Goa now"
                out += [_claim(who, "location", _phrase(o), negated=ended) for p, o in _preps(child) if p == "of" and _proper(o)][:1]
            elif not _negated(head) or ended:
                out += _job_claims(child, who, ended)
        elif child.dep_ == "acomp":
            if child.lower_ in _DIETS:
                out.append(_claim(who, "occupation", child.lower_, negated=ended))
            elif child.lower_ in _KEEN:
                out += _keen_claims(child, who)
            elif child.lower_ == "based":  # "is based in Limerick", parsed as an adjective
                out += _place_claims(child, who, "location", ("in",), ended)
            elif child.lower_ == "allergic" and not _negated(head):  # not "I'm not allergic to anything"
                out += [_claim(who, "allergy", _phrase(obj)) for prep, obj in _preps(child) if prep == "to"
                        and obj.lower_ not in _NOTHING]
        elif child.dep_ == "prep" and child.lower_ == "at" and not _negated(head) and (firm := _firm_at(child)) is not None:
            out.append(_claim(who, "employer", firm, negated=ended))  # "has been at Nintendo's Kyoto office since …"
        elif child.dep_ == "prep" and not _negated(head):
            objs = [o for o in child.children if o.dep_ == "pobj"]
            if not objs or not _proper(objs[0]):
                continue
            if child.lower_ == "from":
                out.append(_claim(who, "origin", _phrase(objs[0])))
            elif child.lower_ == "in" and head.tag_ == "VBN" and any(c.dep_ == "aux" and c.lemma_ == "have" for c in head.children) \
                    and any(c.lower_ in ("since", "now") for c in head.children) and not frames.is_organisation(_phrase(objs[0])):
                out.append(_claim(who, "location", _phrase(objs[0])))  # "we've been in Florianópolis since September"
            elif child.lower_ == "into":
                out.append(_claim(who, "likes", _phrase(objs[0])))
    return out


def _verb_claims(head: Token, who: _Who, ended: bool) -> list[Claim]:
    lemma = head.lemma_.lower()
    particle = {c.lower_ for c in head.children if c.dep_ == "prt"}
    passive = any(c.dep_ == "auxpass" for c in head.children)
    if lemma == "work" or lemma in ("start", "begin") and not ended and any(p == "as" for p, _ in _preps(head)):
        # "works as a nurse at St Mary's", "works nights as a guard", "started as a food stylist last week"
        where = [head, *(c for c in head.children if c.dep_ in ("dobj", "npadvmod") and c.lower_ in _SHIFTS)]
        preps = [(prep, obj) for w in where for prep, obj in _preps(w)]
        preps += [(prep, obj) for prep, obj in list(preps) if prep == "as" for prep, obj in _preps(obj)]
        out: list[Claim] = [_claim(who, "occupation", _phrase(obj), negated=ended) for prep, obj in preps
                            if prep == "as" and _role(obj)]
        # "at Google", "in HR at ANA's head office": the firm, also as the owner of the place one works at
        firms = [obj if _proper(obj) else owner for prep, obj in preps if prep in ("at", "for")
                 for owner in [next((c for c in obj.children if c.dep_ == "poss" and _proper(c)), None)]
                 if _proper(obj) or owner is not None]
        return out + [_claim(who, "employer", _phrase(firm), negated=ended) for firm in firms]
    if lemma in ("stop", "quit") and not who.about_speaker:  # "Sunita stopped being my personal trainer"
        being = [c for c in head.children if c.dep_ in ("xcomp", "ccomp") and c.lemma_ == "be"]
        ended_as = [r for b in being for c in b.children if c.dep_ == "attr" for r in [_relation_of(c)] if r]
        if ended_as:
            return [Claim(entity=who.entity, attribute="relation", value=ended_as[0], owner="user", negated=True)]
    if lemma == "retire" and not passive:  # the job ends, whatever it was
        return [_claim(who, "occupation", "", negated=True), _claim(who, "employer", "", negated=True)]
    if lemma in ("leave", "quit") and not _negated(head):  # "left Ford": a job or a home ends, whichever it was
        return [_claim(who, attribute, _phrase(c), negated=True) for c in head.children
                if c.dep_ == "dobj" and _proper(c) for attribute in ("employer", "location")]
    if lemma in ("live", "reside", "settle", "resettle") or lemma == "base" and passive:
        return _place_claims(head, who, "location", ("in",), ended)
    if lemma in ("move", "relocate") and not ended:
        return _place_claims(head, who, "location", ("to",), False)
    if lemma in ("defect", "transfer") and not ended and not _negated(head):  # "defected to Aker BP", "transferred … to Radboud University"
        found = _place_claims(head, who, "location", ("to",), False)
        return [replace(c, attribute="employer") if lemma == "defect" else c for c in found]
    # "requalifie": the lemmatizer's form of "requalified"
    if lemma == "become" and not who.about_speaker and not _negated(head):  # "she's become my closest friend"
        became = [r for c in head.children if c.dep_ in ("attr", "oprd") for r in [_relation_of(c)] if r]
        if became:
            return [Claim(entity=who.entity, attribute="relation", value=became[0], owner="user")]
    if lemma in ("qualify", "requalify", "requalifie", "retrain", "become") and not ended and not _negated(head):
        # "he's qualified as a sign language interpreter", "requalified as an audiologist", "became a GP"
        roles = [o for p, o in _preps(head) if p == "as"] + [c for c in head.children if c.dep_ in ("attr", "oprd")]
        return [c for o in roles[:1] for c in _job_claims(o, who, False, role=lemma != "become")]
    if lemma == "sign" and not _negated(head) and any(c.dep_ == "dobj" and c.lemma_ in ("contract", "deal") for c in head.children):
        # "signed my contract with Danone yesterday"
        deals = [c for c in head.children if c.dep_ == "dobj" and c.lemma_ in ("contract", "deal")]
        return [_claim(who, "employer", _phrase(o)) for h in (head, *deals) for p, o in _preps(h)
                if p == "with" and _proper(o)][:1]
    if lemma == "sign" and "on" in particle and not _negated(head):  # "signed on with Air New Zealand as a baggage handler"
        jobs = [c for p, o in _preps(head) if p == "as" for c in _job_claims(o, who, False, role=True)]
        return [_claim(who, "employer", _phrase(o)) for p, o in _preps(head) if p == "with" and _proper(o)][:1] + jobs
    if lemma in ("turn",) and not _negated(head) and head.tag_ in ("VBZ", "VBP"):  # "I turn 40 on the 9th of August"
        if any(c.dep_ in ("dobj", "attr", "npadvmod") and c.pos_ == "NUM" for c in head.children):
            return [_claim(who, "birthday", head.doc[o.left_edge.i: o.right_edge.i + 1].text.removeprefix("the "))
                    for p, o in _preps(head) if p == "on"][:1]
    if lemma == "grow" and "up" in particle or lemma in ("raise", "bring") and passive:
        return _place_claims(head, who, "origin", ("in",), False)
    if lemma == "bear" and (passive or head.dep_ == "ROOT" and head.tag_ == "VBN" and _subject(head) is None):
        # "was born in Lwów"; a message's "Born and bred in Glasgow, me."; "born on the 17th of November"
        dates = [o for p, o in _preps(head) if p == "on" and any(
            frames.is_time_name(t.text) for t in o.subtree) and any(t.like_num or t.text[:1].isdigit() for t in o.subtree)]
        if dates:
            return [_claim(who, "birthday", head.doc[dates[0].left_edge.i: dates[0].right_edge.i + 1].text.removeprefix("the "))]
        return _place_claims(head, who, "born", ("in",), False) or [  # "born in the back of a taxi in kano"
            c for p, o in _preps(head) if p == "in" and not _proper(o) for q, place in _preps(o) if q == "of"
            for c in _place_claims(place, who, "born", ("in",), False)][:1]
    if lemma == "read" and head.tag_ in ("VBG", "VBZ", "VBP") and not ended and any(
            c.dep_ == "dobj" and not any(d.dep_ in ("det", "poss", "nummod") for d in c.children) for c in head.children):
        # "I'm reading marine biology at Plymouth": a subject studied (a book read has an article)
        return [c for h in [head, *(c for c in head.children if c.dep_ == "dobj")]
                for c in _place_claims(h, who, "employer", ("at",), False)][:1]
    if lemma in ("teach", "study", "lecture") and not ended:  # "is studying veterinary medicine at the University of X"
        return [c for h in [head, *(c for c in head.children if c.dep_ == "dobj")]
                for c in _place_claims(h, who, "employer", ("at",), False)][:1]
    if lemma == "rent" and not ended:  # "renting a flat in Utrecht": a home
        homes = [c for c in head.children if c.dep_ == "dobj" and c.lemma_ in _HOMES]
        return [c for h in [head, *homes] for c in _place_claims(h, who, "location", ("in",), False)][:1]
    if lemma == "hail":  # "hails from Bulawayo"
        return _place_claims(head, who, "origin", ("from",), False)
    if lemma in _HIRED and passive:  # "got hired by Novartis as a research scientist", "was headhunted by Shell"
        jobs = [c for prep, obj in _preps(head) if prep == "as" for c in _job_claims(obj, who, False, role=True)]
        return _place_claims(head, who, "employer", ("by", "at"), False) + jobs
    if lemma == "join" and not ended:  # "joined KPMG", "joined Infosys's Pune office"
        return [_claim(who, "employer", _phrase(c)) for c in head.children
                if c.dep_ == "dobj" and _proper(c) and frames.is_organisation(_phrase(c))] + [
            _claim(who, "employer", _phrase(o)) for c in head.children if c.dep_ == "dobj" and c.lower_ in _WORKPLACES
            for o in c.children if o.dep_ == "poss" and _proper(o)]
    if lemma in ("take", "get", "land", "accept", "start", "find") and not _negated(head):
        out = []
        for c in head.children:
            if c.dep_ == "dobj" and c.lower_ in _JOB_NOUNS:
                for prep, obj in [*_preps(c), *_preps(head)]:
                    if prep == "as":
                        out += _job_claims(obj, who, False)
                    elif prep in ("at", "with") and _proper(obj):
                        out.append(_claim(who, "employer", _phrase(obj)))
        if out:
            return out
    if lemma in _LIKE:
        attribute = _LIKE[lemma]
        if ended:  # "no longer likes jazz", "doesn't like jazz any more"
            return [_claim(who, attribute, _phrase(o), negated=True) for o in _objects(head)] if attribute == "likes" else []
        if _negated(head):
            return [_claim(who, "dislikes", _phrase(o)) for o in _objects(head)] if lemma in ("like", "enjoy") else []
        return [_claim(who, attribute, _thing(o) if o.tag_ == "VBG" else _phrase(o)) for o in _objects(head)]
    if lemma in ("set", "make") and not ended and not _negated(head) and any(
            c.dep_ in ("dobj", "advmod") and c.lower_ == "home" for c in head.children):  # "has set up home in Valparaíso"
        return _place_claims(head, who, "location", ("in",), False)
    if lemma in _ACQUIRE and not ended and not _negated(head):  # "we signed for a place in Timișoara", "bought a flat in Leith"
        homes = [o for o in [*(c for c in head.children if c.dep_ == "dobj"), *(o for p, o in _preps(head) if p == "for")]
                 if o.lemma_ in _HOMES]
        if homes:
            return [c for h in [*homes, head] for c in _place_claims(h, who, "location", ("in",), False)][:1]
    courses = [c for c in head.children if c.dep_ == "dobj" and c.lemma_ in _COURSES]
    if lemma in ("do", "study", "start", "begin") and courses and not ended and not _negated(head):  # "doing my second year at Victoria University"
        return [c for w in courses[:1] for h in (w, head) for c in _place_claims(h, who, "employer", ("at", "with"), False)][:1]
    if lemma == "find" and not _negated(head) and head.tag_ in ("VBZ", "VBP"):
        # "I find ceilidh dancing excruciating", "she finds knitting relaxing": a taste by how it feels (the words
        # between the verb and the feeling: the tagger parses them many ways)
        feel = next((t for t in head.doc[head.i + 1: head.i + 8] if t.lower_ in _FEELS), None)
        words = [t for t in head.doc[head.i + 1: feel.i] if t.dep_ != "det"] if feel is not None else []
        if feel is not None and words and len(words) <= 5 and not any(t.pos_ in ("PRON", "PUNCT", "AUX") for t in words):
            return [_claim(who, _FEELS[feel.lower_], head.doc[words[0].i: words[-1].i + 1].text)]
    if lemma in ("follow", "support") and not _negated(head):  # "I've followed the Toronto Maple Leafs my whole life"
        return [_claim(who, "likes", _phrase(c)) for c in head.children if c.dep_ == "dobj" and _proper(c)]
    if lemma in ("stand", "stomach", "bear", "abide") and _negated(head):
        return [_claim(who, "dislikes", _phrase(o)) for o in _objects(head)]
    present = head.tag_ in ("VBZ", "VBP") or head.tag_ == "VBG" and any(c.dep_ == "aux" and c.lemma_ == "be" for c in head.children)
    if present and lemma not in _NOT_FOR_WORK and not _negated(head):
        # "fits solar panels for EDP", "drives for Uber", "I do FIFO rotations for BHP as a mining engineer": what
        # someone does for an organisation is their work; after a role ("as a consultant for Toshiba") any name is
        roles = [c for p, o in _preps(head) if p == "as" for c in _job_claims(o, who, False, role=True)]
        done: list[Token] = [head, *(c for c in head.children if c.dep_ == "dobj"), *(o for p, o in _preps(head) if p == "as")]
        for_firm: list[Claim] = [_claim(who, "employer", _phrase(o, conj=True)) for h in done for p, o in _preps(h)
                                 if p == "for" and _proper(o) and (roles or frames.is_organisation(_phrase(o, conj=True)))][:1]
        return for_firm + [c for c in roles if c.attribute == "occupation"] if for_firm else []
    return []


def _objects(head: Token) -> list[Token]:
    """What a verb of taste takes: a noun ("olives"), an activity ("running", "to swim"), or what a clause of
    "how" is about ("I love how video games spark your imagination")."""
    found = [c for c in head.children if c.dep_ == "dobj" and c.pos_ in ("NOUN", "PROPN")
             or c.dep_ in ("xcomp", "dobj") and c.tag_ == "VBG"]
    found += [s for c in head.children if c.dep_ == "ccomp" and any(m.lower_ == "how" for m in c.children)
              for s in c.children if s.dep_ == "nsubj" and s.pos_ in ("NOUN", "PROPN") and s.tag_ in ("NNS", "NN", "NNP")
              and not any(d.dep_ in ("det", "poss") for d in s.children)]
    # "the job", "that place": a thing named before, not a taste
    found = [c for c in found if c.lower_ not in ("it", "this", "that", "them", "him", "her")
             and not any(d.dep_ == "poss" and d.lower_ in ("his", "her", "their", "your", "its") for d in c.children)  # "his tech"
             and not (c.pos_ == "NOUN" and any(d.dep_ == "det" and d.lower_ in ("the", "this", "that") for d in c.children))][:1]
    # "I love having them around": an activity done to something named before is no taste of its own
    found = [c for c in found if not (c.tag_ == "VBG" and any(d.dep_ in ("dobj", "nsubj") and d.lower_ in _NOTHING
                                                              for d in c.children))]
    # "I love going on road trips, exploring and hiking": each activity joined to the first
    return found + [c for f in found if f.tag_ == "VBG" for c in f.conjuncts if c.tag_ == "VBG"]


def _clause_claims(head: Token, speaker: str, people: Mapping[str, str], last: list[str],
                   self_statements: bool) -> list[Claim]:
    subject = _subject(head)
    if subject is None:
        return _fragment_claims(head, speaker, self_statements)
    if _unreal(head):
        name = _name_of(subject)
        if name is not None:
            last.append(name)  # "Itzel has said goodbye to …: she …": the person a later "she" is about
        if subject.lower_ in _SELF and self_statements:  # "As a crane operator, I thought …"
            return _as_role_claims(head, subject, _Who(speaker, True))
        return []
    # "Kofi and Ama both work for …", "my partner and I settled in …": each of the joined subjects
    apposed = [c for c in subject.children if c.dep_ == "appos"]
    subjects = [subject, *(c for t in (subject, *apposed) for c in t.children if c.dep_ == "conj")]
    return [c for s in subjects for c in _subject_claims(head, s, speaker, people, last, self_statements)]


_SOME = frozenset({"thing", "one", "something", "stuff"})


def _relative_taste(head: Token, subject: Token, speaker: str, people: Mapping[str, str], last: list[str],
                    self_statements: bool) -> list[Claim] | None:
    """A taste said by a relative clause around a copula: "the city I love most is Kyoto" (a favourite),
    "the one thing I can't abide is cold coffee", "Taekwondo is something I still love". None when the
    clause is not of that form."""
    # "… is Radiohead": a name the tagger took for an adjective is the value too
    attrs = [c for c in head.children if c.dep_ == "attr" or c.dep_ == "acomp" and c.text[:1].isupper()]
    for noun, value in ((subject, attrs[0] if attrs else None), *((a, subject) for a in attrs)):
        clause = next((c for c in noun.children if c.dep_ == "relcl"), None)
        if clause is None or value is None or _unreal(clause):
            continue
        lemma = clause.lemma_.lower()
        # "the poet I reach for first", "the album I come back to more than any other": the one chosen above the rest
        most = any(t.lower_ in ("most", "best", "first") or t.lower_ == "more" and any(c.lower_ == "than" for c in t.children)
                   for t in clause.subtree if t.i > clause.i)
        if lemma in _LIKE and not _negated(clause):
            attribute = _LIKE[lemma]
        elif lemma in ("stand", "abide", "stomach", "bear") and _negated(clause) or lemma in ("hate", "dislike", "detest"):
            attribute = "dislikes"
        elif most and not _negated(clause) and noun.pos_ == "NOUN" and noun.lower_ not in _SOME \
                and head.tag_ in ("VBZ", "VBP") and clause.tag_ != "VBD":
            attribute = "likes"
        else:
            continue
        taster = _subject(clause)
        who = _resolve(taster, speaker, people, last, self_statements) if taster is not None else None
        if who is None:
            return []
        if noun.lower_ in _SOME or noun.pos_ != "NOUN":
            return [_claim(who, attribute, _phrase(value))]
        if most and attribute == "likes":
            return [_claim(who, f"favorite {noun.lower_}", _phrase(value))]
        return [_claim(who, attribute, _phrase(value))]
    return None


_FEELS = {**dict.fromkeys(("boring", "tedious", "unbearable", "excruciating", "dull", "tiresome", "slimy", "disgusting",
                           "gross", "revolting", "annoying"), "dislikes"),
          **dict.fromkeys(("relaxing", "fascinating", "soothing", "therapeutic"), "likes")}
_KEEN = frozenset({"obsessed", "hooked", "crazy", "mad", "nuts", "addicted", "passionate"})


def _keen_claims(word: Token, who: _Who) -> list[Claim]:
    """"obsessed with padel", "hooked on sudoku": a taste."""
    if word.lower_ not in _KEEN:
        return []
    objects = [*_preps(word), *((p.lower_, o) for p in word.children if p.dep_ == "prep" for o in p.children
                                if o.dep_ == "pcomp" and o.tag_ == "VBG")]  # "passionate about making a difference"
    return [_claim(who, "likes", _thing(o) if o.tag_ == "VBG" else _phrase(o)) for p, o in objects
            if p in ("with", "on", "about", "to") and (o.pos_ in ("NOUN", "PROPN") or o.tag_ == "VBG") and o.lower_ not in _NOTHING]


def _fragment_claims(head: Token, speaker: str, self_statements: bool) -> list[Claim]:
    """A message that leaves out its "I" ("Moved to Leeds last month", "Currently renting a flat in
    Utrecht", "obsessed with padel rn"): a sentence opened by a past or -ing verb, or by an adjective,
    with no subject. A bare verb ("Move to Leeds") is a command, and says nothing."""
    if not self_statements or head.dep_ != "ROOT" or head.tag_ not in ("VBD", "VBN", "VBG", "JJ"):
        return []
    before = [t for t in head.sent if t.i < head.i]
    if any(t.dep_ not in ("advmod", "intj", "punct") for t in before) or _unreal(head) and head.tag_ != "VBG":
        return []
    who = _Who(speaker, True)
    if head.pos_ == "ADJ" or head.lower_ in _KEEN:
        return [c for c in _keen_claims(head, who) if c.value]
    if head.lemma_ == "be" and head.tag_ == "VBN":  # "Been a ward sister since Monday"
        return [c for c in _copula_claims(head, who, False) if c.value]
    return [c for c in _verb_claims(head, who, _ended(head)) if c.value or c.negated]


def _owned_claims(head: Token, noun: Token, who: _Who, ended: bool) -> list[Claim]:
    """"Jean-Luc's new job is cabin steward with Air France", "Kwame's home is Rotterdam now"."""
    if head.lemma_ != "be" or ended or _negated(head):
        return []
    out: list[Claim] = []
    for child in head.children:
        values = [child] if child.dep_ == "attr" else [o for p, o in _preps(head) if p == "as"] if child.dep_ == "prep" else []
        for value in values:
            if noun.lower_ in _JOB_NOUNS:
                out += _job_claims(value, who, False)
                out += [_claim(who, "employer", _phrase(o)) for p, o in _preps(value) if p in ("with", "at", "for")
                        and _proper(o) and not any(c.attribute == "employer" for c in out)]
            elif noun.lower_ == "home" and _proper(value):
                out.append(_claim(who, "location", _phrase(value)))
    return out


# verbs after which "as a …" is a costume, a part or a guise, not a job ("going to the party as a 1920s aviator")
_NOT_AS_A_JOB = frozenset({"work", "start", "begin", "go", "come", "dress", "turn", "show", "appear", "play", "pose", "act",
                           "pretend", "attend", "travel", "visit", "see", "treat", "know", "think", "describe", "introduce"})
_NOT_NOW = frozenset({"former", "ex", "retired", "future", "aspiring", "wannabe", "would-be", "young", "trainee"})


def _as_role_claims(head: Token, subject: Token, who: _Who) -> list[Claim]:
    """"As a crane operator at the Port of Durban, I …", "I've been making kitchens to order as a cabinetmaker":
    who the subject is, said in passing (after the verb only where it is not in the past)."""
    out: list[Claim] = []
    # "making kitchens to order as a cabinetmaker": the role may hang off a clause of the verb
    around = [(p, o) for h in [head, *(c for c in head.children if c.dep_ in ("advcl", "xcomp") and c.tag_ == "VB")]
              for p, o in _preps(h)]
    for prep, obj in around:
        if prep == "as" and (obj.i < subject.i or head.tag_ in ("VBG", "VBZ", "VBP") and head.lemma_ not in _NOT_AS_A_JOB) \
                and obj.pos_ == "NOUN" and is_profession(_phrase(obj)) and obj.lower_ not in _JOB_NOUNS | _NO_ROLE \
                and not any(c.lower_ in _NOT_NOW for c in obj.children):
            out += _job_claims(obj, who, False)
    return out


_FAVES = frozenset({"favorite", "favourite", "fave", "fav", "faves", "favs", "favorites", "favourites", "passion", "thing",
                    "obsession", "jam", "pick", "go", "to"})
_MY_PICK = frozenset({"drink", "tipple", "poison", "ride", "car", "brew"})
_VERDICTS = {**dict.fromkeys(("delicious", "amazing", "brilliant", "wonderful", "incredible", "addictive"), "likes"),
             **dict.fromkeys(("disgusting", "gross", "vile", "revolting", "overrated", "horrible", "awful"), "dislikes")}
_HAPPY = frozenset({"happy", "calm", "relaxed", "content", "joyful", "alive", "smile", "peaceful"})
_JOY = frozenset({"joy", "peace", "happiness", "comfort", "calm"})


def _thing(subject: Token) -> str:
    """What a taste is of: a noun phrase, or an activity with its object ("Drawing flowers", "playing board games";
    not what is joined to it: "exploring and hiking" are two)."""
    if subject.tag_ == "VBG" or subject.dep_ == "csubj":
        cut = {t.i for c in subject.children if c.dep_ in ("conj", "cc", "punct", "advcl", "advmod") for t in c.subtree}
        words = [t for t in subject.subtree if t.i not in cut]
        while words and words[0].dep_ == "det":
            words.pop(0)
        # a taste is a short name for an activity; a long clause ("making sure veterans are supported and valued in
        # our community") is a sentiment of the moment that would crowd memory: no taste
        return " ".join(t.text for t in words) if len(words) <= _MAX_ACTIVITY_WORDS else ""
    return _phrase(subject, conj=True)


def _speakers_taste(head: Token, subject: Token, speaker: str) -> list[Claim]:
    """"Drawing flowers is one of my faves", "Painting is my favorite!", "Dance is my go-to", "Iron Man is my top
    pick", "The allotment is my happy place": something the speaker likes, said of the thing."""
    if head.tag_ == "VBD" or subject.pos_ == "PRON" or subject.lower_ in _SOME:
        return []
    me = _Who(speaker, True)
    bare = subject.tag_ in ("NNS", "NNPS") and not any(c.dep_ in ("det", "poss", "nummod") for c in subject.children)
    for child in head.children:
        if child.dep_ == "acomp" and bare and child.lower_ in _VERDICTS:  # "Anchovies, it turns out, are delicious"
            return [_claim(me, _VERDICTS[child.lower_], _phrase(subject))]
        if child.dep_ == "attr" and child.lemma_ in _MY_PICK and any(c.dep_ == "poss" and c.lower_ == "my" for c in child.children):
            return [_claim(me, "prefers", _thing(subject))]  # "cider's my drink these days"
        if child.dep_ not in ("attr", "acomp"):
            continue
        owned = [child, *(o for p, o in _preps(child) if p == "of" and child.lower_ == "one")]  # "one of my faves"
        for noun in owned:
            mine = any(c.dep_ == "poss" and c.lower_ == "my" for c in noun.children) or any(
                c.dep_ == "poss" and c.lower_ == "my" for c in noun.head.children if noun.dep_ == "compound")
            happy_place = noun.lemma_ == "place" and any(c.lower_ == "happy" for c in noun.children)
            if mine and (noun.lower_ in _FAVES or happy_place or any(c.lower_ in ("favorite", "favourite") for c in noun.children)):
                kind = noun.lemma_ if noun.lower_ not in _FAVES and not happy_place and noun.pos_ == "NOUN" else ""
                thing = _thing(subject)
                if not thing:
                    return []
                return [_claim(me, f"favorite {kind}" if kind and child.lower_ != "one" else "likes", thing)]
    return []


def _pleases_me(head: Token, subject: Token, speaker: str) -> list[Claim]:
    """"Dancing makes me so happy", "Gardening brings me such joy": a taste by what it does to the speaker."""
    if subject.pos_ == "PRON" or subject.lower_ in _SOME or head.tag_ not in ("VBZ", "VBP"):
        return []
    me_said = any(t.lower_ == "me" for t in head.children) or any(
        t.lower_ == "me" for c in head.children if c.dep_ in ("ccomp", "xcomp") for t in c.children)
    pleased = any(t.lower_ in _HAPPY for c in head.children for t in (c, *c.children)) if head.lemma_ == "make" else any(
        c.dep_ == "dobj" and c.lemma_ in _JOY for c in head.children)
    return [_claim(_Who(speaker, True), "likes", _thing(subject))] if me_said and pleased else []


def _inverted_claims(head: Token, subject: Token, speaker: str) -> list[Claim]:
    """"The twenty-third of October is my birthday": the value before the copula, the speaker's noun after;
    "my roots are in Fès": where the speaker is from; "home is Fremantle": where the speaker lives."""
    if subject.lower_ == "home" and not any(c.dep_ in ("det", "poss") for c in subject.children) and head.tag_ != "VBD":
        return [_claim(_Who(speaker, True), "location", _phrase(c)) for c in head.children
                if c.dep_ == "attr" and _proper(c)][:1]
    if subject.lower_ == "roots" and any(c.dep_ == "poss" and c.lower_ == "my" for c in subject.children) \
            and head.tag_ != "VBD":
        return [_claim(_Who(speaker, True), "origin", _phrase(o)) for p, o in _preps(head) if p == "in" and _proper(o)][:1]
    for attr in (c for c in head.children if c.dep_ == "attr"):
        mine = any(c.dep_ == "poss" and c.lower_ == "my" for c in attr.children)
        if mine and attr.lower_ == "birthday" and head.tag_ != "VBD":
            words = [t for t in subject.subtree if not (t.dep_ == "det" and t.i == subject.left_edge.i)]
            value = subject.doc[words[0].i: words[-1].i + 1].text if words else ""
            return [_claim(_Who(speaker, True), "birthday", value)] if value else []
    return []


def _subject_claims(head: Token, subject: Token, speaker: str, people: Mapping[str, str], last: list[str],
                    self_statements: bool) -> list[Claim]:
    owner = next((c for c in subject.children if c.dep_ == "poss"), None)
    if subject.lower_ in (*_JOB_NOUNS, "home") and owner is not None:
        who = _owner(owner, speaker, people, last, self_statements)
        return _owned_claims(head, subject, who, _ended(head)) if who is not None else []
    favourite = any(c.dep_ == "amod" and c.lower_ in ("favorite", "favourite") for c in subject.children)
    # "Harper's favorite color is teal" (the speaker's own favourites are the patterns')
    if favourite and owner is not None and owner.lower_ not in ("my", "our") and head.lemma_ == "be" \
            and not _negated(head) and head.tag_ != "VBD":
        who = _owner(owner, speaker, people, last, self_statements)
        return [_claim(who, f"favorite {subject.lower_}", _phrase(c)) for c in head.children
                if c.dep_ in ("attr", "acomp")] if who is not None else []
    if head.lemma_ == "be" and not _negated(head):
        found = _relative_taste(head, subject, speaker, people, last, self_statements)
        if found is not None:
            return found
    if head.lemma_ == "be" and not _negated(head) and self_statements:
        said = [c for c in _inverted_claims(head, subject, speaker) or _speakers_taste(head, subject, speaker) if c.value]
        if said:
            return said
    if head.lemma_ in ("make", "bring") and self_statements and not _negated(head) and not _unreal(head):
        said = [c for c in _pleases_me(head, subject, speaker) if c.value]  # a long activity names no taste
        if said:
            return said
    if head.lemma_ in _HIRED and self_statements and _proper(subject) and not _negated(head) and not _unreal(head) \
            and any(c.dep_ == "dobj" and c.lower_ == "me" for c in head.children):
        # "Grundfos has employed me as a test technician since 2017": the subject is the speaker's employer
        me = _Who(speaker, True)
        return [_claim(me, "employer", _phrase(subject, conj=True)),
                *(c for p, o in _preps(head) if p == "as" for c in _job_claims(o, me, False, role=True))]
    who = _resolve(subject, speaker, people, last, self_statements)
    if who is None:
        return []
    ended = _ended(head)
    if head.tag_ == "VBD" and head.lemma_.lower() in _STATES and not ended:
        return []  # "I was a waitress", "she lived in Rome": how things were, not how they are
    out: list[Claim] = []
    if who.relation:
        out.append(Claim(entity=who.entity, attribute="relation", value=who.relation, owner=who.owner))
    if head.lemma_ == "be":
        out += _copula_claims(head, who, ended)
    else:
        out += _verb_claims(head, who, ended)
    out += _as_role_claims(head, subject, who)
    if who.homes_only:
        out = [c for c in out if c.attribute == "location"
               and head.lemma_ in ("live", "move", "relocate", "settle", "resettle", "rent", "set", "make", "be", *_ACQUIRE)]
    return [c for c in out if c.value or c.negated]
