"""How large a request's parts may be, shared by every door that takes them from outside (REST,
MCP over a running server or the embedded engine), so one call is refused alike through each."""

MAX_MESSAGE_CHARS = 20_000  # one text to remember, one chat message or turn
MAX_QUERY_CHARS = 2_000  # a search query
MAX_SOURCE_ID_CHARS = 256  # a caller's own id for an input
MAX_SEARCH_LIMIT = 100  # hits a request asks for
MAX_LIST_LIMIT = 500  # memories a page of a listing holds (REST's own listing takes up to 1,000)
MAX_OFFSET = 1_000_000  # how far a listing pages
MAX_ADD_MESSAGES = 500  # chat messages one REST add carries

__all__ = ["MAX_ADD_MESSAGES", "MAX_LIST_LIMIT", "MAX_MESSAGE_CHARS", "MAX_OFFSET", "MAX_QUERY_CHARS", "MAX_SEARCH_LIMIT",
           "MAX_SOURCE_ID_CHARS"]
