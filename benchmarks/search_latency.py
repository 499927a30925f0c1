"""Search latency of the engine at N memories per user, beside a bare Chroma query on the same vectors.

Layout per size N: ten users in one fresh data dir (embedded SQLite + embedded Chroma). The target
user holds N memories; nine other users hold N/10 each (so 1.9 N in all), drawn from the same pool
of texts, so the full-text index and the Chroma client carry other users' data as they would in a
shared deployment. Memories are short synthetic sentences generated from word lists with a fixed
seed (80% episodic "[date] Name: sentence", 20% semantic "Name: fact"), written through
`mx.store.apply` in InsertOp batches of 1000. With `--turns-per-input N`, the episodes of each run of N
pool texts name one input, so hybrid search's session leg has sessions to rank (by default they
name none and the leg finds no session).

Embeddings of the pool's embedding texts (`memory.embedding_text()`: what the store embeds, e.g. an
episode without its date) are computed once with the engine's embedder (MiniLM; `--embedder minilm:int8` its int8 graph) and cached under
./.bench-cache/ (100k texts take minutes on 2 cores; later runs and smaller sizes reuse them); the
cache keeps a key per text it holds a vector for, so a change to what the store embeds
recomputes it instead of serving stale vectors. The engine receives them through a lookup embedder,
so inserts do not re-embed (a text it misses is an error). Queries are never precomputed for the engine: every timed engine search embeds its own query with MiniLM, and every
query text is distinct across all methods, and the searchers' query-embedding caches are cleared
before each search (questions that differ only in a name are the same without it, and the name-free
legs embed that).

Timed, interleaved query by query: engine hybrid, bm25 and embedding search (limit 10), a bare
Chroma collection holding the target user's N vectors (n_results 10) with the query embedding
excluded (vectors precomputed) and included, MiniLM embedding one query alone, and hybrid search
without the name-free legs (a second searcher on the same store, `name_legs` off), so the legs'
cost is measured in the same run whatever the machine's load; and `/context` as REST and the framework
adapters call it (`retrieve_context`, `max_items` the limit: chat's coarse retrieval over every type but
core, the target user holding one `human` core block).

    .venv/bin/python benchmarks/search_latency.py --sizes 2000            # quick, ~1-2 min
    .venv/bin/python benchmarks/search_latency.py --sizes 10000 100000 --out latency.json
"""

from __future__ import annotations

import argparse
import hashlib
import random
import shutil
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Sequence

import _common as C

GENERATOR_VERSION = 1
TARGET_P95_MS = 25.0
BATCH = 1000
UNNAMED = "engine hybrid, name legs off"
CONTEXT = "engine /context (retrieve_context)"  # what REST /context and the framework adapters call
CHECKPOINT_SECONDS = 60.0  # while embedding the pool, save the cache at least this often

# ------------------------------------------------------------------ word lists

