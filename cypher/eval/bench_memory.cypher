// bench_memory v1 — Neo4j's heap (used now, and the old generation's peak since start) and the
// size of the GDS projections, in bytes.
CALL () {
  CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes
  RETURN attributes.HeapMemoryUsage.value.properties.used AS heap_used,
         attributes.HeapMemoryUsage.value.properties.max AS heap_max
}
CALL () {
  CALL dbms.queryJmx('java.lang:type=MemoryPool,name=*') YIELD name, attributes
  WITH name, attributes WHERE attributes.Type.value = 'HEAP'
  RETURN sum(attributes.PeakUsage.value.properties.used) AS heap_peak
}
CALL () {
  CALL gds.graph.list() YIELD sizeInBytes
  RETURN sum(sizeInBytes) AS projections
}
RETURN heap_used, heap_max, heap_peak, projections
