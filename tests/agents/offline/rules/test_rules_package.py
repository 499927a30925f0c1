import mirix_py.agents.offline.rules as rules


def test_public_api_is_reexported():
    for name in (
        "extract_procedure",
        "ProcedureDraft",
        "extract_self_statements",
        "extract_facts",
        "FactDraft",
        "classify_resource",
        "ResourceDraft",
        "extract_keywords",
        "parse_time_range",
    ):
        assert name in rules.__all__
        assert callable(getattr(rules, name))
