// File bytes in an S3-compatible object store (FILE_STORAGE=s3): AWS S3, MinIO, Ceph RGW,
// Garage, R2… shared by every gateway and the worker. Requests are signed with SigV4 (aws4fetch)
// and sent with Node's fetch.
//
// - A PUT is atomic in S3: the object appears under its key only once the whole body arrived and
//   matched the signed SHA-256 (`x-amz-content-sha256`), so no reader ever sees half an object.
//   The ordering rule of storage.ts holds unchanged: bytes before the row that refers to them,
//   deleted after the row; the orphan sweep lists the bucket (ListObjectsV2) like the table.
// - The store unreachable, timing out or answering 5xx/429 → SERVICE_UNAVAILABLE (503 with
//   Retry-After, like the database); any other unexpected answer (403: wrong credentials or
//   policy, 404 NoSuchBucket) is a configuration fault → a plain error (500, logged).
// - Downloads stream (`stream`): the body goes to the client as it arrives, never held whole.
// - Keys are ours (`files/<space>/<file>`, `pdf/<id>.pdf`), but a key S3 cannot address
//   faithfully by URL path (empty, `.`/`..` or empty segments, control characters, > 1024 bytes)
//   is refused rather than rewritten: a URL parser would fold `..` and address another object.
import { Readable } from 'node:stream';
import crypto from 'node:crypto';
import { AwsClient } from 'aws4fetch';
import { serviceUnavailable } from './errors.ts';
import type { FileStorage, StoredStream } from './storage.ts';

export type S3Settings = {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** `endpoint/bucket/key` (MinIO, most self-hosted stores) instead of `bucket.endpoint/key`. */
  forcePathStyle: boolean;
};

/** One request to the store (until its answer's headers; a whole body for put/get), ms. */
export const S3_REQUEST_TIMEOUT_MS = 30_000;
export const S3_UNAVAILABLE_MESSAGE = 'File storage is unavailable; retry in a few seconds';
const LIST_PAGE = 1000;

function unavailable(cause: unknown) {
  const err = serviceUnavailable(S3_UNAVAILABLE_MESSAGE);
  (err as { cause?: unknown }).cause = cause;
  return err;
}

/** A key's URL path, each segment percent-encoded (RFC 3986); throws for a key S3 cannot address faithfully. */
export function s3ObjectPath(key: string): string {
  const refuse = () => new Error(`not a storable key: ${JSON.stringify(key.slice(0, 100))}`);
  if (!key || Buffer.byteLength(key) > 1024 || /[\u0000-\u001f\u007f]/.test(key)) throw refuse();
  const segments = key.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) throw refuse();
  try {
    return segments.map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)).join('/');
  } catch {
    throw refuse(); // a lone surrogate
  }
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
function xmlText(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (m, e: string) =>
    e[0] === '#' ? String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)) : (XML_ENTITIES[e] ?? m),
  );
}
const tag = (xml: string, name: string) => {
  const m = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(xml);
  return m ? xmlText(m[1]) : undefined;
};

export class S3FileStorage implements FileStorage {
  private readonly client: AwsClient;
  /** The bucket's URL, without a trailing slash. */
  private readonly bucketUrl: string;

  constructor(
    private readonly settings: S3Settings,
    private readonly opts: { timeoutMs?: number } = {},
  ) {
    this.client = new AwsClient({ accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey, service: 's3', region: settings.region, retries: 0 });
    const url = new URL(settings.endpoint);
    const basePath = url.pathname.replace(/\/+$/, '');
    this.bucketUrl = settings.forcePathStyle
      ? `${url.origin}${basePath}/${encodeURIComponent(settings.bucket)}`
      : `${url.protocol}//${settings.bucket}.${url.host}${basePath}`;
  }

  private url(key: string) {
    return `${this.bucketUrl}/${s3ObjectPath(key)}`;
  }

