// The OpenAPI document of the REST shim, served at GET /v1/openapi.json. It is generated once, at
// start-up, from the route table itself, so it cannot drift from what the server does:
// - paths and methods: the rows of the table (find-my-way `:param` → OpenAPI `{param}`);
// - path parameters: their shape from PATH_PARAMS (the pattern the router checks before lookups);
// - query parameters and request bodies: the routes' own zod schemas, through zod's JSON Schema
//   output (`io: 'input'`: what a client sends, before coercions and transforms);
// - operations the official document (@gitbook/api 0.130.0, the contract) also has keep its
//   operationId, summary, tags and response schemas (with the components they reference);
// - the rest are the project's extensions: `x-docgraph-extension: true`, tag "docgraph extensions";
// - every operation lists the contract's error responses, and bearer authentication.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { z } from 'zod';
import pkg from '../../package.json' with { type: 'json' };
import { PATH_PARAMS, type Method, type RestRoute } from './router.ts';

export const OPENAPI_PATH = '/v1/openapi.json';
export const EXTENSION_TAG = 'docgraph extensions';
/** The official document the contract is (a dependency: its operations are reused here). */
export const OFFICIAL_DOCUMENT_MODULE = '@gitbook/api/spec/openapi.json';

type Json = Record<string, any>;

/**
 * Load the official document: a fresh parse (not `require`'s cache), so that the generator may
 * take parts of it as they are and the rest (about 1 MB of JSON) is garbage once it is done.
 */
export function loadOfficialDocument(): Json {
  return JSON.parse(fs.readFileSync(createRequire(import.meta.url).resolve(OFFICIAL_DOCUMENT_MODULE), 'utf8')) as Json;
}

/** `/v1/orgs/:organizationId` → `/v1/orgs/{organizationId}`. */
export function openApiPath(routePath: string): string {
  if (/[*()]/.test(routePath)) throw new Error(`REST route ${routePath}: wildcards and regex parameters have no OpenAPI form`);
  return routePath.replace(/:(\w+)/g, '{$1}');
}

/** A path with its parameters blanked, to match operations whose parameter names differ. */
const pathShape = (openApiPathNoPrefix: string) => openApiPathNoPrefix.replace(/\{[^}]+\}/g, '{}');

/** The contract's error body, `{"error":{"code":status,"message":"..."}}`. */
const errorSchema = (status: number) => ({
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'integer', format: 'int32', enum: [status] }, message: { type: 'string' } },
    },
  },
});

const RETRY_AFTER = { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } };

/** Error responses every operation lists, by status: component name, description, headers. */
const ERROR_RESPONSES: Array<[status: number, name: string, description: string, headers?: Json]> = [
  [400, 'BadRequestError', 'Bad Request: the message names the field'],
  [401, 'UnauthorizedError', 'Unauthorized: no valid API token (Authorization: Bearer <token>)'],
  [403, 'ForbiddenError', 'Forbidden: the token may not do this'],
  [404, 'NotFoundError', 'Not Found'],
  [429, 'TooManyRequestsError', 'Too Many Requests', RETRY_AFTER],
  [503, 'ServiceUnavailableError', 'Service Unavailable: retry later', RETRY_AFTER],
];

const GENERIC_OBJECT = { type: 'object', additionalProperties: true };

/** zod → JSON Schema in the OpenAPI 3.0 dialect; unrepresentable parts (custom checks) become `{}`. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const out = z.toJSONSchema(schema, { io, target: 'openapi-3.0', unrepresentable: 'any' }) as Json;
  delete out.$schema;
  return out;
}

export type OpenApiOptions = {
  /** The official document (default: loaded from @gitbook/api); parts of it are used as they are. */
  official?: Json;
  version?: string;
};

