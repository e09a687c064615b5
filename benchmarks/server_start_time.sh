#!/usr/bin/env bash
# Wall-clock time of `kag-neo4j server start` on a fresh instance and on a restart, as a Markdown row.
#   benchmarks/server_start_time.sh LABEL INSTANCE   (INSTANCE is created, timed, stopped and DELETED)
# The runtime must be provisioned already (one `kag-neo4j server start` on any instance); the code
# measured is the one `kag-neo4j` imports (set PYTHONPATH to compare checkouts).
set -euo pipefail
label=$1; instance=$2
export KAG_SERVER_NAME=$instance KAG_SERVER_HEAP=${KAG_SERVER_HEAP:-1g} KAG_SERVER_PAGECACHE=${KAG_SERVER_PAGECACHE:-256m}
dir="${KAG_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/kag-neo4j}/server/instances/$instance"
timed() { local s e; s=$(date +%s.%N); kag-neo4j server start >/dev/null; e=$(date +%s.%N); echo "$e - $s" | bc; }
rm -rf "$dir"
fresh=$(timed); kag-neo4j server stop >/dev/null
restart=$(timed); kag-neo4j server stop >/dev/null
rm -rf "$dir"
printf '| %s | %.1f s | %.1f s | %s |\n' "$label" "$fresh" "$restart" "$(cut -d' ' -f1 /proc/loadavg)"
