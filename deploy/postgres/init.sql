-- memstrata's roles and database (docs/postgres.md, "Roles"): the schema owner runs the migrations,
-- the application role is what the server connects as, so PostgreSQL row-level security applies to it.
-- Run once as a superuser with psql (compose.yaml mounts it into /docker-entrypoint-initdb.d/):
--   MEMSTRATA_OWNER_PASSWORD=... MEMSTRATA_APP_PASSWORD=... psql -v ON_ERROR_STOP=1 -f init.sql
-- The role and database names default to memstrata_owner, memstrata_app and memstrata; psql variables
-- change them (-v owner_role=... -v app_role=... -v database=...). Needs psql 15 or later (\getenv).
\set ON_ERROR_STOP on
\getenv owner_password MEMSTRATA_OWNER_PASSWORD
\getenv app_password MEMSTRATA_APP_PASSWORD
\if :{?owner_password}
\else
  \warn 'init.sql: set MEMSTRATA_OWNER_PASSWORD (the schema owner''s password)'
  SELECT 'MEMSTRATA_OWNER_PASSWORD is not set'::int;
\endif
\if :{?app_password}
\else
  \warn 'init.sql: set MEMSTRATA_APP_PASSWORD (the application role''s password)'
  SELECT 'MEMSTRATA_APP_PASSWORD is not set'::int;
\endif
\if :{?owner_role}
\else
  \set owner_role memstrata_owner
\endif
\if :{?app_role}
\else
  \set app_role memstrata_app
\endif
\if :{?database}
\else
  \set database memstrata
\endif

CREATE ROLE :"owner_role" LOGIN PASSWORD :'owner_password';
CREATE ROLE :"app_role" LOGIN PASSWORD :'app_password' NOSUPERUSER NOBYPASSRLS;
CREATE DATABASE :"database" OWNER :"owner_role";
\c :"database"
CREATE EXTENSION vector;
