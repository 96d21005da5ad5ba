/**
 * The stored digests an erasure must not leave behind: the scheduled digest writes each period's
 * files (`digests/<day>/digest.{md,json,html}`) to a versioned bucket, and they quote questions
 * and answers in their askers' words, with their message ids. A period whose JSON cites one of
 * the erased messages or names the person loses every version of every one of its files: a
 * digest is a summary the schedule can make again, and a rewritten one would keep the old
 * versions. What was already posted to Slack or SNS cannot be recalled (docs/erasure.md).
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectVersionsCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { mentions } from "../../history/changes/index.js";

/** One stored version of one digest file. */
export interface DigestVersion {
  key: string;
  versionId: string;
}

/** Where the digests are kept: every version listed, read and removed one by one. */
export interface DigestArchive {
  versions(): Promise<DigestVersion[]>;
  read(version: DigestVersion): Promise<string>;
  /** Removes the version itself (no delete marker is left in its place). */
  remove(version: DigestVersion): Promise<void>;
}

/** The period a digest file is of: its key's folder, `digests/<day>/`. */
const periodOf = (key: string) => key.slice(0, key.lastIndexOf("/") + 1);

/**
 * Finds and removes the digests that cite erased messages or name the person. The JSON of every
 * version is read once per run (a few a week), then each page of the erasure is matched against
 * what is left.
 */
export class DigestEraser {
  private index:
    | Promise<{ versions: DigestVersion[]; texts: Map<DigestVersion, string> }>
    | undefined;

  constructor(private readonly archive: DigestArchive) {}

  /** Removes each period citing one of `ids` or naming one of `names`; the versions removed. */
  async erase(ids: readonly string[], names: readonly string[]): Promise<number> {
    this.index ??= this.load();
    const { versions, texts } = await this.index;
    const hit = new Set<string>();
    for (const [version, text] of texts) {
      const period = periodOf(version.key);
      if (hit.has(period)) continue;
      if (
        ids.some((id) => text.includes(JSON.stringify(id))) ||
        names.some((name) => mentions(text, name))
      ) {
        hit.add(period);
      }
    }
    let removed = 0;
    for (const version of [...versions]) {
      if (!hit.has(periodOf(version.key))) continue;
      await this.archive.remove(version);
      versions.splice(versions.indexOf(version), 1);
      texts.delete(version);
      removed++;
    }
    return removed;
  }

  private async load() {
    const versions = await this.archive.versions();
    const texts = new Map<DigestVersion, string>();
    for (const version of versions) {
      if (version.key.endsWith(".json")) texts.set(version, await this.archive.read(version));
    }
    return { versions, texts };
  }
}

/** Digests in memory: for tests. */
export class MemoryDigestArchive implements DigestArchive {
  private readonly stored: (DigestVersion & { body: string })[] = [];
  private next = 0;

  /** Writes a new version of `key`, as a rerun of a period overwrites it in a versioned bucket. */
  put(key: string, body: string): void {
    this.stored.push({ key, versionId: `v${++this.next}`, body });
  }

  async versions(): Promise<DigestVersion[]> {
    return this.stored.map(({ key, versionId }) => ({ key, versionId }));
  }

  async read(version: DigestVersion): Promise<string> {
    return this.find(version)?.body ?? "";
  }

  async remove(version: DigestVersion): Promise<void> {
    const found = this.find(version);
    if (found !== undefined) this.stored.splice(this.stored.indexOf(found), 1);
  }

  /** Every version's key and body, for checks that nothing is kept. */
  all(): { key: string; body: string }[] {
    return this.stored.map(({ key, body }) => ({ key, body }));
  }

  private find({ key, versionId }: DigestVersion) {
    return this.stored.find((s) => s.key === key && s.versionId === versionId);
  }
}

/** The digest bucket on S3: the versions under `prefix` (default `digests/`). */
export function s3DigestArchive(options: {
  client: S3Client;
  bucket: string;
  prefix?: string;
}): DigestArchive {
  const { client, bucket } = options;
  return {
    async versions() {
      const found: DigestVersion[] = [];
      let markers: { KeyMarker?: string; VersionIdMarker?: string } = {};
      for (;;) {
        const page = await client.send(
          new ListObjectVersionsCommand({
            Bucket: bucket,
            Prefix: options.prefix ?? "digests/",
            ...markers,
          }),
        );
        for (const v of page.Versions ?? []) {
          if (v.Key !== undefined && v.VersionId !== undefined) {
            found.push({ key: v.Key, versionId: v.VersionId });
          }
        }
        // A delete marker holds nothing, but names the key: it goes with its period too.
        for (const m of page.DeleteMarkers ?? []) {
          if (m.Key !== undefined && m.VersionId !== undefined) {
            found.push({ key: m.Key, versionId: m.VersionId });
          }
        }
        if (!page.IsTruncated) return found;
        markers = {
          ...(page.NextKeyMarker === undefined ? {} : { KeyMarker: page.NextKeyMarker }),
          ...(page.NextVersionIdMarker === undefined
            ? {}
            : { VersionIdMarker: page.NextVersionIdMarker }),
        };
      }
    },
    async read({ key, versionId }) {
      const object = await client.send(
        new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }),
      );
      return (await object.Body?.transformToString("utf8")) ?? "";
    },
    async remove({ key, versionId }) {
      await client.send(
        new DeleteObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }),
      );
    },
  };
}
