// Where a new session's object is placed: near its user. Durable Objects are created where they are first
// asked for unless given a location hint; the Worker asks for a new session's object in the region of the
// request's continent (and side of it, where Cloudflare's regions split one), from the request's `cf` facts.

/** Countries of Asia that Cloudflare's `me` (Middle East) region serves rather than `apac`. */
const MIDDLE_EAST = new Set(["AE", "BH", "IL", "IQ", "IR", "JO", "KW", "LB", "OM", "PS", "QA", "SA", "SY", "YE"]);

/** The longitude (east positive) that splits North America into `wnam` and `enam`. */
const NORTH_AMERICA_SPLIT = -100;
/** The longitude that splits Europe into `weur` and `eeur`. */
const EUROPE_SPLIT = 20;

interface PlaceFacts {
  continent?: string | null;
  country?: string | null;
  longitude?: string | null;
}

/** The hint for a request from `cf`; none when the request says nothing usable (local runs, Antarctica). */
export function locationHintFor(cf: PlaceFacts | undefined): DurableObjectLocationHint | undefined {
  const longitude = Number.parseFloat(cf?.longitude ?? "");
  const east = (split: number) => Number.isFinite(longitude) && longitude >= split;
  switch (cf?.continent) {
    case "NA":
      return east(NORTH_AMERICA_SPLIT) || !Number.isFinite(longitude) ? "enam" : "wnam";
    case "SA":
      return "sam";
    case "EU":
      return east(EUROPE_SPLIT) ? "eeur" : "weur";
    case "AF":
      return "afr";
    case "OC":
      return "oc";
    case "AS":
      return MIDDLE_EAST.has(cf.country ?? "") ? "me" : "apac";
    default:
      return undefined;
  }
}
