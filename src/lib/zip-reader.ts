// Reading an untrusted zip archive (imports: zip of markdown, and docx, which is a zip) without
// letting it expand past its budget. yauzl reads the central directory first, so the entry count
// and every declared uncompressed size are checked before a byte is inflated; then each entry is
// inflated as a stream with a running byte count that aborts at the cap, because declared sizes
// can lie (yauzl also fails an entry that inflates past its own declared size).
import yauzl from 'yauzl';
import type { Readable } from 'node:stream';

export type ZipLimits = {
  /** Records of the central directory, files and folders alike. */
  maxEntries: number;
  /** Uncompressed bytes of one entry that is read. */
  maxEntryBytes: number;
  /** Uncompressed bytes of all entries that are read. */
  maxTotalBytes: number;
};

export type ZipEntryData = { name: string; data: Buffer };

/** A refusal to report to the user as is: it names the archive (`what`) and the entry. */
export class ZipLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ZipLimitError';
  }
}

const mib = (n: number) => (n >= 1024 * 1024 ? `${+(n / 1024 / 1024).toFixed(1)} MiB` : `${Math.ceil(n / 1024)} KiB`);

/**
 * The file entries of `buffer` that `keep` selects (all by default), inflated within `limits`.
 * Entries not kept are never inflated and their sizes do not count. Throws `ZipLimitError`
 * naming the archive (`what`) and the entry for anything over a limit or unreadable.
 */
export async function readZip(buffer: Buffer, limits: ZipLimits, opts: { what: string; keep?: (name: string) => boolean }): Promise<ZipEntryData[]> {
  const { what } = opts;
  let zip: yauzl.ZipFile;
  try {
    // strictFileNames off: backslashes become slashes (archives made on Windows); names with
    // `..` or an absolute path are refused by yauzl either way.
    zip = await yauzl.fromBufferPromise(buffer, { lazyEntries: true, validateEntrySizes: true, decodeStrings: true });
  } catch (e) {
    throw new ZipLimitError(`${what} is not a readable zip archive: ${(e as Error).message}`);
  }
  try {
    // 1. The count, from the end-of-central-directory record, before reading any entry.
    if (zip.entryCount > limits.maxEntries) {
      throw new ZipLimitError(`${what} has ${zip.entryCount} entries; at most ${limits.maxEntries} are accepted`);
    }
    // 2. The declared sizes, from the central directory, before inflating anything.
    const entries: yauzl.Entry[] = [];
    let declared = 0;
    try {
      for await (const entry of zip.eachEntry()) {
        if (entry.fileName.endsWith('/')) continue;
        if (opts.keep && !opts.keep(entry.fileName)) continue;
        if (entry.uncompressedSize > limits.maxEntryBytes) {
          throw new ZipLimitError(`${what}: ${entry.fileName} expands to ${mib(entry.uncompressedSize)}; an entry may expand to at most ${mib(limits.maxEntryBytes)}`);
        }
        declared += entry.uncompressedSize;
        if (declared > limits.maxTotalBytes) {
          throw new ZipLimitError(`${what} expands to more than ${mib(limits.maxTotalBytes)} (the limit for an import)`);
        }
        entries.push(entry);
      }
    } catch (e) {
      if (e instanceof ZipLimitError) throw e;
      throw new ZipLimitError(`${what} is not a readable zip archive: ${(e as Error).message}`);
    }
    // 3. Inflate one entry at a time as a stream, counting what comes out.
    const out: ZipEntryData[] = [];
    let total = 0;
    for (const entry of entries) {
      let stream: Readable;
      try {
        stream = await zip.openReadStreamPromise(entry);
      } catch (e) {
        throw new ZipLimitError(`${what}: cannot read ${entry.fileName}: ${(e as Error).message}`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          size += chunk.length;
          total += chunk.length;
          if (size > limits.maxEntryBytes || size > entry.uncompressedSize) {
            throw new ZipLimitError(`${what}: ${entry.fileName} expands past its declared size of ${mib(entry.uncompressedSize)}; the archive is damaged or made to exhaust memory`);
          }
          if (total > limits.maxTotalBytes) throw new ZipLimitError(`${what} expands to more than ${mib(limits.maxTotalBytes)} (the limit for an import)`);
          chunks.push(chunk);
        }
      } catch (e) {
        stream.destroy();
        if (e instanceof ZipLimitError) throw e;
        const message = (e as Error).message;
        // yauzl's own check of the declared size, which sees the bytes before this loop does.
        if (/too many bytes/.test(message)) {
          throw new ZipLimitError(`${what}: ${entry.fileName} expands past its declared size of ${mib(entry.uncompressedSize)}; the archive is damaged or made to exhaust memory`);
        }
        if (/too few bytes/.test(message)) throw new ZipLimitError(`${what}: ${entry.fileName} is shorter than its declared size; the archive is damaged`);
        throw new ZipLimitError(`${what}: cannot read ${entry.fileName}: ${message}`);
      }
      out.push({ name: entry.fileName, data: Buffer.concat(chunks, size) });
    }
    return out;
  } finally {
    zip.close();
  }
}
