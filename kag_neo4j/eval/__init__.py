"""Evaluation: compare retrieval and QA methods on multi-hop benchmarks (``kag-neo4j eval``).

* :mod:`~kag_neo4j.eval.metrics` - SQuAD EM / F1 over aliases, passage recall@k, percentiles;
* :mod:`~kag_neo4j.eval.datasets` - HotpotQA / 2Wiki / MuSiQue question files and corpora, gold
  passages as recall units, dataset shorthands;
* :mod:`~kag_neo4j.eval.loading` - load a corpus into its knowledge base once, reuse it after;
* :mod:`~kag_neo4j.eval.methods` - the methods compared (ours, neo4j-graphrag's retrievers,
  NaiveRAG) and the pluggable answerers;
* :mod:`~kag_neo4j.eval.runner` - run, score, cache per question and resume;
* :mod:`~kag_neo4j.eval.report` - Markdown table, JSON rows, PNG chart.

See ``docs/eval.md``.
"""
