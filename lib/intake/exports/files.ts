/**
 * The files of an export, whether a ZIP (read entry by entry with yauzl, from its central
 * directory, never whole) or a folder, and line-by-line reading of text files.
 */
import { createReadStream } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { createInterface } from "node:readline";
import { type Entry, openPromise, type ZipFile } from "yauzl";
import { ExportInputError } from "./errors.js";

/** The largest single file (a Slack day file) read whole: far above any real day of chat. */
export const MAX_ENTRY_BYTES = 128 * 1024 * 1024;

interface TreeFile {
  /** `/`-separated, relative to the tree's root. */
  path: string;
  size: number;
}

export interface ExportTree {
  files: TreeFile[];
  /** How reports name a file: `export.zip!general/2024-01-01.json` or the file's path. */
  label(path: string): string;
  /** The whole file (callers check `size` against {@link MAX_ENTRY_BYTES} first). */
  read(path: string): Promise<Buffer>;
  close(): void;
}

/** A ZIP's files from its central directory; each is decompressed only when read. */
export async function openZipTree(zipPath: string): Promise<ExportTree> {
  let zip: ZipFile;
  try {
    zip = await openPromise(zipPath, { lazyEntries: true, autoClose: false });
  } catch (error) {
    throw new ExportInputError(zipPath, `not a readable ZIP file (${plain(error)})`);
  }
  const entries = new Map<string, Entry>();
  try {
    for await (const entry of zip.eachEntry()) {
      if (!entry.fileName.endsWith("/")) entries.set(entry.fileName, entry);
    }
  } catch (error) {
    zip.close();
    throw new ExportInputError(zipPath, `a damaged ZIP directory (${plain(error)})`);
  }
  return {
    files: [...entries.values()].map((e) => ({ path: e.fileName, size: e.uncompressedSize })),
    label: (path) => `${zipPath}!${path}`,
    async read(path) {
      const entry = entries.get(path) as Entry;
      try {
        const chunks: Buffer[] = [];
        for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk);
        return Buffer.concat(chunks);
      } catch (error) {
        throw new ExportInputError(`${zipPath}!${path}`, `a damaged ZIP entry (${plain(error)})`);
      }
    },
    close: () => zip.close(),
  };
}

/** An error's message with control characters replaced: yauzl's quote the ZIP's own names. */
function plain(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\p{Cc}/gu, "?");
}

/** A folder's files, recursively. */
export async function openFolderTree(folder: string): Promise<ExportTree> {
  const files: TreeFile[] = [];
  for (const path of await listFiles(folder)) {
    files.push({
      path: relative(folder, path).split(sep).join("/"),
      size: (await stat(path)).size,
    });
  }
  return {
    files,
    label: (path) => join(folder, path),
    read: (path) => readFile(join(folder, path)),
    close: () => {},
  };
}

/** Every file under `folder`, sorted, symbolic links not followed. */
export async function listFiles(folder: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) found.push(...(await listFiles(path)));
    else if (entry.isFile()) found.push(path);
  }
  return found.sort();
}

/** The lines of a UTF-8 text file (`\n` or `\r\n`), without a leading byte order mark. */
export async function* fileLines(path: string): AsyncGenerator<string> {
  const lines = createInterface({
    input: createReadStream(path, { encoding: "utf8" }),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let first = true;
  for await (const line of lines) {
    yield first && line.charCodeAt(0) === 0xfeff ? line.slice(1) : line;
    first = false;
  }
}

/** The first `bytes` of a file as text: what format detection looks at. */
export async function fileHead(path: string, bytes = 4096): Promise<string> {
  const chunks: Buffer[] = [];
  let held = 0;
  for await (const chunk of createReadStream(path, { start: 0, end: bytes - 1 })) {
    chunks.push(chunk as Buffer);
    held += (chunk as Buffer).length;
    if (held >= bytes) break;
  }
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/^\uFEFF/, "");
}
