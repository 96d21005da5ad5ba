/**
 * The read API's routes, written once. The router (`handler.ts`) matches a request against them,
 * the OpenAPI document (`openapi.ts`) describes each, the deployed HTTP API (infra/api.ts) puts
 * each on API Gateway (a route missing there would be a 404 in AWS while `serve` answered it),
 * and `npm start -- serve` lists them. Every route is read-only: GET, and HEAD.
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
  for (const route of API_ROUTES) {
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
