/**
 * Windows of a transcript. The slices of turns an LLM is shown, as the original Go `fork` package
 * cuts them (`docs/specs/windows.md`), plus the sliding windows of the original Kotlin analyzer.
 * Pure; a window is a new array of the input's own turn objects, in input order.
 */
export {
  overlapProblem,
  plainWindowCount,
  type ReplyTarget,
  slidingWindowSpans,
  slidingWindows,
} from "./sliding.js";
export {
  splitNonPrefixWindows,
  splitPrefixWindows,
  splitWindows,
  type Turn,
} from "./turn-windows.js";