NAMES = """Ada Alan Alice Amir Ana Andre Anya Arjun Ben Bianca Bo Carla Chen Chloe Dario Dev Diego Elena Eli
Emma Farah Felix Fatima Gabe Grace Hana Hugo Ines Ivan Jade Jon Julia Kai Kenji Lara Leo Lina Luca Maya Mei
Milo Nadia Nate Nina Noor Omar Oscar Pablo Priya Quinn Rafa Rosa Ruth Sam Sara Sofia Tariq Theo Uma Vera
Victor Wen Yara Yusuf Zoe Caroline Melanie Joanna Gina Maria Tim John Marcus Helen Ravi Petra Tomas Lucia
Kofi Amara Selin Jonas Mateo Ingrid Hiro Aisha""".split()
PLACES = """the farmers market|the climbing gym|the public library|the pottery studio|the train station|
Lisbon|Kyoto|the old harbour|the community garden|the downtown bakery|the art museum|the ski resort|
the dog park|the jazz club|the night market|the hospital cafeteria|the coworking space|the lake cabin|
the science fair|the record store|the bike shop|the vineyard|the bowling alley|the botanical garden|
the football stadium|the bookshop on Main Street|the beach in Nice|the mountain hut|the food truck festival|
the city hall|the yoga retreat|the swimming pool|Barcelona|Montreal|the flea market|the tea house|
the hardware store|the concert hall|the aquarium|the campsite by the river|the chess club|the animal shelter|
the dance school|the ramen place|the observatory|the ice rink|the comic convention|the rooftop bar|
the farm stand|the repair cafe""".replace("\n", "").split("|")
ACTIVITIES = [  # (base, past)
    ("go hiking", "went hiking"), ("bake sourdough bread", "baked sourdough bread"),
    ("fix the bike chain", "fixed the bike chain"), ("paint a sunrise", "painted a sunrise"),
    ("run a half marathon", "ran a half marathon"), ("adopt a puppy", "adopted a puppy"),
    ("plant tomatoes", "planted tomatoes"), ("learn the guitar", "learned the guitar"),
    ("visit grandparents", "visited grandparents"), ("volunteer at the shelter", "volunteered at the shelter"),
    ("watch a documentary", "watched a documentary"), ("build a bookshelf", "built a bookshelf"),
    ("try rock climbing", "tried rock climbing"), ("write a short story", "wrote a short story"),
    ("host a board game night", "hosted a board game night"), ("go kayaking", "went kayaking"),
    ("study for the exam", "studied for the exam"), ("repaint the kitchen", "repainted the kitchen"),
    ("join a book club", "joined a book club"), ("sell old furniture", "sold old furniture"),
    ("take a pottery class", "took a pottery class"), ("cook a curry", "cooked a curry"),
    ("start a podcast", "started a podcast"), ("go to a concert", "went to a concert"),
    ("photograph birds", "photographed birds"), ("knit a scarf", "knitted a scarf"),
    ("move apartments", "moved apartments"), ("interview for a job", "interviewed for a job"),
    ("organise a fundraiser", "organised a fundraiser"), ("go camping", "went camping"),
    ("attend a support group", "attended a support group"), ("renew the passport", "renewed the passport"),
    ("sign up for salsa lessons", "signed up for salsa lessons"), ("repair the roof", "repaired the roof"),
    ("teach a coding workshop", "taught a coding workshop"), ("go skiing", "went skiing"),
    ("brew kombucha", "brewed kombucha"), ("read a mystery novel", "read a mystery novel"),
    ("coach the kids' soccer team", "coached the kids' soccer team"), ("launch a small online shop", "launched a small online shop"),
]
ADJECTIVES = """red old tiny huge vintage handmade cheap expensive noisy quiet bright dusty shiny wooden
broken brand-new lovely strange heavy light colourful antique secondhand fancy simple cosy""".split()
OBJECTS = """bicycle camera guitar lamp backpack kettle painting sweater tent telescope notebook laptop
scarf vase rug clock chair piano jacket drone blender bookshelf kayak surfboard watch umbrella""".split()
TOPICS = """climate change|medieval history|machine learning|gardening|jazz|urban planning|nutrition|
astronomy|photography|mental health|personal finance|woodworking|ocean conservation|chess openings|
birdwatching|ancient Rome|film noir|beekeeping|space travel|minimalism|parenting|quantum physics|
street art|volcanoes|coffee roasting|adoption|LGBTQ rights|hiking trails|sourdough|marathon training""".replace("\n", "").split("|")
TIMES = """last weekend|yesterday|on Tuesday morning|last summer|two weeks ago|on her birthday|
this morning|during the holidays|after work|in the spring|last night|on Sunday afternoon|a month ago|
over the long weekend|before the trip|in January|at dawn|after the storm""".replace("\n", "").split("|")
FEELINGS = """proud tired relieved excited nervous grateful calm frustrated inspired nostalgic hopeful
exhausted happy""".split()
DISHES = """lasagna|a lemon cake|paella|dumplings|tacos|a vegetable curry|ramen|apple pie|sushi|
pancakes|moussaka|a mushroom risotto|empanadas|falafel""".replace("\n", "").split("|")
JOBS = """nurse teacher carpenter designer engineer chef librarian pharmacist photographer counsellor
mechanic architect baker journalist veterinarian""".split()
CITIES = """Porto Denver Osaka Nairobi Leeds Austin Lyon Seoul Bergen Quito Perth Tucson Gdansk Cork""".split()
RELATIONS = """sister brother cousin best friend neighbour colleague mentor roommate aunt uncle""".split()
SKILLS = """Spanish|the piano|watercolour|Python|sign language|woodcarving|pottery|calligraphy|surfing|
the violin|Japanese|chess|rock climbing|improv""".replace("\n", "").split("|")


