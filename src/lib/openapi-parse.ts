// Parse and validate an OpenAPI 3.x / Swagger 2.0 document (JSON or YAML) with
// @apidevtools/swagger-parser, collecting every external `$ref` into a `filesystem` keyed by
// resolved URL. External files are fetched through the caller's (SSRF-guarded) fetcher; the
// parser itself never touches the network or the disk.
import crypto from 'node:crypto';
import SwaggerParser from '@apidevtools/swagger-parser';
import YAML from 'yaml';

export type ParsedOpenApi =
  | { ok: true; filesystem: Record<string, unknown>; entry: string; hash: string; title?: string; version?: string }
  | { ok: false; code: 'PARSE_ERROR'; message: string };

const MAX_REFERENCED_FILES = 50;

function parseText(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) return JSON.parse(trimmed);
  return YAML.parse(text);
}

/** JSON with sorted keys, so the same content always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Every `$ref` string that points outside the document (anything not starting with `#`). */
function externalRefs(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => externalRefs(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
      if (k === '$ref' && typeof v === 'string' && !v.startsWith('#')) out.add(v.split('#')[0]);
      else externalRefs(v, out);
    }
  }
  return out;
}

export async function parseOpenApi(text: string, sourceUrl: string | undefined, fetchRef: (url: string) => Promise<string>): Promise<ParsedOpenApi> {
  const entry = sourceUrl ?? 'openapi.json';
  let root: unknown;
  try {
    root = parseText(text);
  } catch (e) {
    return { ok: false, code: 'PARSE_ERROR', message: `not JSON or YAML: ${(e as Error).message}` };
  }
  if (!root || typeof root !== 'object') return { ok: false, code: 'PARSE_ERROR', message: 'the document is not an object' };

  // Collect external files breadth-first, resolving each ref against the file that holds it.
  // Errors of `fetchRef` propagate (the caller tells fetch failures from parse failures).
  const filesystem: Record<string, unknown> = { [entry]: root };
  const queue: Array<{ url: string; doc: unknown }> = [{ url: entry, doc: root }];
  while (queue.length) {
    const { url, doc } = queue.shift()!;
    for (const ref of externalRefs(doc)) {
      const resolved = resolveUrl(ref, url);
      if (resolved in filesystem) continue;
      if (Object.keys(filesystem).length > MAX_REFERENCED_FILES) {
        return { ok: false, code: 'PARSE_ERROR', message: `more than ${MAX_REFERENCED_FILES} referenced files` };
      }
      const text = await fetchRef(resolved);
      let refDoc: unknown;
      try {
        refDoc = parseText(text);
      } catch (e) {
        return { ok: false, code: 'PARSE_ERROR', message: `${resolved} is not JSON or YAML: ${(e as Error).message}` };
      }
      filesystem[resolved] = refDoc;
      queue.push({ url: resolved, doc: refDoc });
    }
  }

  // Validate with the parser, serving every file from the collected filesystem.
  try {
    const api = (await SwaggerParser.validate(isUrl(entry) ? entry : 'http://openapi.local/openapi.json', structuredClone(root) as never, {
      resolve: {
        file: false,
        http: false,
        filesystem: {
          order: 1,
          canRead: true,
          read: (file: { url: string }) => {
            const found = filesystem[file.url] ?? filesystem[decodeURI(file.url)];
            if (found === undefined) throw new Error(`unknown reference ${file.url}`);
            return JSON.stringify(found);
          },
        },
      },
    } as never)) as unknown as { info?: { title?: string; version?: string } };
    const hash = crypto.createHash('sha256').update(canonicalJson(filesystem)).digest('hex');
    return { ok: true, filesystem, entry, hash, title: api.info?.title, version: api.info?.version };
  } catch (e) {
    return { ok: false, code: 'PARSE_ERROR', message: (e as Error).message.split('\n')[0] };
  }
}

function resolveUrl(ref: string, base: string): string {
  try {
    return new URL(ref, base).toString();
  } catch {
    // A base that is not a URL (inline text): keep the ref as given.
    return ref;
  }
}

function isUrl(s: string) {
  return /^https?:\/\//.test(s);
}
