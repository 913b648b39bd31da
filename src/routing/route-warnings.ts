// The warnings an admin's route write answers (PUT /admin/model-routes/:name; issue 41): the route's upstream is
// asked for its models (upstream-models.ts) with a short timeout, and what it says that would fail the route's calls
// is told at once, while the route is saved either way: a model it does not list, a key it refuses, or no answer at
// all. An upstream that offers no model list (404, 405) gives no warning: there is nothing to say from it.
import { z } from "zod";
import { quoted } from "../quote";
import type { ModelRoute } from "./model-routes";
import { isHttpRoute, listUpstreamModels, ROUTE_WRITE_CHECK_TIMEOUT_MS, shownUrl, someModels } from "./upstream-models";

export const ROUTE_WARNING_CODES = ["model_not_listed", "key_refused", "model_not_checked"] as const;

export const RouteWarning = z.object({
  code: z.enum(ROUTE_WARNING_CODES),
  message: z.string(),
  /** The field of the route the warning is about. */
  param: z.string(),
});
export type RouteWarning = z.infer<typeof RouteWarning>;

/** What the route's upstream says against the route, asked with `key` (null or "": as the route's calls would send it). */
export async function routeWarnings(
  route: ModelRoute,
  key: string | null,
  redact: (text: string) => string,
  timeoutMs = ROUTE_WRITE_CHECK_TIMEOUT_MS,
): Promise<RouteWarning[]> {
  if (!isHttpRoute(route) || key === null) return [];
  const listing = await listUpstreamModels(route, key, { redact, timeoutMs });
  const where = `GET ${shownUrl(route, "/models")}`;
  switch (listing.kind) {
    case "listed":
      if (listing.ids.includes(route.model)) return [];
      return [
        {
          code: "model_not_listed",
          message: `The upstream does not list the model ${quoted(route.model)} (${where} lists: ${someModels(listing.ids)}); the route's calls will likely fail with model_not_found. The route was saved: correct 'model' if it is wrong.`,
          param: "model",
        },
      ];
    case "refused":
      return [
        {
          code: "key_refused",
          message: `The upstream refused the key in ${route.apiKeySecret ?? "(none)"} (${where}: ${listing.status} ${listing.words}); the route's calls will fail until it is right. The route was saved.`,
          param: "apiKeySecret",
        },
      ];
    case "failed":
    case "unreachable":
      return [
        {
          code: "model_not_checked",
          message: `Could not check the model: ${where} ${listing.kind === "failed" ? `answered ${listing.status} ${listing.words}` : `got no answer (${listing.words})`}. The route was saved; GET /admin/health checks it again.`,
          param: "baseUrl",
        },
      ];
    case "unoffered":
      return [];
  }
}
