/**
 * Opaque, validated cursors. A cursor is `<payload>.<tag>`: the payload base64url JSON of
 * `[version, position]`, the tag a SHA-256 (HMAC when a key is given) over the payload, the
 * route, the channel and the filter. A cursor of another route, channel or filter, cut, edited
 * or made up is refused as a 400 naming `cursor`. Without a key the tag is a checksum, not a
 * signature: whoever reads the code can forge one, but a position only ever picks where a read
 * starts inside the channel's own key range (the key condition stays bound to the channel and
 * the route's prefix), so a forged cursor reads nothing another cursor could not.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { ApiCursorError } from "./errors.js";

const VERSION = 1;
/** Longer cursors are refused before any decoding. */
export const MAX_CURSOR_CHARS = 1024;
const SHAPE = /^[A-Za-z0-9_-]{1,1000}\.[A-Za-z0-9_-]{22}$/;

export interface CursorScope {
  route: string;
  channel: string;
  /** The filter the page was read with (`status=…`), "" when none. */
  filter: string;
}

export interface CursorCodec {
  encode(scope: CursorScope, position: unknown): string;
  /** The position, checked by `valid`; throws {@link ApiCursorError} on anything else. */
  decode<T>(scope: CursorScope, cursor: string, valid: (position: unknown) => position is T): T;
}

/** `key`: an optional secret that turns the checksum into a signature (same on every instance). */
export function cursorCodec(key?: string): CursorCodec {
  const tag = (scope: CursorScope, payload: string): Buffer => {
    const text = [payload, scope.route, scope.channel, scope.filter].join("\0");
    const digest =
      key === undefined
        ? createHash("sha256").update(`convoseg-api-cursor\0${text}`)
        : createHmac("sha256", key).update(text);
    return digest.digest().subarray(0, 16);
  };
  return {
    encode(scope, position) {
      const payload = Buffer.from(JSON.stringify([VERSION, position])).toString("base64url");
      return `${payload}.${tag(scope, payload).toString("base64url")}`;
    },
    decode(scope, cursor, valid) {
      if (cursor.length > MAX_CURSOR_CHARS || !SHAPE.test(cursor)) {
        throw new ApiCursorError("not a cursor this API issued");
      }
      const [payload, given] = cursor.split(".");
      // Compared as text: base64url's last character has spare bits, so two texts decode alike.
      const expected = Buffer.from(tag(scope, payload).toString("base64url"));
      const sent = Buffer.from(given);
      if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) {
        throw new ApiCursorError("not issued for this route, channel and filter");
      }
      let decoded: unknown;
      try {
        decoded = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
      } catch {
        throw new ApiCursorError("not a cursor this API issued");
      }
      if (!Array.isArray(decoded) || decoded.length !== 2 || decoded[0] !== VERSION) {
        throw new ApiCursorError("of another version: start again without it");
      }
      if (!valid(decoded[1])) throw new ApiCursorError("not a position this route reads from");
      return decoded[1];
    },
  };
}
