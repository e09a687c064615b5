"""Domain errors. Each message names the input at fault and the fix."""

from __future__ import annotations


class KagError(Exception):
    """Base class of every error kag-neo4j raises on purpose."""


class ConfigError(KagError):
    """The configuration (environment, kag.toml or flags) is invalid."""


class Neo4jUnavailableError(KagError):
    """No Neo4j answers at the configured URI."""


class UnsafeResetError(KagError):
    """A database was to be emptied that is not marked as disposable (it may hold someone's data)."""


class ServerError(KagError):
    """The local Neo4j server could not be provisioned, started or stopped."""


class InvalidIdentifierError(KagError, ValueError):
    """A name that would become a Cypher label, relationship type or property key is unsafe."""


class MigrationError(KagError):
    """A migration file is invalid, changed after it was applied, or failed."""


class LeaseError(KagError):
    """A lock lease (``kag-neo4j load`` / ``delete``, ``migrate``) is held by another live process."""


class LeaseLostError(LeaseError):
    """This process's lease expired and another process took the lock; its transaction was rolled back."""


class IndexDimensionError(KagError):
    """An existing vector index has another dimension than the configured embedder."""


class SchemaError(KagError):
    """An SPG schema file could not be parsed or validated."""


class ModelError(KagError):
    """A language model or embedder call failed for a reason that retrying will not fix."""


class ModelUnavailableError(ModelError):
    """A model could not be found, installed or loaded (missing package, file or server)."""


class ModelEndpointError(ModelUnavailableError):
    """A model endpoint refuses every request: wrong key (401/403), wrong URL or model name (404),
    nothing listening. A load stops on it (it is not a per-chunk failure); the message names the
    endpoint and the setting to fix."""


class TransientModelError(ModelError):
    """A model call failed for a reason that may pass (connection, rate limit, 5xx, timeout)."""


class ModelConnectionError(TransientModelError):
    """A model endpoint could not be reached; retried, then raised as :class:`ModelEndpointError`."""


class ModelTimeoutError(TransientModelError):
    """A model call took longer than the configured timeout (``llm_timeout``)."""


class StructuredOutputError(ModelError):
    """A model did not produce output matching the requested schema after every allowed attempt.

    ``truncated``: the last reply was cut off at ``max_tokens`` (asking again would not help;
    a caller can shorten its input or raise the limit).
    """

    def __init__(self, message: str, *, truncated: bool = False) -> None:
        super().__init__(message)
        self.truncated = truncated


class LogicalFormError(KagError):
    """A logical-form plan could not be parsed or is inconsistent (undefined alias, cycle, ...).

    ``line`` and ``column`` are 1-based positions in the plan text when known (``None`` for a
    plan that was built in Python rather than parsed).
    """

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None) -> None:
        self.line = line
        self.column = column
        self.reason = message
        where = f"line {line}, column {column}: " if line is not None and column is not None else ""
        super().__init__(where + message)


class MathError(KagError):
    """A Math expression is malformed, refers to unknown names, or cannot be evaluated.

    ``column`` is the 1-based position in the expression when known.
    """

    def __init__(self, message: str, *, column: int | None = None) -> None:
        self.column = column
        self.reason = message
        where = f"column {column}: " if column is not None else ""
        super().__init__(where + message)


class OperatorError(KagError):
    """A deterministic solver operator (Sort, Deduce) got values it cannot handle."""


class ReadError(KagError):
    """An input file could not be read (missing, empty, binary, corrupt, unsupported).

    ``path`` names the file; ``reason`` says what is wrong and how to fix it.
    """

    def __init__(self, path: object, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class BuilderError(KagError):
    """The knowledge-graph builder got input it cannot load (bad taxonomy, bad option, ...)."""


class TaxonomyError(BuilderError):
    """A concept taxonomy file (nodes/edges JSON in the domain_kg format) is malformed."""


class EvalError(KagError):
    """An evaluation could not run: unknown dataset or method, unreadable question file, a
    knowledge base holding another corpus, ... The message names the input and the fix."""
