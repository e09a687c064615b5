// The labels of this knowledge base in use (without its prefix), to empty it label by label.
CALL db.labels() YIELD label
RETURN collect(label) AS labels
