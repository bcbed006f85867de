// Validates REST responses against the official OpenAPI document shipped in @gitbook/api@0.130.0.
import { createRequire } from 'node:module';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

const require = createRequire(import.meta.url);
const spec = require('@gitbook/api/spec/openapi.json');

const ajv = new Ajv({ strict: false, allErrors: true, discriminator: false });
addFormats(ajv);
ajv.addSchema(rewriteNullable(structuredClone(spec)), 'openapi');

/** OpenAPI 3.0 `nullable: true` → JSON Schema: allow null alongside the declared type. */
function rewriteNullable(node: any): any {
  if (Array.isArray(node)) return node.map(rewriteNullable);
  if (node && typeof node === 'object') {
    for (const k of Object.keys(node)) node[k] = rewriteNullable(node[k]);
    if (node.nullable === true) {
      if (typeof node.type === 'string') node.type = [node.type, 'null'];
      if (Array.isArray(node.enum) && !node.enum.includes(null)) node.enum = [...node.enum, null];
      delete node.nullable;
    }
  }
  return node;
}

const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const cache = new Map<string, ReturnType<typeof ajv.compile>>();

/**
 * Assert that `body` is a valid response of `method pathTemplate` with `status`.
 * `pathTemplate` is the spec's path without /v1, e.g. `/orgs/{organizationId}`.
 */
export function expectValidResponse(method: string, pathTemplate: string, status: number, body: unknown) {
  const op = spec.paths[pathTemplate]?.[method.toLowerCase()];
  if (!op) throw new Error(`No operation ${method} ${pathTemplate} in the OpenAPI document`);
  let response = op.responses[String(status)];
  if (!response) throw new Error(`Status ${status} is not documented for ${method} ${pathTemplate}`);
  // Error responses are usually declared by reference (`#/components/responses/…`).
  let base = `openapi#/paths/${escape(pathTemplate)}/${method.toLowerCase()}/responses/${status}`;
  if (typeof response.$ref === 'string') {
    base = `openapi${response.$ref}`;
    response = response.$ref.split('/').slice(1).reduce((node: any, key: string) => node?.[key], spec);
  }
  const schemaRef = response.content?.['application/json']?.schema;
  if (!schemaRef) {
    expect(body === undefined || body === '' || body === null).toBe(true);
    return;
  }
  const key = `${method} ${pathTemplate} ${status}`;
  let validate = cache.get(key);
  if (!validate) {
    const pointer = `${base}/content/${escape('application/json')}/schema`;
    validate = ajv.compile({ $ref: pointer });
    cache.set(key, validate);
  }
  const ok = validate(body);
  if (!ok) {
    throw new Error(`Response of ${key} does not match the OpenAPI document:\n${ajv.errorsText(validate.errors, { separator: '\n' })}\n${JSON.stringify(body, null, 2).slice(0, 2000)}`);
  }
}

export { spec as openapiSpec };
