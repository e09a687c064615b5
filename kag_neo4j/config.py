"""One settings object for every command.

Precedence, highest first: command-line flags, then environment variables
(``NEO4J_*`` and ``KAG_*``), then ``kag.toml`` (found in the working directory, or named by
``KAG_CONFIG``), then the defaults below.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from kag_neo4j.errors import ConfigError

_SUPPORTED_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


def default_home() -> Path:
    """The user cache directory for servers, models and caches (``KAG_HOME`` overrides it)."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "kag-neo4j"


def _config_file() -> Path:
    return Path(os.environ.get("KAG_CONFIG", "kag.toml"))


class Settings(BaseSettings):
    """Everything kag-neo4j can be configured with."""

    model_config = SettingsConfigDict(
        env_prefix="KAG_",
        env_ignore_empty=True,  # KAG_SERVER_PORT= means unset, not an invalid port
        extra="ignore",
        populate_by_name=True,
    )

    # --- Neo4j connection (None: use the local server that `kag-neo4j server start` manages)
    neo4j_uri: str | None = Field(default=None, validation_alias=AliasChoices("NEO4J_URI", "neo4j_uri"))
    neo4j_username: str = Field(
        default="neo4j", validation_alias=AliasChoices("NEO4J_USERNAME", "neo4j_username")
    )
    neo4j_password: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_PASSWORD", "neo4j_password")
    )
    neo4j_database: str = Field(
        default="neo4j", validation_alias=AliasChoices("NEO4J_DATABASE", "neo4j_database")
    )
    #: the knowledge base every command works in (KAG_KB, --kb; kag_neo4j.store.knowledge_base)
    kb: str = "default"
    #: how long reads and transactional writes are retried on transient errors and lost connections
    neo4j_retry_seconds: float = Field(default=30.0, ge=0)

    # --- local server (KAG_HOME, KAG_SERVER_*)
    home: Path = Field(default_factory=default_home)
    server_name: str = Field(default="default", pattern=r"^[A-Za-z0-9_-]{1,40}$")
    server_port: int = Field(default=7687, ge=1, le=65535)
    server_heap: str = "2g"
    server_pagecache: str = "512m"
    server_start_timeout: float = Field(default=180.0, gt=0)
    #: load the GDS plugin (False: APOC only, like Aura Free or a plain Neo4j; PageRank runs in Cypher)
    server_gds: bool = True
    neo4j_version: str = "5.26.24"
    gds_version: str = "2.13.9"
    apoc_version: str = "5.26.19"
    #: serve Neo4j Browser over HTTP from the local server (fetched once from Maven Central)
    server_browser: bool = False
    server_http_port: int = Field(default=7474, ge=1, le=65535)
    browser_version: str = "5.24.0"
    java_home: Path | None = None

    # --- builder lease: one `kag-neo4j load` / `delete` at a time per database
    load_lease_seconds: float = Field(default=60.0, ge=1)  # a killed loader blocks others at most this long
    load_lock_wait: float = Field(default=120.0, ge=0)  # how long a second loader waits before it is refused

    # --- models (issue: models layer)
    #: a name registered in kag_neo4j.models.providers (the one list of providers)
    llm_provider: str = Field(default="llamacpp", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    llm_model: str | None = None
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    llm_timeout: float = Field(default=600.0, gt=0)
    llm_max_retries: int = Field(default=3, ge=0)
    llm_concurrency: int = Field(default=1, ge=1)
    llm_threads: int = Field(default=2, ge=1)
    llm_context: int = Field(default=4096, ge=512)
    #: MiB of llama.cpp context states kept across calls (kag_neo4j.models.prefix_states; about
    #: 29 KB per token of the 1.5B default, measured): planner calls 0.47x the seconds, all calls
    #: 0.73x (BENCHMARKS.md, "Prefix cache"); 0 keeps none
    llm_prefix_cache_mb: int = Field(default=512, ge=0)
    #: how full extraction asks the model to write its reply: positional rows (about half the
    #: tokens of keyed objects, measured in BENCHMARKS.md) or keyed objects
    extract_format: Literal["rows", "objects"] = "rows"
    #: with a schema, full extraction also asks the schema relations of the entity each chunk is
    #: about as a form (one more call per such chunk; builder/extract/schema_fill.py)
    extract_schema_fill: bool = True
    #: a name registered in kag_neo4j.models.providers (e5, sentence-transformers, openai, hashing, or yours)
    embedder: str = "e5"
    embedding_model: str | None = None
    embedding_base_url: str | None = None  # OpenAI-compatible embedder; defaults to llm_base_url
    embedding_api_key: SecretStr | None = None  # defaults to llm_api_key
    embedding_dimensions: int | None = Field(default=None, ge=1)
    embedding_batch_size: int = Field(default=32, ge=1)
    model_cache: Path | None = None
    cache_path: Path | None = None
    no_cache: bool = False

    @field_validator("neo4j_uri")
    @classmethod
    def _check_uri(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        scheme = value.split("://", 1)[0] if "://" in value else ""
        if scheme not in _SUPPORTED_SCHEMES:
            raise ValueError(
                f"NEO4J_URI {value!r} has an unsupported scheme; use one of "
                + ", ".join(f"{s}://" for s in _SUPPORTED_SCHEMES)
            )
        return value

    @field_validator("kb")
    @classmethod
    def _check_kb(cls, value: str) -> str:
        from kag_neo4j.store.knowledge_base import check_kb_name

        try:
            return check_kb_name(value)
        except ConfigError as exc:
            raise ValueError(f"KAG_KB: {exc}") from None

    @field_validator("embedder")
    @classmethod
    def _check_embedder(cls, value: str) -> str:
        from kag_neo4j.models.providers import embedder_provider_names

        if value not in embedder_provider_names():
            raise ValueError(f"unknown KAG_EMBEDDER {value!r}; use one of {', '.join(embedder_provider_names())}")
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml = TomlConfigSettingsSource(settings_cls, toml_file=_config_file())
        return (init_settings, env_settings, toml)

    # --- derived paths
    @property
    def resolved_model_cache(self) -> Path:
        return self.model_cache or self.home / "models"

    @property
    def resolved_cache_path(self) -> Path:
        return self.cache_path or self.home / "cache" / "responses.sqlite"

    @property
    def server_dir(self) -> Path:
        return self.home / "server" / f"neo4j-{self.neo4j_version}-gds-{self.gds_version}"

    @property
    def manages_local_server(self) -> bool:
        return self.neo4j_uri is None


def load_settings(**overrides: Any) -> Settings:
    """Build settings from flags (``overrides``; ``None`` means 'not given'), env and kag.toml."""
    given = {key: value for key, value in overrides.items() if value is not None}
    try:
        return Settings(**given)
    except ValueError as exc:  # pydantic.ValidationError is a ValueError
        raise ConfigError(f"invalid configuration (flags, environment or {_config_file()}):\n{exc}") from exc
