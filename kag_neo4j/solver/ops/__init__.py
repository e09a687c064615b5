"""The handlers of the logical-form operators, one module per operator (or family).

Each module holds its operator's handler ``run(ctx, node)`` (an
:class:`~kag_neo4j.solver.action.ActionContext` and the operator's AST node) and its
:class:`~kag_neo4j.solver.lf.spec.OperatorSpec` ``SPEC``, which
:mod:`kag_neo4j.solver.lf.registry` registers.
"""
