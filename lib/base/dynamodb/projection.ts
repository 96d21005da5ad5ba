/**
 * A read of only `attributes`, named through placeholders (`#a0`, `#a1`, …): names such as `ts`
 * or `thread` may be reserved words. Spread into a Query, Scan or GetItem; a caller's own
 * placeholders go beside `ExpressionAttributeNames`.
 */
export function projectionOf(attributes: readonly string[]): {
  ProjectionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
} {
  return {
    ProjectionExpression: attributes.map((_, i) => `#a${i}`).join(", "),
    ExpressionAttributeNames: Object.fromEntries(attributes.map((name, i) => [`#a${i}`, name])),
  };
}
