// Validates REST responses against the official OpenAPI documents: `expectValidResponse` for the
// one shipped in @gitbook/api@0.130.0 (the contract), `expectValidNextResponse` for 0.202's
// operations (content authoring, structure sort).
import { createRequire } from 'node:module';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

const require = createRequire(import.meta.url);
const spec = require('@gitbook/api/spec/openapi.json');
const nextSpec = require('gitbook-api-next/spec/openapi.json');

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

/** An assertion that a body is a valid response of an operation of `document`. */
function responseValidator(document: any, label: string) {
  const ajv = new Ajv({ strict: false, allErrors: true, discriminator: false });
  addFormats(ajv);
  ajv.addFormat('icon', true);
  ajv.addSchema(rewriteNullable(structuredClone(document)), 'openapi');
  const cache = new Map<string, ReturnType<typeof ajv.compile>>();

  /** `pathTemplate` is the document's path without /v1, e.g. `/orgs/{organizationId}`. */
  return function expectValid(method: string, pathTemplate: string, status: number, body: unknown) {
    const op = document.paths[pathTemplate]?.[method.toLowerCase()];
    if (!op) throw new Error(`No operation ${method} ${pathTemplate} in the ${label} OpenAPI document`);
    let response = op.responses[String(status)];
    if (!response) throw new Error(`Status ${status} is not documented for ${method} ${pathTemplate}`);
    // Error responses are usually declared by reference (`#/components/responses/…`).
    let base = `openapi#/paths/${escape(pathTemplate)}/${method.toLowerCase()}/responses/${status}`;
    if (typeof response.$ref === 'string') {
      base = `openapi${response.$ref}`;
      response = response.$ref.split('/').slice(1).reduce((node: any, key: string) => node?.[key], document);
    }
    const schemaRef = response.content?.['application/json']?.schema;
    if (!schemaRef) {
      expect(body === undefined || body === '' || body === null).toBe(true);
      return;
    }
    const key = `${method} ${pathTemplate} ${status}`;
    let validate = cache.get(key);
    if (!validate) {
      validate = ajv.compile({ $ref: `${base}/content/${escape('application/json')}/schema` });
      cache.set(key, validate);
    }
    if (!validate(body)) {
      throw new Error(`Response of ${key} does not match the ${label} OpenAPI document:\n${ajv.errorsText(validate.errors, { separator: '\n' })}\n${JSON.stringify(body, null, 2).slice(0, 2000)}`);
    }
  };
}

export const expectValidResponse = responseValidator(spec, '0.130');
export const expectValidNextResponse = responseValidator(nextSpec, '0.202');
export { spec as openapiSpec };
