/**
 * Whether `value` is an integer above zero: the one rule of every count and size setting (a
 * segment's `maxSize`, a window's size, an adapter's attempts). A predicate, not a throw, so that
 * each module reports a failure in its own words and error family.
 */
export function isPositiveInteger(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) > 0;
}
