/**
 * The flags `topics`, `questions` and `faq` share (`channelPlace`): one channel, a workspace or a
 * table, a limit; each mistake named.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { channelPlace } from "../../cli/shared/channel-knowledge.js";

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("channelPlace", () => {
  it("reads a workspace, a table, or $RESULTS_TABLE, and a limit", () => {
    vi.stubEnv("RESULTS_TABLE", undefined);
    expect(channelPlace({ workspace: "/tmp/ws", limit: "3" }, ["help"])).toEqual({
      channel: "help",
      table: undefined,
      workspace: "/tmp/ws",
      limit: 3,
    });
    expect(channelPlace({ table: "Results" }, ["help"])).toMatchObject({
      table: "Results",
      workspace: undefined,
      limit: undefined,
    });
    vi.stubEnv("RESULTS_TABLE", "FromEnv");
    expect(channelPlace({}, ["help"])).toMatchObject({ table: "FromEnv", workspace: undefined });
    // A workspace named wins over the environment's table.
    expect(channelPlace({ workspace: "/tmp/ws" }, ["help"]).table).toBeUndefined();
  });

  it("names each mistake", () => {
    expect(() => channelPlace({ workspace: "w", table: "t" }, ["help"])).toThrow(
      "--workspace and --table name two places: give one",
    );
    expect(() => channelPlace({}, [])).toThrow("expected one channel id");
    expect(() => channelPlace({}, ["a", "b"])).toThrow("expected one channel id");
    for (const limit of ["0", "-1", "2.5", "many"]) {
      expect(() => channelPlace({ limit }, ["help"])).toThrow(
        `--limit must be a positive integer (got ${JSON.stringify(limit)})`,
      );
    }
  });
});
