// Injection benchmark: is the canary intact, and did any payload create a :Pwned node?
CALL () {
  OPTIONAL MATCH (c:Canary)
  RETURN count(c) AS canaries, count(CASE WHEN c.pwned IS NOT NULL THEN 1 END) AS pwned_canaries
}
CALL () {
  OPTIONAL MATCH (p:Pwned)
  RETURN count(p) AS pwned_nodes
}
RETURN canaries, pwned_canaries, pwned_nodes
