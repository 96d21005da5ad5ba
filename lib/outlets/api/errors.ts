/**
 * The read API's error family: each with a stable `code`, a literal `name` and the HTTP status it
 * answers with. Messages name the parameter at fault and never echo what was sent: a path or a
 * query string may carry anything, message text included.
 */
export class ApiError extends Error {
  override readonly name: string = "ApiError";
  readonly code: string;
  readonly status: number;
  /** The path or query parameter at fault, when one is. */
  readonly parameter: string | undefined;

  constructor(
    code: string,
    status: number,
    message: string,
    options?: { parameter?: string; cause?: unknown },
  ) {
    super(message, options);
    this.code = code;
    this.status = status;
    this.parameter = options?.parameter;
  }
}

/** A path or query parameter is missing, repeated, too long or malformed (400). */
export class ApiParameterError extends ApiError {
  override readonly name: string = "ApiParameterError";
  constructor(parameter: string, problem: string) {
    super("API_BAD_PARAMETER", 400, `${parameter}: ${problem}`, { parameter });
  }
}

/** A `cursor` this API did not issue for this route, channel and filter (400, never a scan). */
export class ApiCursorError extends ApiError {
  override readonly name: string = "ApiCursorError";
  constructor(problem: string) {
    super("API_BAD_CURSOR", 400, `cursor: ${problem}`, { parameter: "cursor" });
  }
}

/** No route has this path (404), or the channel has no such segment. */
export class ApiNotFoundError extends ApiError {
  override readonly name: string = "ApiNotFoundError";
  constructor(what: string) {
    super("API_NOT_FOUND", 404, `${what} not found`);
  }
}

/** The path exists; the method does not (405). `allowed`: the route's methods. */
export class ApiMethodError extends ApiError {
  override readonly name: string = "ApiMethodError";
  constructor(readonly allowed: readonly string[] = ["GET", "HEAD"]) {
    super(
      "API_METHOD_NOT_ALLOWED",
      405,
      allowed.includes("GET") ? "only GET is served" : `only ${allowed.join(", ")} is served`,
    );
  }
}

/**
 * A request body that is not what the route takes (400): not JSON, too large, or a field
 * missing, unknown or malformed; `parameter` names the field (`body.action`).
 */
export class ApiBodyError extends ApiError {
  override readonly name: string = "ApiBodyError";
  constructor(field: string, problem: string) {
    super("API_BAD_BODY", 400, `${field}: ${problem}`, { parameter: field });
  }
}

/** A route whose source the API was given none of (501): the questions index. */
export class ApiUnavailableError extends ApiError {
  override readonly name: string = "ApiUnavailableError";
  constructor(route: string) {
    super("API_UNAVAILABLE", 501, `${route} is not served by this deployment yet`);
  }
}