def _pick(rng: random.Random, items: Sequence[Any]) -> Any:
    return items[rng.randrange(len(items))]


def make_episode(rng: random.Random) -> tuple[str, str]:
    """(actor, sentence)"""
    n, n2 = _pick(rng, NAMES), _pick(rng, NAMES)
    base, past = _pick(rng, ACTIVITIES)
    t = rng.randrange(10)
    if t == 0:
        s = f"{n} {past} at {_pick(rng, PLACES)} {_pick(rng, TIMES)}."
    elif t == 1:
        s = f"{n} said the {_pick(rng, ADJECTIVES)} {_pick(rng, OBJECTS)} from {_pick(rng, PLACES)} was a great find."
    elif t == 2:
        s = f"{n} and {n2} {past} {_pick(rng, TIMES)} and felt {_pick(rng, FEELINGS)}."
    elif t == 3:
        s = f"{n} bought a {_pick(rng, ADJECTIVES)} {_pick(rng, OBJECTS)} for {rng.randrange(5, 900)} dollars at {_pick(rng, PLACES)}."
    elif t == 4:
        s = f"{n} is planning to {base} with {n2} {_pick(rng, ['next month', 'this weekend', 'in the autumn', 'after the exams', 'next year'])}."
    elif t == 5:
        s = f"{n} recommended a book about {_pick(rng, TOPICS)} to {n2} {_pick(rng, TIMES)}."
    elif t == 6:
        s = f"{n} had a long talk about {_pick(rng, TOPICS)} with {n2} at {_pick(rng, PLACES)}."
    elif t == 7:
        s = f"{n} lost the {_pick(rng, ADJECTIVES)} {_pick(rng, OBJECTS)} near {_pick(rng, PLACES)} {_pick(rng, TIMES)}."
    elif t == 8:
        s = f"{n} started learning {_pick(rng, SKILLS)} because {n2} {past} {_pick(rng, TIMES)}."
    else:
        s = f"{n} cooked {_pick(rng, DISHES)} for {n2}'s party {_pick(rng, TIMES)} and felt {_pick(rng, FEELINGS)}."
    return n, s


def make_fact(rng: random.Random) -> tuple[str, str]:
    """(name, summary)"""
    n, n2 = _pick(rng, NAMES), _pick(rng, NAMES)
    t = rng.randrange(4)
    if t == 0:
        return n2, f"{n}'s {_pick(rng, RELATIONS)}, works as a {_pick(rng, JOBS)} in {_pick(rng, CITIES)}"
    if t == 1:
        return n, f"lives in {_pick(rng, CITIES)} and loves {_pick(rng, TOPICS)}"
    if t == 2:
        return n, f"favourite dish is {_pick(rng, DISHES)}; owns a {_pick(rng, ADJECTIVES)} {_pick(rng, OBJECTS)}"
    return n, f"has been learning {_pick(rng, SKILLS)} since moving to {_pick(rng, CITIES)}"


def make_query(rng: random.Random) -> str:
    n, n2 = _pick(rng, NAMES), _pick(rng, NAMES)
    base, past = _pick(rng, ACTIVITIES)
    t = rng.randrange(10)
    return [
        f"When did {n} {base}?",
        f"What did {n} buy at {_pick(rng, PLACES)}?",
        f"Who did {n} cook {_pick(rng, DISHES)} for?",
        f"Where did {n} lose the {_pick(rng, OBJECTS)}?",
        f"What does {n} think about {_pick(rng, TOPICS)}?",
        f"Where does {n}'s {_pick(rng, RELATIONS)} work?",
        f"Why did {n} start learning {_pick(rng, SKILLS)}?",
        f"How did {n} feel after they {past} with {n2}?",
        f"{n} {_pick(rng, ADJECTIVES)} {_pick(rng, OBJECTS)} {_pick(rng, TIMES)}",
        f"which book about {_pick(rng, TOPICS)} did {n} recommend to {n2}",
    ][t]


# ------------------------------------------------------------------ pool of memories

BASE_TIME = datetime(2023, 1, 1, 9, 0, tzinfo=timezone.utc)


