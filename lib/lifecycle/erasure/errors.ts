/** The erasure module's errors: one base class, a stable `code` per failure. */
export class ErasureError extends Error {
  override readonly name: string = "ErasureError";
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const SHOWN_CHANNELS = 20;

/**
 * An erasure by display name alone that says no scope: the name is no one person's (every
 * community has its "sam"), so the channels it would touch are named (`byChannel`: messages per
 * channel) and nothing is erased until the request names its channels or says all of them.
 */
export class ErasureScopeError extends ErasureError {
  override readonly name: string = "ErasureScopeError";
  constructor(readonly byChannel: Readonly<Record<string, number>>) {
    const channels = Object.keys(byChannel);
    // Channel ids are the platforms': quoted, and a long list cut.
    const named = channels.slice(0, SHOWN_CHANNELS).map((c) => JSON.stringify(c));
    if (channels.length > SHOWN_CHANNELS) named.push(`${channels.length - SHOWN_CHANNELS} more`);
    super(
      "ERASURE_SCOPE_UNSAID",
      `erasure: channels: a display name alone matches everyone of that name in every channel: it would touch ${channels.length} channel${channels.length === 1 ? "" : "s"} (${named.join(", ")}); name the person's channels, or say all channels`,
    );
  }
}

/** A request whose field is at fault (`field` names it). */
export class ErasureRequestError extends ErasureError {
  override readonly name: string = "ErasureRequestError";
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super("ERASURE_INVALID_REQUEST", `erasure: ${field}: ${reason}`);
  }
}
