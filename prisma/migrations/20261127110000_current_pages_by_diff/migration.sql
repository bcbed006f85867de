-- "CurrentPage" follows a space's current revision by the difference of the two revisions'
-- page trees ("Revision"."treeRoot", src/lib/page-trie.ts) instead of a walk of the whole JSON
-- tree: a one-page edit rewrites one row, whatever the size of the space. The trigger stays (every
-- writer, plain SQL included, keeps the table exact in its transaction); the JSON walk
-- ("docgraph_sync_current_pages_of") is kept only for a revision without a tree root.
--
-- Node format (page-trie.ts): a root {"r": [byId, byParent, count]}; a branch {"d": depth, "c":
-- [[bucket, hash, count], …]}; a leaf {"l": [item, …]}. A byId item is [pageId, versionId,
-- parent, pos]; a byParent item [pageId, parent, pos]. The digit of a path at depth d is 5 bits
-- of sha256, starting at bit 5d: sha256('i:' || pageId) for byId; for byParent the first 4 digits
-- come from sha256('p:' || coalesce(parent, '')), so a parent's children sit under one subtree.

-- The digit at depth `d` of the path hashed in `h`.
CREATE FUNCTION "docgraph_trie_digit"(h BYTEA, d INT) RETURNS INT LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (((get_byte(h, (d * 5) >> 3) << 8) | get_byte(h, ((d * 5) >> 3) + 1)) >> (11 - ((d * 5) & 7))) & 31
$$;

-- Pages whose byId item differs between two trees (null root: the empty tree). Subtrees with
-- equal hashes are never read: pairs of branches are matched bucket by bucket, and only where
-- a side is a leaf (or missing) are the items of both sides compared.
CREATE FUNCTION "docgraph_tree_diff"(old_root TEXT, new_root TEXT)
RETURNS TABLE ("pageId" TEXT, "beforeV" TEXT, "beforeParent" TEXT, "afterV" TEXT, "afterParent" TEXT)
LANGUAGE sql STABLE AS $$
    WITH RECURSIVE
    pairs(a, b) AS (
        SELECT x.a, x.b FROM (SELECT
            (SELECT n."entries"->'r'->>0 FROM "RevisionTreeNode" n WHERE n."hash" = old_root) AS a,
            (SELECT n."entries"->'r'->>0 FROM "RevisionTreeNode" n WHERE n."hash" = new_root) AS b) x
        WHERE x.a IS DISTINCT FROM x.b
        UNION ALL
        SELECT ch.ha, ch.hb
        FROM pairs p
        JOIN "RevisionTreeNode" na ON na."hash" = p.a
        JOIN "RevisionTreeNode" nb ON nb."hash" = p.b
        CROSS JOIN LATERAL (
            SELECT x.c->>1 AS ha, y.c->>1 AS hb
            FROM jsonb_array_elements(na."entries"->'c') AS x(c)
            FULL JOIN jsonb_array_elements(nb."entries"->'c') AS y(c) ON (x.c->>0) = (y.c->>0)
        ) ch
        WHERE na."entries" ? 'c' AND nb."entries" ? 'c' AND ch.ha IS DISTINCT FROM ch.hb
    ),
    terminal AS (
        SELECT p.a, p.b FROM pairs p
        WHERE NOT coalesce((SELECT n."entries" ? 'c' FROM "RevisionTreeNode" n WHERE n."hash" = p.a), false)
           OR NOT coalesce((SELECT n."entries" ? 'c' FROM "RevisionTreeNode" n WHERE n."hash" = p.b), false)
    ),
    under(side, entries) AS (
        SELECT s.side, n."entries"
        FROM terminal t CROSS JOIN LATERAL (VALUES ('a', t.a), ('b', t.b)) AS s(side, h)
        JOIN "RevisionTreeNode" n ON n."hash" = s.h
        UNION ALL
        SELECT u.side, n."entries"
        FROM under u CROSS JOIN LATERAL jsonb_array_elements(u."entries"->'c') AS c(child)
        JOIN "RevisionTreeNode" n ON n."hash" = c.child->>1
    ),
    items AS (
        SELECT u.side, i.item FROM under u CROSS JOIN LATERAL jsonb_array_elements(u."entries"->'l') AS i(item)
    ),
    ia AS (SELECT item FROM items WHERE side = 'a'),
    ib AS (SELECT item FROM items WHERE side = 'b')
    SELECT coalesce(ia.item->>0, ib.item->>0), ia.item->>1, ia.item->>2, ib.item->>1, ib.item->>2
    FROM ia FULL JOIN ib ON (ia.item->>0) = (ib.item->>0)
    WHERE ia.item IS DISTINCT FROM ib.item
