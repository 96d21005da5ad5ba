/**
 * The read API's one list of routes (`API_ROUTES`): the handler serves exactly these, each by
 * its own name, and the OpenAPI document describes exactly these, in order. The deployed HTTP
 * API puts exactly these on API Gateway (test/infra/api-stack.emulator.test.ts).
 */
import {
  API_METHODS,
  API_ROUTES,
  API_WRITE_ROUTES,
  apiHandler,
  matchRoute,
  matchWriteRoute,
  memoryApiSources,
  openApiDocument,
} from "convoseg/api";
import { describe, expect, it } from "vitest";

/** A path that is an instance of `route`: each `{name}` segment becomes `name`. */
const instanceOf = (route: string) => route.replace(/\{(\w+)\}/g, "$1");

const handle = apiHandler(memoryApiSources({ channels: ["c"] }));
const served = async (path: string, method = "GET") =>
  (await handle({ method, rawPath: path, rawQuery: "", headers: {} })).route;

describe("the routes", () => {
  it("are each served by the handler, under their own name, for every method", async () => {
    for (const route of API_ROUTES) {
      for (const method of API_METHODS) {
        expect(await served(instanceOf(route), method), `${method} ${route}`).toBe(
          `${method} ${route}`,
        );
      }
    }
  });

  it("are the only paths the handler serves", async () => {
    for (const path of [
      "/",
      "/channel",
      "/channels/c",
      "/channels/c/topics/x",
      "/channels/c/messages",
      "/topics",
      "/channels/c/segments",
    ]) {
      expect(await served(path), path).toBe("unmatched");
    }
  });

  it("match a path segment by segment, naming each parameter", () => {
    expect(matchRoute(["channels", "help", "segments", "s1"])).toEqual({
      route: "/channels/{c}/segments/{id}",
      parameters: { c: "help", id: "s1" },
    });
    expect(matchRoute(["channels"])).toEqual({ route: "/channels", parameters: {} });
    expect(matchRoute(["channels", "help", "segment", "s1"])).toBeUndefined();
  });

  it("are the OpenAPI document's paths, in order, the write routes last", () => {
    const { paths } = openApiDocument() as { paths: Record<string, unknown> };
    expect(Object.keys(paths)).toEqual([...API_ROUTES, ...API_WRITE_ROUTES]);
  });

  it("tell a write route from the read routes", () => {
    const segments = ["channels", "help", "questions", "q1", "correction"];
    expect(matchRoute(segments)).toBeUndefined();
    expect(matchWriteRoute(segments)).toEqual({
      route: "/channels/{c}/questions/{id}/correction",
      parameters: { c: "help", id: "q1" },
    });
    expect(matchWriteRoute(["channels", "help", "questions"])).toBeUndefined();
  });
});
