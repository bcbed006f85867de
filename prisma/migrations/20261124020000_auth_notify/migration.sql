-- Invalidation of the per-process token cache (src/auth/token-cache.ts): any change to an API
-- token or a user row notifies channel `docgraph_auth`, in the transaction that makes it, so
-- PostgreSQL delivers the notice to every gateway process when (and only if) it commits.
-- Triggers rather than application code: a revocation by any path (GraphQL, CLI, plain SQL)
-- reaches every cache.
CREATE FUNCTION "docgraph_auth_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('docgraph_auth', TG_TABLE_NAME);
  RETURN NULL;
END;
$$;

CREATE TRIGGER "ApiToken_auth_notify" AFTER UPDATE OR DELETE ON "ApiToken"
  FOR EACH STATEMENT EXECUTE FUNCTION "docgraph_auth_notify"();
CREATE TRIGGER "User_auth_notify" AFTER UPDATE OR DELETE ON "User"
  FOR EACH STATEMENT EXECUTE FUNCTION "docgraph_auth_notify"();
