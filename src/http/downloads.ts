// File downloads with access checks, authenticated like the APIs (Authorization: Bearer):
//   GET /files/<fileId>                   an uploaded or imported file (its `downloadURL`)
//   GET /files/pdf/<exportId>             a change request's PDF export (the contract's `url`):
//                                         200 the PDF; 202 + Retry-After while the job renders
//                                         it; 422 naming the reason when it failed
// The caller must be able to read the space the file belongs to; anything else is 404 (a missing
// token is 401), so a file's existence is never revealed. Nothing here renders or writes.
import type http from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { FileStorage, StoredStream } from '../lib/storage.ts';
import type { Context } from '../graphql/context.ts';
import { sendJson } from './compression.ts';
import type { RequestTarget } from './limits.ts';
import { AppError, HTTP_STATUS, RETRY_AFTER_SECONDS, notFound, errorBody } from '../lib/errors.ts';
import { getPdfExport } from '../domain/pdf-exports.ts';

/** The bytes whole, or as a stream when the store streams (S3: never held whole here). */
type Download = { data: Buffer | StoredStream; contentType: string; filename: string };
/** An answer other than the bytes (a PDF export still rendering, or failed). */
type NotReady = { status: number; body: unknown; headers?: Record<string, string> };

/** Seconds a client is told to wait before asking again for a PDF still rendering. */
const PDF_RETRY_AFTER_SECONDS = 2;

function read(storage: FileStorage, key: string): Promise<Buffer | StoredStream | null> {
  return storage.stream ? storage.stream(key) : storage.get(key);
}

async function readableSpace(ctx: Context, spaceId: string) {
  const space = await ctx.prisma.space.findUnique({ where: { id: spaceId } });
  await ctx.access.requireSpace(space, 'space:read');
}

async function fileDownload(ctx: Context, fileId: string): Promise<Download> {
  const file = await ctx.prisma.file.findUnique({ where: { id: fileId } });
  if (!file) throw notFound('File');
  await readableSpace(ctx, file.spaceId);
  const data = await read(ctx.services.storage, file.storageKey);
  if (!data) throw notFound('File');
  return { data, contentType: file.contentType, filename: file.name };
}

async function pdfDownload(ctx: Context, exportId: string): Promise<Download | NotReady> {
  const exp = await getPdfExport(ctx, exportId);
  if (exp.state === 'pending' || exp.state === 'running') {
    return { status: 202, headers: { 'Retry-After': String(PDF_RETRY_AFTER_SECONDS) }, body: { object: 'pdf-export', id: exp.id, state: exp.state } };
  }
  if (exp.state === 'failed') return { status: 422, body: errorBody(422, `The PDF export failed: ${exp.error ?? 'unknown reason'}`) };
  const data = exp.storageKey ? await read(ctx.services.storage, exp.storageKey) : null;
  if (!data) throw notFound('PDF');
  const cr = await ctx.prisma.changeRequest.findUnique({ where: { id: exp.changeRequestId }, select: { number: true } });
  return { data, contentType: 'application/pdf', filename: `change-request-${cr?.number ?? exp.changeRequestId}.pdf` };
}

export async function handleDownload(req: http.IncomingMessage, res: http.ServerResponse, target: RequestTarget, ctx: Context) {
  try {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return sendJson(res, 405, errorBody(405, `Method ${req.method} is not allowed on ${target.pathname}`));
    }
    ctx.access.requireViewer();
    const parts = target.segments.filter(Boolean);
    let download: Download | NotReady;
    if (parts.length === 2) download = await fileDownload(ctx, parts[1]);
    else if (parts.length === 3 && parts[1] === 'pdf') download = await pdfDownload(ctx, parts[2]);
    else throw notFound('File');
    if ('status' in download) {
      for (const [k, v] of Object.entries(download.headers ?? {})) res.setHeader(k, v);
      res.setHeader('Cache-Control', 'no-store');
      return sendJson(res, download.status, download.body);
    }
    // Uploaded content is served as an attachment-safe download: never sniffed, never run as a page.
    const inline = /^(image\/(png|jpeg|gif|webp|avif)|application\/pdf|text\/plain)$/.test(download.contentType);
    const { data } = download;
    const length = Buffer.isBuffer(data) ? data.length : data.size;
    res.writeHead(200, {
      'Content-Type': download.contentType,
      ...(length !== undefined ? { 'Content-Length': length } : {}),
      'Content-Disposition': `${inline ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(download.filename)}`,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'private, max-age=300',
      'Content-Security-Policy': "default-src 'none'; sandbox",
    });
    if (Buffer.isBuffer(data)) return res.end(req.method === 'HEAD' ? undefined : data);
    if (req.method === 'HEAD') {
      data.body.destroy();
      return res.end();
    }
    // The status is sent: a store failing mid-body cuts the connection (the client sees a short body).
    return await pipeline(data.body, res).catch((err: NodeJS.ErrnoException) => {
      // The client going away is no news; the store failing mid-body is.
      if (err.code !== 'ERR_STREAM_PREMATURE_CLOSE') ctx.log.warn({ err }, 'file download interrupted');
      res.destroy();
    });
  } catch (err) {
    if (err instanceof AppError) {
      // Not allowed to read is reported as missing: a file's existence is not revealed.
      const status = err.code === 'FORBIDDEN' ? 404 : HTTP_STATUS[err.code];
      // The file store unavailable (storage-s3.ts): retry later, like the database.
      if (status === 503) res.setHeader('Retry-After', String(err.retryAfterSeconds ?? RETRY_AFTER_SECONDS));
      return sendJson(res, status, errorBody(status, err.code === 'FORBIDDEN' ? 'File not found' : err.message));
    }
    throw err;
  }
}
