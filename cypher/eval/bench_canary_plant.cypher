// Injection benchmark: the canary a hostile payload would delete (DETACH DELETE), modify (SET
// pwned) or shadow (CREATE (:Pwned)); see benchmarks/faults_injection.py.
MERGE (c:Canary {key: 'canary'})
REMOVE c.pwned
RETURN c.key AS key
