"""PostgreSQL's BM25 postings: a row per (memory, lexeme) in `memory_posting`, kept by triggers on
`memory` in the transaction of the write, so the postings cannot disagree with the rows.

Scoring a query from each candidate's tsvector read every matching row from the heap and unnested
its vector: tens of milliseconds for a user of 100k memories whose query holds a common word
(docs/scaling.md). A posting is a narrow index tuple instead, and a query sums the BM25 terms of its
lexemes' postings in one index-only scan per lexeme (`pg_fulltext.PostgresFullText`).

- `key`: a 64-bit hash of (user, memory type, lexeme), so a user's postings of one lexeme, and of
  one memory type, are one range of the index: tenants and type filters are seeks, not filters;
- `doc`: a 64-bit hash of the memory id (`ix_memory_doc` finds the memory again);
- `tf`, `dl`: the lexeme's count in the memory, plus NEAR_WEIGHT times its count in the words of
  the memory's neighbours (`memory.near`, `store.near`), and the tokens of both, repeats included,
  as FTS5's bm25() measures a row (`tokens_sql`), and `occurred_at` for time windows, all in the index.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from mirix_py.store.near import NEAR_WEIGHT
from mirix_py.text.words import (ACCENT_MARKS, ACCENTED_BASES, ACCENTED_LETTERS, ALEF, ALEF_FORMS, CJK_LETTERS,
                                 DIACRITIC_BASES, DIACRITIC_LETTERS, DIACRITIC_MARKS, FORMATS, JOINERS, LETTER_PAIRS,
                                 LETTERS_FROM, LETTERS_TO, MARKS, SEPARATORS, UNSPACED_LETTERS)

TABLE = "memory_posting"
INDEX = "ix_memory_posting"
DOC_INDEX = "ix_memory_doc"  # memory (hashtextextended(id, 0)): a posting's memory
TSV_INDEX = "ix_memory_tsv"  # the GIN index the tsvector search used


def add_near_columns(conn: Connection) -> None:
    """`memory.near` (the neighbours' words) and its generated tsvector."""
    conn.execute(text("ALTER TABLE memory ADD COLUMN IF NOT EXISTS near text"))
    conn.execute(text("ALTER TABLE memory ADD COLUMN IF NOT EXISTS near_tsv tsvector "
                      "GENERATED ALWAYS AS (to_tsvector('english', coalesce(near, ''))) STORED"))


TEXT_FUNCTION = "mirix_fts_text"  # `words.indexed_text` in SQL: what the tsvectors are made of
UNACCENT_FUNCTION = "mirix_fts_unaccent"  # `words.unaccented` in SQL: what a query's terms are made
TOKENS_FUNCTION = "mirix_fts_tokens"  # `tokens_sql` as a function, for a generated column
CONFIG = "mirix_english"  # the text search configuration of the tsvectors and of the queries
STEMMER = "mirix_english_stem"  # its English (snowball) stemmer, with no stop word list
PLAIN_CONFIG = "english"  # what the tsvectors were made with before revision 0016


def _regex_class(letters: str) -> str:
    """A PostgreSQL regex bracket expression of these letters and ranges, in escapes."""
    return "[" + "".join(c if c == "-" else f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"
                         for c in letters) + "]"


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


# Collations whose lower() maps every letter (a database in the C locale lowers ASCII only, and a
# query's words are lowered in Python): PostgreSQL's own (17 and later), glibc's, ICU's.
UNICODE_COLLATIONS = ("pg_c_utf8", "C.utf8", "C.UTF-8", "und-x-icu")


def unicode_collation(conn: Connection) -> str | None:
    """The first of UNICODE_COLLATIONS this server has and lowers Å with; None: none of them."""
    for name in UNICODE_COLLATIONS:
        try:
            with conn.begin_nested():
                if conn.execute(text(f"SELECT lower('Å' COLLATE \"{name}\")")).scalar_one() == "å":
                    return name
        except DBAPIError:  # not on this server, or its provider not built in
            continue
    return None


def _letters_folded_sql(column: str, from_letters: str, to_bases: str, marks: str = "") -> str:
    """A SQL text column with each of `from_letters` made its base in `to_bases` and `marks`
    dropped, by one regexp_replace per base letter (translate() of so many letters reads them all
    for each character), on text that holds any (a column: it is read more than once)."""
    letters_of: dict[str, str] = {}
    for letter, base in zip(from_letters, to_bases):
        letters_of[base] = letters_of.get(base, "") + letter
    folded = column
    for base, letters in sorted(letters_of.items()):
        folded = f"regexp_replace({folded}, '{_regex_class(letters)}', {_literal(base)}, 'g')"
    if marks:
        folded = f"regexp_replace({folded}, '{_regex_class(marks)}', '', 'g')"
    return f"CASE WHEN {column} ~ '{_regex_class(from_letters + marks)}' THEN {folded} ELSE {column} END"


def _unaccented_sql(column: str) -> str:
    """`words.unaccented` of a SQL text column: the diacritics FTS5's unicode61 folds."""
    return _letters_folded_sql(column, DIACRITIC_LETTERS, DIACRITIC_BASES, DIACRITIC_MARKS)


def _marks_folded_sql(expression: str) -> str:
    """What `words.searchable` does last, in SQL: format characters made spaces, joiners and the
    marks readers take for accents dropped (`words.FORMATS`, `JOINERS`, `ACCENT_MARKS`); the letters
    of accents unicode61 leaves (`words.ACCENTED_LETTERS`) are folded by `_letters_folded_sql`. Then
    what parts words beyond ASCII made a space (`words.SEPARATORS`), where FTS5 parts them: the
    parser of a C-locale database takes every non-ASCII character for a letter (मिला। one word)."""
    for chars, into in ((FORMATS, " "), (JOINERS, ""), (ACCENT_MARKS, ""), (SEPARATORS, " ")):
        expression = f"regexp_replace({expression}, '{_regex_class(chars)}', '{into}', 'g')"
    return expression


def _clusters_split_sql(column: str) -> str:
    """What `words.indexed_text` does last, in SQL, to a text column holding Thai, Lao, Khmer or
    Myanmar letters: each cluster (a letter and the marks after it, `words.CLUSTER`) set apart, then
    the adjacent clusters of each run of two or more, paired in order (`words.cluster_pairs`)."""
    letters = _regex_class(UNSPACED_LETTERS)
    cluster = f"{letters}{_regex_class(MARKS)}*"
    pairs = ("coalesce((SELECT string_agg(' ' || p.pair, '' ORDER BY p.n, p.k) FROM (SELECT r.n, c.k, "
             "c.m[1] || lead(c.m[1]) OVER (PARTITION BY r.n ORDER BY c.k) AS pair "
             f"FROM regexp_matches({column}, '(?:{cluster}){{2,}}', 'g') WITH ORDINALITY AS r(m, n), "
             f"regexp_matches(r.m[1], '{cluster}', 'g') WITH ORDINALITY AS c(m, k)) p WHERE p.pair IS NOT NULL), '')")
    return (f"CASE WHEN {column} ~ '{letters}' THEN regexp_replace({column}, '({cluster})', ' \\1 ', 'g') || {pairs} "
            f"ELSE {column} END")


def text_function_sql(utf8: bool = True, collation: str | None = None, *, unaccent: bool = True,
                      marks: bool = True, clusters: bool = True, alefs: bool = True) -> str:
    """CREATE of TEXT_FUNCTION, the SQL twin of `words.indexed_text` of the text lowered as a query's
    words are (`words.query_terms`; FTS5 lowers every letter itself, to_tsvector in the C locale
    ASCII only), by `collation`'s lower() (`unicode_collation`; None: the database's), with the
    diacritics FTS5 folds taken off last (`unaccent`; as revision 0015 made it without), and the
    accents unicode61 leaves, joiners and format characters as `words.searchable` treats them
    (`marks`; as revisions 0015 and 0016 made it without), and the Thai, Lao, Khmer and Myanmar
    clusters set apart and paired (`clusters`; as revision 0022 made it without), and an Arabic alef's
    hamza or madda taken off (`alefs`, `words.ALEF_FORMS`; as revision 0023 made it without). A
    database not in UTF8 takes the text as written (PostgreSQL normalises Unicode in UTF8 only). Made from the
    constants of `text.words` by the migration that creates it: a change to them needs a migration
    that creates it again."""
    if not utf8:
        body = "SELECT t"
    else:
        lowered = f"lower(normalize(t, NFC) COLLATE \"{collation}\")" if collation else "lower(normalize(t, NFC))"
        letters, bases = LETTERS_FROM, LETTERS_TO
        if alefs:
            letters, bases = letters + ALEF_FORMS, bases + ALEF * len(ALEF_FORMS)
        folded = f"translate({lowered}, {_literal(letters)}, {_literal(bases)})"
        for letter, written in LETTER_PAIRS:
            folded = f"replace({folded}, {_literal(letter)}, {_literal(written)})"
        if marks:  # the accented letters of `f` folded, then the marks and format characters
            folded = (f"(SELECT {_marks_folded_sql(_letters_folded_sql('f', ACCENTED_LETTERS, ACCENTED_BASES.lower()))} "
                      f"FROM (SELECT {folded} OFFSET 0) z(f))")
        cjk = _regex_class(CJK_LETTERS)
        split = (f"regexp_replace(s, '({cjk})', ' \\1 ', 'g') || coalesce((SELECT string_agg(' ' || "
                 "substr(r.m[1], i, 2), '' ORDER BY r.n, i) "
                 f"FROM regexp_matches(s, '({cjk}{{2,}})', 'g') WITH ORDINALITY AS r(m, n), "
                 "generate_series(1, length(r.m[1]) - 1) AS i), '')")
        body = f"SELECT {split} FROM (SELECT {folded} AS s) x"
        if clusters:
            body = f"SELECT {_clusters_split_sql('c')} FROM ({body} OFFSET 0) w(c)"  # c made once, read thrice
        if unaccent:
            body = f"SELECT {_unaccented_sql('u')} FROM ({body} OFFSET 0) y(u)"  # u made once, read thrice
    return (f"CREATE OR REPLACE FUNCTION {TEXT_FUNCTION}(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT "
            f"PARALLEL SAFE AS $f$ {body} $f$")


def unaccent_function_sql(utf8: bool = True) -> str:
    """CREATE of UNACCENT_FUNCTION, which a query's terms (`words.query_terms`) go through before
    CONFIG parses them, as TEXT_FUNCTION's text does last (a database not in UTF8: as written, as
    TEXT_FUNCTION takes it)."""
    body = f"SELECT {_unaccented_sql('t')}" if utf8 else "SELECT t"
    return (f"CREATE OR REPLACE FUNCTION {UNACCENT_FUNCTION}(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT "
            f"PARALLEL SAFE AS $f$ {body} $f$")


def tokens_sql(tsvector: str) -> str:
    """How many tokens made a SQL tsvector, repeats included, as FTS5 counts a text's length: the
    sum of its lexemes' positions (a lexeme without positions: one). A tsvector keeps at most 255
    positions of a lexeme and none past 16383, so a text longer than that counts fewer tokens."""
    return (f"(SELECT CAST(coalesce(sum(coalesce(array_length(t.positions, 1), 1)), 0) AS integer) "
            f"FROM unnest({tsvector}) t)")


def tokens_function_sql() -> str:
    """CREATE of TOKENS_FUNCTION (a generated column cannot hold the subquery of `tokens_sql`)."""
    return (f"CREATE OR REPLACE FUNCTION {TOKENS_FUNCTION}(v tsvector) RETURNS integer LANGUAGE sql IMMUTABLE "
            f"STRICT PARALLEL SAFE AS $f$ SELECT {tokens_sql('v')} $f$")


def create_config(conn: Connection) -> None:
    """CONFIG in the current schema (unless there): a copy of PostgreSQL's english configuration whose
    stemmer drops no stop word, as FTS5's porter tokenizer keeps every word (a query of "the who"
    finds The Who). Needs only CREATE on the schema, as the tables do."""
    exists = conn.execute(text("SELECT 1 FROM pg_ts_config WHERE cfgname = :n AND cfgnamespace = "
                               "CAST(current_schema() AS regnamespace)"), {"n": CONFIG}).first()
    if exists:
        return
    conn.execute(text(f"CREATE TEXT SEARCH DICTIONARY {STEMMER} (TEMPLATE = pg_catalog.snowball, Language = english)"))
    conn.execute(text(f"CREATE TEXT SEARCH CONFIGURATION {CONFIG} (COPY = pg_catalog.english)"))
    conn.execute(text(f"ALTER TEXT SEARCH CONFIGURATION {CONFIG} ALTER MAPPING REPLACE pg_catalog.english_stem "
                      f"WITH {STEMMER}"))


def drop_config(conn: Connection) -> None:
    """CONFIG, TOKENS_FUNCTION and what made them (no column may be made with them any more)."""
    conn.execute(text(f"DROP TEXT SEARCH CONFIGURATION IF EXISTS {CONFIG}"))
    conn.execute(text(f"DROP TEXT SEARCH DICTIONARY IF EXISTS {STEMMER}"))
    conn.execute(text(f"DROP FUNCTION IF EXISTS {UNACCENT_FUNCTION}(text)"))
    conn.execute(text(f"DROP FUNCTION IF EXISTS {TOKENS_FUNCTION}(tsvector)"))


def create_functions(conn: Connection, *, like_sqlite: bool = True, marks: bool = True, clusters: bool = True,
                     alefs: bool = True) -> None:
    """TEXT_FUNCTION (with `marks`: as revision 0022 makes it; and `clusters`: as 0023 does, only with
    `marks`; and `alefs`: as 0024 does, only with `clusters`), and with `like_sqlite` UNACCENT_FUNCTION,
    TOKENS_FUNCTION and CONFIG, for this database."""
    utf8 = conn.execute(text("SELECT current_setting('server_encoding')")).scalar_one() == "UTF8"
    conn.execute(text(text_function_sql(utf8, unicode_collation(conn) if utf8 else None, unaccent=like_sqlite,
                                        marks=marks and like_sqlite, clusters=clusters and marks and like_sqlite,
                                        alefs=alefs and clusters and marks and like_sqlite)))
    if like_sqlite:
        conn.execute(text(unaccent_function_sql(utf8)))
        conn.execute(text(tokens_function_sql()))
        create_config(conn)


def tsvector_sql(expression: str, *, folded: bool = True, like_sqlite: bool = True) -> str:
    """The tsvector of a SQL text expression as the index makes it: of TEXT_FUNCTION (`folded`) by
    CONFIG (`like_sqlite`: accents folded, stop words kept), else as revisions before 0016 made it."""
    if folded:
        expression = f"{TEXT_FUNCTION}({expression})"
    return f"to_tsvector('{CONFIG if folded and like_sqlite else PLAIN_CONFIG}', {expression})"


def index_columns(conn: Connection, *, folded: bool = True, like_sqlite: bool = True, marks: bool = True,
                  clusters: bool = True, alefs: bool = True) -> None:
    """`memory.tsv` and `memory.near_tsv` generated again (`tsvector_sql`): of TEXT_FUNCTION of the
    text (`folded`) by CONFIG (`like_sqlite`), as revision 0024 makes them (0023 without `alefs`, 0022
    without `clusters` either, 0016 without `marks` either); of TEXT_FUNCTION by
    english (`like_sqlite=False`), as revision 0015 made them; of the text as written by english
    (`folded=False`), as before 0015. PostgreSQL cannot change a generated column's expression in
    place: each is dropped and added (the table is written again). The postings must be dropped
    before (`drop`) and made after (`create`)."""
    if folded:
        create_functions(conn, like_sqlite=like_sqlite, marks=marks, clusters=clusters, alefs=alefs)
    own = tsvector_sql("text", folded=folded, like_sqlite=like_sqlite)
    near = tsvector_sql("coalesce(near, '')", folded=folded, like_sqlite=like_sqlite)
    conn.execute(text("ALTER TABLE memory DROP COLUMN IF EXISTS tsv, DROP COLUMN IF EXISTS near_tsv"))
    conn.execute(text(f"ALTER TABLE memory ADD COLUMN tsv tsvector GENERATED ALWAYS AS ({own}) STORED, "
                      f"ADD COLUMN near_tsv tsvector GENERATED ALWAYS AS ({near}) STORED"))
    if not folded:
        conn.execute(text(f"DROP FUNCTION IF EXISTS {TEXT_FUNCTION}(text)"))


def key_sql(user: str, memory_type: str, lexeme: str) -> str:
    """SQL for a posting key from three SQL expressions (chr(31) cannot occur in any of them)."""
    return f"hashtextextended({user} || chr(31) || {memory_type} || chr(31) || {lexeme}, 0)"


def doc_sql(memory_id: str) -> str:
    return f"hashtextextended({memory_id}, 0)"


def _lexemes_of(row: str) -> str:
    """A LATERAL subquery of row `row`'s lexemes with their weighed counts: its own (`tsv`) and its
    neighbours' words (`near_tsv`, `store.near`) at NEAR_WEIGHT, summed per lexeme; and the row's
    tokens in both (`dl`, as `tokens_sql` counts them, in the same pass over the lexemes)."""
    own = "coalesce(array_length(u.positions, 1), 1)"
    near = "coalesce(array_length(v.positions, 1), 1)"
    return ("(SELECT lexeme, CAST(sum(w) AS real) AS tf, CAST(sum(sum(n)) OVER () AS integer) AS dl FROM ("
            f"SELECT u.lexeme, {own} AS w, {own} AS n FROM unnest({row}.tsv) u "
            f"UNION ALL SELECT v.lexeme, {float(NEAR_WEIGHT)} * {near}, {near} "
            f"FROM unnest({row}.near_tsv) v) x GROUP BY lexeme)")


def row_tokens_sql(row: str) -> str:
    """The tokens of memory row `row`: its own words and its neighbours', as a posting's `dl`."""
    return f"{tokens_sql(row + '.tsv')} + {tokens_sql(row + '.near_tsv')}"


def _postings_of(rows: str) -> str:
    """SELECT of the postings of the memory rows in `rows` (alias r)."""
    return (f"SELECT {key_sql('r.user_id', 'r.memory_type', 'l.lexeme')}, {doc_sql('r.id')}, "
            "l.tf, l.dl, r.occurred_at "
            f"FROM {rows} r CROSS JOIN LATERAL {_lexemes_of('r')} l")


def _delete_postings_of(rows: str, where: str = "TRUE") -> str:
    return (f"DELETE FROM {TABLE} p USING (SELECT {key_sql('r.user_id', 'r.memory_type', 'l.lexeme')} AS key, "
            f"{doc_sql('r.id')} AS doc FROM {rows} r CROSS JOIN LATERAL {_lexemes_of('r')} l WHERE {where}) x "
            "WHERE p.key = x.key AND p.doc = x.doc")


def _unchanged(other: str) -> str:
    """Row `other` is row r as far as its postings go: an update must change one of these."""
    return (f"{other}.id = r.id AND {other}.user_id = r.user_id AND {other}.memory_type = r.memory_type "
            f"AND {other}.tsv = r.tsv AND {other}.near_tsv = r.near_tsv "
            f"AND {other}.occurred_at IS NOT DISTINCT FROM r.occurred_at")


# Statement-level triggers with transition tables: a bulk write (a user deleted, a restore) is one
# join, not a trigger call per row.
TRIGGERS = {
    "insert": ("REFERENCING NEW TABLE AS new_rows",
               f"INSERT INTO {TABLE} (key, doc, tf, dl, occurred_at) {_postings_of('new_rows')};"),
    "delete": ("REFERENCING OLD TABLE AS old_rows", _delete_postings_of("old_rows") + ";"),
    "update": ("REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
               _delete_postings_of("old_rows", f"NOT EXISTS (SELECT 1 FROM new_rows n WHERE {_unchanged('n')})") + ";\n"
               f"INSERT INTO {TABLE} (key, doc, tf, dl, occurred_at) {_postings_of('new_rows')} "
               f"WHERE NOT EXISTS (SELECT 1 FROM old_rows o WHERE {_unchanged('o')});"),
}


def create(conn: Connection) -> None:
    """The table, its index, the triggers, and the postings of the rows already there."""
    conn.execute(text(f"CREATE TABLE IF NOT EXISTS {TABLE} (key bigint NOT NULL, doc bigint NOT NULL, "
                      "tf real NOT NULL, dl integer NOT NULL, occurred_at timestamptz)"))
    conn.execute(text(f"CREATE INDEX IF NOT EXISTS {INDEX} ON {TABLE} (key, doc) INCLUDE (tf, dl, occurred_at)"))
    conn.execute(text(f"CREATE INDEX IF NOT EXISTS {DOC_INDEX} ON memory ({doc_sql('id')})"))
    for op, (referencing, body) in TRIGGERS.items():
        # the schema the tables are in now, whatever the search path of the session that writes
        conn.execute(text(f"CREATE OR REPLACE FUNCTION mirix_memory_postings_{op}() RETURNS trigger "
                          f"LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ BEGIN\n{body}\nRETURN NULL; END $$"))
        conn.execute(text(f"DROP TRIGGER IF EXISTS memory_postings_{op} ON memory"))
        conn.execute(text(f"CREATE TRIGGER memory_postings_{op} AFTER {op.upper()} ON memory {referencing} "
                          f"FOR EACH STATEMENT EXECUTE FUNCTION mirix_memory_postings_{op}()"))
    rebuild(conn)


def rebuild(conn: Connection) -> int:
    """Every posting again from the rows; returns how many memories hold any."""
    conn.execute(text(f"DELETE FROM {TABLE}"))
    conn.execute(text(f"INSERT INTO {TABLE} (key, doc, tf, dl, occurred_at) {_postings_of('memory')}"))
    return int(conn.execute(text(f"SELECT count(DISTINCT doc) FROM {TABLE}")).scalar_one())


def drop(conn: Connection) -> None:
    for op in TRIGGERS:
        conn.execute(text(f"DROP TRIGGER IF EXISTS memory_postings_{op} ON memory"))
        conn.execute(text(f"DROP FUNCTION IF EXISTS mirix_memory_postings_{op}()"))
    conn.execute(text(f"DROP TABLE IF EXISTS {TABLE}"))
    conn.execute(text(f"DROP INDEX IF EXISTS {DOC_INDEX}"))
