import { compareIds, compareRefs } from "convoseg/identity";
import {
  DEFAULT_CHANNEL,
  InvalidMessageError,
  parseChatMessage,
  parseChatOperation,
  parseTimestamp,
} from "convoseg/messages";
import { describe, expect, it } from "vitest";

const fieldAtFault = (value: unknown): string => {
  try {
    parseChatMessage(value);
  } catch (error) {
    if (error instanceof InvalidMessageError) return error.field;
    throw error;
  }
  throw new Error("accepted");
};

describe("parseChatMessage", () => {
  it("reads a full message and keeps numeric ids as strings", () => {
    expect(
      parseChatMessage({ id: 7, ts: "2024-05-01T12:00:00Z", channel: "c", user: "u", text: "t" }),
    ).toEqual({ id: "7", ts: Date.UTC(2024, 4, 1, 12), channel: "c", user: "u", text: "t" });
  });

  it("defaults the channel and ignores unknown fields", () => {
    expect(parseChatMessage({ id: "a", ts: 5, system: false, reactions: [] })).toEqual({
      id: "a",
      ts: 5,
      channel: DEFAULT_CHANNEL,
    });
  });

  it("takes the default channel it is given for a line that names none", () => {
    expect(parseChatMessage({ id: "a", ts: 5 }, { defaultChannel: "rust" }).channel).toBe("rust");
    expect(
      parseChatMessage({ id: "a", ts: 5, channel: "c" }, { defaultChannel: "rust" }).channel,
    ).toBe("c");
  });

  it("reads the kind from kind, or from system: true; a person's message has none", () => {
    expect(parseChatMessage({ id: "a", ts: 5, system: true }).kind).toBe("system");
    expect(parseChatMessage({ id: "a", ts: 5, kind: "bot" }).kind).toBe("bot");
    expect(parseChatMessage({ id: "a", ts: 5, kind: "system", system: true }).kind).toBe("system");
    for (const line of [
      {},
      { kind: "user" },
      { kind: null },
      { system: false },
      { system: null },
    ]) {
      expect(parseChatMessage({ id: "a", ts: 5, ...line })).not.toHaveProperty("kind");
    }
  });

  it.each([
    [{ kind: "admin" }, "kind", /expected one of user, bot, system \(got "admin"\)/],
    [{ kind: 1 }, "kind", /expected one of user, bot, system/],
    [{ kind: "user", system: true }, "kind", /"user" contradicts system: true/],
    [{ system: "yes" }, "system", /expected true or false/],
  ])("refuses %j naming the field", (line, field, problem) => {
    const error = (() => {
      try {
        parseChatMessage({ id: "a", ts: 5, ...line });
      } catch (caught) {
        return caught as InvalidMessageError;
      }
    })();
    expect(error).toBeInstanceOf(InvalidMessageError);
    expect(error?.field).toBe(field);
    expect(error?.reason).toMatch(problem);
  });

  it("keeps a null user (IRC system lines)", () => {
    expect(parseChatMessage({ id: "a", ts: 5, user: null }).user).toBeNull();
  });

  it.each([
    [[], "message"],
    ["x", "message"],
    [null, "message"],
    [{ ts: 1 }, "id"],
    [{ id: "", ts: 1 }, "id"],
    [{ id: 1.5, ts: 1 }, "id"],
    [{ id: true, ts: 1 }, "id"],
    [{ id: "a" }, "ts"],
    [{ id: "a", ts: "yesterday" }, "ts"],
    [{ id: "a", ts: "2024-05-01T12:00:00" }, "ts"],
    [{ id: "a", ts: "2024-02-30T12:00:00Z" }, "ts"],
    [{ id: "a", ts: "2024-05-01T24:00:00Z" }, "ts"],
    [{ id: "a", ts: Number.NaN }, "ts"],
    [{ id: "a", ts: 1e20 }, "ts"],
    [{ id: "a", ts: 1, channel: "" }, "channel"],
    [{ id: "a", ts: 1, channel: 5 }, "channel"],
    [{ id: "a", ts: 1, channel: " padded" }, "channel"],
    [{ id: "a", ts: 1, channel: "a\u0007b" }, "channel"],
    [{ id: "a", ts: 1, user: 5 }, "user"],
    [{ id: "a", ts: 1, text: {} }, "text"],
  ])("rejects %j naming field %s", (value, field) => {
    expect(fieldAtFault(value)).toBe(field);
  });
});