$$;

-- The children of `parent_id` (null: the top-level pages) in the tree `root`: reads the byParent
-- subtree of that parent only.
CREATE FUNCTION "docgraph_tree_children"(root TEXT, parent_id TEXT) RETURNS TABLE ("pageId" TEXT)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    h TEXT;
    node JSONB;
    ph BYTEA := sha256(convert_to('p:' || coalesce(parent_id, ''), 'UTF8'));
    d INT := 0;
BEGIN
    SELECT n."entries"->'r'->>1 INTO h FROM "RevisionTreeNode" n WHERE n."hash" = root;
    WHILE h IS NOT NULL AND d < 4 LOOP
        SELECT n."entries" INTO node FROM "RevisionTreeNode" n WHERE n."hash" = h;
        EXIT WHEN node IS NULL OR NOT (node ? 'c');
        SELECT c->>1 INTO h FROM jsonb_array_elements(node->'c') AS c WHERE (c->>0)::int = "docgraph_trie_digit"(ph, d);
        IF NOT FOUND THEN h := NULL; END IF;
        d := d + 1;
    END LOOP;
    IF h IS NULL THEN RETURN; END IF;
    RETURN QUERY
        WITH RECURSIVE t(entries) AS (
            SELECT n."entries" FROM "RevisionTreeNode" n WHERE n."hash" = h
            UNION ALL
            SELECT n."entries" FROM t CROSS JOIN LATERAL jsonb_array_elements(t.entries->'c') AS c(child)
            JOIN "RevisionTreeNode" n ON n."hash" = c.child->>1
        )
        SELECT i.item->>0 FROM t CROSS JOIN LATERAL jsonb_array_elements(t.entries->'l') AS i(item)
        WHERE (i.item->>1) IS NOT DISTINCT FROM parent_id;
END
$$;

-- Bring "CurrentPage" of a space from the tree `old_root` (null: unknown, rebuild every row) to
-- `new_root`. Rewritten: the pages whose entry changed, and the descendants of pages whose path
-- may have changed (added, moved, renamed or removed: a removed page's children left behind show
-- at the root). A page's path is its parent's path (from "CurrentPage" when the parent's path did
-- not change) then its slug. Rows whose version and path are unchanged are not written.
CREATE FUNCTION "docgraph_sync_current_pages_by_diff"(space_id TEXT, old_root TEXT, new_root TEXT) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    d_pid TEXT[];
    d_v TEXT[];
    d_parent TEXT[];
    sources TEXT[];
