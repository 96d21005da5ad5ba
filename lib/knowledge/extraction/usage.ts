import type { LLMUsage, WindowUsage } from "./types.js";

/** No call yet: the start of every count of calls and tokens. */
export const NO_CALLS: Readonly<WindowUsage> = Object.freeze({
  calls: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

/** Counts one answered call and its tokens into `total`. */
export function addCall(total: WindowUsage, call: LLMUsage): void {
  total.calls++;
  total.inputTokens += call.inputTokens;
  total.outputTokens += call.outputTokens;
  total.cacheReadTokens += call.cacheReadTokens;
  total.cacheWriteTokens += call.cacheWriteTokens;
}