describe("parseTimestamp", () => {
  it.each([
    ["2024-05-01T12:00:00Z", Date.UTC(2024, 4, 1, 12)],
    ["2024-05-01 12:00Z", Date.UTC(2024, 4, 1, 12)],
    ["2024-05-01T14:00:00.250+02:00", Date.UTC(2024, 4, 1, 12, 0, 0, 250)],
    ["2024-05-01T11:30:00.1234567-00:30", Date.UTC(2024, 4, 1, 12, 0, 0, 123)],
    ["1714564800000", 1714564800000],
    [1714564800000, 1714564800000],
    [0, 0],
    ["9999-12-31T23:59:59.999Z", Date.UTC(9999, 11, 31, 23, 59, 59, 999)],
    ["2024-05-01T12:00:00+23:59", Date.UTC(2024, 4, 1, 12) - (23 * 60 + 59) * 60_000],
  ])("reads %j", (value, ms) => {
    expect(parseTimestamp(value)).toBe(ms);
  });

  it.each([
    [-5, "outside the accepted window"],
    [Date.UTC(9999, 11, 31, 23, 59, 59, 999) + 1, "outside the accepted window"],
    [9007199254740991, "outside the accepted window"],
    ["1969-12-31T23:59:59Z", "outside the accepted window"],
    ["2024-05-01T12:00:00+99:99", "ISO-8601"],
    ["2024-05-01T12:00:00+24:00", "ISO-8601"],
    ["2024-05-01T12:00:00+02:60", "ISO-8601"],
  ])("rejects %j: %s", (value, problem) => {
    expect(() => parseTimestamp(value)).toThrow(problem);
  });
});

describe("message order", () => {
  it("orders by timestamp, then id in UTF-8 byte order", () => {
    const at = (id: string, ts: number) => ({ id, ts, channel: "c" });
    const sorted = [at("b", 2), at("a", 2), at("z", 1), at("\u{1F600}", 2), at("\uFFFF", 2)].sort(
      compareRefs,
    );
    expect(sorted.map((m) => m.id)).toEqual(["z", "a", "b", "\uFFFF", "\u{1F600}"]);
  });

  it("compares ids by code point, not UTF-16 unit", () => {
    // U+FFFF is one unit 0xFFFF; U+1F600 starts with 0xD83D. Bytes: EF BF BF < F0 9F 98 80.
    expect(compareIds("\uFFFF", "\u{1F600}")).toBeLessThan(0);
    expect(Buffer.compare(Buffer.from("\uFFFF"), Buffer.from("\u{1F600}"))).toBeLessThan(0);
    expect(compareIds("ab", "abc")).toBeLessThan(0);
    expect(compareIds("abc", "abc")).toBe(0);
  });
});

describe("parseChatOperation", () => {
  it("reads a line without op, or with op add, as a new message", () => {
    const line = { id: 7, ts: "2024-05-01T12:00:00Z", text: "hi" };
    const add = { op: "add", message: parseChatMessage(line) };
    expect(parseChatOperation(line)).toEqual(add);
    expect(parseChatOperation({ ...line, op: "add" })).toEqual(add);
    expect(parseChatOperation({ ...line, op: null })).toEqual(add);
  });

  it("reads an edit and a deletion, with the default channel and editedAt like ts", () => {
    expect(
      parseChatOperation({
        op: "edit",
        channel: "c1",
        id: 7,
        text: "fixed",
        editedAt: "2024-05-01T14:00:00+02:00",
      }),
    ).toEqual({
      op: "edit",
      channel: "c1",
      id: "7",
      text: "fixed",
      editedAt: Date.UTC(2024, 4, 1, 12),
    });
    expect(parseChatOperation({ op: "edit", id: "m", text: "", editedAt: 5 })).toEqual({
      op: "edit",
      channel: DEFAULT_CHANNEL,
      id: "m",
      text: "",
      editedAt: 5,
    });
    expect(
      parseChatOperation({ op: "delete", id: "m", text: "ignored" }, { defaultChannel: "d" }),
    ).toEqual({
      op: "delete",
      channel: "d",
      id: "m",
    });
  });

  it.each([
    [{ op: "remove", id: "m" }, "op", 'expected one of add, edit, delete (got "remove")'],
    [{ op: "delete" }, "id", "expected a non-empty string or an integer (got nothing)"],
    [{ op: "delete", id: "m", channel: 5 }, "channel", "expected a string (got 5)"],
    [{ op: "edit", id: "m", editedAt: 5 }, "text", "an edit needs the new text (got nothing)"],
    [
      { op: "edit", id: "m", text: null, editedAt: 5 },
      "text",
      "an edit needs the new text (got null)",
    ],
    [
      { op: "edit", id: "m", text: "x" },
      "editedAt",
      "expected an ISO-8601 date-time with a time zone or epoch milliseconds (got nothing)",
    ],
    [
      { op: "edit", id: "m", text: "\ud800", editedAt: 5 },
      "text",
      "not well-formed UTF-16: lone surrogate at index 0",
    ],
  ])("names the field at fault in %j", (value, field, reason) => {
    const error = (() => {
      try {
        parseChatOperation(value);
      } catch (e) {
        return e;
      }
    })() as InvalidMessageError;
    expect(error).toBeInstanceOf(InvalidMessageError);
    expect({ field: error.field, reason: error.reason }).toEqual({ field, reason });
  });
});
