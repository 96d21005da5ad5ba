/**
 * The export readers' error family: a stable `code` and a literal `name` each (bundling renames
 * classes). A refusal of malformed input names the file, the entry or line, and the field.
 */
export class ExportError extends Error {
  override readonly name: string = "ExportError";
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * An input that cannot be read as the format it is (or was detected as): not JSON, a required
 * file missing, a required field of the wrong type. `file` is the path (a ZIP entry as
 * `zip!entry`), `at` the entry (`messages[3]`, `channels.json[0]`) or `line 12`, `field` the field.
 */
export class ExportFormatError extends ExportError {
  override readonly name: string = "ExportFormatError";
  constructor(
    readonly file: string,
    readonly at: string,
    readonly field: string,
    readonly reason: string,
  ) {
    super("EXPORT_MALFORMED", `${file}: ${at}: ${field}: ${reason}`);
  }
}

/** An input path that is no export convoseg reads (nothing there, no format recognised). */
export class ExportInputError extends ExportError {
  override readonly name: string = "ExportInputError";
  constructor(
    readonly input: string,
    reason: string,
  ) {
    super("EXPORT_UNREADABLE_INPUT", `${input}: ${reason}`);
  }
}

/** A `timezone` option that is no IANA zone this Node knows. */
export class ExportTimezoneError extends ExportError {
  override readonly name: string = "ExportTimezoneError";
  constructor(readonly timezone: string) {
    super(
      "EXPORT_UNKNOWN_TIMEZONE",
      `timezone: ${JSON.stringify(timezone)} is no IANA time zone (use a name such as Europe/Paris or UTC)`,
    );
  }
}
