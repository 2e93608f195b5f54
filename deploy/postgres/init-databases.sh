#!/usr/bin/env bash
# docker-compose: the postgres image runs this once, on an empty volume. One database per
# service (design.md: each service owns its own database).
set -euo pipefail
for service in auth posts comments search images notifications federation; do
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
    -c "CREATE DATABASE postly_$service"
done
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
