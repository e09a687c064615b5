"""The operators the logical-form language knows: :data:`OPERATORS`, a :class:`OperatorRegistry`.

The parser looks operator names up here, the executor finds each action's handler here and the
planner prompt lists the operators' prompt lines from here, in registration order. A new
operator is a node, a spec and a handler (see ``docs/extending.md``)::

    OPERATORS.register(OperatorSpec(name="Upper", node=UpperOp, parse=parse_upper,
                                    handler=run_upper, prompt={"en": "- Upper(...)->u1 ..."}))
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from kag_neo4j.errors import ConfigError
from kag_neo4j.solver.lf.ast import OperatorNode
from kag_neo4j.solver.lf.spec import OperatorSpec
from kag_neo4j.solver.ops import deduce, math, output, sort
from kag_neo4j.solver.ops import retrieval as retrieval_op

__all__ = ["OPERATORS", "OperatorRegistry"]


class OperatorRegistry:
    """Operator specs by name (and synonym), in registration order; thread-safe."""

    def __init__(self, specs: Iterable[OperatorSpec] = ()) -> None:
        self._lock = threading.Lock()
        self._specs: dict[str, OperatorSpec] = {}
        self._names: dict[str, str] = {}
        for spec in specs:
            self.register(spec)

    def register(self, spec: OperatorSpec) -> OperatorSpec:
        """Add ``spec``; raises :class:`ConfigError` when its name or a synonym is taken or its
        node's ``kind`` is not its name."""
        kind = spec.node.model_fields["kind"].default if "kind" in spec.node.model_fields else None
        if kind != spec.name or OperatorNode.kinds.get(spec.name) is not spec.node:
            raise ConfigError(
                f"operator {spec.name!r}: its node {spec.node.__name__} must declare "
                f'kind: Literal["{spec.name}"] = "{spec.name}"'
            )
        with self._lock:
            for name in (spec.name, *spec.synonyms):
                taken = self._names.get(name.lower())
                if taken is not None:
                    raise ConfigError(
                        f"operator name {name!r} is already taken by {taken}; choose another name "
                        f"or unregister {taken!r} first"
                    )
            self._specs[spec.name] = spec
            for name in (spec.name, *spec.synonyms):
                self._names[name.lower()] = spec.name
        return spec

    def unregister(self, name: str) -> None:
        """Remove the operator ``name`` (a missing name is a :class:`ConfigError`)."""
        with self._lock:
            spec = self._specs.pop(name, None)
            if spec is None:
                raise ConfigError(f"no operator {name!r} is registered")
            for key in [key for key, value in self._names.items() if value == name]:
                del self._names[key]

    def lookup(self, name: str) -> OperatorSpec | None:
        """The spec for ``name`` or one of its synonyms (any case), else ``None``."""
        canonical = self._names.get(name.lower())
        return None if canonical is None else self._specs.get(canonical)

    def for_node(self, node: OperatorNode) -> OperatorSpec:
        spec = self._specs.get(node.kind)
        if spec is None:
            raise ConfigError(f"operator {node.kind!r} is not registered; register its OperatorSpec")
        return spec

    def names(self) -> tuple[str, ...]:
        return tuple(self._specs)

    def extended(self, *specs: OperatorSpec) -> OperatorRegistry:
        """A new registry: these operators, then ``specs`` (this registry is left as it is)."""
        return OperatorRegistry([*self._specs.values(), *specs])

    def prompt_lines(self, language: str) -> list[str]:
        """The planner prompt's operator bullets for ``language``, in registration order (an
        operator without a line for ``language`` shows its English one)."""
        lines = []
        for spec in list(self._specs.values()):
            line = spec.prompt.get(language, spec.prompt.get("en"))
            if line:
                lines.append(line)
        return lines


#: the operators every plan may use; register new ones here
OPERATORS = OperatorRegistry([retrieval_op.SPEC, math.SPEC, deduce.SPEC, sort.SPEC, output.SPEC])