/** The OpenAPI 3.0 document of a route table. Throws on a table it cannot describe (at start-up). */
export function buildOpenApiDocument(routes: readonly RestRoute[], opts: OpenApiOptions = {}): Json {
  const official = opts.official ?? loadOfficialDocument();
  const officialOps = new Map<string, Json>();
  const officialIds = new Set<string>();
  for (const [p, item] of Object.entries<Json>(official.paths)) {
    for (const [m, op] of Object.entries<Json>(item)) {
      officialOps.set(`${m.toUpperCase()} ${pathShape(p)}`, op);
      if (op.operationId) officialIds.add(op.operationId);
    }
  }

  const components: Json = { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API token' } }, schemas: {}, responses: {} };

  /** Copy the official components `node` references into ours, transitively. */
  const copyRefs = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(copyRefs);
    if (!node || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') {
        const m = /^#\/components\/(\w+)\/([^/]+)$/.exec(v);
        if (!m) throw new Error(`OpenAPI: unsupported $ref ${v} in the official document`);
        const [, kind, name] = m;
        const target = official.components?.[kind]?.[name];
        if (target === undefined) throw new Error(`OpenAPI: ${v} is not in the official document`);
        components[kind] ??= {};
        if (components[kind][name] === undefined) {
          components[kind][name] = target;
          copyRefs(target);
        }
      } else copyRefs(v);
    }
  };

  /**
   * Move a generated schema's own definitions (recursive or shared parts) into components, under
   * `prefix`, and point its refs there.
   */
  const hoistDefinitions = (schema: Json, prefix: string): Json => {
    const defs: Json = { ...(schema.definitions ?? {}), ...(schema.$defs ?? {}) };
    delete schema.definitions;
    delete schema.$defs;
    const rewrite = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(rewrite);
      if (!node || typeof node !== 'object') return;
      const obj = node as Json;
      if (typeof obj.$ref === 'string') {
        const m = /^#\/(?:definitions|\$defs)\/(.+)$/.exec(obj.$ref);
        if (!m) throw new Error(`OpenAPI: unsupported $ref ${obj.$ref} in the schema of ${prefix}`);
        obj.$ref = `#/components/schemas/${prefix}_${m[1]}`;
      }
      Object.values(obj).forEach(rewrite);
    };
    rewrite(schema);
    for (const [name, def] of Object.entries(defs)) {
      rewrite(def);
      components.schemas[`${prefix}_${name}`] = def;
    }
    return schema;
  };

  const paths: Json = {};
  const operationIds = new Set<string>();
  for (const route of routes) {
    const path = openApiPath(route.path);
    const method = route.method.toLowerCase();
    if (paths[path]?.[method]) throw new Error(`OpenAPI: ${route.method} ${route.path} is in the route table twice`);
    const contract = officialOps.get(`${route.method} ${pathShape(path.replace(/^\/v1(?=\/|$)/, ''))}`);

    if (contract && route.openapi) throw new Error(`OpenAPI: ${route.method} ${route.path} is in the official document: drop its \`openapi\` field`);
    const operationId: string = contract?.operationId ?? route.openapi?.operationId ?? derivedOperationId(route.method, route.path);
    if (!contract && officialIds.has(operationId)) throw new Error(`OpenAPI: extension ${route.method} ${route.path} reuses the official operationId ${operationId}`);
    if (operationIds.has(operationId)) throw new Error(`OpenAPI: operationId ${operationId} is used twice (${route.method} ${route.path})`);
    operationIds.add(operationId);

    const parameters: Json[] = [];
    for (const [, name] of route.path.matchAll(/:(\w+)/g)) {
      const rule = PATH_PARAMS[name];
      if (!rule) throw new Error(`OpenAPI: path parameter :${name} of ${route.path} has no rule in PATH_PARAMS`);
      parameters.push({ name, in: 'path', required: true, description: `${rule.label} id`, schema: { type: 'string', pattern: rule.pattern.source } });
    }
    if (route.query) {
      const query = jsonSchema(route.query as z.ZodType, 'input');
      if (query.type !== 'object') throw new Error(`OpenAPI: the query schema of ${route.method} ${route.path} is not an object`);
      hoistDefinitions(query, `${operationId}_query`);
      const required = new Set<string>(query.required ?? []);
      for (const [name, schema] of Object.entries<Json>(query.properties ?? {})) {
        const { description, ...rest } = schema;
        parameters.push({ name, in: 'query', required: required.has(name), ...(description ? { description } : {}), schema: rest });
      }
    }

    const operation: Json = { operationId };
    if (contract) {
      if (contract.summary) operation.summary = contract.summary;
      if (contract.tags) operation.tags = contract.tags;
    } else {
      operation.summary = route.openapi?.summary ?? `${route.method} ${path}`;
      operation.tags = [EXTENSION_TAG];
      operation['x-docgraph-extension'] = true;
    }
    if (parameters.length) operation.parameters = parameters;
    if (route.body) {
      const body = hoistDefinitions(jsonSchema(route.body as z.ZodType, 'input'), `${operationId}_body`);
      operation.requestBody = { required: (body.required ?? []).length > 0, content: { 'application/json': { schema: body } } };
    }

    let responses: Json;
    if (contract?.responses) {
      responses = { ...contract.responses };
      copyRefs(responses);
    } else {
      const status = route.openapi?.status ?? (typeof route.status === 'number' ? route.status : 200);
      const declared = route.openapi?.response;
      let schema: Json = GENERIC_OBJECT;
      if (typeof declared === 'string') {
        schema = { $ref: `#/components/schemas/${declared}` };
        copyRefs(schema);
      } else if (declared) schema = hoistDefinitions(jsonSchema(declared, 'output'), `${operationId}_response`);
      responses = {
        [status]: status === 204 || status === 205 ? { description: 'No content' } : { description: 'OK', content: { 'application/json': { schema } } },
      };
    }
    for (const [status, more] of Object.entries(route.moreResponses ?? {})) {
      if (responses[status]) throw new Error(`OpenAPI: ${route.method} ${route.path} already documents ${status}`);
      const schema = hoistDefinitions(jsonSchema(more.response, 'output'), `${operationId}_${status}`);
      responses[status] = { description: more.description, ...(more.headers ? { headers: more.headers } : {}), content: { 'application/json': { schema } } };
    }
    for (const [status, name] of ERROR_RESPONSES) responses[status] ??= { $ref: `#/components/responses/${name}` };
    operation.responses = responses;

    (paths[path] ??= {})[method] = operation;
  }

  // Our error responses: the official definition where it has one by that name (the same body).
  for (const [status, name, description, headers] of ERROR_RESPONSES) {
    if (components.responses[name]) continue;
    if (official.components?.responses?.[name]) {
      copyRefs({ $ref: `#/components/responses/${name}` });
      continue;
    }
    components.responses[name] = { description, ...(headers ? { headers } : {}), content: { 'application/json': { schema: errorSchema(status) } } };
  }

  return {
    openapi: '3.0.3',
    info: {
      title: 'docgraph',
      version: opts.version ?? pkg.version,
      description:
        'The REST shim of docgraph (/v1), generated from its route table. Operations of the GitBook API 0.130.0 keep its operationId and response schemas; others are marked x-docgraph-extension.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    tags: [{ name: EXTENSION_TAG, description: 'Operations docgraph serves beyond the GitBook API 0.130.0 document' }],
    paths,
    components,
  };
}

/** `POST /v1/spaces/:spaceId/content` → `postSpacesContent`; a path ending in a parameter adds `ById`. */
export function derivedOperationId(method: Method, routePath: string): string {
  const segments = routePath.split('/').filter((s) => s && s !== 'v1');
  const words = segments.filter((s) => !s.startsWith(':')).map((s) => s.replace(/(^|[-_.])(\w)/g, (_, __, c: string) => c.toUpperCase()));
  const byId = segments.at(-1)?.startsWith(':') ? 'ById' : '';
  return `${method.toLowerCase()}${words.join('')}${byId}`;
}
