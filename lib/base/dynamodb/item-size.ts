/**
 * The size DynamoDB counts for an item, by its published rules: attribute names and strings in
 * UTF-8 bytes, binary values at their length, numbers at one byte per two significant digits plus
 * one, null and booleans at one byte, sets at the sum of their elements, and lists and maps at 3
 * bytes plus one byte and the size of each element (map keys counted like attribute names).
 * Capacity units and the 400 KB item limit are both reckoned from it.
 */
export function itemSize(item: Record<string, unknown>): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) {
    if (value !== undefined) size += Buffer.byteLength(name) + valueSize(value);
  }
  return size;
}

/** DynamoDB's item limit, and the units writes and strongly consistent reads are billed in. */
export const MAX_ITEM_BYTES = 400 * 1024;
export const WRITE_UNIT_BYTES = 1024;
export const READ_UNIT_BYTES = 4096;

export function valueSize(value: unknown): number {
  if (typeof value === "string") return Buffer.byteLength(value);
  if (typeof value === "number" || typeof value === "bigint") return numberSize(value);
  if (typeof value === "boolean" || value === null) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) {
    let size = 0;
    for (const element of value) size += valueSize(element);
    return size;
  }
  if (Array.isArray(value)) {
    return value.reduce((sum: number, element) => sum + 1 + valueSize(element), 3);
  }
  if (typeof value === "object") {
    let size = 3;
    for (const [name, element] of Object.entries(value as Record<string, unknown>)) {
      if (element !== undefined) size += 1 + Buffer.byteLength(name) + valueSize(element);
    }
    return size;
  }
  return 1;
}

/** One byte per two significant digits (leading and trailing zeros trimmed), plus one. */
function numberSize(value: number | bigint | string): number {
  const text = typeof value === "number" ? plainDigits(value) : value.toString();
  const digits = text.replace(/[-+.]/g, "").replace(/^0+/, "").replace(/0+$/, "");
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}

/** A value in DynamoDB's wire form (`{S: "x"}`, `{N: "12"}`, …). */
export type WireValue = {
  S?: string;
  N?: string;
  B?: Uint8Array;
  BOOL?: boolean;
  NULL?: boolean;
  L?: WireValue[];
  M?: Record<string, WireValue>;
  SS?: string[];
  NS?: string[];
  BS?: Uint8Array[];
};

/** {@link itemSize} of an item in wire form, as requests and `ALL_OLD` answers carry it. */
export function wireItemSize(item: Record<string, WireValue>): number {
  let size = 0;
  for (const [name, value] of Object.entries(item))
    size += Buffer.byteLength(name) + wireSize(value);
  return size;
}

function wireSize(value: WireValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return numberSize(value.N);
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.L !== undefined) return value.L.reduce((sum, v) => sum + 1 + wireSize(v), 3);
  if (value.M !== undefined) {
    return Object.entries(value.M).reduce(
      (sum, [name, v]) => sum + 1 + Buffer.byteLength(name) + wireSize(v),
      3,
    );
  }
  if (value.SS !== undefined) return value.SS.reduce((sum, v) => sum + Buffer.byteLength(v), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, v) => sum + numberSize(v), 0);
  if (value.BS !== undefined) return value.BS.reduce((sum, v) => sum + v.byteLength, 0);
  return 1;
}

/** The decimal digits of a finite number without exponent notation. */
function plainDigits(value: number): string {
  const text = String(Math.abs(value));
  if (!text.includes("e")) return text;
  const [mantissa, exponent] = text.split("e");
  const digits = mantissa.replace(".", "");
  return Number(exponent) > 0 ? digits.padEnd(Number(exponent) + 1, "0") : digits;
}
