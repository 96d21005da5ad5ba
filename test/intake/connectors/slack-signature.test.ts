import { ConnectorError, verifySlackRequest } from "convoseg/connectors";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { envelope, NOW, NOW_SECONDS, plain, SECRET, signed } from "./slack-fixtures.js";

const verify = (request: { headers: Record<string, string>; body: Buffer }, now = NOW) =>
  verifySlackRequest({
    headers: request.headers,
    rawBody: request.body,
    signingSecret: SECRET,
    now,
  });

/** The error a request is refused with: code and field. */
function refusal(run: () => void): { code: string; field: string; name: string } | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectorError);
    const { code, field, name } = error as ConnectorError;
    return { code, field, name };
  }
}

describe("Slack request signatures", () => {
  it("takes a request Slack signed now, in any header case", () => {
    const request = signed(envelope(plain()));
    expect(() => verify(request)).not.toThrow();
    const upper = Object.fromEntries(
      Object.entries(request.headers).map(([k, v]) => [
        k.replace(/\b\w/g, (c) => c.toUpperCase()),
        v,
      ]),
    );
    expect(() => verify({ ...request, headers: upper })).not.toThrow();
  });

  it("checks Slack's documented example", () => {
    // api.slack.com/authentication/verifying-requests-from-slack: its secret, timestamp and body.
    const body =
      "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    const headers = {
      "x-slack-request-timestamp": "1531420618",
      "x-slack-signature": "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
    };
    expect(() =>
      verifySlackRequest({
        headers,
        rawBody: Buffer.from(body),
        signingSecret: "8f742231b10e8888abcd99yyyzzz85a5",
        now: 1531420618_000,
      }),
    ).not.toThrow();
  });

  it("refuses a signature made with another secret", () => {
    expect(refusal(() => verify(signed(envelope(plain()), { secret: "another" })))).toEqual({
      code: "CONNECTOR_BAD_SIGNATURE",
      field: "X-Slack-Signature",
      name: "ConnectorError",
    });
  });

  it("refuses a timestamp more than five minutes from now, either way, and takes one at five", () => {
    for (const offset of [301, -301, 86_400]) {
      const request = signed(envelope(plain()), { timestamp: NOW_SECONDS + offset });
      expect(refusal(() => verify(request))?.code).toBe("CONNECTOR_STALE_REQUEST");
    }
    for (const offset of [300, -300]) {
      expect(() =>
        verify(signed(envelope(plain()), { timestamp: NOW_SECONDS + offset })),
      ).not.toThrow();
    }
  });

  it("refuses a replay: a captured request sent again later than five minutes", () => {
    const captured = signed(envelope(plain()));
    expect(() => verify(captured)).not.toThrow();
    expect(refusal(() => verify(captured, NOW + 5 * 60_000 + 1000))?.code).toBe(
      "CONNECTOR_STALE_REQUEST",
    );
  });

  it("refuses a signature moved to another timestamp", () => {
    const request = signed(envelope(plain()));
    const moved = { ...request.headers, "x-slack-request-timestamp": String(NOW_SECONDS + 1) };
    expect(refusal(() => verify({ ...request, headers: moved }))?.code).toBe(
      "CONNECTOR_BAD_SIGNATURE",
    );
  });

  it.each([
    [
      "x-slack-request-timestamp",
      undefined,
      "CONNECTOR_HEADER_MISSING",
      "X-Slack-Request-Timestamp",
    ],
    [
      "x-slack-request-timestamp",
      "soon",
      "CONNECTOR_HEADER_MALFORMED",
      "X-Slack-Request-Timestamp",
    ],
    ["x-slack-request-timestamp", "-5", "CONNECTOR_HEADER_MALFORMED", "X-Slack-Request-Timestamp"],
    ["x-slack-signature", undefined, "CONNECTOR_HEADER_MISSING", "X-Slack-Signature"],
    ["x-slack-signature", "v1=abc", "CONNECTOR_HEADER_MALFORMED", "X-Slack-Signature"],
    [
      "x-slack-signature",
      `v0=${"A".repeat(64)}`,
      "CONNECTOR_HEADER_MALFORMED",
      "X-Slack-Signature",
    ],
    [
      "x-slack-signature",
      `v0=${"a".repeat(63)}`,
      "CONNECTOR_HEADER_MALFORMED",
      "X-Slack-Signature",
    ],
  ])("refuses %s = %j by name (%s)", (name, value, code, field) => {
    const request = signed(envelope(plain()));
    const headers: Record<string, string> = { ...request.headers };
    if (value === undefined) delete headers[name];
    else headers[name] = value;
    expect(refusal(() => verify({ ...request, headers }))).toEqual({
      code,
      field,
      name: "ConnectorError",
    });
  });

  it("refuses any body altered by one byte", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 200 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (text, at, delta) => {
          const request = signed(envelope(plain({ text })));
          const altered = Buffer.from(request.body);
          const i = at % altered.length;
          altered[i] = (altered[i] + delta) % 256;
          expect(refusal(() => verify({ ...request, body: altered }))?.code).toBe(
            "CONNECTOR_BAD_SIGNATURE",
          );
        },
      ),
    );
  });

  it("takes any body, byte for byte, as it was signed", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(() => verify(signed(Buffer.from(bytes)))).not.toThrow();
      }),
    );
  });
});
