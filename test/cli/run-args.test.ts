import { EXTRACT_BOUNDS, readExtractConfig } from "convoseg/knowledge/config";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

const MAX_WINDOW_TURNS = EXTRACT_BOUNDS.windowTurns.max;
const ENV = { RESULTS_TABLE: "r", MESSAGES_TABLE: "m", EXTRACTOR: "offline" };

describe("run's bounds", () => {
  it("takes the window sizes the extract function takes, and no more", async () => {
    const largest = String(MAX_WINDOW_TURNS);
    expect(readExtractConfig({ ...ENV, WINDOW_SIZE: largest }).analyzer.windowSize).toBe(
      MAX_WINDOW_TURNS,
    );
    expect(() => readExtractConfig({ ...ENV, WINDOW_SIZE: String(MAX_WINDOW_TURNS + 1) })).toThrow(
      /WINDOW_SIZE/,
    );
    for (const size of [String(MAX_WINDOW_TURNS + 1), "99999999999"]) {
      const { code, stderr } = await runCli(["run", "--window-size", size], 0);
      expect(code).toBe(2);
      expect(stderr).toContain(
        `run: --window-size must be at most 1000, as the deployment's WINDOW_SIZE (got ${size})`,
      );
    }
  });
});
