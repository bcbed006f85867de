// Trusted documents (persisted operations): a client may send the id of a known GraphQL document
// instead of its text, as `extensions.persistedQuery.sha256Hash` (Apollo's APQ shape, version 1)
// or `documentId` (in a POST body, or the query string of a GET).
//
// The known documents are the REST shim's own (every /v1 route runs one: src/rest/router.ts),
// plus the operator's `TRUSTED_DOCUMENTS_FILE`, a JSON object id → document text (the
// `persisted-documents.json` GraphQL Codegen's client preset writes has this shape). Every
// document is known by the sha256 (hex) of its exact text; a file's entries also by their own id.
// All are parsed and validated against the schema at start-up: a bad file stops the server.
//
// `TRUSTED_DOCUMENTS`:
// - `off`: ids are not understood (a request without `query` is a 400, as before);
// - `allow` (default): ids and document text are both accepted;
// - `only`: the text of a document is accepted only when it is a known document or reads nothing
//   but the schema (introspection: public, and what GraphiQL's Docs pane needs); anything else is
//   a 400 `PERSISTED_QUERY_ONLY`.
// An unknown id is a 400 `PERSISTED_QUERY_NOT_FOUND` (the code Apollo clients react to by sending
// the text, which `allow` accepts). The manifest of known documents (sha256 → text) is served at
// `GET /graphql/documents.json` for clients to build against.
//
// A trusted document is vetted: like the REST routes' documents, it runs without the depth,
// breadth and cost limits (its request record's `fixedDocument`, read by graphql/builder.ts); the token, alias and directive
// limits of parsing still apply.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { parse, validate, type GraphQLSchema } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import type { Config } from '../config.ts';
import type { RequestRecord } from '../graphql/context.ts';
import { isIntrospectionOnly } from './explorer.ts';

/** Error codes of this module, kept as they are by the server's error-status plugin. */
export const TRUSTED_DOCUMENT_ERROR_CODES = ['PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_ONLY'] as const;

/** The path the manifest is served at. */
export const TRUSTED_DOCUMENTS_PATH = '/graphql/documents.json';

export const sha256Hex = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

export class TrustedDocuments {
  /** id (sha256 hex, or a file's own id) → document text. */
  private readonly byId = new Map<string, string>();
  /** sha256 hex → text: what the manifest lists. */
  private readonly byHash = new Map<string, string>();

  constructor(private readonly schema: GraphQLSchema) {}

  /** Add a document under its sha256 (and `id`, if given); throws when it is not valid for the schema. */
  add(text: string, id?: string, label = id ?? 'document') {
    let errors: readonly Error[];
    try {
      errors = validate(this.schema, parse(text));
    } catch (err) {
      errors = [err as Error];
    }
    if (errors.length) throw new Error(`Trusted document ${label}: ${errors[0].message}`);
    const hash = sha256Hex(text);
    this.byHash.set(hash, text);
    this.byId.set(hash, text);
    if (id !== undefined) {
      const known = this.byId.get(id);
      if (known !== undefined && known !== text) throw new Error(`Trusted document ${label}: the id names two different documents`);
      this.byId.set(id, text);
    }
    return this;
  }

  /** Add the entries of a JSON file `{ "<id>": "<document text>", … }`. */
  addFile(file: string) {
    let json: unknown;
    try {
      json = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      throw new Error(`TRUSTED_DOCUMENTS_FILE ${file}: ${(err as Error).message}`);
    }
    if (!json || typeof json !== 'object' || Array.isArray(json)) throw new Error(`TRUSTED_DOCUMENTS_FILE ${file}: expected a JSON object of id → document text`);
    for (const [id, text] of Object.entries(json)) {
      if (typeof text !== 'string') throw new Error(`TRUSTED_DOCUMENTS_FILE ${file}: ${JSON.stringify(id)} is not a string`);
      this.add(text, id, `${JSON.stringify(id)} in ${file}`);
    }
    return this;
  }

  get(id: string): string | undefined {
    return this.byId.get(id);
  }

  has(text: string): boolean {
    return this.byHash.has(sha256Hex(text));
  }

  get size() {
    return this.byHash.size;
  }

  /** sha256 → text, sorted by hash (a stable body, so a stable ETag). */
  manifest(): Record<string, string> {
    return Object.fromEntries([...this.byHash].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }
}

/** The known documents: the REST shim's, then the configured file's. */
export function loadTrustedDocuments(schema: GraphQLSchema, restDocuments: Iterable<string>, config: Config['trustedDocuments']): TrustedDocuments {
  const docs = new TrustedDocuments(schema);
  for (const text of restDocuments) docs.add(text, undefined, 'of the REST shim');
  if (config.file) docs.addFile(config.file);
  return docs;
}

/** The document id a request names: `documentId` (body or GET query string), else the APQ hash. */
function documentIdOf(params: { extensions?: Record<string, any> } & Record<string, unknown>, request: Request): string | null {
  if (typeof params.documentId === 'string') return params.documentId;
  if (request.method === 'GET') {
    const fromUrl = new URL(request.url, 'http://localhost').searchParams.get('documentId');
    if (fromUrl) return fromUrl;
  }
  const pq = params.extensions?.persistedQuery;
  if (pq && typeof pq === 'object' && pq.version === 1 && typeof pq.sha256Hash === 'string') return pq.sha256Hash;
  return null;
}

/** Yoga plugins for `mode` (none when `off`). `maxTokens` bounds the introspection check's parse. */
export function useTrustedDocuments(docs: TrustedDocuments, mode: Config['trustedDocuments']['mode'], maxTokens: number): Plugin[] {
  if (mode === 'off') return [];
  const only: Plugin = {
    onParams({ params }) {
      if (typeof params.query !== 'string' || docs.has(params.query) || isIntrospectionOnly(params.query, maxTokens)) return;
      throw createGraphQLError(`This server runs trusted documents only: send the id of a known document (extensions.persistedQuery.sha256Hash or documentId; the list: GET ${TRUSTED_DOCUMENTS_PATH}), not its text`, {
        extensions: { code: 'PERSISTED_QUERY_ONLY', http: { status: 400 } },
      });
    },
  };
  const persisted = usePersistedOperations<Record<string, any>>({
    allowArbitraryOperations: true,
    extractPersistedOperationId: (params, request) => documentIdOf(params as never, request),
    getPersistedOperation(id, _request, context) {
      const text = docs.get(id);
      if (text === undefined) return null;
      const record = (context as { requestRecord?: RequestRecord }).requestRecord;
      if (record) record.fixedDocument = true;
      return text;
    },
    customErrors: {
      notFound: ({ params, request }) =>
        createGraphQLError(`PersistedQueryNotFound: no trusted document has the id ${JSON.stringify(documentIdOf(params as never, request))} (the list: GET ${TRUSTED_DOCUMENTS_PATH})`, {
          extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', http: { status: 400 } },
        }),
      keyNotFound: {
        message: 'Must provide a query string, or the id of a trusted document (extensions.persistedQuery.sha256Hash or documentId)',
        extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
      },
    },
  });
  return mode === 'only' ? [only, persisted] : [persisted];
}
