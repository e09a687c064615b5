// Injection benchmark: every procedure the database offers (none may appear).
SHOW PROCEDURES YIELD name
RETURN collect(name) AS names
