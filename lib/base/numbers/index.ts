/** Number rules that modules validating their settings share; imports nothing. */
export { isPositiveInteger } from "./positive-integer.js";
