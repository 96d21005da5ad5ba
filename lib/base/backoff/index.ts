/** Retry pacing shared by every AWS caller of convoseg: full-jitter exponential backoff. */
export { type Backoff, backoff, realSleep } from "./backoff.js";
