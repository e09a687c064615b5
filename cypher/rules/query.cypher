// A MATCH … RETURN query of a rule file, read-only.
{{ body }}
RETURN {{ returns | join(', ') }}
