/**
 * The search module's errors: each has a stable `code` and a literal `name` (bundling renames
 * classes), and a message that names the parameter or setting at fault.
 */
export class SearchError extends Error {
  override readonly name: string = "SearchError";
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
