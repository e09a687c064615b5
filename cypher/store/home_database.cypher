// home_database v1 — the name of the database a session opened without a database name reaches
// (the user's home database), so that a driver handed in without a name gets a definite one.
CALL db.info() YIELD name
RETURN name