  /**
   * One signed request. The timer covers the answer's headers, and the body too unless
   * `streaming` (a download's body may take as long as the client reads).
   */
  private async request(method: string, url: string, init: { body?: Buffer; headers?: Record<string, string> } = {}, streaming = false): Promise<{ res: Response; done: () => void }> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`S3 ${method} timed out`)), this.opts.timeoutMs ?? S3_REQUEST_TIMEOUT_MS);
    const done = () => clearTimeout(timer);
    let res: Response;
    try {
      res = await this.client.fetch(url, { method, body: init.body ? (init.body as unknown as BodyInit) : undefined, headers: init.headers, signal: controller.signal });
    } catch (err) {
      done();
      throw unavailable(err);
    }
    if (streaming) done();
    if (res.status >= 500 || res.status === 429) {
      done();
      await res.body?.cancel().catch(() => {});
      throw unavailable(new Error(`S3 ${method} answered ${res.status}`));
    }
    return { res, done };
  }

  /** An answer we did not expect: the store's error code in the message (credentials, bucket, policy). */
  private async fault(method: string, key: string, res: Response): Promise<Error> {
    const text = await res.text().catch(() => '');
    return new Error(`S3 ${method} ${JSON.stringify(key)}: ${res.status} ${tag(text, 'Code') ?? ''}`.trim());
  }

  /** Read a whole body under the request's timer: a failure mid-body is the store's (503). */
  private async body(res: Response, done: () => void): Promise<Buffer> {
    try {
      return Buffer.from(await res.arrayBuffer());
    } catch (err) {
      throw unavailable(err);
    } finally {
      done();
    }
  }

  async put(key: string, data: Buffer, contentType: string) {
    const { res, done } = await this.request('PUT', this.url(key), {
      body: data,
      headers: {
        'content-type': contentType,
        // Signed: the store refuses a body that does not match (a cut or corrupted upload).
        'x-amz-content-sha256': crypto.createHash('sha256').update(data).digest('hex'),
      },
    });
    try {
      if (!res.ok) throw await this.fault('PUT', key, res);
      await res.body?.cancel().catch(() => {});
    } finally {
      done();
    }
  }

  async get(key: string): Promise<Buffer | null> {
    const { res, done } = await this.request('GET', this.url(key));
    if (res.status === 404) {
      done();
      await res.body?.cancel().catch(() => {});
      return null;
    }
    if (!res.ok) {
      done();
      throw await this.fault('GET', key, res);
    }
    return this.body(res, done);
  }

  async stream(key: string): Promise<StoredStream | null> {
    const { res } = await this.request('GET', this.url(key), {}, true);
    if (res.status === 404) {
      await res.body?.cancel().catch(() => {});
      return null;
    }
    if (!res.ok || !res.body) throw await this.fault('GET', key, res);
    const size = Number(res.headers.get('content-length'));
    return { size: Number.isFinite(size) ? size : undefined, body: Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>) };
  }

  async delete(key: string) {
    const { res, done } = await this.request('DELETE', this.url(key));
    try {
      // 204; a missing key is success (S3 answers 204 too, some stores 404).
      if (!res.ok && res.status !== 404) throw await this.fault('DELETE', key, res);
      await res.body?.cancel().catch(() => {});
    } finally {
      done();
    }
  }

  async *list(): AsyncIterable<{ key: string; modifiedAt: Date }> {
    let token: string | undefined;
    for (;;) {
      const q = new URLSearchParams({ 'list-type': '2', 'max-keys': String(LIST_PAGE) });
      if (token) q.set('continuation-token', token);
      const { res, done } = await this.request('GET', `${this.bucketUrl}/?${q}`);
      if (!res.ok) {
        done();
        throw await this.fault('LIST', '', res);
      }
      const xml = (await this.body(res, done)).toString('utf8');
      for (const m of xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
        const key = tag(m[1], 'Key');
        const modified = tag(m[1], 'LastModified');
        if (key !== undefined && modified) yield { key, modifiedAt: new Date(modified) };
      }
      token = tag(xml, 'IsTruncated') === 'true' ? tag(xml, 'NextContinuationToken') : undefined;
      if (!token) return;
    }
  }
}
