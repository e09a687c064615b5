// Injection benchmark: every function the database offers (none may appear).
SHOW FUNCTIONS YIELD name
RETURN collect(name) AS names
