/** The daily token budgets as extraction and the ask summaries both read them. */
import { readExtractConfig, readTokenBudgets } from "convoseg/knowledge/config";
import { describe, expect, it } from "vitest";

const EXTRACT = { RESULTS_TABLE: "results", MESSAGES_TABLE: "messages", EXTRACTOR: "offline" };

describe("readTokenBudgets", () => {
  it("reads the budgets as extraction does, a channel's share by default", () => {
    for (const env of [
      { DAILY_TOKEN_BUDGET: "200000" },
      { DAILY_TOKEN_BUDGET: "200000", CHANNEL_TOKEN_BUDGET: "5000" },
      {},
    ]) {
      const config = readExtractConfig({ ...EXTRACT, ...env });
      expect(readTokenBudgets(env)).toEqual({
        daily: config.dailyTokenBudget,
        perChannel: config.channelTokenBudget,
      });
    }
    expect(readTokenBudgets({ DAILY_TOKEN_BUDGET: "200000" }).perChannel).toBeLessThan(200000);
  });

  it("names every variable out of bounds", () => {
    expect(() =>
      readTokenBudgets({ DAILY_TOKEN_BUDGET: "999", CHANNEL_TOKEN_BUDGET: "x" }),
    ).toThrow(
      /DAILY_TOKEN_BUDGET must be an integer from 1000 .*; CHANNEL_TOKEN_BUDGET must be an integer/,
    );
  });
});
