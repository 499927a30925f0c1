"""mirix-py: a memory engine for LLM agents in the style of MIRIX (arXiv 2507.07957)."""

from mirix_py.facade.async_mirix import AsyncMirix
from mirix_py.engine import Mirix
from mirix_py.errors import CoreMemoryFull, InvalidInput, MemoryNotFound, MirixError
from mirix_py.records import (
    AddResult, CoreMemory, EpisodicMemory, KnowledgeVaultMemory, MemoryType, ProceduralMemory, ResourceMemory,
    SearchHit, SemanticMemory,
)

__version__ = "0.1.0"

__all__ = [
    "AddResult", "AsyncMirix", "CoreMemory", "CoreMemoryFull", "EpisodicMemory", "InvalidInput",
    "KnowledgeVaultMemory", "MemoryNotFound", "MemoryType", "Mirix", "MirixError", "ProceduralMemory",
    "ResourceMemory", "SearchHit", "SemanticMemory",
]