def pool_records(n: int, seed: int) -> list[tuple[str, str, str, datetime]]:
    """n distinct (kind, who, text, occurred_at); the first k of a longer pool are the pool of k."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out = []
    while len(out) < n:
        if rng.random() < 0.8:
            who, text = make_episode(rng)
            kind = "episodic"
        else:
            who, text = make_fact(rng)
            kind = "semantic"
        key = f"{kind}|{who}|{text}"
        if key in seen:
            continue
        seen.add(key)
        out.append((kind, who, text, BASE_TIME + timedelta(minutes=7 * len(out))))
    return out


def to_memory(rec: tuple[str, str, str, datetime], user_id: str, input_id: str | None = None):
    """`input_id`: the input an episode came from (its session, for hybrid search's session leg)."""
    from mirix_py.records import EpisodicMemory, SemanticMemory

    kind, who, text, when = rec
    if kind == "episodic":
        return EpisodicMemory(user_id=user_id, summary=text, actor=who, occurred_at=when, event_type="message",
                              source_ids=[input_id] if input_id else [])
    return SemanticMemory(user_id=user_id, name=who, summary=text, occurred_at=when)


def text_keys(texts: Sequence[str]) -> Any:
    """One 64-bit BLAKE2b key per text: what each cached vector row was computed from."""
    import numpy as np

    return np.array([int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little") for t in texts],
                    dtype=np.uint64)


def pool_vectors(texts: list[str], embedder: Any, cache_dir: Path, seed: int) -> tuple[Any, dict[str, Any]]:
    """Embeddings of the pool's embedding texts, cached as .npy; only the missing tail is computed.

    A sidecar .keys.npy holds each cached row's text key; rows from the first whose text no longer
    matches (the generator or `embedding_text` changed) are dropped and computed again."""
    import numpy as np

    key = hashlib.sha256(f"{GENERATOR_VERSION}|{seed}|{embedder.name}".encode()).hexdigest()[:12]
    path = cache_dir / f"synthetic-pool-{key}.npy"
    keys_path = cache_dir / f"synthetic-pool-{key}.keys.npy"
    have = np.load(path) if path.exists() else np.zeros((0, embedder.dim), dtype=np.float32)
    have_keys = np.load(keys_path) if keys_path.exists() else np.zeros(0, dtype=np.uint64)
    want_keys = text_keys(texts)
    n = min(len(have), len(have_keys), len(texts))
    mismatch = np.flatnonzero(have_keys[:n] != want_keys[:n])
    valid = int(mismatch[0]) if len(mismatch) else n  # leading rows known to be this pool's texts
    stale = min(len(have), len(texts)) - valid
    if stale:
        print(f"{len(have) - valid} cached vectors in {path.name} were not made from these texts; recomputing",
              flush=True)
        have, have_keys = have[:valid], have_keys[:valid]
    info = {"cache_file": str(path), "cached": valid, "computed": 0, "seconds": 0.0, "stale_rows_dropped": stale}
    if len(have) < len(texts):
        missing = texts[len(have):]
        print(f"embedding {len(missing)} pool texts with {embedder.name} (cached: {len(have)}) ...", flush=True)
        t0 = last_save = time.perf_counter()
        chunks = []
        step = 2048
        for i in range(0, len(missing), step):
            chunks.append(np.asarray(embedder.embed(missing[i:i + step]), dtype=np.float32))
            done = min(i + step, len(missing))
            rate = done / (time.perf_counter() - t0)
            print(f"  {done}/{len(missing)} ({rate:.0f}/s, ~{(len(missing) - done) / rate:.0f}s left)", flush=True)
            if done == len(missing) or time.perf_counter() - last_save > CHECKPOINT_SECONDS:
                have = np.concatenate([have, *chunks])
                have_keys = want_keys[: len(have)]
                chunks = []
                save_cache(path, have, keys_path, have_keys)  # an interrupted run keeps what it computed
                last_save = time.perf_counter()
        info.update(computed=len(missing), seconds=time.perf_counter() - t0, per_second=len(missing) / (time.perf_counter() - t0))
    return have[: len(texts)], info


def save_cache(path: Path, vectors: Any, keys_path: Path, keys: Any) -> None:
    """Write the vectors and their text keys, each by rename, vectors first: a crash between the two
    leaves more vectors than keys, and rows without a key are recomputed."""
    import numpy as np

    for target, array in ((path, vectors), (keys_path, keys)):
        tmp = target.with_suffix(".tmp.npy")
        np.save(tmp, array)
        tmp.replace(target)


class LookupEmbedder:
    """Precomputed vectors for known texts; anything else (queries) goes to the real embedder."""

    def __init__(self, inner: Any, table: dict[str, int], vectors: Any) -> None:
        self.inner, self.table, self.vectors = inner, table, vectors
        self.name, self.dim = inner.name, inner.dim
        self.misses = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        rows = [self.table.get(t) for t in texts]
        if all(r is not None for r in rows):
            return self.vectors[rows].tolist()
        self.misses += sum(1 for r in rows if r is None)
        fresh = iter(self.inner.embed([t for t, r in zip(texts, rows) if r is None]))
        return [self.vectors[r].tolist() if r is not None else next(fresh) for r in rows]


# ------------------------------------------------------------------ one size


def distinct_queries(n: int, seed: int, avoid: set[str]) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        q = make_query(rng)
        if q not in avoid:
            avoid.add(q)
            out.append(q)
    return out


def run_size(n: int, args: argparse.Namespace, embedder: Any, pool: list, vectors: Any,
             search_texts: list[str], workdir: Path) -> dict[str, Any]:
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    from mirix_py.engine import Mirix
    from mirix_py.integrations.context import retrieve_context
    from mirix_py.tools.ops import InsertOp
    from mirix_py.store.search import Searcher

    others = args.other_users
    per_other = max(1, int(n * args.other_share))
    rng = random.Random(args.seed + n)
    users = {"target": list(range(n))}
    for u in range(others):
        users[f"other{u}"] = rng.sample(range(n), per_other)
    total = sum(len(v) for v in users.values())

    table = {search_texts[i]: i for i in range(n)}
    lookup = LookupEmbedder(embedder, table, vectors)
    data_dir = workdir / f"engine-{n}"
    mx = Mirix(data_dir=data_dir, embedder=lookup)

    waits = {"insert": C.wait_for_quiet(args.wait_quiet, args.wait_timeout)}
    load_insert = C.loadavg()
    # insert: round-robin over users, InsertOp batches of BATCH through the store's one write path
    print(f"[{n}] inserting {total} memories for {len(users)} users through store.apply ...", flush=True)
    t0 = time.perf_counter()
    cursors = {u: 0 for u in users}
    done = 0
    next_report = 50_000
    while any(cursors[u] < len(idx) for u, idx in users.items()):
        for u, idx in users.items():
            start = cursors[u]
            if start >= len(idx):
                continue
            chunk = idx[start:start + BATCH]
            user_id = f"bench-{u}"
            per = args.turns_per_input
            mx.store.apply([InsertOp(memory=to_memory(pool[i], user_id, f"in_bench{i // per:08d}" if per else None))
                            for i in chunk], user_id=user_id, actor="benchmark")
            cursors[u] = start + len(chunk)
            done += len(chunk)
            if done >= next_report:
                rate = done / (time.perf_counter() - t0)
                print(f"  {done}/{total} ({rate:.0f}/s, ~{(total - done) / rate:.0f}s left)", flush=True)
                next_report += 50_000
    insert_s = time.perf_counter() - t0
    if lookup.misses:
        raise RuntimeError(f"{lookup.misses} memory texts missed the precomputed table: the store embedded a text "
                           "other than `embedding_text()`, so inserts were timed with live embedding")
    # the target user's `human` core block, as a chat user has one: `/context` searches every type but
    # core, so its type filter has a memory to leave out (embedded live, after the table check)
    mx.core_append("human", "likes hiking, pottery and long train rides", user_id="bench-target")
    counts = mx.store.count(user_id="bench-target")

    # bare Chroma: the target user's N vectors in one collection of a separate client
    t0 = time.perf_counter()
    bare_client = chromadb.PersistentClient(path=str(workdir / f"bare-{n}"), settings=ChromaSettings(anonymized_telemetry=False))
    bare = bare_client.get_or_create_collection("bare", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None)
    step = 5000
    for i in range(0, n, step):
        ids = list(range(i, min(i + step, n)))
        bare.add(ids=[str(j) for j in ids], embeddings=vectors[ids])
    bare_s = time.perf_counter() - t0

    # queries: distinct across every method and the warm-up
    used: set[str] = set()
    methods = ["engine hybrid", "engine bm25", "engine embedding", "bare chroma (query vector given)",
               "bare chroma + query embedding", "MiniLM query embedding alone", UNNAMED, CONTEXT]
    unnamed = Searcher(mx.store, session_leg=mx.settings.session_leg, name_legs=False)
    qsets = {m: distinct_queries(args.queries + args.warmup, args.seed * 1000 + k, used) for k, m in enumerate(methods)}
    given_vectors = embedder.embed(qsets["bare chroma (query vector given)"])  # not timed: that is the point

    def call(method: str, i: int) -> int:
        q = qsets[method][i]
        for searcher in (mx.searcher, unnamed):  # question texts are distinct, name-free ones need not be
            if searcher.embedder is not None:
                searcher.embedder.clear()
        if method == UNNAMED:
            return len(unnamed.search(q, user_id="bench-target", limit=args.limit, context=mx.settings.search_context))
        if method == CONTEXT:
            return len(retrieve_context(mx, "bench-target", q, max_items=args.limit).hits)
        if method.startswith("engine "):
            return len(mx.search(q, user_id="bench-target", limit=args.limit, method=method.split(" ", 1)[1]))
        if method == "bare chroma (query vector given)":
            r = bare.query(query_embeddings=[given_vectors[i]], n_results=args.limit, include=["distances"])
            return len(r["ids"][0])
        if method == "bare chroma + query embedding":
            r = bare.query(query_embeddings=[embedder.embed([q])[0]], n_results=args.limit, include=["distances"])
            return len(r["ids"][0])
        embedder.embed([q])
        return 1

    waits["queries"] = C.wait_for_quiet(args.wait_quiet, args.wait_timeout)
    load_queries = C.loadavg()
    for i in range(args.warmup):
        for m in methods:
            call(m, args.queries + i)
    times: dict[str, list[float]] = {m: [] for m in methods}
    hits: dict[str, int] = {m: 0 for m in methods}
    print(f"[{n}] timing {args.queries} queries x {len(methods)} methods (interleaved) ...", flush=True)
    t_q = time.perf_counter()
    for i in range(args.queries):
        for m in methods:
            t0 = time.perf_counter()
            hits[m] += call(m, i)
            times[m].append(time.perf_counter() - t0)
    query_s = time.perf_counter() - t_q
    size_mb = sum(p.stat().st_size for p in data_dir.rglob("*") if p.is_file()) / 1e6
    unnamed.close()
    mx.close()
    return {
        "size": n, "name_legs": mx.settings.name_legs, "session_leg": mx.settings.session_leg,
        "target_memories": counts, "other_users": others, "memories_per_other_user": per_other,
        "total_memories": total, "insert_seconds": insert_s, "insert_per_second": total / insert_s,
        "bare_chroma_build_seconds": bare_s, "query_phase_seconds": query_s, "data_dir_mb": size_mb,
        "latency": {m: {**C.latency_summary(times[m]), "mean_hits": hits[m] / args.queries} for m in methods},
        "loadavg_before_insert": load_insert, "loadavg_before_queries": load_queries, "loadavg_after": C.loadavg(),
        "waits": waits,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="memories of the target user")
    ap.add_argument("--queries", type=int, default=250, help="timed queries per method (distinct), default 250")
    ap.add_argument("--warmup", type=int, default=20, help="untimed queries per method first")
    ap.add_argument("--limit", type=int, default=10, help="hits per search (engine limit, bare n_results)")
    ap.add_argument("--turns-per-input", type=int, default=0,
                    help="episodes of each run of N pool texts come from one input (a session for hybrid's "
                         "session leg); 0: episodes without an input, as before")
    ap.add_argument("--other-users", type=int, default=9)
    ap.add_argument("--other-share", type=float, default=0.1, help="each other user holds this share of N")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--embedder", choices=["minilm", "minilm:int8"], default="minilm",
                    help="the engine's embedder, for the pool's vectors and every query (default: the product's)")
    ap.add_argument("--torch-threads", type=int, help="torch.set_num_threads before anything runs (default: torch's)")
    ap.add_argument("--cache-dir", default=".bench-cache")
    ap.add_argument("--workdir", help="where data dirs go (default: a temp dir, removed after)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--out", help="write the figures as JSON to this file")
    C.add_quiet_args(ap)
    args = ap.parse_args()
    C.quiet_logs()

    threads = C.set_torch_threads(args.torch_threads)
    from mirix_py.store.embeddings import load_embedder

    env = C.environment()
    env["torch_threads"] = threads
    t_start = time.perf_counter()
    embedder = load_embedder(args.embedder)
    if embedder is None:
        raise SystemExit("MiniLM did not load: this benchmark needs the embedder")
    embedder.embed(["warm up"])
    biggest = max(args.sizes)
    t0 = time.perf_counter()
    pool = pool_records(biggest, args.seed)
    texts = [to_memory(r, "bench-x").embedding_text() for r in pool]  # what the store embeds
    gen_s = time.perf_counter() - t0
    vectors, vec_info = pool_vectors(texts, embedder, C.cache_root(args.cache_dir), args.seed)
    vec_info["generate_seconds"] = gen_s
    print(f"pool of {len(pool)} memories ready (generated in {gen_s:.1f}s; vectors: {vec_info['cached']} cached, "
          f"{vec_info['computed']} computed in {vec_info['seconds']:.0f}s); load average {C.loadavg()}", flush=True)
    print(f"e.g. {texts[0]!r} | {texts[3]!r}")

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="mirix-latency-"))
    workdir.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        for n in sorted(args.sizes):
            t0 = time.perf_counter()
            res = run_size(n, args, embedder, pool, vectors, texts, workdir)
            res["seconds"] = time.perf_counter() - t0
            results.append(res)
            rows = [[m, v["p50_ms"], v["p95_ms"], v["mean_ms"], v["p99_ms"], v["mean_hits"]]
                    for m, v in res["latency"].items()]
            print()
            print(C.table(["method", "p50 ms", "p95 ms", "mean ms", "p99 ms", "hits"], rows,
                          title=f"N = {n} memories for the target user ({res['total_memories']} across "
                                f"{res['other_users'] + 1} users), {args.queries} distinct queries each, limit {args.limit}"))
            hyb = res["latency"]["engine hybrid"]["p95_ms"]
            print(f"insert {res['total_memories']} via store.apply: {res['insert_seconds']:.1f}s "
                  f"({res['insert_per_second']:.0f}/s, vectors precomputed); bare chroma build {res['bare_chroma_build_seconds']:.1f}s; "
                  f"queries {res['query_phase_seconds']:.0f}s; size {res['data_dir_mb']:.0f} MB; "
                  f"hybrid p95 {hyb:.1f} ms vs target {TARGET_P95_MS:.0f} ms at 100k; load average before queries "
                  f"{res['loadavg_before_queries']}, after {res['loadavg_after']}; torch threads {threads}",
                  flush=True)
            if not args.keep:
                for p in workdir.iterdir():
                    shutil.rmtree(p, ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    total_s = time.perf_counter() - t_start
    print()
    print(C.table(["N", "hybrid p95", "no name legs p95", "bm25 p95", "embedding p95", "bare p95 (vec given)", "bare p95 (+embed)",
                   "embed-only p95", "insert/s"],
                  [[r["size"], r["latency"]["engine hybrid"]["p95_ms"], r["latency"][UNNAMED]["p95_ms"],
                    r["latency"]["engine bm25"]["p95_ms"],
                    r["latency"]["engine embedding"]["p95_ms"],
                    r["latency"]["bare chroma (query vector given)"]["p95_ms"],
                    r["latency"]["bare chroma + query embedding"]["p95_ms"],
                    r["latency"]["MiniLM query embedding alone"]["p95_ms"], r["insert_per_second"]] for r in results],
                  title="summary (ms)"))
    print(f"total {total_s:.0f}s")
    C.write_json(args.out, {
        "benchmark": "search_latency", "environment": env, "args": vars(args), "pool": vec_info,
        "layout": f"target user N; {args.other_users} other users x {args.other_share} N each; 80% episodic / 20% semantic",
        "target_p95_ms_at_100k": TARGET_P95_MS, "results": results, "total_seconds": total_s,
    })
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