BEGIN
    SELECT coalesce(array_agg(x."pageId"), '{}'), coalesce(array_agg(x."afterV"), '{}'), coalesce(array_agg(x."afterParent"), '{}'),
           coalesce(array_agg(x."pageId") FILTER (WHERE old_root IS NOT NULL AND (
               x."afterV" IS NULL OR x."beforeV" IS NULL OR x."beforeParent" IS DISTINCT FROM x."afterParent"
               OR (x."beforeV" <> x."afterV" AND (SELECT a."slug" FROM "PageVersion" a WHERE a."id" = x."beforeV")
                   IS DISTINCT FROM (SELECT b."slug" FROM "PageVersion" b WHERE b."id" = x."afterV")))), '{}')
    INTO d_pid, d_v, d_parent, sources
    FROM "docgraph_tree_diff"(old_root, new_root) x;

    IF old_root IS NULL THEN
        DELETE FROM "CurrentPage" cp WHERE cp."spaceId" = space_id
          AND NOT EXISTS (SELECT 1 FROM unnest(d_pid, d_v) AS cur(pid, vid) WHERE cur.pid = cp."pageId" AND cur.vid IS NOT NULL);
    ELSE
        DELETE FROM "CurrentPage" cp WHERE cp."spaceId" = space_id
          AND cp."pageId" IN (SELECT cur.pid FROM unnest(d_pid, d_v) AS cur(pid, vid) WHERE cur.vid IS NULL);
    END IF;

    WITH RECURSIVE
    changed AS (
        SELECT cur.pid, cur.vid, cur.parent FROM unnest(d_pid, d_v, d_parent) AS cur(pid, vid, parent) WHERE cur.vid IS NOT NULL
    ),
    below(pid, parent) AS (
        SELECT c."pageId", s.pid FROM unnest(sources) AS s(pid) CROSS JOIN LATERAL "docgraph_tree_children"(new_root, s.pid) c
        UNION
        SELECT c."pageId", b.pid FROM below b CROSS JOIN LATERAL "docgraph_tree_children"(new_root, b.pid) c
    ),
    todo AS (
        SELECT pid, vid, parent FROM changed
        UNION ALL
        SELECT b.pid, cp."versionId", b.parent
        FROM (SELECT DISTINCT ON (pid) pid, parent FROM below ORDER BY pid) b
        JOIN "CurrentPage" cp ON cp."spaceId" = space_id AND cp."pageId" = b.pid
        WHERE b.pid NOT IN (SELECT pid FROM changed)
    ),
    walk(pid, vid, path) AS (
        SELECT t.pid, t.vid, coalesce(pp."path" || '/', '') || coalesce(pv."slug", t.pid)
        FROM todo t
        LEFT JOIN "CurrentPage" pp ON pp."spaceId" = space_id AND pp."pageId" = t.parent
        LEFT JOIN "PageVersion" pv ON pv."id" = t.vid
        WHERE t.parent IS NULL OR t.parent NOT IN (SELECT pid FROM todo)
        UNION ALL
        SELECT t.pid, t.vid, w.path || '/' || coalesce(pv."slug", t.pid)
        FROM walk w JOIN todo t ON t.parent = w.pid
        LEFT JOIN "PageVersion" pv ON pv."id" = t.vid
    )
    INSERT INTO "CurrentPage" AS cp ("spaceId", "pageId", "versionId", "path", "searchVector")
    SELECT space_id, w.pid, w.vid, w.path, CASE WHEN pv."noIndex" THEN NULL ELSE pv."searchVector" END
    FROM walk w JOIN "PageVersion" pv ON pv."id" = w.vid
    ON CONFLICT ("spaceId", "pageId") DO UPDATE
        SET "versionId" = EXCLUDED."versionId", "path" = EXCLUDED."path", "searchVector" = EXCLUDED."searchVector"
        WHERE cp."versionId" IS DISTINCT FROM EXCLUDED."versionId" OR cp."path" IS DISTINCT FROM EXCLUDED."path";
END
$$;

CREATE OR REPLACE FUNCTION "docgraph_sync_current_pages"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    new_root TEXT;
    old_root TEXT;
BEGIN
    IF TG_OP = 'INSERT' OR NEW."revisionId" IS DISTINCT FROM OLD."revisionId" THEN
        SELECT r."treeRoot" INTO new_root FROM "Revision" r WHERE r."id" = NEW."revisionId";
        IF new_root IS NULL AND NEW."revisionId" IS NOT NULL AND EXISTS (SELECT 1 FROM "Revision" r WHERE r."id" = NEW."revisionId") THEN
            -- A revision written before trees were stored (not converted yet): its JSON tree.
            PERFORM "docgraph_sync_current_pages_of"(NEW."id", NEW."revisionId");
        ELSIF new_root IS NULL THEN
            DELETE FROM "CurrentPage" WHERE "spaceId" = NEW."id";
        ELSE
            IF TG_OP = 'UPDATE' THEN
                SELECT r."treeRoot" INTO old_root FROM "Revision" r WHERE r."id" = OLD."revisionId";
            END IF;
            PERFORM "docgraph_sync_current_pages_by_diff"(NEW."id", old_root, new_root);
        END IF;
    END IF;
    RETURN NULL;
END
$$;
