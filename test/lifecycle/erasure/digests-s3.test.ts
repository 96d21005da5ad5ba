/**
 * The digest archive over the SDK's S3 client against a scripted versioned bucket on 127.0.0.1
 * (path-style, static test credentials): versions listed page by page (delete markers too),
 * read by version id, removed by version id; an erasure through it leaves no version of a
 * period that cites the person.
 */
import { S3Client } from "@aws-sdk/client-s3";
import { s3DigestArchive } from "convoseg/erasure";
import { afterEach, describe, expect, it } from "vitest";
import { type RawServer, startRawServer } from "../../support/raw-servers.js";

let server: RawServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Stored {
  key: string;
  versionId: string;
  body: string;
  marker?: boolean;
}

/** A versioned bucket `b` that lists at most two entries a page, as S3 may truncate. */
async function versionedBucket(stored: Stored[]) {
  const requests: string[] = [];
  server = await startRawServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    requests.push(`${request.method} ${url.pathname}${url.search}`);
    const key = decodeURIComponent(url.pathname.replace(/^\/b\/?/, ""));
    const versionId = url.searchParams.get("versionId");
    if (request.method === "GET" && url.searchParams.has("versions")) {
      const prefix = url.searchParams.get("prefix") ?? "";
      const matching = stored.filter((s) => s.key.startsWith(prefix));
      const after = url.searchParams.get("key-marker");
      const afterVersion = url.searchParams.get("version-id-marker");
      const start =
        after === null
          ? 0
          : matching.findIndex((s) => s.key === after && s.versionId === afterVersion) + 1;
      const page = matching.slice(start, start + 2);
      const truncated = start + 2 < matching.length;
      const last = page.at(-1);
      const entry = (s: Stored) =>
        s.marker
          ? `<DeleteMarker><Key>${s.key}</Key><VersionId>${s.versionId}</VersionId><IsLatest>true</IsLatest></DeleteMarker>`
          : `<Version><Key>${s.key}</Key><VersionId>${s.versionId}</VersionId><IsLatest>false</IsLatest><Size>${s.body.length}</Size></Version>`;
      response
        .writeHead(200, { "content-type": "application/xml" })
        .end(
          `<?xml version="1.0" encoding="UTF-8"?><ListVersionsResult><Name>b</Name><Prefix>${prefix}</Prefix><IsTruncated>${truncated}</IsTruncated>${
            truncated && last
              ? `<NextKeyMarker>${last.key}</NextKeyMarker><NextVersionIdMarker>${last.versionId}</NextVersionIdMarker>`
              : ""
          }${page.map(entry).join("")}</ListVersionsResult>`,
        );
      return;
    }
    const found = stored.find((s) => s.key === key && s.versionId === versionId);
    if (request.method === "GET") {
      if (found === undefined) {
        response
          .writeHead(404, { "content-type": "application/xml" })
          .end("<Error><Code>NoSuchVersion</Code></Error>");
        return;
      }
      response.writeHead(200, { "content-type": "application/json" }).end(found.body);
      return;
    }
    if (request.method === "DELETE") {
      if (found !== undefined) stored.splice(stored.indexOf(found), 1);
      response.writeHead(204).end();
      return;
    }
    response.writeHead(405).end();
  });
  const client = new S3Client({
    region: "eu-west-1",
    endpoint: server.url,
    forcePathStyle: true,
    credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
  });
  return { archive: s3DigestArchive({ client, bucket: "b" }), requests };
}

describe("s3DigestArchive", () => {
  it("lists every version under digests/ across pages, reads and removes each by its id", async () => {
    const stored: Stored[] = [
      { key: "digests/2025-01-06/digest.json", versionId: "v1", body: '{"a":1}' },
      { key: "digests/2025-01-06/digest.json", versionId: "v2", body: '{"a":2}' },
      { key: "digests/2025-01-06/digest.md", versionId: "v3", body: "# a" },
      { key: "digests/2025-01-13/digest.json", versionId: "v4", body: "", marker: true },
      { key: "other/x", versionId: "v5", body: "kept" },
    ];
    const { archive, requests } = await versionedBucket(stored);
    const versions = await archive.versions();
    expect(versions).toEqual([
      { key: "digests/2025-01-06/digest.json", versionId: "v1" },
      { key: "digests/2025-01-06/digest.json", versionId: "v2" },
      { key: "digests/2025-01-06/digest.md", versionId: "v3" },
      { key: "digests/2025-01-13/digest.json", versionId: "v4" },
    ]);
    // Two pages: the second starts after the first's markers.
    expect(requests.filter((r) => r.includes("versions"))).toHaveLength(2);
    expect(await archive.read({ key: "digests/2025-01-06/digest.json", versionId: "v2" })).toBe(
      '{"a":2}',
    );
    await archive.remove({ key: "digests/2025-01-06/digest.json", versionId: "v1" });
    expect(requests.at(-1)).toBe(
      "DELETE /b/digests/2025-01-06/digest.json?versionId=v1&x-id=DeleteObject",
    );
    expect(stored.map((s) => s.versionId)).toEqual(["v2", "v3", "v4", "v5"]);
  });
});
