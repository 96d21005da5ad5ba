/**
 * The OpenAPI document is generated from the response schemas: the committed copy must be what
 * the code generates (regenerate: `UPDATE_OPENAPI=1 npx vitest run test/outlets/api/openapi.test.ts`,
 * then `npx biome check --write docs/contracts/openapi.json`: compared as JSON, not as text),
 * and every body the handler sends must be what those schemas say.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { apiBodies, apiHandler, memoryApiSources, openApiDocument } from "convoseg/api";
import type { Digest } from "convoseg/digest";
import { describe, expect, expectTypeOf, it } from "vitest";
import { digest } from "../digest/schedule-fixtures.js";
import { get, result, support } from "./fixtures.js";

const FILE = new URL("../../../docs/contracts/openapi.json", import.meta.url);

describe("docs/contracts/openapi.json", () => {
  it("is what lib/outlets/api generates", () => {
    const generated = `${JSON.stringify(openApiDocument(), null, 2)}\n`;
    if (process.env.UPDATE_OPENAPI === "1") writeFileSync(FILE, generated);
    expect(
      JSON.parse(readFileSync(FILE, "utf8")),
      "stale: UPDATE_OPENAPI=1 npx vitest run test/outlets/api/openapi.test.ts",
    ).toEqual(JSON.parse(generated));
  });

  it("names a component for every body, and every path's responses refer to components", () => {
    const document = openApiDocument() as {
      paths: Record<string, { get: { responses: Record<string, unknown> } }>;
      components: { schemas: Record<string, unknown> };
    };
    const refs = JSON.stringify(document.paths).match(/#\/components\/schemas\/\w+/g) ?? [];
    for (const ref of refs)
      expect(document.components.schemas).toHaveProperty(ref.split("/").pop() as string);
    expect(Object.keys(document.paths)).toEqual([
      "/channels",
      "/channels/{c}/topics",
      "/channels/{c}/questions",
      "/channels/{c}/faq",
      "/channels/{c}/digest",
      "/channels/{c}/stats",
      "/channels/{c}/segments/{id}",
      "/search",
      "/openapi.json",
      "/channels/{c}/questions/{id}/correction",
    ]);
  });

  it("is served at /openapi.json, with HEAD, and says how each route is reached and refused", async () => {
    const handle = apiHandler(memoryApiSources({}));
    const get = (rawQuery = "") =>
      handle({ method: "GET", rawPath: "/openapi.json", rawQuery, headers: {} });
    const served = await get();
    expect(served.status).toBe(200);
    expect(JSON.parse(served.body)).toEqual(openApiDocument());
    expect((await get("x=1")).status).toBe(400);
    const again = await handle({
      method: "GET",
      rawPath: "/openapi.json",
      rawQuery: "",
      headers: { "if-none-match": served.headers.etag ?? served.headers.ETag },
    });
    expect(again.status).toBe(304);
    const document = openApiDocument() as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      servers: unknown[];
      components: { securitySchemes: Record<string, unknown> };
    };
    for (const [route, methods] of Object.entries(document.paths)) {
      // The write routes are POST alone; every other is read, with GET and HEAD.
      const write = route.endsWith("/correction");
      expect(Object.keys(methods), route).toEqual(write ? ["post"] : ["get", "head"]);
      expect(methods[write ? "post" : "get"].responses, route).toHaveProperty("405");
    }
    expect(document.servers.length).toBe(2);
    expect(Object.keys(document.components.securitySchemes)).toEqual(["sigv4", "jwt"]);
  });
});

describe("the digest's schema", () => {
  it("is lib/outlets/digest's Digest, field for field (checked by tsc)", () => {
    expectTypeOf<apiBodies.DigestBody>().toEqualTypeOf<Digest>();
  });
});

describe("the handler's bodies", () => {
  const handle = apiHandler(
    memoryApiSources({
      channels: ["help"],
      supports: [support("help", "deploys", 1), support("help", "Deploys", 2)],
      results: [result("help", "s1")],
      questions: {
        questions: async () => ({
          items: [
            {
              question: "why?",
              askedId: "m1",
              askedTs: 1,
              status: "unanswered",
              answerIds: [],
              segmentId: "s1",
            },
          ],
          cursor: null,
        }),
      },
      // A source's extra fields are dropped: the strict parse below fails if one gets through.
      digest: { digest: async () => ({ ...digest(), internal: "x" }) },
    }),
  );
  const cases = [
    ["/channels", apiBodies.ChannelsPage],
    ["/channels/help/topics", apiBodies.TopicsPage],
    ["/channels/help/questions", apiBodies.QuestionsPage],
    ["/channels/help/digest?since=3d", apiBodies.DigestBody],
    ["/channels/help/segments/s1", apiBodies.Segment],
    ["/channels/help/segments/none", apiBodies.ErrorBody],
    ["/channels/help/topics?limit=x", apiBodies.ErrorBody],
  ] as const;
  it.each(cases)("%s is what its schema says, field for field", async (path, schema) => {
    const sent = JSON.parse((await handle(get(path))).body);
    expect(schema.strict().parse(sent)).toEqual(sent);
  });
});
