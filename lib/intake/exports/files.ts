/**
 * The files of an export, whether a ZIP (read entry by entry with yauzl, from its central
 * directory, never whole) or a folder, and line-by-line reading of text files.
 */
import { createReadStream } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { type Entry, openPromise, type ZipFile } from "yauzl";
import { ExportFormatError, ExportInputError } from "./errors.js";

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
  /** The file piece by piece, for a reader that holds a bounded part of it. */
  stream(path: string): AsyncIterable<Buffer>;
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
  async function* stream(path: string): AsyncGenerator<Buffer> {
    const entry = entries.get(path) as Entry;
    try {
      yield* await zip.openReadStreamPromise(entry);
    } catch (error) {
      throw new ExportInputError(`${zipPath}!${path}`, `a damaged ZIP entry (${plain(error)})`);
    }
  }
  return {
    files: [...entries.values()].map((e) => ({ path: e.fileName, size: e.uncompressedSize })),
    label: (path) => `${zipPath}!${path}`,
    async read(path) {
      const chunks: Buffer[] = [];
      for await (const chunk of stream(path)) chunks.push(chunk);
      return Buffer.concat(chunks);
    },
    stream,
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
    stream: (path) => createReadStream(join(folder, path)),
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

/**
 * The longest line read, in bytes: far over any chat message (a WhatsApp line is one message's
 * line, a Mattermost line one post with its replies). A longer one is a damaged file or no chat
 * export at all (`/dev/zero` has no line end), and holding it would cost memory without end.
 */
const MAX_LINE_BYTES = 4 * 1024 * 1024;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Windows-1252's letters at 0x80 to 0x9F, where Latin-1 has C1 controls (undefined bytes keep
 * their Latin-1 code point). Node 20's TextDecoder("windows-1252") decodes them as Latin-1.
 */
const WINDOWS_1252_HIGH =
  "\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f" +
  "\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178";

function western(bytes: Buffer): string {
  return bytes
    .toString("latin1")
    .replace(/[\u0080-\u009f]/g, (c) => WINDOWS_1252_HIGH[c.charCodeAt(0) - 0x80] as string);
}

/**
 * The lines of a text file (`\n` or `\r\n`), without a leading byte order mark. Each line is
 * UTF-8; one that is not (an old tool's Latin-1) is read as Windows-1252, a superset of Latin-1,
 * and `onNotUtf8` hears its number, rather than its letters silently becoming U+FFFD.
 *
 * @throws ExportFormatError for a line over {@link MAX_LINE_BYTES}.
 */
export async function* fileLines(
  path: string,
  onNotUtf8?: (line: number) => void,
): AsyncGenerator<string> {
  let line = 0;
  const decode = (bytes: Buffer): string => {
    line++;
    const body = bytes.at(-1) === 13 ? bytes.subarray(0, -1) : bytes;
    let text: string;
    try {
      text = utf8.decode(body);
    } catch {
      onNotUtf8?.(line);
      text = western(body);
    }
    return line === 1 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  };
  const bounded = (bytes: number) => {
    if (bytes <= MAX_LINE_BYTES) return;
    throw new ExportFormatError(
      path,
      `line ${line + 1}`,
      "line",
      `longer than ${MAX_LINE_BYTES / 1024 / 1024} MiB: no chat export has such a line (a damaged file, or not a chat export)`,
    );
  };
  let held: Buffer[] = [];
  let heldBytes = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    let from = 0;
    for (let end = chunk.indexOf(10); end >= 0; end = chunk.indexOf(10, from)) {
      const piece = chunk.subarray(from, end);
      bounded(heldBytes + piece.length);
      yield decode(held.length === 0 ? piece : Buffer.concat([...held, piece]));
      held = [];
      heldBytes = 0;
      from = end + 1;
    }
    if (from < chunk.length) {
      held.push(chunk.subarray(from));
      heldBytes += chunk.length - from;
      bounded(heldBytes);
    }
  }
  if (heldBytes > 0) yield decode(Buffer.concat(held));
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
