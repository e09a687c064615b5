"""Packaged copies of the top-level cypher/, procedures/, migrations/ and schema/ folders."""
