/**
 * A minimal ZIP writer for tests and benchmarks (deflated entries, no ZIP64): enough to build
 * Slack export fixtures in the test instead of committing binary files. Entries are written as
 * they come, so a generated export of any size never sits in memory whole.
 */

import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { crc32, deflateRawSync } from "node:zlib";

export class ZipWriter {
  private readonly out: WriteStream;
  private readonly central: Buffer[] = [];
  private offset = 0;
  private count = 0;

  constructor(path: string) {
    this.out = createWriteStream(path);
  }

  /** Adds a file; `store` keeps it uncompressed (method 0), else it is deflated. */
  async add(name: string, content: string | Buffer, store = false): Promise<void> {
    const data = typeof content === "string" ? Buffer.from(content) : content;
    const packed = store ? data : deflateRawSync(data);
    const nameBytes = Buffer.from(name);
    const crc = crc32(data);
    const method = store ? 0 : 8;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const header = Buffer.alloc(46);
    header.writeUInt32LE(0x02014b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(20, 6);
    header.writeUInt16LE(0x0800, 8);
    header.writeUInt16LE(method, 10);
    header.writeUInt32LE(crc, 16);
    header.writeUInt32LE(packed.length, 20);
    header.writeUInt32LE(data.length, 24);
    header.writeUInt16LE(nameBytes.length, 28);
    header.writeUInt32LE(this.offset, 42);
    this.central.push(header, nameBytes);
    this.count++;
    await this.write(Buffer.concat([local, nameBytes, packed]));
  }

  async close(): Promise<void> {
    const directory = Buffer.concat(this.central);
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(this.count, 8);
    end.writeUInt16LE(this.count, 10);
    end.writeUInt32LE(directory.length, 12);
    end.writeUInt32LE(this.offset, 16);
    await this.write(Buffer.concat([directory, end]));
    this.out.end();
    await once(this.out, "finish");
  }

  private async write(bytes: Buffer): Promise<void> {
    this.offset += bytes.length;
    if (!this.out.write(bytes)) await once(this.out, "drain");
  }
}

/** Writes a ZIP of `files` (name → content) at `path`. */
export async function writeZip(path: string, files: Record<string, string>): Promise<void> {
  const zip = new ZipWriter(path);
  for (const [name, content] of Object.entries(files)) await zip.add(name, content);
  await zip.close();
}
