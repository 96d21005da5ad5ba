/**
 * The read API's routes, written once. The router (`handler.ts`) matches a request against them,
 * the OpenAPI document (`openapi.ts`) describes each, the deployed HTTP API (infra/api.ts) puts
 * each on API Gateway (a route missing there would be a 404 in AWS while `serve` answered it),
 * and `npm start -- serve` lists them. Every route is read-only: GET, and HEAD; the write routes
 * (`API_WRITE_ROUTES`, POST) are apart, so that a deployment serves them from a function of
 * their own, with the one write grant they need.
 */
export const API_ROUTES = [
  "/channels",
  "/channels/{c}/topics",
  "/channels/{c}/questions",
  "/channels/{c}/faq",
  "/channels/{c}/digest",
  "/channels/{c}/stats",
  "/channels/{c}/segments/{id}",
  "/search",
  "/openapi.json",
] as const;

export type ApiRoute = (typeof API_ROUTES)[number];

/** The routes that write: a person's correction of a question. */
export const API_WRITE_ROUTES = ["/channels/{c}/questions/{id}/correction"] as const;

export type ApiWriteRoute = (typeof API_WRITE_ROUTES)[number];

/** The method every write route answers. */
export const API_WRITE_METHODS = ["POST"] as const;

/** The methods every route answers. */
export const API_METHODS = ["GET", "HEAD"] as const;

/** A route's `{name}` segments as matched (percent-decoded, as `pathSegments` gives them). */
export type RouteParameters = Readonly<Record<string, string>>;

/**
 * The route `segments` (a path split at `/`, as `pathSegments` gives it) is an instance of, with
 * its parameters: each `{name}` segment of a route matches any one segment, the others only
 * themselves. Undefined when none matches.
 */
export function matchRoute(
  segments: readonly string[],
): { route: ApiRoute; parameters: RouteParameters } | undefined {
  return matchOf(API_ROUTES, segments);
}

/** As {@link matchRoute}, of the write routes. */
export function matchWriteRoute(
  segments: readonly string[],
): { route: ApiWriteRoute; parameters: RouteParameters } | undefined {
  return matchOf(API_WRITE_ROUTES, segments);
}

function matchOf<R extends string>(
  routes: readonly R[],
  segments: readonly string[],
): { route: R; parameters: RouteParameters } | undefined {
  for (const route of routes) {
    const pattern = route.slice(1).split("/");
    if (pattern.length !== segments.length) continue;
    const parameters: Record<string, string> = {};
    const matches = pattern.every((part, i) => {
      const name = /^\{(\w+)\}$/.exec(part)?.[1];
      if (name === undefined) return part === segments[i];
      parameters[name] = segments[i];
      return true;
    });
    if (matches) return { route, parameters };
  }
  return undefined;
}
