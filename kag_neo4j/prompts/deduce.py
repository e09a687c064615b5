"""Response model for the LLM-backed Deduce operators.

``Deduce(op=judgement|entailment|choice|multiChoice|extract, ...)`` needs language
understanding; :mod:`kag_neo4j.solver.ops.deduce` turns such a step into a
:class:`~kag_neo4j.solver.ops.deduce.DeduceRequest`, the LLM executor asks the model for a
:class:`DeduceResponse`, and :meth:`DeduceRequest.resolve` checks the answer fits the op
(a verdict for judgement, a label for entailment, one of the options for choice).
The prompt text itself belongs to the executor's module and comes later.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["DEDUCE_PROMPT_VERSION", "ENTAILMENT_LABELS", "JUDGEMENT_VERDICTS", "DeduceResponse"]

DEDUCE_PROMPT_VERSION = "deduce-1"

#: Allowed ``answer`` values for ``op=judgement``.
JUDGEMENT_VERDICTS = ("yes", "no", "unknown")
#: Allowed ``answer`` values for ``op=entailment``.
ENTAILMENT_LABELS = ("entailment", "contradiction", "neutral")


class DeduceResponse(BaseModel):
    """What the model returns for one LLM-backed Deduce step.

    * judgement: ``answer`` is ``yes``, ``no`` or ``unknown``;
    * entailment: ``answer`` is ``entailment``, ``contradiction`` or ``neutral``;
    * choice: ``answer`` is exactly one of the options;
    * multiChoice: ``answers`` lists every option that applies (``answer`` may stay empty);
    * extract: ``answers`` lists the extracted values (or ``answer`` holds the only one).
    """

    answer: str = Field(default="", description="the verdict, label, chosen option or extracted value")
    answers: list[str] = Field(
        default_factory=list, description="for multiChoice and extract: all selected values"
    )
    reasoning: str = Field(default="", description="one or two sentences citing the evidence used")
